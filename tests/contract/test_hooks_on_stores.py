"""The Stop-hook door and `log --follow` on both stores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testing.helpers import Listening, cli_env, post, run_hook


@pytest.mark.cluster
def test_stop_hook_then_listener_hand_over_once(home: Path, store_url: str) -> None:
    first = post(home, "--to", "bob", "taken at stop")
    event = {"hook_event_name": "Stop", "stop_hook_active": False}
    reply = run_hook(home, "stop", "claude", event, "--as", "bob")
    assert first in json.loads(reply.stdout)["reason"]
    with Listening(home, "bob", "--door", "stdout") as bob:
        second = post(home, "--to", "bob", "taken by the listener")
        assert second == json.loads(bob.line())["id"]


def test_log_follow(home: Path, store_url: str) -> None:
    first = post(home, "--to", "bob", "old")
    follower = subprocess.Popen(
        [sys.executable, "-m", "paneboard", "log", "--follow", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(home),
    )
    assert follower.stdout is not None
    assert first in follower.stdout.readline()
    second = post(home, "--to", "bob", "new")
    assert second in follower.stdout.readline()
    follower.terminate()
    assert 0 == follower.wait(timeout=10)
    follower.stdout.close()
