"""A pane's catch-up that skims the log (state/interest.py, state/filelog/skim.py) against the
full fold of the same log: random boards of signed, unsigned and forged posts, hostile records
and bytes damaged on disk, read in small chunks, in one refresh or two."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paneboard.board.view import BoardView
from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import (
    Ack,
    Answer,
    Approved,
    Cancel,
    Delivered,
    Held,
    Post,
    Prompt,
    Read,
    Refused,
    Seen,
    Undelivered,
    encode,
)
from paneboard.protocol.signing import seal
from paneboard.state.filelog import log as filelog
from paneboard.state.filelog.framing import frame, generation_record
from paneboard.state.filelog.store import FileStore
from paneboard.state.fold import BoardState
from paneboard.state.trust.keys import open_key
from paneboard.state.trust.policy import Traffic
from paneboard.state.trust.verdicts import Verdicts

BOARD = "b"
OWN = ("bob", "carol", "dave")  # the home's own agents: pinned from the start
SENDERS = (*OWN, "eve", "mallory")  # eve: pinned from her first signed post; mallory: never signs
BOB_IDS = [f"0000000000000000000000b{i:03d}" for i in range(3)]  # prompts to bob draw these
OTHER_IDS = [f"0000000000000000000000c{i:03d}" for i in range(3)]  # never a prompt to bob


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding the own agents' keys (copied into every example's homes), and eve's."""
    home = tmp_path_factory.mktemp("keys")
    for name in (*OWN, "eve-elsewhere"):
        open_key(home, name)
    return home


def _about(kind: str, **fields: Any) -> Post:
    extra: dict[str, Any] = {
        "ack": {},
        "answer": {"body": "done"},
        "cancel": {},
        "delivered": {"door": "d"},
        "undelivered": {"door": "d", "reason": "r"},
        "seen": {"door": "d", "source": "s"},
        "held": {"door": "d", "by": "policy", "reason": "r"},
        "approved": {},
        "refused": {},
        "read": {"via": "cli"},
    }[kind]
    cls: Any = {
        "ack": Ack,
        "answer": Answer,
        "cancel": Cancel,
        "delivered": Delivered,
        "undelivered": Undelivered,
        "seen": Seen,
        "held": Held,
        "approved": Approved,
        "refused": Refused,
        "read": Read,
    }[kind]
    return cls(**fields, **extra)  # type: ignore[no-any-return]


sign = st.sampled_from(["signed", "signed", "signed", "unsigned", "another key"])
prompt_op = st.tuples(
    st.just("prompt"),
    st.sampled_from(SENDERS),
    st.lists(st.sampled_from(OWN), min_size=1, max_size=3, unique=True),
    st.integers(0, 2),
    sign,
)
about_op = st.tuples(
    st.just("about"),
    st.sampled_from(SENDERS),
    st.sampled_from(
        [
            "ack",
            "answer",
            "cancel",
            "delivered",
            "undelivered",
            "seen",
            "held",
            "approved",
            "refused",
            "read",
        ]
    ),
    st.sampled_from(BOB_IDS * 2 + OTHER_IDS),
    sign,
)
# Hostile records: valid frames whose payloads are not posts. "others": about other agents, by
# a name the home pins (a pane's reader may skip it uncounted); "mine": one it must count.
hostile_op = st.tuples(
    st.just("hostile"),
    st.sampled_from(
        [
            ("mine", {"kind": "prompt", "sender": "carol", "to": ["bob"], "ts": -1.0}),
            ("mine", {"kind": "prompt", "sender": "carol", "to": ["dave", "bob"], "body": 3}),
            ("mine", {"kind": "ack", "sender": "bob", "prompt": BOB_IDS[0], "note": 7}),
            ("mine", {"kind": "answer", "sender": "mallory", "prompt": OTHER_IDS[0]}),
            ("mine", {"kind": "prompt", "sender": "carol", "to": "bob"}),  # the head is unread
            ("mine", b"\xc1 not msgpack"),
            ("mine", {"kind": "takeover", "sender": "mallory", "prompt": OTHER_IDS[1]}),
            ("others", {"kind": "prompt", "sender": "carol", "to": ["dave"], "ts": -1.0}),
            ("others", {"kind": "ack", "sender": "dave", "prompt": OTHER_IDS[2], "id": "x/y"}),
            ("others", {"kind": "takeover", "sender": "carol", "prompt": OTHER_IDS[1]}),
            ("others", {"kind": "prompt", "sender": "dave", "to": ["carol"], "board": "other"}),
        ]
    ),
)
damage_op = st.tuples(st.just("damage"), st.sampled_from(["flip", "junk"]), st.integers(0, 10**6))
ops = st.lists(
    st.one_of(prompt_op, prompt_op, about_op, about_op, about_op, hostile_op, damage_op),
    max_size=40,
)


def _board(keys: Path, items: list[tuple[Any, ...]]) -> tuple[bytes, list[int], int]:
    """The log's bytes, the offsets of the hostile records about other agents, and how many."""
    own = {name: open_key(keys, name) for name in OWN}
    eve = open_key(keys, "eve-elsewhere")
    out = bytearray(generation_record())
    others: list[int] = []
    for n, op in enumerate(items):
        header: dict[str, Any] = {"id": f"{n:026d}", "board": BOARD, "ts": 1.7e9 + n}
        if op[0] in ("prompt", "about"):
            _, sender, *rest, how = op
            if op[0] == "prompt":
                to, k = rest
                pid = BOB_IDS[k] if "bob" in to else (OTHER_IDS + BOB_IDS)[k * 2]
                post: Post = Prompt(
                    **{**header, "id": pid}, sender=sender, to=tuple(to), body=f"work {n}"
                )
            else:
                kind, pid = rest
                post = _about(kind, **header, sender=sender, prompt_id=pid)
            payload = encode(post)
            pair = own.get(sender, eve) if how == "signed" else eve
            if how == "another key":
                pair = own["carol"] if sender == "eve" else eve
            if how != "unsigned" and sender != "mallory":
                payload = seal(payload, pair.public, pair.sign)
            out += frame(payload)
        elif op[0] == "hostile":
            label, fields = op[1]
            if isinstance(fields, bytes):
                raw = fields
            else:
                raw = msgspec.msgpack.encode({**header, "body": "x", **fields})
            if label == "others":
                others.append(len(out))
            out += frame(raw)
        else:
            _, how, where = op
            if how == "junk":
                out += b"\xa7PB1 junk between frames"
            elif len(out) > 200:
                at = 100 + where % (len(out) - 100)  # past the first record: the generation
                out[at] ^= 0x5A
    return bytes(out), others, len(others)


class Folded(msgspec.Struct):
    state: BoardState
    links: list[Any]
    handed: dict[str, dict[str, float]]
    damaged: int
    warned: set[str]
    pins: list[tuple[str, str]]
    payloads: set[str]


def _home(keys: Path, root: Path, name: str, log: bytes) -> Path:
    home = root / name
    shutil.copytree(keys / ".keys", home / ".keys")
    (home / BOARD).mkdir(mode=0o700)
    (home / BOARD / "log").write_bytes(log)
    return home


def _read(home: Path, *, skim: bool, cut: int | None, log: bytes) -> Folded:
    """bob's pane fold of the log in *home*: skimmed (a catch-up) or whole, once or, with
    *cut*, in two refreshes (the log's end appended between)."""
    store = FileStore(home / BOARD)
    verdicts = Verdicts(home / BOARD)
    traffic = Traffic("bob", now=lambda: 1.7e9)
    path = home / BOARD / "log"
    if cut is not None:
        path.write_bytes(log[:cut])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with BoardView(
            store, BoardState(keep_closed=False, recipient="bob"), verdicts, traffic
        ) as view:
            view.refresh(keep=not skim)
            if cut is not None:
                with path.open("ab") as f:
                    f.write(log[cut:])
                view.refresh(keep=not skim)
            reader: Any = view.follower
    return Folded(
        view.state,
        list(traffic.links.values()),
        traffic.handed,
        reader.reader.damaged,
        {
            str(w.message).partition(": ")[2]
            for w in caught
            if issubclass(w.category, DamagedRecord)
        },
        verdicts.taken,
        set(view.payloads),
    )


@contextlib.contextmanager
def chunks_of(size: int) -> Iterator[None]:
    """The reader's chunk made *size* bytes: records cut by chunk ends, chunks holding none."""
    saved, filelog.CHUNK = filelog.CHUNK, size
    try:
        yield
    finally:
        filelog.CHUNK = saved


@settings(max_examples=120)
@given(ops, st.one_of(st.integers(24, 2000), st.just(filelog.CHUNK)), st.data())
def test_a_skimmed_catch_up_folds_as_the_whole_log(
    keys: Path, items: list[tuple[Any, ...]], chunk: int, data: st.DataObject
) -> None:
    """Same open prompts, stages, doubts, finished ids, traffic and pins; every damaged span
    and every damaged record the pane needs warned and counted; only hostile records about
    other agents, by names the home pins, left uncounted."""
    log, others, skipped = _board(keys, items)
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(log))))
    with tempfile.TemporaryDirectory() as d, chunks_of(chunk):
        whole = _read(_home(keys, Path(d), "whole", log), skim=False, cut=None, log=log)
        skim = _read(_home(keys, Path(d), "skim", log), skim=True, cut=cut, log=log)
    assert whole.state.prompts == skim.state.prompts
    assert whole.state.finished == skim.state.finished
    assert (whole.links, whole.handed) == (skim.links, skim.handed)
    assert whole.pins == skim.pins
    assert whole.payloads == skim.payloads
    # Each hostile record about other agents is warned by the whole read (unless bytes damaged
    # on disk took it into a span, warned by both), and by the skimmed one never.
    left = {w for w in whole.warned if any(f" at offset {o} (" in w for o in others)}
    assert whole.warned - left == skim.warned
    assert whole.damaged - len(left) == skim.damaged
    assert len(left) <= skipped
