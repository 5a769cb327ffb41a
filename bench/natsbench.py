"""wake and append on the NATS store, beside the file log's (same scenarios, same run)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.harness import PY, Proc, env_for, summary, unlimited, wait_ready
from bench.latency import prompt


@contextmanager
def nats_server(folder: Path) -> Iterator[str]:
    """A nats-server with JetStream on a free loopback port; yields its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen(
        ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("nats-server did not start")
            time.sleep(0.02)
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def available() -> bool:
    return shutil.which("nats-server") is not None


def wake(home: Path, samples: int) -> dict[str, Any]:
    """As `wake`, with the board on JetStream: append in-process, time until the listener's
    door line."""
    with nats_server(home / "nats") as url:
        return wake_on(url, home, samples)


def wake_on(url: str, home: Path, samples: int) -> dict[str, Any]:
    """Append to the board at *url* in-process; time until bob's listener prints the prompt."""
    from paneboard.state.nats.store import NatsStore
    from paneboard.state.trust.sealing import Sealer

    env = env_for(home, PANEBOARD_STORE=url)
    unlimited(home, "bob")
    lis = Proc([PY, "-m", "paneboard", "listen", "--as", "bob", "--door", "stdout"], env)
    store = NatsStore(url, "bench", sealer=Sealer(home, "bench"))  # signed, as commands write
    try:
        wait_ready(home, "bob")
        lat = []
        for _ in range(samples):
            store.append([prompt(("bob",))])
            start = time.perf_counter()
            lis.readline()
            lat.append((time.perf_counter() - start) * 1000)
            time.sleep(0.002)
        return {"latency_ms": summary(lat), "samples_ms": lat}
    finally:
        lis.stop()
        store.close()


def append_rate(home: Path, n: int, batch: int) -> dict[str, Any]:
    """Acknowledged publishes per second, one by one and in batches, through the Python API."""
    with nats_server(home / "nats") as url:
        return append_rate_on(url, n, batch)


def append_rate_on(url: str, n: int, batch: int) -> dict[str, Any]:
    """Acknowledged publishes per second to the board at *url*, one by one and in batches."""
    from paneboard.state.nats.store import NatsStore

    store = NatsStore(url, "bench")
    try:
        posts = [prompt(("bob",), f"message {i}") for i in range(n)]
        t0 = time.perf_counter()
        for p in posts:
            store.append([p])
        one = n / (time.perf_counter() - t0)
        many = [prompt(("bob",), f"message {i}") for i in range(n * 5)]
        t0 = time.perf_counter()
        for i in range(0, len(many), batch):
            store.append(many[i : i + batch])
        batched = len(many) / (time.perf_counter() - t0)
    finally:
        store.close()
    return {"one_by_one_per_s": one, "batched_per_s": batched, "batch": batch}
