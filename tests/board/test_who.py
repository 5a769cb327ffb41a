"""`who`: one operation for the command line, `top` and the MCP server."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from testing.helpers import Listening, post, run_cli


def test_who_names_the_listeners_door_pid_and_host(home: Path) -> None:
    """A listening agent's row has its listener's pid, door and machine; an agent only posted
    to has no listener, and no door or host."""
    post(home, "--to", "carol", "hi")
    with Listening(home, "bob", "--door", "stdout") as bob:
        done = run_cli(home, "who", "--json")
        pid = bob.proc.pid
    assert (0, "") == (done.returncode, done.stderr)
    rows = {row["agent"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert {
        "agent": "bob",
        "listening": True,
        "pid": pid,
        "door": "stdout",
        "last_delivery": None,
        "held": 0,
        "host": socket.gethostname(),
        "attach": "",
        "sleep": "",
        "last_read": None,
    } == rows["bob"]
    no_listener = {"listening": False, "pid": None, "door": None, "host": "", "held": 0}
    assert no_listener == {k: rows["carol"][k] for k in no_listener}


def test_a_pane_lock_that_cannot_be_read_is_no_listener(home: Path, tmp_path: Path) -> None:
    """A symlink planted as bob's pane lock is not followed: bob shows with no listener."""
    panes = home / "test" / "panes"
    panes.mkdir(parents=True, mode=0o700)
    (panes / "bob.lock").symlink_to(tmp_path / "elsewhere")
    done = run_cli(home, "who")
    assert (0, "") == (done.returncode, done.stderr)
    assert [f"{'bob':<20} no listener"] == done.stdout.splitlines()


def test_who_says_when_an_agent_last_read_a_body(home: Path) -> None:
    """bob's row gives the time of its newest counted `read`; an agent that read nothing, none."""
    first, second = post(home, "--to", "bob", "one"), post(home, "--to", "bob", "two")
    reads = []
    for pid in (second, first):
        done = run_cli(home, "read", "--as", "bob", pid, "--json")
        assert 0 == done.returncode, done.stderr
        reads.append(json.loads(done.stdout)["read_at"])
    done = run_cli(home, "who", "--json")
    rows = {row["agent"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert (max(reads), None) == (rows["bob"]["last_read"], rows["alice"]["last_read"])
    lines = run_cli(home, "who").stdout.splitlines()
    bob = next(line for line in lines if line.startswith("bob "))
    assert "  last read 2" in bob and "last read" not in next(ln for ln in lines if "alice" in ln)
