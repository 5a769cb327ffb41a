"""`top` counts what `status` counts: a forged or unsigned post about a prompt moves no stage
in its fold, and the posts pane and the thread mark it as not counted."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from paneboard.board.context import Context
from paneboard.state.fold import stage
from paneboard.top.app import TopApp
from paneboard.top.model import not_counted
from testing.helpers import run_cli
from tests.forgeries import forged_board
from tests.top.test_app import SIZE, until

pytestmark = pytest.mark.anyio


async def test_forged_and_unsigned_posts_move_no_stage_in_top(
    home: Path, tmp_path: Path, store_url: str
) -> None:
    """A forged answer, refused and cancel and an unsigned ack and `delivered`: each prompt
    stays posted for bob and open, as `status` has it; bob's genuine answer closes its own."""
    board = forged_board(home, tmp_path / "other")
    app = TopApp(Context.resolve(str(home), "test", "alice", store=store_url))
    async with app.run_test(size=SIZE) as pilot:
        with anyio.fail_after(20):
            await app.loaded.wait()
        text = await until(pilot, app, lambda t: "open prompts 4" in t)
        prompts = app.model.state.prompts
        now = time.time()
        stages = {
            pid: stage(prompts[pid], "bob", now)
            for pid in (board.forged_answer, board.forged_refused, board.forged_cancel)
        }
        stages[board.unsigned] = stage(prompts[board.unsigned], "bob", now)
        answered = stage(prompts[board.answered], "bob", now)
        marks = {post.id: not_counted(post, prompts) for _, post in app.model.recent}
        shown = [app.post_rows.line(i, now).plain for i in range(len(app.post_rows))]
        thread = app._thread_text(board.forged_answer).plain
    assert dict.fromkeys(stages, "posted") == stages
    assert "answered" == answered
    assert 4 == app.model.open_count["bob"]
    assert board.posts == {pid: mark for pid, mark in marks.items() if mark is not None}
    assert [None] == [marks[pid] for pid in board.verified]
    assert 3 == sum("[not counted: forged]" in line for line in shown)
    assert 2 == sum("[not counted: unsigned]" in line for line in shown)
    assert "[not counted: forged]" in thread
    assert "open prompts 4" in text
    for pid in stages:  # what `status` says of the same prompts, in the same home
        done = run_cli(home, "status", pid)
        assert " bob              posted " in done.stdout + " ", done.stdout
