"""Codex threads (listener/codex.py) and hook trust (listener/hooks/codex_trust.py), with real
files, real locks held by real processes, and the real command line."""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from paneboard.listener.codex import CodexThread, thread_from_hook, thread_loaded, wait_unloaded
from paneboard.listener.hooks.codex_trust import handler_hash
from paneboard.protocol.errors import BadInput
from paneboard.state.panelock import holder
from tests.conftest import LoadedThread, run_cli
from tests.listener.test_doors import _codex_env, fake_codex
from tests.listener.test_listen import post

TID = "01a22f40-fba4-7ac1-b9e9-24dcb62f61bf"


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
    assert CodexThread(TID, tmp_path / "ch", rollout) == thread_from_hook(data, {})
    assert (
        tmp_path / "other" == thread_from_hook(data, {"CODEX_HOME": str(tmp_path / "other")}).home
    )
    with pytest.raises(BadInput, match=r"^the Codex hook's input has no `session_id`$"):
        thread_from_hook({"transcript_path": str(rollout)}, {})
    with pytest.raises(BadInput, match=r"^`\.\./\.\./x` is not a Codex thread id \(a UUID\)$"):
        thread_from_hook({"session_id": "../../x"}, {})


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
async def test_wait_unloaded_wakes_when_the_holder_lets_go(tmp_path: Path) -> None:
    """It waits while the lock is held and returns once its holder is gone."""
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
    deadline = time.monotonic() + 10
    while holder(lock) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not holder(lock), "the listener outlived its thread"
    log = (home / "test" / "panes" / "bob.log").read_text()
    assert f"Codex thread {thread.thread} is no longer loaded: stopping" in log


def test_codex_hook_hash_is_codexs_own() -> None:
    """The trust hash Codex 0.169 wrote for one handler (event, command, timeout 30)."""
    handler = {
        "type": "command",
        "command": "/work/shared/real-clients/codex/hook-dump.sh Stop /tmp/clx/hk",
    }
    expected = "sha256:c843c245d40e9f1bbcae02a479a2eec4cbd521051d4210a05c33be4674c455a8"
    assert expected == handler_hash("Stop", {}, handler | {"timeout": 30})


def _install(home: Path, project: Path, codex_home: Path, *args: str) -> tuple[int, str, str]:
    env = {"CODEX_HOME": str(codex_home)}
    done = run_cli(home, "hook", "install", "codex", "--project", str(project), *args, **env)
    return done.returncode, done.stdout, done.stderr


def _trust_tables(config: Path) -> dict[str, str]:
    state = tomllib.loads(config.read_text())["hooks"]["state"]
    return {key: entry["trusted_hash"] for key, entry in state.items()}


def test_install_trust_writes_codexs_entries_once(home: Path, tmp_path: Path) -> None:
    """--trust writes one table per paneboard handler, keeps every other line, and a changed
    hook command replaces its hash instead of adding a second table."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    config = codex_home / "config.toml"
    config.write_text(f'model = "m"\n\n[projects."{project}"]\ntrust_level = "trusted"\n')
    assert 0 == _install(home, project, codex_home, "--as", "bob", "--trust")[0]
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    key = f"{project}/.codex/hooks.json:session_start:0:0"
    assert {key: handler_hash("SessionStart", {}, handler)} == _trust_tables(config)
    assert config.read_text().startswith(
        f'model = "m"\n\n[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    again = _install(home, project, codex_home, "--as", "bob", "--trust")
    assert (0, f"already trusted: 1 paneboard hook(s) in {config}") == (
        again[0],
        again[1].splitlines()[-1],
    )
    assert 0 == _install(home, project, codex_home, "--as", "carol", "--trust")[0]
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    [[handler]] = [g["hooks"] for g in hooks["hooks"]["SessionStart"]]
    assert {key: handler_hash("SessionStart", {}, handler)} == _trust_tables(config)
    assert 1 == config.read_text().count("[hooks.state.")


def test_install_says_codex_will_ask_and_refuses_a_broken_config(
    home: Path, tmp_path: Path
) -> None:
    """Without --trust it says Codex will ask; a config that is not TOML is refused, untouched."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    code, out, _ = _install(home, project, codex_home)
    assert 0 == code and '"Hooks need review"' in out and "codex_hooks" not in out
    assert f"Codex reads {project}/.codex/hooks.json only in a trusted project" in out
    (project / ".codex" / "hooks.json").unlink()
    config = codex_home / "config.toml"
    config.write_text("model = \n")
    code, out, err = _install(home, project, codex_home, "--trust")
    assert (1, "") == (code, out)
    assert err.startswith(f"paneboard: {config} is not valid TOML (") and err.count("\n") == 1
    assert ("model = \n", False) == (
        config.read_text(),
        (project / ".codex" / "hooks.json").exists(),
    )
    refused = run_cli(home, "hook", "install", "claude", "--project", str(project), "--trust")
    assert (1, "paneboard: --trust goes with `paneboard hook install codex`\n") == (
        refused.returncode,
        refused.stderr,
    )


def test_doctor_reports_untrusted_and_changed_codex_hooks(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hooks Codex has not trusted, a project it does not trust, hooks changed since trusted."""
    project, codex_home = tmp_path / "proj", tmp_path / "ch"
    project.mkdir()
    codex_home.mkdir()
    env = {"CODEX_HOME": str(codex_home)}
    assert 0 == _install(home, project, codex_home, "--mode", "both")[0]

    def trust_lines() -> list[str]:
        done = run_cli(home, "doctor", "--as", "bob", **env)
        return [ln for ln in done.stdout.splitlines() if ln.split()[1] == "trust"]

    monkeypatch.chdir(project)
    config = codex_home / "config.toml"
    fix = "Codex asks to review them at its next start, or: hook install codex --trust"
    untrusted = f"codex: paneboard hooks not trusted in {config}: "
    untrusted += f"session_start untrusted, stop untrusted ({fix})"
    not_project = (
        f"codex: {project} is not a trusted project: Codex skips its {project}/.codex/hooks.json"
    )
    assert [f"warn  trust    {untrusted}", f"warn  trust    {not_project}"] == trust_lines()
    config.write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    assert 0 == _install(home, project, codex_home, "--mode", "both", "--trust")[0]
    assert [f"ok    trust    codex: paneboard's 2 hook(s) trusted in {config}"] == trust_lines()
    path = project / ".codex" / "hooks.json"
    path.write_text(path.read_text().replace("--mode both", "--mode both --cooldown 5"))
    changed = f"codex: paneboard hooks not trusted in {config}: "
    changed += f"session_start changed, stop changed ({fix})"
    assert [f"warn  trust    {changed}"] == trust_lines()
