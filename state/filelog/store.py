"""The embedded default store: the board's log file, `HOME/BOARD/log` (see state/abc.py).

Standard library only at import: `paneboard post` appends through it without msgspec.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from typing import Self

    from paneboard.protocol.posts import Post
    from paneboard.state.abc import Follower
    from paneboard.state.filelog.compact import Compacted
    from paneboard.state.health import Check
    from paneboard.state.limit import OpenLimit
from paneboard.state.filelog.framing import (
    GENERATION_RECORD_SIZE,
    HEAD,
    OVERHEAD,
    TAIL,
    frame_at,
    generation_of,
)
from paneboard.state.trust.sealing import Sealer, SealingAppends


class FilePresence:
    """The file log shares no presence: each listener's file in its pane folder is all there is
    (read where the pane lives)."""

    ttl = math.inf
    shared = False

    def put(self, agent: str, data: bytes) -> None:
        pass

    def read(self) -> dict[str, bytes]:
        return {}


class FileStore(SealingAppends):
    """The embedded default: `HOME/BOARD/log`; *sealer* signs every post appended (none: the
    bytes as given)."""

    label = "file log"  # its path would push a status line's counts off a narrow screen

    def __init__(self, folder: Path, sealer: Sealer | None = None) -> None:
        self.sealer = sealer
        self.folder = folder
        self.log = folder / "log"
        self.presence = FilePresence()

    @property
    def where(self) -> str:
        return str(self.log)

    # -- the log -------------------------------------------------------------------------

    def _append(self, payloads: Sequence[bytes], limit: OpenLimit | None) -> list[int]:
        """The log's lock makes the limit's check and the write one step (`state.filelog.tally`)."""
        from paneboard.state.filelog.append import append_payloads

        if limit is None:
            return append_payloads(self.log, payloads)
        from paneboard.state.filelog.tally import admit

        return append_payloads(self.log, payloads, guard=lambda: admit(limit))

    def read_all(self) -> list[tuple[int, Post]]:
        from paneboard.state.filelog.log import read_posts

        return read_posts(self.log, board=self.folder.name)

    def follow(self, position: int) -> Follower:
        from paneboard.state.filelog.follow import FileFollower

        return FileFollower(self.folder, position)

    def has_posts(self) -> bool:
        return self.log.exists()

    def identity(self) -> str:
        """The generation the log's first record names; a log from before those, its inode."""
        try:
            fd = os.open(self.log, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return ""
        try:
            head = os.pread(fd, GENERATION_RECORD_SIZE, 0)
            size = frame_at(head, 0)
            generation = generation_of(head[HEAD.size : size - TAIL.size]) if size > 0 else None
            return f"generation {generation}" if generation else str(os.fstat(fd).st_ino)
        finally:
            os.close(fd)

    def accepts(self, position: int) -> bool:
        try:
            size = os.stat(self.log).st_size
        except FileNotFoundError:
            return position == 0
        if position > size:
            return False
        if position == size:
            return True
        with os.fdopen(os.open(self.log, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as f:
            f.seek(position)
            head = f.read(HEAD.size)
            if len(head) < HEAD.size:
                return False
            (_, n, _) = HEAD.unpack(head)
            f.seek(position)
            return frame_at(f.read(min(n, 1 << 21) + OVERHEAD), 0) > 0

    def close(self) -> None:
        pass  # every operation opens and closes the log itself

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- capabilities --------------------------------------------------------------------

    def compact(self, now: float, archive: Path | None = None) -> Compacted:
        from paneboard.protocol.errors import BadInput
        from paneboard.state.filelog.compact import compact

        if not self.log.exists():
            raise BadInput(f"board `{self.folder.name}` has no log to compact")
        return compact(self.log, now, archive)

    def health(self) -> Check:
        """Every record read: how many, and any damage or torn tail found."""
        import warnings

        from paneboard.protocol.errors import DamagedRecord
        from paneboard.state.filelog.log import LogReader
        from paneboard.state.health import Check, Level

        if not self.log.exists():
            return Check("warn", "board", f"`{self.folder.name}` has no posts yet ({self.log})")
        reader = LogReader(self.log, board=self.folder.name)
        with warnings.catch_warnings(record=True) as damaged:
            warnings.simplefilter("always", DamagedRecord)
            count = sum(len(batch) for batch in reader.batches())
        size = self.log.stat().st_size
        torn = size - reader.position
        extra = (f", {len(damaged)} damaged span(s) skipped" if damaged else "") + (
            f", {torn} bytes of torn tail (the next post repairs it)" if torn else ""
        )
        level: Level = "warn" if damaged or torn else "ok"
        return Check(level, "board", f"`{self.folder.name}`: {count} records, {size} bytes{extra}")
