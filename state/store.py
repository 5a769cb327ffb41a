"""Where a board's posts live, behind one interface: the file log (the embedded default)
or NATS JetStream (`state.natsstore`, for boards shared between machines).

A position is where a post sits in the store, increasing in log order: a byte offset
in the file log, a stream sequence in JetStream. Catch-up, order, delivered keys and
receipts are the same code for every store; only these few operations differ.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from paneboard.protocol.posts import Post
from paneboard.state.framing import (
    GENERATION_RECORD_SIZE,
    HEAD,
    OVERHEAD,
    TAIL,
    frame_at,
    generation_of,
)


class Follower(Protocol):
    """Reads a store forward from a position, and waits for it to grow."""

    replaced: (
        bool  # the store was rewritten (compacted) since the last read: fold again from the start
    )

    @property
    def offset(self) -> int:
        """The position after the last post handed out."""
        ...

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        """Every post after `offset` as (position, post), a batch at a time."""
        ...

    async def wait_changed(self) -> None:
        """Return once the store may have grown (woken by the kernel or the server, never a busy poll)."""
        ...

    def close(self) -> None: ...


class Store(Protocol):
    name: str

    def append(
        self, posts: Sequence[Post], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        """Store *posts* durably, in order; their positions. *guard* may refuse first, by raising."""
        ...

    def read_all(self) -> list[tuple[int, Post]]: ...

    def follow(self, position: int) -> Follower: ...

    def identity(self) -> str:
        """What a checkpoint must match to describe this store ("" while it is empty)."""
        ...

    def accepts(self, position: int) -> bool:
        """Whether a checkpoint at *position* can be continued from here."""
        ...

    def close(self) -> None: ...


class FileStore:
    """The embedded default: `HOME/BOARD/log`."""

    name = "file"

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "log"

    def append(
        self, posts: Sequence[Post], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        from paneboard.protocol.posts import encode
        from paneboard.state.append import append_payloads

        return append_payloads(self.log, [encode(p) for p in posts], guard=guard)

    def read_all(self) -> list[tuple[int, Post]]:
        from paneboard.state.log import read_posts

        return read_posts(self.log)

    def follow(self, position: int) -> Follower:
        from paneboard.state.follow import FileFollower

        return FileFollower(self.folder, position)

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
        with open(self.log, "rb") as f:
            f.seek(position)
            head = f.read(HEAD.size)
            if len(head) < HEAD.size:
                return False
            (_, n, _) = HEAD.unpack(head)
            f.seek(position)
            return frame_at(f.read(min(n, 1 << 21) + OVERHEAD), 0) > 0

    def close(self) -> None:
        pass
