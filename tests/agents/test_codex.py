"""Codex threads (agents/codex_thread.py): the hook's input, liveness from the writer lock held by a
real process, and a listener that ends when the thread is unloaded."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from paneboard.agents.codex import CODEX
from paneboard.agents.codex_thread import (
    CodexThread,
    thread_from_hook,
    thread_loaded,
    wait_unloaded,
)
from paneboard.protocol.errors import BadInput
from paneboard.state import watch
from paneboard.state.panes.lock import holder
from testing.helpers import LoadedThread, post, run_cli, wait_until
from tests.listener.test_doors import _codex_env, fake_codex

TID = "01a22f40-fba4-7ac1-b9e9-24dcb62f61bf"


def _from_hook(data: dict[str, str], env: dict[str, str]) -> CodexThread:
    """The thread, read from a Codex hook's input the way its record reads it."""
    return thread_from_hook(CODEX.session(data), CODEX.transcript(data), env)


def test_the_thread_comes_from_the_hook_input(tmp_path: Path) -> None:
    """`session_id` is the thread; the Codex home is $CODEX_HOME, else the rollout's."""
    rollout = (
        tmp_path
        / "ch"
        / "sessions"
        / "2026"
        / "12"
        / "01"
        / f"rollout-2026-12-01T01-00-00-{TID}.jsonl"
    )
    data = {"session_id": TID, "transcript_path": str(rollout), "cwd": "/x"}
    assert CodexThread(TID, tmp_path / "ch", rollout) == _from_hook(data, {})
    assert tmp_path / "other" == _from_hook(data, {"CODEX_HOME": str(tmp_path / "other")}).home
    with pytest.raises(BadInput, match=r"^the Codex hook's input has no `session_id`$"):
        _from_hook({"transcript_path": str(rollout)}, {})
    with pytest.raises(BadInput, match=r"^`\.\./\.\./x` is not a Codex thread id \(a UUID\)$"):
        _from_hook({"session_id": "../../x"}, {})


def test_liveness_is_the_lock_not_the_file(tmp_path: Path) -> None:
    """No lock file: not loaded; a process holding the flock: loaded; that process gone: not,
    though the file stays."""
    thread = LoadedThread(tmp_path)
    codex_thread = CodexThread(thread.thread, tmp_path)
    assert not thread_loaded(CodexThread(TID, tmp_path))
    assert thread_loaded(codex_thread)
    thread.release()
    assert (True, False) == (thread.lock.exists(), thread_loaded(codex_thread))


@pytest.mark.anyio
@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "poll"])
async def test_wait_unloaded_wakes_when_the_holder_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inotify: bool
) -> None:
    """It waits while the lock is held and returns once its holder is gone, with inotify and
    without it (letting go changes nothing a poll of the folder sees: the table is read)."""
    if not inotify:
        monkeypatch.setattr(watch, "inotify_watch", lambda folder, mask: None)
    thread = LoadedThread(tmp_path)
    done = anyio.Event()

    async def waiter() -> None:
        await wait_unloaded(CodexThread(thread.thread, tmp_path))
        done.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert not done.is_set()
            thread.release()
            await done.wait()


def _hook_input(codex_home: Path, thread: str, cwd: Path) -> bytes:
    rollout = codex_home / "sessions" / "2026" / "12" / "01" / f"rollout-x-{thread}.jsonl"
    data = {"session_id": thread, "transcript_path": str(rollout), "cwd": str(cwd)}
    return json.dumps(data | {"hook_event_name": "SessionStart", "source": "startup"}).encode()


def test_session_start_listens_on_the_hooks_thread_until_it_is_unloaded(
    home: Path, tmp_path: Path
) -> None:
    """No CODEX_THREAD_ID: the thread comes from stdin; the listener ends with the lock."""
    fake_codex(tmp_path / "bin", "print('Queued message m1 for thread x.')")
    env = {
        k: v
        for k, v in _codex_env(home, tmp_path).items()
        if k in ("PATH", "CODEX_LOG", "CODEX_HOME")
    }
    lock = home / "test" / "panes" / "bob.lock"
    with LoadedThread(tmp_path / "codex-home") as thread:
        payload = _hook_input(tmp_path / "codex-home", thread.thread, tmp_path)
        started = run_cli(
            home, "hook", "session-start", "--agent", "codex", "--as", "bob", input=payload, **env
        )
        assert 0 == started.returncode, started.stderr
        assert (
            "listener pid" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
        )
        pid = post(home, "--to", "bob", "lint it")
        delivered = run_cli(home, "wait", pid, "--until", "delivered", "--timeout", "20")
        assert 0 == delivered.returncode, (home / "test" / "panes" / "bob.log").read_text()
        argv = json.loads((tmp_path / "codex.log").read_text())
        assert ["queue", "--thread", thread.thread] == argv[:3]
        listener = holder(lock)
        assert listener
    wait_until(lambda: not holder(lock), "the listener ends with its thread")
    log = (home / "test" / "panes" / "bob.log").read_text()
    assert f"Codex thread {thread.thread} is no longer loaded: stopping" in log
