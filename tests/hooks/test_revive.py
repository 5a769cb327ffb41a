"""The Stop hook in `--mode listen` starts a dead listener again at a turn's end: one probe of
the pane lock, and no process started while the listener lives (a real agent process, a real
socket, SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from paneboard.state.panes.lock import holder
from testing.helpers import PANEBOARD, SocketServer, cli_env, post, wait_until

# The agent: runs the Stop hook each time a turn ends (a line on its stdin).
AGENT_PROCESS = """
import json, subprocess, sys
for line in sys.stdin:
    done = subprocess.run(sys.argv[1:], input=json.dumps({"hook_event_name": "Stop"}),
                          capture_output=True, text=True)
    print(done.returncode, json.dumps(done.stdout + done.stderr), flush=True)
"""


def _pid(lock: Path) -> int | None:
    """The pane's listener, once it holds the lock and wrote its pid in it."""
    pid = holder(lock)
    return pid if pid and pid > 0 else None


def test_the_stop_hook_revives_a_killed_listener_and_starts_none_beside_a_live_one(
    home: Path, tmp_path: Path
) -> None:
    server = SocketServer(tmp_path / "cc.sock")
    env = cli_env(home, CLAUDE_CODE_MESSAGING_SOCKET=str(server.path), PANEBOARD_AGENT="bob")
    hook = [*PANEBOARD, "hook", "stop", "--agent", "claude", "--mode", "listen"]
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_PROCESS, *hook],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    lock = home / "test" / "panes" / "bob.lock"
    assert agent.stdin is not None and agent.stdout is not None

    def turn_ends() -> str:
        agent.stdin.write("\n")  # type: ignore[union-attr]
        agent.stdin.flush()  # type: ignore[union-attr]
        code, said = agent.stdout.readline().split(" ", 1)  # type: ignore[union-attr]
        assert "0" == code, said
        return str(json.loads(said))

    try:
        assert "" == turn_ends()  # no prompt to hand over at a turn's end: the listener does
        first = wait_until(lambda: _pid(lock), "a listener", 20)
        turn_ends()
        assert first == holder(lock)  # the live one kept the pane; none was started beside it
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: holder(lock) is None, "the listener dead", 20)
        pid = post(home, "--to", "bob", "after the crash")
        turn_ends()
        second = wait_until(lambda: _pid(lock), "a listener again", 20)
        assert second != first
        assert pid in json.loads(server.lines.get(timeout=15))["message"]["content"]
    finally:
        agent.kill()
        agent.wait()
        for stream in (agent.stdin, agent.stdout):
            stream.close()
        pid_now = holder(lock)
        if pid_now:
            os.kill(pid_now, signal.SIGTERM)
        server.close()
