"""A warm start for the tests' `paneboard` commands: one process that has imported the package
forks a child for each command, so the fast tier does not start and import Python a thousand
times (`hg`'s `chg` does the same for Mercurial's own tests).

Each command is still a process of its own: its own pid, environment, working folder, stdin,
stdout and stderr (passed as file descriptors over a Unix socket), exit code and signals. What
the child shares with the server is what the interpreter loaded before it forked: a module that
read the environment when imported would hold the server's (paneboard reads its environment when
it runs, and `tests/test_forkserver.py` checks the commands' modules for it). Its parent is the
server, not the test: a hook, which finds its agent by its parent, runs fresh (`run_cli(fresh=)`).

`PANEBOARD_TEST_FRESH=1` runs every command in a fresh interpreter instead, and so do the tests
of tests/real/ (beside the real agents, whose timings were set against fresh commands).

    python -m testing.forkserver SOCKET     serve (the tests start it; it prints `ready`)
"""

from __future__ import annotations

import array
import atexit
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Not loaded ahead: what only a few commands use, and is large (`top`, the MCP server).
_COLD = ("paneboard.top", "paneboard.mcpserver", "paneboard.__main__")


# -- the server -------------------------------------------------------------------------------


def _warm() -> None:
    """Import every module a command may use, as its first run would."""
    import importlib

    from testing.helpers import package_modules

    for inside, _ in package_modules():
        name = "paneboard." + inside.removesuffix(".py").replace("/", ".")
        name = name.removesuffix(".__init__")
        if not name.startswith(_COLD) and ".nats" not in name:
            importlib.import_module(name)


def _child(request: dict[str, Any], fds: list[int], closing: list[int]) -> None:
    """In the forked child: become the command, run it, exit with its code."""
    for fd in closing:
        os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    import paneboard

    sys.argv = [str(Path(paneboard.__file__ or "").with_name("__main__.py"))]  # as `python -m`
    sys.argv += request["argv"]
    code = 1
    try:
        from paneboard.cli import main

        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001  (as the interpreter would: the traceback, then 1)
        import traceback

        traceback.print_exc()
    _finish(code)


def _finish(code: int) -> None:
    """What a normal exit does: wait for the threads, run atexit, flush; then leave."""
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(code & 0xFF)


def serve(path: str) -> None:
    _warm()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    picker = selectors.DefaultSelector()
    picker.register(listener, selectors.EVENT_READ)
    print("ready", flush=True)
    while True:
        for key, _ in picker.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                _fork(conn, picker, listener)
            else:
                pid, conn = key.data
                picker.unregister(key.fileobj)
                os.close(key.fd)
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                try:
                    conn.sendall(f"exit {code}\n".encode())
                except OSError:
                    pass
                conn.close()


def _fork(conn: socket.socket, picker: selectors.BaseSelector, listener: socket.socket) -> None:
    fds: list[int] = []
    data, ancillary, _, _ = conn.recvmsg(1 << 20, socket.CMSG_SPACE(3 * 4))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            got = array.array("i")
            got.frombytes(payload[: len(payload) - len(payload) % got.itemsize])
            fds += got.tolist()
    request = json.loads(data)
    closing = [listener.fileno(), conn.fileno(), picker.fileno()]  # type: ignore[attr-defined]
    closing += [k.fd for k in picker.get_map().values() if k.fd not in closing]
    pid = os.fork()
    if pid == 0:
        _child(request, fds, closing)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"pid {pid}\n".encode())
    picker.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, conn))


# -- the tests' side --------------------------------------------------------------------------


class ForkServer:
    """The server, started on first use by one test process and ended when that process ends."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="pb-fork-")
        self.path = os.path.join(self.folder, "s")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PANEBOARD_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "testing.forkserver", self.path],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline() != b"ready\n":
            raise RuntimeError("the fork server did not start")
        atexit.register(self.close)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(
        self, argv: list[str], env: dict[str, str], input: bytes | None, timeout: float
    ) -> tuple[int, bytes, bytes]:
        """Run `paneboard ARGV` as a child of the server: (exit code, stdout, stderr)."""
        stdin_r, stdin_w = (
            os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        )
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sock = self.send(argv, env, [stdin_r, out_w, err_w])
        return _collect(sock, stdin_w, input or b"", out_r, err_r, argv, timeout)

    def start(self, argv: list[str], env: dict[str, str]) -> WarmProcess:
        """Start `paneboard ARGV` as a child of the server and return at once."""
        return WarmProcess(self, argv, env)

    def send(self, argv: list[str], env: dict[str, str], fds: list[int]) -> socket.socket:
        """Ask for `paneboard ARGV` with *fds* as its stdin, stdout and stderr (closed here)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.path)
            request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
            rights = array.array("i", fds)
            sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
        finally:
            for fd in fds:
                os.close(fd)
        return sock


def _told(said: bytes, ended: bool) -> tuple[int, int | None]:
    """What the server has said of a child: its pid (0 until said), and its exit code (None
    until said; killed, if the server ended without saying, as the child ends with it)."""
    pid, code = 0, None
    for line in said.decode().splitlines():
        word, _, value = line.partition(" ")
        pid = int(value) if word == "pid" else pid
        code = int(value) if word == "exit" else code
    return pid, -signal.SIGKILL if ended and code is None else code


class WarmProcess:
    """A command started through the server, as much of `subprocess.Popen` as the tests use:
    its pid, text stdout and stderr, poll, wait, signals. The exit comes from the server, its
    parent."""

    def __init__(self, server: ForkServer, argv: list[str], env: dict[str, str]) -> None:
        self.args = argv
        self.returncode: int | None = None
        stdin_r = os.open(os.devnull, os.O_RDONLY)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self._sock = server.send(argv, env, [stdin_r, out_w, err_w])
        self.stdout = open(out_r, encoding="utf-8", errors="replace")  # noqa: SIM115
        self.stderr = open(err_r, encoding="utf-8", errors="replace")  # noqa: SIM115
        self._said = b""
        self.pid = 0
        while not self.pid:
            self._hear(None)

    def _hear(self, timeout: float | None) -> None:
        """Read what the server says of the child (its pid, then its exit), up to *timeout*."""
        self._sock.settimeout(timeout)
        try:
            chunk = self._sock.recv(4096)
        except (TimeoutError, BlockingIOError):
            return
        self._said += chunk
        self.pid, self.returncode = _told(self._said, ended=not chunk)

    def poll(self) -> int | None:
        if self.returncode is None:
            self._hear(0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._hear(left)
        self._sock.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _collect(
    sock: socket.socket,
    stdin_w: int,
    feed: bytes,
    out_r: int,
    err_r: int,
    argv: list[str],
    timeout: float,
) -> tuple[int, bytes, bytes]:
    """Feed stdin, read stdout and stderr to their ends and the child's exit, as
    `subprocess.run` does; past *timeout*, kill the child."""
    picker = selectors.DefaultSelector()
    got = {out_r: bytearray(), err_r: bytearray()}
    for fd in got:
        picker.register(fd, selectors.EVENT_READ)
    picker.register(sock, selectors.EVENT_READ)
    if stdin_w >= 0:
        os.set_blocking(stdin_w, False)
        picker.register(stdin_w, selectors.EVENT_WRITE)
    said, pid, code = b"", 0, None
    deadline = time.monotonic() + timeout
    try:
        while got.keys() & {k.fd for k in picker.get_map().values()} or code is None:
            left = deadline - time.monotonic()
            if left <= 0:
                if pid:
                    os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(argv, timeout, bytes(got[out_r]), bytes(got[err_r]))
            for key, _ in picker.select(left):
                if key.fd == stdin_w:
                    try:
                        feed = feed[os.write(stdin_w, feed[: 1 << 16]) :]
                    except BrokenPipeError:
                        feed = b""
                    if not feed:
                        picker.unregister(stdin_w)
                        os.close(stdin_w)
                        stdin_w = -1
                elif key.fileobj is sock:
                    chunk = sock.recv(4096)
                    said += chunk
                    pid, code = _told(said, ended=not chunk)
                    if not chunk:
                        picker.unregister(sock)
                else:
                    chunk = os.read(key.fd, 1 << 16)
                    got[key.fd] += chunk
                    if not chunk:
                        picker.unregister(key.fd)
    finally:
        picker.close()
        sock.close()
        for fd in (out_r, err_r, stdin_w):
            if fd >= 0:
                os.close(fd)
    return code, bytes(got[out_r]), bytes(got[err_r])


_server: ForkServer | None = None


def server() -> ForkServer | None:
    """This process's fork server, started on first use; None to run commands fresh: asked so,
    or for a test of tests/real/ (beside the real agents, as their timings were measured)."""
    global _server
    if os.environ.get("PANEBOARD_TEST_FRESH") == "1" or not hasattr(os, "pidfd_open"):
        return None
    if os.environ.get("PYTEST_CURRENT_TEST", "").startswith("tests/real/"):
        return None
    if _server is None or _server.proc.poll() is not None:
        _server = ForkServer()
    return _server


def warm_run(
    argv: list[str], env: dict[str, str], input: bytes | None, timeout: float
) -> tuple[int, bytes, bytes] | None:
    """`paneboard ARGV` through this process's fork server, or None to run it fresh."""
    warm = server()
    return None if warm is None else warm.run(argv, env, input, timeout)


if __name__ == "__main__":
    serve(sys.argv[1])
