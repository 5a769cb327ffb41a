"""paneboard against the real Claude Code and Codex CLIs, offline (see tests/real/conftest.py)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from paneboard.protocol.posts import Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from testing.clients import ClaudeSession, codex_env, offline_codex_thread, queue_listener
from testing.helpers import Listening, LoadedThread, cli_env, post, run_cli, wait_until

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no interactive Claude Code session"
)
PANEBOARD = str(Path(sys.executable).with_name("paneboard"))


def test_codex_queue_door_against_real_codex(home: Path, tmp_path: Path, clients_bin: Path) -> None:
    """The item lands in codex's queue_1.sqlite with the composed text."""
    with queue_listener(home, tmp_path, clients_bin) as (codex_home, tid, bob):
        pid = post(home, "--to", "codex-bob", "run the linter")
        bob.wait_err(f"delivered {pid}", timeout=90)
    with sqlite3.connect(codex_home / "queue_1.sqlite") as db:
        rows = db.execute("SELECT thread_id, payload_json FROM queued_items").fetchall()
    assert [tid] == [r[0] for r in rows]
    assert f"[paneboard] prompt {pid}" in rows[0][1] and "run the linter" in rows[0][1]


def test_codex_unknown_thread_is_undelivered_with_codex_error(
    home: Path, tmp_path: Path, clients_bin: Path
) -> None:
    """A loaded thread codex has no rollout for: codex's own error is the notice's reason."""
    codex_home = tmp_path / "codex"
    offline_codex_thread(codex_home, tmp_path)
    env = codex_env(home, codex_home, clients_bin)
    unknown = "00000000-0000-4000-8000-000000000000"
    args = (
        "--door",
        "codex-queue",
        "--thread",
        unknown,
        "--backoff",
        "0.05",
        "--door-timeout",
        "60",
    )
    with LoadedThread(codex_home, unknown), Listening(home, "codex-bob", *args, env=env) as bob:
        pid = post(home, "--to", "codex-bob", "hello")
        bob.wait_err(f"undelivered {pid}", timeout=90)
    [notice] = [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]
    assert "no rollout found for thread id" in notice.reason


def _claude(
    clients_bin: Path, home: Path, tmp_path: Path, port: int, mode: str, bash: bool = False
) -> ClaudeSession:
    project = tmp_path / "proj"
    project.mkdir()
    if bash:  # the person lets the session run shell commands without asking
        (project / ".claude").mkdir()
        allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}
        (project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
    done = run_cli(
        home,
        *["hook", "install", "claude", "--project"],
        str(project),
        "--mode",
        mode,
        "--as",
        "claude-bob",
    )
    assert 0 == done.returncode, done.stderr
    env = cli_env(
        home, PATH=f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
    )
    return ClaudeSession(clients_bin, tmp_path / "claude-home", project, port, env)


def _seen(home: Path, pid: str) -> dict[str, Any]:
    """claude-bob's part of *pid*'s status, once `wait --until seen` says it is seen."""
    done = run_cli(home, "wait", pid, "--until", "seen", "--timeout", "30", timeout=60)
    assert 0 == done.returncode, done.stderr
    status = json.loads(run_cli(home, "status", pid, "--json").stdout)
    return dict(status["recipients"]["claude-bob"])


def test_claude_session_start_hook_listens_on_the_session_socket(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """SessionStart starts the listener on the session's socket; a post shows up as a peer
    message; /exit stops it."""
    session = _claude(clients_bin, home, tmp_path, api[0], "listen")
    try:
        session.wait_listener("claude-bob", home)
        pid = post(home, "--to", "claude-bob", "please say hello")
        [turn] = session.wait_user_turns(f"[paneboard] prompt {pid}")
        assert "peer" == turn["origin"]["kind"]
        status = _seen(home, pid)
        assert ("seen", "claude-inbox") == (status["stage"], status["door"])
        session.type("/exit")
        lock = home / "test" / "panes" / "claude-bob.lock"
        wait_until(lambda: not holder(lock), "the listener ended with its session", 30, every=0.2)
    finally:
        session.close()


def test_claude_stop_mode_hands_a_prompt_over_at_the_next_stop_once(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """No listener: a prompt posted while idle arrives as the next user turn after a Stop,
    exactly once."""
    session = _claude(clients_bin, home, tmp_path, api[0], "stop")
    try:
        pid = post(home, "--to", "claude-bob", "check the flaky test")
        session.type("hello")
        session.wait_transcript(f"[paneboard] prompt {pid}")
        session.type("anything else?")
        session.wait_transcript("anything else?")
        # The reason is recorded several ways (attachment, hook summary, request blob); what
        # the agent was handed is the user turn, which must appear once.
        turns = [
            ln
            for ln in map(json.loads, session.transcript().splitlines())
            if ln.get("type") == "user" and f"prompt {pid} from" in json.dumps(ln)
        ]
        assert 1 == len(turns)
        assert "Stop hook feedback" in json.dumps(turns[0])
        assert "> check the flaky test" in turns[0]["message"]["content"]
        # The Stop after that turn finds the reason in the transcript: `seen`.
        status = _seen(home, pid)
        assert ("seen", "stop-hook", "claude-transcript") == (
            status["stage"],
            status["door"],
            status["source"],
        )
        log = run_cli(home, "log", "--json").stdout.splitlines()
        assert ["prompt", "delivered", "seen"] == [json.loads(line)["kind"] for line in log]
    finally:
        session.close()


def test_claude_answers_a_prompt_and_wait_prints_it(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """The delivered prompt's turn runs its `paneboard answer` command in Bash; `wait` prints it."""
    session = _claude(clients_bin, home, tmp_path, api[0], "listen", bash=True)
    try:
        session.wait_listener("claude-bob", home)
        pid = post(home, "--to", "claude-bob", "what is six times seven?\nMOCK-ANSWER: forty-two")
        done = run_cli(home, "wait", pid, "--timeout", "60", timeout=90)
        assert (0, "forty-two\n") == (done.returncode, done.stdout), done.stderr + session.screen()

        # The agent can answer before its listener has seen Claude Code admit the prompt and
        # written the receipt that names the door: wait for that receipt.
        def status() -> dict[str, Any]:
            shown = json.loads(run_cli(home, "status", pid, "--json").stdout)
            return dict(shown["recipients"]["claude-bob"])

        wait_until(lambda: status()["door"], "the delivered receipt names the door", 30)
        assert ("answered", "claude-inbox") == (status()["stage"], status()["door"])
    finally:
        session.close()
