"""Following an agent's own conversation file: JSON lines, read forward from an offset.

Claude Code's transcript and a Codex thread's rollout file are files of JSON lines that
their agent appends to. A `LineReader` reads what was appended since its offset and no
more (a transcript of 100 MB costs what has not been read yet), and keeps only the lines
holding a needle, parsed. A line still being written is left for the next read; a
malformed or overlong line is skipped. A file that was replaced (another inode) or
truncated (shorter than the offset) is read again from its start; a deleted one is
waited for. A `FileWatch` wakes its caller when the file may have changed, with the
one watch of state/watch.py, even when the file, or its folder, does not
exist yet: it watches the nearest folder that does, and moves down as folders appear.
Where the offset was is a `Mark`, kept in a small file so a later reader goes on from it.

Two followers of one file in one process (Claude Code's door reads its transcript for what
the session admitted, the listener's `seen` for what the model was shown) share one reader:
`SharedLines` reads the file once, and hands each of its `Tap`s the records after the tap's
own mark.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import msgspec

from paneboard.state.files import write_atomic
from paneboard.state.watch import Watch

CHUNK = 1 << 20
MAX_LINE = 32 << 20  # longer lines are skipped, not held in memory


class Mark(msgspec.Struct, frozen=True):
    """Where a reader stopped in a file: its path, inode and offset."""

    path: str
    inode: int
    offset: int


class LineReader:
    """Reads the lines appended to *path* since the offset; keeps those holding *needle* (or
    any of several).

    The file stays open between reads (as ``tail -F`` keeps it), so a file deleted and
    created again is told apart from the old one even when the system reuses the inode.
    """

    def __init__(
        self, path: Path, needle: bytes | tuple[bytes, ...], mark: Mark | None = None
    ) -> None:
        self.path = path
        self.needles = needle if isinstance(needle, tuple) else (needle,)
        self.inode: int | None = None
        self.offset = 0
        self.skipped = 0  # malformed or overlong lines
        self._fd: int | None = None
        self._skipping = False  # in the middle of an overlong line
        if mark is not None and mark.path == str(path):
            self.inode, self.offset = mark.inode, mark.offset

    @property
    def mark(self) -> Mark | None:
        return None if self.inode is None else Mark(str(self.path), self.inode, self.offset)

    def read_new(self) -> list[dict[str, Any]]:
        """The JSON objects on the lines appended since the last read that hold the needle."""
        return [record for _, record in self.read_new_at()]

    def read_new_at(self) -> list[tuple[int, dict[str, Any]]]:
        """`read_new`'s objects, each with the offset just past its line."""
        found: list[tuple[int, dict[str, Any]]] = []
        try:
            if self._fd is not None:
                found = self._read(self._fd)  # what was written before any rotation
                if not self._still_there():
                    self.close()
            if self._fd is None and not self._open():
                return found  # not there (yet, or any more): a later wake reads it
            assert self._fd is not None
            if os.fstat(self._fd).st_size < self.offset:
                self.offset, self._skipping = 0, False  # truncated: from its start
            return found + self._read(self._fd)
        except OSError:
            self.close()
            return found  # not a readable file (a folder, say): nothing seen in it

    def _still_there(self) -> bool:
        """Whether the path still names the open file."""
        try:
            return os.stat(self.path).st_ino == self.inode
        except FileNotFoundError:
            return False

    def _open(self) -> bool:
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        inode = os.fstat(self._fd).st_ino
        if inode != self.inode:
            self.inode, self.offset = inode, 0  # another file than the mark's: from its start
            self._skipping = False
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _read(self, fd: int) -> list[tuple[int, dict[str, Any]]]:
        """Parse the complete lines after the offset; the offset moves past them."""
        found: list[tuple[int, dict[str, Any]]] = []
        pieces: list[bytes] = []  # the line being put together, chunk by chunk
        size, at = 0, self.offset
        while chunk := os.pread(fd, CHUNK, at):
            at += len(chunk)
            end = chunk.rfind(b"\n")
            if end < 0:
                pieces.append(chunk)
                size += len(chunk)
                if size > MAX_LINE:  # too long to hold: drop it, and the rest of it later
                    pieces, size, self.offset, self._skipping = [], 0, at, True
                continue
            lines = (b"".join(pieces) + chunk[:end] if pieces else chunk[:end]).split(b"\n")
            if self._skipping:
                lines, self._skipping = lines[1:], False
                self.skipped += 1
            found += self._parse(lines, at - len(chunk) + end + 1)
            self.offset = at - len(chunk) + end + 1
            rest = chunk[end + 1 :]
            pieces, size = [rest] if rest else [], len(rest)
        return found

    def _parse(self, lines: list[bytes], end: int) -> list[tuple[int, dict[str, Any]]]:
        """The objects of *lines*, which end at offset *end*, each with the offset past it."""
        out = []
        past = end - sum(len(line) + 1 for line in lines)
        for line in lines:
            past += len(line) + 1
            if len(line) > MAX_LINE:
                self.skipped += 1
                continue
            if not any(needle in line for needle in self.needles):
                continue
            try:
                record = msgspec.json.decode(line)
            except msgspec.DecodeError:
                self.skipped += 1
                continue
            if isinstance(record, dict):
                out.append((past, record))
        return out


class Lines(Protocol):
    """What a follower reads a conversation file through: a `LineReader`, or a `Tap` of one
    shared with another follower of the file."""

    @property
    def path(self) -> Path: ...

    @property
    def mark(self) -> Mark | None: ...

    def read_new(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class SharedLines:
    """One `LineReader` of *path* from its start, read for every `Tap` taken of it (from any
    thread: a read and its hand-out are one step)."""

    def __init__(self, path: Path, needle: bytes | tuple[bytes, ...]) -> None:
        self.reader = LineReader(path, needle)
        self.taps: list[Tap] = []
        self.lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.reader.path

    def tap(self, since: Mark | None = None) -> Lines:
        """A follower of the file from *since* (its start if None or another file's mark); a
        reader of its own once the shared one has read (what it read is not kept)."""
        with self.lock:
            if self.reader.inode is not None:
                return LineReader(self.path, self.reader.needles, since)
            tap = Tap(self, since)
            self.taps.append(tap)
            return tap

    def read(self) -> None:
        """Read what the file gained, and hand each tap the records past its mark (under the
        lock)."""
        records = self.reader.read_new_at()
        for tap in self.taps:
            tap.take(records, self.reader.inode, self.reader.offset)

    def release(self, tap: Tap) -> None:
        """*tap* is done; the reader closes with the last one."""
        with self.lock:
            if tap in self.taps:
                self.taps.remove(tap)
            if not self.taps:
                self.reader.close()


class Tap:
    """One follower's share of a `SharedLines`: the records past its *since* mark, and its own
    mark, where it has read to."""

    def __init__(self, shared: SharedLines, since: Mark | None) -> None:
        self.shared = shared
        self.since = since if since is not None and since.path == str(shared.path) else None
        self.pending: list[dict[str, Any]] = []
        self._mark: Mark | None = None

    @property
    def path(self) -> Path:
        return self.shared.path

    @property
    def mark(self) -> Mark | None:
        return self._mark

    def take(self, records: list[tuple[int, dict[str, Any]]], inode: int | None, at: int) -> None:
        """Keep *records* (of the file *inode*, read up to *at*); the first time the file was
        opened, only those past the mark, as a `LineReader` from the mark would read them (the
        mark's file replaced or cut shorter than the mark: all of them)."""
        if inode is None:
            return  # not opened yet: nothing read
        since, self.since = self.since, None
        mine = since is not None and since.inode == inode and at >= since.offset
        skip = since.offset if since is not None and mine else -1
        self.pending += [record for past, record in records if past > skip]

    def read_new(self) -> list[dict[str, Any]]:
        with self.shared.lock:
            self.shared.read()
            found, self.pending = self.pending, []
            self._mark = self.shared.reader.mark
        return found

    def close(self) -> None:
        self.shared.release(self)


class FileWatch:
    """`await wait_changed()` returns once a file in *folder* that *match*es may have changed.

    *folder* need not exist: until it does, the nearest existing parent is watched.
    """

    def __init__(self, folder: Path, match: Callable[[str], bool]) -> None:
        self.folder = folder
        self.match = match
        self._watch: Watch | None = None
        self._watching = folder
        self._arm()

    def _arm(self) -> None:
        """Watch the nearest existing folder on the way to *folder*.

        The next folder down is looked for again once the watch holds: `mkdir -p` makes it in
        the same instant as its parent, maybe after the first look and before the watch.
        """
        while True:
            self.close()
            at = self.folder
            while not at.is_dir() and at.parent != at:
                at = at.parent
            self._watching = at
            self._watch = Watch(at, self._wanted)
            if at == self.folder or not (at / self._next_part()).is_dir():
                return

    def _next_part(self) -> str:
        """The name of the folder below the watched one on the way to *folder*."""
        return self.folder.relative_to(self._watching).parts[0]

    async def wait_changed(self) -> None:
        assert self._watch is not None
        await self._watch.wait_changed()
        if self._watch.gone or self._watching != self.folder:
            self._arm()  # the watched folder went away, or the next one on the way appeared

    def _wanted(self, name: str) -> bool:
        """Whether an event naming *name* concerns the file (or the folder on its way)."""
        if self._watching == self.folder:
            return self.match(name)
        return name == self._next_part()

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None


def watch_file(path: Path) -> FileWatch:
    """A watch on one file: wakes when it is written, created, replaced or renamed into place."""
    return FileWatch(path.parent, lambda name: name == path.name)


def load_mark(path: Path) -> Mark | None:
    """The mark kept at *path* (None when missing or unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            return msgspec.json.decode(f.read(), type=Mark)
    except (OSError, msgspec.DecodeError):
        return None


def save_mark(path: Path, mark: Mark) -> None:
    """Keep *mark* at *path*, atomically (a temporary file renamed over the old one)."""
    write_atomic(path, msgspec.json.encode(mark))
