"""Signing every post a store appends: the sender's key in the home seals its exact bytes.

Standard library only, because `paneboard post` seals through it (protocol/signing.py says
why, and what a seal is). A store holds a `Sealer` when the command's context gives it one;
a store without one appends the bytes as given (tests and benches writing raw records).
"""

from __future__ import annotations

from pathlib import Path

from paneboard.protocol.signing import seal, signed_part
from paneboard.state.keys import KeyPair, open_key

__all__ = ["Sealer", "sealed"]


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
