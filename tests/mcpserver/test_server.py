"""`paneboard mcp` as a process: raw JSON-RPC lines on its stdio, answered one by one."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.helpers import cli_env

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


class RawClient:
    """The server's process, and one line written for each line read back."""

    def __init__(self, home: Path) -> None:
        argv = [sys.executable, "-m", "paneboard", "mcp", "--as", "alice"]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(home),
        )
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(line)
        self.replies.put(None)  # the server closed its stdout

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, line: str) -> Any:
        self.send(line)
        reply = self.replies.get(timeout=15)
        assert reply is not None, self.stop()
        return json.loads(reply)

    def stop(self) -> str:
        """End the server (stdin closed); what it said on stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        if self.proc.stderr.closed:
            return ""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)
        err = self.proc.stderr.read().decode()
        self.proc.stderr.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return err


@pytest.fixture
def client(home: Path) -> Iterator[RawClient]:
    raw = RawClient(home)
    assert 1 == raw.ask(json.dumps(HELLO))["id"]
    raw.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield raw
    raw.stop()


def deep(depth: int, request_id: int) -> str:
    """A `tools/call` of `who` whose argument is *depth* arrays, one in another."""
    nested = "[" * depth + "]" * depth
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"who","arguments":{{"x":{nested}}}}}}}'
    )


def who(request_id: int) -> str:
    call = {"name": "who", "arguments": {}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call})


def test_a_deeply_nested_line_gets_a_parse_error_and_the_server_answers_on(
    client: RawClient,
) -> None:
    """A line nested past Python's recursion limit (1,500, 3,000 and 100,000 deep, one after
    another to one server) is answered -32700 with its own id (the client's request ends), and
    the next call is answered as usual; nothing on stderr."""
    for n, depth in enumerate([1500, 3000, 100_000]):
        refused = client.ask(deep(depth, 10 * n + 9))
        answered = client.ask(who(10 * n + 10))
        assert (10 * n + 9, -32700) == (refused["id"], refused["error"]["code"]), depth
        assert refused["error"]["message"].startswith("Parse error: "), depth
        assert (10 * n + 10, "no agents on the board yet") == (
            answered["id"],
            answered["result"]["content"][0]["text"],
        )
    assert "" == client.stop()
    assert 0 == client.proc.returncode


def test_a_shallow_reading_keeps_the_top_level_and_brackets_inside_strings() -> None:
    """Nested values become null; a bracket or an escaped quote inside a string is text."""
    from paneboard.mcpserver.server import _shallow

    line = '{"a":[1,[2]],"id":3,"s":"x]{\\"","b":{"c":{}}}'
    assert '{"a":null,"id":3,"s":"x]{\\"","b":null}' == _shallow(line)
    assert {"a": None, "id": 3, "s": 'x]{"', "b": None} == json.loads(_shallow(line))
