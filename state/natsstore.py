"""A board on NATS JetStream, for agents on several machines (`--store nats://…`, see `natsurl`).

One stream per board, ``PREFIX_BOARD`` with the subject ``PREFIX.BOARD.posts`` (a dot in
a board's name is written ``~``), file storage, created on first use with the address's
``replicas``; a stream that exists already is used as it is, whatever its settings
(`stream_report` tells them). A post is published with its id as ``Nats-Msg-Id`` and
`append` returns only after JetStream acknowledged it. A position is the stream sequence.
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

nats-py is asynchronous; paneboard's store interface is not. A store runs its own event
loop in a daemon thread and waits on it: the commands stay simple, and the listener's own
event loop is never blocked for longer than a publish (seconds, through an election: its
receipts wait, as its deliveries do, one at a time).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import ssl
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import anyio
import msgspec
from nats import errors as nats_errors

from paneboard.protocol.errors import BadInput, BoardIOError, DamagedRecord, PaneboardError
from paneboard.protocol.posts import Post, damage_reason, decode, encode
from paneboard.state.natsurl import parse_url, shown

if TYPE_CHECKING:
    from paneboard.state.compact import Compacted

T = TypeVar("T")
PRESENCE_TTL = 30.0
RETRY_FOR = 15.0  # how long an operation keeps trying through a leader election
ATTEMPT = 2.0  # how long one try waits for JetStream's answer
TIMEOUT = RETRY_FOR + ATTEMPT + 3  # a caller's wait: always longer than the retries
RECONNECT_WAIT = 0.25
CONNECT_WITHIN = 5.0  # the first connection, every seed tried


class Peer(NamedTuple):
    name: str
    current: bool
    offline: bool
    lag: int


class StreamReport(NamedTuple):
    """What JetStream says of a board's stream, for `doctor`."""

    stream: str
    replicas: int  # as the stream was created
    wanted: int  # as the address asks
    cluster: str  # "" on a single server
    leader: str
    peers: tuple[Peer, ...]  # the replicas other than the leader
    messages: int

    @property
    def healthy(self) -> bool:
        peers_ok = all(p.current and not p.offline for p in self.peers)
        return self.replicas >= self.wanted and peers_ok and (self.leader != "" or not self.cluster)

    def text(self) -> str:
        asked = f" (the address asks for {self.wanted})" if self.replicas != self.wanted else ""
        where = "one server"
        if self.cluster:
            where = f"cluster `{self.cluster}`, leader {self.leader or 'none'}"
        peers = "".join(f"; {p.name} {_peer_state(p)}" for p in self.peers)
        return f"{self.stream}: {self.replicas} replica(s){asked}, {where}{peers}"


def _peer_state(peer: Peer) -> str:
    if peer.offline:
        return "offline"
    return f"lag {peer.lag}" + ("" if peer.current else " (catching up)")


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
        self.address = parse_url(url)
        self.where = self.address.shown
        token = board.replace(".", "~")
        self.stream = f"{self.address.prefix}_{token}"
        self.subject = f"{self.address.prefix}.{token}.posts"
        self.presence_bucket = f"{self.address.prefix}_presence"
        self.board = board
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever,
            name="paneboard-nats",
            daemon=True,
        )
        self._thread.start()
        self._created = ""
        self._kv_handle: Any = None
        self._opened: float | None = None  # when the first operation began (loop time)
        try:
            self.run(self._connect(creds, tls_ca, reconnect))
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
            except Exception as exc:  # nats-py raises many types; sorted by _transient
                if not _transient(exc) or loop.time() + pause >= deadline:
                    detail = _quiet(exc, self.address.servers[0])
                    raise BoardIOError(f"NATS at {self.where}: {what}: {detail}") from exc
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def _connect(self, creds: str | None, tls_ca: str | None, reconnect: bool) -> None:
        # nats-py bounds its first connection only by a positive max_reconnect_attempts:
        # every seed is tried twice, then the command fails.
        options: dict[str, Any] = {
            "connect_timeout": 2,
            "allow_reconnect": True,
            "max_reconnect_attempts": 1,
            "reconnect_time_wait": RECONNECT_WAIT,
        }
        if creds:
            options["user_credentials"] = _check_creds(creds)
        tls = self.address.servers[0].startswith("tls://") or bool(tls_ca)
        if tls:
            options["tls"] = _tls_context(tls_ca)

        seen: list[Exception] = []

        async def quiet(exc: Exception) -> None:
            seen.append(exc)  # nats-py's default prints every reconnect; failures surface below

        servers = list(self.address.servers)
        client = _tls_only_client() if tls else _client()
        try:
            # Bounded here: nats-py may keep trying a server whose TLS handshake fails.
            connecting = client.connect(servers, error_cb=quiet, **options)
            await asyncio.wait_for(connecting, CONNECT_WITHIN)
            self.nc = client
        except Exception as exc:  # nats-py raises several unrelated types for "cannot connect"
            detail = _quiet(exc, self.address.servers[0])
            if isinstance(exc, TimeoutError):
                detail = f"no answer within {CONNECT_WITHIN:g} s"
            if seen and isinstance(exc, TimeoutError | nats_errors.NoServersError):
                detail = _quiet(_why(seen), self.address.servers[0])
            if refused := [str(e) for e in seen if isinstance(e, NotTls)]:
                detail = refused[-1]  # the reason, whatever other seeds answered
            raise BoardIOError(f"cannot reach NATS at {self.where}: {detail}") from exc
        # Connected: a server that goes is replaced by another seed. A listener keeps trying for
        # as long as it runs; a command for about as long as its operation retries.
        attempts = -1 if reconnect else int(RETRY_FOR / RECONNECT_WAIT)
        self.nc.options["max_reconnect_attempts"] = attempts
        self.js = self.nc.jetstream(timeout=ATTEMPT)  # each JetStream request: one try
        info = await self.retrying("cannot open the board's stream", self._stream_info)
        self._created = str(info.created or info.config.name)

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
        """For `doctor`: the board's posts, and its stream's replicas, cluster, leader, lags."""
        import warnings

        try:
            with warnings.catch_warnings(record=True) as damaged:
                warnings.simplefilter("always", DamagedRecord)
                count = len(self.read_all())
            report = self.stream_report()
        except PaneboardError as exc:
            return "fail", str(exc)
        level = "ok" if report.healthy and not damaged else "warn"
        skipped = f", {len(damaged)} damaged record(s) skipped" if damaged else ""
        found = f"{count} posts{skipped}; {report.text()}"
        return level, f"`{self.board}` on {shown(self.url)}: {found}"

    def append(
        self,
        posts: Sequence[Post],
        *,
        guard: Callable[[], None] | None = None,
    ) -> list[int]:
        if guard is not None:
            guard()
        return self.run(self._publish([(p.id, encode(p)) for p in posts]))

    async def _publish(self, items: list[tuple[str, bytes]]) -> list[int]:
        if len(items) > 1:
            with contextlib.suppress(Exception):  # any failure: the one-by-one path below says it
                return await self._publish_batch(items)
        return [await self._publish_one(msg_id, payload) for msg_id, payload in items]

    async def _publish_one(self, msg_id: str, payload: bytes) -> int:
        headers = {"Nats-Msg-Id": msg_id}

        async def attempt() -> int:
            ack = await self.js.publish(self.subject, payload, headers=headers)
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
        info = await self.retrying("cannot read the board's stream", self._info)
        return int(info.state.last_seq)

    async def _info(self) -> Any:
        return await self.js.stream_info(self.stream)

    def stream_report(self) -> StreamReport:
        """The stream's replicas, cluster, leader and each replica's lag, as JetStream tells."""
        info = self.run(self.retrying("cannot read the board's stream", self._info))
        cluster = info.cluster
        peers = tuple(
            Peer(p.name or "?", bool(p.current), bool(p.offline), int(p.lag or 0))
            for p in (cluster.replicas or [] if cluster else [])
        )
        return StreamReport(
            stream=self.stream,
            replicas=int(info.config.num_replicas or 1),
            wanted=self.address.replicas,
            cluster=(cluster.name or "") if cluster else "",
            leader=(cluster.leader or "") if cluster else "",
            peers=peers,
            messages=int(info.state.messages),
        )

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
        if self._kv_handle is None:
            self._kv_handle = await self.retrying("cannot open the presence bucket", self._open_kv)
        return self._kv_handle

    async def _open_kv(self) -> Any:
        from nats.js.api import KeyValueConfig
        from nats.js.errors import BucketNotFoundError

        try:
            return await self.js.key_value(self.presence_bucket)
        except BucketNotFoundError:
            replicas = self.address.replicas
            config = KeyValueConfig(
                bucket=self.presence_bucket,
                ttl=PRESENCE_TTL,
                replicas=replicas,
            )
            return await self.js.create_key_value(config)

    async def _put_presence(self, agent: str, data: bytes) -> None:
        kv = await self._kv()

        async def attempt() -> None:
            await kv.put(f"{self.stream}.{agent}", data)

        await self.retrying("presence was not stored", attempt)

    def presences(self) -> dict[str, bytes]:
        """agent -> presence record, for the listeners seen within the time-to-live."""
        return self.run(self.retrying("cannot read presence", self._presences))

    async def _presences(self) -> dict[str, bytes]:
        from nats.js.errors import NoKeysError

        kv = await self._kv()
        try:
            keys = await kv.keys()
        except NoKeysError:
            return {}
        from paneboard.protocol.names import is_name

        out = {}
        for key in keys:
            agent = key[len(self.stream) + 1 :]
            if key.startswith(f"{self.stream}.") and is_name(agent):  # a key is input too
                entry = await kv.get(key)
                if entry.value:
                    out[agent] = entry.value
        return out


class NotTls(nats_errors.Error):  # a nats-py Error: on a reconnection, nats-py tries the next
    """A server that did not start TLS where the address or a CA requires it."""

    def __str__(self) -> str:
        return (
            "the server did not start TLS, which tls:// and --nats-tls-ca require; "
            "nothing was sent to it"
        )


def _check_creds(path: str) -> str:
    """*path* if it reads as a NATS credentials file (a user JWT and its seed); `BadInput` if not.

    nats-py reads it again as it connects; a file it cannot use fails here, in one line.
    """
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as exc:
        raise BadInput(f"--nats-creds {path}: {exc.strerror}") from exc
    if "BEGIN NATS USER JWT" not in text or "BEGIN USER NKEY SEED" not in text:
        raise BadInput(f"--nats-creds {path} is not a NATS credentials file (a user JWT and seed)")
    return path


def _why(seen: list[Exception]) -> Exception:
    """The failure that says why a connection failed: the server's word over a reset socket.

    A server that refuses a client (a wrong password) says so, then closes: the reset may
    reach nats-py after the refusal.
    """
    said = [e for e in seen if isinstance(e, nats_errors.Error)]
    return (said or seen)[-1]


def _client() -> Any:
    from nats.aio.client import Client

    return Client()


def _tls_only_client() -> Any:
    """A nats-py client that refuses to send CONNECT (and its credentials) over plaintext.

    nats-py starts TLS only when the server's INFO asks for it, and builds CONNECT right before
    sending it, on every connection and reconnection: so the check goes there.
    """
    from nats.aio.client import Client

    class TlsOnly(Client):
        def _connect_command(self) -> bytes:
            writer = getattr(self._transport, "_io_writer", None)
            if writer is None or writer.get_extra_info("ssl_object") is None:
                raise NotTls
            return super()._connect_command()

    return TlsOnly()


def _transient(exc: BaseException) -> bool:
    """Whether *exc* is what a leader election or a server going away causes: worth a retry."""
    from nats import errors
    from nats.js.errors import NoStreamResponseError, ServiceUnavailableError

    transient = (
        TimeoutError,  # nats-py's TimeoutError is asyncio's, and so the built-in
        errors.NoRespondersError,
        NoStreamResponseError,
        ServiceUnavailableError,
        errors.StaleConnectionError,
        errors.ConnectionReconnectingError,
        errors.OutboundBufferLimitError,
    )
    return isinstance(exc, transient)


def _quiet(exc: BaseException, server: str) -> str:
    """An exception's text, with the server's credentials (if the URL has any) taken out."""
    text = str(exc) or type(exc).__name__
    secret = server.partition("://")[2].rpartition("@")[0]
    return text.replace(secret, "***") if secret else text


async def _cancel_the_rest() -> None:
    """Cancel every other task on this loop and wait for them (a timed-out call leaves one)."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class NatsFollower:
    """An ordered consumer from a stream sequence; new messages wake `wait_changed` (a pipe)."""

    def __init__(self, store: NatsStore, position: int) -> None:
        self.store = store
        self._position = max(position, 1)
        self.replaced = False
        self.damaged = 0  # messages skipped because they are not posts
        self._buffer: collections.deque[tuple[int, bytes]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._reached = asyncio.Event()
        try:
            self._caught_up = store.run(self._subscribe())
        except BaseException:
            self.close()
            raise

    @property
    def offset(self) -> int:
        return self._position

    async def _subscribe(self) -> int:
        from paneboard.state.natstail import OrderedTail

        last = await self.store._last_seq()
        self._target = last
        store = self.store
        where = (store.stream, store.subject)
        self._tail = OrderedTail(store.js, where, self._position, self._arrived)
        await store.retrying("cannot follow the board's stream", self._tail.open)
        return last

    def _arrived(self, seq: int, data: bytes) -> None:
        self._buffer.append((seq, data))
        if seq >= self._target:
            self._reached.set()
        try:
            os.write(self._wake_w, b"!")
        except BlockingIOError:
            pass  # a wake-up is already pending

    def batches(self) -> Iterator[list[tuple[int, Post]]]:
        if self._caught_up >= self._position:
            # The first read returns everything stored when it began.
            self._wait_for(self._caught_up)
        self._caught_up = 0
        batch: list[tuple[int, Post]] = []
        while self._buffer:
            seq, data = self._buffer.popleft()
            if seq < self._position:
                continue  # read already (a follower never goes back)
            self._position = seq + 1
            try:
                batch.append((seq, decode(data)))
            except msgspec.DecodeError as exc:  # the only error `decode` raises
                import warnings

                self.damaged += 1
                damage = DamagedRecord(self.store.stream, seq, seq + 1, damage_reason(exc))
                warnings.warn(damage, stacklevel=2)
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
        if hasattr(self, "_tail"):
            with contextlib.suppress(Exception):  # the connection may be gone already
                self.store.run(self._tail.close(), timeout=3)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass


def _tls_context(ca: str | None) -> ssl.SSLContext:
    """A client context checking the server against *ca* (None: the system's CAs)."""
    try:
        return ssl.create_default_context(cafile=ca)
    except ssl.SSLError:
        raise BadInput(f"--nats-tls-ca {ca} holds no CA certificate in PEM form") from None
    except OSError as exc:
        raise BadInput(f"--nats-tls-ca {ca}: {exc.strerror}") from None
