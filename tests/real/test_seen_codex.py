"""`seen` against a live Codex TUI, offline: the receipt comes from the thread's rollout file."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Listening, LoadedThread, cli_env, post, run_cli
from tests.real.conftest import free_port, offline_codex_thread
from tests.real.seen_codex import LiveCodex

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is missing")


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The Responses-API stand-in on a free loopback port; yields (port, request log)."""
    port, log = free_port(), tmp_path / "responses.log"
    script = str(Path(__file__).with_name("seen_codex.py"))
    proc = subprocess.Popen([sys.executable, script, str(port), str(log)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and b"ready\n" == proc.stdout.readline()
    yield port, log
    proc.kill()
    proc.wait()
    proc.stdout.close()


def _env(home: Path, codex_home: Path, bin_dir: Path) -> dict[str, str]:
    return cli_env(home, CODEX_HOME=str(codex_home), PATH=f"{bin_dir}:{os.environ['PATH']}")


def _bob(home: Path, pid: str) -> dict[str, Any]:
    done = run_cli(home, "status", pid, "--json")
    return dict(json.loads(done.stdout)["recipients"]["codex-bob"])


def _seen(home: Path, pid: str, timeout: str) -> int:
    return run_cli(home, "wait", pid, "--until", "seen", "--timeout", timeout).returncode


def test_a_queued_prompt_is_seen_when_the_live_session_runs_it(
    home: Path, tmp_path: Path, clients_bin: Path, stand_in: tuple[int, Path]
) -> None:
    """Idle: seen at once. Busy: delivered (queued) at once, seen once the running turn ends."""
    codex = LiveCodex(clients_bin, tmp_path, stand_in[0])
    try:
        env = _env(home, codex.home, clients_bin)
        args = ("--door", "codex-queue", "--thread", codex.thread, "--door-timeout", "60")
        with Listening(home, "codex-bob", *args, env=env) as bob:
            idle = post(home, "--to", "codex-bob", "say hello")
            assert 0 == _seen(home, idle, "30")
            got = _bob(home, idle)
            assert ("seen", "codex-queue", "codex-rollout") == (
                got["stage"],
                got["door"],
                got["source"],
            )

            codex.type("think hard PB-SLOW-6")
            codex._until("the busy turn", lambda: "PB-SLOW-6" in stand_in[1].read_text(), 30)
            busy = post(home, "--to", "codex-bob", "when you are free")
            bob.wait_err(f"delivered {busy}", timeout=30)
            assert 3 == _seen(home, busy, "1")
            assert 0 == _seen(home, busy, "30")
        records = [json.loads(line) for line in stand_in[1].read_text().splitlines()]
        [turn_end] = [r["done"] for r in records if "done" in r]
        got = _bob(home, busy)
        assert got["delivered_at"] < turn_end <= got["seen_at"]
    finally:
        codex.close()


def test_never_seen_for_a_thread_no_live_session_runs(
    home: Path, tmp_path: Path, clients_bin: Path
) -> None:
    """`codex queue` takes it (the row waits in Codex's queue), but no session runs it."""
    codex_home = tmp_path / "codex"
    tid, _ = offline_codex_thread(codex_home, tmp_path)
    env = _env(home, codex_home, clients_bin)
    args = ("--door", "codex-queue", "--thread", tid, "--door-timeout", "60")
    # The thread's writer lock held (the door's check that a Codex process has it loaded),
    # but no Codex runs it.
    with LoadedThread(codex_home, tid), Listening(home, "codex-bob", *args, env=env) as bob:
        pid = post(home, "--to", "codex-bob", "anyone there?")
        bob.wait_err(f"delivered {pid}", timeout=60)
        assert 3 == _seen(home, pid, "3")
    assert "delivered" == _bob(home, pid)["stage"]
    with sqlite3.connect(codex_home / "queue_1.sqlite") as db:
        rows = db.execute("SELECT payload_json FROM queued_items WHERE thread_id = ?", (tid,))
        assert [True] == [f"[paneboard] prompt {pid}" in row[0] for row in rows.fetchall()]
