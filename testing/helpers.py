"""What the tests and the benchmarks share: running the real command line, a real listener,
servers standing in for an agent, small fixtures' parts (tests/conftest.py holds the fixtures).
"""

from __future__ import annotations

import os
import queue
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Self, TypeVar

from paneboard.protocol.posts import Undelivered
from paneboard.state.filelog.log import read_posts

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
PANEBOARD = (sys.executable, "-m", "paneboard")  # the command line, as a process


def package_modules() -> list[tuple[str, Path]]:
    """Every module of the installed package, as (its path inside `paneboard/`, its file in the
    checkout): `root/` is the package itself, each of setup.py's folders a package under it."""
    import setup

    found = [(p.name, p) for p in sorted((ROOT / "root").glob("*.py"))]
    for top in setup.TOPS:
        found += [(p.relative_to(ROOT).as_posix(), p) for p in sorted((ROOT / top).rglob("*.py"))]
    return found


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a paneboard process in a test: its home, board `test`,
    and the store under test."""
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
        wait_until(lambda: _listens(self.port), f"nats-server listens on port {self.port}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    argv = [sys.executable, "-c", "import os; print(os.getpid())"]
    return int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """Run *argv* in *cwd* with exactly *env*; its output as text, whatever its exit code."""
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def run_cli(
    home: Path,
    *args: str,
    input: bytes | None = None,
    timeout: float = 30,
    fresh: bool = False,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Run `paneboard ARGS` as a real process, forked warm (testing/forkserver.py); *fresh*: a
    new interpreter whose parent is this test (a hook finds its agent by its parent)."""
    from testing.forkserver import warm_run

    env = cli_env(home, **env)
    warm = None if fresh else warm_run(list(args), env, input, timeout)
    if warm is not None:
        code, out, err = warm
        return subprocess.CompletedProcess(
            [*PANEBOARD, *args], code, out.decode(errors="replace"), err.decode(errors="replace")
        )
    done = subprocess.run(
        [*PANEBOARD, *args],
        input=input,
        capture_output=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def run_hook(
    home: Path, action: str, agent: str, event: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    """`paneboard hook ACTION --agent AGENT ARGS` as the agent runs it: *event* on stdin."""
    import json

    return run_cli(home, "hook", action, "--agent", agent, *args, input=json.dumps(event).encode())


class Listening:
    """A real `paneboard listen` process; its stdout and stderr lines are collected as they come."""

    def __init__(
        self,
        home: Path,
        agent: str,
        *args: str,
        env: dict[str, str] | None = None,
        ready: bool = True,
        prefix: tuple[str, ...] = (),
    ) -> None:
        """*prefix* runs the listener through another command (`setpriv …`: as another user)."""
        import queue
        import threading

        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.stderr_lines: list[str] = []
        from testing.forkserver import WarmProcess, server

        warm = None if prefix else server()
        argv = ["listen", "--as", agent, *args]
        self.proc: subprocess.Popen[str] | WarmProcess
        if warm is not None:  # forked warm, as run_cli
            self.proc = warm.start(argv, env or cli_env(home))
        else:
            self.proc = subprocess.Popen(
                [*prefix, *PANEBOARD, *argv],
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
            try:
                self.wait_err("listening via")
            except BaseException:
                self.__exit__()  # a listener that never said so is ended and waited for here
                raise

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

        def said() -> str | None:
            try:
                got = self.err.get(timeout=0.05)
            except queue.Empty:
                return None
            if got is None:
                raise AssertionError(f"listener ended before {text!r}: {self.stderr_lines}")
            self.stderr_lines.append(got)
            return got if text in got else None

        what = f"the listener said {text!r}"
        return wait_until(said, what, timeout, lambda: "\n".join(self.stderr_lines), every=0)

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


def post(home: Path, *args: str, sender: str = "alice", input: bytes | None = None) -> str:
    done = run_cli(home, "post", "--as", sender, *args, input=input)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


_AGE = re.compile(r"written (just now|\d+ (s|min|h|d) ago)")


def unaged(text: str) -> str:
    """*text* with its `written … ago` said as `written …`: a prompt's text read again later
    is the same text, older (protocol/compose.py `age`)."""
    return _AGE.sub("written …", text)


def python_door(script: str, *options: str) -> tuple[str, ...]:
    """`listen` arguments for an exec door running `python -c SCRIPT`, *options* before it."""
    return ("--door", "exec", *options, "--", sys.executable, "-c", script)


class SocketServer:
    """A Unix socket server on *path*, serving each connection with `handle` in a thread of its
    own. As it is, a stand-in for Claude Code's inbox: it records each line it reads (with
    *read* False, it accepts and never reads)."""

    def __init__(self, path: Path, *, read: bool = True) -> None:
        self.path = path
        self.lines: queue.Queue[Any] = queue.Queue()
        self.held: list[socket.socket] = []
        self.read = read
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.handle(conn)

    def handle(self, conn: socket.socket) -> None:
        if not self.read:
            self.held.append(conn)  # accepts, never reads
            return
        with conn, conn.makefile("rb") as f:
            for line in f:
                self.lines.put(line)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def notices(home: Path) -> list[Undelivered]:
    return [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]


def fake_codex(folder: Path, script: str) -> Path:
    """An executable named `codex` that records its argv and then runs *script*."""
    folder.mkdir(exist_ok=True)
    path = folder / "codex"
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "open(os.environ['CODEX_LOG'], 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"{script}\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _listens(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    timeout: float = 10,
    detail: Callable[[], str] = str,
    every: float = 0.005,
) -> T:
    """Poll *condition()* (for a program's files and screens: nothing to be woken by) and
    return its first true value; fail naming *what*, with *detail()*, after *timeout* s."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout:g} s, still not: {what}\n{detail()}")
        time.sleep(every)


async def wait_until_async(
    condition: Callable[[], Awaitable[T | None]],
    what: str,
    within: float = 10,
    detail: Callable[[], str] = str,
    every: float = 0.005,
) -> T:
    """`wait_until` inside an event loop: *condition* is awaited, and so is each pause between
    looks; it fails after *within* s."""
    import anyio

    deadline = time.monotonic() + within
    while True:
        got = await condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"after {within:g} s, still not: {what}\n{detail()}")
        await anyio.sleep(every)


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


class Tmux:
    """A program in a detached tmux server of its own, with exactly *env*; the test plays its
    person at the keyboard. *hold* keeps the pane (and its last screen) after the program ends.
    """

    pause = 0.3  # a TUI can drop an Enter that arrives with the text

    def __init__(self, cwd: Path, argv: list[str], env: dict[str, str], hold: bool = False) -> None:
        import shlex
        import uuid

        self.name = f"pb{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in env.items() if k != "RUST_BACKTRACE"}  # a Rust CLI's crash dump
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        run = f"env -i {exports} {shlex.join(argv)}"
        run = f"{run}; sleep 600" if hold else f"exec {run}"
        command = f"cd {shlex.quote(str(cwd))} && {run}"
        self._tmux("new", "-d", "-s", self.name, "-x", "200", "-y", "50", command)
        self.pane_pid = int(self._tmux("display", "-p", "-t", self.name, "#{pane_pid}").strip())

    def _tmux(self, *args: str) -> str:
        argv = ["tmux", "-L", self.name, *args]
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def type(self, text: str) -> None:
        """Type a line and press Enter, as the person would."""
        self._tmux("send-keys", "-t", self.name, "-l", text)
        time.sleep(self.pause)
        self._tmux("send-keys", "-t", self.name, "Enter")

    def close(self) -> None:
        self._tmux("kill-server")


class ScriptServer:
    """`python -m MODULE PORT LOG` from the project's root: a loopback stand-in that prints
    `ready` once it listens."""

    def __init__(self, module: str, port: int, log: Path) -> None:
        self.port, self.log = port, log
        argv = [sys.executable, "-m", module, str(port), str(log)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None and "ready" == self.proc.stdout.readline().strip()

    def records(self) -> list[dict[str, Any]]:
        """The log's JSON lines so far (a line still being written is left for the next look)."""
        import json

        try:
            lines = self.log.read_text().splitlines(keepends=True)
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.endswith("\n")]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
