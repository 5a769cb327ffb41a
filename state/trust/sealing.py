"""Signing every post a store appends: the sender's key in the home seals its exact bytes.

Standard library only, because `paneboard post` seals through it (protocol/signing.py says
why, and what a seal is). Both stores append through `SealingAppends`, the one place a post
is sealed: with the `Sealer` the store is opened with (`state.stores.open_store` asks every
caller for one, and a command's context gives its agent's), and as given with none (tests and
benches writing raw records).
"""

from __future__ import annotations

from pathlib import Path

from paneboard.protocol.signing import seal, signed_part
from paneboard.state.trust.keys import KeyPair, open_key

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from collections.abc import Sequence

    from paneboard.protocol.posts import Post
    from paneboard.state.limit import OpenLimit

__all__ = ["Sealer", "SealingAppends", "sealed"]


class Sealer:
    """Seals payloads with the keys of one home; *agent* is the sender of encoded payloads."""

    __slots__ = ("_keys", "agent", "home")

    def __init__(self, home: Path, agent: str) -> None:
        self.home, self.agent = home, agent
        self._keys: dict[str, KeyPair] = {}

    def key(self, agent: str) -> KeyPair:
        """*agent*'s key pair in the home, made on first use."""
        pair = self._keys.get(agent)
        if pair is None:
            pair = self._keys[agent] = open_key(self.home, agent)
        return pair

    def seal(self, payload: bytes, sender: str | None = None) -> bytes:
        """*payload* signed by *sender* (by default, the context's agent)."""
        if signed_part(payload) is not None:  # a record copied whole keeps its signer's seal
            return payload
        pair = self.key(self.agent if sender is None else sender)
        return seal(payload, pair.public, pair.sign)


def sealed(sealer: Sealer | None, payload: bytes, sender: str | None = None) -> bytes:
    """*payload* as a store appends it: sealed when the store has a sealer."""
    return payload if sealer is None else sealer.seal(payload, sender)


class SealingAppends:
    """A store's two appends, sealing each payload with the store's *sealer* before the store
    writes the bytes (its `_append`, which the limit, if any, guards)."""

    sealer: Sealer | None = None

    def append(self, posts: Sequence[Post], *, limit: OpenLimit | None = None) -> list[int]:
        from paneboard.protocol.posts import encode  # msgspec: `paneboard post` appends encoded

        return self._append([sealed(self.sealer, encode(p), p.sender) for p in posts], limit)

    def append_encoded(
        self, payloads: Sequence[bytes], *, limit: OpenLimit | None = None
    ) -> list[int]:
        return self._append([sealed(self.sealer, bytes(p)) for p in payloads], limit)

    def _append(self, payloads: Sequence[bytes], limit: OpenLimit | None) -> list[int]:
        raise NotImplementedError
