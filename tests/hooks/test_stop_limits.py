"""The Stop hook's rate, from the board: the turn ends of one minute hand over at most the
rate's number of texts from one sender (a text, one turn, carries every prompt due at once),
whatever one hook process read; the rest wait for a later turn end, once the window lets them
out, with no person."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from paneboard.state.trust.policy import Policy
from testing.helpers import run_cli, run_hook
from tests.listener.test_limits import _flood, _policy, _posts


def _handed(home: Path, ids: list[str]) -> list[str]:
    """Which of *ids* one Stop hook run (a turn end) handed over in its block reason, in
    order."""
    event = {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False}
    done = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    assert 0 == done.returncode, done.stderr
    reason = json.loads(done.stdout)["reason"] if done.stdout.strip() else ""
    return [i for i in ids if f"prompt {i} from alice" in reason]


def test_two_turn_ends_within_a_minute_hand_over_the_rate(home: Path, store_url: str) -> None:
    """Rate 2: 25 prompts, a turn end, 25 more, a turn end, within a minute: each 25 in one
    reason (one text each: the sender's two places); at the next turn end 20 more hand over
    nothing and wait (as `open` says), none held."""
    _policy(home, "bob", Policy(rate=2))
    first = _flood(home, 25)
    assert first == _handed(home, first)
    more = _flood(home, 25)
    assert more == _handed(home, more)
    last = _flood(home, 20)
    assert [] == _handed(home, last)
    shown = run_cli(home, "open", "--as", "bob").stdout.splitlines()
    assert 20 == sum("waits until" in line for line in shown), shown
    assert [] == _posts(home, "held")


@pytest.mark.slow  # waits out the 60 s window
def test_a_prompt_that_waited_goes_out_at_a_turn_end_once_the_window_allows(home: Path) -> None:
    """Rate 1: 31 prompts, all at a turn end in one text; one more at none within the minute,
    then at the first turn end after it."""
    _policy(home, "bob", Policy(rate=1))
    ids = _flood(home, 31)
    assert ids == _handed(home, ids)
    handed_at = time.time()
    late = _flood(home, 1)
    assert [] == _handed(home, late)
    time.sleep(max(0.0, handed_at + 61 - time.time()))
    assert late == _handed(home, late)
    assert [] == _posts(home, "held")
