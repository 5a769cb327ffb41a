"""Stuck and hostile doors: each bounded in time and memory, retried or reported,
never stalling shutdown."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.helpers import Listening, fake_codex, notices, post, python_door, run_cli, wait_until


@pytest.fixture
def hostile_socket(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A socket that closes each connection at once, or answers with garbage."""
    path = tmp_path / "hostile.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                if request.param == "garbage":
                    try:
                        conn.sendall(b"\x00\xff garbage \x1b[31m" * 1000)
                    except OSError:
                        pass  # the listener hung up first

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


@pytest.mark.parametrize("hostile_socket", ["closes at once", "garbage"], indirect=True)
def test_hostile_sockets(home: Path, hostile_socket: Path) -> None:
    """Either the line went in (the peer's business) or it failed and was retried;
    the listener never hangs."""
    with Listening(
        home,
        "bob",
        "--door",
        "claude-inbox",
        "--socket",
        str(hostile_socket),
        "--backoff",
        "0.05",
        "--door-timeout",
        "2",
    ) as bob:
        pid = post(home, "--to", "bob", "hello")
        line = bob.wait_err(pid, timeout=15)
        while ": retry " in line:  # a failed attempt: the next line about it is the outcome
            line = bob.wait_err(pid, timeout=15)
        said = line.split(": ", 1)[1].split()[:2]  # [delivered|undelivered, pid]
        stage = json.loads(run_cli(home, "status", pid, "--json").stdout)["recipients"]["bob"]
        assert [stage["stage"], pid] == said
        started = time.monotonic()
        assert 0 == bob.stop()
        assert time.monotonic() - started < 5


def _exec(home: Path, script: str, *args: str) -> Listening:
    timing = ("--door-timeout", "2", "--backoff", "0.05")
    return Listening(home, "bob", *python_door(script, *timing, *args))


def test_exec_that_hangs_is_killed_at_its_limit_and_shutdown_is_prompt(
    home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "runs"
    with _exec(home, f"open({str(marker)!r}, 'a').write('x'); import time; time.sleep(600)") as bob:
        pid = post(home, "--to", "bob", "hang")
        bob.wait_err(f"delivered {pid}", timeout=15)
        post(home, "--to", "bob", "hang again")
        wait_until(lambda: marker.exists() and marker.read_text() == "xx", "second command runs")
        started = time.monotonic()
        bob.stop()
        assert time.monotonic() - started < 5


def test_exec_flooding_stdout_is_bounded(home: Path) -> None:
    """100 MB on stdout: drained and dropped beyond 64 KiB, the listener's memory stays small."""
    flood = (
        "import sys; chunk = b'x' * (1 << 20)\nfor _ in range(100): sys.stdout.buffer.write(chunk)"
    )
    with _exec(home, flood) as bob:
        pid = post(home, "--to", "bob", "flood")
        bob.wait_err(f"delivered {pid}", timeout=60)
        rss = int(
            next(
                ln
                for ln in Path(f"/proc/{bob.proc.pid}/status").read_text().splitlines()
                if ln.startswith("VmHWM")
            ).split()[1]
        )
        assert rss < 150 * 1024, f"peak RSS {rss} kB"


def test_exec_exiting_0_without_reading_stdin(home: Path) -> None:
    """A large text on stdin and a command that never reads it:
    its exit code decides (0: delivered)."""
    with _exec(home, "pass") as bob:
        pid = post(home, "--to", "bob", "-", input=b"y" * 200_000)
        bob.wait_err(f"delivered {pid}", timeout=15)


def test_codex_that_prints_its_receipt_and_exits_1(home: Path, tmp_path: Path) -> None:
    """The receipt alone is not success: exit 1 is a failure, retried, then `undelivered`."""
    from testing.helpers import LoadedThread
    from tests.listener.test_doors import _codex_env

    fake_codex(tmp_path / "bin", "print('Queued message m1 for thread th-1.'); sys.exit(1)")
    env = _codex_env(home, tmp_path)
    thread = LoadedThread(tmp_path / "codex-home")
    args = ("--door", "codex-queue", "--thread", thread.thread, "--backoff", "0.05")
    with thread, Listening(home, "bob", *args, env=env) as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"undelivered {pid}", timeout=15)
    assert notices(home)[0].reason.startswith("codex exited 1")
