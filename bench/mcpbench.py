"""One tool call through `paneboard mcp` (a running stdio server) against the same command as a
process: what an agent saves by calling the board as MCP tools instead of running the CLI."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.harness import PY, env_for, summary


class Server:
    """`paneboard mcp` as a child process, spoken to in JSON-RPC lines on its stdin and stdout."""

    def __init__(self, home: Path, agent: str) -> None:
        t0 = time.perf_counter()
        self.p = subprocess.Popen(
            [PY, "-m", "paneboard", "mcp", "--as", agent],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env_for(home),
        )
        self.next_id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        self.request("initialize", {**hello, "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.start_ms = (time.perf_counter() - t0) * 1000

    def send(self, message: dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(message).encode() + b"\n")
        self.p.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.p.stdout is not None
        while True:
            reply: dict[str, Any] = json.loads(self.p.stdout.readline())
            if reply.get("id") == self.next_id:
                if "error" in reply or reply["result"].get("isError"):
                    raise RuntimeError(f"paneboard mcp: {reply}")
                return reply

    def call(self, tool: str, **arguments: Any) -> float:
        """One `tools/call`, in milliseconds."""
        t0 = time.perf_counter()
        self.request("tools/call", {"name": tool, "arguments": arguments})
        return (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.close()
        self.p.wait(timeout=10)
        self.p.stdout.close()


def _process_ms(home: Path, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [PY, "-m", "paneboard", *args, "--as", "alice"],
        env=env_for(home),
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return (time.perf_counter() - t0) * 1000


def tool_call(home: Path, runs: int) -> dict[str, Any]:
    """`post` and `open` as MCP tool calls and as processes, interleaved on one board."""
    server = Server(home, "alice")
    out: dict[str, Any] = {"server_start_ms": server.start_ms}
    try:
        for tool, argv, args in (
            ("post", ("post", "--to", "bob", "hi"), {"to": ["bob"], "body": "hi"}),
            ("open", ("open",), {}),
        ):
            mcp, cli = [], []
            for _ in range(runs):
                mcp.append(server.call(tool, **args))
                cli.append(_process_ms(home, *argv))
            out[tool] = {"mcp_ms": summary(mcp), "process_ms": summary(cli)}
            out[tool]["ratio_process_to_mcp"] = (
                out[tool]["process_ms"]["median"] / out[tool]["mcp_ms"]["median"]
            )
    finally:
        server.close()
    return out
