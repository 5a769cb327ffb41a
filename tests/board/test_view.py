"""The watcher and the board view, in-process on anyio: woken by the kernel, never by a sleep."""

from __future__ import annotations

import warnings
from pathlib import Path

import anyio
import pytest

from paneboard.board.view import BoardView
from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.log import LogReader, append_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.fold import BoardState, fold
from paneboard.state.panes.delivered import DeliveredKeys
from tests.factories import prompt

pytestmark = pytest.mark.anyio


def _board_folder(tmp_path: Path) -> Path:
    """Board `b`'s folder (tests.factories' board): a store reads only its own board's posts."""
    folder = tmp_path / "b"
    folder.mkdir()
    return folder


async def test_an_append_wakes_the_view(tmp_path: Path) -> None:
    """A view waiting on the log returns after another writer appends, and sees the post."""
    tmp_path = _board_folder(tmp_path)
    with anyio.fail_after(5), BoardView(FileStore(tmp_path)) as view:
        assert [] == view.refresh().posts
        assert view.follower.watcher.uses_inotify
        async with anyio.create_task_group() as tg:
            tg.start_soon(view.wait_changed)
            await anyio.wait_all_tasks_blocked()
            append_posts(tmp_path / "log", [prompt(1)])
        assert [prompt(1)] == [p for _, p in view.refresh().posts]


async def test_other_files_in_the_folder_do_not_wake_it(tmp_path: Path) -> None:
    """Only the log matters: writing another file leaves the view asleep."""
    with anyio.fail_after(5), BoardView(FileStore(tmp_path)) as view:
        (tmp_path / "unrelated").write_text("x")
        with anyio.move_on_after(0.2) as scope:
            await view.wait_changed()
        assert scope.cancelled_caught


def test_delivered_keys_survive_a_torn_line(tmp_path: Path) -> None:
    """A key cut short by a crash is not a key; the next record starts on a new line."""
    path = tmp_path / "bob.delivered"
    path.write_bytes(b"b alice one\nb alice tw")
    keys = DeliveredKeys(path)
    assert {"b alice one"} == keys.keys
    keys.record("b alice three")
    assert {"b alice one", "b alice three"} == DeliveredKeys(path).keys


async def test_without_inotify_the_view_polls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where inotify is missing, a change is still seen (by a slow poll of the log's size)."""
    from paneboard.state import watch

    monkeypatch.setattr(watch, "inotify_watch", lambda folder, mask: None)
    tmp_path = _board_folder(tmp_path)
    with anyio.fail_after(5), BoardView(FileStore(tmp_path)) as view:
        assert not view.follower.watcher.uses_inotify
        view.refresh()
        async with anyio.create_task_group() as tg:
            tg.start_soon(view.wait_changed)
            await anyio.wait_all_tasks_blocked()
            append_posts(tmp_path / "log", [prompt(2)])
        assert [prompt(2)] == [p for _, p in view.refresh().posts]


def test_a_prompt_folded_before_the_checkpoint_is_read_again_alone(tmp_path: Path) -> None:
    """A pane's view started from a fold that holds a prompt but not its bytes reads them at the
    prompt's position: the record itself, not the records after it (a damaged one among them,
    which a reader of the whole log warns of, is not even decoded)."""
    folder = _board_folder(tmp_path)
    others = [encode(prompt(n, to=("carol",))) for n in range(2, 400)]
    hostile = b"\x83\xa4kind\xa6prompt\xa6sender\xa5carol\xa2ts\xa1x"  # to carol, damaged
    append_payloads(folder / "log", [encode(prompt(1)), hostile, *others])
    with warnings.catch_warnings(record=True) as whole:
        warnings.simplefilter("always")
        records = [r for batch in LogReader(folder / "log", board="b").records() for r in batch]
    assert [DamagedRecord] == [w.category for w in whole]
    state = fold(
        [(p, post) for p, post, _ in records], BoardState(keep_closed=False, recipient="bob")
    )
    with BoardView(FileStore(folder), state) as view, warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert records[0][2] == view.payload(state.prompts[prompt(1).id])
    assert [] == got
