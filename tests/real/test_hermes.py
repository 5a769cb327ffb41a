"""Hermes Agent 0.19.0, live and offline: paneboard's plugin, its socket, the `hermes-plugin`
door, `seen` from its SQLite database."""

from __future__ import annotations

from paneboard.protocol.posts import Seen
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import PINNED
from testing.helpers import Listening, cli_env, notices, run_cli, wait_until
from testing.hermes_session import HermesSession
from testing.sessions import one_shot, post, status
from tests.real.live import NEEDS_TMUX, UNTIMED, live_fixture

pytestmark = NEEDS_TMUX
# All but the busy session's test (a prompt delivered during a 3 s turn) only wait: `UNTIMED`.

HERMES = PINNED["hermes"]
BUSY = "\u2695 \u276f"  # Hermes's input prompt while a turn runs: its staff, then the arrow
session = live_fixture(HermesSession, HERMES.installed, "hermes-bob", HERMES.missing)


def _seen(s: HermesSession) -> dict[str, list[float]]:
    """The times of the `seen` receipts of each prompt, from the board's log."""
    found: dict[str, list[float]] = {}
    for _, p in read_posts(s.pb_home / "test" / "log"):
        if isinstance(p, Seen):
            found.setdefault(p.prompt_id, []).append(p.ts)
    return found


def _turns(s: HermesSession, prompt: str) -> int:
    return len(s.stand_in.turns_with(f"[paneboard] prompt {prompt} from"))


@UNTIMED
def test_an_idle_session_takes_the_prompt_once(session: HermesSession) -> None:
    """The plugin's ok is `delivered`; one model turn, the context line in the session's first;
    `seen` from Hermes's database, once."""
    s = session
    plugin = s.project / ".hermes/plugins/paneboard/__init__.py"
    assert s.installed.startswith(f"installed paneboard plugin {plugin}\n")
    prompt = post(s.pb_home, s.name, "check the flaky test")
    s.turn(prompt)
    s.reached(prompt, "seen")
    got = status(s.pb_home, prompt, s.name)
    assert ("hermes-plugin", "accepted", "hermes-db") == (
        got["door"],
        got["outcome"],
        got["source"],
    )
    assert 1 == _turns(s, prompt)
    assert 1 == len(_seen(s)[prompt])
    assert s.stand_in.contexts(f"paneboard: you are `{s.name}` on board `test`") >= 1
    env = {"XDG_RUNTIME_DIR": str(s.runtime), "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    doctor = run_cli(s.pb_home, "doctor", "--as", s.name, **env)
    assert f"ok    hermes   plugin door of Hermes Agent pid {s.pid}: {s.socket}" in doctor.stdout


@UNTIMED
def test_a_one_shot_query_opens_no_door_and_starts_no_listener(session: HermesSession) -> None:
    """`hermes chat -q` exits once its query is done: a prompt handed to it would never run."""
    s = session
    one_shot([str(s.bin), "chat", "-q", "one shot"], s.project, s.env, stdin=None)
    assert 1 == len(s.stand_in.turns_with("one shot"))
    assert [s.socket.with_suffix(".json")] == list(s.socket.parent.glob("*.json"))
    assert s.listener == holder(s.lock)


def test_a_busy_session_takes_the_prompt_and_runs_it_after_its_turn(
    session: HermesSession,
) -> None:
    """Delivered while a turn runs (on Hermes's input queue, the running turn not interrupted);
    the model sees it once that turn has ended, and so does `seen` (queued is not seen)."""
    s = session
    busy, queued, started = s.during_a_long_turn()
    assert [] == s.stand_in.turns_with(queued)
    assert s.turn(queued) >= started + 3
    s.reached(queued, "seen")
    [seen] = _seen(s)[queued]
    assert seen >= started + 3
    assert 1 == _turns(s, busy)
    [request] = [r for r in s.stand_in.requests() if queued in r["user"]]
    *_, asked, answered, _ = request["body"]["messages"]
    assert busy in str(asked["content"]) and ("assistant", "OK") == (
        answered["role"],
        answered["content"],
    )  # the long turn ran to its end: not interrupted


@UNTIMED
def test_a_round_trip_wait_prints_the_answer(session: HermesSession) -> None:
    """The turn runs the prompt's `paneboard answer` in Hermes's terminal tool; `wait` prints it."""
    s = session
    prompt = s.round_trip(90)
    assert ("answered", "hermes-plugin") == s.stage(prompt)[:2]


@UNTIMED
def test_post_to_model_time(session: HermesSession) -> None:
    """Eight prompts to an idle session, one at a time: each reaches the model once."""
    s = session
    ids = s.time_to_model(
        "hermes",
        lambda _: wait_until(lambda: BUSY not in s.screen(), "the turn did not end", 30, s.screen),
    )
    assert [1] * 8 == [_turns(s, p) for p in ids]


@UNTIMED
def test_a_burst_of_twenty_reaches_the_model_once_each(session: HermesSession) -> None:
    """Twenty prompts posted at once: each delivered, each one turn of the model, in order."""
    s = session
    # more than the recipient's default policy of 30 prompts a minute from one sender, with the
    # tests before
    write_policy(s.pb_home / "test", s.name, Policy(rate=0))
    ids = [post(s.pb_home, s.name, f"burst {n}") for n in range(20)]
    wait_until(lambda: all(_turns(s, p) for p in ids), "not every burst turn ran", 120, s.screen)
    for prompt in ids:
        s.reached(prompt, "seen")  # after `delivered`
    assert [1] * 20 == [_turns(s, p) for p in ids]
    assert [1] * 20 == [len(_seen(s)[p]) for p in ids]
    firsts = [s.stand_in.turns_with(f"[paneboard] prompt {p} from")[0] for p in ids]
    assert sorted(firsts) == firsts


@UNTIMED
def test_the_listener_ends_with_hermes_and_the_prompt_stays_open(session: HermesSession) -> None:
    """Hermes killed: its listener exits; a prompt posted then stays open, and the socket and
    registry it leaves behind are refused (`undelivered`, the prompt still open)."""
    s = session
    pid, socket = s.crash("Hermes")
    prompt = s.unserved("nobody is there")
    args = ("--door", "hermes-plugin", "--socket", str(socket), "--backoff", "0.05")
    with Listening(s.pb_home, s.name, *args, env=cli_env(s.pb_home)) as late:
        late.wait_err(f"undelivered {prompt}")
    assert [f"the Hermes Agent process {pid} behind {socket} has ended"] == [
        n.reason for n in notices(s.pb_home) if n.prompt_id == prompt
    ]
    assert 0 == _turns(s, prompt)
    shown = run_cli(s.pb_home, "open", "--as", s.name)
    assert prompt in shown.stdout, shown.stderr
