"""Waking when a board's log changes: inotify on Linux, a slow poll elsewhere.

The watch is on the board's folder (so a log created or replaced later is seen),
filtered to events naming the log. An idle watcher sleeps in the kernel and uses no
CPU; a change wakes it within a fraction of a millisecond.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Callable
from pathlib import Path

import anyio

IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_Q_OVERFLOW = 0x4000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
_EVENT = struct.Struct("iIII")
POLL_INTERVAL = 0.25


def read_events(fd: int) -> list[tuple[int, bytes]]:
    """Every inotify event queued on *fd*, as (mask, name), read until none is left."""
    events: list[tuple[int, bytes]] = []
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return events
        i = 0
        while i < len(data):
            _, mask, _, length = _EVENT.unpack_from(data, i)
            events.append((mask, data[i + _EVENT.size : i + _EVENT.size + length].rstrip(b"\0")))
            i += _EVENT.size + length


def drained(fd: int, concerns: Callable[[bytes], bool]) -> bool:
    """Read every queued event; True if one names a file that *concerns* the watcher (or events
    were lost)."""
    return any(mask & IN_Q_OVERFLOW or concerns(name) for mask, name in read_events(fd))


class _Watcher:
    """`await wait_changed()` returns after a file the watcher is concerned with may have changed:
    woken by inotify on the folder, or where there is none by a slow poll of `_snapshot()`."""

    _fd: int | None
    _last: object

    @property
    def uses_inotify(self) -> bool:
        return self._fd is not None

    async def wait_changed(self) -> None:
        if self._fd is None:
            await self._poll()
            return
        while True:
            await anyio.wait_readable(self._fd)
            if drained(self._fd, self._concerns):
                return

    def _concerns(self, name: bytes) -> bool:
        raise NotImplementedError

    def _snapshot(self) -> object:
        raise NotImplementedError

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(POLL_INTERVAL)
            now = self._snapshot()
            if now != self._last:
                self._last = now
                return

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class LogWatcher(_Watcher):
    """`await wait_changed()` returns after the log in *folder* may have changed."""

    def __init__(self, folder: Path, name: str = "log") -> None:
        self.folder = folder
        self.name = name.encode()
        self._fd = _inotify_watch(folder)
        self._last = self._snapshot()

    def _concerns(self, name: bytes) -> bool:
        return name == self.name

    def _snapshot(self) -> tuple[int, int]:
        try:
            st = os.stat(self.folder / self.name.decode())
        except FileNotFoundError:
            return (0, 0)
        return (st.st_ino, st.st_size)


class FolderWatcher(_Watcher):
    """`await wait_changed()` returns after a file in *folder* whose name ends with one of
    *suffixes* was created, written, closed after writing, renamed in or deleted.

    A closed write catches a process that held a file open for writing and died (its pane
    lock), SIGKILL included: the kernel closes its files.
    """

    MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO | IN_DELETE

    def __init__(self, folder: Path, suffixes: tuple[str, ...]) -> None:
        self.folder = folder
        self.suffixes = tuple(s.encode() for s in suffixes)
        self._fd = _inotify_watch(folder, self.MASK)
        self._last = self._snapshot()

    def _concerns(self, name: bytes) -> bool:
        return name.endswith(self.suffixes)

    def _snapshot(self) -> list[tuple[str, float]]:
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return []
        ends = tuple(s.decode() for s in self.suffixes)
        return sorted((e.name, e.stat().st_mtime) for e in entries if e.name.endswith(ends))


def _inotify_watch(folder: Path, mask: int = IN_MODIFY | IN_CREATE | IN_MOVED_TO) -> int | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded: no search
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(folder), mask) < 0:
        err = ctypes.get_errno()
        os.close(fd)
        raise (
            OSError(err, f"cannot watch {folder}: {os.strerror(err)}")
            if err != errno.ENOSYS
            else OSError(err, "no inotify")
        )
    return int(fd)
