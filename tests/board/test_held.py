"""`held`: the stage of a prompt the agent holds for its person, as the fold and the commands
show it (a real board log, written as a listener writes it)."""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.board.context import header
from paneboard.protocol.posts import Held, Post, Seen, Undelivered, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.filelog.log import read_posts
from paneboard.state.fold import fold
from paneboard.state.trust.sealing import Sealer
from testing.helpers import post, run_cli

REASON = "crossSessionInbound: hold"


def _held(pid: str) -> Held:
    return Held(
        **header("test", "bob"), prompt_id=pid, door="claude-inbox", by="agent", reason=REASON
    )


def _write(home: Path, *posts: Post) -> None:
    """Append *posts* as their senders' listeners write them: signed with the home's keys."""
    sealer = Sealer(home, "bob")
    append_payloads(home / "test" / "log", [sealer.seal(encode(p), p.sender) for p in posts])


def _bob(home: Path, pid: str) -> dict[str, object]:
    done = run_cli(home, "status", pid, "--json")
    assert 0 == done.returncode, done.stderr
    return dict(json.loads(done.stdout)["recipients"]["bob"])


def test_held_is_a_stage_with_who_holds_it_and_why(home: Path) -> None:
    """A `held` receipt: stage held, by the agent, the reason; `status` says so in words."""
    pid = post(home, "--to", "bob", "wait for a person")
    _write(home, _held(pid))
    got = _bob(home, pid)
    assert ("held", "agent", REASON, "claude-inbox") == (
        got["stage"],
        got["held_by"],
        got["reason"],
        got["door"],
    )
    line = run_cli(home, "status", pid).stdout.splitlines()[1]
    assert f"held by the agent ({REASON}) since " in line, line
    assert line.endswith(", via claude-inbox"), line


def test_a_held_prompt_let_through_goes_on_to_seen(home: Path) -> None:
    """The person lets it through and the model gets it: `seen`, no longer held."""
    pid = post(home, "--to", "bob", "let through")
    seen = Seen(
        **header("test", "bob"), prompt_id=pid, door="claude-inbox", source="claude-transcript"
    )
    _write(home, _held(pid), seen)
    got = _bob(home, pid)
    assert ("seen", None) == (got["stage"], got["held_by"])


def test_a_held_prompt_discarded_is_undelivered_and_stays_open(home: Path) -> None:
    """Discarded after it was held: `undelivered` with the reason; still open for bob."""
    pid = post(home, "--to", "bob", "discarded")
    gone = Undelivered(
        **header("test", "bob"),
        prompt_id=pid,
        door="claude-inbox",
        reason="discarded by its person",
    )
    _write(home, _held(pid), gone)
    got = _bob(home, pid)
    assert ("undelivered", "discarded by its person", None) == (
        got["stage"],
        got["reason"],
        got["held_by"],
    )
    assert [pid] == [
        json.loads(ln)["id"]
        for ln in run_cli(home, "open", "--as", "bob", "--json").stdout.splitlines()
    ]


def test_wait_until_delivered_does_not_return_on_held(home: Path) -> None:
    """Held is not delivered: `wait --until delivered` times out (exit 3)."""
    pid = post(home, "--to", "bob", "held")
    _write(home, _held(pid))
    done = run_cli(home, "wait", pid, "--until", "delivered", "--timeout", "0.5")
    assert 3 == done.returncode, done.stderr


def test_open_who_and_log_show_held_prompts_apart(home: Path) -> None:
    """`open` marks it with who holds it and why, `who` counts it for bob, `log` names who
    holds it and why."""
    held, plain = post(home, "--to", "bob", "held one"), post(home, "--to", "bob", "plain one")
    _write(home, _held(held))
    lines = run_cli(home, "open", "--as", "bob").stdout.splitlines()
    assert [(held, True), (plain, False)] == [
        (ln.split()[0], ln.endswith(f"  [held by the agent: {REASON}]")) for ln in lines
    ]
    [bob] = [
        json.loads(ln)
        for ln in run_cli(home, "who", "--json").stdout.splitlines()
        if json.loads(ln)["agent"] == "bob"
    ]
    assert 1 == bob["held"]
    who = [ln for ln in run_cli(home, "who").stdout.splitlines() if ln.startswith("bob ")]
    assert [True] == [ln.endswith("  1 held for a person") for ln in who]
    shown = run_cli(home, "log", "--kind", "held").stdout
    assert f"on {held}: claude-inbox, held by the agent ({REASON})" in shown


def test_the_fold_keeps_held_apart_from_delivered() -> None:
    """A `held` after `delivered` does not move the prompt back (the agent already had it)."""
    from paneboard.protocol.posts import Delivered, Prompt

    p = Prompt(**header("b", "alice"), to=("bob",), body="x")
    d = Delivered(**header("b", "bob"), prompt_id=p.id, door="claude-inbox")
    h = Held(**header("b", "bob"), prompt_id=p.id, door="claude-inbox", by="agent", reason=REASON)
    state = fold(enumerate([p, d, h]))
    assert "delivered" == state.prompts[p.id].recipients["bob"].stage


def test_a_held_post_round_trips_through_the_log(home: Path) -> None:
    """The new kind is read back whole from a log."""
    pid = post(home, "--to", "bob", "x")
    h = _held(pid)
    _write(home, h)
    assert h == [p for _, p in read_posts(home / "test" / "log")][-1]


def test_top_shows_a_held_prompt_in_a_colour_of_its_own() -> None:
    """`top`'s prompt row names the stage `held`, who holds it and why, and for how long,
    styled apart from `delivered`."""
    from paneboard.protocol.posts import Prompt
    from paneboard.state.fold import BoardState, apply
    from paneboard.top.model import TopModel
    from paneboard.top.rows import STAGE_STYLE, PromptSource

    p = Prompt(**header("b", "alice", 1.0), to=("bob",), body="x")
    h = Held(
        **header("b", "bob", 2.0), prompt_id=p.id, door="claude-inbox", by="agent", reason=REASON
    )
    model = TopModel(BoardState())
    items = [(0, p), (1, h)]
    for position, item in items:
        apply(model.state, position, item)
    model.take(items, 3.0)
    line = PromptSource(model, stale=300.0).line(0, 3.0)
    [styled] = [line.plain[s.start : s.end] for s in line.spans if s.style == STAGE_STYLE["held"]]
    assert (f"held by agent ({REASON}) 1s", True) == (
        styled,
        STAGE_STYLE["held"] != STAGE_STYLE["delivered"],
    )


def test_held_by_is_the_types_literal() -> None:
    """`HELD_BY` and `HeldBy` name the same words."""
    from typing import get_args

    from paneboard.protocol import posts, words

    assert words.HELD_BY == get_args(posts.HeldBy)
