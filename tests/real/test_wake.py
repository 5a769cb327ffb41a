"""An asleep agent woken by a prompt, on the real agent CLIs offline (Claude Code 2.1.328:
`claude --bg --resume SESSION TEXT`), against the tests' model stand-in.

Parametrized over the agents that have a wake door and a session fixture here (`WAKEABLE`):
each test starts a session with paneboard's hooks and `--wake resume`, ends it as its person
would, and posts to the asleep agent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.protocol.posts import Delivered, Seen
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import ClaudeSession, free_port
from testing.helpers import ScriptServer, cli_env, run_cli, wait_until
from tests.real.live import UNTIMED

NO_TMUX = "tmux is missing: no interactive Claude Code session"
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason=NO_TMUX)
# Each test has a session of its own; those whose checks only wait are `UNTIMED`, not the held
# prompt (no wake begun within 3 s), the killed wake (the woken session shows the prompt
# within `RESUME_WITHIN`) and the three prompts (the model's requests are counted: under load
# in four workers it saw the first five times).
AGENT = "claude-bob"


class ClaudeWake:
    """A Claude Code session with paneboard's hooks, ended and woken."""

    kind = "claude"

    def __init__(self, clients_bin: Path, folder: Path, env: dict[str, str]) -> None:
        self.bin, self.folder = clients_bin, folder
        self.home = folder / "pb"
        self.api = ScriptServer("testing.api_stand_in", free_port(), folder / "api.log")
        self.project = folder / "proj"
        (self.project / ".claude").mkdir(parents=True)
        allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}
        (self.project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
        args = ("hook", "install", "claude", "--project", str(self.project), "--as", AGENT)
        done = run_cli(self.home, *args)
        assert 0 == done.returncode, done.stderr
        path = f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
        self.env = cli_env(self.home, PATH=path, **env)
        self.sessions: list[ClaudeSession] = []
        self.open()
        self.sid = str(self.session.registry["sessionId"])

    @property
    def session(self) -> ClaudeSession:
        return self.sessions[-1]

    def open(self, *args: str) -> int:
        """A session in a terminal (a person's), its listener's pid once it holds the pane."""
        home = self.folder / "claude-home"
        self.sessions.append(
            ClaudeSession(self.bin, home, self.project, self.api.port, self.env, *args)
        )
        return self.session.wait_listener(AGENT, self.home)

    def first_turn(self) -> None:
        self.session.type("hello")
        self.session.wait_transcript('"turn_duration"')

    def end(self) -> None:
        """The person ends the session (`/exit`)."""
        self.session.type("/exit")

    def model_saw(self, pid: str) -> int:
        """How many turns the model was asked to take on prompt *pid* (its header starts a line
        of the turn's input; a side request quoting it, for a title, is not a turn)."""
        mark = re.compile(rf"(^|\n) ?\[paneboard\] prompt {pid} from")
        return sum(bool(mark.search(r.get("turn", ""))) for r in self.api.records())

    def woken(self) -> list[dict[str, Any]]:
        """The background sessions Claude Code runs for this session id (`claude --bg`)."""
        found = []
        for reg in (self.folder / "claude-home" / ".claude" / "sessions").glob("*.json"):
            try:
                data = json.loads(reg.read_text())
            except ValueError:
                continue
            if data.get("kind") == "bg" and data.get("sessionId") == self.sid:
                found.append(data)
        return found

    def stop_woken(self) -> None:
        """End the woken sessions as `claude stop` does."""
        for data in self.woken():
            done = subprocess.run(
                [str(self.bin / "claude"), "stop", str(data["jobId"])],
                env=self.session_env(),
                cwd=self.project,
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert 0 == done.returncode, done.stderr

    def session_env(self) -> dict[str, str]:
        home = self.folder / "claude-home"
        return {
            **self.env,
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-dummy",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.api.port}",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }

    def close(self) -> None:
        for session in self.sessions:
            session.close()
        _end_home(self.folder / "claude-home")
        self.api.close()


def _end_home(home: Path) -> None:
    """End every process whose HOME is *home*: the woken sessions, Claude Code's background
    daemon and its spares, the listeners they started (all of this test's making)."""
    wanted = f"HOME={home}".encode()
    for _ in range(2):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                env = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if wanted in env:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.2)


WAKEABLE = {"claude": ClaudeWake}


@pytest.fixture(params=sorted(WAKEABLE))
def agent(
    request: pytest.FixtureRequest, tmp_path: Path, clients_bin: Path
) -> Iterator[ClaudeWake]:
    """A session of the agent, with `--wake resume`, one turn done, ended: its listener asleep."""
    home = tmp_path / "pb"
    home.mkdir(mode=0o700)
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    policy = Policy(wake="resume", rate=0)
    write_policy(home / "test", AGENT, policy)
    marker = request.node.get_closest_marker("session_env")
    one = WAKEABLE[request.param](clients_bin, tmp_path, marker.args[0] if marker else {})
    try:
        one.first_turn()
        one.end()
        wait_until(
            lambda: presence(home).get("sleep") == "asleep", "asleep", 60, lambda: pane_log(home)
        )
        yield one
    finally:
        one.close()


def presence(home: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((home / "test" / "panes" / f"{AGENT}.presence").read_text()))
    except (OSError, ValueError):
        return {}


def pane_log(home: Path) -> str:
    log = home / "test" / "panes" / f"{AGENT}.log"
    return log.read_text()[-4000:] if log.exists() else ""


def stage(home: Path, pid: str) -> str | None:
    from paneboard.state.fold import fold

    ps = fold(read_posts(home / "test" / "log")).prompts.get(pid)
    return None if ps is None else ps.recipients[AGENT].stage


def wait_stage(home: Path, pid: str, wanted: str, timeout: float = 120) -> None:
    wait_until(
        lambda: stage(home, pid) == wanted, f"{pid} {wanted}", timeout, lambda: pane_log(home)
    )


def posts(home: Path, kind: type) -> list[Any]:
    return [p for _, p in read_posts(home / "test" / "log") if isinstance(p, kind)]


def post(home: Path, body: str) -> str:
    done = run_cli(home, "post", "--as", "alice", "--to", AGENT, "--", body)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


@UNTIMED
def test_a_prompt_wakes_the_ended_session_which_answers_from_its_shell_and_ends_the_wait(
    agent: ClaudeWake,
) -> None:
    home = agent.home
    posted = time.time()
    pid = post(home, "what is six times seven?\nMOCK-ANSWER: 42")
    waited = subprocess.run(
        [sys.executable, "-m", "paneboard", "wait", pid, "--as", "alice", "--timeout", "120"],
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert 0 == waited.returncode, waited.stderr + pane_log(home)
    assert "42" in waited.stdout
    [woke] = [d for d in posts(home, Delivered) if d.prompt_id == pid]
    assert agent.sid == woke.woke
    status = run_cli(home, "status", "--as", "alice", pid)
    assert f"woke {agent.sid} at" in status.stdout, status.stdout
    assert 1 == agent.model_saw(pid)
    wait_until(
        lambda: any(p.prompt_id == pid for p in posts(home, Seen)),
        "seen",
        60,
        lambda: pane_log(home),
    )
    print(f"post -> woken session's model: {woke.ts - posted:.2f} s")


def test_a_prompt_the_policy_holds_wakes_nothing(agent: ClaudeWake) -> None:
    home = agent.home
    write_policy(home / "test", AGENT, Policy(wake="resume", rate=0, others="hold"))
    pid = post(home, "held work")
    wait_stage(home, pid, "held", 30)
    time.sleep(3)  # a wake would have begun by now
    assert [] == agent.woken()
    assert 0 == agent.model_saw(pid)
    assert "asleep" == presence(home).get("sleep")


def test_three_prompts_while_asleep_cause_one_wake_each_reaching_the_model_once(
    agent: ClaudeWake,
) -> None:
    home = agent.home
    ids = [post(home, f"task {n}") for n in range(3)]
    for pid in ids:
        wait_stage(home, pid, "seen", 120)
    wakes = json.loads((home / "test" / "panes" / f"{AGENT}.wakes").read_text())
    assert 1 == len(wakes)
    assert 1 == len(agent.woken())
    assert [1, 1, 1] == [agent.model_saw(pid) for pid in ids]


@UNTIMED
def test_a_person_reopening_the_session_takes_the_pane_and_nothing_is_doubled(
    agent: ClaudeWake,
) -> None:
    home = agent.home
    asleep = holder(home / "test" / "panes" / f"{AGENT}.lock")
    live = agent.open("--resume", agent.sid)
    wait_until(
        lambda: holder(home / "test" / "panes" / f"{AGENT}.lock") not in (None, asleep),
        "the handover",
        60,
        lambda: pane_log(home),
    )
    wait_until(
        lambda: presence(home).get("sleep") == "", "live presence", 30, lambda: pane_log(home)
    )
    pid = post(home, "for the person's session")
    wait_stage(home, pid, "seen", 120)
    assert [] == agent.woken()
    assert 1 == agent.model_saw(pid)
    assert live > 0


@UNTIMED
def test_the_wake_budget_spent_prompts_wait_and_status_says_why(agent: ClaudeWake) -> None:
    home = agent.home
    write_policy(home / "test", AGENT, Policy(wake="resume", rate=0, wake_limit=1))
    first = post(home, "first")
    wait_stage(home, first, "seen", 120)
    # The woken session ends; its listener falls asleep in turn.
    wait_until(lambda: agent.woken(), "the woken session", 30)
    agent.stop_woken()
    wait_until(
        lambda: not agent.woken() and presence(home).get("sleep") == "asleep",
        "asleep again",
        60,
        lambda: pane_log(home),
    )
    second = post(home, "second")
    wait_until(
        lambda: "waits until" in pane_log(home) and second in pane_log(home),
        "the wait",
        30,
        lambda: pane_log(home),
    )
    status = run_cli(home, "status", "--as", "alice", second)
    assert "wake budget: 1 wakes in the last hour spent" in status.stdout, status.stdout
    assert "posted" == stage(home, second)
    assert 0 == agent.model_saw(second)


@pytest.mark.session_env({"PANEBOARD_FAILPOINT": "mid-wake"})
def test_a_listener_killed_in_the_middle_of_a_wake_leaves_the_prompt_delivered_once(
    agent: ClaudeWake,
) -> None:
    """The asleep listener dies as soon as the resume has run (the failpoint); the woken
    session's own listener finds the wake begun, lets it show in the conversation, and counts
    the prompt delivered without sending it again."""
    home = agent.home
    pid = post(home, "delivered once")
    wait_stage(home, pid, "seen", 120)
    [receipt] = [d for d in posts(home, Delivered) if d.prompt_id == pid]
    assert receipt.woke is None  # written by the woken session's listener, not the killed one
    assert 1 == agent.model_saw(pid)
    assert 1 == len(agent.woken())


@UNTIMED
def test_post_to_model_for_an_asleep_agent_beside_a_live_session(
    tmp_path: Path, clients_bin: Path
) -> None:
    """The time from `post` to the model's request carrying the prompt, for the live session
    and then for the same agent asleep (a wake each time), in one run; printed."""
    home = tmp_path / "pb"
    home.mkdir(mode=0o700)
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    write_policy(home / "test", AGENT, Policy(wake="resume", rate=0))
    one = ClaudeWake(clients_bin, tmp_path, {})
    try:
        one.first_turn()
        live = [_to_model(one, f"live {n}") for n in range(3)]
        one.end()
        asleep = []
        for n in range(3):
            wait_until(lambda: presence(home).get("sleep") == "asleep", "asleep", 60)
            asleep.append(_to_model(one, f"asleep {n}"))
            wait_until(lambda: one.woken(), "the woken session", 30)
            one.stop_woken()
        print(f"post -> model, live:   {', '.join(f'{t:.2f}' for t in live)} s")
        print(f"post -> model, asleep: {', '.join(f'{t:.2f}' for t in asleep)} s")
        assert len(asleep) == 3
    finally:
        one.close()


def _to_model(one: ClaudeWake, body: str) -> float:
    posted = time.time()
    pid = post(one.home, body)
    mark = re.compile(rf"(^|\n) ?\[paneboard\] prompt {pid} from")

    def reached() -> float | None:
        hits = [r["ts"] for r in one.api.records() if mark.search(r.get("turn", ""))]
        return hits[0] if hits else None

    at = wait_until(reached, f"{pid} at the model", 120, lambda: pane_log(one.home))
    wait_stage(one.home, pid, "seen", 60)
    return float(at) - posted
