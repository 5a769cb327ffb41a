"""Delivery latency: paneboard's woken listener against polling mailboxes."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

from bench.baselines import Maildir, SqliteMailbox
from bench.harness import cpu_seconds, listener, signed, summary, wait_ready
from paneboard.protocol.ids import new_id
from paneboard.protocol.posts import Prompt
from paneboard.state.filelog.append import append_payloads


def prompt(to: tuple[str, ...], body: str = "bench") -> Prompt:
    ts = time.time()
    return Prompt(
        id=new_id(ts, os.urandom(10)), board="bench", sender="bench", ts=ts, to=to, body=body
    )


def wake(home: Path, samples: int) -> dict[str, Any]:
    """Append in-process, one signed post at a time; time from the append's return to the door's
    line (the listener verifies each prompt, and its policy lets it through, on the way)."""
    log = home / "bench" / "log"
    lis = listener(home, "bob")
    try:
        wait_ready(home, "bob")
        cpu0, t0 = cpu_seconds(lis.p.pid), time.monotonic()
        lat = []
        for _ in range(samples):
            append_payloads(log, signed(home, [prompt(("bob",))]))
            start = time.perf_counter()
            lis.readline()
            lat.append((time.perf_counter() - start) * 1000)
            time.sleep(0.002)
        busy = cpu_seconds(lis.p.pid) - cpu0
        return {
            "latency_ms": summary(lat),
            "samples_ms": lat,
            "cpu_per_delivery_ms": busy / samples * 1000,
            "elapsed_s": time.monotonic() - t0,
        }
    finally:
        lis.stop()


def idle_one(home: Path, seconds: float) -> dict[str, Any]:
    """One listener, nothing posted: CPU used while idle."""
    lis = listener(home, "idle-agent")
    try:
        wait_ready(home, "idle-agent")
        cpu0 = cpu_seconds(lis.p.pid)
        time.sleep(seconds)
        used = cpu_seconds(lis.p.pid) - cpu0
        return {"seconds": seconds, "cpu_s": used, "core_percent": used / seconds * 100}
    finally:
        lis.stop()


def polled(mailbox: SqliteMailbox | Maildir, samples: int) -> dict[str, Any]:
    """Send with the baseline's own script at a random phase of its poll;
    time to the receiver's line."""
    rx = mailbox.receiver("bob")
    rng = random.Random(7)
    try:
        lat, send = [], []
        for i in range(samples):
            time.sleep(rng.uniform(0, mailbox.interval))
            t0 = time.perf_counter()
            mailbox.send("bob", f"message {i}")
            t1 = time.perf_counter()
            rx.readline(timeout=mailbox.interval * 3 + 5)
            lat.append((time.perf_counter() - t1) * 1000)
            send.append((t1 - t0) * 1000)
        return {"latency_ms": summary(lat), "samples_ms": lat, "send_ms": summary(send)}
    finally:
        rx.stop()
