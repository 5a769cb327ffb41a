"""Key pairs made once per (home, agent), private and never through a link; pins per board."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.posts import encode
from paneboard.protocol.signing import FORGED, UNSIGNED, VERIFIED, fingerprint, seal
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.framing import generation_of, scan
from paneboard.state.filelog.log import read_posts
from paneboard.state.trust.keys import MAGIC, Pins, key_path, open_key, verify
from paneboard.state.trust.verdicts import Verdicts
from testing.helpers import NatsServer
from tests.factories import prompt

FP_A = "a" * 26
FP_B = "b" * 26


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir(mode=0o700)
    return folder


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_key_is_made_once_and_private(home: Path) -> None:
    """The first use makes a 0600 key in a 0700 folder; later uses read the same key."""
    first = open_key(home, "alice")
    again = open_key(home, "alice")
    path = key_path(home, "alice")
    assert (0o700, 0o600) == (mode(path.parent), mode(path))
    assert MAGIC + first.seed + first.public == path.read_bytes()
    assert (first.seed, first.public) == (again.seed, again.public)
    assert ["alice.ed25519"] == os.listdir(path.parent)


def test_key_pair_is_a_real_ed25519_pair(home: Path) -> None:
    """The stored public half is the seed's, and its signatures verify with cryptography."""
    pair = open_key(home, "alice")
    theirs = Ed25519PrivateKey.from_private_bytes(pair.seed)
    assert theirs.public_key().public_bytes_raw() == pair.public
    assert verify(pair.public, pair.sign(b"hello"), b"hello")
    assert not verify(pair.public, pair.sign(b"hello"), b"hellO")
    assert not verify(b"\xff" * 31, pair.sign(b"hello"), b"hello")
    assert fingerprint(pair.public) == pair.fingerprint


def test_agents_have_their_own_keys(home: Path) -> None:
    """Two agents of one home get two different keys."""
    assert open_key(home, "alice").public != open_key(home, "bob").public


def test_key_refused_through_a_symlink(home: Path, tmp_path: Path) -> None:
    """A key file that is a symbolic link is refused, and its target is neither read nor written."""
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    key_path(home, "alice").parent.mkdir(mode=0o700)
    key_path(home, "alice").symlink_to(target)
    with pytest.raises(BoardIOError) as info:
        open_key(home, "alice")
    message = (
        f"key file {key_path(home, 'alice')} cannot be opened: Too many levels of symbolic links"
    )
    assert message == str(info.value)
    assert b"" == target.read_bytes()


def test_keys_folder_refused_through_a_symlink(home: Path, tmp_path: Path) -> None:
    """A keys folder that is a symbolic link is refused, and nothing is written where it points."""
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (home / ".keys").symlink_to(target)
    with pytest.raises(BoardIOError) as info:
        open_key(home, "alice")
    assert f"{home / '.keys'} is not a folder (a symlink?); refusing to use it" == str(info.value)
    assert [] == os.listdir(target)


def test_key_readable_by_others_is_refused(home: Path) -> None:
    """A key file whose mode lets others read it is refused, not used."""
    open_key(home, "alice")
    os.chmod(key_path(home, "alice"), 0o644)
    with pytest.raises(BoardIOError) as info:
        open_key(home, "alice")
    expected = (
        f"key file {key_path(home, 'alice')} must be a file readable only by its owner (0600)"
    )
    assert expected == str(info.value)


def test_damaged_key_is_refused(home: Path) -> None:
    """A key file cut short is refused, never replaced by a new key."""
    open_key(home, "alice")
    data = key_path(home, "alice").read_bytes()
    key_path(home, "alice").write_bytes(data[:-1])
    with pytest.raises(BoardIOError) as info:
        open_key(home, "alice")
    assert f"key file {key_path(home, 'alice')} is damaged" == str(info.value)
    assert data[:-1] == key_path(home, "alice").read_bytes()


def test_invalid_agent_name_builds_no_path(home: Path) -> None:
    """An agent name with a path in it is refused before any file is made."""
    with pytest.raises(BadInput):
        open_key(home, "../alice")
    assert [] == os.listdir(home)


MAKE = """
import sys
from pathlib import Path
from paneboard.state.trust.keys import open_key
sys.stdin.readline()
print(open_key(Path(sys.argv[1]), "alice").public.hex())
"""


def test_processes_racing_to_make_a_key_share_one(home: Path) -> None:
    """Eight processes making alice's key at once all end with one and the same key."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MAKE, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    for proc in procs:  # all started before any goes on
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = {proc.communicate(timeout=60)[0] for proc in procs}
    assert {open_key(home, "alice").public.hex() + "\n"} == outputs
    assert ["alice.ed25519"] == os.listdir(home / ".keys")


def test_first_pin_holds_and_persists(home: Path) -> None:
    """The first fingerprint seen is pinned; a later one does not replace it, across reads."""
    assert FP_A == Pins(home).pin_first("alice", FP_A)
    assert FP_A == Pins(home).pin_first("alice", FP_B)
    assert {"alice": FP_A} == Pins(home).read()
    assert 0o600 == mode(home / "pins")


PIN = """
import sys
from pathlib import Path
from paneboard.state.trust.keys import Pins
sys.stdin.readline()
print(Pins(Path(sys.argv[1])).pin_first("alice", sys.argv[2]))
"""


def test_processes_racing_to_pin_agree(home: Path) -> None:
    """Six processes pinning different first keys for alice at once all get the same pin."""
    fingerprints = [letter * 26 for letter in "abcdef"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PIN, str(home), fp],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for fp in fingerprints
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = {proc.communicate(timeout=60)[0] for proc in procs}
    pinned = Pins(home).read()["alice"]
    assert ({pinned + "\n"}, 1) == (outputs, (home / "pins").read_bytes().count(b"\n"))


pin_ops = st.lists(
    st.tuples(st.booleans(), st.sampled_from(["alice", "bob"]), st.sampled_from([FP_A, FP_B])),
    max_size=12,
)


@settings(deadline=None)  # each example fsyncs its pins: a disk's pace, not the code's
@given(pin_ops)
def test_pins_follow_first_seen_and_trust(ops: list[tuple[bool, str, str]]) -> None:
    """Any sequence of first sightings and trusts leaves the pins a model dict predicts."""
    import tempfile

    model: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        pins = Pins(Path(folder))
        for is_trust, agent, fp in ops:
            if is_trust:
                pins.trust(agent, fp)
                model[agent] = fp
            else:
                assert model.setdefault(agent, fp) == pins.pin_first(agent, fp)
        assert model == Pins(Path(folder)).read()


def test_trust_pins_another_key(home: Path) -> None:
    """`trust` replaces an agent's pin, and the new one persists; others are kept."""
    pins = Pins(home)
    pins.pin_first("alice", FP_A)
    pins.pin_first("bob", FP_A)
    pins.trust("alice", FP_B)
    assert {"alice": FP_B, "bob": FP_A} == Pins(home).read()
    assert FP_B == Pins(home).pin_first("alice", FP_A)


def test_bad_fingerprint_is_refused_and_nothing_written(home: Path) -> None:
    """A fingerprint that is not 26 base32 characters is refused, and no file is made."""
    with pytest.raises(BadInput) as info:
        Pins(home).trust("alice", "A" * 26)
    assert f"fingerprint {'A' * 26!r} is not 26 of a-z 2-7" == str(info.value)
    assert not (home / "pins").exists()


def test_pins_refused_through_a_symlink(home: Path, tmp_path: Path) -> None:
    """A pins file that is a symbolic link is neither read nor appended to."""
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    (home / "pins").symlink_to(target)
    with pytest.raises(BoardIOError) as info:
        Pins(home).pin_first("alice", FP_A)
    assert f"pins file {home / 'pins'} cannot be opened: Too many levels of symbolic links" == str(
        info.value
    )
    with pytest.raises(BoardIOError):
        Pins(home).read()
    assert b"" == target.read_bytes()


def test_torn_pin_line_is_cut_before_the_next(home: Path) -> None:
    """A pin line cut short by a crash is not a pin, and the next pin is written after the cut."""
    (home / "pins").write_bytes(f"alice {FP_A}\nbob {FP_A[:9]}".encode())
    assert {"alice": FP_A} == Pins(home).read()
    Pins(home).pin_first("bob", FP_B)
    assert f"alice {FP_A}\nbob {FP_B}\n".encode() == (home / "pins").read_bytes()


def test_damaged_pin_line_is_refused(home: Path) -> None:
    """A complete pin line that is not `AGENT FINGERPRINT` is refused with its line number."""
    (home / "pins").write_bytes(f"alice {FP_A}\n../x {FP_B}\n".encode())
    with pytest.raises(BoardIOError) as info:
        Pins(home).read()
    assert f"pins file {home / 'pins'} line 2 is damaged" == str(info.value)


def signed_by(home: Path, agent: str, sender: str = "alice") -> bytes:
    pair = open_key(home, agent)
    post = prompt(sender=sender, ts=1.0, body="hi")
    return seal(encode(post), pair.public, pair.sign)


def test_first_verified_key_is_pinned(home: Path, tmp_path: Path) -> None:
    """A name's first post whose signature checks pins its key; another key is then forged."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    alice, impostor = signed_by(elsewhere, "alice"), signed_by(elsewhere, "mallory")
    (home / "b").mkdir()
    verdicts = Verdicts(home / "b")
    assert (VERIFIED, VERIFIED, FORGED) == (
        verdicts.verdict("alice", alice),
        verdicts.verdict("alice", alice),
        verdicts.verdict("alice", impostor),
    )
    assert {"alice": open_key(elsewhere, "alice").fingerprint} == Pins(home / "b").read()


def test_bad_signature_pins_nothing(home: Path, tmp_path: Path) -> None:
    """A post whose signature does not check is forged and pins no key."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    bent = bytearray(signed_by(elsewhere, "alice"))
    bent[-1] ^= 1
    (home / "b").mkdir()
    verdicts = Verdicts(home / "b")
    assert FORGED == verdicts.verdict("alice", bytes(bent))
    assert UNSIGNED == verdicts.verdict("alice", encode(prompt(ts=1.0, body="hi")))
    assert not (home / "b" / "pins").exists()


def test_log_of_signed_and_unsigned_posts_reads_whole(home: Path) -> None:
    """Today's log reader reads signed and unsigned posts alike; the raw frames still verify."""
    old = prompt(id="1" * 26, ts=1.0, body="written before signing")
    new = prompt(id="2" * 26, ts=2.0, body="signed")
    pair = open_key(home, "alice")
    log = home / "log"
    append_payloads(log, [encode(old), seal(encode(new), pair.public, pair.sign)])
    assert [old, new] == [post for _, post in read_posts(log)]
    payloads = [bytes(p) for _, p in scan(log.read_bytes()).frames if generation_of(p) is None]
    verdicts = Verdicts(home / "b")
    assert [UNSIGNED, VERIFIED] == [verdicts.verdict("alice", p) for p in payloads]


@pytest.mark.skipif(shutil.which("nats-server") is None, reason="nats-server is missing")
def test_nats_stream_keeps_a_signed_post_byte_for_byte(home: Path, nats_server: NatsServer) -> None:
    """Published as written, a signed post reads with today's NATS reader and verifies from
    the stream's own copy of the bytes."""
    from paneboard.state.nats.store import NatsStore

    post = prompt(id="3" * 26, board="test", ts=3.0, body="over NATS")
    pair = open_key(home, "alice")
    payload = seal(encode(post), pair.public, pair.sign)
    store = NatsStore(f"{nats_server.url}/t{uuid.uuid4().hex[:12]}", "test")
    try:
        publish = store.js.publish(store.subject, payload, headers={"Nats-Msg-Id": post.id})
        seq = store.run(publish).seq
        stored = store.run(store.js.get_msg(store.stream, seq)).data
        assert [post] == [p for _, p in store.read_all()]
    finally:
        store.close()
    assert (payload, VERIFIED) == (stored, Verdicts(home / "test").verdict("alice", stored))
