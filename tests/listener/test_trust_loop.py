"""Loops and floods, on each store: two real exec-door listeners that answer each other
forever are held at the loop limit, a sender past the rate waits, and nothing is lost."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Prompt
from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import Listening, post, run_cli, wait_until

PANEBOARD = f"{sys.executable} -m paneboard"
# alice replies to each prompt; bob answers it, then replies: the chain never ends by itself.
REPLY = (
    f'{PANEBOARD} post --as "$PANEBOARD_AGENT" --to "$PANEBOARD_SENDER"'
    ' --reply-to "$PANEBOARD_ID" again'
)
ANSWER = f'{PANEBOARD} answer "$PANEBOARD_ID" --as "$PANEBOARD_AGENT" done && {REPLY}'


def _posts(home: Path) -> list[dict[str, object]]:
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def _kind(home: Path, kind: str) -> list[dict[str, object]]:
    return [p for p in _posts(home) if p["kind"] == kind]


def _exec(home: Path, agent: str, command: str) -> Listening:
    return Listening(home, agent, "--door", "exec", "--", "sh", "-c", command)


def _policy(home: Path, agent: str, policy: Policy) -> None:
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", agent, policy)


@pytest.mark.slow
def test_two_agents_answering_each_other_are_held_at_the_loop_limit(
    home: Path, store_url: str
) -> None:
    """The reply 11 deep is held (`loop`); the 11 before it were delivered; none vanished."""
    with _exec(home, "alice", REPLY) as alice, _exec(home, "bob", ANSWER):
        first = post(home, "--to", "bob", "start")
        said = alice.wait_err("by policy: loop: a reply chain 11 deep (limit 10)", timeout=60)
        held = _kind(home, "held")
        assert 1 == len(held), held
        assert f"held {held[0]['prompt']} from bob" in said

        def eleven() -> bool:  # bob's receipt for the 11th: once its door's command, which
            return len(_kind(home, "delivered")) >= 11  # posted the 12th, has exited

        wait_until(eleven, "11 delivered receipts", 30, every=0.2)
    prompts = _kind(home, "prompt")
    assert (12, first) == (len(prompts), prompts[0]["id"])
    delivered = {p["prompt"] for p in _kind(home, "delivered")}
    ids = [p["id"] for p in prompts]
    assert (set(ids[:11]), held[0]["prompt"]) == (delivered, ids[11])


@pytest.mark.slow
def test_with_the_loop_limit_off_the_chain_goes_past_it(home: Path, store_url: str) -> None:
    """`--loop 0`: the 12th reply is delivered too; nothing is held."""
    for agent in ("alice", "bob"):
        _policy(home, agent, Policy(loop=0))
    with _exec(home, "alice", REPLY), _exec(home, "bob", ANSWER):
        post(home, "--to", "bob", "start")
        wait_until(lambda: len(_kind(home, "delivered")) >= 13, "13 deliveries", timeout=60)
    assert [] == _kind(home, "held")


def _flood(home: Path, count: int) -> list[str]:
    """*count* prompts from alice to bob in one append, as alice's commands sign them."""
    store = os.environ.get("PANEBOARD_TEST_STORE")
    with Context.resolve(str(home), "test", "alice", store=store) as ctx:
        ctx.paths.ensure()
        prompts = [
            Prompt(**header("test", "alice"), to=("bob",), body=f"{n}") for n in range(count)
        ]
        ctx.store().append(prompts)
    return [p.id for p in prompts]


def test_a_sender_past_the_rate_waits_for_the_window(home: Path, store_url: str) -> None:
    """31 prompts within a minute: 30 delivered, the 31st waits for the window (`rate`), held
    for no person."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        ids = _flood(home, 31)
        bob.wait_err(f"{ids[30]} from alice waits until")
        got = [json.loads(bob.line())["id"] for _ in range(30)]
    assert ids[:30] == got
    assert [] == _kind(home, "held")


def test_with_the_rate_off_a_flood_is_delivered(home: Path, store_url: str) -> None:
    _policy(home, "bob", Policy(rate=0))
    with Listening(home, "bob", "--door", "stdout") as bob:
        ids = _flood(home, 31)
        got = [json.loads(bob.line())["id"] for _ in range(31)]
    assert (ids, []) == (got, _kind(home, "held"))
