"""A session start tells its own listener from another by the pane's presence record: the agent
process the listener stops with and the conversation file it follows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paneboard.state.panes import presence
from paneboard.state.panes.lock import holder
from testing.helpers import Listening, SocketServer, run_cli, wait_until


@pytest.mark.parametrize(
    ("parent", "restarted"),
    [("this process", True), ("another process", False), ("none", False)],
)
def test_a_new_transcript_restarts_only_the_listener_of_this_agent_process(
    home: Path, tmp_path: Path, parent: str, restarted: bool
) -> None:
    """The hook's agent is this test's process (the first ancestor not a shell). A listener
    of it on the old transcript is stopped and a new one follows the new file; one of another
    process (pid 1), or one that names none, is left alone."""
    server = SocketServer(tmp_path / "cc.sock")
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text("")
    new.write_text("")
    pids = {"this process": [str(os.getpid())], "another process": ["1"], "none": []}[parent]
    pid_option = ["--parent-pid", *pids] if pids else []
    door = ("--door", "claude-inbox", "--socket", str(server.path))
    panes = home / "test" / "panes"
    env = {"CLAUDE_CODE_MESSAGING_SOCKET": str(server.path), "PANEBOARD_AGENT": "bob"}
    hook = {"hook_event_name": "SessionStart", "source": "clear", "transcript_path": str(new)}
    try:
        with Listening(home, "bob", *door, *pid_option, "--transcript", str(old)) as first:
            done = run_cli(
                home, "hook", "session-start", "--agent", "claude",
                input=json.dumps(hook).encode(), fresh=True, **env,
            )  # fmt: skip
            said = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
            if not restarted:
                assert f"a listener (pid {first.proc.pid}) already holds this pane" in said
                assert None is first.proc.poll()
                return
            assert 0 == first.proc.wait(timeout=10)
        second = int(said.split("listener pid ")[1].split()[0])
        wait_until(lambda: holder(panes / "bob.lock") == second, "the new listener", 15)
        record = wait_until(lambda: _record_of(panes, second), "the new listener's record", 15)
        assert (os.getpid(), str(new)) == (record.parent, record.transcript)
    finally:
        run_cli(home, "hook", "session-end", "--agent", "claude", fresh=True, **env)
        server.close()


def _record_of(panes: Path, pid: int) -> presence.Presence | None:
    record = presence.read(panes / "bob.presence")
    return record if record is not None and record.pid == pid else None
