"""Waking when a file in a folder may have changed: inotify on Linux, one slow poll elsewhere.

A `Watch` is on a folder (so a file created or replaced later is seen), filtered by a
callable on the names the events carry, in the manner of watchfiles' ``watch_filter``.
An idle watch sleeps in the kernel and uses no CPU; a change wakes it within a fraction
of a millisecond. Where inotify is missing, or the folder cannot be watched, the folder
is looked at every `POLL_INTERVAL` seconds, and a change to a matching entry wakes it.
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
IN_IGNORED = 0x8000  # the watched folder itself went away
WRITTEN = IN_MODIFY | IN_CREATE | IN_MOVED_TO
POLL_INTERVAL = 0.25
_EVENT = struct.Struct("iIII")

Snapshot = tuple[tuple[str, int, int, int], ...] | None


def inotify_watch(folder: Path, mask: int = WRITTEN) -> int | None:
    """A non-blocking inotify descriptor watching *folder* for *mask*; None without inotify.

    `OSError` if the folder cannot be watched (it is missing, say).
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded: no search
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(folder), mask) < 0:
        err = ctypes.get_errno()
        os.close(fd)
        if err == errno.ENOSYS:
            raise OSError(err, "no inotify")
        raise OSError(err, f"cannot watch {folder}: {os.strerror(err)}")
    return int(fd)


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
    """Read every queued event; True if one names a file that *concerns* the caller (or events
    were lost)."""
    return any(mask & IN_Q_OVERFLOW or concerns(name) for mask, name in read_events(fd))


class Watch:
    """`await wait_changed()` returns after an entry of *folder* whose name *match*es may have
    changed (an event of *mask*), or once the folder itself went away (`gone` is then set).

    A folder that cannot be watched (missing, or no inotify here) is polled instead.
    """

    def __init__(self, folder: Path, match: Callable[[str], bool], mask: int = WRITTEN) -> None:
        self.folder = folder
        self.match = match
        self.gone = False
        try:
            self._fd = inotify_watch(folder, mask)
        except OSError:
            self._fd = None
        self._last = None if self._fd is not None else self._snapshot()  # what a poll compares

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
        """Read the queued events: whether one concerns the watch."""
        assert self._fd is not None
        hit = False
        for mask, raw in read_events(self._fd):
            name = os.fsdecode(raw)
            self.gone = self.gone or bool(mask & IN_IGNORED)
            hit = hit or bool(mask & IN_Q_OVERFLOW) or (bool(name) and self.match(name))
        return hit or self.gone

    async def _poll(self) -> None:
        while True:
            await anyio.sleep(POLL_INTERVAL)
            now = self._snapshot()
            if now != self._last:
                self._last = now
                self.gone = now is None
                return

    def _snapshot(self) -> Snapshot:
        """The matching entries as (name, inode, size, mtime); None when the folder is gone."""
        try:
            entries = list(os.scandir(self.folder))
        except (FileNotFoundError, NotADirectoryError):
            return None
        seen = []
        for entry in entries:
            if not self.match(entry.name):
                continue
            try:
                st = entry.stat()
            except FileNotFoundError:
                continue  # removed since the folder was listed
            seen.append((entry.name, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(sorted(seen))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
