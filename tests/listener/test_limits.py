"""The rate and the loop limit in a real listener, on each store: counted from the board by the
listener's clock (never the senders' `ts`), the same after a restart; a batch past the rate
waits and goes out as the window allows, with no person; a runaway, a far-off `ts` and a loop
are held; forged or unsigned prompts take no place in the real sender's minute."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import msgspec
import pytest

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Prompt
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import Listening, post, run_cli, wait_until

PANEBOARD = f"{sys.executable} -m paneboard"


def _posts(home: Path, kind: str) -> list[dict[str, object]]:
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    return [p for p in map(json.loads, done.stdout.splitlines()) if p["kind"] == kind]


def _policy(home: Path, agent: str, policy: Policy) -> None:
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", agent, policy)


def _flood(
    home: Path, count: int, *, ts: list[float] | None = None, signed: bool = True
) -> list[str]:
    """*count* prompts from alice to bob in one append, signed with alice's key in *home*
    (unsigned if not *signed*), each with its time from *ts* if given."""
    store = os.environ.get("PANEBOARD_TEST_STORE")
    with Context.resolve(str(home), "test", "alice", store=store) as ctx:
        ctx.paths.ensure()
        log = ctx.store()
        if not signed:
            log.sealer = None
        prompts = [
            Prompt(
                **header("test", "alice", None if ts is None else ts[n]), to=("bob",), body=f"{n}"
            )
            for n in range(count)
        ]
        log.append(prompts)
    return [p.id for p in prompts]


def _lines(bob: Listening, count: int) -> list[str]:
    return [json.loads(bob.line())["id"] for _ in range(count)]


def _quiet(bob: Listening, seconds: float = 1.0) -> bool:
    """True if the stdout door got nothing for *seconds*."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not bob.out.empty():
            return False
        time.sleep(0.05)
    return True


def test_a_ts_far_from_the_listeners_clock_is_held(home: Path, store_url: str) -> None:
    """40 prompts from alice whose ts are 61 s apart, in the past and in the future: those more
    than 300 s from the time they reached the board are held (`time`), the rest delivered."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        now = time.time()
        past = _flood(home, 40, ts=[now - 61 * k for k in range(40)])
        future = _flood(home, 40, ts=[now + 61 * k for k in range(40)])
        got = _lines(bob, 10)
        wait_until(lambda: len(_posts(home, "held")) == 70, "70 held", timeout=30)
        assert _quiet(bob, 0.5)
    assert past[:5] + future[:5] == got
    held = _posts(home, "held")
    assert set(past[5:] + future[5:]) == {h["prompt"] for h in held}
    assert all(str(h["reason"]).startswith("time: its ts is ") for h in held)
    reasons = {h["prompt"]: h["reason"] for h in held}
    assert "behind this reader's clock (limit 300 s)" in str(reasons[past[5]])
    assert "ahead of this reader's clock (limit 300 s)" in str(reasons[future[39]])


def test_the_rate_counts_by_the_listeners_clock_not_the_senders_ts(
    home: Path, store_url: str
) -> None:
    """40 prompts whose ts are spread 7 s apart (so no minute of ts holds 30 of them) arrive
    at once: 30 are delivered, 10 wait for the window; none is held for a person."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        now = time.time()
        ids = _flood(home, 40, ts=[now - 7 * k for k in range(40)])
        got = _lines(bob, 30)
        bob.wait_err(f"{ids[39]} from alice waits until")
        assert _quiet(bob, 0.5)
    assert ids[:30] == got
    assert [] == _posts(home, "held")


def test_a_listener_restarted_within_the_minute_counts_what_it_delivered(
    home: Path, store_url: str
) -> None:
    """30 delivered, the listener stopped and started again, 8 more within the minute: the 8
    wait (the board's receipts count, not what one process read)."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        first = _flood(home, 30)
        assert first == _lines(bob, 30)
        bob.wait_err(f"delivered {first[-1]}")
        assert 0 == bob.stop()
    with Listening(home, "bob", "--door", "stdout") as bob:
        more = _flood(home, 8)
        bob.wait_err(f"{more[-1]} from alice waits until")
        assert _quiet(bob, 0.5)
    assert [] == _posts(home, "held")
    assert set(first) == {p["prompt"] for p in _posts(home, "delivered")}


def test_unsigned_prompts_take_no_place_in_the_real_senders_minute(
    home: Path, store_url: str
) -> None:
    """30 unsigned prompts "from alice" are held as unsigned; alice's own prompt after them is
    delivered, not made to wait."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        bare = _flood(home, 30, signed=False)
        bob.wait_err(f"held {bare[-1]} from alice by policy: unverified: the post is unsigned")
        real = post(home, "--to", "bob", "the real alice")
        assert [real] == _lines(bob, 1)
    assert set(bare) == {h["prompt"] for h in _posts(home, "held")}


def test_a_runaway_sender_is_held_for_a_person(home: Path, store_url: str) -> None:
    """At a rate of 1 a minute, 12 prompts: 1 delivered, 10 wait, and the 12th, with ten
    minutes of the rate waiting before it, is held (`rate: a runaway`)."""
    _policy(home, "bob", Policy(rate=1))
    with Listening(home, "bob", "--door", "stdout") as bob:
        ids = _flood(home, 12)
        assert ids[:1] == _lines(bob, 1)
        bob.wait_err(f"held {ids[11]} from alice by policy: rate: a runaway: 10 prompts")
        assert _quiet(bob, 0.3)
    assert [ids[11]] == [h["prompt"] for h in _posts(home, "held")]


# alice replies to each prompt, to bob and to carol, a bystander; bob answers it, then
# replies to alice: a chain that never ends by itself.
REPLY = (
    f'{PANEBOARD} post --as "$PANEBOARD_AGENT" --to "$PANEBOARD_SENDER"'
    ' --reply-to "$PANEBOARD_ID" again'
)
REPLY_WITH_CAROL = REPLY.replace("again", "--to carol again")
ANSWER = f'{PANEBOARD} answer "$PANEBOARD_ID" --as "$PANEBOARD_AGENT" done && {REPLY}'


@pytest.mark.slow  # a loop run: two listeners answering each other, eleven deep
def test_a_bystander_in_to_does_not_escape_the_loop_limit(home: Path, store_url: str) -> None:
    """alice copies carol on every reply: the chain between alice and bob is still held at
    the loop limit."""
    exec_door = ("--door", "exec", "--", "sh", "-c")
    with (
        Listening(home, "alice", *exec_door, REPLY_WITH_CAROL) as alice,
        Listening(home, "bob", *exec_door, ANSWER),
    ):
        post(home, "--to", "bob", "start")
        said = alice.wait_err("by policy: loop: a reply chain 11 deep (limit 10)", timeout=60)
    held = _posts(home, "held")
    assert 1 == len(held), held
    assert f"held {held[0]['prompt']} from bob" in said
    carol = [p for p in _posts(home, "prompt") if "carol" in msgspec.convert(p["to"], list[str])]
    assert 5 <= len(carol)


@pytest.mark.slow  # waits out the rate's 60 s window
def test_a_batch_of_45_is_delivered_whole_with_no_person(home: Path) -> None:
    """45 prompts from one sender: 30 go out at once, the other 15 wait for the window (`open`
    and `status` say until when, and why) and go out a minute later, when the listener wakes
    itself; none is held."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        ids = _flood(home, 45)
        assert ids[:30] == _lines(bob, 30)
        first = time.time()
        bob.wait_err(f"{ids[44]} from alice waits until")
        shown = run_cli(home, "open", "--as", "bob").stdout.splitlines()
        waiting = [line for line in shown if "waits until" in line]
        assert 15 == len(waiting), shown
        assert all("rate: over 30 prompts a minute from alice" in line for line in waiting)
        status = json.loads(run_cli(home, "status", ids[44], "--json").stdout)
        until = status["waits"]["bob"]["until"]
        assert first + 55 < until < first + 65
        text = run_cli(home, "status", ids[44]).stdout
        assert "waits until" in text and "rate: over 30" in text
        assert _quiet(bob, 50)  # the window is not over yet
        assert ids[30:] == _lines(bob, 15)
        assert time.time() - first < 70
        bob.wait_err(f"delivered {ids[44]}")
    assert [] == _posts(home, "held")
    assert set(ids) == {p["prompt"] for p in _posts(home, "delivered")}
