"""Claude Code's intake, on the real Claude Code 2.1.328 offline: `delivered` is its admission.

Its peer-message bucket admits 30 lines at once, then one every 2 s; what it drops, holds or
refuses shows only in its transcript (agents/claude_transcript.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Prompt, Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import ClaudeSession, free_port
from testing.helpers import Listening, ScriptServer, cli_env, post, run_cli, wait_until

NO_TMUX = "tmux is missing: no interactive Claude Code session"
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason=NO_TMUX)
AGENT = "claude-bob"


def start_claude(
    clients_bin: Path,
    home: Path,
    folder: Path,
    port: int,
    settings: dict[str, Any],
    **env: str,
) -> ClaudeSession:
    """A session with paneboard's hooks (listen mode) and *settings* in the project's
    settings.local.json; its first turn done (a session's first turn starts slowly)."""
    project = folder / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    args = ("hook", "install", "claude", "--project", str(project), "--as", AGENT)
    done = run_cli(home, *args)
    assert 0 == done.returncode, done.stderr
    path = f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
    session = ClaudeSession(
        clients_bin, folder / "claude-home", project, port, cli_env(home, PATH=path, **env)
    )
    session.wait_listener(AGENT, home)
    session.type("hello")
    session.wait_transcript('"turn_duration"')
    return session


def burst(home: Path, count: int, what: str) -> list[str]:
    """*count* prompts to claude-bob appended at once, in one write; their ids."""
    store = Context.resolve(str(home), "test", "alice").store()
    prompts = [
        Prompt(**header("test", "alice"), to=(AGENT,), body=f"{what} {n} of {count}")
        for n in range(count)
    ]
    store.append(prompts)
    return [p.id for p in prompts]


def records(session: ClaudeSession) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.transcript().splitlines() if line.strip()]


def taken(session: ClaudeSession, pid: str) -> tuple[int, int]:
    """How many user turns and mid-turn `queued_command` attachments carry prompt *pid*."""
    mark = f"[paneboard] prompt {pid} from"
    users = attachments = 0
    for r in records(session):
        if r.get("type") == "user" and mark in json.dumps(r.get("message")):
            users += 1
        attachment = r.get("attachment") if r.get("type") == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            attachments += mark in str(attachment.get("prompt"))
    return users, attachments


def stages(home: Path) -> dict[str, str]:
    """claude-bob's stage of every prompt on the board."""
    from paneboard.state.fold import fold

    state = fold(read_posts(home / "test" / "log"))
    return {pid: ps.recipients[AGENT].stage for pid, ps in state.prompts.items()}


def wait_stages(
    home: Path, ids: list[str], stage: str, session: ClaudeSession, timeout: float
) -> None:
    def show() -> str:
        log = home / "test" / "panes" / f"{AGENT}.log"
        return (log.read_text()[-4000:] if log.exists() else "") + session.screen()

    def done() -> bool:
        now = stages(home)
        return all(now.get(pid) == stage for pid in ids)

    wait_until(done, f"all {len(ids)} prompts {stage}", timeout, show, every=0.25)


def notices(home: Path) -> list[Undelivered]:
    return [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]


def stand_in_log(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, clients_bin: Path
) -> Iterator[tuple[Path, ClaudeSession, Path]]:
    """One session for the bursts and the mid-turn prompt: (paneboard home, session, API log)."""
    folder = tmp_path_factory.mktemp("intake")
    home = folder / "pb"
    home.mkdir(mode=0o700)
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    # the bursts send alice's prompts faster than the policy's default 30 a minute
    write_policy(home / "test", AGENT, Policy(rate=0))
    api = ScriptServer("testing.api_stand_in", free_port(), folder / "api.log")
    allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}
    session = start_claude(clients_bin, home, folder, api.port, allow)
    try:
        yield home, session, api.log
    finally:
        session.close()
        api.close()


def test_a_burst_past_the_bucket_to_an_idle_session_reaches_the_model_once_each(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """33 prompts at once, three more than Claude Code admits at once: each is one user turn of
    the model's, each is `seen`, none lost."""
    home, session, _ = shared
    ids = burst(home, 33, "idle burst")  # the last three wait for the bucket to refill
    wait_stages(home, ids, "seen", session, timeout=180)
    assert dict.fromkeys(ids, (1, 0)) == {pid: taken(session, pid) for pid in ids}
    assert [] == notices(home)


def test_a_burst_to_a_busy_session_is_seen_once_each_after_its_turn(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """10 prompts while a slow turn runs: admitted meanwhile, each reaches the model once."""
    home, session, api_log = shared
    _start_turn(session, api_log, "think hard PB-SLOW-12", "slow")
    ids = burst(home, 10, "busy burst")
    wait_stages(home, ids, "seen", session, timeout=120)
    counts = {pid: taken(session, pid) for pid in ids}
    assert dict.fromkeys(ids, 1) == {pid: sum(n) for pid, n in counts.items()}
    assert [] == notices(home)


def test_a_prompt_posted_while_a_bash_tool_runs_is_seen_in_that_turn(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """Taken mid-turn (a `queued_command` attachment, no user turn of its own): `seen`."""
    home, session, api_log = shared
    _start_turn(session, api_log, "run it PB-SLEEP-8", "sleep")
    pid = post(home, "--to", AGENT, "while the tool runs")
    wait_stages(home, [pid], "seen", session, timeout=60)
    assert (0, 1) == taken(session, pid)


@pytest.mark.untimed  # a session of its own; its checks only wait
def test_crossSessionInbound_hold_gives_held(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """Claude Code holds the prompt for its person: `held`, and `wait --until delivered` waits."""
    session = start_claude(clients_bin, home, tmp_path, api[0], {"crossSessionInbound": "hold"})
    try:
        pid = post(home, "--to", AGENT, "held for the person")
        wait_stages(home, [pid], "held", session, timeout=30)
        line = run_cli(home, "status", pid).stdout.splitlines()[1]
        assert "held by the agent (crossSessionInbound: hold) since " in line, line
        waited = run_cli(home, "wait", pid, "--until", "delivered", "--timeout", "1")
        assert 3 == waited.returncode, waited.stderr
        assert (0, 0) == taken(session, pid)
    finally:
        session.close()


@pytest.mark.untimed  # a session of its own; its checks only wait
def test_crossSessionInbound_refuse_gives_undelivered_with_the_reason(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """Claude Code refuses peer messages and records nothing: `undelivered`, naming the setting."""
    session = start_claude(clients_bin, home, tmp_path, api[0], {"crossSessionInbound": "refuse"})
    try:
        pid = post(home, "--to", AGENT, "refused")
        wait_stages(home, [pid], "undelivered", session, timeout=30)
        [notice] = notices(home)
        settings = tmp_path / "proj" / ".claude" / "settings.local.json"
        expected = f"Claude Code refuses peer messages (crossSessionInbound: refuse in {settings})"
        assert (pid, expected) == (notice.prompt_id, notice.reason)
    finally:
        session.close()


FILL = """
import json, socket, sys
for n in range(int(sys.argv[2])):
    line = {"type": "user", "message": {"role": "user", "content": f"filler {sys.argv[3]} {n}"}}
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sys.argv[1])
        s.sendall(json.dumps(line).encode() + b"\\n")
"""


def _fill_the_queue(sock: str) -> None:
    """50 lines queued in a busy session, Claude Code's most: from two processes, since each
    sending process is a sender of its own with a bucket of 30."""
    for who in ("a", "b"):
        subprocess.run([sys.executable, "-c", FILL, sock, "25", who], check=True, timeout=30)


def test_a_listener_killed_between_a_drop_and_its_retry_still_delivers_once(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """Dropped for a full queue, the listener dies before it retries; the next one delivers
    the prompt, and it reaches the model once."""
    session = start_claude(clients_bin, home, tmp_path, api[0], {}, PANEBOARD_FAILPOINT="not-taken")
    try:
        lock = home / "test" / "panes" / f"{AGENT}.lock"
        first = holder(lock)
        sock = str(session.registry["messagingSocketPath"])
        pane_log = home / "test" / "panes" / f"{AGENT}.log"
        session.type("think hard PB-SLOW-15")
        wait_until(lambda: any("slow" in r for r in stand_in_log(api[1])), "the slow turn", 30)
        _fill_the_queue(sock)
        pid = post(home, "--to", AGENT, "after the drop")
        dead = "the listener's death at its failpoint"
        wait_until(lambda: not holder(lock), dead, 30, pane_log.read_text)
        log = pane_log.read_text()
        assert first is not None and f"delivered {pid}" not in log  # it died at the drop
        [transcript] = (session.home / ".claude" / "projects").glob(
            f"*/{session.registry['sessionId']}.jsonl"
        )
        door = ("--door", "claude-inbox", "--socket", sock, "--transcript", str(transcript))
        # Claude Code drops the text again as a duplicate of the sender's last for about 30 s
        # after the first drop: retried each second (not after the default's 1, 2, 5, 15, 30 s),
        # it goes as soon as that window has passed
        every_second = ("--backoff", ",".join(["1"] * 90))
        with Listening(home, AGENT, *door, *every_second) as bob:
            bob.wait_err(f"seen {pid}", timeout=120)
            bob.stop()
        assert (1, 0) == taken(session, pid)
        assert "too many undelivered peer messages queued" in session.transcript()
    finally:
        session.close()


def _start_turn(session: ClaudeSession, api_log: Path, typed: str, marker: str) -> None:
    """Type *typed* into the session, and return once the model's stand-in is at *marker*."""
    session.type(typed)
    wait_until(
        lambda: any(marker in r for r in stand_in_log(api_log)), f"the stand-in at {marker!r}", 30
    )
