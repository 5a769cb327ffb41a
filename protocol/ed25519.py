"""Ed25519 signing (RFC 8032) on the standard library's integers, for `paneboard post`.

`post` runs once per message and must start fast: importing ``cryptography`` costs more
than the interpreter's own start, while one signature here costs about a millisecond.
This module only signs and derives public keys; every verification is ``cryptography``'s
(``state.keys.verify``). Ed25519 is deterministic, so the tests check that every
signature made here is byte for byte the one ``cryptography`` makes for the same seed
and message.

The scalar multiplication has a fixed shape (64 windows of 4 bits, one table addition
each, the identity for a zero digit; the addition formula is complete), so its steps
do not depend on the secret. Python's integers are not constant-time: the signer runs
in the home owner's own process, where nothing outside observes it more closely than a
whole process's run time.
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
_D = -121665 * pow(121666, _P - 2, _P) % _P
_D2 = 2 * _D % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_IDENTITY: Point = (0, 1, 1, 0)


def _base() -> Point:
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


def _table(base: Point) -> tuple[Point, ...]:
    points = [_IDENTITY]
    for _ in range(15):
        points.append(_add(points[-1], base))
    return tuple(points)


_B_TABLE = _table(_base())  # 0·B … 15·B


def _times_base(scalar: int) -> Point:
    """scalar·B for 0 <= scalar < 2**256, in 64 windows of 4 bits, top first."""
    acc = _IDENTITY
    for shift in range(252, -4, -4):
        acc = _double(_double(_double(_double(acc))))
        acc = _add(acc, _B_TABLE[(scalar >> shift) & 15])
    return acc


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
    return scalar, digest[32:]


def public_key(seed: bytes) -> bytes:
    """The 32-byte public key of a 32-byte seed (RFC 8032 5.1.5)."""
    scalar, _ = _expand(seed)
    return _encode(_times_base(scalar))


def sign(seed: bytes, public: bytes, message: bytes) -> bytes:
    """The 64-byte signature of *message* (RFC 8032 5.1.6); *public* is ``public_key(seed)``."""
    scalar, prefix = _expand(seed)
    r = int.from_bytes(sha512(prefix + message).digest(), "little") % _L
    big_r = _encode(_times_base(r))
    k = int.from_bytes(sha512(big_r + public + message).digest(), "little") % _L
    return big_r + ((r + k * scalar) % _L).to_bytes(32, "little")
