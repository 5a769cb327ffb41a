"""`python -m bench`: every scenario as real processes on a temporary home, in one run."""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from bench import (
    catchup,
    clusterbench,
    fanout,
    latency,
    mcpbench,
    natsbench,
    seen,
    signing,
    throughput,
    top,
    woken,
)
from bench.baselines import Maildir, SqliteMailbox
from bench.report import write_report


def _wake(home: Path, quick: bool) -> dict[str, Any]:
    n, slow, fast = (200, 1, 3) if quick else (2000, 20, 40)
    return {
        "paneboard": latency.wake(home / "pb", n),
        "sqlite-5s": latency.polled(SqliteMailbox(home / "sq5", 5.0), slow),
        "sqlite-1s": latency.polled(SqliteMailbox(home / "sq1", 1.0), fast),
        "maildir-1s": latency.polled(Maildir(home / "md"), fast),
    }


def _idle(home: Path, quick: bool) -> dict[str, Any]:
    one = latency.idle_one(home / "one", 2.0 if quick else 10.0)
    many = fanout.idle(home / "many", 10 if quick else 50, 3.0 if quick else 30.0)
    return {"one_listener": one, "many_listeners": many}


def _post_cli(home: Path, quick: bool) -> dict[str, Any]:
    boxes = {"sqlite": SqliteMailbox(home / "sq", 5.0), "maildir": Maildir(home / "md")}
    boxes["maildir"].box("bob")  # type: ignore[attr-defined]
    return throughput.post_cli(home / "pb", 10 if quick else 40, boxes)


def _catch_up(home: Path, quick: bool) -> dict[str, Any]:
    return catchup.catch_up(
        home, [10_000] if quick else [10_000, 100_000, 1_000_000], 1 if quick else 3
    )


SCENARIOS: dict[str, Callable[[Path, bool], dict[str, Any]]] = {
    "wake": _wake,
    "post-cli": _post_cli,
    "append": lambda home, quick: throughput.append_rate(home, 300 if quick else 2000, 1000),
    "catch-up": _catch_up,
    "fan-out": lambda home, quick: fanout.fan_out(home, 10 if quick else 50, 3 if quick else 20),
    "idle": _idle,
    "size": lambda home, quick: throughput.size(home, 1000),
    "concurrency": lambda home, quick: throughput.concurrency(
        home, 4 if quick else 8, 200 if quick else 1000
    ),
    "mcp-call": lambda home, quick: mcpbench.tool_call(home, 10 if quick else 40),
    "wake-nats": lambda home, quick: natsbench.wake(home, 200 if quick else 2000),
    "append-nats": lambda home, quick: natsbench.append_rate(home, 300 if quick else 2000, 1000),
    "top": top.top,
    "seen-claude": lambda home, quick: seen.claude(home, 3 if quick else 40),
    "burst-claude": lambda home, quick: seen.burst(home, 60),
    "burst-claude-one": lambda home, quick: seen.burst(home, 60, one_per_text=True),
    "burst-claude-notice": lambda home, quick: seen.burst(home, 60, deliver="notice"),
    "notice-claude": lambda home, quick: seen.notice_bytes(home),
    "transcript": lambda home, quick: seen.transcript(home, 10 if quick else 100),
    "wake-cluster": lambda home, quick: clusterbench.wake(home, 200 if quick else 2000),
    "append-cluster": lambda home, quick: clusterbench.append_rate(
        home, 300 if quick else 2000, 1000
    ),
    "leader-loss": lambda home, quick: clusterbench.leader_loss(home, 1 if quick else 5),
    "signing": signing.signing,
    "woken-claude": lambda home, quick: woken.claude(home, 3 if quick else 8),
    "woken-codex": lambda home, quick: woken.codex(home, 3 if quick else 8),
    "woken-pi": lambda home, quick: woken.pi(home, 3 if quick else 8),
    "woken-qwen": lambda home, quick: woken.qwen(home, 3 if quick else 8),
}
NEEDS_NATS = {"wake-nats", "append-nats", "wake-cluster", "append-cluster", "leader-loss"}
NEEDS_CLAUDE = {
    "seen-claude",
    "burst-claude",
    "burst-claude-one",
    "burst-claude-notice",
    "notice-claude",
}
NEEDS_WOKEN = {"woken-claude", "woken-codex"}  # Claude Code and Codex both, and tmux
NEEDS_CLI = {"woken-pi": "pi", "woken-qwen": "qwen"}  # that CLI, and tmux


def machine() -> dict[str, Any]:
    mem = next(
        (
            ln.split()[1]
            for ln in Path("/proc/meminfo").read_text().splitlines()
            if ln.startswith("MemTotal")
        ),
        "0",
    )
    cpu = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ),
        "?",
    )
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "memory_gib": round(int(mem) / 2**20, 1),
        "python": platform.python_version(),
        "kernel": platform.release(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke test in under a minute"
    )
    parser.add_argument(
        "--only", nargs="+", choices=sorted(SCENARIOS), metavar="NAME", help=", ".join(SCENARIOS)
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("bench/out"),
        help="where results.json, report.md and plots go",
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {
        "machine": machine(),
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    for name in args.only or SCENARIOS:
        if name in NEEDS_NATS and (why := _nats_missing()):
            print(f"bench: {name} skipped: {why}", flush=True)
            continue
        if name == "top" and find_spec("textual") is None:
            print("bench: top skipped: Textual is not installed (pip install 'paneboard[tui]')")
            continue
        if name == "mcp-call" and find_spec("mcp") is None:
            print(
                "bench: mcp-call skipped: the MCP SDK is not installed"
                " (pip install 'paneboard[mcp]')"
            )
            continue
        if name in NEEDS_CLAUDE and seen.clients_bin() is None:
            print(f"bench: {name} skipped: no Claude Code CLI (or no tmux)", flush=True)
            continue
        if name in NEEDS_WOKEN and woken.clients_bin() is None:
            print(f"bench: {name} skipped: no Claude Code or Codex CLI (or no tmux)", flush=True)
            continue
        if name in NEEDS_CLI and woken.installed(NEEDS_CLI[name]) is None:
            print(f"bench: {name} skipped: no {NEEDS_CLI[name]} CLI (or no tmux)", flush=True)
            continue
        with tempfile.TemporaryDirectory(prefix=f"pb-bench-{name}-") as tmp:
            home = Path(tmp) / "home"
            home.mkdir(mode=0o700)
            t0 = time.perf_counter()
            print(f"bench: {name} …", flush=True)
            results[name] = SCENARIOS[name](home, args.quick)
            print(f"bench: {name} done in {time.perf_counter() - t0:.1f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(write_report(results, args.out))
    return 0


def _nats_missing() -> str:
    """Why the NATS scenarios cannot run here ("" when they can)."""
    from importlib.util import find_spec

    if find_spec("nats") is None:
        return "nats-py is not installed (pip install 'paneboard[nats]')"
    if not natsbench.available():
        return "no nats-server (Debian package nats-server)"
    return ""
