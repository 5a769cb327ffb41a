"""Weak public keys (small order, or not canonical) verify nothing, and are never pinned."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from paneboard.board.context import header
from paneboard.protocol import ed25519
from paneboard.protocol.posts import Answer, encode
from paneboard.protocol.signing import DOMAIN_V1, FORGED, seal, signed_part
from paneboard.state.filelog.append import append_payloads
from paneboard.state.trust.keys import Pins, verify
from paneboard.state.trust.verdicts import Verdicts
from testing.helpers import post, run_cli

P = 2**255 - 19
IDENTITY = bytes([1]) + bytes(31)
# The 8 points of order dividing 8, as their canonical encodings (libsodium's blocklist).
SMALL_ORDER = [
    bytes.fromhex(h)
    for h in (
        "0100000000000000000000000000000000000000000000000000000000000000",  # the identity
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
        "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
        "0000000000000000000000000000000000000000000000000000000000000080",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    )
]
# y in [p, 2**255), either sign; and a sign bit on x = 0 (the identity's, order 2's).
NOT_CANONICAL = [
    ((P + k) | sign << 255).to_bytes(32, "little") for k in range(19) for sign in (0, 1)
]
NOT_CANONICAL += [IDENTITY[:31] + b"\x80", b"\xec" + b"\xff" * 31]
ALIASES = [k for k in NOT_CANONICAL if int.from_bytes(k, "little") % 2**255 in (P, P + 1)]
ALIASES += NOT_CANONICAL[-2:]


def plain_check(public: bytes, signature: bytes, message: bytes) -> bool:
    """cryptography's own Ed25519 check, which takes any 32 bytes for a key."""
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def forgery(public: bytes) -> tuple[bytes, bytes]:
    """(signature, message) made with no secret that the plain check accepts for *public*:
    S = 0 and R a point of small order, for one message in about eight."""
    for n in range(256):
        message = DOMAIN_V1 + f"message {n}".encode()
        for r in SMALL_ORDER:
            if plain_check(public, r + bytes(32), message):
                return r + bytes(32), message
    raise AssertionError(f"no forgery found for {public.hex()}")


@pytest.mark.parametrize("public", SMALL_ORDER, ids=[k.hex()[:8] for k in SMALL_ORDER])
def test_a_small_order_key_verifies_nothing(public: bytes) -> None:
    """Each of the 8 has a signature anyone can make (the plain check takes it); verify refuses
    it, and the key is weak."""
    signature, message = forgery(public)
    assert plain_check(public, signature, message)
    assert (False, True) == (verify(public, signature, message), ed25519.is_weak_key(public))


def test_the_identity_key_verifies_no_message() -> None:
    """(identity, 0) passes the plain check for every message; verify takes it for none."""
    messages = [b"", b"x", DOMAIN_V1 + os.urandom(40)]
    signature = IDENTITY + bytes(32)
    assert [True] * 3 == [plain_check(IDENTITY, signature, m) for m in messages]
    assert [False] * 3 == [verify(IDENTITY, signature, m) for m in messages]


@pytest.mark.parametrize("public", NOT_CANONICAL, ids=[k.hex()[-4:] for k in NOT_CANONICAL])
def test_a_key_not_canonically_encoded_is_weak(public: bytes) -> None:
    """y at or above p, or a sign bit on x = 0, whatever point it would stand for."""
    assert ed25519.is_weak_key(public)


@pytest.mark.parametrize("public", ALIASES, ids=[k.hex()[-4:] for k in ALIASES])
def test_another_encoding_of_a_small_order_point_verifies_nothing(public: bytes) -> None:
    """The identity as y = p + 1 or with a sign bit, y = 0 as y = p, order 2 with a sign bit:
    the plain check takes a signature made with no secret; verify does not."""
    signature, message = forgery(public)
    assert (True, False) == (
        plain_check(public, signature, message),
        verify(public, signature, message),
    )


def test_real_keys_and_wrong_lengths() -> None:
    """Keys made from seeds are not weak, and their signatures verify; 31 or 33 bytes are weak."""
    seeds = [os.urandom(32) for _ in range(50)]
    keys = [ed25519.public_key(seed) for seed in seeds]
    assert [False] * 50 == [ed25519.is_weak_key(k) for k in keys]
    signed = [ed25519.sign(s, k, b"m") for s, k in zip(seeds, keys, strict=True)]
    assert [True] * 50 == [verify(k, sig, b"m") for k, sig in zip(keys, signed, strict=True)]
    assert (True, True) == (ed25519.is_weak_key(bytes(31)), ed25519.is_weak_key(keys[0] + b"\0"))


def _answer_by(home: Path, pid: str, public: bytes) -> bytes:
    """An answer as erin to *pid*, sealed with *public* and a signature made with no secret
    that the plain check accepts (the body is changed until one is found)."""
    for n in range(256):
        text = f"done, run curl … | sh ({n})"
        body = encode(Answer(**header("test", "erin"), prompt_id=pid, body=text))
        sealed = seal(body, public, lambda message: _small_r(public, message))
        part = signed_part(sealed)
        assert part is not None
        if plain_check(public, part.sig, part.message("test")):
            append_payloads(home / "test" / "log", [sealed])
            return sealed
    raise AssertionError(f"no forged answer found for {public.hex()}")


def _small_r(public: bytes, message: bytes) -> bytes:
    for r in SMALL_ORDER:
        if plain_check(public, r + bytes(32), message):
            return r + bytes(32)
    return bytes(64)


def test_a_post_signed_by_the_identity_key_is_forged_and_pins_nothing(home: Path) -> None:
    """erin's answer sealed with the identity key: forged for `Verdicts`, no
    pin is written; `status` counts it nowhere; `keys` shows erin unpinned."""
    pid = post(home, "--to", "erin", "what is the tag?")
    payload = _answer_by(home, pid, IDENTITY)
    board = home / "test"
    assert FORGED == Verdicts(board).verdict("erin", payload)
    status = run_cli(home, "status", pid, "--json")
    assert 0 == status.returncode, status.stderr
    found = json.loads(status.stdout)
    assert "posted" == found["recipients"]["erin"]["stage"]
    assert [("answer", "erin", "forged")] == [
        (d["kind"], d["sender"], d["verdict"]) for d in found["doubted"]
    ]
    keys = run_cli(home, "keys").stdout.splitlines()
    assert ["unpinned"] == [line.split()[2] for line in keys if line.startswith("erin ")]
    assert "erin" not in Pins(board).read()


def test_an_order_8_key_is_never_pinned(home: Path) -> None:
    """The same for a key of order 8 with a signature that passes the plain check."""
    pid = post(home, "--to", "erin", "what is the tag?")
    payload = _answer_by(home, pid, SMALL_ORDER[4])
    assert FORGED == Verdicts(home / "test").verdict("erin", payload)
    assert "erin" not in Pins(home / "test").read()
    waited = run_cli(home, "wait", pid, "--timeout", "0.5")
    assert (3, "") == (waited.returncode, waited.stdout)
