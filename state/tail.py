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


class LogWatcher:
    """`await wait_changed()` returns after the log in *folder* may have changed."""

    def __init__(self, folder: Path, name: str = "log") -> None:
        self.folder = folder
        self.name = name.encode()
        self._fd = _inotify_watch(folder)
        self._last = self._stat()

    @property
    def uses_inotify(self) -> bool:
        return self._fd is not None

    async def wait_changed(self) -> None:
        if self._fd is None:
            await self._poll()
            return
        while True:
            await anyio.wait_readable(self._fd)
            if self._drain():
                return

    def _drain(self) -> bool:
        """Read every queued event; True if one concerns the log."""
        assert self._fd is not None
        hit = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return hit
            i = 0
            while i < len(data):
                _, mask, _, length = _EVENT.unpack_from(data, i)
                name = data[i + _EVENT.size : i + _EVENT.size + length].rstrip(b"\0")
                hit = hit or name == self.name or bool(mask & IN_Q_OVERFLOW)
                i += _EVENT.size + length

    def _stat(self) -> tuple[int, int]:
        try:
            st = os.stat(self.folder / self.name.decode())
        except FileNotFoundError:
            return (0, 0)
        return (st.st_ino, st.st_size)

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(POLL_INTERVAL)
            now = self._stat()
            if now != self._last:
                self._last = now
                return

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class FolderWatcher:
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
        self._last = self._listing()

    async def wait_changed(self) -> None:
        if self._fd is None:
            await self._poll()
            return
        while True:
            await anyio.wait_readable(self._fd)
            if self._drain():
                return

    def _drain(self) -> bool:
        assert self._fd is not None
        hit = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return hit
            i = 0
            while i < len(data):
                _, mask, _, length = _EVENT.unpack_from(data, i)
                name = data[i + _EVENT.size : i + _EVENT.size + length].rstrip(b"\0")
                hit = hit or name.endswith(self.suffixes) or bool(mask & IN_Q_OVERFLOW)
                i += _EVENT.size + length

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(POLL_INTERVAL)
            now = self._listing()
            if now != self._last:
                self._last = now
                return

    def _listing(self) -> list[tuple[str, float]]:
        try:
            entries = list(os.scandir(self.folder))
        except FileNotFoundError:
            return []
        ends = tuple(s.decode() for s in self.suffixes)
        return sorted((e.name, e.stat().st_mtime) for e in entries if e.name.endswith(ends))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


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
