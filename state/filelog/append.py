"""Appending to a board log: serialized by a lock, durable before it returns.

Standard library only, because `paneboard post` runs it. The lock is ``flock`` on
the log file itself, the primitive portalocker uses on POSIX (portalocker's own
import would cost more than the rest of `post`).
"""

from __future__ import annotations

import fcntl
import os
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

from paneboard.protocol.errors import BoardIOError
from paneboard.state.filelog.framing import (
    MAX_PAYLOAD,
    OVERHEAD,
    TAIL,
    frame,
    frame_at,
    generation_record,
    scan,
    valid_end,
)
from paneboard.state.files import sync_dir

_WINDOW = 2 * (MAX_PAYLOAD + OVERHEAD)
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


def append_payloads(
    log: Path, payloads: Sequence[bytes], *, guard: Callable[[], None] | None = None
) -> list[int]:
    """Append one record per payload; return their offsets once they are on disk.

    Under the lock, a torn tail left by a writer that crashed is cut off first,
    so no record ever follows garbage. *guard*, if given, runs under the lock before
    anything is written, and may refuse by raising. On failure nothing is appended.
    """
    data = b"".join(frame(p) for p in payloads)
    fd = _open_locked(log)
    try:
        if guard is not None:
            guard()
        size = os.fstat(fd).st_size
        end = _repair(fd, size)
        first = generation_record() if end == 0 else b""  # a new log names its generation
        data = first + data
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(28, "No space left on device (short write)")
            os.fdatasync(fd)
        except OSError as exc:
            _truncate_quietly(fd, end)
            raise BoardIOError(f"cannot append to {log}: {exc.strerror}") from exc
        if size == 0:
            sync_dir(log.parent)
    finally:
        os.close(fd)
    offsets, at = [], end + len(first)
    for p in payloads:
        offsets.append(at)
        at += len(p) + OVERHEAD
    return offsets


def _open_locked(log: Path) -> int:
    """The log, open and locked; reopened if it was replaced (compacted) while we waited."""
    while True:
        try:
            fd = os.open(log, _OPEN_FLAGS, 0o600)
        except OSError as exc:
            raise BoardIOError(f"cannot open {log}: {exc.strerror}") from exc
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(log).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _repair(fd: int, size: int) -> int:
    """The offset to append at: *size*, or the end of the last valid record after a crash."""
    if size == 0:
        return 0
    if _ends_cleanly(fd, size):
        return size
    start = max(0, size - _WINDOW)
    tail = os.pread(fd, size - start, start)
    end = valid_end(tail, start)
    if end == size:
        return size
    if end < 0 and start > 0:
        end = _scan_whole(fd, size)
    end = max(end, 0)
    os.ftruncate(fd, end)
    os.fsync(fd)
    return end


def _ends_cleanly(fd: int, size: int) -> bool:
    """True if the log's last bytes are a whole valid record (two small reads, the usual case)."""
    if size < OVERHEAD:
        return False
    (length,) = struct.unpack("<I", os.pread(fd, 4, size - TAIL.size))
    start = size - length - OVERHEAD
    if start < 0 or length > MAX_PAYLOAD:
        return False
    return bool(frame_at(os.pread(fd, size - start, start), 0) == size - start)


def _scan_whole(fd: int, size: int) -> int:
    """Slow path: the end of the last valid record found by reading the whole log."""
    return scan(os.pread(fd, size, 0)).end


def _truncate_quietly(fd: int, end: int) -> None:
    try:
        os.ftruncate(fd, end)
    except OSError:
        pass  # the next append repairs the tail under the lock
