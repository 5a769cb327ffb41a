"""`seen` against a live Codex TUI, offline: the receipt comes from the thread's rollout file."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.clients import codex_env, free_port, queue_listener
from testing.codex_session import CodexHome, CodexTui, StandIn
from testing.helpers import Listening, post, run_cli, wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[StandIn]:
    """The Responses-API stand-in on a free loopback port."""
    stand_in = StandIn(tmp_path / "responses.log", free_port())
    yield stand_in
    stand_in.close()


@pytest.fixture
def codex(
    tmp_path: Path, clients_bin: Path, stand_in: StandIn
) -> Iterator[tuple[CodexHome, CodexTui, str]]:
    """A Codex TUI on a fresh thread of a private CODEX_HOME, its first turn done: yields the
    home, the TUI and the thread's id."""
    with contextlib.ExitStack() as stack:
        home = CodexHome(tmp_path / "codex-home", clients_bin, stand_in.port)
        stack.callback(home.close)
        project = tmp_path / "codex-project"
        project.mkdir()
        home.trust_project(project)
        tui = CodexTui(home, project, {**os.environ, "TERM": "xterm-256color"})
        stack.callback(tui.close)
        tui.submit(stand_in, "ready")
        [thread] = wait_until(home.threads, "the thread's rollout", 60, tui.screen, every=0.1)
        rollout = home.rollout(thread)

        def first_turn_done() -> bool:
            return '"task_complete"' in rollout.read_text()

        wait_until(first_turn_done, "the first turn", 60, tui.screen, every=0.1)
        yield home, tui, thread


def _bob(home: Path, pid: str) -> dict[str, Any]:
    done = run_cli(home, "status", pid, "--json")
    return dict(json.loads(done.stdout)["recipients"]["codex-bob"])


def _seen(home: Path, pid: str, timeout: str) -> int:
    return run_cli(
        home, "wait", pid, "--until", "seen", "--timeout", timeout, timeout=float(timeout) + 30
    ).returncode


def test_a_queued_prompt_is_seen_when_the_live_session_runs_it(
    home: Path,
    clients_bin: Path,
    stand_in: StandIn,
    codex: tuple[CodexHome, CodexTui, str],
) -> None:
    """Idle: seen at once. Busy: delivered (queued) at once, seen once the running turn ends."""
    codex_home, tui, thread = codex
    env = codex_env(home, codex_home.folder, clients_bin)
    args = ("--door", "codex-queue", "--thread", thread, "--door-timeout", "60")
    with Listening(home, "codex-bob", *args, env=env) as bob:
        idle = post(home, "--to", "codex-bob", "say hello")
        assert 0 == _seen(home, idle, "30")
        got = _bob(home, idle)
        assert ("seen", "codex-queue", "codex-rollout") == (
            got["stage"],
            got["door"],
            got["source"],
        )

        tui.submit(stand_in, "think hard MOCK-SLOW-6")
        busy = post(home, "--to", "codex-bob", "when you are free")
        bob.wait_err(f"delivered {busy}", timeout=30)
        assert 3 == _seen(home, busy, "1")
        assert 0 == _seen(home, busy, "30")
    [turn_end] = [r["ts"] for r in stand_in.answered("think hard MOCK-SLOW-6")]
    got = _bob(home, busy)
    assert got["delivered_at"] < turn_end <= got["seen_at"]


def test_never_seen_for_a_thread_no_live_session_runs(
    home: Path, tmp_path: Path, clients_bin: Path
) -> None:
    """`codex queue` takes it (the row waits in Codex's queue), but no session runs it."""
    with queue_listener(home, tmp_path, clients_bin) as (codex_home, tid, bob):
        pid = post(home, "--to", "codex-bob", "anyone there?")
        bob.wait_err(f"delivered {pid}", timeout=60)
        assert 3 == _seen(home, pid, "3")
    assert "delivered" == _bob(home, pid)["stage"]
    with sqlite3.connect(codex_home / "queue_1.sqlite") as db:
        rows = db.execute("SELECT payload_json FROM queued_items WHERE thread_id = ?", (tid,))
        assert [True] == [f"[paneboard] prompt {pid}" in row[0] for row in rows.fetchall()]
