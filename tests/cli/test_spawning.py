"""`spawn` and `stop` refusing bad input: one line, a non-zero exit, nothing written; `who`
showing a spawned session's attach line. (The real sessions: tests/real/test_spawn.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paneboard.state.panes import spawned
from paneboard.state.paths import BoardPaths
from testing.helpers import PANEBOARD, ROOT, Listening, cli_env, ended_pid, run, run_cli


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every entry under *folder*: a file's bytes, None for a folder."""
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


def refused(home: Path, project: Path, *args: str, code: int = 1, **env: str) -> str:
    """`paneboard ARGS` exits *code* with one line on stderr, and writes nothing in the home
    or the project; the line."""
    before = (tree(home), tree(project))
    done = run([*PANEBOARD, *args], ROOT, cli_env(home, **env))
    assert (code, "") == (done.returncode, done.stdout), done.stderr
    assert 1 == len(done.stderr.splitlines()), done.stderr
    assert before == (tree(home), tree(project))
    return done.stderr.rstrip("\n")


def spawn(project: Path, *args: str) -> tuple[str, ...]:
    return ("spawn", *args, "--project", str(project))


def test_an_unknown_kind_is_a_usage_error(home: Path, project: Path) -> None:
    line = refused(home, project, *spawn(project, "vim", "--as", "helper"), code=2)
    assert line.startswith("paneboard spawn: argument claude|codex|"), line
    assert "invalid choice: 'vim'" in line


def test_a_kind_that_cannot_be_spawned_is_refused(home: Path, project: Path) -> None:
    line = refused(home, project, *spawn(project, "gemini", "--as", "helper"))
    assert "paneboard: Gemini CLI cannot be spawned (spawn takes claude, pi)" == line


def test_spawn_needs_the_new_agents_name(home: Path, project: Path) -> None:
    line = refused(home, project, *spawn(project, "claude"), PANEBOARD_AGENT="alice")
    assert "paneboard: say the new agent's name: paneboard spawn claude --as NAME" == line


def test_a_name_that_is_no_agent_name_is_refused(home: Path, project: Path) -> None:
    line = refused(home, project, *spawn(project, "claude", "--as", "../up"))
    assert line.startswith("paneboard: agent name '../up' is not valid: use 1-64 of "), line


def test_a_project_that_does_not_exist_is_refused(home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    line = refused(home, tmp_path / "home", *spawn(missing, "claude", "--as", "helper"))
    assert f"paneboard: project folder {missing} does not exist" == line


def test_a_name_a_live_listener_holds_is_refused_with_exit_4(home: Path, project: Path) -> None:
    with Listening(home, "helper", "--door", "stdout") as listener:
        line = refused(home, project, *spawn(project, "claude", "--as", "helper"), code=4)
    assert (
        f"paneboard: board `test`: agent `helper` is held by listener pid {listener.proc.pid}"
        == line
    )


def test_a_name_whose_spawned_session_still_runs_is_refused(home: Path, project: Path) -> None:
    paths = BoardPaths(home, "test")
    paths.ensure()
    spawned.write(paths.pane("helper").spawned, spawned.record("pi", "s", "a", os.getpid()))
    line = refused(home, project, *spawn(project, "pi", "--as", "helper"))
    expected = (
        "paneboard: board `test`: `helper` is a spawned pi session still running"
        f" (pid {os.getpid()}): paneboard stop helper"
    )
    assert expected == line


def test_hooks_acting_for_another_name_are_left_alone(home: Path, project: Path) -> None:
    """The person's own hooks (here: as `carol`) are not rewritten for the spawn."""
    args = ("hook", "install", "claude", "--project", str(project), "--as", "carol")
    assert 0 == run_cli(home, *args).returncode
    line = refused(home, project, *spawn(project, "claude", "--as", "helper"))
    settings = project / ".claude" / "settings.local.json"
    expected = (
        f"paneboard: {settings} has paneboard's hooks, which act for agent carol, home"
        " $PANEBOARD_HOME or the default, board $PANEBOARD_BOARD or the git repository's name,"
        f" store $PANEBOARD_STORE or the file log, not as `helper` on board `test` of {home}:"
        " leave them, or run `paneboard hook uninstall claude --project"
        f" {project}` first; nothing written"
    )
    assert expected == line


def test_hooks_that_start_no_listener_are_refused(home: Path, project: Path) -> None:
    options = ("--as", "helper", "--home", str(home), "--board", "test", "--mode", "stop")
    assert (
        0
        == run_cli(
            home, "hook", "install", "claude", "--project", str(project), *options
        ).returncode
    )
    line = refused(home, project, *spawn(project, "claude", "--as", "helper"))
    assert "has paneboard's hooks, which start no listener (--mode stop), not as `helper`" in line


def test_an_agent_not_on_path_leaves_the_projects_files_as_they_were(
    home: Path, project: Path
) -> None:
    """The hooks are merged into the person's settings, the spawn fails: the file is put back
    byte for byte."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text('{"theme": "mine"}\n')
    line = refused(home, project, *spawn(project, "claude", "--as", "helper"), PATH="/nowhere")
    assert "paneboard: no `claude` on PATH: Claude Code cannot be spawned" == line


def test_tmux_missing_removes_the_extension_spawn_wrote(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """pi runs in a terminal: without tmux it cannot be spawned, and the extension and the
    folders written for it are gone again."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pi").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "pi").chmod(0o755)
    line = refused(home, project, *spawn(project, "pi", "--as", "helper"), PATH=str(bin_dir))
    assert "paneboard: tmux is missing: pi runs in a terminal, and cannot be spawned" == line
    assert [] == list(project.iterdir())


def test_an_empty_first_prompt_is_refused(home: Path, project: Path) -> None:
    line = refused(home, project, *spawn(project, "claude", "--as", "helper", "--first", ""))
    assert "paneboard: --first is empty" == line


def test_stop_of_a_session_never_spawned_is_refused(home: Path, project: Path) -> None:
    line = refused(home, project, "stop", "helper")
    expected = (
        "paneboard: board `test`: no session of `helper` that paneboard spawned or woke"
        " (paneboard spawn KIND --as helper starts one)"
    )
    assert expected == line


def test_stop_with_a_damaged_record_names_it(home: Path, project: Path) -> None:
    paths = BoardPaths(home, "test")
    paths.ensure()
    record = paths.pane("helper").spawned
    record.write_text('{"kind": "pi"}')
    record.chmod(0o600)
    line = refused(home, project, "stop", "helper")
    assert line.startswith(f"paneboard: spawn record {record} is damaged ("), line


def test_who_shows_a_spawned_sessions_attach_line(home: Path) -> None:
    paths = BoardPaths(home, "test")
    paths.ensure()
    attach = "claude attach 3f2a1b9c"
    spawned.write(paths.pane("helper").spawned, spawned.record("claude", "3f2a1b9c", attach, None))
    with Listening(home, "helper", "--door", "stdout") as listener:
        text = run_cli(home, "who").stdout
        rows = [json.loads(line) for line in run_cli(home, "who", "--json").stdout.splitlines()]
    expected = (
        f"helper               listening  pid {listener.proc.pid}  door stdout  attach: {attach}\n"
    )
    assert expected == text
    assert [attach] == [row["attach"] for row in rows if row["agent"] == "helper"]


def test_stop_of_a_session_that_had_ended_removes_its_record(home: Path, tmp_path: Path) -> None:
    """pi's tmux server is gone and its process ended: stop says so (exit 1), and the record,
    which points nowhere, is removed."""
    paths = BoardPaths(home, "test")
    paths.ensure()
    record = paths.pane("helper").spawned
    gone = ended_pid()
    spawned.write(record, spawned.record("pi", "paneboard-helper", "tmux -L x attach", gone))
    done = run_cli(home, "stop", "helper", TMUX_TMPDIR=str(tmp_path))
    expected = (
        "paneboard: no tmux server `paneboard-helper` runs: the pi session has ended;"
        f" the session's process {gone} had ended\n"
    )
    assert (1, "", expected) == (done.returncode, done.stdout, done.stderr)
    assert not record.exists()


def test_who_shows_no_attach_line_once_the_sessions_process_has_ended(home: Path) -> None:
    paths = BoardPaths(home, "test")
    paths.ensure()
    record = spawned.record("claude", "3f2a1b9c", "claude attach 3f2a1b9c", ended_pid())
    spawned.write(paths.pane("helper").spawned, record)
    (paths.panes / "helper.lock").touch()
    assert f"{'helper':<20} no listener\n" == run_cli(home, "who").stdout
