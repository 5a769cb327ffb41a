"""Ed25519 signing (RFC 8032) on the standard library's integers, for `paneboard post`.

`post` runs once per message and must start fast: importing ``cryptography`` costs more
than the interpreter's own start, while one signature here costs about half a millisecond.
This module signs, derives public keys and tells a weak key (``is_weak_key``: small order, or
not canonical); every verification is ``cryptography``'s (``state.trust.keys.verify``), which
refuses a weak key first. Ed25519 is deterministic, so the tests check that every
signature made here is byte for byte the one ``cryptography`` makes for the same seed
and message.

Only multiples of the base point are ever needed (a nonce's, and a seed's public key), so
they come from a table made once (``_ed25519_table``, checked by the tests against
``base_table()``): 64 additions a signature, one per signed 4-bit digit of the scalar,
the identity for a zero digit (the addition formula is complete), so the steps do not
depend on the secret. Python's integers are not constant-time: the signer runs in the
home owner's own process, where nothing outside observes it more closely than a whole
process's run time.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from hashlib import sha512
else:
    try:  # CPython's own SHA-512: hashlib's import loads OpenSSL, ten times the cost
        if sys.version_info >= (3, 12):
            from _sha2 import sha512
        else:
            from _sha512 import sha512
    except ImportError:  # an interpreter without it
        from hashlib import sha512

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, XY = ZT

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493  # the base point's order
# -121665/121666 mod p, and sqrt(-1) = 2**((p-1)/4) mod p (the tests compute both)
_D = 37095705934669439343138083508754565189542113879843219016388785533085940283555
_SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752
_D2 = 2 * _D % _P
_IDENTITY: Point = (0, 1, 1, 0)


def _base() -> Point:
    """The base point B: y = 4/5, x even (RFC 8032 5.1)."""
    y = 4 * pow(5, _P - 2, _P) % _P
    xx = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    x = pow(xx, (_P + 3) // 8, _P)
    if (x * x - xx) % _P:
        x = x * _SQRT_M1 % _P
    if x & 1:
        x = _P - x
    return (x, y, 1, x * y % _P)


def _add(p: Point, q: Point) -> Point:
    """p + q (add-2008-hwcd-3: complete on Ed25519, so p == q and the identity are fine)."""
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % _P
    b = (y1 + x1) * (y2 + x2) % _P
    c = t1 * _D2 * t2 % _P
    d = 2 * z1 * z2 % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _double(p: Point) -> Point:
    """2p (dbl-2008-hwcd)."""
    x1, y1, z1, _ = p
    a = x1 * x1 % _P
    b = y1 * y1 % _P
    c = 2 * z1 * z1 % _P
    h = a + b
    e = h - (x1 + y1) * (x1 + y1) % _P
    g = a - b
    f = c + g
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def base_table() -> bytes:
    """j·16**i·B for i < 64, j in 1..8: (y+x, y-x, 2d·x·y) mod p, 32 bytes little-endian each.

    ``_ed25519_table`` holds these bytes, made once: the tests check they are these.
    """
    out = bytearray()
    row = _base()
    for _ in range(64):
        point = row
        for _ in range(8):
            x, y, z, _t = point
            inverse = pow(z, _P - 2, _P)
            x, y = x * inverse % _P, y * inverse % _P
            for value in ((y + x) % _P, (y - x) % _P, _D2 * x * y % _P):
                out += value.to_bytes(32, "little")
            point = _add(point, row)
        for _ in range(4):
            row = _double(row)
    return bytes(out)


def _digits(scalar: int) -> list[int]:
    """64 signed radix-16 digits in [-8, 8) of scalar < 2**253 (its top nibble is 0 or 1,
    so no carry is left over)."""
    digits, carry = [], 0
    for i in range(64):
        d = (scalar >> (4 * i) & 15) + carry
        carry = (d + 8) >> 4
        digits.append(d - (carry << 4))
    return digits


def _times_base(scalar: int) -> Point:
    """scalar·B for 0 <= scalar < 2**253: one table addition per digit, the identity for 0."""
    table = _table()
    x1, y1, z1, t1 = _IDENTITY
    for i, digit in enumerate(_digits(scalar)):
        j = 96 * (8 * i + abs(digit) - 1)
        if digit == 0:
            plus, minus, t2d = 1, 1, 0
        else:
            plus = int.from_bytes(table[j : j + 32], "little")
            minus = int.from_bytes(table[j + 32 : j + 64], "little")
            t2d = int.from_bytes(table[j + 64 : j + 96], "little")
        if digit < 0:  # -(x, y) is (-x, y): y+x and y-x swap, xy changes sign
            plus, minus, t2d = minus, plus, _P - t2d
        a = (y1 - x1) * minus % _P
        b = (y1 + x1) * plus % _P
        c = t1 * t2d % _P
        d = 2 * z1
        e, f, g, h = b - a, d - c, d + c, b + a
        x1, y1, z1, t1 = e * f % _P, g * h % _P, f * g % _P, e * h % _P
    return (x1, y1, z1, t1)


def _table() -> bytes:
    from paneboard.protocol._ed25519_table import TABLE

    return TABLE


def _encode(p: Point) -> bytes:
    x, y, z, _ = p
    inverse = pow(z, _P - 2, _P)
    x, y = x * inverse % _P, y * inverse % _P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def _expand(seed: bytes) -> tuple[int, bytes]:
    """The secret scalar (clamped) and the nonce prefix of a 32-byte seed."""
    if len(seed) != 32:
        raise ValueError(f"an Ed25519 seed is 32 bytes, not {len(seed)}")
    digest = sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little") & (2**254 - 8) | 2**254
    return scalar, digest[32:]  # the scalar's multiples of B depend only on it modulo L


def is_weak_key(public: bytes) -> bool:
    """Whether *public* is no key only its owner signs for: not the canonical encoding of a
    point of the curve (RFC 8032 5.1.3: y below p, no sign bit on x = 0), or a point of small
    order, [8]A the identity. A signature by one of the 8 points of small order (the identity
    among them) needs no secret: with S = 0, R = -[k]A passes the check for one message in
    eight, and the identity's (identity, 0) for every message."""
    point = _decode(public)
    if point is None:
        return True
    for _ in range(3):
        point = _double(point)
    x, y, z, _ = point
    return x == 0 and y == z


def _decode(public: bytes) -> Point | None:
    """The point *public* encodes, or None for a length, a y or an x no canonical key has."""
    if len(public) != 32:
        return None
    n = int.from_bytes(public, "little")
    sign, y = n >> 255, n & (2**255 - 1)
    if y >= _P:
        return None
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P  # sqrt(u/v), maybe
    if v * x * x % _P == (-u) % _P:
        x = x * _SQRT_M1 % _P
    if v * x * x % _P != u or (x == 0 and sign):
        return None
    if x & 1 != sign:
        x = _P - x
    return (x, y, 1, x * y % _P)


def public_key(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte seed (RFC 8032 5.1.5)."""
    scalar, _ = _expand(seed)
    return _encode(_times_base(scalar % _L))


def sign(seed: bytes, public: bytes, message: bytes) -> bytes:
    """The 64-byte signature of *message* (RFC 8032 5.1.6); *public* is ``public_key(seed)``."""
    scalar, prefix = _expand(seed)
    r = int.from_bytes(sha512(prefix + message).digest(), "little") % _L
    big_r = _encode(_times_base(r))
    k = int.from_bytes(sha512(big_r + public + message).digest(), "little") % _L
    return big_r + ((r + k * scalar) % _L).to_bytes(32, "little")
