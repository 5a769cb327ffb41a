"""The fold: open prompts, catch-up order, lifecycle; time passed in."""

from __future__ import annotations

from paneboard.protocol.posts import Ack, Answer, Cancel, Delivered, Post, Prompt, Undelivered
from paneboard.state.fold import BoardState, fold, open_for, prune, stage


def prompt(
    pid: str,
    *,
    to: tuple[str, ...] = ("bob",),
    priority: str = "normal",
    expires: float | None = None,
    sender: str = "alice",
) -> Prompt:
    return Prompt(
        id=pid,
        board="b",
        sender=sender,
        ts=1.0,
        to=to,
        body="x",
        priority=priority,
        expires=expires,
    )  # type: ignore[arg-type]  # test data


def _fold(*posts: Post, keep_closed: bool = True) -> BoardState:
    return fold(enumerate(posts), BoardState(keep_closed=keep_closed))


def test_catch_up_order_is_priority_then_log_order() -> None:
    """Urgent first, then oldest first within a priority."""
    state = _fold(
        prompt("a", priority="low"),
        prompt("b"),
        prompt("c", priority="urgent"),
        prompt("d"),
        prompt("e", priority="high"),
    )
    assert ["c", "e", "b", "d", "a"] == [ps.prompt.id for ps in open_for(state, "bob", now=2.0)]


def test_ack_answer_cancel_expiry_close_a_prompt() -> None:
    """Each way of closing removes the prompt from the open list."""
    state = _fold(
        prompt("a"),
        prompt("b"),
        prompt("c"),
        prompt("d", expires=5.0),
        prompt("e"),
        Ack(id="1", board="b", sender="bob", ts=2.0, prompt="a"),
        Answer(id="2", board="b", sender="bob", ts=2.0, prompt="b", body="done"),
        Cancel(id="3", board="b", sender="alice", ts=2.0, prompt="c"),
    )
    assert ["d", "e"] == [ps.prompt.id for ps in open_for(state, "bob", now=4.0)]
    assert ["e"] == [ps.prompt.id for ps in open_for(state, "bob", now=5.0)]
    assert ["acked", "answered", "cancelled", "expired", "posted"] == [
        stage(state.prompts[p], "bob", 6.0) for p in "abcde"
    ]


def test_posts_that_break_the_rules_change_nothing() -> None:
    """An ack by a non-recipient and a cancel by a non-sender are ignored."""
    state = _fold(
        prompt("a"),
        Ack(id="1", board="b", sender="mallory", ts=2.0, prompt="a"),
        Cancel(id="2", board="b", sender="bob", ts=2.0, prompt="a"),
        Ack(id="3", board="b", sender="bob", ts=2.0, prompt="unknown"),
    )
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=2.0)]


def test_undelivered_keeps_a_prompt_open_and_delivered_wins() -> None:
    """`undelivered` does not close; a later receipt replaces it; a closed prompt stays closed."""
    state = _fold(
        prompt("a"),
        Undelivered(
            id="1", board="b", sender="bob", ts=2.0, prompt="a", door="exec", reason="boom"
        ),
    )
    assert "undelivered" == stage(state.prompts["a"], "bob", 3.0)
    state = fold(
        [(9, Delivered(id="2", board="b", sender="bob", ts=3.0, prompt="a", door="exec"))], state
    )
    assert "delivered" == stage(state.prompts["a"], "bob", 3.0)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=3.0)]


def test_each_recipient_closes_for_itself() -> None:
    """bob's ack leaves the prompt open for carol."""
    state = _fold(
        prompt("a", to=("bob", "carol")), Ack(id="1", board="b", sender="bob", ts=2.0, prompt="a")
    )
    assert [] == open_for(state, "bob", 2.0)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "carol", 2.0)]


def test_a_listener_fold_drops_finished_prompts() -> None:
    """With keep_closed=False only prompts someone can still receive are kept."""
    state = _fold(
        prompt("a"),
        prompt("b"),
        prompt("c", expires=3.0),
        Ack(id="1", board="b", sender="bob", ts=2.0, prompt="a"),
        keep_closed=False,
    )
    assert {"b", "c"} == set(state.prompts)
    assert {"b"} == set(prune(state, now=4.0).prompts)


def test_a_repeated_prompt_id_is_kept_once() -> None:
    """A post stored twice (a retried publish) is one prompt, at its first position."""
    state = fold([(0, prompt("a")), (5, prompt("a"))])
    assert 0 == state.prompts["a"].seq
