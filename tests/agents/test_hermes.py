"""The `hermes-plugin` door against paneboard's real Hermes plugin, run by Python with a stand-in
for the Hermes CLI it reaches; its refusals; and `hook install|uninstall hermes`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.agents import hermes
from paneboard.agents.base import DoctorRequest
from paneboard.agents.script import private_folder
from testing.helpers import Listening, post, run_cli
from tests.agents.scriptdoors import (
    Harness,
    PluginStandIn,
    hook,
    listen,
    undelivered,
)

# Hermes's side: the plugin manager's `_cli_ref` (the interactive CLI, whose `_pending_input`
# queue its input box feeds), `register_hook`. HERMES_MODE says whether a turn runs; every text
# put on the queue is one JSON line in SENT.
HARNESS = """
import importlib.util, json, os, sys, time, types
plugin, sent = sys.argv[1:]
class Queue:
    def put(self, text):
        with open(sent, "a") as f:
            f.write(json.dumps({"text": text, "busy": cli._agent_running}) + "\\n")
cli = types.SimpleNamespace(_pending_input=Queue(), session_id="20261201_000000_abcdef",
                            _agent_running=os.environ.get("HERMES_MODE") == "busy")
hooks = {}
ctx = types.SimpleNamespace(_manager=types.SimpleNamespace(_cli_ref=None),
                            register_hook=lambda name, f: hooks.setdefault(name, f))
spec = importlib.util.spec_from_file_location("paneboard_plugin", plugin)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.register(ctx)
print(json.dumps({"first": hooks["pre_llm_call"](is_first_turn=True)}), flush=True)
ctx._manager._cli_ref = cli
while not os.listdir(os.path.join(os.environ["XDG_RUNTIME_DIR"], "paneboard-hermes")):
    time.sleep(0.05)
print(json.dumps({"first": hooks["pre_llm_call"](is_first_turn=True)}), flush=True)
sys.stdin.readline()  # Hermes exits when its stdin closes
"""


class Plugin(Harness):
    """paneboard's plugin in a Python process of its own, with Hermes played by HARNESS."""

    def __init__(self, folder: Path, mode: str) -> None:
        self.mode = mode
        self.runtime = folder / "run"
        (self.runtime / "paneboard-hermes").mkdir(mode=0o700, parents=True)
        self.sent = folder / "sent.jsonl"
        plugin = folder / "plugin.py"
        plugin.write_text(hermes.SCRIPT.text("true", []))  # its session-start hook does nothing
        env = {
            "PATH": os.environ["PATH"],
            "XDG_RUNTIME_DIR": str(self.runtime),
            "HERMES_MODE": mode,
        }
        argv = [sys.executable, "-c", HARNESS, str(plugin), str(self.sent)]
        self.proc = subprocess.Popen(
            argv, env=env, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.before = json.loads(self.proc.stdout.readline())["first"]  # no CLI yet
        self.after = json.loads(self.proc.stdout.readline())["first"]
        self.socket = self.runtime / "paneboard-hermes" / f"{self.proc.pid}.sock"


@pytest.fixture
def plugin(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Plugin]:
    p = Plugin(tmp_path, getattr(request, "param", "idle"))
    yield p
    p.close()


def _listen(home: Path, socket_path: Path, *extra: str) -> Listening:
    return listen(home, "hermes-plugin", socket_path, *extra)


@pytest.mark.parametrize("plugin", ["idle", "busy"], indirect=True)
def test_the_plugin_puts_the_prompt_on_the_clis_input_queue(home: Path, plugin: Plugin) -> None:
    """The composed text on the queue Hermes's input box feeds, busy or not (never the
    interrupt queue); the registry names the process and its session."""
    registry = json.loads(plugin.socket.with_suffix(".json").read_text())
    assert {
        "pid": plugin.proc.pid,
        "socket": str(plugin.socket),
        "session": "20261201_000000_abcdef",
    }.items() <= registry.items()
    assert 0o600 == plugin.socket.with_suffix(".json").stat().st_mode & 0o777
    with _listen(home, plugin.socket) as bob:
        prompt = post(home, "--to", "bob", "review fetch.py")
        bob.wait_err(f"delivered {prompt} from alice via hermes-plugin")
    [sent] = plugin.given()
    assert (plugin.mode == "busy") is sent["busy"]
    text = str(sent["text"])
    assert text.startswith(f"[paneboard] prompt {prompt} from alice on board test")
    assert "> review fetch.py" in text


def test_the_first_turn_gets_the_context_only_in_an_interactive_cli(plugin: Plugin) -> None:
    """Before the CLI is known (`hermes chat -q`) the first turn gets nothing; after, the line
    the session-start hook answered (here a hook that printed nothing, so why it did not)."""
    assert plugin.before is None
    assert {"context": "paneboard: the listener did not start (exit 0): "} == plugin.after


def test_hermes_exiting_removes_the_socket_and_the_registry(plugin: Plugin) -> None:
    assert plugin.socket.exists() and plugin.proc.stdin is not None
    plugin.proc.stdin.close()
    assert 0 == plugin.proc.wait(10)
    assert [] == list(plugin.socket.parent.iterdir())


def test_an_empty_or_broken_line_is_refused_by_the_plugin(plugin: Plugin) -> None:
    import socket

    def ask(line: bytes) -> dict[str, object]:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(plugin.socket))
            s.sendall(line)
            return dict(json.loads(s.makefile("rb").readline()))

    assert {"ok": False, "error": "no text"} == ask(b'{"id": "x", "text": "  "}\n')
    assert {"ok": False, "error": "not a JSON object"} == ask(b"[1]\n")
    assert [] == plugin.given()


def test_a_refusal_by_the_plugin_is_retried_then_undelivered(home: Path, tmp_path: Path) -> None:
    server = PluginStandIn(tmp_path, os.getpid(), {"ok": False, "error": "Hermes is exiting"})
    sent = undelivered(home, server, _listen(home, server.socket_path))
    assert (2, ["Hermes did not take it: Hermes is exiting"]) == sent


def _hook(home: Path, action: str, project: Path) -> tuple[int, str, str]:
    return hook(home, action, "hermes", project, "h-bob")


def test_hook_install_writes_the_plugin_and_manifest_once_and_uninstall_removes_them(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    folder = project / ".hermes" / "plugins" / "paneboard"
    path = folder / "__init__.py"
    note = f"{hermes.ENABLE}\n"
    assert (0, f"installed paneboard plugin {path}\n{note}", "") == _hook(home, "install", project)
    text = path.read_text()
    assert text.startswith("# paneboard: the Hermes Agent door.")
    assert '"session-start", "--agent", "hermes", "--as", "h-bob"]' in text
    manifest = (folder / "plugin.yaml").read_text()
    assert "\nname: paneboard\n" in manifest
    assert ["__init__.py", "plugin.yaml"] == sorted(p.name for p in folder.iterdir())
    already = f"paneboard plugin already installed: {path}\n{note}"
    assert (0, already, "") == _hook(home, "install", project)
    (folder / "plugin.yaml").unlink()  # a manifest gone missing is written again
    assert (0, f"installed paneboard plugin {path}\n{note}", "") == _hook(home, "install", project)
    assert manifest == (folder / "plugin.yaml").read_text()
    assert (0, f"removed paneboard plugin {path}\n", "") == _hook(home, "uninstall", project)
    assert [] == list(project.iterdir())
    assert (0, f"no paneboard plugin at {path}\n", "") == _hook(home, "uninstall", project)


def test_the_plugin_compiles_as_the_python_hermes_runs(tmp_path: Path) -> None:
    """What install writes is Python whose command is the one given (a list literal)."""
    text = hermes.SCRIPT.text("/opt/pb/paneboard", ["--as", "bob's"])
    tree = ast.parse(text)  # Python, or a SyntaxError
    [command] = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "COMMAND"
    ]
    assert [
        "/opt/pb/paneboard",
        "hook",
        "session-start",
        "--agent",
        "hermes",
        "--as",
        "bob's",
    ] == command


@pytest.mark.parametrize("name", ["__init__.py", "plugin.yaml"])
def test_hook_install_refuses_a_plugin_it_did_not_write(
    home: Path, tmp_path: Path, name: str
) -> None:
    """Either file not paneboard's: install and uninstall refuse, and write or remove nothing."""
    project = tmp_path / "proj"
    folder = project / ".hermes" / "plugins" / "paneboard"
    folder.mkdir(parents=True)
    (folder / name).write_text("def register(ctx): pass\n")
    word = "plugin" if name == "__init__.py" else "plugin manifest"
    why = (
        f"paneboard: {folder / name} is not paneboard's {word}; move it away, nothing was changed\n"
    )
    assert (1, "", why) == _hook(home, "install", project)
    assert [name] == [p.name for p in folder.iterdir()]
    assert (1, "", why) == _hook(home, "uninstall", project)
    assert "def register(ctx): pass\n" == (folder / name).read_text()


def test_hermes_has_a_listener_only(home: Path, tmp_path: Path) -> None:
    done = run_cli(home, "hook", "install", "hermes", "--project", str(tmp_path), "--mode", "stop")
    why = "Hermes Agent is reached through a listener, through its plugin only: use --mode listen"
    assert (1, f"paneboard: {why}\n") == (done.returncode, done.stderr)
    assert not (tmp_path / ".hermes").exists()


def test_the_session_start_hook_without_the_plugins_socket_starts_no_listener(home: Path) -> None:
    done = run_cli(home, "hook", "session-start", "--agent", "hermes", "--as", "h-bob", input=b"{}")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 0 == done.returncode
    assert "(no PANEBOARD_HERMES_SOCKET from the plugin: no listener started)" in context


def test_doctor_says_what_hermes_needs_to_load_the_plugin(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    _hook(home, "install", project)
    checks = hermes.HERMES.doctor(DoctorRequest(project, {"PATH": ""}, None, home))
    path, folder = project / hermes.PLUGIN, private_folder("paneboard-hermes")
    assert [
        ("warn", f"no `hermes` on PATH; plugin {path}"),
        ("warn", f"no Hermes Agent runs with the plugin's door up (in {folder})"),
        ("warn", f"no HERMES_ENABLE_PROJECT_PLUGINS=1: {hermes.ENABLE}"),
    ] == [(c.level, c.detail) for c in checks]
    enabled = {"PATH": "", "HERMES_ENABLE_PROJECT_PLUGINS": "1"}
    assert checks[:2] == hermes.HERMES.doctor(DoctorRequest(project, enabled, None, home))
    _hook(home, "uninstall", project)
    bare = hermes.HERMES.doctor(
        DoctorRequest(project, {"PATH": ""}, None, home)
    )  # nothing installed to enable
    assert [f"no `hermes` on PATH; no plugin at {path} (paneboard hook install hermes)"] == [
        c.detail for c in bare[:1]
    ]
    assert 2 == len(bare)


def test_the_session_start_hook_names_the_session_its_listener_serves() -> None:
    """The plugin's session id goes to the listener as `--session` (the session a wake
    resumes); without one, no `--session`."""
    socket = {"PANEBOARD_HERMES_SOCKET": "/run/h.sock"}
    door = ["--door", "hermes-plugin", "--socket", "/run/h.sock", "--parent-pid", "7"]
    args, _ = hermes.HERMES.listen_args({"session_id": "20261201_000000_abcdef"}, socket, 7)
    assert [*door, "--session", "20261201_000000_abcdef"] == args
    assert (door, {}) == hermes.HERMES.listen_args({}, socket, 7)
