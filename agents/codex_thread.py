"""Codex threads as paneboard meets them: the hook input, liveness, unloading, the rollout.

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
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
import msgspec

from paneboard.protocol.errors import BadInput
from paneboard.state.panes.transcript import FileWatch
from paneboard.state.watch import POLL_INTERVAL, Watch

_HEX = "[0-9a-fA-F]"
_THREAD_ID = re.compile(f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_PROC_LOCKS = Path("/proc/locks")
# inotify: the lock file closed (its holder let go or died), deleted, or renamed away.
_IN_CLOSE = 0x008 | 0x010
_IN_GONE = 0x200 | 0x040 | 0x400


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


def thread_from_hook(
    session: str | None, transcript: str | None, env: Mapping[str, str]
) -> CodexThread:
    """The thread a Codex hook runs for, from its input's session id and transcript path.

    The Codex home is `$CODEX_HOME`, else the one the rollout lives in
    (`HOME/sessions/YYYY/MM/DD/rollout-….jsonl`), else `~/.codex`.
    """
    if not session:
        raise BadInput("the Codex hook's input has no `session_id`")
    rollout = Path(transcript) if transcript else None
    home = codex_home(env)
    if not env.get("CODEX_HOME") and rollout is not None and len(rollout.parents) > 4:
        home = rollout.parents[4]
    return CodexThread(check_thread_id(session), home, rollout)


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
    holder may have let go), then the lock table says. Letting go of a lock changes nothing
    a poll can see, so where there is no inotify the table is read at each poll.
    """
    name = thread.lock.name
    watch = Watch(thread.lock.parent, lambda got: got == name, _IN_CLOSE | _IN_GONE)
    try:
        while thread_loaded(thread):
            with anyio.move_on_after(None if watch.uses_inotify else POLL_INTERVAL):
                await watch.wait_changed()
    finally:
        watch.close()


async def until_unloaded(thread: CodexThread) -> str:
    """Wait until *thread* is unloaded; say so (a listener's reason to stop)."""
    await wait_unloaded(thread)
    return f"Codex thread {thread.id} is no longer loaded"


def find_rollout(home: Path, thread: str) -> Path | None:
    """The rollout file of Codex thread *thread*: ``HOME/sessions/**/rollout-*-THREAD.jsonl``."""
    found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    return found[-1] if found else None


class Rollout(msgspec.Struct, frozen=True):
    """The rollout of a thread Codex has not written yet: today's folder of its sessions."""

    thread: CodexThread

    def find(self) -> Path | None:
        return find_rollout(self.thread.home, self.thread.id)

    def watch(self) -> FileWatch:
        day = self.thread.home / "sessions" / time.strftime("%Y/%m/%d")
        suffix = f"-{self.thread.id}.jsonl"
        return FileWatch(day, lambda name: name.startswith("rollout-") and name.endswith(suffix))
