"""wake and append on a three-node JetStream cluster (R3), and the time a post waits through
the loss of its stream's leader; beside R1 on one server (natsbench) and the file log."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench import natsbench
from bench.harness import PY, env_for, summary
from testing.natscluster import NatsCluster


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
    with cluster(home / "cluster") as nodes:
        return natsbench.wake_on(nodes.url("bench", replicas=3), home, samples)


def append_rate(home: Path, n: int, batch: int) -> dict[str, Any]:
    """Acknowledged publishes per second on an R3 stream, one by one and in batches."""
    with cluster(home / "cluster") as nodes:
        return natsbench.append_rate_on(nodes.url("bench", replicas=3), n, batch)


def leader_loss(home: Path, trials: int) -> dict[str, Any]:
    """SIGKILL the stream's leader, then run `paneboard post` at once: how long it waits
    (retrying) until a new leader stores it; the node is restarted between trials."""
    import subprocess

    from paneboard.state.nats.store import NatsStore

    waits, codes = [], []
    with cluster(home / "cluster") as nodes:
        url = nodes.url("bench", replicas=3)
        env = env_for(home, PANEBOARD_STORE=url)
        post = [PY, "-m", "paneboard", "post", "--as", "alice", "--to", "bob", "hi"]
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
