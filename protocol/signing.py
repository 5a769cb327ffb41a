"""Signed posts on the wire: the signature covers the exact bytes written.

A signed post is the post's own msgpack map (``posts.encode``, or ``wire.pack_post`` in
`paneboard post`: the same bytes) with two entries added last, in this order::

    key: bin 32   the sender's Ed25519 public key (the whole key, not a fingerprint)
    sig: bin 64   Ed25519 over DOMAIN + the payload's bytes up to the signature's own

The map header counts both. The payload ends with a fixed 108-byte trailer::

    a3 "key" c4 20 <32 bytes of key>  a3 "sig" c4 40 <64 bytes of signature>

The signed message is ``DOMAIN + payload[:-64]``: the header, every field, the ``key``
entry and the ``sig`` entry's own six bytes of name and length, exactly as written. A
verifier takes the last 108 bytes of the raw record and never re-encodes decoded values,
so a field added later (it goes before ``key``: the writer adds the trailer to whatever
map it encoded) is covered, and an older verifier checks it too. The same payload goes to
the file log and to NATS.

Why not sign the map without ``sig`` and decrement the header when verifying: a map of 15
entries has a one-byte header and one of 16 a three-byte one, so the verifier would have
to re-encode the header; here nothing is re-encoded. DOMAIN keeps a post's signature from
meaning anything outside paneboard, and any other use of a key from meaning a post.

Readers of every version read a signed post: ``key`` and ``sig`` are fields they do not
know and skip (msgspec's default), so today's decoder yields the same post it would from
the unsigned bytes. ``key`` and ``sig`` are reserved: no post kind has a field of either
name. An unsigned record (every log written before signing) has neither entry.

**The key goes on the board with every post.** Each signed post carries its sender's
whole public key, so any one post can be checked alone: by a listener that starts from a
checkpoint, after ``compact``, by a NATS reader that starts mid-stream, with no earlier
post to find. The first post an agent makes on a board thus puts its key there. It costs
39 bytes a post beyond the 70 of the signature.

**What a post is** (``verdict``), for a reader holding *pinned*, the fingerprint this
home pinned for the post's sender on this board (None when it has none yet; the caller
then pins the post's key, as ssh's known_hosts does, and the post is verified):

- *verified*: the trailer is there, the signature checks against the key in it, and that
  key's fingerprint is the pinned one (or nothing is pinned yet);
- *unsigned*: the map has neither a ``key`` nor a ``sig`` entry;
- *forged*: anything else: a bad signature, a key other than the pinned one, or a ``key``
  or ``sig`` entry that is not the exact trailer (a bent signature is not mistaken for an
  old unsigned post).

A signed post with both entries cut off, header and all, is an unsigned post: that is why
an unsigned post starts no turn unless the recipient's policy says so, and moves no stage.

A record that is not msgpack at all is damaged (``msgspec.DecodeError``), before any
verdict. What a signature does not say: that the post's ``board`` is the board it was read
from (record checks compare it), or that it was not copied (posts are deduplicated by id).

**What it costs, and who pays.** `post` seals with the standard library's integers
(``protocol.ed25519``) and never imports ``cryptography``. A reader recognises the trailer
with two slice compares; it verifies (``cryptography``, tens of microseconds) only a post it
acts on: a prompt before its door takes it, a closing post or receipt before it moves the
stage of a prompt being delivered, shown or waited on. A prompt the delivered-key log
already holds needs no verdict at all, so a cold catch-up of a long board verifies the few
prompts it delivers and their closing posts, not its history.

Fingerprints are what people compare and type: the SHA-256 of the public key, its first
16 bytes (128 bits: finding another key with the same fingerprint is out of reach) in
lowercase base32 without padding, 26 characters. The composed text shows a prefix.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal, TypeAlias

    Verdict: TypeAlias = Literal["verified", "unsigned", "forged"]
    Verify: TypeAlias = Callable[[bytes, bytes, bytes], bool]  # (key, signature, message)
    Sign: TypeAlias = Callable[[bytes], bytes]  # message -> 64-byte signature

DOMAIN = b"paneboard post signature v1\n"
KEY_SIZE = 32
SIG_SIZE = 64
_KEY_ENTRY = b"\xa3key\xc4\x20"
_SIG_ENTRY = b"\xa3sig\xc4\x40"
TRAILER = len(_KEY_ENTRY) + KEY_SIZE + len(_SIG_ENTRY) + SIG_SIZE  # 108
FINGERPRINT_CHARS = 26
_FINGERPRINT_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz234567")

VERIFIED: Verdict = "verified"
UNSIGNED: Verdict = "unsigned"
FORGED: Verdict = "forged"


class Signed:
    """What a signed payload's trailer says: the key, the signature, the signed message."""

    __slots__ = ("key", "message", "sig")

    def __init__(self, key: bytes, sig: bytes, message: bytes) -> None:
        self.key, self.sig, self.message = key, sig, message


def fingerprint(public_key: bytes) -> str:
    """The printable fingerprint of a 32-byte public key (26 base32 characters)."""
    import base64  # a reader's cost; `post` only seals
    import hashlib

    digest = hashlib.sha256(public_key).digest()[:16]
    return base64.b32encode(digest).decode().rstrip("=").lower()


def is_fingerprint(text: str) -> bool:
    return len(text) == FINGERPRINT_CHARS and _FINGERPRINT_ALPHABET.issuperset(text)


def seal(payload: bytes, public_key: bytes, sign: Sign) -> bytes:
    """*payload* (an unsigned post's msgpack map) with its ``key`` and ``sig`` entries added."""
    if len(public_key) != KEY_SIZE:
        raise ValueError(f"an Ed25519 public key is {KEY_SIZE} bytes, not {len(public_key)}")
    if signed_part(payload) is not None:
        raise ValueError("the payload is signed already")
    count, start = _map_header(payload)
    body = _header(count + 2) + payload[start:] + _KEY_ENTRY + public_key + _SIG_ENTRY
    signature = sign(DOMAIN + body)
    if len(signature) != SIG_SIZE:
        raise ValueError(f"an Ed25519 signature is {SIG_SIZE} bytes, not {len(signature)}")
    return body + signature


def signed_part(payload: bytes | memoryview) -> Signed | None:
    """The trailer of a signed payload, or None when the payload does not end with one."""
    tail = bytes(payload[-TRAILER:])
    if len(payload) <= TRAILER or not (
        tail.startswith(_KEY_ENTRY) and tail[6 + KEY_SIZE : 12 + KEY_SIZE] == _SIG_ENTRY
    ):
        return None
    return Signed(
        key=tail[6 : 6 + KEY_SIZE],
        sig=tail[-SIG_SIZE:],
        message=DOMAIN + bytes(payload[:-SIG_SIZE]),
    )


def verdict(payload: bytes | memoryview, pinned: str | None, verify: Verify) -> Verdict:
    """Verified, unsigned or forged (see the module's docstring); raises on a damaged record."""
    signed = signed_part(payload)
    if signed is None:
        return FORGED if _names_a_signature(payload) else UNSIGNED
    if pinned is not None and fingerprint(signed.key) != pinned:
        return FORGED
    if not verify(signed.key, signed.sig, signed.message):
        return FORGED
    return VERIFIED


def _names_a_signature(payload: bytes | memoryview) -> bool:
    """Whether the top-level map has a ``key`` or ``sig`` entry (not as the trailer)."""
    import msgspec  # a verifier's cost; `post` only seals

    entries = msgspec.msgpack.decode(payload, type=dict[str, msgspec.Raw])
    return "key" in entries or "sig" in entries


def _map_header(payload: bytes) -> tuple[int, int]:
    """(entries, header size) of the map *payload* starts with."""
    first = payload[0] if payload else 0
    if 0x80 <= first <= 0x8F:
        return first & 0x0F, 1
    if first == 0xDE and len(payload) >= 3:
        return int.from_bytes(payload[1:3], "big"), 3
    if first == 0xDF and len(payload) >= 5:
        return int.from_bytes(payload[1:5], "big"), 5
    raise ValueError("a post's payload is a msgpack map")


def _header(count: int) -> bytes:
    if count < 16:
        return bytes([0x80 | count])
    if count < 2**16:
        return b"\xde" + count.to_bytes(2, "big")
    return b"\xdf" + count.to_bytes(4, "big")
