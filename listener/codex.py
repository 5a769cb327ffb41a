"""Codex threads as paneboard meets them: the hook input, liveness, and unloading.

A Codex hook learns its thread from its stdin JSON (`session_id`, and `transcript_path`, the
thread's rollout file), never from its environment, which is the app-server daemon's.

A thread is *loaded* while some process (the shared app-server daemon, or a TUI run with
`--no-daemon`) holds the exclusive `flock` on `$CODEX_HOME/thread-writer-locks/<id>.lock`.
The daemon lets go of it when it unloads the thread, a while after the last turn once no TUI
is attached; a crash lets go of it too. The lock *file* can outlive its holder, so liveness
is read from the kernel's lock table, never from the file's existence.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import msgspec

from paneboard.protocol.errors import BadInput
from paneboard.state.tail import _inotify_watch, drained

_HEX = "[0-9a-fA-F]"
_THREAD_ID = re.compile(f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_PROC_LOCKS = Path("/proc/locks")
# inotify: the lock file closed (its holder let go or died), deleted, or renamed away.
_IN_CLOSE = 0x008 | 0x010
_IN_GONE = 0x200 | 0x040 | 0x400
POLL_INTERVAL = 1.0


class CodexThread(msgspec.Struct, frozen=True):
    """One Codex thread: its id, its Codex home, and its rollout file when known."""

    id: str
    home: Path
    rollout: Path | None = None

    @property
    def lock(self) -> Path:
        return self.home / "thread-writer-locks" / f"{self.id}.lock"


def codex_home(env: Mapping[str, str]) -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    return Path(env.get("CODEX_HOME") or Path.home() / ".codex")


def check_thread_id(thread: str) -> str:
    """*thread* if it is a Codex thread id (a UUID); `BadInput` otherwise (it names a file)."""
    if not _THREAD_ID.fullmatch(thread):
        raise BadInput(f"`{thread[:80]}` is not a Codex thread id (a UUID)")
    return thread


def thread_from_hook(data: Mapping[str, Any], env: Mapping[str, str]) -> CodexThread:
    """The thread a Codex hook runs for, from its input (`session_id`, `transcript_path`).

    The Codex home is `$CODEX_HOME`, else the one the rollout lives in
    (`HOME/sessions/YYYY/MM/DD/rollout-….jsonl`), else `~/.codex`.
    """
    session = data.get("session_id")
    if not isinstance(session, str) or not session:
        raise BadInput("the Codex hook's input has no `session_id`")
    transcript = data.get("transcript_path")
    rollout = Path(transcript) if isinstance(transcript, str) and transcript else None
    home = codex_home(env)
    if not env.get("CODEX_HOME") and rollout is not None and len(rollout.parents) > 4:
        home = rollout.parents[4]
    return CodexThread(check_thread_id(session), home, rollout)


def listen_args(data: Mapping[str, Any], env: dict[str, str], hook_parent: int) -> list[str]:
    """`paneboard listen` arguments for the Codex session a hook with input *data* runs in.

    The door is `codex queue` on the hook's thread, and the listener lasts while the thread
    stays loaded (the daemon that runs it, and so the hook's parent, outlive the session).
    Sets `CODEX_HOME` in *env*, the listener's environment. Without `codex` on its PATH, the
    listener uses the binary of *hook_parent* (Codex's daemon), which does `codex queue` too.
    """
    thread = thread_from_hook(data, env)
    env["CODEX_HOME"] = str(thread.home)
    args = ["--door", "codex-queue", "--thread", thread.id, "--until-unloaded"]
    found = running_codex(hook_parent)
    if shutil.which("codex", path=env.get("PATH")) is None and found:
        args += ["--codex-bin", found]
    return args


def running_codex(pid: int) -> str | None:
    """The executable of process *pid* if it is a Codex binary (the daemon that runs a hook)."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    return exe if os.path.basename(exe) == "codex" else None


def thread_loaded(thread: CodexThread) -> bool:
    """Whether some process holds the thread's writer lock (has the thread loaded)."""
    try:
        st = os.stat(thread.lock)
    except FileNotFoundError:
        return False
    try:
        table = _PROC_LOCKS.read_text()
    except OSError:
        return _probe_lock(thread.lock)
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        # "3: FLOCK  ADVISORY  WRITE 10685 fe:00:2157861 0 EOF" (a "->" marks a waiter)
        fields = line.split()
        if "->" not in fields and len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
            return True
    return False


def _probe_lock(lock: Path) -> bool:
    """Without a lock table to read: try a shared lock, without waiting, and let go at once."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets go of the probe's lock
    return False


async def wait_unloaded(thread: CodexThread) -> None:
    """Return once no process has *thread* loaded.

    Woken by inotify when the lock file is closed, deleted or renamed (each a moment its
    holder may have let go), then the lock table says; a check a second where there is no
    inotify.
    """
    fd = _watch(thread.lock.parent)
    name = thread.lock.name.encode()
    try:
        while thread_loaded(thread):
            if fd is None:
                await anyio.sleep(POLL_INTERVAL)
                continue
            while not drained(fd, lambda got: got == name):
                await anyio.wait_readable(fd)
    finally:
        if fd is not None:
            os.close(fd)


def _watch(folder: Path) -> int | None:
    try:
        return _inotify_watch(folder, _IN_CLOSE | _IN_GONE)
    except OSError:
        return None  # no such folder: nothing is loaded, and the lock table says so


async def until_unloaded(thread: CodexThread) -> str:
    """Wait until *thread* is unloaded; say so (a listener's reason to stop)."""
    await wait_unloaded(thread)
    return f"Codex thread {thread.id} is no longer loaded"
