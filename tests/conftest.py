"""Shared fixtures: a private home, and running the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's own paneboard settings."""
    for var in (
        "PANEBOARD_HOME",
        "PANEBOARD_BOARD",
        "PANEBOARD_AGENT",
        "PANEBOARD_STORE",
        "PANEBOARD_TEST_STORE",
        "CLAUDE_CODE_MESSAGING_SOCKET",
        "CODEX_THREAD_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a paneboard process in a test: its home, board `test`, and the store under test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PANEBOARD_", "CLAUDE_CODE_"))}
    env.update(PANEBOARD_HOME=str(home), PANEBOARD_BOARD="test", **extra)
    if os.environ.get("PANEBOARD_TEST_STORE"):
        env.setdefault("PANEBOARD_STORE", os.environ["PANEBOARD_TEST_STORE"])
    return env


class NatsServer:
    """A real nats-server with JetStream on a free loopback port and a temporary store folder."""

    def __init__(self, folder: Path, *extra: str) -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.folder = folder
        self.extra = list(extra)
        self.start()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        import socket
        import time

        self.proc = subprocess.Popen(
            [
                "nats-server",
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-sd",
                str(self.folder),
                *self.extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)
        raise RuntimeError("nats-server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    import shutil

    if shutil.which("nats-server") is None:
        pytest.skip(
            "nats-server is missing (Debian package nats-server): the NATS store is not tested"
        )
    server = NatsServer(tmp_path_factory.mktemp("nats"))
    yield server
    server.stop()


@pytest.fixture(params=["file", "nats"])
def store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """One suite, two stores: "" for the file log, or a NATS URL with a prefix of the test's own."""
    if request.param == "file":
        return ""
    import uuid

    server = request.getfixturevalue("nats_server")
    url = f"{server.url}/t{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("PANEBOARD_TEST_STORE", url)
    return url


def run_cli(
    home: Path, *args: str, input: bytes | None = None, timeout: float = 30, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run `paneboard ARGS` as a real process."""
    done = subprocess.run(
        [sys.executable, "-m", "paneboard.listener", *args],
        input=input,
        capture_output=True,
        env=cli_env(home, **env),
        timeout=timeout,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


class Listening:
    """A real `paneboard listen` process; its stdout and stderr lines are collected as they come."""

    def __init__(
        self,
        home: Path,
        agent: str,
        *args: str,
        env: dict[str, str] | None = None,
        ready: bool = True,
    ) -> None:
        import queue
        import threading

        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.stderr_lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "paneboard.listener", "listen", "--as", agent, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env or cli_env(home),
        )
        self._pumps = [
            threading.Thread(target=self._pump, args=(stream, q), daemon=True)
            for stream, q in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))
        ]
        for pump in self._pumps:
            pump.start()
        if ready:
            self.wait_err("listening via")

    @staticmethod
    def _pump(stream: object, q: object) -> None:
        with stream:  # type: ignore[attr-defined]
            for line in stream:  # type: ignore[attr-defined]
                q.put(line.rstrip("\n"))  # type: ignore[attr-defined]
        q.put(None)  # type: ignore[attr-defined]

    def line(self, timeout: float = 10) -> str:
        """The next stdout line (a stdout-door delivery)."""
        got = self.out.get(timeout=timeout)
        assert got is not None, f"listener ended: {self.stderr_lines}"
        return got

    def wait_err(self, text: str, timeout: float = 10) -> str:
        """Block until a stderr line containing *text* appears; return it."""
        import time as _time

        deadline = _time.monotonic() + timeout
        while True:
            got = self.err.get(timeout=max(0.01, deadline - _time.monotonic()))
            if got is None:
                raise AssertionError(f"listener ended before {text!r}: {self.stderr_lines}")
            self.stderr_lines.append(got)
            if text in got:
                return got

    def stop(self, sig: int = 15, timeout: float = 10) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pump in self._pumps:
            pump.join(timeout=10)


class LoadedThread:
    """A process holding a Codex thread's writer lock, as Codex does while the thread is loaded."""

    CODE = "import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
    CODE += "print('held', flush=True)\ntime.sleep(300)\n"

    def __init__(self, codex_home: Path, thread: str | None = None) -> None:
        import uuid

        self.thread = thread or str(uuid.uuid4())
        self.lock = codex_home / "thread-writer-locks" / f"{self.thread}.lock"
        self.lock.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-c", self.CODE, str(self.lock)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and "held" == self.proc.stdout.readline().strip()

    def release(self) -> None:
        """The holder dies (SIGKILL): the kernel lets go of its lock; the lock file stays."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
