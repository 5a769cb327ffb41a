"""Each door against a real counterpart: a Unix socket server, an executable on PATH, a maildir."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.helpers import (
    Listening,
    LoadedThread,
    SocketServer,
    cli_env,
    fake_codex,
    notices,
    post,
    python_door,
    run_cli,
)


@pytest.fixture
def inbox(tmp_path: Path) -> Iterator[SocketServer]:
    server = SocketServer(tmp_path / "inbox.sock")
    yield server
    server.close()


def test_claude_inbox_writes_one_json_line(home: Path, inbox: SocketServer) -> None:
    """The line is Claude Code's user message, and the text is the composed prompt."""
    with Listening(home, "bob", "--door", "claude-inbox", "--socket", str(inbox.path)) as bob:
        pid = post(home, "--to", "bob", "review fetch.py")
        message = json.loads(inbox.lines.get(timeout=10))
        bob.wait_err(f"delivered {pid}")
    assert ("user", "user") == (message["type"], message["message"]["role"])
    assert f"[paneboard] prompt {pid} from alice on board test" in message["message"]["content"]
    assert "> review fetch.py" in message["message"]["content"]


def test_claude_inbox_socket_that_never_reads_is_retried_then_undelivered(
    home: Path, tmp_path: Path
) -> None:
    """A write that cannot finish in time handed nothing over: retried, then `undelivered`."""
    server = SocketServer(tmp_path / "stuck.sock", read=False)
    try:
        args = (
            "--door",
            "claude-inbox",
            "--socket",
            str(server.path),
            "--door-timeout",
            "0.5",
            "--backoff",
            "0.05",
        )
        with Listening(home, "bob", *args) as bob:
            pid = post(
                home, "--to", "bob", "-", input=b"x\n" * 120_000
            )  # ~600 KB on the wire: more than a socket buffers
            bob.wait_err(f"undelivered {pid}", timeout=20)
            assert any("retry 2/2" in line for line in bob.stderr_lines)
        assert "the message was not taken within 0.5 s" == notices(home)[0].reason
    finally:
        server.close()


@pytest.mark.parametrize("kind", ["symlink", "regular file", "missing", "other owner"])
def test_claude_inbox_refuses_a_path_that_is_not_our_socket(
    home: Path, tmp_path: Path, inbox: SocketServer, kind: str
) -> None:
    """Permanent: `undelivered` at once, no waiting, the prompt stays open."""
    path = tmp_path / "target"
    if kind == "symlink":
        path.symlink_to(inbox.path)
    elif kind == "regular file":
        path.write_text("")
    elif kind == "other owner":
        if os.geteuid() != 0:
            pytest.skip("chown to another user needs root")
        path = inbox.path
        os.chown(path, 65534, 65534)
    with Listening(
        home, "bob", "--door", "claude-inbox", "--socket", str(path), "--backoff", "60"
    ) as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"undelivered {pid}")
        assert not any("retry" in line for line in bob.stderr_lines)
    reason = notices(home)[0].reason
    expected = {
        "symlink": f"{path} is a symlink; refusing to follow it",
        "regular file": f"{path} is not a socket",
        "missing": f"no socket at {path} (is the session running?)",
        "other owner": f"{path} belongs to uid 65534, not to this user ({os.geteuid()})",
    }
    assert expected[kind] == reason
    assert inbox.lines.empty()
    assert pid in run_cli(home, "open", "--as", "bob").stdout


def _codex_env(home: Path, tmp_path: Path) -> dict[str, str]:
    path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
    codex_home = str(tmp_path / "codex-home")
    return cli_env(home, PATH=path, CODEX_LOG=str(tmp_path / "codex.log"), CODEX_HOME=codex_home)


@pytest.fixture
def loaded(tmp_path: Path) -> Iterator[str]:
    """A Codex thread some process has loaded (holds its writer lock); yields its id."""
    with LoadedThread(tmp_path / "codex-home") as thread:
        yield thread.thread


def test_codex_queue_needs_codex_receipt(home: Path, tmp_path: Path, loaded: str) -> None:
    """Exit 0 with `Queued message … for thread …` is delivery; argv carries thread and text."""
    fake_codex(tmp_path / "bin", "print('Queued message m1 for thread th-1.')")
    env = _codex_env(home, tmp_path)
    with Listening(home, "bob", "--door", "codex-queue", "--thread", loaded, env=env) as bob:
        pid = post(home, "--to", "bob", "run the tests")
        bob.wait_err(f"delivered {pid}")
    argv = json.loads((tmp_path / "codex.log").read_text())
    assert ["queue", "--thread", loaded, "--message"] == argv[:4]
    assert f"[paneboard] prompt {pid}" in argv[4]


def test_codex_exit_0_without_receipt_is_a_failure(home: Path, tmp_path: Path, loaded: str) -> None:
    """Retried, then `undelivered`, the prompt still open."""
    fake_codex(tmp_path / "bin", "print('something else')")
    env = _codex_env(home, tmp_path)
    args = ("--door", "codex-queue", "--thread", loaded, "--backoff", "0.05,0.05")
    with Listening(home, "bob", *args, env=env) as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"undelivered {pid}")
    assert 3 == len((tmp_path / "codex.log").read_text().splitlines())
    assert "codex exited 0 without its receipt: something else" == notices(home)[0].reason


def test_codex_thread_must_be_a_thread_id(home: Path) -> None:
    """`--thread` names a file under CODEX_HOME: anything but a UUID is refused, in one line."""
    done = run_cli(home, "listen", "--as", "bob", "--door", "codex-queue", "--thread", "../x")
    assert (1, "paneboard: `../x` is not a Codex thread id (a UUID)\n") == (
        done.returncode,
        done.stderr,
    )


def test_codex_missing_binary_is_permanent(home: Path, tmp_path: Path) -> None:
    env = cli_env(home, PATH=str(tmp_path / "empty"))
    thread = "01a22f40-fba4-7ac1-b9e9-24dcb62f61bf"
    with Listening(
        home, "bob", "--door", "codex-queue", "--thread", thread, "--backoff", "60", env=env
    ) as bob:
        pid = post(home, "--to", "bob", "hi")
        bob.wait_err(f"undelivered {pid}")
    assert "no `codex` on PATH" == notices(home)[0].reason


def test_maildir_file_reads_back(home: Path, tmp_path: Path) -> None:
    """agent-inbox's layout: front matter, the composed text, renamed from tmp/ into new/."""
    root = tmp_path / "inbox"
    with Listening(home, "bob", "--door", "maildir", "--maildir", str(root)) as bob:
        pid = post(home, "--to", "bob", "--thread", "api", "endpoints are live")
        bob.wait_err(f"delivered {pid}")
    [mail] = list((root / "bob" / "new").iterdir())
    assert [] == list((root / "bob" / "tmp").iterdir())
    head, text = mail.read_text().split("\n---\n\n", 1)
    fields = dict(line.split(": ", 1) for line in head.splitlines()[1:])
    assert ("alice", "bob", "../alice/tmp/", "api", pid) == (
        fields["from"],
        fields["to"],
        fields["reply_to"],
        fields["thread"],
        fields["paneboard_id"],
    )
    assert text.startswith(f"[paneboard] prompt {pid}")
    assert 0o600 == mail.stat().st_mode & 0o777


def test_exec_gets_text_on_stdin_and_facts_in_env(home: Path, tmp_path: Path) -> None:
    """Body with shell metacharacters arrives byte for byte; env names the prompt, never the
    body."""
    out = tmp_path / "exec.json"
    script = (
        "import json, os, sys; json.dump({'stdin': sys.stdin.read(), 'env': "
        "{k: v for k, v in os.environ.items() if k.startswith('PANEBOARD_')}}, "
        f"open({str(out)!r}, 'w'))"
    )
    body = "rm -rf / ; $(reboot) `id` 'q' \"dq\" | & > <"
    with Listening(home, "bob", *python_door(script)) as bob:
        pid = post(home, "--to", "bob", "--thread", "t9", "--priority", "high", body)
        bob.wait_err(f"delivered {pid}")
    got = json.loads(out.read_text())
    assert f"> {body}\n" in got["stdin"]
    assert {
        "PANEBOARD_ID": pid,
        "PANEBOARD_SENDER": "alice",
        "PANEBOARD_AGENT": "bob",
        "PANEBOARD_BOARD": "test",
        "PANEBOARD_HOME": str(home),
        "PANEBOARD_PRIORITY": "high",
        "PANEBOARD_THREAD": "t9",
    } == got["env"]


def test_exec_timeout_is_an_unknown_outcome_not_retried(home: Path, tmp_path: Path) -> None:
    """A command killed at its limit may have acted: recorded, receipt says `unknown`, no retry."""
    marker = tmp_path / "runs"
    script = f"import time; open({str(marker)!r}, 'a').write('x'); time.sleep(60)"
    timing = ("--door-timeout", "0.5", "--backoff", "0.05")
    with Listening(home, "bob", *python_door(script, *timing)) as bob:
        pid = post(home, "--to", "bob", "slow")
        bob.wait_err(f"delivered {pid}")
    assert "x" == marker.read_text()
    status = json.loads(run_cli(home, "status", pid, "--json").stdout)
    assert ("delivered", "unknown") == (
        status["recipients"]["bob"]["stage"],
        status["recipients"]["bob"]["outcome"],
    )
