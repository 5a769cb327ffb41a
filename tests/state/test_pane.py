"""A pane: its named files, one deliverer at a time, and the key recorded before the receipt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paneboard.board.view import BoardView
from paneboard.protocol.errors import BoardIOError, PaneLocked
from paneboard.protocol.posts import Ack, Delivered, Held
from paneboard.state.filelog.log import read_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.fold import BoardState
from paneboard.state.panes.delivered import DeliveredKeys
from paneboard.state.panes.pane import Pane, key
from paneboard.state.paths import BoardPaths
from paneboard.state.trust.policy import Traffic
from tests.factories import prompt


def _pane(home: Path, now: float = 100.0) -> Pane:
    paths = BoardPaths(home, "b")
    return Pane(paths, "bob", FileStore(paths.dir), now=lambda: now)


def _folded(pane: Pane) -> BoardState:
    state, _ = pane.start()
    with BoardView(pane.store, state) as view:
        view.refresh(keep=False)
    return view.state


def test_a_pane_names_its_files_in_the_panes_folder(home: Path) -> None:
    files = _pane(home).files
    panes = home / "b" / "panes"
    named = [files.lock, files.delivered, files.checkpoint, files.presence, files.mark]
    named += [files.log, files.stopcheck]
    expected = ["lock", "delivered", "checkpoint", "presence", "transcript", "log", "stopcheck"]
    assert [panes / f"bob.{suffix}" for suffix in expected] == named


def test_a_second_deliverer_is_refused_until_the_first_lets_go(home: Path) -> None:
    first, second = _pane(home), _pane(home)
    first.take_lock()
    with pytest.raises(PaneLocked) as info:
        second.take_lock()
    assert os.getpid() == info.value.pid
    first.release()
    second.take_lock()
    second.release()


def test_record_writes_the_key_then_the_receipt(home: Path) -> None:
    pane = _pane(home)
    pane.take_lock()
    pane.record([prompt(1), prompt(2)], "stdout", "unknown")
    pane.record([prompt(3)], "claude-inbox", held_because="crossSessionInbound: hold")
    pane.release()
    keys = DeliveredKeys(pane.files.delivered).keys
    assert {key(prompt(n)) for n in (1, 2, 3)} == keys
    posts = [post for _, post in read_posts(home / "b" / "log")]
    head = [{"id": p.id, "board": "b", "sender": "bob", "ts": 100.0} for p in posts]
    assert [
        *(
            Delivered(**head[n - 1], prompt_id=prompt(n).id, door="stdout", outcome="unknown")
            for n in (1, 2)
        ),
        Held(
            **head[2],
            prompt_id=prompt(3).id,
            door="claude-inbox",
            by="agent",
            reason="crossSessionInbound: hold",
        ),
    ] == posts


def test_a_refused_receipt_keeps_the_key(home: Path) -> None:
    """The key is durable before the receipt is tried: the board refusing the receipt raises
    (or is told to *warn*), and the prompt is never handed over again."""
    pane = _pane(home)
    pane.take_lock()
    (home / "b" / "log").mkdir()  # the store cannot append
    with pytest.raises(BoardIOError, match="cannot open"):
        pane.record([prompt(1)], "stdout")
    heard: list[str] = []
    pane.record([prompt(2)], "stdout", warn=heard.append)
    pane.release()
    assert {key(prompt(1)), key(prompt(2))} == DeliveredKeys(pane.files.delivered).keys
    assert 1 == len(heard)
    assert heard[0].startswith("could not post the delivered notice: cannot open")


def test_undelivered_skips_the_recorded_and_the_closed_in_catch_up_order(home: Path) -> None:
    store = FileStore(home / "b")
    (home / "b").mkdir()
    urgent = prompt(3, priority="urgent")
    store.append([prompt(1), prompt(2), urgent, prompt(4)])
    store.append([Ack(id="a" * 26, board="b", sender="bob", ts=5.0, prompt_id=prompt(4).id)])
    pane = _pane(home)
    pane.take_lock()
    pane.record([prompt(2)], "stdout")
    state = _folded(pane)
    assert [urgent.id, prompt(1).id] == [ps.prompt.id for ps in pane.undelivered(state)]
    pane.release()


def test_the_checkpoint_is_where_the_next_pane_starts(home: Path) -> None:
    (home / "b").mkdir()
    FileStore(home / "b").append([prompt(1), prompt(2)])
    pane = _pane(home)
    pane.take_lock()
    folded = _folded(pane)
    pane.save_checkpoint(folded, Traffic("bob"))
    pane.release()
    state, _ = _pane(home).start()
    assert (folded.position, sorted(folded.prompts)) == (state.position, sorted(state.prompts))
    assert 0 < state.position


def test_without_a_checkpoint_the_start_is_an_empty_fold_of_the_agents_prompts(home: Path) -> None:
    state, _ = _pane(home).start()
    assert ({}, 0, False, "bob") == (
        state.prompts,
        state.position,
        state.keep_closed,
        state.recipient,
    )


def test_a_prompt_closed_before_a_checkpoint_is_no_prompt_after_it(home: Path) -> None:
    """The checkpoint leaves a closed prompt out, the key log keeps its id: a copy stored
    after the restart is not open for the agent (the fold knows the id)."""
    (home / "b").mkdir()
    store = FileStore(home / "b")
    store.append(
        [prompt(1), Ack(id="a" * 26, board="b", sender="bob", ts=5.0, prompt_id=prompt(1).id)]
    )
    pane = _pane(home)
    pane.take_lock()
    pane.save_checkpoint(_folded(pane), Traffic("bob"))
    pane.release()
    store.append([prompt(1), prompt(2)])  # the closed one again, then a new one
    again = _pane(home)
    again.take_lock()
    state = _folded(again)
    assert ([prompt(2).id], {prompt(1).id}) == (
        [ps.prompt.id for ps in again.undelivered(state)],
        DeliveredKeys(again.files.delivered).closed,
    )
    again.release()


def test_closed_ids_are_written_once_and_a_torn_one_is_dropped(home: Path) -> None:
    """`record_closed` appends only the ids not recorded yet, in one write; a line torn by a
    crash is no id, and the next write starts on a new line; delivered keys stay apart."""
    path = home / "bob.delivered"
    path.write_bytes(b"b alice one\nclosed two\nclosed thr")
    keys = DeliveredKeys(path)
    assert ({"b alice one"}, {"two"}) == (keys.keys, keys.closed)
    keys.record_closed(["two", "four", "five"])
    keys.record_closed(["four"])
    assert b"b alice one\nclosed two\nclosed five\nclosed four\n" == path.read_bytes()
    again = DeliveredKeys(path)
    assert ({"b alice one"}, {"two", "four", "five"}) == (again.keys, again.closed)
