"""The wake doors without the agents' CLIs: each agent's resume command and environment, the
session ids refused, and the resume runner (listener/doors/resume.py) on a real process that
prints events as a CLI does (the real CLIs: tests/real/test_wake_doors.py)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from paneboard.agents import AGENTS
from paneboard.agents.base import DoorRequest, WakeRequest
from paneboard.listener.doors.resume import Resume, ResumeDoor, Started, own_words
from paneboard.listener.sleep import WakeDoor
from paneboard.protocol.errors import BadInput, DoorFailed
from paneboard.state.paths import BoardPaths
from paneboard.state.trust.policy import Policy
from tests.factories import prompt

UUID = "01a233d6-bb1f-7ce1-952b-40ba5391234c"
ARGV = {
    "codex": ["codex", "exec", "resume", "--json", "--skip-git-repo-check", "--", UUID, "-"],
    "opencode": ["opencode", "run", "--session", "ses_x1", "--format", "json"],
    "kilo": ["kilo", "run", "--session", "ses_x1", "--format", "json"],
    "qwen": ["qwen", "-o", "stream-json", "--include-partial-messages", "--resume", UUID],
    "pi": ["pi", "-p", "--session", UUID, "--mode", "json"],
    "gemini": ["gemini", "--resume", UUID, "-o", "stream-json"],
    "copilot": ["copilot", "--resume", UUID, "--output-format", "json"],
    "hermes": ["hermes", "chat", "--resume", "20261201_232322_71d2e3", "-Q"],
}
SESSIONS = {"opencode": "ses_x1", "kilo": "ses_x1", "hermes": "20261201_232322_71d2e3"}


def _request(tmp_path: Path, session: str, **env: str) -> WakeRequest:
    return WakeRequest(session, tmp_path, {"PATH": "/usr/bin:/bin", **env}, tmp_path / "pb", 5)


@pytest.mark.parametrize("kind", sorted(ARGV))
def test_each_wake_door_runs_the_agents_own_resume_of_that_session(
    kind: str, tmp_path: Path
) -> None:
    session = SESSIONS.get(kind, UUID)
    env = {"CLAUDE_CODE_MESSAGING_SOCKET": "/tmp/x.sock", "RUST_BACKTRACE": "1", "KEEP": "1"}
    door = AGENTS[kind].wake_door(_request(tmp_path, session, **env))
    assert isinstance(door, ResumeDoor)
    assert ARGV[kind] == list(door.resume.argv)
    assert f"{kind}-resume" == door.name
    assert {"PATH": "/usr/bin:/bin", "KEEP": "1", "PANEBOARD_WOKEN": session} == door.env
    assert tmp_path / "pb" / "wake" / f"{kind}-resume-{session}.out" == door.resume.output()
    flag = {"copilot": "--prompt=", "hermes": "--query="}.get(kind, "")
    assert flag == door.resume.prompt_flag


@pytest.mark.parametrize("kind", sorted(ARGV))
@pytest.mark.parametrize("session", ["--help", "../../etc/passwd", "", "a b"])
def test_a_session_id_that_is_none_is_refused_before_anything_runs(
    kind: str, session: str, tmp_path: Path
) -> None:
    with pytest.raises(BadInput):
        AGENTS[kind].wake_door(_request(tmp_path, session))
    assert not (tmp_path / "pb").exists()


@pytest.mark.parametrize("kind", ["codex", "qwen", "pi", "gemini", "copilot"])
def test_a_name_is_no_session_id_where_the_resume_takes_names_or_prefixes(
    kind: str, tmp_path: Path
) -> None:
    """Codex starts a new thread for a name it does not know; pi and Copilot match prefixes."""
    with pytest.raises(BadInput):
        AGENTS[kind].wake_door(_request(tmp_path, "01a233d6"))


@pytest.mark.parametrize("kind", ["droid", "qoder"])
def test_agents_without_a_wake_door_have_none(kind: str, tmp_path: Path) -> None:
    assert AGENTS[kind].wake_door(_request(tmp_path, UUID)) is None


# A CLI's stand-in: reads its input into a file, prints what its arguments say, then exits.
CLI = """
import json, sys, time
open(sys.argv[1], "w").write(sys.stdin.read())
for word in sys.argv[2:]:
    if word.startswith("sleep="):
        time.sleep(float(word[6:]))
    elif word.startswith("noise="):
        print(("x" * 99 + "\\n") * int(word[6:]), end="", flush=True)
    elif word.startswith("exit="):
        sys.exit(int(word[5:]))
    elif word.startswith("{"):
        print(word, flush=True)
    else:
        print(word, file=sys.stderr, flush=True)
"""


def _door(tmp_path: Path, *words: str, timeout: float = 10) -> ResumeDoor:
    script = tmp_path / "cli.py"
    script.write_text(CLI)
    argv = [sys.executable, str(script), str(tmp_path / "input"), *words]
    marks = (lambda e: e.get("session") == "s1", lambda e: e.get("type") == "turn")
    resume = Resume(
        "x-resume", "X", "s1", argv, marks, tmp_path, dict(os.environ), tmp_path / "pb", timeout
    )
    return ResumeDoor(resume)


SESSION = json.dumps({"session": "s1"})
TURN = json.dumps({"type": "turn"})
TEXT = 'a "quoted" prompt\n-starting lines\n'


def test_accepted_once_the_events_admit_the_turn_and_the_agent_runs_on(tmp_path: Path) -> None:
    door = _door(tmp_path, "WARNING: noise", SESSION, TURN, "sleep=30")
    started = time.monotonic()
    assert "accepted" == anyio.run(door.deliver, prompt(1), TEXT, "bob")
    assert time.monotonic() - started < 10
    assert door.process is not None and door.process.poll() is None  # its turn goes on
    assert TEXT == (tmp_path / "input").read_text()  # its input, byte for byte
    assert not (tmp_path / "pb" / "wake" / "x-resume-s1.in").exists()
    out = tmp_path / "pb" / "wake" / "x-resume-s1.out"
    assert 0o600 == out.stat().st_mode & 0o777
    os.killpg(door.process.pid, 9)


def test_the_asleep_listener_knows_the_process_of_the_turn_it_woke(tmp_path: Path) -> None:
    """Its `woken_pid`: once that process ends, the listener falls asleep again (a headless
    turn's process is the woken session)."""
    door = _door(tmp_path, SESSION, TURN, "sleep=30")
    wake = WakeDoor(door, door, "s1", BoardPaths(tmp_path, "test").pane("bob"), Policy, time.time)
    assert wake.woken_pid() is None
    assert "accepted" == anyio.run(door.deliver, prompt(1), TEXT, "bob")
    assert door.process is not None
    assert Started("s1", door.process.pid) == door.spawned
    assert door.process.pid == wake.woken_pid()
    os.killpg(door.process.pid, 9)


def test_a_resume_that_failed_names_no_woken_process(tmp_path: Path) -> None:
    door = _door(tmp_path, SESSION, "exit=1")
    with pytest.raises(DoorFailed):
        anyio.run(door.deliver, prompt(1), TEXT, "bob")
    assert door.spawned is None


@pytest.mark.parametrize(
    ("kind", "transcript"),
    [
        ("pi", f"/h/.pi/agent/sessions/--p--/2026-12-02T02-30-23-079Z_{UUID}.jsonl"),
        ("qwen", f"/h/.qwen/projects/-p/chats/{UUID}.jsonl"),
    ],
)
def test_the_session_a_wake_resumes_is_read_from_the_listeners_conversation_file(
    kind: str, transcript: str, tmp_path: Path
) -> None:
    request = DoorRequest(5, {}, tmp_path, transcript=transcript)
    assert UUID == AGENTS[kind].wake_session(request)


@pytest.mark.parametrize("kind", ["pi", "qwen"])
@pytest.mark.parametrize("name", [None, "/h/sessions/notes.jsonl", "/h/x_01a233d6.jsonl"])
def test_no_session_for_a_wake_without_a_file_named_after_one(
    kind: str, name: str | None, tmp_path: Path
) -> None:
    assert AGENTS[kind].wake_session(DoorRequest(5, {}, tmp_path, transcript=name)) is None


def test_qwen_s_session_without_a_file_is_its_live_registry_record_s(tmp_path: Path) -> None:
    sessions = tmp_path / ".qwen" / "sessions"
    sessions.mkdir(parents=True)
    live = os.getpid()  # the record of a live process
    record = {"schemaVersion": 1, "pid": live, "sessionId": UUID, "ipcPath": "/x.sock"}
    (sessions / f"{live}.json").write_text(json.dumps(record))
    env = {"QWEN_HOME": str(tmp_path / ".qwen")}
    assert UUID == AGENTS["qwen"].wake_session(DoorRequest(5, env, tmp_path, pid=live))
    assert AGENTS["qwen"].wake_session(DoorRequest(5, env, tmp_path, pid=live + 1)) is None


def test_marks_after_a_long_output_of_a_command_that_ended_count(tmp_path: Path) -> None:
    door = _door(tmp_path, "noise=3000", SESSION, "noise=3000", TURN, "exit=0")
    assert "accepted" == anyio.run(door.deliver, prompt(1), TEXT, "bob")


def test_the_marks_count_only_in_their_order(tmp_path: Path) -> None:
    door = _door(tmp_path, TURN, SESSION, "exit=0")
    with pytest.raises(DoorFailed, match="X exited 0 without taking the turn in session s1"):
        anyio.run(door.deliver, prompt(1), TEXT, "bob")


def test_a_failed_resume_carries_the_agents_own_words(tmp_path: Path) -> None:
    door = _door(tmp_path, "WARNING: noise", "Error: no session s1", "try --resume", "exit=1")
    with pytest.raises(DoorFailed, match=r"X exited 1: Error: no session s1$"):
        anyio.run(door.deliver, prompt(1), TEXT, "bob")


def test_a_resume_silent_past_its_time_is_killed_and_unknown(tmp_path: Path) -> None:
    door = _door(tmp_path, SESSION, "sleep=30", timeout=0.5)
    assert "unknown" == anyio.run(door.deliver, prompt(1), TEXT, "bob")
    assert door.process is not None
    assert -9 == door.process.wait(timeout=5)


def test_own_words() -> None:
    assert "Error: Session not found" == own_words("\x1b[91m\x1b[1mError: \x1b[0mSession not found")
    assert "No saved session found" == own_words('{"type": "x"}\nNo saved session found\n')
    assert "Session not found: s1" == own_words("Session not found: s1\nUse a session ID\n")
    assert "(no output)" == own_words("")


def test_the_woken_turn_s_mark_goes_to_no_listener_its_hooks_start() -> None:
    from paneboard.listener.doors.process import child_env

    assert {"KEEP": "1"} == child_env({"KEEP": "1", "PANEBOARD_WOKEN": UUID})
