"""Catch-up from a checkpoint gives exactly what a cold fold gives."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from paneboard.board.view import BoardView
from paneboard.protocol.posts import Ack, Answer, Cancel, Delivered, Post, Prompt, Undelivered
from paneboard.state.filelog.log import append_posts, read_posts
from paneboard.state.filelog.store import FileStore
from paneboard.state.fold import BoardState, fold, open_for, prune
from paneboard.state.panes import checkpoint
from tests.factories import prompt

AGENTS = ["alice", "bob", "carol"]
PIDS = [f"p{i:025d}" for i in range(8)]


@st.composite
def boards(draw: st.DrawFn) -> list[Post]:
    out: list[Post] = []
    fresh = iter(PIDS)  # prompt ids are unique on a board (see state/fold.py)
    for n in range(draw(st.integers(1, 40))):
        who = draw(st.sampled_from(AGENTS))
        target = draw(st.sampled_from(PIDS))
        kind = draw(
            st.sampled_from(
                ["prompt", "prompt", "ack", "answer", "cancel", "delivered", "undelivered"]
            )
        )
        head = {"id": f"x{n:025d}", "board": "b", "sender": who, "ts": float(n)}
        if kind == "prompt" and (new := next(fresh, "")):
            to = tuple(draw(st.lists(st.sampled_from(AGENTS), min_size=1, max_size=3, unique=True)))
            expires = draw(st.none() | st.floats(0, 60))
            out.append(
                Prompt(
                    **head,
                    to=to,
                    body="b",
                    priority=draw(st.sampled_from(["low", "normal", "high", "urgent"])),
                    expires=expires,
                )
            )  # type: ignore[arg-type]
            head = {**head, "id": new}
            priority = out[-1].priority  # type: ignore[attr-defined]
            out[-1] = Prompt(  # type: ignore[arg-type]
                **head, to=to, body="b", priority=priority, expires=expires
            )
        elif kind in ("ack", "prompt"):
            out.append(Ack(**head, prompt_id=target))  # type: ignore[arg-type]
        elif kind == "answer":
            out.append(Answer(**head, prompt_id=target, body="a"))  # type: ignore[arg-type]
        elif kind == "cancel":
            out.append(Cancel(**head, prompt_id=target))  # type: ignore[arg-type]
        elif kind == "delivered":
            out.append(Delivered(**head, prompt_id=target, door="stdout"))  # type: ignore[arg-type]
        else:
            reason = {"door": "stdout", "reason": "r"}
            out.append(Undelivered(**head, prompt_id=target, **reason))  # type: ignore[arg-type]
    return out


def _open_ids(state: BoardState, now: float) -> list[str]:
    return [ps.prompt.id for ps in open_for(state, "bob", now)]


@settings(max_examples=100, deadline=None)
@given(boards(), st.data(), st.floats(0, 60))
def test_checkpoint_then_rest_equals_cold_fold(
    posts: list[Post], data: st.DataObject, now: float
) -> None:
    split = data.draw(st.integers(0, len(posts)))
    saved_at = data.draw(st.floats(0, 60))
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "b"  # board `b`'s folder
        folder.mkdir()
        log, cp = folder / "log", folder / "bob.checkpoint"
        append_posts(log, posts[:split])  # with none, a log holding only its generation
        with BoardView(FileStore(folder), BoardState(keep_closed=False, recipient="bob")) as first:
            first.refresh()
            checkpoint.save(cp, FileStore(folder), prune(first.state, min(saved_at, now)))
        if posts[split:]:
            append_posts(log, posts[split:])
        loaded = checkpoint.load(cp, FileStore(folder))
        assert loaded is not None
        with (
            BoardView(FileStore(folder), loaded) as warm,
            BoardView(FileStore(folder), BoardState(keep_closed=False, recipient="bob")) as cold,
        ):
            warm.refresh()
            cold.refresh()
            full = fold(read_posts(log))
            assert _open_ids(full, now) == _open_ids(cold.state, now) == _open_ids(warm.state, now)


def _prompt(pid: str, body: str) -> Prompt:
    return prompt(id=pid, ts=1.0, body=body)


def _checkpoint_at_end(folder: Path) -> Path:
    cp = folder / "cp"
    state = fold(read_posts(folder / "log"))
    state.position = (folder / "log").stat().st_size
    checkpoint.save(cp, FileStore(folder), state)
    assert checkpoint.load(cp, FileStore(folder)) is not None
    return cp


def test_a_log_made_again_in_the_same_inode_is_not_the_old_one(tmp_path: Path) -> None:
    """A board reset (its log emptied and written again) keeps the inode for certain: cold fold."""
    log = tmp_path / "log"
    append_posts(log, [_prompt("a" * 26, "x")])
    cp = _checkpoint_at_end(tmp_path)
    inode, size = log.stat().st_ino, log.stat().st_size
    with open(log, "r+b") as f:  # the same file, emptied: its inode cannot change
        f.truncate(0)
    append_posts(log, [_prompt("b" * 26, "y")])  # a post of equal length: the same size again
    assert (inode, size) == (log.stat().st_ino, log.stat().st_size)
    assert checkpoint.load(cp, FileStore(tmp_path)) is None
    cp.write_bytes(b"garbage")
    assert checkpoint.load(cp, FileStore(tmp_path)) is None


def test_each_compaction_is_a_new_log_even_in_the_old_inode(tmp_path: Path) -> None:
    """Across two compactions, a log put back in its first inode is still not the first log."""
    from paneboard.state.filelog.compact import compact

    tmp_path = tmp_path / "b"  # board `b`'s folder: compaction keeps only its posts
    tmp_path.mkdir()
    log, first = tmp_path / "log", tmp_path / "first-inode"
    append_posts(log, [_prompt("a" * 26, "x"), _prompt("b" * 26, "y")])
    cp = _checkpoint_at_end(tmp_path)
    os.link(log, first)  # keeps the first inode alive, to put the compacted bytes back into it
    for _ in range(2):
        compact(log, now=2.0)
        assert checkpoint.load(cp, FileStore(tmp_path)) is None
        first.write_bytes(log.read_bytes())  # the compacted log, in the checkpoint's inode
        os.replace(first, log)
        os.link(log, first)
        assert checkpoint.load(cp, FileStore(tmp_path)) is None


def test_the_checkpoint_keeps_the_traffic_for_a_deliverer_started_later(tmp_path: Path) -> None:
    """The handovers of the last minute, the links and the arrivals a pane counted come back
    with its checkpoint (a cold start begins with none)."""
    from paneboard.state.panes.pane import Pane
    from paneboard.state.paths import BoardPaths

    p = prompt(1, ts=1.0)
    (tmp_path / "b").mkdir()
    append_posts(tmp_path / "b" / "log", [p])
    store = FileStore(tmp_path / "b")
    clock = [1000.0]
    pane = Pane(BoardPaths(tmp_path, "b"), "bob", store, now=lambda: clock[0])
    pane.paths.ensure()
    state, traffic = pane.start()
    with BoardView(store, state, traffic=traffic) as view:
        view.refresh()
    traffic.handed_over("alice", p.id, 990.0)
    pane.save_checkpoint(view.state, traffic)
    later = Pane(BoardPaths(tmp_path, "b"), "bob", store, now=lambda: clock[0])
    _, kept = later.start()
    assert ((990.0,), [p.id]) == (kept.recent("alice"), list(kept.links))
    assert traffic.arrivals == kept.arrivals
    assert 1000.0 == kept.floor
    pane.files.checkpoint.unlink()
    cold = Pane(BoardPaths(tmp_path, "b"), "bob", store, now=lambda: clock[0])
    _, none = cold.start()
    assert ((), {}) == (none.recent("alice"), none.links)
