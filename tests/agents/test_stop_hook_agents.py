"""`hook install|uninstall gemini|copilot|opencode`, their modes, and their Stop-hook replies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from testing.helpers import post, run_cli, run_hook
from tests.agents.scriptdoors import a_foreign_plugin_is_refused
from tests.agents.test_agents import NO_DOOR_MODES

FILES = {"gemini": ".gemini/settings.json", "copilot": ".github/hooks/paneboard.json"}
EVENTS = {"gemini": ["SessionStart", "AfterAgent"], "copilot": ["SessionStart", "Stop"]}
UNRELATED = {
    "gemini": {
        "model": {"name": "gemini-2.5-pro"},
        "hooks": {
            "AfterAgent": [
                {
                    "matcher": "*",
                    "hooks": [{"name": "mine", "type": "command", "command": "say done"}],
                }
            ]
        },
    },
    "copilot": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}},
}
PLUGIN = ".opencode/plugins/paneboard.js"


def _install(
    home: Path, agent: str, project: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    return run_cli(home, "hook", "install", agent, "--project", str(project), *extra)


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
@pytest.mark.parametrize("start", ["missing", "unrelated"])
def test_install_twice_then_uninstall(home: Path, project: Path, agent: str, start: str) -> None:
    """SessionStart and the stop event, with the options given; uninstall restores the file."""
    path = project / FILES[agent]
    if start == "unrelated":
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(UNRELATED[agent]))
    done = _install(home, agent, project, "--as", "bob", "--board", "web")
    assert (0, f"installed paneboard hooks in {path} (mode stop)") == (
        done.returncode,
        done.stdout.splitlines()[0],
    )
    data = json.loads(path.read_text())
    ours = {
        e: [h for entry in entries for h in entry["hooks"] if "paneboard" in h["command"]]
        for e, entries in data["hooks"].items()
    }
    assert set(EVENTS[agent]) == {e for e, hooks in ours.items() if hooks}
    [start_hook], [stop_hook] = ours[EVENTS[agent][0]], ours[EVENTS[agent][1]]
    assert start_hook["command"].endswith(
        f"hook session-start --agent {agent} --mode stop --as bob --board web"
    )
    assert stop_hook["command"].endswith(
        f"hook stop --agent {agent} --mode stop --as bob --board web"
    )
    if start == "unrelated":
        assert (
            UNRELATED[agent]["hooks"]["AfterAgent" if agent == "gemini" else "Stop"][0]
            == data["hooks"][EVENTS[agent][1]][0]
        )
    first = path.read_text()
    again = _install(home, agent, project, "--as", "bob", "--board", "web")
    assert (
        f"paneboard hooks already installed in {path} (mode stop)" == again.stdout.splitlines()[0]
    )
    assert first == path.read_text()
    assert 0 == run_cli(home, "hook", "uninstall", agent, "--project", str(project)).returncode
    if start == "unrelated":
        assert UNRELATED[agent] == json.loads(path.read_text())
    elif agent == "copilot":
        assert not (project / ".github").exists()  # the file and its folders were install's own
    else:
        assert {} == json.loads(path.read_text())


def test_copilot_install_says_copilot_needs_a_trusted_folder(home: Path, project: Path) -> None:
    done = _install(home, "copilot", project)
    assert (
        "Copilot CLI loads a project's .github/hooks/ only in folders you have trusted"
        == done.stdout.splitlines()[1]
    )


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_a_malformed_hook_file_is_refused_and_untouched(
    home: Path, project: Path, agent: str
) -> None:
    path = project / FILES[agent]
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": [')
    for action in ("install", "uninstall"):
        done = run_cli(home, "hook", action, agent, "--project", str(project))
        assert (
            1,
            (
                f"paneboard: {path} is not valid JSON (line 1: Expecting value); "
                "fix or move it, nothing was changed\n"
            ),
        ) == (done.returncode, done.stderr)
    assert '{"hooks": [' == path.read_text()


@pytest.mark.parametrize(("agent", "mode", "message"), NO_DOOR_MODES)
def test_a_mode_the_agent_has_no_door_for_is_refused(
    home: Path, project: Path, agent: str, mode: str, message: str
) -> None:
    done = _install(home, agent, project, "--mode", mode)
    assert (1, f"paneboard: {message}\n") == (done.returncode, done.stderr)
    assert [] == list(project.iterdir())


@pytest.mark.parametrize("agent", ["gemini", "copilot", "opencode"])
def test_trust_is_refused_for_an_agent_whose_hooks_need_none(
    home: Path, project: Path, agent: str
) -> None:
    """Only Codex asks to trust its hooks: `--trust` elsewhere is refused before any write."""
    done = _install(home, agent, project, "--trust")
    message = "paneboard: --trust goes with `paneboard hook install codex or qwen`\n"
    assert (1, message) == (done.returncode, done.stderr)
    assert [] == list(project.iterdir())


def test_names_are_checked_before_anything_is_written(home: Path, project: Path) -> None:
    done = _install(home, "gemini", project, "--as", "../bob")
    message = (
        "paneboard: agent name '../bob' is not valid: "
        "use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`\n"
    )
    assert (1, message) == (done.returncode, done.stderr)
    assert [] == list(project.iterdir())


def test_opencode_plugin_install_again_options_uninstall(home: Path, project: Path) -> None:
    """The plugin carries the command and options; the same again changes nothing;
    uninstall keeps OpenCode's own files."""
    path = project / PLUGIN
    done = _install(home, "opencode", project, "--as", "oc-bob", "--home", str(home))
    assert f"installed paneboard plugin {path}\n" == done.stdout
    text = path.read_text()
    command = json.loads(
        next(ln for ln in text.splitlines() if ln.startswith("const COMMAND = "))[16:-1]
    )
    assert command[1:] == [
        "hook",
        "session-start",
        "--agent",
        "opencode",
        "--as",
        "oc-bob",
        "--home",
        str(home),
    ]
    assert command[0].startswith("/")
    assert (
        f"paneboard plugin already installed: {path}\n"
        == _install(home, "opencode", project, "--as", "oc-bob", "--home", str(home)).stdout
    )
    assert text == path.read_text()
    assert (
        f"installed paneboard plugin {path}\n"
        == _install(home, "opencode", project, "--as", "oc-carol").stdout
    )
    assert '"--as", "oc-carol"]' in path.read_text()
    (project / ".opencode" / "package.json").write_text(
        "{}"
    )  # OpenCode's own, written at its start
    assert (
        f"removed paneboard plugin {path}\n"
        == run_cli(home, "hook", "uninstall", "opencode", "--project", str(project)).stdout
    )
    assert ["package.json"] == sorted(p.name for p in (project / ".opencode").iterdir())


def test_opencode_uninstall_removes_the_folders_install_made(home: Path, project: Path) -> None:
    _install(home, "opencode", project)
    assert 0 == run_cli(home, "hook", "uninstall", "opencode", "--project", str(project)).returncode
    assert [] == list(project.iterdir())
    again = run_cli(home, "hook", "uninstall", "opencode", "--project", str(project))
    assert f"no paneboard plugin at {project / PLUGIN}\n" == again.stdout


def test_a_plugin_file_paneboard_did_not_write_is_refused(home: Path, project: Path) -> None:
    a_foreign_plugin_is_refused(home, project, PLUGIN, "opencode")


@pytest.mark.skipif(
    shutil.which("node") is None, reason="node is missing: the plugin's syntax is not checked"
)
def test_the_written_plugin_is_valid_javascript(home: Path, project: Path, tmp_path: Path) -> None:
    odd = tmp_path / 'it\'s "odd" \\ ${x}'
    assert 0 == _install(home, "opencode", project, "--home", str(odd)).returncode
    copy = tmp_path / "plugin.mjs"  # node checks an ES module by its extension
    copy.write_text((project / PLUGIN).read_text())
    done = subprocess.run(
        ["node", "--check", str(copy)], capture_output=True, text=True, check=False
    )
    assert (0, "") == (done.returncode, done.stderr)


def _stop(home: Path, agent: str) -> str:
    payload = {
        "session_id": "s1",
        "cwd": str(home),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    done = run_cli(
        home, "hook", "stop", "--agent", agent, "--as", "bob", input=json.dumps(payload).encode()
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout


@pytest.mark.parametrize(("agent", "idle"), [("gemini", "{}\n"), ("copilot", "")])
def test_stop_hands_over_one_prompt_per_turn_end_urgent_first(
    home: Path, agent: str, idle: str
) -> None:
    """One block per stop, in catch-up order; then the agent's own "nothing new" reply."""
    normal = post(home, "--to", "bob", "normal work")
    urgent = post(home, "--to", "bob", "--priority", "urgent", "urgent work")
    first, second = json.loads(_stop(home, agent)), json.loads(_stop(home, agent))
    assert ("block", "block") == (first["decision"], second["decision"])
    assert (urgent in first["reason"], normal in first["reason"]) == (True, False)
    assert (urgent in second["reason"], normal in second["reason"]) == (False, True)
    assert idle == _stop(home, agent)


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_session_start_context_in_each_agents_format(home: Path, agent: str) -> None:
    event = {"hook_event_name": "SessionStart", "cwd": str(home)}
    done = run_hook(home, "session-start", agent, event, "--mode", "stop", "--as", "bob")
    reply = json.loads(done.stdout)
    text = (
        reply["hookSpecificOutput"]["additionalContext"]
        if agent == "gemini"
        else reply["additionalContext"]
    )
    assert "paneboard: you are `bob` on board `test` (prompts arrive at your turn's end)" in text


def test_doctor_knows_the_three_agents(home: Path, tmp_path: Path) -> None:
    """Hooks or plugin installed in this project, and each OpenCode process whose door is up."""
    from tests.agents.scriptdoors import PluginStandIn

    for agent in ("gemini", "copilot", "opencode"):
        assert 0 == _install(home, agent, tmp_path).returncode
    folder = tmp_path / "run" / "paneboard-opencode"
    folder.mkdir(parents=True, mode=0o700)
    door = PluginStandIn(folder, os.getpid(), {"ok": True})
    try:
        done = run_cli(
            home,
            "doctor",
            "--as",
            "bob",
            PATH="/nonexistent",
            XDG_RUNTIME_DIR=str(tmp_path / "run"),
        )
    finally:
        door.close()
    lines = [
        ln for ln in done.stdout.splitlines() if ln.split()[1] in ("gemini", "copilot", "opencode")
    ]
    assert [
        (
            "warn  gemini   no `gemini` on PATH; Stop-hook door: SessionStart, AfterAgent in "
            f"{tmp_path / FILES['gemini']}"
        ),
        (
            "warn  copilot  no `copilot` on PATH; Stop-hook door: SessionStart, Stop in "
            f"{tmp_path / FILES['copilot']}"
        ),
        f"warn  opencode no `opencode` on PATH; plugin {tmp_path / PLUGIN}",
        f"ok    opencode plugin door of OpenCode pid {os.getpid()}: {door.socket_path}",
    ] == lines


def test_opencode_session_start_needs_the_plugins_socket(home: Path) -> None:
    """Run without the plugin's socket in its environment, it starts nothing and says why."""
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(home)}).encode()
    done = run_cli(
        home, "hook", "session-start", "--agent", "opencode", "--as", "bob", input=payload
    )
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(no PANEBOARD_OPENCODE_SOCKET from the plugin: no listener started)" in text
    assert not (home / "test" / "panes" / "bob.log").exists()
