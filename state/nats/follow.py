"""Following a board on NATS: an ordered consumer (`natstail`) from a stream sequence, whose
messages wake the listener's own event loop through a pipe, as inotify does for the file log."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import anyio
import msgspec

from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Post, damage_reason, decode_on

if TYPE_CHECKING:
    from paneboard.state.interest import Interest
    from paneboard.state.nats.store import NatsStore

__all__ = ["NatsFollower"]

BATCH = 5000


class NatsFollower:
    """An ordered consumer from a stream sequence; new messages wake `wait_changed` (a pipe).

    A read waits for every message stored when the follower began (or when `catch_up` last
    asked), then hands out what has arrived.
    """

    rewrites = 0  # a stream is never rewritten: JetStream's own limits only drop its head

    def __init__(self, store: NatsStore, position: int) -> None:
        self.store = store
        self._position = max(position, 1)
        self.damaged = 0  # messages skipped because they are not posts
        self._buffer: collections.deque[tuple[int, bytes]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._reached = asyncio.Event()
        self._received = 0  # the last position the consumer delivered
        self._target = 0  # the position `_reached` waits for
        try:
            self._due = store.run(self._subscribe())
        except BaseException:
            self.close()
            raise

    @property
    def position(self) -> int:
        return self._position

    def catch_up(self) -> None:
        """Make the next read wait for every post stored by now."""
        self._due = self.store.run(self._aim())

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        for chunk in self._chunks():
            yield self._decode(chunk)

    def records(self, interest: Interest | None = None) -> Iterator[list[tuple[int, Post, bytes]]]:
        """Every post with its payload (an *interest* is not used: each message is read whole)."""
        for chunk in self._chunks():
            payloads = dict(chunk)
            yield [(position, post, payloads[position]) for position, post in self._decode(chunk)]

    async def wait_changed(self) -> None:
        await anyio.wait_readable(self._wake_r)
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        if hasattr(self, "_tail"):
            with contextlib.suppress(Exception):  # the connection may be gone already
                self.store.run(self._tail.close(), timeout=3)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _decode(self, chunk: list[tuple[int, bytes]]) -> list[tuple[int, Post]]:
        """The posts of *chunk*; a message that is no post of this board is skipped with a
        warning."""
        out: list[tuple[int, Post]] = []
        board = self.store.board
        for position, data in chunk:
            try:
                out.append((position, decode_on(board, data)))
            except msgspec.DecodeError as exc:  # the only error `decode` raises
                import warnings

                self.damaged += 1
                reason = damage_reason(exc)
                damage = DamagedRecord(self.store.stream, position, position + 1, reason)
                warnings.warn(damage, stacklevel=3)
        return out

    def _chunks(self) -> Iterator[list[tuple[int, bytes]]]:
        """The messages after `position`, as (position, payload), a chunk at a time."""
        if self._due >= self._position:
            self._wait_reached()
        self._due = 0
        chunk: list[tuple[int, bytes]] = []
        while self._buffer:
            position, data = self._buffer.popleft()
            if position < self._position:
                continue  # read already (a follower never goes back)
            self._position = position + 1
            chunk.append((position, data))
            if len(chunk) >= BATCH:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    async def _subscribe(self) -> int:
        from paneboard.state.nats.tail import OrderedTail

        last = await self._aim()
        store = self.store
        where = (store.stream, store.subject)
        self._tail = OrderedTail(store.js, where, self._position, self._arrived)
        await store.retrying("cannot follow the board's stream", self._tail.open)
        return last

    async def _aim(self) -> int:
        """The stream's last position, now the one `_reached` waits for."""
        last = await self.store.last_position()
        self._target = last
        if self._received >= last:
            self._reached.set()
        else:
            self._reached.clear()
        return last

    def _arrived(self, position: int, data: bytes) -> None:
        self._buffer.append((position, data))
        self._received = max(self._received, position)
        if position >= self._target:
            self._reached.set()
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:
            pass  # a wake-up is already pending

    def _wait_reached(self) -> None:
        """Block until the consumer has delivered the position `_aim` set."""
        self.store.run(self._reached.wait(), timeout=60)
