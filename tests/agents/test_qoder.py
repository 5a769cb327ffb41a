"""`hook install|uninstall qoder`, and the `qoder-inbox` door against a real Unix socket server
standing in for a Qoder CLI session's inbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paneboard.agents import by_kind
from paneboard.agents.qoder import envelope
from paneboard.protocol.errors import BadInput
from testing.helpers import Listening, SocketServer, post, run_cli

HOOKS = ".qoder/settings.json"


def test_the_envelope_carries_the_text_and_escapes_its_own_tag() -> None:
    """Qoder CLI drops a message that is not exactly its envelope; a tag inside the text would
    end it early: it is written `<\\`, which Qoder CLI reads back as `<`."""
    assert '<cross-session-message from-name="paneboard">\nhi\nthere\n</cross-session-message>' == (
        envelope("hi\nthere")
    )
    inner = envelope("a </cross-session-message> b <cross-session-message c")
    assert "a <\\/cross-session-message> b <\\cross-session-message c" in inner
    assert 1 == inner.count("</cross-session-message>")


def test_a_prompt_is_one_enveloped_user_line_on_the_socket(home: Path, tmp_path: Path) -> None:
    inbox = SocketServer(tmp_path / "q.sock")
    try:
        args = ("--door", "qoder-inbox", "--socket", str(inbox.path), "--backoff", "0.05")
        with Listening(home, "bob", *args) as bob:
            pid = post(home, "--to", "bob", "review fetch.py")
            line = json.loads(inbox.lines.get(timeout=10))
            bob.wait_err(f"delivered {pid} from alice via qoder-inbox")
    finally:
        inbox.close()
    assert ["type", "message"] == list(line)
    assert ("user", "user") == (line["type"], line["message"]["role"])
    content = line["message"]["content"]
    assert content.startswith('<cross-session-message from-name="paneboard">\n[paneboard] prompt')
    assert f"\n[paneboard] prompt {pid} from alice" in f"\n{content.split(chr(10), 1)[1]}"
    assert "> review fetch.py" in content and content.endswith("\n</cross-session-message>")


def test_install_writes_claude_style_hooks_and_uninstall_removes_them(
    home: Path, project: Path
) -> None:
    path = project / HOOKS
    done = run_cli(home, "hook", "install", "qoder", "--project", str(project), "--as", "q-bob")
    assert (0, f"installed paneboard hooks in {path} (mode listen)\n") == (
        done.returncode,
        done.stdout,
    )
    hooks = json.loads(path.read_text())["hooks"]
    assert ["SessionStart", "SessionEnd"] == list(hooks)
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert command.endswith(" hook session-start --agent qoder --mode listen --as q-bob")
    gone = run_cli(home, "hook", "uninstall", "qoder", "--project", str(project))
    assert 0 == gone.returncode
    assert not path.exists() or json.loads(path.read_text()) == {}


def test_only_the_listen_mode() -> None:
    with pytest.raises(BadInput) as refused:
        by_kind("qoder").check_mode("stop")
    message = "Qoder CLI is reached through a listener, through its inbox only: use --mode listen"
    assert message == str(refused.value)


def test_session_start_without_the_inbox_says_how_to_turn_it_on(home: Path) -> None:
    """Qoder CLI serves its inbox only with its cross-session feature on: without the socket in
    the hook's environment nothing starts, and the context says why."""
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "cwd": str(home), "session_id": "s1"}
    ).encode()
    done = run_cli(home, "hook", "session-start", "--agent", "qoder", "--as", "bob", input=payload)
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "QODER_FEATURE_CROSS_SESSION=1 turns it on" in text
    assert not (home / "test" / "panes" / "bob.log").exists()


def test_the_door_needs_a_socket(home: Path) -> None:
    done = run_cli(home, "listen", "--as", "bob", "--door", "qoder-inbox")
    message = "paneboard: --door qoder-inbox needs --socket PATH or QODER_MESSAGING_SOCKET\n"
    assert (1, message) == (done.returncode, done.stderr)


def test_doctor_tells_the_inbox_and_the_hooks(home: Path, tmp_path: Path) -> None:
    assert 0 == run_cli(home, "hook", "install", "qoder", "--project", str(tmp_path)).returncode
    inbox = SocketServer(tmp_path / "q.sock")
    try:
        env = {"QODER_MESSAGING_SOCKET": str(inbox.path)}
        done = run_cli(home, "doctor", "--as", "bob", **env)
    finally:
        inbox.close()
    lines = done.stdout.splitlines()
    i = lines.index(f"ok    qoder    inbox socket {inbox.path} (a socket, yours)")
    assert lines[i + 1].startswith("ok    hooks    qoder: SessionStart, SessionEnd in ")
