"""wake and append on a three-node JetStream cluster (R3), and the time a post waits through
the loss of its stream's leader; beside R1 on one server (natsbench) and the file log."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.harness import PY, Proc, env_for, summary, wait_ready
from bench.latency import prompt
from tests.natscluster import NatsCluster


@contextmanager
def cluster(folder: Path) -> Iterator[NatsCluster]:
    nodes = NatsCluster(folder)
    nodes.start()
    try:
        yield nodes
    finally:
        nodes.stop()


def wake(home: Path, samples: int) -> dict[str, Any]:
    """As natsbench.wake, on an R3 stream: append in-process, time until the door's line."""
    from paneboard.state.natsstore import NatsStore

    with cluster(home / "cluster") as nodes:
        url = nodes.url("bench", replicas=3)
        store = NatsStore(url, "bench")
        listen = [PY, "-m", "paneboard.listener", "listen", "--as", "bob", "--door", "stdout"]
        lis = Proc(listen, env_for(home, PANEBOARD_STORE=url))
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
    """Acknowledged publishes per second on an R3 stream, one by one and in batches."""
    from paneboard.state.natsstore import NatsStore

    with cluster(home / "cluster") as nodes:
        store = NatsStore(nodes.url("bench", replicas=3), "bench")
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


def leader_loss(home: Path, trials: int) -> dict[str, Any]:
    """SIGKILL the stream's leader, then run `paneboard post` at once: how long it waits
    (retrying) until a new leader stores it; the node is restarted between trials."""
    import subprocess

    from paneboard.state.natsstore import NatsStore

    waits, codes = [], []
    with cluster(home / "cluster") as nodes:
        url = nodes.url("bench", replicas=3)
        env = env_for(home, PANEBOARD_STORE=url)
        post = [PY, "-m", "paneboard.listener", "post", "--as", "alice", "--to", "bob", "hi"]
        admin = NatsStore(url, "bench", reconnect=True)
        try:
            for _ in range(trials):
                # First a post that succeeds: the stream has a leader, all nodes are current.
                subprocess.run(post, env=env, capture_output=True, check=True)
                leader = admin.stream_report().leader
                nodes.node(leader).kill(signal.SIGKILL)
                start = time.perf_counter()
                done = subprocess.run(post, env=env, capture_output=True, check=False)
                waits.append((time.perf_counter() - start) * 1000)
                codes.append(done.returncode)
                nodes.start()
        finally:
            admin.close()
    return {"wait_ms": summary(waits), "samples_ms": waits, "exit_codes": codes}
