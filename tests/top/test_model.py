"""What `top` shows, as pure functions of the posts: rows in order, counts, threads, ages."""

from __future__ import annotations

from typing import Any

from paneboard.protocol.posts import Ack, Answer, Cancel, Delivered, Post, Prompt, Read, Seen
from paneboard.state.fold import BoardState, apply
from paneboard.top.model import TopModel, age_changes_in, age_text, stage_since
from tests import factories


def prompt(n: int, **fields: Any) -> Prompt:
    return factories.prompt(n, id=f"p{n:025d}", **fields)


def feed(model: TopModel, posts: list[Post], now: float = 100.0) -> None:
    items = [(model.state.position + i, post) for i, post in enumerate(posts)]
    for position, post in items:
        apply(model.state, position, post)
    model.take(items, now)


def head(n: int, sender: str) -> dict[str, object]:
    return {"id": f"x{n:025d}", "board": "b", "sender": sender, "ts": float(n)}


def test_rows_keep_delivery_order_as_prompts_come_and_go() -> None:
    """Urgent first, then oldest first; a closed prompt leaves, the order of the rest holds."""
    model = TopModel(BoardState())
    feed(model, [prompt(1), prompt(2, priority="urgent"), prompt(3, priority="low"), prompt(4)])
    assert [prompt(n).id for n in (2, 1, 4, 3)] == list(model.rows)
    feed(model, [Ack(**head(5, "bob"), prompt_id=prompt(1).id)])  # type: ignore[arg-type]
    assert [prompt(n).id for n in (2, 4, 3)] == list(model.rows)


def test_open_counts_follow_each_recipient() -> None:
    """A prompt to two agents counts for each until that one closes it; a cancel ends both."""
    model = TopModel(BoardState())
    feed(model, [prompt(1, to=("bob", "carol")), prompt(2, to=("carol",))])
    assert (1, 2) == (model.open_count["bob"], model.open_count["carol"])
    answer = Answer(**head(3, "carol"), prompt_id=prompt(1).id, body="done")  # type: ignore[arg-type]
    feed(model, [answer])
    assert (1, 1) == (model.open_count["bob"], model.open_count["carol"])
    feed(model, [Cancel(**head(4, "alice"), prompt_id=prompt(2).id)])  # type: ignore[arg-type]
    assert (1, 0) == (model.open_count["bob"], model.open_count["carol"])


def test_expiry_takes_a_prompt_out_at_its_time() -> None:
    """`expire(now)` past a prompt's expiry removes it from the rows and the counts."""
    model = TopModel(BoardState())
    feed(model, [prompt(1, expires=150.0), prompt(2)])
    assert 150.0 == model.next_expiry()
    assert not model.expire(149.0)
    assert model.expire(150.0)
    assert [prompt(2).id] == list(model.rows)
    assert 1 == model.open_count["bob"]


def test_threads_group_by_name_and_by_reply() -> None:
    """A thread: the prompts sharing a name, and replies to them; its posts in log order."""
    model = TopModel(BoardState())
    first = prompt(1, thread="retry")
    reply = prompt(2, to=("alice",), sender="bob", reply_to=first.id)
    receipt = Delivered(**head(3, "bob"), prompt_id=first.id, door="stdout")  # type: ignore[arg-type]
    feed(model, [first, reply, receipt, prompt(4, thread="other"), prompt(5, thread="retry")])
    assert [first.id, reply.id, receipt.id, prompt(5).id] == [
        p.id for _, p in model.thread(reply.id)
    ]


def test_a_filter_shows_one_agents_prompts_and_posts() -> None:
    """With an agent chosen, rows and posts are those sent by it or to it."""
    model = TopModel(BoardState())
    feed(model, [prompt(1), prompt(2, to=("carol",)), prompt(3, sender="carol", to=("dave",))])
    model.set_filter("carol", None)
    assert [prompt(2).id, prompt(3).id] == list(model.rows)
    assert [prompt(2).id, prompt(3).id] == [p.id for _, p in model.shown_posts()]
    feed(model, [prompt(6, to=("bob",)), prompt(7, to=("carol",))])
    assert [prompt(n).id for n in (2, 3, 7)] == list(model.rows)


def test_ages_read_in_the_largest_unit_and_say_when_they_change() -> None:
    """42s, 7m, 3h, 2d; the next change comes when the shown number does."""
    assert ["0s", "42s", "7m", "3h", "2d"] == [
        age_text(s) for s in (0, 42.5, 420, 3 * 3600, 2 * 86400)
    ]
    assert [0.5, 1.0, 60.0] == [age_changes_in(s) for s in (42.5, 59.0, 120.0)]


def test_a_prompt_past_the_rate_shows_until_when_it_waits() -> None:
    """Two handed over within the minute at a rate of 2: the third waits until the first is a
    minute old, as `status` counts it; once handed over it no longer waits."""
    model = TopModel(BoardState())
    model.rates["bob"] = 2
    posts: list[Post] = []
    for n in (1, 2):
        posts += [
            prompt(n),
            Delivered(**head(10 + n, "bob"), prompt_id=prompt(n).id, door="stdout"),
        ]  # type: ignore[arg-type]
    feed(model, [*posts, prompt(3)])
    third = model.state.prompts[prompt(3).id]
    assert (71.0, None) == (
        model.waits_until(third, "bob", 30.0),
        model.waits_until(model.state.prompts[prompt(1).id], "bob", 30.0),
    )
    assert model.waits_until(third, "bob", 72.0) is None


def test_the_agents_pane_says_a_listener_is_asleep_or_woken() -> None:
    """A listener whose session ended is not shown as listening: asleep (a prompt wakes its
    session) or woken (its session started again), with its pid and door as for any listener."""
    from paneboard.board.who import WhoRow
    from paneboard.top.rows import AgentSource

    source = AgentSource(TopModel(BoardState()))
    source.rows = [
        WhoRow("bob", listening=True, pid=7, door="claude-wake", sleep="asleep"),
        WhoRow("carol", listening=True, pid=8, door="claude-wake", sleep="woken"),
        WhoRow("dave", listening=True, pid=9, door="claude-inbox"),
        WhoRow("erin", sleep="asleep"),  # a stale record with no listener: not asleep
    ]
    lines = [source.line(i, 100.0).plain for i in range(4)]
    states = [" ".join(line.split()[3:5]) for line in lines]
    assert ["◐ asleep", "◑ woken", "● listening", "○ no"] == states, lines
    assert "pid 7" in lines[0] and "door claude-wake" in lines[0]
    assert "listening" not in lines[0] + lines[1]
    assert source.stamp(0, 100.0) != source.stamp(2, 100.0)


def test_each_stage_begins_at_its_own_time() -> None:
    """A recipient's stage began when it reached it: posted at the prompt's time, then each
    receipt's; a cancel at the cancel's, an expiry at the expiry."""
    model = TopModel(BoardState())
    feed(model, [prompt(1, to=("bob", "carol")), prompt(2, expires=50.0)])
    ps = model.state.prompts[prompt(1).id]
    assert (1.0, 1.0) == (stage_since(ps, "bob", 5.0), stage_since(ps, "carol", 5.0))
    pid = prompt(1).id
    feed(
        model,
        [
            Delivered(**head(3, "bob"), prompt_id=pid, door="stdout"),  # type: ignore[arg-type]
            Seen(**head(4, "bob"), prompt_id=pid, door="stdout", source="x"),  # type: ignore[arg-type]
            Read(**head(7, "bob"), prompt_id=pid, via="cli"),  # type: ignore[arg-type]
        ],
    )
    assert 7.0 == stage_since(ps, "bob", 8.0)
    feed(model, [Cancel(**head(9, "alice"), prompt_id=pid)])  # type: ignore[arg-type]
    assert (9.0, 9.0) == (stage_since(ps, "bob", 10.0), stage_since(ps, "carol", 10.0))
    assert 50.0 == stage_since(model.state.prompts[prompt(2).id], "bob", 60.0)
