"""Signed posts on the wire: the signature covers the exact bytes written, and the board.

A signed post is the post's own msgpack map (``posts.encode``, or ``wire.pack_post`` in
`paneboard post`: the same bytes) with two entries added last, in this order::

    key:  bin 32   the sender's Ed25519 public key (the whole key, not a fingerprint)
    sig2: bin 64   Ed25519 over the board's domain + the payload's bytes up to the signature's own

The map header counts both. The payload ends with a fixed 109-byte trailer::

    a3 "key" c4 20 <32 bytes of key>  a4 "sig2" c4 40 <64 bytes of signature>

The signed message is ``domain(board) + payload[:-64]``: ``paneboard post signature v2``, a
newline, ``board `` and the board's name, a newline (a name holds no newline), then the
header, every field, the ``key`` entry and the ``sig2`` entry's own seven bytes of name and
length, exactly as written. The writer names the board its payload's ``board`` field names
(`board_of`, read without msgspec); a reader checks against the board it reads, never the
post's own field. A verifier takes the last 109 bytes of the raw record and never
re-encodes decoded values, so a field added later (it goes before ``key``: the writer adds
the trailer to whatever map it encoded) is covered, and an older verifier checks it too.
The same payload goes to the file log and to NATS.

**Posts signed before signatures named the board (version 1).** Then the trailer's last
entry was ``a3 "sig" c4 40`` (108 bytes) and the message ``paneboard post signature v1``
and a newline, then ``payload[:-64]``: no board. Readers still verify those, so a board
written then keeps its posts' verdicts. What that leaves: a version-1 signature does not
name a board, but it covers the post's ``board`` field, and a record whose ``board`` is not
the board read is damaged before any verdict (state/filelog/log.py, state/nats/follow.py); so a
version-1 post copied to another board is skipped there, as any damaged record, and only a
reader that skipped that check would take it. A version-2 post cannot be passed off as
version 1 (the message differs, so its signature does not check as one), and every post
written now is version 2. A reader from before version 2 reads a version-2 post as forged
(a ``key`` entry without its trailer): every machine of a board runs the same version.

Why not sign the map without ``sig2`` and decrement the header when verifying: a map of 15
entries has a one-byte header and one of 16 a three-byte one, so the verifier would have
to re-encode the header; here nothing is re-encoded. The domain keeps a post's signature
from meaning anything outside paneboard, or on another board, and any other use of a key
from meaning a post.

Readers of every version read a signed post: ``key`` and ``sig2`` are fields they do not
know and skip (msgspec's default), so today's decoder yields the same post it would from
the unsigned bytes. ``key``, ``sig`` and ``sig2`` are reserved: no post kind has a field of
any of those names. An unsigned record (every log written before signing) has none.

**The key goes on the board with every post.** Each signed post carries its sender's
whole public key, so any one post can be checked alone: by a listener that starts from a
checkpoint, after ``compact``, by a NATS reader that starts mid-stream, with no earlier
post to find. The first post an agent makes on a board thus puts its key there. It costs
39 bytes a post beyond the 71 of the signature.

**What a post is** (``verdict``), for a reader holding *pinned*, the fingerprint this
home pinned for the post's sender on this board (None when it has none yet; the caller
then pins the post's key, as ssh's known_hosts does, and the post is verified):

- *verified*: the trailer is there, the signature checks against the key in it, and that
  key's fingerprint is the pinned one (or nothing is pinned yet);
- *unsigned*: the map has no ``key``, ``sig`` or ``sig2`` entry;
- *forged*: anything else: a bad signature (over another board's domain, say), a key other
  than the pinned one, or a ``key``, ``sig`` or ``sig2`` entry that is not the exact trailer
  (a bent signature is not mistaken for an old unsigned post).

A signed post with both entries cut off, header and all, is an unsigned post: that is why
an unsigned post starts no turn unless the recipient's policy says so, and moves no stage.

A record that is not msgpack at all is damaged (``msgspec.DecodeError``), before any
verdict. What a signature does not say: that the post was not copied on its own board. A
pane remembers every prompt id it has seen closed or delivered (state/fold.py,
state/panes/delivered.py), so a copy is never new to it.

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

DOMAIN_V1 = b"paneboard post signature v1\n"  # version 1: no board (see the docstring)
DOMAIN_V2 = b"paneboard post signature v2\nboard "  # then the board's name and a newline
KEY_SIZE = 32
SIG_SIZE = 64
_KEY_ENTRY = b"\xa3key\xc4\x20"
_SIG_ENTRY = b"\xa4sig2\xc4\x40"
_SIG_ENTRY_V1 = b"\xa3sig\xc4\x40"
TRAILER = len(_KEY_ENTRY) + KEY_SIZE + len(_SIG_ENTRY) + SIG_SIZE  # 109
TRAILER_V1 = TRAILER - 1  # 108
FINGERPRINT_CHARS = 26
_FINGERPRINT_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz234567")

VERIFIED: Verdict = "verified"
UNSIGNED: Verdict = "unsigned"
FORGED: Verdict = "forged"


class Signed:
    """What a signed payload's trailer says: the key, the signature, the bytes it signs, and
    the trailer's version (1: before signatures named the board; 2)."""

    __slots__ = ("key", "sig", "signed", "version")

    def __init__(self, key: bytes, sig: bytes, signed: bytes, version: int) -> None:
        self.key, self.sig, self.signed, self.version = key, sig, signed, version

    def message(self, board: str) -> bytes:
        """The message the signature must check over, for a post read on *board*."""
        if self.version == 1:
            return DOMAIN_V1 + self.signed
        return domain(board) + self.signed


def domain(board: str) -> bytes:
    """What a signature names before the post's bytes: paneboard, the version, the board."""
    return DOMAIN_V2 + board.encode() + b"\n"


def fingerprint(public_key: bytes) -> str:
    """The printable fingerprint of a 32-byte public key (26 base32 characters)."""
    import base64  # a reader's cost; `post` only seals
    import hashlib

    digest = hashlib.sha256(public_key).digest()[:16]
    return base64.b32encode(digest).decode().rstrip("=").lower()


def is_fingerprint(text: str) -> bool:
    return len(text) == FINGERPRINT_CHARS and _FINGERPRINT_ALPHABET.issuperset(text)


def seal(payload: bytes, public_key: bytes, sign: Sign) -> bytes:
    """*payload* (an unsigned post's msgpack map) with its ``key`` and ``sig2`` entries added,
    signed over the domain of the board its ``board`` field names."""
    if len(public_key) != KEY_SIZE:
        raise ValueError(f"an Ed25519 public key is {KEY_SIZE} bytes, not {len(public_key)}")
    if signed_part(payload) is not None:
        raise ValueError("the payload is signed already")
    count, start = _map_header(payload)
    board = board_of(payload)
    body = _header(count + 2) + payload[start:] + _KEY_ENTRY + public_key + _SIG_ENTRY
    signature = sign(domain(board) + body)
    if len(signature) != SIG_SIZE:
        raise ValueError(f"an Ed25519 signature is {SIG_SIZE} bytes, not {len(signature)}")
    return body + signature


def signed_part(payload: bytes | memoryview) -> Signed | None:
    """The trailer of a signed payload (either version), or None when it ends with neither."""
    size = len(payload)
    tail = bytes(payload[-TRAILER:])
    if size > TRAILER and tail.startswith(_KEY_ENTRY) and tail[38:45] == _SIG_ENTRY:
        version = 2
    elif size > TRAILER_V1 and tail[1:7] == _KEY_ENTRY and tail[39:45] == _SIG_ENTRY_V1:
        version, tail = 1, tail[1:]  # one byte shorter: its entry's name is `sig`
    else:
        return None
    return Signed(
        key=tail[6 : 6 + KEY_SIZE],
        sig=tail[-SIG_SIZE:],
        signed=bytes(payload[:-SIG_SIZE]),
        version=version,
    )


def verdict(payload: bytes | memoryview, pinned: str | None, verify: Verify, board: str) -> Verdict:
    """Verified, unsigned or forged (see the module's docstring) for a post read on *board*;
    raises on a damaged record."""
    signed = signed_part(payload)
    if signed is None:
        return FORGED if _names_a_signature(payload) else UNSIGNED
    if pinned is not None and fingerprint(signed.key) != pinned:
        return FORGED
    if not verify(signed.key, signed.sig, signed.message(board)):
        return FORGED
    return VERIFIED


def _names_a_signature(payload: bytes | memoryview) -> bool:
    """Whether the top-level map has a ``key``, ``sig`` or ``sig2`` entry (not as a trailer)."""
    import msgspec  # a verifier's cost; `post` only seals

    entries = msgspec.msgpack.decode(payload, type=dict[str, msgspec.Raw])
    return not entries.keys().isdisjoint(("key", "sig", "sig2"))


def board_of(payload: bytes) -> str:
    """The ``board`` field of a post's payload, read with the standard library.

    Every post's map starts with string entries (``kind``, ``id``, ``board``: posts.py and
    wire.py write them first); anything else is refused (`ValueError`).
    """
    count, at = _map_header(payload)
    for _ in range(count):
        name, at = _string(payload, at)
        value, at = _string(payload, at)
        if name == "board":
            return value
    raise ValueError("a post's payload names its board among its first fields")


def _string(payload: bytes, at: int) -> tuple[str, int]:
    """The msgpack string at *at* in *payload*, and the offset after it."""
    first = payload[at] if at < len(payload) else 0
    if 0xA0 <= first <= 0xBF:
        size, at = first & 0x1F, at + 1
    elif first in _STR_WIDTH:
        width = _STR_WIDTH[first]
        size, at = int.from_bytes(payload[at + 1 : at + 1 + width], "big"), at + 1 + width
    else:
        raise ValueError("a post's payload names its board among its first fields")
    if at + size > len(payload):
        raise ValueError("a post's payload is cut short")
    return payload[at : at + size].decode(errors="replace"), at + size


_STR_WIDTH = {0xD9: 1, 0xDA: 2, 0xDB: 4}


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
