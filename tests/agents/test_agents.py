"""The agent records (paneboard.agents): one per kind, the parser's list equal to them, and
each one's install and uninstall on a real project folder, through the record alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paneboard.agents import AGENTS, RECORDS, Setup, by_door, by_kind, seen_sources
from paneboard.cli.parser import LISTENER_DOORS
from paneboard.protocol.errors import BadInput
from testing.helpers import run_cli


def test_each_kind_is_its_records() -> None:
    """`AGENTS` lists each record under its own kind."""
    assert all(kind == agent.kind for kind, agent in AGENTS.items())


def test_the_light_table_is_the_records() -> None:
    """`RECORDS`, what the parser reads without importing an agent's module, says each kind's
    door and `seen` source as its record does, in `AGENTS`' order."""
    assert list(RECORDS) == list(AGENTS)
    assert RECORDS == {a.kind: (a.door, a.seen_source is not None) for a in AGENTS.values()}


def test_each_record_is_consistent() -> None:
    """A default mode among the modes; a door `listen` takes; a `seen` source with a door or
    a Stop hook to name it."""
    for agent in AGENTS.values():
        assert agent.default_mode in agent.modes, agent.kind
        assert agent.door not in LISTENER_DOORS, agent.kind
        assert agent.door is None or by_door(agent.door) is agent
    assert seen_sources() == {
        "claude": "claude-transcript",
        "codex": "codex-rollout",
        "gemini": "gemini-transcript",
        "copilot": "copilot-transcript",
        "qwen": "qwen-session",
        "pi": "pi-session",
        "droid": "droid-transcript",
        "qoder": "qoder-transcript",
        "hermes": "hermes-db",
        "kilo": "kilo-db",
    }


# (kind, a mode it has no door for, the refusal): the record's check and `hook install`'s.
NO_DOOR_MODES = [
    ("gemini", "listen", "Gemini CLI is reached through a Stop hook only: use --mode stop"),
    ("copilot", "both", "Copilot CLI is reached through a Stop hook only: use --mode stop"),
    (
        "opencode",
        "stop",
        "OpenCode is reached through a listener, through its plugin only: use --mode listen",
    ),
    (
        "pi",
        "both",
        "pi is reached through a listener, through its extension only: use --mode listen",
    ),
    ("droid", "listen", "Factory Droid is reached through a Stop hook only: use --mode stop"),
    (
        "hermes",
        "stop",
        "Hermes Agent is reached through a listener, through its plugin only: use --mode listen",
    ),
]


def test_an_unknown_kind_is_refused_in_one_line() -> None:
    with pytest.raises(BadInput) as refused:
        by_kind("vim")
    assert (
        str(refused.value)
        == "no agent kind `vim`: one of claude, codex, gemini, copilot, opencode, qwen, pi, droid, "
        "hermes, kilo, qoder"
    )


@pytest.mark.parametrize(("kind", "mode", "message"), NO_DOOR_MODES)
def test_a_mode_without_a_door_is_refused(kind: str, mode: str, message: str) -> None:
    with pytest.raises(BadInput) as refused:
        by_kind(kind).check_mode(mode)
    assert str(refused.value) == message
    assert by_kind(kind).check_mode(None) == by_kind(kind).default_mode


@pytest.mark.parametrize("kind", list(AGENTS))
def test_install_twice_then_uninstall_leaves_the_project_as_it_was(
    kind: str, tmp_path: Path
) -> None:
    """The first install changes a file, the second none; uninstall removes what install made
    and reports it; nothing is printed on the way (the records return lines)."""
    project = tmp_path / "proj"
    project.mkdir()
    agent = AGENTS[kind]
    env = {"CODEX_HOME": str(tmp_path / "codex-home")}
    setup = Setup(project, "/opt/pb/paneboard", agent.default_mode, (("--as", "bob"),), env=env)
    first = agent.install(setup)
    assert first[0].changed and first[0].path is not None and first[0].path.is_file()
    written = first[0].path.read_text()
    assert "/opt/pb/paneboard" in written
    given = (
        '"--as", "bob"' if kind in ("opencode", "pi", "hermes", "kilo") else "--as bob"
    )  # a JSON list in JS, a Python list in Hermes's plugin
    assert given in written
    again = agent.install(setup)
    assert [c.changed for c in again if c.path == first[0].path] == [False]
    assert first[0].path.read_text() == written
    gone = agent.uninstall(setup)
    assert gone[0].changed and gone[0].path == first[0].path
    left = [p for p in project.rglob("*") if p.is_file()]
    assert all(json.loads(p.read_text()) == {} for p in left), left  # the file, emptied
    assert not agent.uninstall(setup)[0].changed


def test_mcp_goes_into_the_agents_own_file(tmp_path: Path) -> None:
    """--mcp: Claude Code's `.mcp.json`, Codex's `config.toml`, each with its kind."""
    for kind, name in (("claude", ".mcp.json"), ("codex", ".codex/config.toml")):
        project = tmp_path / kind
        project.mkdir()
        env = {"CODEX_HOME": str(tmp_path / "codex-home")}
        setup = Setup(project, "/bin/pb", "listen", mcp=True, env=env)
        lines = [str(c) for c in AGENTS[kind].install(setup)]
        assert f"registered the paneboard MCP server in {project / name} (/bin/pb mcp)" in lines
        mcp = AGENTS[kind].mcp
        assert mcp is not None
        entry = mcp.registered(project)
        assert entry is not None
        assert (entry["command"], entry["args"]) == ("/bin/pb", ["mcp", "--agent", kind])


def test_the_agent_process_is_the_first_ancestor_not_a_shell(tmp_path: Path) -> None:
    """A hook runs under `sh -c`: its agent is the process above the shell (here, this one)."""
    script = "from paneboard.state.proc import agent_pid; print(agent_pid(['/claude']))"
    command = f'{sys.executable} -c "{script}"; true'  # `; true`: the shell does not exec
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True)
    assert int(done.stdout) == os.getpid()


@pytest.mark.parametrize("door", [("stdout",), ("opencode", "--socket", "/nonexistent.sock")])
def test_until_unloaded_needs_a_door_whose_session_can_be_over(
    home: Path, door: tuple[str, ...]
) -> None:
    """Only Codex's door knows when its session is over (its thread unloaded): the option is
    refused, in one line, for the others; no listener runs."""
    done = run_cli(home, "listen", "--as", "bob", "--door", *door, "--until-unloaded")
    message = f"paneboard: --until-unloaded goes with --door codex-queue, not --door {door[0]}\n"
    assert (1, message) == (done.returncode, done.stderr)
    assert "" == done.stdout


@pytest.mark.parametrize("kind", ["pi", "droid"])
def test_a_user_message_record_is_a_turn_and_a_hook_run_record_is_not(kind: str) -> None:
    """pi's and Droid's session files: a `message` record whose role is `user` holds the turn's
    text; Droid's record of a hook's run has that shape with empty content (its reply sits in
    `hookResults`), and the model's own messages do not count."""

    def message(role: str, content: list[dict[str, str]], **extra: object) -> dict[str, object]:
        return {"type": "message", "message": {"role": role, "content": content, **extra}}

    text = [{"type": "text", "text": "[paneboard] prompt 01abc"}]
    agent = AGENTS[kind]
    assert ["[paneboard] prompt 01abc"] == agent.user_texts(message("user", text))
    assert [] == agent.user_texts(message("user", [], hookResults=[{"reason": "x"}]))
    assert [] == agent.user_texts(message("assistant", text))
    assert [] == agent.user_texts({"type": "session", "message": {"role": "user"}})
