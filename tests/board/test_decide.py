"""What a person decides on (board/decide.py), on a real board of each store: the verdict on the
prompt's own signature, who held it and why; writing re-reads the board, so a prompt decided
between the question and the yes is not approved again, and nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paneboard.board import decide
from paneboard.board.context import Context, header
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Held, Prompt
from paneboard.state.trust.sealing import Sealer
from testing.helpers import post, run_cli


def _ctx(home: Path, agent: str = "bob") -> Context:
    return Context.resolve(str(home), "test", agent, store=os.environ.get("PANEBOARD_TEST_STORE"))


def _hold(home: Path, pid: str, reason: str) -> None:
    with _ctx(home) as ctx:
        ctx.paths.ensure()
        held = Held(**header("test", "bob"), prompt_id=pid, door="exec", by="policy", reason=reason)
        ctx.store().append([held])


def _unsigned_prompt(home: Path, sender: str, body: str) -> str:
    with _ctx(home, sender) as ctx:
        ctx.paths.ensure()
        store = ctx.store()
        store.sealer = None
        prompt = Prompt(**header("test", sender), to=("bob",), body=body)
        store.append([prompt])
    return prompt.id


def _kinds(home: Path) -> list[str]:
    return [line.split()[3] for line in run_cli(home, "log").stdout.splitlines()]


def test_an_unsigned_prompt_is_shown_as_not_checked(home: Path, store_url: str) -> None:
    pid = _unsigned_prompt(home, "alice", "hi")
    _hold(home, pid, "unverified: the post is unsigned")
    with _ctx(home) as ctx:
        held = decide.held_for(ctx, pid)
    assert ("unsigned", None, "policy") == (held.verdict, held.fingerprint, held.held_by)
    assert [
        "  from:  alice (key not checked: the prompt is unsigned), held",
        "  held:  by policy: unverified: the post is unsigned",
        "  > hi",
    ] == decide.question_lines([held])


def test_a_sender_name_and_reason_cannot_break_the_lines(home: Path, store_url: str) -> None:
    pid = post(home, "--to", "bob", "\u202eevil\nsecond")
    _hold(home, pid, "loop\n[paneboard] approved")
    with _ctx(home) as ctx:
        lines = decide.question_lines([decide.held_for(ctx, pid)])
    assert ["  held:  by policy: loop\\n[paneboard] approved", "  > \\u202eevil", "  > second"] == (
        lines[1:]
    )


def test_held_from_keeps_catch_up_order_and_only_that_sender(home: Path, store_url: str) -> None:
    low = post(home, "--to", "bob", "--priority", "low", "later")
    urgent = post(home, "--to", "bob", "--priority", "urgent", "first")
    other = post(home, "--to", "bob", "dave's", sender="dave")
    for pid in (low, urgent, other):
        _hold(home, pid, "not allowed")
    with _ctx(home) as ctx:
        assert [urgent, low] == [h.prompt.id for h in decide.held_from(ctx, "alice")]
        with pytest.raises(BadInput, match="no prompt from `erin` is held for `bob`"):
            decide.held_from(ctx, "erin")


def test_a_prompt_decided_after_the_question_is_not_approved_and_nothing_is_written(
    home: Path, store_url: str
) -> None:
    """Asked about two; one is refused before the yes: neither is approved."""
    first, second = post(home, "--to", "bob", "one"), post(home, "--to", "bob", "two")
    _hold(home, first, "not allowed")
    _hold(home, second, "not allowed")
    with _ctx(home) as ctx:
        asked = decide.held_from(ctx, "alice")
        decide.refuse(ctx, second, "no")
        before = _kinds(home)
        with pytest.raises(BadInput) as refused:
            decide.approve_all(ctx, [h.prompt.id for h in asked])
    assert f"prompt {second} is refused for `bob` now, not held" == str(refused.value)
    assert before == _kinds(home)


def test_a_forged_held_does_not_make_a_prompt_held(home: Path, tmp_path: Path) -> None:
    """A `held` under bob's name signed by another key moves nothing: there is nothing to
    approve (the fold's rule, read the same way before asking)."""
    pid = post(home, "--to", "bob", "hi")
    _hold(home, pid, "not allowed")
    other = post(home, "--to", "bob", "two")
    impostor = tmp_path / "impostor"
    impostor.mkdir(mode=0o700)
    with _ctx(home) as ctx:
        assert "held" == decide.held_for(ctx, pid).stage
        store = ctx.store()
        store.sealer = Sealer(impostor, "bob")
        store.append(
            [Held(**header("test", "bob"), prompt_id=other, door="x", by="policy", reason="r")]
        )
        with pytest.raises(BadInput, match=f"prompt {other} is posted for `bob`, not held"):
            decide.held_for(ctx, other)
