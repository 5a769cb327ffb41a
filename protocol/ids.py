"""Post ids: 26 characters, time-sortable, safe in a shell and a file name.

Ten characters of milliseconds since the epoch, then sixteen of entropy, in
Crockford's base32, lower case (a ULID spelled small), and a new post's header. The caller
passes the clock and the entropy, so this stays pure.
"""

from __future__ import annotations

from paneboard.protocol.errors import BadInput

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from paneboard.protocol.posts import Header

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
ID_LENGTH = 26
PREFIX_MIN = 4
_ALLOWED = frozenset(ALPHABET)
ID_PATTERN = f"^[{ALPHABET}]{{{ID_LENGTH}}}\\Z"  # a whole id, for the decoder


def new_id(ts: float, entropy: bytes) -> str:
    """An id for a post made at *ts* (seconds) with 10 bytes of *entropy*."""
    if len(entropy) != 10:
        raise ValueError("entropy must be 10 bytes")
    value = (int(ts * 1000) & (2**48 - 1)) << 80 | int.from_bytes(entropy, "big")
    chars = []
    for _ in range(ID_LENGTH):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def header(board: str, sender: str, ts: float, entropy: bytes) -> Header:
    """A new post's first fields: its id (made at *ts* with 10 bytes of *entropy*), board,
    sender and time. Every post paneboard writes starts with these."""
    return {"id": new_id(ts, entropy), "board": board, "sender": sender, "ts": ts}


def check_ref(ref: str) -> str:
    """Normalise an id or id prefix typed by a person; refuse what cannot be one."""
    ref = ref.strip().lower()
    if len(ref) < PREFIX_MIN:
        raise BadInput(f"id `{ref}` is too short: give at least {PREFIX_MIN} characters")
    if len(ref) > ID_LENGTH or not _ALLOWED.issuperset(ref):
        raise BadInput(f"`{ref[:40]}` is not a post id")
    return ref
