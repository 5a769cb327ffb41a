"""Factory Droid 0.225.2, live and offline: the Stop-hook door (`hook install droid`)."""

from __future__ import annotations

import statistics
import time

from paneboard.agents import droid
from testing.clients import PINNED
from testing.helpers import run_cli, wait_until
from testing.sessions import post, stage
from tests.real.droid_session import DroidSession, droid_bin
from tests.real.live import NEEDS_TMUX, live_fixture

pytestmark = NEEDS_TMUX


session = live_fixture(DroidSession, droid_bin, "droid-bob", PINNED["droid"].missing)


def _stage(s: DroidSession, prompt: str) -> tuple[str, str, str]:
    return stage(s.pb_home, prompt, s.name, "source")


def test_a_posted_prompt_reaches_the_model_at_the_next_turn_end_once(
    session: DroidSession,
) -> None:
    """Handed over as the person's turn ends, as the next user turn; the Stop after it finds it
    in Droid's session file (`seen`); the session-start context reached the model."""
    s = session
    settings = s.project / ".factory/settings.json"
    done = f"installed paneboard hooks in {settings} (mode stop)\n{droid.TRUST}\n"
    assert done == s.installed
    prompt = post(s.pb_home, s.name, "check the flaky test")
    s.type("first turn")
    turn_end = s.turn("first turn")
    handed = s.turn(prompt)
    assert handed >= turn_end
    wait_until(lambda: _stage(s, prompt)[0] == "seen", "not seen", 30, s.screen)
    assert ("seen", "stop-hook", "droid-transcript") == _stage(s, prompt)
    [record] = s.user_records(f"[paneboard] prompt {prompt} from alice on board test")
    assert "user" == record["message"]["role"]
    s.type("second turn")
    s.turn("second turn")
    assert [handed] == s.stand_in.turns_with(prompt)
    assert s.stand_in.contexts(f"paneboard: you are `{s.name}` on board `test`") >= 1


def test_a_round_trip_wait_prints_the_answer(session: DroidSession) -> None:
    """The turn runs the prompt's `paneboard answer` in Droid's Execute tool; `wait` prints it."""
    s = session
    prompt = post(s.pb_home, s.name, "what is six times seven?\nMOCK-ANSWER: forty-two")
    s.type("round trip")
    done = run_cli(s.pb_home, "wait", prompt, "--timeout", "60", timeout=90)
    assert (0, "forty-two\n") == (done.returncode, done.stdout), done.stderr + s.screen()
    assert ("answered", "stop-hook") == _stage(s, prompt)[:2]


def test_post_to_model_time(session: DroidSession) -> None:
    """Eight prompts, each posted and then a turn of the person's: each reaches the model once,
    at that turn's end."""
    s = session
    times, ids = [], []
    for n in range(8):
        t0 = time.time()
        ids.append(post(s.pb_home, s.name, f"timed {n}"))
        s.type(f"turn {n}")
        times.append(s.turn(ids[-1]) - t0)
    median = statistics.median(times)
    print(f"droid: post -> model (the next turn's end): median {median:.3f} s of {len(times)}")
    assert [1] * 8 == [len(s.stand_in.turns_with(p)) for p in ids]
