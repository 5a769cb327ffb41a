"""pi 0.73.1, live and offline: paneboard's extension, its socket, the `pi-extension` door."""

from __future__ import annotations

from paneboard.state.panes.lock import holder
from testing.clients import PINNED
from testing.helpers import Listening, cli_env, notices, run_cli, wait_until
from testing.pi_session import PiSession
from testing.sessions import one_shot, post, running, status
from tests.real.live import NEEDS_TMUX, UNTIMED, live_fixture

pytestmark = NEEDS_TMUX
# All but the busy session's test (a prompt delivered during a 3 s turn) only wait: `UNTIMED`.


session = live_fixture(PiSession, PINNED["pi"].installed, "pi-bob", PINNED["pi"].missing)


@UNTIMED
def test_an_idle_session_takes_the_prompt_once_and_its_session_file_shows_it(
    session: PiSession,
) -> None:
    """The extension's ok is `delivered`; one model turn; pi's session file proves `seen`."""
    s = session
    extension = s.project / ".pi/extensions/paneboard.ts"
    assert f"installed paneboard extension {extension}\n" == s.installed
    prompt = post(s.pb_home, s.name, "check the flaky test")
    s.turn(prompt)
    s.reached(prompt, "seen")
    got = status(s.pb_home, prompt, s.name)
    assert ("pi-extension", "accepted", "pi-session") == (
        got["door"],
        got["outcome"],
        got["source"],
    )
    header = f"[paneboard] prompt {prompt} from alice on board test"
    [record] = s.user_records(header)
    assert "user" == record["message"]["role"]
    assert 1 == len(s.stand_in.turns_with(prompt))
    assert s.stand_in.contexts(f"paneboard: you are `{s.name}` on board `test`") >= 1
    doctor = run_cli(s.pb_home, "doctor", "--as", s.name, XDG_RUNTIME_DIR=str(s.runtime))
    assert f"ok    pi       extension door of pi pid {s.pid}: {s.socket}" in doctor.stdout


@UNTIMED
def test_print_mode_opens_no_door_and_starts_no_listener(session: PiSession) -> None:
    """`pi -p` exits once its prompt is done: a prompt handed to it would never run."""
    s = session
    argv = [str(s.bin), "--provider", "pb", "--model", "stand-in", "-p", "one shot"]
    one_shot(argv, s.project, s.env, 60, stdin=None)
    assert 1 == len(s.stand_in.turns_with("one shot"))
    assert [s.socket.with_suffix(".json")] == list(s.socket.parent.glob("*.json"))
    assert s.listener == holder(s.lock)


def test_a_busy_session_takes_the_prompt_and_runs_it_after_its_turn(session: PiSession) -> None:
    """Delivered while a turn runs (a follow-up); the model sees it once that turn has ended,
    and the session file shows it only then."""
    s = session
    _, queued, started = s.during_a_long_turn()
    assert [] == s.stand_in.turns_with(queued)
    assert [] == s.user_records(f"[paneboard] prompt {queued} from")
    assert s.turn(queued) >= started + 3
    s.reached(queued, "seen")


@UNTIMED
def test_a_round_trip_wait_prints_the_answer(session: PiSession) -> None:
    """The turn runs the prompt's `paneboard answer` in pi's bash tool; `wait` prints it."""
    s = session
    prompt = s.round_trip()
    assert ("answered", "pi-extension") == s.stage(prompt)[:2]


@UNTIMED
def test_post_to_model_time(session: PiSession) -> None:
    """Eight prompts to an idle session, one at a time: each reaches the model once."""
    s = session
    # seen: the turn is over, the next one finds pi idle
    ids = s.time_to_model("pi", lambda prompt: s.reached(prompt, "seen"))
    assert [1] * 8 == [len(s.stand_in.turns_with(p)) for p in ids]


@UNTIMED
def test_a_burst_reaches_the_model_once_each(session: PiSession) -> None:
    """Twelve prompts posted at once: each delivered, each one turn of the model."""
    s = session
    ids = [post(s.pb_home, s.name, f"burst {n}") for n in range(12)]
    for prompt in ids:
        s.reached(prompt, "seen")
    assert [1] * 12 == [len(s.stand_in.turns_with(p)) for p in ids]
    assert [1] * 12 == [len(s.user_records(f"[paneboard] prompt {p} from")) for p in ids]


@UNTIMED
def test_a_new_session_gets_a_listener_that_follows_its_own_file(session: PiSession) -> None:
    """`/new` in pi: a new session file; the door's socket stays; the listener is replaced by
    one that follows the new file, and a prompt is delivered into the new session and seen
    there."""
    s = session
    old_file, old_listener, old_socket = s.registry["sessionFile"], s.listener, s.socket
    inode = old_socket.stat().st_ino
    s.tmux.type("/new")
    s.registry = wait_until(
        lambda: (r := s._registry()) and r["sessionFile"] != old_file and r, "no new session", 30
    )
    s.listener = wait_until(
        lambda: (p := holder(s.lock)) != old_listener and p, "no new listener", 30, s.screen
    )
    assert not running(old_listener)
    assert (old_socket, inode) == (s.socket, s.socket.stat().st_ino)
    prompt = post(s.pb_home, s.name, "in the new session")
    s.turn(prompt)
    s.reached(prompt, "seen")
    assert 1 == len(s.user_records(f"[paneboard] prompt {prompt} from"))


@UNTIMED
def test_the_listener_ends_with_pi_and_a_dead_door_is_refused(session: PiSession) -> None:
    """pi killed: its listener exits; the socket and registry it leaves behind are refused."""
    s = session
    pid, socket = s.crash("pi")
    args = ("--door", "pi-extension", "--socket", str(socket), "--backoff", "0.05")
    with Listening(s.pb_home, s.name, *args, env=cli_env(s.pb_home)) as late:
        prompt = post(s.pb_home, s.name, "nobody is there")
        late.wait_err(f"undelivered {prompt}")
    assert [f"the pi process {pid} behind {socket} has ended"] == [
        n.reason for n in notices(s.pb_home) if n.prompt_id == prompt
    ]
