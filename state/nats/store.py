"""A board on NATS JetStream, for agents on several machines (`--store nats://…`, see `natsurl`).

One stream per board, ``PREFIX_BOARD`` with the subject ``PREFIX.BOARD.posts`` (a dot in
a board's name is written ``~``), file storage, created on first use with the address's
``replicas``; a stream that exists already is used as it is, whatever its settings
(`stream_report` tells them). A post is published with its id as ``Nats-Msg-Id`` and
`append` returns only after JetStream acknowledged it. That header makes a retried publish
one message, and no more: any client sets its own (or none), so no reader relies on it; a
copy of a post is damaged or known to every reader (state/fold.py). A position is the
stream sequence.
Followers tail with an ordered consumer from their position, and wake the listener through
a pipe, as inotify does for the file log. Presence (for `who`) lives in the key-value
bucket ``PREFIX_presence`` with a time-to-live.

On a cluster, losing a stream's leader is a pause, never a loss: while the survivors elect
another (JetStream takes 4 to 9 s), a publish finds no one to store it. Every operation
is retried for `RETRY_FOR` seconds (a publish with the same message id, so JetStream
stores it once: its duplicate window, 2 minutes by default, is far longer), then fails
with one `BoardIOError`. The client knows every seed, and reconnects to another when its
server goes; a follower's ordered consumer (`natstail`) that stops hearing from its server
starts again, on the new leader, from the sequence after the last one it handed out.

nats-py is asynchronous; paneboard's store interface is not. A store runs an event loop of
its own in anyio's blocking portal, and waits on it: the commands stay simple, and the
listener's own event loop is never blocked for longer than a publish (seconds, through an
election: its receipts wait, as its deliveries do, one at a time).

`--max-open` holds across machines: a prompt with a limit is published with the header
``Nats-Expected-Last-Subject-Sequence`` naming the last message the check folded, so
JetStream stores it only if no post landed since; when one did, the store folds it, checks
again and publishes again. The modules beside this one: `natsclient` (connecting),
`natsfollow` (following), `natspresence`, `natsreport` (for `doctor`), `natsurl`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Self, TypeVar

import msgspec
from anyio.from_thread import start_blocking_portal

from paneboard.protocol.errors import BoardIOError, DamagedRecord, PaneboardError
from paneboard.protocol.posts import Post
from paneboard.state.nats.client import RECONNECT_WAIT, connect, quiet, transient
from paneboard.state.nats.follow import NatsFollower
from paneboard.state.nats.presence import NatsPresence
from paneboard.state.nats.report import StreamReport, stream_report
from paneboard.state.nats.url import parse_url, shown
from paneboard.state.trust.sealing import Sealer, SealingAppends

if TYPE_CHECKING:
    from types import TracebackType

    from paneboard.state.fold import BoardState
    from paneboard.state.health import Check
    from paneboard.state.limit import OpenLimit

__all__ = ["ATTEMPT", "RETRY_FOR", "TIMEOUT", "NatsFailed", "NatsStore"]

T = TypeVar("T")
RETRY_FOR = 15.0  # how long an operation keeps trying through a leader election
ATTEMPT = 2.0  # how long one try waits for JetStream's answer
TIMEOUT = RETRY_FOR + ATTEMPT + 3  # a caller's wait: always longer than the retries
WRONG_LAST_SEQUENCE = 10071  # JetStream's error code: a post landed since the expected one


class NatsFailed(BoardIOError):
    """An operation that failed, or kept failing for `RETRY_FOR` seconds: *what* failed, and
    the last reason (*detail*)."""

    def __init__(self, where: str, what: str, detail: str) -> None:
        super().__init__(f"NATS at {where}: {what}: {detail}")
        self.where, self.what, self.detail = where, what, detail


class _Id(msgspec.Struct):
    """A post's id, all a publish needs of an encoded post (its other fields are skipped)."""

    id: str


_ids = msgspec.msgpack.Decoder(_Id)


class NatsStore(SealingAppends):
    """A board's stream on JetStream, its presence in the key-value bucket."""

    def __init__(
        self,
        url: str,
        board: str,
        *,
        creds: str | None = None,
        tls_ca: str | None = None,
        reconnect: bool = False,
        sealer: Sealer | None = None,
    ) -> None:
        self.sealer = sealer  # signs every post appended (none: the bytes as given)
        self.address = parse_url(url)
        self.where = self.label = self.address.shown
        self.url = shown(url)  # with its prefix and options, for `doctor`
        token = board.replace(".", "~")
        self.stream = f"{self.address.prefix}_{token}"
        self.subject = f"{self.address.prefix}.{token}.posts"
        self.board = board
        self._created = ""
        self._last_at_open = 0
        self._opened: float | None = None  # when the first operation began (loop time)
        self._exits = contextlib.ExitStack()
        self._portal = self._exits.enter_context(start_blocking_portal("asyncio"))
        self.presence = NatsPresence(self)
        try:
            self.run(self._connect(creds, tls_ca, reconnect))
        except BaseException:
            self.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        """Run *coro* on the store's event loop and wait for it (cancelled after *timeout*)."""
        future: Future[T] = self._portal.start_task_soon(_awaited, coro)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            message = f"NATS at {self.where} did not answer within {timeout:g} s"
            raise BoardIOError(message) from None

    async def retrying(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """``await attempt()`` until it succeeds, for up to `RETRY_FOR` seconds.

        Only what a leader election or a lost server causes is tried again (no answer, no
        responders, "temporarily unavailable", a connection being replaced); anything else,
        and the last failure once the time is up, is a `BoardIOError` naming *what* failed.
        The operations of a store's first `RETRY_FOR` seconds share them (a command's wait is
        bounded as a whole); each later one has its own.
        """
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._opened is None:
            self._opened = now
        first = self._opened + RETRY_FOR
        deadline = first if now < first else now + RETRY_FOR
        pause = 0.05
        while True:
            left = deadline - loop.time()
            try:
                return await asyncio.wait_for(attempt(), max(0.1, min(ATTEMPT, left)))
            except Exception as exc:  # nats-py raises many types; sorted by transient()
                if not transient(exc) or loop.time() + pause >= deadline:
                    detail = quiet(exc, self.address.servers[0])
                    raise NatsFailed(self.where, what, detail) from exc
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def _connect(self, creds: str | None, tls_ca: str | None, reconnect: bool) -> None:
        self.nc = await connect(self.address, creds, tls_ca)
        # Connected: a server that goes is replaced by another seed. A listener keeps trying for
        # as long as it runs; a command for about as long as its operation retries.
        attempts = -1 if reconnect else int(RETRY_FOR / RECONNECT_WAIT)
        self.nc.options["max_reconnect_attempts"] = attempts
        self.js = self.nc.jetstream(timeout=ATTEMPT)  # each JetStream request: one try
        info = await self.retrying("cannot open the board's stream", self._stream_info)
        self._created = str(info.created or info.config.name)
        self._last_at_open = int(info.state.last_seq or 0)

    async def _stream_info(self) -> Any:
        """The stream's info, creating the stream first when it does not exist."""
        from nats.js.api import StorageType, StreamConfig
        from nats.js.errors import BadRequestError, NotFoundError

        try:
            return await self.js.stream_info(self.stream)
        except NotFoundError:
            pass
        config = StreamConfig(
            name=self.stream,
            subjects=[self.subject],
            storage=StorageType.FILE,
            num_replicas=self.address.replicas,
        )
        try:
            return await self.js.add_stream(config)
        except BadRequestError as exc:
            if exc.err_code != 10058:  # 10058: the name is taken (another process, just now)
                raise
            return await self.js.stream_info(self.stream)

    # -- the log -------------------------------------------------------------------------

    def _append(self, payloads: Sequence[bytes], limit: OpenLimit | None) -> list[int]:
        items = [(_post_id(p), p) for p in payloads]
        if limit is None:
            return self.run(self._publish(items))
        if len(items) != 1:
            raise ValueError("a limit applies to one prompt at a time")
        return [self._publish_within(*items[0], limit)]

    def _publish_within(self, msg_id: str, payload: bytes, limit: OpenLimit) -> int:
        """Publish the prompt if the fold of every post before it admits it (see the module).

        The fold starts from the one the sender's last post kept (`OpenLimit.kept`).
        """
        from paneboard.state.fold import BoardState, prune
        from paneboard.state.panes import checkpoint

        try:
            state = checkpoint.load(limit.kept, self) or BoardState(keep_closed=False)
            with contextlib.closing(self.follow(state.position)) as follower:
                stored = self._fold_and_publish(msg_id, payload, limit, state, follower)
        except NatsFailed as exc:  # reading the board first is part of posting
            raise NatsFailed(exc.where, f"post {msg_id} was not acknowledged", exc.detail) from exc
        with contextlib.suppress(OSError):  # only the next post's speed depends on it
            limit.kept.parent.mkdir(mode=0o700, exist_ok=True)
            checkpoint.save(limit.kept, self, prune(state, time.time()))
        return stored

    def _fold_and_publish(
        self,
        msg_id: str,
        payload: bytes,
        limit: OpenLimit,
        state: BoardState,
        follower: NatsFollower,
    ) -> int:
        from paneboard.state.fold import fold
        from paneboard.state.limit import admit_folded

        while True:
            for batch in follower.batches():
                fold(batch, state)
            if msg_id in state.prompts:  # stored by an earlier try that seemed to fail
                return state.prompts[msg_id].position
            admit_folded(state, limit, time.time())
            expected = follower.position - 1
            stored = self.run(self._publish_one(msg_id, payload, expected))
            if stored is not None:
                return stored
            follower.catch_up()

    async def _publish(self, items: list[tuple[str, bytes]]) -> list[int]:
        if len(items) > 1:
            with contextlib.suppress(Exception):  # any failure: the one-by-one path below says it
                return await self._publish_batch(items)
        return [await self._published(msg_id, payload) for msg_id, payload in items]

    async def _published(self, msg_id: str, payload: bytes) -> int:
        stored = await self._publish_one(msg_id, payload)
        assert stored is not None  # only an expected position is ever refused
        return stored

    async def _publish_one(
        self, msg_id: str, payload: bytes, expected: int | None = None
    ) -> int | None:
        """The post's position once stored; None if *expected* is no longer the stream's last
        position (another post landed first)."""
        from nats.js.errors import BadRequestError

        headers = {"Nats-Msg-Id": msg_id}
        if expected is not None:
            headers["Nats-Expected-Last-Subject-Sequence"] = str(expected)

        async def attempt() -> int | None:
            try:
                ack = await self.js.publish(self.subject, payload, headers=headers)
            except BadRequestError as exc:
                if exc.err_code == WRONG_LAST_SEQUENCE and expected is not None:
                    return None
                raise
            return int(ack.seq)

        return await self.retrying(f"post {msg_id} was not acknowledged", attempt)

    async def _publish_batch(self, items: list[tuple[str, bytes]]) -> list[int]:
        """Each publish_async emits its message before returning (so the stream keeps their
        order), then every acknowledgement is awaited together. After a failure the batch is
        published again one by one: the message ids make the copies already stored no-ops."""
        pending = []
        for msg_id, data in items:
            headers = {"Nats-Msg-Id": msg_id}
            pending.append(await self.js.publish_async(self.subject, data, headers=headers))
        acks = await asyncio.wait_for(asyncio.gather(*pending), timeout=30)
        return [int(ack.seq) for ack in acks]

    def read_all(self) -> list[tuple[int, Post]]:
        with contextlib.closing(self.follow(0)) as follower:
            return [item for batch in follower.batches() for item in batch]

    def follow(self, position: int) -> NatsFollower:
        return NatsFollower(self, position)

    def has_posts(self) -> bool:
        return self._last_at_open > 0

    def identity(self) -> str:
        return f"{self.where}/{self.stream}@{self._created}"

    def accepts(self, position: int) -> bool:
        return position <= self.run(self.last_position()) + 1

    async def last_position(self) -> int:
        """The stream's last position, its last sequence (0 while it is empty)."""
        info = await self.retrying("cannot read the board's stream", self._info)
        return int(info.state.last_seq)

    async def _info(self) -> Any:
        return await self.js.stream_info(self.stream)

    def close(self) -> None:
        """Close the connection, then the event loop (whatever still runs on it is cancelled)."""
        if hasattr(self, "nc"):
            with contextlib.suppress(Exception):  # closing: nothing left to tell anyone
                self.run(self.nc.close(), timeout=3)
            del self.nc
        self._exits.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- for doctor ----------------------------------------------------------------------

    def stream_report(self) -> StreamReport:
        """The stream's replicas, cluster, leader and each replica's lag, as JetStream tells."""
        info = self.run(self.retrying("cannot read the board's stream", self._info))
        return stream_report(info, self.address.replicas)

    def health(self) -> Check:
        """The board's posts, and its stream's replicas, cluster, leader, lags."""
        import warnings

        from paneboard.state.health import Check, Level

        try:
            with warnings.catch_warnings(record=True) as damaged:
                warnings.simplefilter("always", DamagedRecord)
                count = len(self.read_all())
            report = self.stream_report()
        except PaneboardError as exc:
            return Check("fail", "board", str(exc))
        level: Level = "ok" if report.healthy and not damaged else "warn"
        skipped = f", {len(damaged)} damaged record(s) skipped" if damaged else ""
        found = f"{count} posts{skipped}; {report.text()}"
        return Check(level, "board", f"`{self.board}` on {shown(self.url)}: {found}")


async def _awaited(coro: Coroutine[Any, Any, T]) -> T:
    return await coro


def _post_id(payload: bytes) -> str:
    """The id of an encoded post (its ``Nats-Msg-Id``); `BadInput` for bytes that are no post."""
    try:
        return _ids.decode(payload).id
    except msgspec.DecodeError as exc:
        from paneboard.protocol.errors import BadInput

        raise BadInput(f"not an encoded post: {exc}") from exc
