"""The pane lock: one listener per (board, agent), held for the process's life.

The operating system drops the lock when its holder dies, SIGKILL included, so a
crashed listener never leaves a stale lock behind. The holder writes its pid into
the lock file so a second listener can say who holds the pane.

On POSIX the lock is ``flock``, called directly: it is the primitive portalocker uses
there (so the locks are the same), and portalocker's own import, which reads its package
metadata, would cost a listener a third of its start-up. Elsewhere portalocker is used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from paneboard.protocol.errors import BoardIOError, PaneLocked

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]  # portalocker covers this platform


class _Held(Exception):
    pass


def _lock(file: IO[str], *, shared: bool) -> None:
    """Lock without waiting; `_Held` if someone else holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(file.fileno(), (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise _Held from exc
        return
    import portalocker

    flags = portalocker.LockFlags.SHARED if shared else portalocker.LockFlags.EXCLUSIVE
    try:
        portalocker.lock(file, flags | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.AlreadyLocked as exc:
        raise _Held from exc


def _unlock(file: IO[str]) -> None:
    if fcntl is not None:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
        return
    import portalocker

    portalocker.unlock(file)


_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


class PaneLock:
    """A held pane lock; `release()` (or process exit) lets another listener in."""

    def __init__(self, file: IO[str], path: Path) -> None:
        self._file = file
        self.path = path

    def release(self) -> None:
        if not self._file.closed:
            _unlock(self._file)
            self._file.close()


def _open(path: Path) -> IO[str]:
    try:
        return os.fdopen(os.open(path, _FLAGS, 0o600), "r+", encoding="ascii")
    except OSError as exc:
        raise BoardIOError(f"cannot open pane lock {path}: {exc.strerror}") from exc


def take_pane_lock(path: Path, board: str, agent: str) -> PaneLock:
    """Take the pane lock without waiting; `PaneLocked` names the holder's pid if it is held."""
    file = _open(path)
    try:
        _lock(file, shared=False)
    except _Held as exc:
        pid = _read_pid(file)
        file.close()
        raise PaneLocked(board, agent, pid) from exc
    file.seek(0)
    file.truncate()
    file.write(f"{os.getpid()}\n")
    file.flush()
    return PaneLock(file, path)


def holder(path: Path) -> int | None:
    """The pid of the listener holding the pane at *path*, or None if nobody holds it.

    The lock file is only read (never created or opened for writing), so asking wakes no one
    watching the panes folder for a listener coming or going.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BoardIOError(f"cannot open pane lock {path}: {exc.strerror}") from exc
    file = os.fdopen(fd, "r", encoding="ascii")
    try:
        _lock(file, shared=True)
    except _Held:
        return _read_pid(file) or -1
    else:
        _unlock(file)
        return None
    finally:
        file.close()


def _read_pid(file: IO[str]) -> int | None:
    file.seek(0)
    text = file.read(32).strip()
    return int(text) if text.isdigit() else None
