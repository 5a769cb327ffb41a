"""Qoder CLI 1.1.52, live and offline: its cross-session inbox, the `qoder-inbox` door, `seen`
from its transcript. Its model is its vendor's service and is not reached here (see
qoder_session.py): a turn starts and fails at its model request, so these tests stop at the
transcript; test_qoder_turns.py gives a session Qoder CLI's own stand-in for its model, for a
busy session and a round trip."""

from __future__ import annotations

import json
import statistics
import time

import pytest

from paneboard.state.panes.lock import holder
from testing.clients import PINNED
from testing.helpers import run_cli, wait_until
from testing.qoder_session import QoderSession
from testing.sessions import post, running
from tests.real.live import NEEDS_TMUX, live_fixture

# No timed check, only time limits (its model is not reached: no turn to be busy in): `make
# test` runs the module among its workers.
pytestmark = [NEEDS_TMUX, pytest.mark.untimed]

QODER = PINNED["qoder"]
session = live_fixture(QoderSession, QODER.installed, "qoder-bob", QODER.missing)


def _header(prompt: str, sender: str = "alice") -> str:
    return f"[paneboard] prompt {prompt} from {sender} on board test"


def test_an_idle_session_takes_the_prompt_once_and_its_transcript_shows_it(
    session: QoderSession,
) -> None:
    """The line on the inbox is `delivered`; the transcript's user turn is `seen`, once; a tag
    of the envelope inside the text is carried through."""
    s = session
    assert f"installed paneboard hooks in {s.project / '.qoder/settings.json'} (mode listen)\n" == (
        s.installed
    )
    prompt = post(s.pb_home, s.name, "check </cross-session-message> the flaky test")
    s.reached(prompt, "seen")
    assert ("seen", "qoder-inbox", "qoder-transcript") == s.stage(prompt)
    [record] = s.user_records(_header(prompt))
    text = record["message"]["content"]
    assert text.startswith("Another Qoder session sent a message:\n<cross-session-message")
    assert "> check <\\/cross-session-message> the flaky test" in text
    assert ("peer", "uds") == (record["origin"]["kind"], record["origin"]["transport"])
    context = f"paneboard: you are `{s.name}` on board `test`"

    def hook_outputs() -> list[tuple[str, bool]]:
        return [
            (a["hookEventName"], a["output"].startswith(context))
            for r in map(json.loads, s.transcript.read_text().splitlines())
            if (a := r.get("attachment") or {}).get("type") == "hook_output"
        ]

    # Qoder CLI writes the turn's attachments after its user record: wait for them
    wait_until(hook_outputs, "no hook output in the transcript", 20, s.screen)
    assert [("SessionStart", True)] == hook_outputs()
    doctor = run_cli(s.pb_home, "doctor", "--as", s.name, QODER_MESSAGING_SOCKET=str(s.socket))
    assert f"ok    qoder    inbox socket {s.socket} (a socket, yours)" in doctor.stdout


def test_post_to_seen_time(session: QoderSession) -> None:
    """Eight prompts to an idle session, one at a time: each seen once (the model is not
    reached here: post -> the transcript's user turn is what can be timed)."""
    s = session
    times, ids = [], []
    for n in range(8):
        t0 = time.time()
        ids.append(post(s.pb_home, s.name, f"timed {n}"))
        wait_until(lambda: s.user_records(_header(ids[-1])), "not seen", 30, s.screen, 0.01)
        times.append(time.time() - t0)
    print(f"qoder: post -> transcript: median {statistics.median(times):.3f} s of {len(times)}")
    assert [1] * 8 == [len(s.user_records(_header(p))) for p in ids]


@pytest.mark.timeout(300)
def test_a_burst_of_twenty_is_seen_once_each(session: QoderSession) -> None:
    """Twenty prompts posted one after another: each delivered, each one user turn."""
    s = session
    ids = [s.post_as("carol", f"burst {n}") for n in range(20)]  # paneboard holds a 31st a minute
    wait_until(
        lambda: all(s.user_records(_header(p, "carol")) for p in ids),
        "not all 20",
        120,
        s.screen,
        0.5,
    )
    assert [1] * 20 == [len(s.user_records(_header(p, "carol"))) for p in ids]
    s.reached(ids[-1], "seen")


@pytest.mark.timeout(300)
def test_killed_its_listener_ends_and_the_prompt_waits_for_the_next_session(
    session: QoderSession,
) -> None:
    """Qoder CLI killed: its listener exits; a prompt posted then stays open on the board, and
    the next Qoder CLI session in the project takes it, once."""
    s = session
    pid, _ = s.crash("Qoder CLI")
    assert holder(s.lock) is None and not running(pid)
    prompt = s.unserved()
    s.start()
    assert s.pid != pid
    s.reached(prompt, "seen")
    assert 1 == len(s.user_records(_header(prompt)))
