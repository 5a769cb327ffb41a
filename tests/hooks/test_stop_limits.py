"""The Stop hook's rate, from the board: the turn ends of one minute hand over at most the
rate from one sender, whatever one hook process read; the rest wait for a later turn end,
once the window lets them out, with no person."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from testing.helpers import run_cli, run_hook
from tests.listener.test_limits import _flood, _posts


def _handed(home: Path, ids: list[str]) -> list[str]:
    """Which of *ids* one Stop hook run (a turn end) handed over in its block reason, in
    order."""
    event = {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False}
    done = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    assert 0 == done.returncode, done.stderr
    reason = json.loads(done.stdout)["reason"] if done.stdout.strip() else ""
    return [i for i in ids if f"prompt {i} from alice" in reason]


def test_two_turn_ends_within_a_minute_hand_over_the_rate(home: Path, store_url: str) -> None:
    """25 prompts, a turn end, 25 more, a turn end, within a minute: 25 then 5 handed over;
    the next turn end hands over nothing; the 20 left wait (as `open` says), none held."""
    first = _flood(home, 25)
    assert first == _handed(home, first)
    more = _flood(home, 25)
    assert more[:5] == _handed(home, more)
    assert [] == _handed(home, more)
    shown = run_cli(home, "open", "--as", "bob").stdout.splitlines()
    assert 20 == sum("waits until" in line for line in shown), shown
    assert [] == _posts(home, "held")


@pytest.mark.slow  # waits out the 60 s window
def test_a_prompt_that_waited_goes_out_at_a_turn_end_once_the_window_allows(home: Path) -> None:
    """31 prompts: 30 at a turn end, the 31st at none within the minute, then at the first turn
    end after it."""
    ids = _flood(home, 31)
    assert ids[:30] == _handed(home, ids)
    handed_at = time.time()
    assert [] == _handed(home, ids)
    time.sleep(max(0.0, handed_at + 61 - time.time()))
    assert ids[30:] == _handed(home, ids)
    assert [] == _posts(home, "held")
