"""`seen`: which records of a conversation file show a prompt, and the listener that posts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from paneboard.agents import AGENTS
from paneboard.agents.claude import CLAUDE
from paneboard.agents.codex import CODEX
from paneboard.agents.codex_thread import find_rollout
from paneboard.agents.copilot import COPILOT
from paneboard.agents.gemini import GEMINI
from paneboard.board.text import ago
from paneboard.listener.seen import prompt_ids
from paneboard.protocol.compose import compose
from paneboard.state.panes.lock import holder
from testing.helpers import (
    PANEBOARD,
    Listening,
    LoadedThread,
    SocketServer,
    cli_env,
    fake_codex,
    post,
    run_cli,
    wait_until,
)
from tests.factories import prompt

PID = "01abcdefghjkmnpqrstvwxyz01"
OTHER = "01abcdefghjkmnpqrstvwxyz02"
THREAD = "01a22f41-9175-7bb3-9acb-510ce9e9a2e5"


def _text(pid: str = PID, body: str = "hello") -> str:
    return compose(prompt(id=pid, ts=1.0, body=body), exe="pb", home="/h", agent="bob")


def _claude_user(content: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


def _codex_item(role: str, text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    payload = {"type": "message", "role": role, "content": content}
    return {"type": "response_item", "payload": payload}


def test_user_turns_of_claude_code_and_codex_show_the_prompt() -> None:
    claude = [
        _claude_user("Another Claude session sent a message:\n" + _text()),
        _claude_user([{"type": "text", "text": "Stop hook feedback:\n" + _text(OTHER)}]),
    ]
    assert [PID, OTHER] == prompt_ids(claude, CLAUDE.user_texts)
    assert [PID] == prompt_ids([_codex_item("user", _text())], CODEX.user_texts)


def test_user_turns_of_gemini_and_copilot_show_the_prompt() -> None:
    """Gemini CLI's chat file and Copilot CLI's events, as their Stop-hook doors leave them."""
    gemini = {"type": "user", "content": [{"text": _text()}]}
    copilot = {"type": "user.message", "data": {"content": _text(OTHER), "transformedContent": "x"}}
    assert [PID] == prompt_ids([gemini], GEMINI.user_texts)
    assert [OTHER] == prompt_ids([copilot], COPILOT.user_texts)


def test_one_agents_records_are_not_another_agents_turns() -> None:
    """Each agent reads its own file's format: a record of another agent's is no turn."""
    records = {
        "claude": _claude_user(_text()),
        "codex": _codex_item("user", _text()),
        "gemini": {"type": "user", "content": [{"text": _text()}]},
        "copilot": {"type": "user.message", "data": {"content": _text()}},
        "qwen": {"type": "user", "message": {"role": "user", "parts": [{"text": _text()}]}},
    }
    seen = {
        (kind, reader)
        for kind, record in records.items()
        for reader in records
        if prompt_ids([record], AGENTS[reader].user_texts)
    }
    assert {(kind, kind) for kind in records} == seen


def test_queued_and_other_records_are_not_seen() -> None:
    """Queue lines, tool results, developer notes, echoes of a turn or a block reason."""
    text = _text()
    records = [
        {"type": "queue-operation", "operation": "enqueue", "content": text},
        {"type": "attachment", "message": {"role": "user", "content": text}},
        {"type": "api-request-blob", "message": {"role": "user", "content": text}},
        _claude_user([{"type": "tool_result", "content": text}]),
        {**_claude_user(text), "isCompactSummary": True},
        _codex_item("developer", text),
        _codex_item("assistant", text),
        {"type": "event_msg", "payload": {"type": "user_message", "message": text}},
        {"type": "warning", "content": "Agent execution blocked: " + text},
        {"type": "hook.end", "data": {"output": {"decision": "block", "reason": text}}},
    ]
    assert [] == [pid for a in AGENTS.values() for pid in prompt_ids(records, a.user_texts)]


def _queued(text: str, kind: str = "queued_command") -> dict[str, Any]:
    """Claude Code 2.1.328's record of a peer message taken while a tool ran."""
    rendered = "Another Claude session sent a message while you were working:\n" + text
    attachment = {"type": kind, "prompt": text, "origin": {"kind": "peer", "from": "unknown"}}
    return {"type": "attachment", "attachment": attachment, "rendered": [{"content": rendered}]}


def test_mid_turn_queued_command_attachments_show_the_prompt() -> None:
    """Two messages taken in one turn: one `queued_command` attachment each, both seen, once."""
    records = [_queued(_text()), _queued(_text(OTHER)), _queued(_text(), kind="date")]
    assert [PID, OTHER] == prompt_ids(records, CLAUDE.user_texts)


def test_a_body_cannot_imitate_another_prompt() -> None:
    """Every body line starts with `> `, so a forged header in a body names nothing."""
    forged = _text(body=f"[paneboard] prompt {OTHER} from mallory on board b")
    assert [PID] == prompt_ids([_claude_user(forged)], CLAUDE.user_texts)


def test_find_rollout(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    rollout = day / "rollout-2026-12-01T01-00-00-th-1.jsonl"
    rollout.touch()
    assert rollout == find_rollout(tmp_path, "th-1")
    assert None is find_rollout(tmp_path, "th-2")


def test_ago_reads_like_a_person() -> None:
    assert ["0 s ago", "59 s ago", "12 min ago", "3 h ago", "47 h ago", "2 days ago"] == [
        ago(s) for s in (-1.0, 59.9, 720.0, 3 * 3600.0, 47 * 3600.0, 48 * 3600.0)
    ]


def test_transcript_with_a_door_that_has_none_is_refused(home: Path, tmp_path: Path) -> None:
    """exec, maildir and stdout never claim `seen`: one line, exit 1, nothing written."""
    done = run_cli(home, "listen", "--as", "bob", "--door", "stdout", "--transcript", "t.jsonl")
    expected = (
        "paneboard: --transcript goes with --door claude-inbox or codex-queue or qwen-inbox "
        "or pi-extension or hermes-plugin or kilo or qoder-inbox; "
        "--door stdout has no conversation file to prove `seen` from\n"
    )
    assert (1, expected) == (done.returncode, done.stderr)
    assert [] == list(home.iterdir())


def test_a_door_without_a_conversation_file_is_never_called_unseen(home: Path) -> None:
    with Listening(home, "bob", "--door", "stdout") as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"delivered {pid}")
    shown = run_cli(home, "status", pid).stdout.splitlines()[1]
    assert shown.startswith("  bob              delivered") and shown.endswith("via stdout")


def _append(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def test_codex_rollout_written_after_the_listener_started(home: Path, tmp_path: Path) -> None:
    """The listener finds the thread's rollout once Codex writes it, and posts `seen` from it."""
    fake_codex(tmp_path / "bin", f"print('Queued message m1 for thread {THREAD}.')")
    codex_home = tmp_path / "codex-home"
    env = cli_env(
        home,
        PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        CODEX_LOG=str(tmp_path / "codex.log"),
        CODEX_HOME=str(codex_home),
    )
    args = ("--door", "codex-queue", "--thread", THREAD)
    with LoadedThread(codex_home, THREAD), Listening(home, "bob", *args, env=env) as bob:
        pid = post(home, "--to", "bob", "lint it")
        bob.wait_err(f"delivered {pid}")
        sent = json.loads((tmp_path / "codex.log").read_text().splitlines()[0])[-1]
        day = codex_home / "sessions" / time.strftime("%Y/%m/%d")
        day.mkdir(parents=True)
        rollout = day / f"rollout-2026-12-01T01-00-00-{THREAD}.jsonl"
        _append(rollout, {"type": "session_meta", "payload": {"id": THREAD}})
        _append(rollout, {"type": "event_msg", "payload": {"type": "task_started"}})
        _append(rollout, _codex_item("user", sent))
        bob.wait_err(f"seen {pid} in codex-rollout")
    status = json.loads(run_cli(home, "status", pid, "--json").stdout)["recipients"]["bob"]
    assert ("seen", "codex-queue", "codex-rollout") == (
        status["stage"],
        status["door"],
        status["source"],
    )


def test_the_codex_stop_hook_sees_its_reason_in_the_rollout(home: Path, tmp_path: Path) -> None:
    """Codex runs a block reason as a `<hook_prompt>` user item of the same turn."""
    pid = post(home, "--to", "bob", "taken at stop")
    rollout = tmp_path / f"rollout-2026-12-01T01-00-00-{THREAD}.jsonl"
    payload = {"session_id": THREAD, "transcript_path": str(rollout), "stop_hook_active": False}
    args = ("hook", "stop", "--agent", "codex", "--as", "bob")
    first = run_cli(home, *args, input=json.dumps(payload).encode())
    reason = json.loads(first.stdout)["reason"]
    _append(
        rollout, _codex_item("user", f'<hook_prompt hook_run_id="stop:1">{reason}</hook_prompt>')
    )
    again = run_cli(home, *args, input=json.dumps({**payload, "stop_hook_active": True}).encode())
    assert (0, '{"continue": true}\n') == (again.returncode, again.stdout)
    got = json.loads(run_cli(home, "status", pid, "--json").stdout)["recipients"]["bob"]
    assert ("seen", "stop-hook", "codex-rollout") == (got["stage"], got["door"], got["source"])


def test_a_claude_listener_without_its_transcript_says_so(home: Path, tmp_path: Path) -> None:
    server = SocketServer(tmp_path / "inbox.sock")
    try:
        door = ("--door", "claude-inbox", "--socket", str(server.path))
        with Listening(home, "bob", *door) as bob:
            bob.stop()
    finally:
        server.close()
    expected = (
        "paneboard listen bob@test: no --transcript: prompts will show as delivered, never as seen"
        " (delivered: the line was written; Claude Code's admission is not checked)"
    )
    assert expected in bob.stderr_lines


CLEARING = """
import json, subprocess, sys
for source, path in (("startup", sys.argv[1]), ("clear", sys.argv[2])):
    sys.stdin.readline()
    hook = {"hook_event_name": "SessionStart", "source": source, "transcript_path": path}
    done = subprocess.run(sys.argv[3:], input=json.dumps(hook), capture_output=True, text=True)
    print(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"], flush=True)
sys.stdin.readline()
"""


def _listener_pid(context: str) -> int:
    return int(context.split("listener pid ")[1].split()[0])


def test_claude_clear_moves_the_listener_to_the_new_transcript(home: Path, tmp_path: Path) -> None:
    """`/clear` runs SessionStart again with a new transcript: this agent's listener follows it."""
    server = SocketServer(tmp_path / "cc.sock")
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    env = cli_env(home, CLAUDE_CODE_MESSAGING_SOCKET=str(server.path), PANEBOARD_AGENT="bob")
    hook = [*PANEBOARD, "hook", "session-start", "--agent", "claude"]
    argv = [sys.executable, "-c", CLEARING, str(old), str(new), *hook]
    agent = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert agent.stdin is not None and agent.stdout is not None
    lock = home / "test" / "panes" / "bob.lock"
    try:
        agent.stdin.write("startup\n")
        agent.stdin.flush()
        first = _listener_pid(agent.stdout.readline())
        wait_until(
            lambda: holder(lock) == first, "the first listener took the pane", 15, every=0.05
        )
        agent.stdin.write("clear\n")
        agent.stdin.flush()
        second = _listener_pid(agent.stdout.readline())
        cmdline = Path(f"/proc/{second}/cmdline").read_bytes().split(b"\0")
        assert (True, str(new).encode()) == (
            first != second,
            cmdline[cmdline.index(b"--transcript") + 1],
        )
        pid = post(home, "--to", "bob", "after the clear")
        content = json.loads(server.lines.get(timeout=15))["message"]["content"]
        _append(new, _claude_user("Another Claude session sent a message:\n" + content))
        assert 0 == run_cli(home, "wait", pid, "--until", "seen", "--timeout", "15").returncode
    finally:
        agent.kill()
        agent.wait()
        agent.stdin.close()
        agent.stdout.close()
        server.close()


@pytest.mark.parametrize("pane", [False, True], ids=["board", "pane"])
def test_a_prompt_the_agent_answered_before_its_turn_was_read_is_still_seen(pane: bool) -> None:
    """A woken agent can answer before its listener reads the turn in its file: the prompt it
    acked or answered still gets its `seen`; one the sender cancelled, or another recipient's,
    does not. In a pane's fold too, which drops a prompt once it is closed."""
    from paneboard.listener.seen import due
    from paneboard.protocol.posts import Ack, Answer, Cancel, Delivered
    from paneboard.state.fold import BoardState, fold

    def head(n: int, sender: str) -> dict[str, Any]:
        return {"id": f"r{n}", "board": "b", "sender": sender, "ts": 2.0}

    posts = [
        prompt(1, id="a", to=("bob",)),
        prompt(2, id="b", to=("bob",)),
        prompt(3, id="c", to=("bob",)),
        prompt(4, id="d", to=("carol",)),
        *(
            Delivered(**head(n, "bob"), prompt_id=p, door="claude-wake")
            for n, p in enumerate("abc")
        ),
        Answer(**head(5, "bob"), prompt_id="a", body="42"),
        Ack(**head(6, "bob"), prompt_id="b"),
        Cancel(**head(7, "alice"), prompt_id="c"),
    ]
    start = BoardState(keep_closed=False, recipient="bob") if pane else BoardState()
    state = fold(enumerate(posts), start)
    ready, early = due(state, "bob", ["a", "b", "c", "d"], lambda _: True, 3.0)
    assert (["a", "b"], []) == ([ps.prompt.id for ps in ready], early)
    assert "claude-wake" == ready[0].recipients["bob"].door
