"""Qoder CLI 1.1.52, live and offline, its turns run to their end: a busy session and a round
trip through the `qoder-inbox` door, its model Qoder CLI's own stand-in (`--fake-responses`: the
responses below, replayed in order, one per model request; see qoder_session.py)."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

import pytest

from paneboard.agents.qoder import QODER as RECORD
from testing.clients import PINNED
from testing.helpers import wait_until
from testing.qoder_session import QoderSession, shell, text
from testing.sessions import post
from tests.real.live import NEEDS_TMUX, live_fixture

pytestmark = NEEDS_TMUX

QODER = PINNED["qoder"]
NAME = "qoder-carol"
# The round trip's command finds the prompt that asks for an answer among the open ones, as a
# model reads it from its turn, and answers it.
FIND = (
    "import json, sys; print(next(p['id'] for p in map(json.loads, sys.stdin) "
    "if 'MOCK-ANSWER' in p['body']))"
)
ANSWER = (
    f'paneboard answer "$(paneboard open --as {NAME} --json | {sys.executable} -c "{FIND}")"'
    f" --as {NAME} -- forty-two"
)
RESPONSES = [
    text("a ", "long ", "turn ", "ends"),  # three seconds: a chunk a second
    text("OK"),  # the prompt posted during it
    shell(ANSWER),  # the round trip: its shell command,
    text("OK"),  # then its end
]
session = live_fixture(
    functools.partial(QoderSession, fake_responses=RESPONSES), QODER.installed, NAME, QODER.missing
)


def _header(prompt: str) -> str:
    return f"[paneboard] prompt {prompt} from alice on board test"


def _records(s: QoderSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in s.transcript.read_text().splitlines() if line.strip()]


def _assistant_texts(s: QoderSession) -> list[tuple[int, str]]:
    """The transcript's assistant texts, each with its record's place in the file."""
    return [
        (n, part["text"])
        for n, r in enumerate(_records(s))
        if r.get("type") == "assistant"
        for part in r["message"]["content"]
        if part.get("type") == "text"
    ]


def _place(s: QoderSession, prompt: str) -> int:
    """Where the transcript's user turn of *prompt* is."""
    records = enumerate(_records(s))
    [n] = [n for n, r in records if any(_header(prompt) in t for t in RECORD.user_texts(r))]
    return n


def test_a_busy_session_takes_the_prompt_and_runs_it_after_its_turn(
    session: QoderSession,
) -> None:
    """Delivered while a turn runs; its user turn (`seen`) comes once that turn has ended."""
    s = session
    busy = post(s.pb_home, s.name, "a long turn")
    s.reached(busy, "seen")
    queued = post(s.pb_home, s.name, "after the long turn")
    s.reached(queued, "delivered", 2.5)
    assert [] == s.user_records(_header(queued))  # the long turn still runs
    s.reached(queued, "seen", 30)
    [long_turn] = [n for n, t in _assistant_texts(s) if t == "a long turn ends"]
    assert _place(s, busy) < long_turn < _place(s, queued)
    assert ("seen", "qoder-inbox", "qoder-transcript") == s.stage(queued)
    wait_until(
        lambda: any(n > _place(s, queued) for n, _ in _assistant_texts(s)),
        "the queued turn did not end",
        30,
        s.screen,
    )


@pytest.mark.timeout(180)
def test_a_round_trip_wait_prints_the_answer(session: QoderSession) -> None:
    """The turn runs the answer in Qoder CLI's `Bash` tool; `wait` prints it."""
    s = session
    prompt = s.round_trip(90)
    assert ("answered", "qoder-inbox") == s.stage(prompt)[:2]
    assert 1 == len(s.user_records(_header(prompt)))
