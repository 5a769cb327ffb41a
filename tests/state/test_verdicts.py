"""One home's pins and verdicts: its own agents' keys, names pinned in log order whichever post
is checked first, lookalike names, and pins read again when they change."""

from __future__ import annotations

from pathlib import Path

import pytest

from paneboard.protocol.posts import Post, encode
from paneboard.state.trust.keys import Pins, open_key
from paneboard.state.trust.sealing import Sealer
from paneboard.state.trust.verdicts import Verdicts, checked, lookalike_key
from tests.factories import prompt


@pytest.fixture
def board(home: Path) -> Path:
    (home / "b").mkdir(mode=0o700)
    return home / "b"


def _elsewhere(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir(mode=0o700)
    return folder


def _signed(home: Path, sender: str, n: int = 1) -> bytes:
    return Sealer(home, sender).seal(encode(prompt(n, board="b", sender=sender)))


def test_an_own_agents_key_beats_any_pin_in_the_pins_file(board: Path, tmp_path: Path) -> None:
    """A pins file that names another key for the home's own agent (taken before) does not
    count: bob's own key verifies, the other is forged."""
    mallory = _elsewhere(tmp_path, "mallory")
    Pins(board).pin_first("bob", open_key(mallory, "bob").fingerprint)
    verdicts = Verdicts(board, own="bob")
    assert ("verified", "forged") == (
        verdicts.verdict("bob", _signed(board.parent, "bob")),
        verdicts.verdict("bob", _signed(mallory, "bob")),
    )
    assert ("own", open_key(board.parent, "bob").fingerprint) == (
        verdicts.pinned_by("bob"),
        verdicts.pin_of("bob"),
    )


def test_a_key_made_after_the_reader_started_is_the_names_pin(board: Path, tmp_path: Path) -> None:
    """From the moment the home makes carol's key it is her pin, in a reader already running,
    over the first key the board showed for her."""
    mallory = _elsewhere(tmp_path, "mallory")
    verdicts = Verdicts(board)
    assert "verified" == verdicts.verdict("carol", _signed(mallory, "carol"))
    open_key(board.parent, "carol")
    assert ("forged", "verified") == (
        verdicts.verdict("carol", _signed(mallory, "carol", 2)),
        verdicts.verdict("carol", _signed(board.parent, "carol", 3)),
    )


def test_a_name_is_pinned_from_its_first_signed_post_whichever_is_checked_first(
    board: Path, tmp_path: Path
) -> None:
    """Two keys sign carol's posts; asked about the later one first, the reader has already
    pinned the earlier one's key: the later is forged. A bad signature first pins nothing."""
    one, two = _elsewhere(tmp_path, "one"), _elsewhere(tmp_path, "two")
    bent = bytearray(_signed(two, "carol", 1))
    bent[-1] ^= 1
    posts = [prompt(n, board="b", sender="carol") for n in (1, 2, 3)]
    records: list[tuple[int, Post, bytes]] = [(0, posts[0], bytes(bent))]
    records.append((1, posts[1], _signed(one, "carol", 2)))
    records.append((2, posts[2], _signed(two, "carol", 3)))
    verdicts = Verdicts(board)
    checks = [check for _, _, check in checked(verdicts, [records])]
    assert ["forged", "verified", "forged"] == [checks[2](), checks[1](), checks[0]()]
    assert {"carol": open_key(one, "carol").fingerprint} == Pins(board).read()
    assert [("carol", open_key(one, "carol").fingerprint)] == verdicts.taken


def test_a_pin_changed_by_a_person_is_read_again(board: Path, tmp_path: Path) -> None:
    """A reader that pinned erin's first key follows a `trust` written by another process."""
    first, real = _elsewhere(tmp_path, "first"), _elsewhere(tmp_path, "real")
    verdicts = Verdicts(board)
    assert "verified" == verdicts.verdict("erin", _signed(first, "erin"))
    assert "first" == verdicts.pinned_by("erin")
    Pins(board).trust("erin", open_key(real, "erin").fingerprint)
    assert ("forged", "verified", "trusted") == (
        verdicts.verdict("erin", _signed(first, "erin", 2)),
        verdicts.verdict("erin", _signed(real, "erin", 3)),
        verdicts.pinned_by("erin"),
    )


def test_lookalike_names_name_the_known_one(board: Path, tmp_path: Path) -> None:
    """A name that differs from a known one only by case, l/I/1, 0/O or trailing punctuation
    looks like it: the home's own agent, a person's pin, or a name pinned before it."""
    names = ("alice", "aIice", "ALICE", "a1ice", "alice.", "alice_")
    assert 1 == len({lookalike_key(n) for n in names})
    assert lookalike_key("bob") == lookalike_key("B0B-")
    assert lookalike_key("alice") != lookalike_key("alicia")
    mallory = _elsewhere(tmp_path, "mallory")
    open_key(board.parent, "alice")
    verdicts = Verdicts(board)
    for n, name in enumerate(("aIice", "carol", "caro1", "Bob")):
        verdicts.note(name, _signed(mallory, name, n))
    Pins(board).trust("bob", open_key(mallory, "bob").fingerprint)
    assert ["alice", None, "carol", "bob", None, None] == [
        verdicts.lookalike(name) for name in ("aIice", "carol", "caro1", "Bob", "alice", "bob")
    ]


def test_the_provenance_says_first_key_seen_unless_owned_or_pinned_by_a_person(
    board: Path, tmp_path: Path
) -> None:
    """A key pinned from the board is only the first one seen; the home's own agent's and a
    person's pin are checked keys."""
    laptop = _elsewhere(tmp_path, "laptop")
    verdicts = Verdicts(board)
    p = prompt(1, board="b", sender="dave")
    assert (True, False) == (
        verdicts.provenance(p, _signed(laptop, "dave")).first,
        verdicts.provenance(prompt(2, board="b"), _signed(board.parent, "alice", 2)).first,
    )
    Pins(board).trust("dave", open_key(laptop, "dave").fingerprint)
    assert not verdicts.provenance(p, _signed(laptop, "dave")).first
