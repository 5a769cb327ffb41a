"""docs/machines.md runs as written: a TLS server with accounts, and a machine that uses it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import ROOT, cli_env, wait_until

pytestmark = [
    pytest.mark.nats,
    pytest.mark.skipif(
        shutil.which("nats-server") is None or shutil.which("openssl") is None,
        reason="nats-server or openssl is missing",
    ),
]
DOC = (ROOT / "docs" / "machines.md").read_text()
# The quick start's three blocks come first; the cluster's come after them.
SERVER, MACHINE, COMMANDS = re.findall(r"```sh\n(.*?)```", DOC, re.DOTALL)[:3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _here(block: str, port: int) -> str:
    """*block* with this machine's server name and a free port for the documented ones."""
    names = "HOST=buildbox PORT=4222"
    return "set -eo pipefail\n" + block.replace(names, f"HOST=localhost PORT={port}")


def _up(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_quick_start_runs_as_written(home: Path, tmp_path: Path) -> None:
    """The server block serves TLS with accounts; the machine block keeps the password 0600
    in the home and shows it nowhere; the commands then work on the secret-free URL."""
    port = _free_port()
    server_home, machine_home = tmp_path / "server", tmp_path / "machine"
    server_home.mkdir()
    machine_home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(server_home), "LANG": "C.UTF-8"}
    server = subprocess.Popen(
        ["bash", "-c", _here(SERVER, port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _up(port), "the documented server", 30)
        made = server_home / "paneboard-nats"
        shutil.copy(made / "ca.pem", machine_home / "paneboard-ca.pem")
        password = (made / "laptop.password").read_text().strip()
        machine_env = cli_env(home, HOME=str(machine_home))
        machine_env["PATH"] = f"{Path(sys.executable).parent}:{machine_env['PATH']}"
        assert "HOST=buildbox PORT=4222" in SERVER and "HOST=buildbox PORT=4222" in MACHINE
        script = _here(MACHINE, port) + COMMANDS
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=machine_home,
            input=password + "\n",
            env=machine_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(10)
    assert (0, "") == (done.returncode, done.stderr)
    echo, board, posted, opened, *who = done.stdout.splitlines()
    assert ("", ["alice                no listener", "bob                  no listener"]) == (
        echo,
        who,
    )
    assert board.startswith(f"ok    board    `test` on tls://localhost:{port}: 0 posts;")
    assert opened.startswith(f"{posted}  normal  from alice ")
    assert opened.endswith("  review #123")
    assert password not in done.stdout
    kept = home / ".nats-secrets"
    assert 0o600 == stat.S_IMODE(kept.stat().st_mode)
    assert password in kept.read_text()
