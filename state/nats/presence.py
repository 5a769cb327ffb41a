"""Presence on NATS: each listener's record in the key-value bucket ``PREFIX_presence``, which
JetStream expires after `PRESENCE_TTL` seconds unless the listener puts it again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paneboard.state.nats.store import NatsStore

__all__ = ["PRESENCE_TTL", "NatsPresence"]

PRESENCE_TTL = 30.0


class NatsPresence:
    """The presence records of one board's listeners, shared by every machine."""

    ttl = PRESENCE_TTL
    shared = True

    def __init__(self, store: NatsStore) -> None:
        self.store = store
        self.bucket = f"{store.address.prefix}_presence"
        self._prefix = f"{store.stream}."
        self._kv_handle: Any = None

    def put(self, agent: str, data: bytes) -> None:
        self.store.run(self._put(agent, data))

    def read(self) -> dict[str, bytes]:
        return self.store.run(self.store.retrying("cannot read presence", self._read))

    async def _kv(self) -> Any:
        if self._kv_handle is None:
            opened = await self.store.retrying("cannot open the presence bucket", self._open)
            self._kv_handle = opened
        return self._kv_handle

    async def _open(self) -> Any:
        from nats.js.api import KeyValueConfig
        from nats.js.errors import BucketNotFoundError

        js = self.store.js
        try:
            return await js.key_value(self.bucket)
        except BucketNotFoundError:
            replicas = self.store.address.replicas
            config = KeyValueConfig(bucket=self.bucket, ttl=PRESENCE_TTL, replicas=replicas)
            return await js.create_key_value(config)

    async def _put(self, agent: str, data: bytes) -> None:
        kv = await self._kv()

        async def attempt() -> None:
            await kv.put(f"{self._prefix}{agent}", data)

        await self.store.retrying("presence was not stored", attempt)

    async def _read(self) -> dict[str, bytes]:
        from nats.js.errors import NoKeysError

        kv = await self._kv()
        try:
            keys = await kv.keys()
        except NoKeysError:
            return {}
        from paneboard.protocol.names import is_name

        out = {}
        for key in keys:
            agent = key[len(self._prefix) :]
            if key.startswith(self._prefix) and is_name(agent):  # a key is input too
                entry = await kv.get(key)
                if entry.value:
                    out[agent] = entry.value
        return out
