"""Signing's cost, side by side with the unsigned path: `post`, sign, verify, imports.

`paneboard post` signs every prompt (the store's sealer, state/trust/sealing.py). The variants
measured beside it run the same command line (`paneboard.cli.main`) with one thing changed:
*unsigned* turns the seal off (the store appends the bytes as encoded), and the two
cryptography variants sign with cryptography's public Ed25519 API, or with its Rust binding
imported alone, in place of the standard library's integers (``protocol.ed25519``). So each
differs from `paneboard post` only by how, or whether, it signs.

Every case runs from compiled bytecode, as an installed paneboard does: with
``PYTHONDONTWRITEBYTECODE`` set, a module ``make compile`` has not compiled would be compiled
from source on every run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.harness import PY, env_for, listener, summary, wait_ready
from bench.latency import prompt
from paneboard.protocol import ed25519
from paneboard.protocol.posts import encode
from paneboard.protocol.signing import fingerprint, seal, signed_part, verdict
from paneboard.state.trust.keys import open_key, verify
from paneboard.state.trust.verdicts import Verdicts

BOARD = "bench"  # the board of `bench.latency.prompt`'s posts

_PROTOTYPE = """
import sys
from paneboard.cli import main
from paneboard.state.trust import keys, sealing
SIGNER = {signer!r}
if not SIGNER:
    sealing.sealed = lambda sealer, payload, sender=None: payload
elif SIGNER == "cryptography":
    def sign(pair, message):
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        return Ed25519PrivateKey.from_private_bytes(pair.seed).sign(message)
    keys.KeyPair.sign = sign
elif SIGNER == "rust-binding":
    def sign(pair, message):
        from cryptography.hazmat.bindings._rust import openssl
        return openssl.ed25519.from_private_bytes(pair.seed).sign(message)
    keys.KeyPair.sign = sign
sys.exit(main(sys.argv[1:]))
"""
SIGNERS = ("", "stdlib", "cryptography", "rust-binding")
IMPORTS = {
    "stdlib signer": (
        "paneboard.state.trust.keys, paneboard.protocol._ed25519_table",
        "open_key(Path(home), 'alice').sign(b'x')",
    ),
    "cryptography Ed25519 API": (
        "cryptography.hazmat.primitives.asymmetric.ed25519 as e",
        "e.Ed25519PrivateKey.from_private_bytes(bytes(32)).sign(b'x')",
    ),
    "cryptography Rust binding alone": (
        "cryptography.hazmat.bindings._rust as r",
        "r.openssl.ed25519.from_private_bytes(bytes(32)).sign(b'x')",
    ),
}
_EXTRA = """
import sys, time
from pathlib import Path
import paneboard.cli.posting
home = sys.argv[1]
t0 = time.perf_counter()
import {modules}
t1 = time.perf_counter()
from paneboard.state.trust.keys import open_key
{first_signature}
t2 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000)
"""


def _env(home: Path) -> dict[str, str]:
    """The bench's environment, writing bytecode: every case runs compiled, as installed."""
    env = env_for(home, PANEBOARD_AGENT="alice")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _argv(signer: str, to: str) -> list[str]:
    return [PY, "-c", _PROTOTYPE.format(signer=signer), "post", "--to", to, "hi"]


def _wall_ms(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def post_side_by_side(home: Path, runs: int) -> dict[str, Any]:
    """`python -c pass`, the real (signed) `post`, and the same command unsigned and with
    each other signer."""
    env = _env(home)
    real = [PY, "-m", "paneboard", "post", "--to", "nobody", "hi"]
    cases = {"python -c pass": [PY, "-c", "pass"], "paneboard post (signed)": real}
    cases |= {f"post, {s or 'unsigned'}": _argv(s, "nobody") for s in SIGNERS if s != "stdlib"}
    for argv in cases.values():  # the key is made, and every module compiled, before timing
        _wall_ms(argv, env)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):  # interleaved, so the machine's drift falls on every case alike
        for name, argv in cases.items():
            samples[name].append(_wall_ms(argv, env))
    bare = summary(samples["python -c pass"])["median"]
    return {
        name: {"ms": summary(xs), "ratio_to_pass": summary(xs)["median"] / bare}
        for name, xs in samples.items()
    }


def post_to_door(home: Path, runs: int) -> dict[str, Any]:
    """A signed `post` to a listener (stdout door), timed (an unsigned one is held: the
    listener's policy lets no unverified prompt through)."""
    env = _env(home)
    lis = listener(home, "bob")
    out: dict[str, Any] = {}
    try:
        wait_ready(home, "bob")
        for signer in ("stdlib",):
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                subprocess.run(_argv(signer, "bob"), env=env, stdout=subprocess.DEVNULL, check=True)
                lis.readline()
                times.append((time.perf_counter() - t0) * 1000)
            out[signer or "unsigned"] = summary(times)
    finally:
        lis.stop()
    return out


def _per_call_us(fn: Any, args: list[Any]) -> dict[str, Any]:
    times = []
    for arg in args:
        t0 = time.perf_counter()
        fn(arg)
        times.append((time.perf_counter() - t0) * 1e6)
    return summary(times)


def in_process(n: int) -> dict[str, Any]:
    """Per post, in µs: each signer, seal, the trailer check alone, verify, the whole verdict."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    seed = os.urandom(32)
    public = ed25519.public_key(seed)
    theirs = Ed25519PrivateKey.from_private_bytes(seed)
    payloads = [encode(prompt(("bob",), f"please review file{i}.py")) for i in range(n)]
    sealed = [seal(p, public, lambda m: ed25519.sign(seed, public, m)) for p in payloads]
    parts = [signed_part(s) for s in sealed]
    pinned = fingerprint(public)
    return {
        "sign_stdlib_us": _per_call_us(lambda m: ed25519.sign(seed, public, m), payloads),
        "sign_cryptography_us": _per_call_us(theirs.sign, payloads),
        "seal_stdlib_us": _per_call_us(
            lambda p: seal(p, public, lambda m: ed25519.sign(seed, public, m)), payloads
        ),
        "trailer_check_us": _per_call_us(signed_part, sealed),
        "verify_us": _per_call_us(lambda s: verify(s.key, s.sig, s.message(BOARD)), parts),
        "verdict_us": _per_call_us(lambda s: verdict(s, pinned, verify, BOARD), sealed),
        "unsigned_verdict_us": _per_call_us(lambda p: verdict(p, pinned, verify, BOARD), payloads),
        "home_verdict_us": _home_verdicts(public, sealed),
        "bytes_per_post_unsigned": sum(map(len, payloads)) / n,
        "bytes_per_post_signed": sum(map(len, sealed)) / n,
    }


def _home_verdicts(public: bytes, sealed: list[bytes]) -> dict[str, Any]:
    """A reader's verdict per delivery as a home gives it (`state.trust.verdicts`: its pins read
    once)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / BOARD).mkdir()
        verdicts = Verdicts(Path(folder) / BOARD)
        verdicts.pins.pin_first("alice", fingerprint(public))
        return _per_call_us(lambda s: verdicts.verdict("alice", s), sealed)


def import_costs(home: Path, runs: int) -> dict[str, Any]:
    """What each signer adds to `post`'s process (its own modules already imported), in ms:
    the imports, then the first signature (the key read from the home, or a key made)."""
    out = {}
    for name, (modules, first) in IMPORTS.items():
        script = _EXTRA.format(modules=modules, first_signature=first)
        imports, signature = [], []
        for _ in range(runs + 1):  # the first run writes the bytecode
            printed = subprocess.run(
                [PY, "-c", script, str(home)],
                env=_env(home),
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            imports.append(float(printed[0]))
            signature.append(float(printed[1]))
        out[name] = {
            "import_ms": summary(imports[1:]),
            "first_signature_ms": summary(signature[1:]),
        }
    return out


def signing(home: Path, quick: bool) -> dict[str, Any]:
    """The scenario `python -m bench --only signing` runs."""
    open_key(home, "alice")
    per_post = in_process(200 if quick else 2000)
    return {
        "post": post_side_by_side(home, 5 if quick else 30),
        "post_to_door_ms": post_to_door(home, 5 if quick else 20),
        "per_post": per_post,
        # what verifying every record of a 1,000,000-post catch-up would cost, against
        # only recognising the trailer: why a reader verifies only what it delivers
        "verify_1m_posts_s": per_post["verdict_us"]["median"],
        "trailer_check_1m_posts_s": per_post["trailer_check_us"]["median"],
        "added_to_post_process": import_costs(home, 3 if quick else 15),
    }
