"""A board on NATS JetStream, for agents on several machines (`--store nats://HOST:PORT[/PREFIX]`).

One stream per board, ``PREFIX_BOARD`` with the subject ``PREFIX.BOARD.posts`` (a dot in
a board's name is written ``~``), file storage, created on first use. A post is published
with its id as ``Nats-Msg-Id``, so a retried publish is stored once, and `append` returns
only after JetStream acknowledged it. A position is the stream sequence. Followers tail
with an ordered consumer from their position, and wake the listener through a pipe, as
inotify does for the file log. Presence (for `who`) lives in the key-value bucket
``PREFIX_presence`` with a time-to-live.

nats-py is asynchronous; paneboard's store interface is not. A store runs its own event
loop in a daemon thread and waits on it: the commands stay simple, and the listener's own
event loop is never blocked for longer than a publish.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import ssl
import threading
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from paneboard.protocol.errors import BadInput, BoardIOError, DamagedRecord, PaneboardError
from paneboard.protocol.posts import Post, decode, encode

if TYPE_CHECKING:
    from paneboard.state.compact import Compacted

T = TypeVar("T")
PRESENCE_TTL = 30.0
TIMEOUT = 10.0


def parse_url(url: str) -> tuple[str, str]:
    """(server URL, subject prefix) of ``nats://HOST:PORT[/PREFIX]``."""
    scheme, _, rest = url.partition("://")
    host, _, prefix = rest.partition("/")
    return f"{scheme}://{host}", (prefix.strip("/") or "paneboard").replace(".", "~")


def shown(server: str) -> str:
    """*server* as messages show it: without any user or password in it."""
    scheme, _, rest = server.partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}"


class NatsStore:
    name = "nats"

    def __init__(
        self,
        url: str,
        board: str,
        *,
        creds: str | None = None,
        tls_ca: str | None = None,
        reconnect: bool = False,
    ) -> None:
        self.url = url
        self.server, self.prefix = parse_url(url)
        self.where = shown(self.server)
        token = board.replace(".", "~")
        self.stream = f"{self.prefix}_{token}"
        self.subject = f"{self.prefix}.{token}.posts"
        self.presence_bucket = f"{self.prefix}_presence"
        self.board = board
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="paneboard-nats", daemon=True
        )
        self._thread.start()
        self._created = ""
        try:
            self.run(self._connect(creds, tls_ca, reconnect), timeout=5)
        except BaseException:
            self.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        """Run *coro* on the store's event loop and wait for it."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise BoardIOError(
                f"NATS at {self.where} did not answer within {timeout:g} s"
            ) from None

    async def _connect(self, creds: str | None, tls_ca: str | None, reconnect: bool) -> None:
        import nats
        from nats.js.errors import NotFoundError

        # nats-py bounds its first connection only by a positive max_reconnect_attempts: two tries, then fail.
        options: dict[str, Any] = {
            "connect_timeout": 2,
            "allow_reconnect": True,
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": 0.25,
        }
        if creds:
            options["user_credentials"] = creds
        if tls_ca:
            options["tls"] = ssl.create_default_context(cafile=tls_ca)

        async def quiet(exc: Exception) -> None:
            pass  # nats-py's default prints every reconnect attempt; failures surface as errors where they matter

        try:
            self.nc = await nats.connect(self.server, error_cb=quiet, **options)
        except Exception as exc:  # nats-py raises several unrelated types for "cannot connect"
            raise BoardIOError(
                f"cannot reach NATS at {self.where}: {_quiet(exc, self.server)}"
            ) from exc
        if reconnect:
            self.nc.options[
                "max_reconnect_attempts"
            ] = -1  # connected: from now on, keep reconnecting
        else:
            self.nc.options["allow_reconnect"] = False
        self.js = self.nc.jetstream()
        try:
            info = await self.js.stream_info(self.stream)
        except NotFoundError:
            from nats.js.api import StorageType, StreamConfig

            info = await self.js.add_stream(
                StreamConfig(name=self.stream, subjects=[self.subject], storage=StorageType.FILE)
            )
        self._created = str(info.created or info.config.name)

    # -- the Store interface -------------------------------------------------------------

    presence_ttl: float | None = PRESENCE_TTL

    def append_payloads(
        self, payloads: Sequence[bytes], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        return self.append([decode(p) for p in payloads], guard=guard)

    def has_posts(self) -> bool:
        return True  # only reading the stream could tell

    def compact(self, now: float, archive: Path | None = None) -> Compacted:
        raise BadInput(
            "compact rewrites the file log; on NATS, bound the board's stream with JetStream's "
            "own limits (max age, max messages)"
        )

    def check(self) -> tuple[str, str]:
        try:
            count = len(self.read_all())
        except PaneboardError as exc:
            return "fail", str(exc)
        return "ok", f"`{self.board}` on {shown(self.url)}: {count} posts"

    def append(
        self, posts: Sequence[Post], *, guard: Callable[[], None] | None = None
    ) -> list[int]:
        if guard is not None:
            guard()
        return self.run(self._publish([(p.id, encode(p)) for p in posts]))

    async def _publish(self, items: list[tuple[str, bytes]]) -> list[int]:
        try:
            if len(items) == 1:
                msg_id, payload = items[0]
                return [
                    (
                        await self.js.publish(
                            self.subject, payload, timeout=5, headers={"Nats-Msg-Id": msg_id}
                        )
                    ).seq
                ]
            # A batch: each publish_async emits its message before returning (so the stream keeps
            # their order), then every acknowledgement is awaited together.
            pending = [
                await self.js.publish_async(self.subject, payload, headers={"Nats-Msg-Id": msg_id})
                for msg_id, payload in items
            ]
            acks = await asyncio.wait_for(asyncio.gather(*pending), timeout=30)
            return [ack.seq for ack in acks]
        except Exception as exc:  # not acknowledged, whatever the cause: not posted
            raise BoardIOError(
                f"NATS at {self.where} did not store the post: {_quiet(exc, self.server)}"
            ) from exc

    def read_all(self) -> list[tuple[int, Post]]:
        follower = self.follow(0)
        try:
            return [item for batch in follower.batches() for item in batch]
        finally:
            follower.close()

    def follow(self, position: int) -> NatsFollower:
        return NatsFollower(self, position)

    def identity(self) -> str:
        return f"{self.where}/{self.stream}@{self._created}"

    def accepts(self, position: int) -> bool:
        return position <= self.run(self._last_seq()) + 1

    async def _last_seq(self) -> int:
        info = await self.js.stream_info(self.stream)
        return int(info.state.last_seq)

    def close(self) -> None:
        if not self._loop.is_closed():
            if hasattr(self, "nc"):
                with contextlib.suppress(Exception):  # closing: nothing left to tell anyone
                    self.run(self.nc.close(), timeout=3)
            with contextlib.suppress(Exception):
                self.run(_cancel_the_rest(), timeout=3)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=3)
            self._loop.close()

    # -- presence ------------------------------------------------------------------------

    def put_presence(self, agent: str, data: bytes) -> None:
        self.run(self._put_presence(agent, data))

    async def _kv(self) -> Any:
        from nats.js.errors import BucketNotFoundError

        try:
            return await self.js.key_value(self.presence_bucket)
        except BucketNotFoundError:
            from nats.js.api import KeyValueConfig

            return await self.js.create_key_value(
                KeyValueConfig(bucket=self.presence_bucket, ttl=PRESENCE_TTL)
            )

    async def _put_presence(self, agent: str, data: bytes) -> None:
        kv = await self._kv()
        await kv.put(f"{self.stream}.{agent}", data)

    def presences(self) -> dict[str, bytes]:
        """agent -> presence record, for the listeners seen within the time-to-live."""
        return self.run(self._presences())

    async def _presences(self) -> dict[str, bytes]:
        from nats.js.errors import NoKeysError

        kv = await self._kv()
        try:
            keys = await kv.keys()
        except NoKeysError:
            return {}
        out = {}
        for key in keys:
            if key.startswith(f"{self.stream}."):
                entry = await kv.get(key)
                if entry.value:
                    out[key[len(self.stream) + 1 :]] = entry.value
        return out


def _quiet(exc: BaseException, server: str) -> str:
    """An exception's text, with the server's credentials (if the URL has any) taken out."""
    text = str(exc) or type(exc).__name__
    secret = server.partition("://")[2].rpartition("@")[0]
    return text.replace(secret, "***") if secret else text


async def _cancel_the_rest() -> None:
    """Cancel every other task on this loop and wait for them (a timed-out call leaves one behind)."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class NatsFollower:
    """An ordered consumer from a stream sequence; new messages wake `wait_changed` through a pipe."""

    def __init__(self, store: NatsStore, position: int) -> None:
        self.store = store
        self._position = max(position, 1)
        self.replaced = False
        self._buffer: collections.deque[tuple[int, bytes]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._caught_up = store.run(self._subscribe())

    @property
    def offset(self) -> int:
        return self._position

    async def _subscribe(self) -> int:
        from nats.js.api import ConsumerConfig, DeliverPolicy

        last = await self.store._last_seq()
        self._target, self._reached = last, asyncio.Event()
        config = ConsumerConfig(
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self._position
        )
        self._sub = await self.store.js.subscribe(
            self.store.subject, cb=self._arrived, ordered_consumer=True, config=config
        )
        return last

    async def _arrived(self, msg: Any) -> None:
        seq = int(msg.metadata.sequence.stream)
        self._buffer.append((seq, bytes(msg.data)))
        if seq >= self._target:
            self._reached.set()
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:
            pass  # a wake-up is already pending

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        if self._caught_up >= self._position:
            self._wait_for(
                self._caught_up
            )  # the first read returns everything stored when it began
        self._caught_up = 0
        batch: list[tuple[int, Post]] = []
        while self._buffer:
            seq, data = self._buffer.popleft()
            if seq < self._position:
                continue  # an ordered consumer's redelivery after a reset
            self._position = seq + 1
            try:
                batch.append((seq, decode(data)))
            except msgspec.DecodeError:
                import warnings

                warnings.warn(DamagedRecord(f"{self.store.stream}", seq, seq + 1), stacklevel=2)
            if len(batch) >= 5000:
                yield batch
                batch = []
        if batch:
            yield batch

    def _wait_for(self, seq: int) -> None:
        """Block until the consumer has delivered everything up to *seq* (set by `_arrived`)."""
        self.store.run(self._reached.wait(), timeout=60)

    async def wait_changed(self) -> None:
        await anyio.wait_readable(self._wake_r)
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        if hasattr(self, "_sub"):
            with contextlib.suppress(Exception):  # the connection may be gone already
                self.store.run(self._sub.unsubscribe(), timeout=3)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
