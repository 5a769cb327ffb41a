"""`seen` against the real Claude Code, offline: the receipt comes from the session's transcript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from testing.clients import ClaudeSession
from testing.helpers import post, run_cli, wait_until
from tests.real.test_real_clients import _claude

NO_TMUX = "tmux is missing: no interactive Claude Code session"
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason=NO_TMUX)
Api = tuple[int, Path]


def _bob(home: Path, pid: str) -> dict[str, Any]:
    done = run_cli(home, "status", pid, "--json")
    assert 0 == done.returncode, done.stderr
    return dict(json.loads(done.stdout)["recipients"]["claude-bob"])


def _wait_stage(
    home: Path, pid: str, stage: str, session: ClaudeSession, timeout: float = 30
) -> dict[str, Any]:
    def detail() -> str:
        log = home / "test" / "panes" / "claude-bob.log"
        return (
            f"{pid} is {_bob(home, pid)}\n"
            f"listener log:\n{log.read_text() if log.exists() else '(none)'}\n"
            f"transcript:\n{session.transcript()[-6000:]}\nscreen:\n{session.screen()}"
        )

    def reached() -> dict[str, Any] | None:
        bob = _bob(home, pid)
        return bob if bob["stage"] == stage else None

    return wait_until(reached, f"{pid} is {stage}", timeout, detail, every=0.05)


def _stand_in_lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_claude_idle_then_busy_session(
    home: Path,
    tmp_path: Path,
    clients_bin: Path,
    api: Api,
) -> None:
    """Idle: seen within a second of delivered. Busy: delivered at once, seen after the turn."""
    session = _claude(clients_bin, home, tmp_path, api[0], "listen")
    try:
        session.wait_listener("claude-bob", home)
        session.type("hello")  # the person's first turn: a session's first turn starts slowly
        session.wait_transcript('"turn_duration"')
        idle = post(home, "--to", "claude-bob", "say hello")
        bob = _wait_stage(home, idle, "seen", session)
        got = (bob["stage"], bob["door"], bob["source"])
        assert ("seen", "claude-inbox", "claude-transcript") == got
        assert 0 <= bob["seen_at"] - bob["delivered_at"] < 1.0

        session.type("think hard PB-SLOW-6")
        wait_until(
            lambda: any("PB-SLOW-6" in r.get("last", "") for r in _stand_in_lines(api[1])),
            "the model stand-in was asked the slow turn",
            30,
            session.screen,
            every=0.05,
        )
        busy = post(home, "--to", "claude-bob", "when you are free")
        delivered = _wait_stage(home, busy, "delivered", session, timeout=5)
        shown = run_cli(home, "status", busy).stdout
        assert "not yet seen" in shown, shown
        seen = _wait_stage(home, busy, "seen", session)
        [turn_end] = [r["done"] for r in _stand_in_lines(api[1]) if "done" in r][:1]
        assert delivered["delivered_at"] < turn_end - 3 < turn_end <= seen["seen_at"]
    finally:
        session.close()
