"""Three real nats-server processes on loopback ports, forming one JetStream cluster.

Each node has its own config file and store folder, and small memory limits, so three fit
beside everything else on a small machine. The tests and bench/ start, kill and restart
nodes through this class; a node is found by name (``n1``…``n3``), as JetStream reports
a stream's leader.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from testing.helpers import wait_until

NAMES = ("n1", "n2", "n3")
CONFIG = """\
server_name: {name}
listen: 127.0.0.1:{port}
http: 127.0.0.1:{http}
jetstream {{
  store_dir: "{store}"
  max_memory_store: 32MB
  max_file_store: 512MB
}}
cluster {{
  name: paneboard
  listen: 127.0.0.1:{route}
  routes: [{routes}]
}}
"""


def free_ports(n: int) -> list[int]:
    """*n* distinct free loopback ports (held open together while chosen, so never the same)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


class Node:
    """One server of the cluster: its ports, config file, store folder and process."""

    def __init__(self, folder: Path, name: str, ports: tuple[int, int, int], routes: str) -> None:
        self.name, self.folder = name, folder
        self.port, self.http, route = ports
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / "nats.conf"
        text = CONFIG.format(
            name=name,
            port=self.port,
            http=self.http,
            store=folder / "store",
            route=route,
            routes=routes,
        )
        self.config.write_text(text)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        # GOMEMLIMIT keeps each server's heap small: three of them share the machine with the tests.
        env = {**os.environ, "GOMEMLIMIT": "96MiB"}
        log = open(self.folder / "server.log", "ab")  # noqa: SIM115  # the child keeps it open
        with log:
            command = ["nats-server", "-c", str(self.config)]
            self.proc = subprocess.Popen(command, stdout=log, stderr=log, env=env)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.running:
            assert self.proc is not None
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)

    def healthy(self) -> bool:
        """Whether this server answers /healthz with ok: its JetStream is up and current."""
        url = f"http://127.0.0.1:{self.http}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                return bool(json.load(answer).get("status") == "ok")
        except (OSError, ValueError):
            return False


class NatsCluster:
    """A three-node JetStream cluster in *folder*; `url` lists every node as a seed."""

    def __init__(self, folder: Path) -> None:
        ports = free_ports(9)
        routes = ", ".join(f"nats-route://127.0.0.1:{p}" for p in ports[6:9])
        self.nodes = []
        for i, name in enumerate(NAMES):
            own = (ports[i], ports[3 + i], ports[6 + i])  # client, monitoring, route
            self.nodes.append(Node(folder / name, name, own, routes))

    @property
    def seeds(self) -> str:
        return ",".join(node.address for node in self.nodes)

    def url(self, prefix: str = "", replicas: int = 3) -> str:
        return f"nats://{self.seeds}" + (f"/{prefix}" if prefix else "") + f"?replicas={replicas}"

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    def start(self, timeout: float = 30) -> None:
        """Start every node that is not running, and wait until each one is healthy."""
        for node in self.nodes:
            if not node.running:
                node.start()
        self.wait_healthy(timeout)

    def wait_healthy(self, timeout: float = 30) -> None:
        running = [node for node in self.nodes if node.running]
        wait_until(
            lambda: all(node.healthy() for node in running),
            "every running cluster node healthy",
            timeout,
            lambda: ", ".join(node.name for node in running if not node.healthy()),
            every=0.05,
        )

    def stop(self) -> None:
        for node in self.nodes:
            node.kill(signal.SIGTERM)
