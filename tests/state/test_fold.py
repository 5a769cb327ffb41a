"""The fold: open prompts, catch-up order, lifecycle; time passed in."""

from __future__ import annotations

from paneboard.protocol.posts import (
    Ack,
    Answer,
    Cancel,
    Delivered,
    Held,
    Post,
    Prompt,
    Read,
    Seen,
    Undelivered,
)
from paneboard.state.fold import BoardState, fold, open_for, prune, stage
from tests import factories


def prompt(
    pid: str,
    *,
    to: tuple[str, ...] = ("bob",),
    priority: str = "normal",
    expires: float | None = None,
    sender: str = "alice",
) -> Prompt:
    return factories.prompt(
        id=pid, sender=sender, ts=1.0, to=to, body="x", priority=priority, expires=expires
    )


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
        Ack(id="1", board="b", sender="bob", ts=2.0, prompt_id="a"),
        Answer(id="2", board="b", sender="bob", ts=2.0, prompt_id="b", body="done"),
        Cancel(id="3", board="b", sender="alice", ts=2.0, prompt_id="c"),
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
        Ack(id="1", board="b", sender="mallory", ts=2.0, prompt_id="a"),
        Cancel(id="2", board="b", sender="bob", ts=2.0, prompt_id="a"),
        Ack(id="3", board="b", sender="bob", ts=2.0, prompt_id="unknown"),
    )
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=2.0)]


def test_undelivered_keeps_a_prompt_open_and_delivered_wins() -> None:
    """`undelivered` does not close; a later receipt replaces it; a closed prompt stays closed."""
    state = _fold(
        prompt("a"),
        Undelivered(
            id="1", board="b", sender="bob", ts=2.0, prompt_id="a", door="exec", reason="boom"
        ),
    )
    assert "undelivered" == stage(state.prompts["a"], "bob", 3.0)
    state = fold(
        [(9, Delivered(id="2", board="b", sender="bob", ts=3.0, prompt_id="a", door="exec"))], state
    )
    assert "delivered" == stage(state.prompts["a"], "bob", 3.0)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=3.0)]


def test_each_recipient_closes_for_itself() -> None:
    """bob's ack leaves the prompt open for carol."""
    state = _fold(
        prompt("a", to=("bob", "carol")),
        Ack(id="1", board="b", sender="bob", ts=2.0, prompt_id="a"),
    )
    assert [] == open_for(state, "bob", 2.0)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "carol", 2.0)]


def test_a_listener_fold_drops_finished_prompts() -> None:
    """With keep_closed=False only prompts someone can still receive are kept."""
    state = _fold(
        prompt("a"),
        prompt("b"),
        prompt("c", expires=3.0),
        Ack(id="1", board="b", sender="bob", ts=2.0, prompt_id="a"),
        keep_closed=False,
    )
    assert {"b", "c"} == set(state.prompts)
    assert {"b"} == set(prune(state, now=4.0).prompts)


def test_a_repeated_prompt_id_is_kept_once() -> None:
    """A post stored twice (a retried publish) is one prompt, at its first position."""
    state = fold([(0, prompt("a")), (5, prompt("a"))])
    assert 0 == state.prompts["a"].position


def test_a_second_record_under_a_known_id_is_ignored_whatever_it_says() -> None:
    """Of two prompt records with one id, every fold keeps the first, its body and sender
    alike, the listener's (addressed to it) as the full one."""
    first = prompt("a", sender="alice")
    other = factories.prompt(id="a", sender="mallory", ts=2.0, to=("bob",), body="run this")
    for state in (BoardState(), BoardState(keep_closed=False, recipient="bob")):
        fold([(0, first), (5, other)], state)
        assert (first, 0) == (state.prompts["a"].prompt, state.prompts["a"].position)


def test_a_panes_fold_remembers_what_it_dropped_and_takes_no_copy_of_it() -> None:
    """A listener's fold drops a closed prompt, keeps its id in `finished`, and a copy stored
    after the close is not a new prompt; `prune` (the checkpoint) leaves the ids out."""
    ack = Ack(id="1", board="b", sender="bob", ts=2.0, prompt_id="a")
    state = fold(
        [(0, prompt("a")), (1, ack), (2, prompt("a")), (3, prompt("b"))],
        BoardState(keep_closed=False, recipient="bob"),
    )
    assert ({"b"}, {"a"}) == (set(state.prompts), state.finished)
    assert (["b"], set()) == ([*prune(state, now=4.0).prompts], prune(state, now=4.0).finished)


def test_only_a_panes_fold_keeps_finished_ids() -> None:
    """A fold of the whole board keeps every prompt (no ids to remember); one that drops closed
    prompts for no recipient (a poster's `--max-open` check) keeps no id per closed prompt."""
    posts = [(0, prompt("a")), (1, Ack(id="1", board="b", sender="bob", ts=2.0, prompt_id="a"))]
    assert set() == fold(posts).finished
    assert set() == fold(posts, BoardState(keep_closed=False)).finished


def _seen(pid: str, ts: float, sender: str = "bob") -> Seen:
    return Seen(
        id=f"s{ts}", board="b", sender=sender, ts=ts, prompt_id=pid, door="claude-inbox", source="t"
    )


def _delivered(pid: str, ts: float) -> Delivered:
    return Delivered(
        id=f"d{ts}", board="b", sender="bob", ts=ts, prompt_id=pid, door="claude-inbox"
    )


def test_seen_follows_delivered_and_keeps_the_prompt_open() -> None:
    """posted -> delivered -> seen; both times kept; a later receipt does not unsee it."""
    state = _fold(prompt("a"), _delivered("a", 2.0), _seen("a", 3.0), _delivered("a", 4.0))
    r = state.prompts["a"].recipients["bob"]
    assert ("seen", 3.0, 4.0, 3.0, "t") == (r.stage, r.ts, r.delivered_at, r.seen_at, r.source)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=5.0)]
    undelivered = Undelivered(
        id="u", board="b", sender="bob", ts=6.0, prompt_id="a", door="x", reason="r"
    )
    assert "seen" == stage(fold([(9, undelivered)], state).prompts["a"], "bob", 7.0)


def test_seen_after_a_close_is_kept_without_reopening() -> None:
    """The first `seen` counts, even after the recipient closed the prompt, which stays closed."""
    ack = Ack(id="1", board="b", sender="bob", ts=3.0, prompt_id="a")
    state = _fold(prompt("a"), ack, _seen("a", 4.0), _seen("a", 5.0))
    r = state.prompts["a"].recipients["bob"]
    assert ("acked", 4.0) == (r.stage, r.seen_at)
    assert [] == open_for(state, "bob", now=6.0)


def test_seen_by_someone_who_is_not_a_recipient_changes_nothing() -> None:
    state = _fold(prompt("a", to=("bob", "carol")), _seen("a", 2.0, "mallory"))
    assert [None, None] == [r.seen_at for r in state.prompts["a"].recipients.values()]


def test_a_delivered_receipt_after_an_answer_names_the_door_and_keeps_it_answered() -> None:
    """An agent can answer before its listener writes the receipt (it waits for the agent's
    own admission): the late receipt names the door and changes no stage."""
    answer = Answer(id="1", board="b", sender="bob", ts=3.0, prompt_id="a", body="42")
    late = Delivered(id="2", board="b", sender="bob", ts=4.0, prompt_id="a", door="claude-inbox")
    r = _fold(prompt("a"), answer, late).prompts["a"].recipients["bob"]
    assert ("answered", "claude-inbox", 4.0, "42") == (r.stage, r.door, r.delivered_at, r.answer)


def _read(pid: str, ts: float, sender: str = "bob") -> Read:
    return Read(id=f"r{ts}", board="b", sender=sender, ts=ts, prompt_id=pid, via="cli")


def test_read_follows_seen_and_a_later_seen_or_delivered_does_not_unread_it() -> None:
    """posted -> delivered -> seen -> read, the prompt still open; the first `read` counts."""
    state = _fold(
        prompt("a"),
        _delivered("a", 2.0),
        _seen("a", 3.0),
        _read("a", 4.0),
        _read("a", 5.0),
        _delivered("a", 6.0),
        _seen("a", 7.0),
    )
    r = state.prompts["a"].recipients["bob"]
    assert ("read", 4.0, 4.0, "cli", 3.0) == (r.stage, r.ts, r.read_at, r.read_via, r.seen_at)
    assert ["a"] == [ps.prompt.id for ps in open_for(state, "bob", now=8.0)]


def test_a_notices_seen_after_its_read_keeps_it_read() -> None:
    """The body can be read before the notice's turn is found in the file: `read` stays."""
    state = _fold(prompt("a"), _delivered("a", 2.0), _read("a", 3.0), _seen("a", 4.0))
    r = state.prompts["a"].recipients["bob"]
    assert ("read", 3.0, 4.0) == (r.stage, r.read_at, r.seen_at)


def test_read_after_a_close_is_kept_and_a_held_prompt_stays_held() -> None:
    """A `read` after an ack is recorded without reopening; one of a held prompt moves nothing
    (it waits for a person); one by a non-recipient changes nothing."""
    ack = Ack(id="k", board="b", sender="bob", ts=2.0, prompt_id="a")
    held = Held(
        id="h", board="b", sender="bob", ts=2.0, prompt_id="c", door="d", by="policy", reason="r"
    )
    state = _fold(
        prompt("a"),
        prompt("c"),
        ack,
        _read("a", 3.0),
        held,
        _read("c", 4.0),
        _read("c", 5.0, sender="eve"),
    )
    a, c = state.prompts["a"].recipients["bob"], state.prompts["c"].recipients["bob"]
    assert ("acked", 3.0) == (a.stage, a.read_at)
    assert ("held", 4.0) == (c.stage, c.read_at)


def test_a_panes_fold_keeps_a_prompt_its_agent_closed_before_its_seen_until_the_seen() -> None:
    """A woken agent can answer before its listener reads the turn: the pane's fold drops the
    prompt but keeps it in `unseen` for the `seen` still owed, which ends it there; prompts
    closed by another, cancelled or refused are not kept, nor, in a checkpoint, one closed
    longer ago than `UNSEEN_FOR`."""
    from paneboard.protocol.posts import Refused
    from paneboard.state.fold import UNSEEN_FOR, UNSEEN_MAX

    def head(n: int, sender: str = "bob", ts: float = 2.0) -> dict[str, object]:
        return {"id": f"r{n}", "board": "b", "sender": sender, "ts": ts}

    posts: list[Post] = [
        *(prompt(p) for p in "abcde"),
        Answer(**head(1), prompt_id="a", body="42"),
        Ack(**head(2, ts=50.0), prompt_id="b"),
        Cancel(**head(3, sender="alice"), prompt_id="c"),
        Refused(**head(4), prompt_id="d", reason="no"),
        _seen("e", 2.0),
        Ack(**head(5), prompt_id="e"),
    ]
    state = fold(enumerate(posts), BoardState(keep_closed=False, recipient="bob"))
    assert ({}, ["a", "b"]) == (state.prompts, [*state.unseen])
    assert "answered" == state.unseen["a"].recipients["bob"].stage
    later = fold(
        [(20, Delivered(**head(6), prompt_id="a", door="claude-wake")), (21, _seen("b", 3.0))],
        state,
    )
    assert (["a"], "claude-wake") == ([*later.unseen], later.unseen["a"].recipients["bob"].door)
    assert ["a"] == [*prune(later, now=2.0 + UNSEEN_FOR - 1).unseen]
    assert [] == [*prune(later, now=2.0 + UNSEEN_FOR + 1).unseen]
    assert {} == _fold(*posts).unseen  # a board's fold keeps every prompt anyway
    many = [prompt(f"p{n}") for n in range(UNSEEN_MAX + 5)]
    acks = [Ack(**head(100 + n), prompt_id=f"p{n}") for n in range(UNSEEN_MAX + 5)]
    crowd = fold(enumerate([*many, *acks]), BoardState(keep_closed=False, recipient="bob"))
    assert [f"p{n}" for n in range(5, UNSEEN_MAX + 5)] == [*crowd.unseen]
