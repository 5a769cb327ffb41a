"""Many listeners on one board: fan-out latency, and what they cost while idle."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.harness import Proc, cpu_seconds, listener, signed, summary, wait_ready
from bench.latency import prompt
from paneboard.state.filelog.append import append_payloads


def _start(home: Path, n: int) -> list[Proc]:
    procs = [listener(home, f"a{k:02d}") for k in range(n)]
    for k in range(n):
        wait_ready(home, f"a{k:02d}")
    return procs


def fan_out(home: Path, n: int, rounds: int) -> dict[str, Any]:
    """One prompt to all *n*, and one prompt to each (appended together):
    time until every door has it."""
    procs = _start(home, n)
    log = home / "bench" / "log"
    names = tuple(f"a{k:02d}" for k in range(n))
    try:
        to_all, to_each, last = [], [], []
        for _ in range(rounds):
            append_payloads(log, signed(home, [prompt(names)]))
            t0 = time.perf_counter()
            arrivals = []
            for p in procs:
                p.readline()
                arrivals.append((time.perf_counter() - t0) * 1000)
            to_all += arrivals
            last.append(max(arrivals))
            _settle(log)
            append_payloads(log, signed(home, [prompt((name,)) for name in names]))
            t0 = time.perf_counter()
            for p in procs:
                p.readline()
                to_each.append((time.perf_counter() - t0) * 1000)
            _settle(log)
        return {
            "listeners": n,
            "to_all_ms": summary(to_all),
            "to_each_ms": summary(to_each),
            "last_door_ms": summary(last),
        }
    finally:
        for p in procs:
            p.stop()


def _settle(log: Path) -> None:
    """Wait until every delivered prompt's receipt is on the board and the listeners have read them,
    so one phase's receipts (each wakes every listener) do not delay the next phase."""
    from paneboard.protocol.posts import Delivered, Prompt
    from paneboard.state.filelog.log import read_posts

    while True:
        posts = [p for _, p in read_posts(log)]
        wanted = sum(len(p.to) for p in posts if isinstance(p, Prompt))
        if sum(isinstance(p, Delivered) for p in posts) >= wanted:
            break
        time.sleep(0.01)
    time.sleep(0.2)  # the last receipts' wake-ups


def idle(home: Path, n: int, seconds: float) -> dict[str, Any]:
    """*n* listeners with nothing to do for *seconds*: their CPU time together."""
    procs = _start(home, n)
    try:
        time.sleep(1.0)  # let start-up work finish before counting
        before = sum(cpu_seconds(p.p.pid) for p in procs)
        time.sleep(seconds)
        used = sum(cpu_seconds(p.p.pid) for p in procs) - before
        return {
            "listeners": n,
            "seconds": seconds,
            "cpu_s": used,
            "core_percent": used / seconds * 100,
        }
    finally:
        for p in procs:
            p.stop()
