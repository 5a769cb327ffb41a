"""Reading a board log: every complete record from a position (a byte offset), damage skipped."""

from __future__ import annotations

import fcntl
import os
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

import msgspec

from paneboard.protocol.errors import BoardIOError, DamagedRecord
from paneboard.protocol.posts import Post, damage_reason, decode, decode_on, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.framing import OVERHEAD, Scan, generation_of, scan
from paneboard.state.filelog.skim import skim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from paneboard.state.interest import Interest

CHUNK = 4 << 20
FIRST = 64 << 10  # a read's first chunk: most reads are of a few records (a refresh, a payload)


class LogReader:
    """Reads a board log forward from a position (its byte offset), remembering where it stopped.

    With *board* (what every store passes: a board's log is ``HOME/BOARD/log``), a record that
    names another board is damaged; without, any board's records are read (a log outside a
    board's folder: an archive, a test's). A torn or unfinished record at the end is left for
    the next read. A damaged span followed by valid records is skipped with a `DamagedRecord`
    warning, after reading it again under a shared lock (so a writer repairing a torn tail at
    that moment is never mistaken for damage).

    `records` given an `Interest` (a pane's cold catch-up: state/interest.py) hands out only the
    records it needs: every frame is checked, but a post is decoded, checked and counted
    damaged only if its head says the pane needs it.
    """

    def __init__(self, path: Path, position: int = 0, *, board: str | None = None) -> None:
        self.path = path
        self.board = board
        self.position = position
        self.inode: int | None = None
        self.rewrites = 0  # how many times the log was found replaced (compacted): only counts up
        self.generation: str | None = None  # named by the log's first record (framing.py)
        self.damaged = 0  # records skipped because they are not posts (framing's spans aside)

    def read_new(self) -> list[tuple[int, Post]]:
        """Every complete record after the position, as (position, post); advances the position."""
        return [item for batch in self.batches() for item in batch]

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        """The records after the offset, a chunk of the file at a time (memory stays bounded).

        The position advances as each batch is handed out.
        """
        for _, batch in self._chunks():
            yield batch

    def records(self, interest: Interest | None = None) -> Iterator[list[tuple[int, Post, bytes]]]:
        """As `batches`, with each post's payload as the log holds it; with *interest*, only
        the records it needs."""
        for frames, batch in self._chunks(interest):
            payloads = dict(frames)
            yield [(offset, post, bytes(payloads[offset])) for offset, post in batch]

    def _chunks(
        self, interest: Interest | None = None
    ) -> Iterator[tuple[list[tuple[int, bytes | memoryview]], list[tuple[int, Post]]]]:
        """(the frames, their posts) of each chunk read."""
        fd = open_regular(self.path)
        if fd is None:
            return
        try:
            st = os.fstat(fd)
            if self.inode is not None and st.st_ino != self.inode:
                # compacted: the caller folds it again from the start
                self.rewrites, self.position = self.rewrites + 1, 0
            elif st.st_size < self.position:
                warnings.warn(
                    f"{self.path} is shorter than its position {self.position}; "
                    "reading it again from the start",
                    DamagedRecord,
                    stacklevel=2,
                )
                self.rewrites, self.position = self.rewrites + 1, 0
            self.inode = st.st_ino
            yield from self._read(fd, interest)
        finally:
            os.close(fd)

    def _read(
        self, fd: int, interest: Interest | None
    ) -> Iterator[tuple[list[tuple[int, bytes | memoryview]], list[tuple[int, Post]]]]:
        # Each read starts at the first byte not consumed (a record cut by the chunk's end is
        # read again whole, not copied over), and takes a chunk more while none is consumed.
        base, want = self.position, min(FIRST, CHUNK)

        def find(buf: bytes, base: int) -> Scan:
            return scan(buf, base) if interest is None else skim(buf, base, interest)

        while True:
            buf = os.pread(fd, want, base)
            if not buf:
                break
            found = find(buf, base)
            if found.damaged:
                buf = _read_locked(fd, base)
                found = find(buf, base)
                for start, end in found.damaged:
                    warnings.warn(DamagedRecord(str(self.path), start, end), stacklevel=3)
            batch = self._decode(found.frames)
            consumed, base = found.end - base, found.end
            self.position = base
            yield found.frames, batch
            if found.damaged or len(buf) < want:
                break  # the read went to the end of the file
            want = CHUNK if consumed else want + CHUNK

    def _decode(self, frames: list[tuple[int, bytes | memoryview]]) -> list[tuple[int, Post]]:
        out: list[tuple[int, Post]] = []
        for offset, payload in frames:
            if offset == 0 and (generation := generation_of(payload)) is not None:
                self.generation = generation
                continue
            try:
                post = decode(payload) if self.board is None else decode_on(self.board, payload)
                out.append((offset, post))
            except msgspec.DecodeError as exc:  # the only error `decode` raises
                self.damaged += 1
                end = offset + len(payload) + OVERHEAD
                warnings.warn(
                    DamagedRecord(str(self.path), offset, end, damage_reason(exc)), stacklevel=4
                )
        return out


def open_regular(path: Path, flags: int = os.O_RDONLY) -> int | None:
    """*path* opened without following a link or blocking on a FIFO; None if it is missing.

    Anything but a regular file is refused (`BoardIOError`).
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BoardIOError(f"cannot read {path}: {exc.strerror}") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BoardIOError(f"cannot read {path}: not a regular file")
    return fd


def _read_locked(fd: int, start: int) -> bytes:
    fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        return os.pread(fd, os.fstat(fd).st_size - start, start)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def read_posts(path: Path, offset: int = 0, *, board: str | None = None) -> list[tuple[int, Post]]:
    """Every complete post in the log at *path* from *offset* (of *board*, when given)."""
    return LogReader(path, offset, board=board).read_new()


def append_posts(path: Path, posts: list[Post]) -> list[int]:
    """Append posts durably (one fsync for the batch); return their offsets."""
    return append_payloads(path, [encode(p) for p in posts])
