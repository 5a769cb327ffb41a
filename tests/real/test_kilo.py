"""Kilo Code 7.7.9, live and offline: paneboard's plugin, its socket, the `kilo` door, `seen`
from its SQLite database."""

from __future__ import annotations

import pytest

from paneboard.protocol.posts import Delivered, Seen
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from testing.clients import PINNED
from testing.helpers import run_cli, wait_until
from testing.kilo_session import KiloSession
from testing.sessions import one_shot, post, running, status
from tests.real.live import NEEDS_TMUX, UNTIMED, live_fixture

pytestmark = NEEDS_TMUX
# All but the busy session's test (a prompt delivered during a 3 s turn) only wait: `UNTIMED`.

KILO = PINNED["kilo"]
session = live_fixture(KiloSession, KILO.installed, "kilo-bob", KILO.missing)


def _seen(s: KiloSession) -> dict[str, list[float]]:
    """The times of the `seen` receipts of each prompt, from the board's log."""
    found: dict[str, list[float]] = {}
    for _, p in read_posts(s.pb_home / "test" / "log"):
        if isinstance(p, Seen):
            found.setdefault(p.prompt_id, []).append(p.ts)
    return found


def _idle(s: KiloSession, prompt: str) -> None:
    """The turn of *prompt* is over: its answer is on screen and Kilo Code is idle again."""
    s.turn(prompt)
    wait_until(lambda: "esc interrupt" not in s.screen(), "Kilo Code still busy", 30, s.screen)


@UNTIMED
def test_an_idle_session_takes_the_prompt_once(session: KiloSession) -> None:
    """The plugin's ok is `delivered`; one model turn, with the context line in its system
    prompt; `seen` from Kilo Code's database, once; doctor sees the door."""
    s = session
    assert f"installed paneboard plugin {s.project / '.kilo/plugins/paneboard.js'}\n" == s.installed
    s.turn("hello")
    prompt = post(s.pb_home, s.name, "check the flaky test")
    _idle(s, prompt)
    s.reached(prompt, "seen")
    got = status(s.pb_home, prompt, s.name)
    assert ("kilo", "accepted", "kilo-db") == (got["door"], got["outcome"], got["source"])
    assert 1 == len(s.turns_with(prompt))
    assert 1 == len(_seen(s)[prompt])
    assert s.stand_in.contexts(f"paneboard: you are `{s.name}` on board `test`") >= 1
    doctor = run_cli(s.pb_home, "doctor", "--as", s.name, XDG_RUNTIME_DIR=str(s.runtime))
    assert f"ok    kilo     plugin door of Kilo Code pid {s.pid}: {s.socket}" in doctor.stdout


@UNTIMED
def test_kilo_run_starts_no_listener(session: KiloSession) -> None:
    """`kilo run` exits at its first idle moment: a prompt handed to it would never run."""
    s = session
    one_shot([str(s.bin), "run", "one shot"], s.project, s.env)
    assert 1 == len(s.turns_with("one shot"))
    assert s.listener == holder(s.lock)


def test_a_busy_session_takes_the_prompt_and_runs_it_after_its_turn(
    session: KiloSession,
) -> None:
    """Delivered while a turn runs; the model sees it once that turn has ended, and so does
    `seen` (the database holds no user message of it before)."""
    s = session
    _, queued, started = s.during_a_long_turn()
    assert [] == s.turns_with(queued)
    assert s.turn(queued) >= started + 3
    _idle(s, queued)
    s.reached(queued, "seen")
    [seen] = _seen(s)[queued]
    assert seen >= started + 3


@UNTIMED
def test_a_round_trip_wait_prints_the_answer(session: KiloSession) -> None:
    """The turn runs the prompt's `paneboard answer` in Kilo Code's bash tool; `wait` prints it."""
    s = session
    prompt = s.round_trip()
    assert ("answered", "kilo") == s.stage(prompt)[:2]
    _idle(s, prompt)


@UNTIMED
def test_post_to_model_time(session: KiloSession) -> None:
    """Eight prompts to an idle session, one at a time: each reaches the model once."""
    s = session
    ids = s.time_to_model("kilo", lambda prompt: _idle(s, prompt))
    assert [1] * 8 == [len(s.turns_with(p)) for p in ids]


@pytest.mark.timeout(300)
@UNTIMED
def test_a_burst_of_twenty_reaches_the_model_once_each(session: KiloSession) -> None:
    """Twenty prompts posted one after another: each delivered once, each one turn of the
    model."""
    s = session
    ids = [s.post_as("carol", f"burst {n}") for n in range(20)]  # paneboard holds a 31st a minute
    wait_until(lambda: all(s.turns_with(p) for p in ids), "not all 20 turns", 240, s.screen, 0.5)
    _idle(s, ids[-1])
    delivered = [
        p.prompt_id
        for _, p in read_posts(s.pb_home / "test" / "log")
        if isinstance(p, Delivered) and p.prompt_id in ids
    ]
    assert (sorted(ids), "kilo") == (sorted(delivered), s.stage(ids[-1])[1])
    assert [1] * 20 == [len(s.turns_with(p)) for p in ids]
    wait_until(lambda: all(p in _seen(s) for p in ids), "not all 20 seen", 30, s.screen)
    assert [1] * 20 == [len(_seen(s)[p]) for p in ids]


@pytest.mark.timeout(300)
@UNTIMED
def test_killed_its_listener_ends_and_the_prompt_waits_for_the_next_session(
    session: KiloSession,
) -> None:
    """Kilo Code killed: its listener exits; a prompt posted then stays open on the board, and
    the next Kilo Code session in the project (a new process, a new door) takes it, once."""
    s = session
    pid, socket = s.crash("Kilo Code")
    assert holder(s.lock) is None and not running(pid)
    prompt = s.unserved()
    s.start()
    assert (s.pid, s.socket) != (pid, socket)
    assert not socket.exists()  # the new plugin swept the dead process's socket and registry
    s.turn(prompt)
    s.reached(prompt, "seen")
    assert 1 == len(s.turns_with(prompt))
