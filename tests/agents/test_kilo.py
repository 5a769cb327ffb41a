"""`hook install|uninstall kilo`, the plugin it writes (OpenCode's, with Kilo Code's names), and
the `kilo` door against a real Unix socket server standing in for the plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from paneboard.agents import by_kind
from paneboard.agents.kilo import KILO, SCRIPT
from paneboard.agents.script import Script
from paneboard.protocol.errors import BadInput
from testing.helpers import Listening, post, run_cli
from tests.agents.scriptdoors import (
    PluginStandIn,
    a_foreign_plugin_is_refused,
    listen,
    undelivered,
)

PLUGIN = ".kilo/plugins/paneboard.js"
NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")


def _install(home: Path, project: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return run_cli(home, "hook", "install", "kilo", "--project", str(project), *options)


def _listen(home: Path, socket_path: Path, *extra: str) -> Listening:
    return listen(home, "kilo", socket_path, *extra)


def test_install_writes_the_plugin_again_changes_nothing_uninstall_keeps_kilos_files(
    home: Path, project: Path
) -> None:
    """The plugin carries the command and options; uninstall leaves what Kilo Code wrote at its
    start (`.kilo/.gitignore`)."""
    path = project / PLUGIN
    done = _install(home, project, "--as", "kilo-bob", "--home", str(home))
    assert (0, f"installed paneboard plugin {path}\n") == (done.returncode, done.stdout)
    text = path.read_text()
    assert text.startswith("// paneboard: the Kilo Code door. Written by `paneboard hook install")
    command = json.loads(
        next(ln for ln in text.splitlines() if ln.startswith("const COMMAND = "))[16:-1]
    )
    assert command[0].startswith("/")
    assert [
        "hook",
        "session-start",
        "--agent",
        "kilo",
        "--as",
        "kilo-bob",
        "--home",
        str(home),
    ] == (command[1:])
    again = _install(home, project, "--as", "kilo-bob", "--home", str(home))
    assert f"paneboard plugin already installed: {path}\n" == again.stdout
    assert text == path.read_text()
    (project / ".kilo" / ".gitignore").write_text("node_modules\n")  # Kilo Code's own
    gone = run_cli(home, "hook", "uninstall", "kilo", "--project", str(project))
    assert f"removed paneboard plugin {path}\n" == gone.stdout
    assert [".gitignore"] == sorted(p.name for p in (project / ".kilo").iterdir())
    again = run_cli(home, "hook", "uninstall", "kilo", "--project", str(project))
    assert f"no paneboard plugin at {path}\n" == again.stdout


def test_a_plugin_file_paneboard_did_not_write_is_refused(home: Path, project: Path) -> None:
    a_foreign_plugin_is_refused(home, project, PLUGIN, "kilo")


def test_only_the_listen_mode() -> None:
    with pytest.raises(BadInput) as refused:
        by_kind("kilo").check_mode("stop")
    message = "Kilo Code is reached through a listener, through its plugin only: use --mode listen"
    assert message == str(refused.value)


def test_the_plugin_speaks_of_kilo_code_only() -> None:
    """Past its header, which says whose plugin it is, nothing names OpenCode: its folder, the
    variable that tells the hook its socket, the hook's `--agent`, its messages."""
    text = SCRIPT.text("paneboard", [])
    header = [ln for ln in text.splitlines() if ln.startswith("//")][:16]
    body = text.splitlines()[len(header) :]
    assert [] == [ln for ln in body if "opencode" in ln.lower()]
    for name in ('"paneboard-kilo"', '"PANEBOARD_KILO_SOCKET"', '"--agent", "kilo"'):
        assert name in text


def test_a_name_the_base_lacks_is_an_error() -> None:
    """A fork's names are checked against its base: a renamed thing that is gone is a loud
    error, never a plugin that quietly keeps the other agent's name."""
    script = Script(
        Path("x.js"),
        "kilo_plugin.js",
        "//",
        "kilo",
        "plugin",
        "opencode_plugin.js",
        (("nope", "x"),),
    )
    with pytest.raises(ValueError, match=r"opencode_plugin\.js has no 'nope'"):
        script.text("paneboard", [])


@NEEDS_NODE
def test_the_written_plugin_is_valid_javascript(home: Path, project: Path, tmp_path: Path) -> None:
    odd = tmp_path / 'it\'s "odd" \\ ${x}'
    assert 0 == _install(home, project, "--home", str(odd)).returncode
    copy = tmp_path / "plugin.mjs"  # node checks an ES module by its extension
    copy.write_text((project / PLUGIN).read_text())
    done = subprocess.run(
        ["node", "--check", str(copy)], capture_output=True, text=True, check=False
    )
    assert (0, "") == (done.returncode, done.stderr)


@NEEDS_NODE
def test_a_title_request_is_not_the_session_prompts_go_to(tmp_path: Path) -> None:
    """Kilo Code runs a session's title request as `title-<session id>` through the same
    system-prompt hook: the plugin keeps handing prompts to the session itself (before, the
    next prompt went to `title-ses_…`, which Kilo Code refuses with an error)."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    copy = tmp_path / "plugin.mjs"
    text = SCRIPT.text("paneboard", []).replace(
        'const COMMAND = ["paneboard", "hook", "session-start", "--agent", "kilo"];',
        'const COMMAND = ["sh", "-c", "exit 0"];',
    )
    copy.write_text(text + "\nexport { state };\n")
    script = f"""
import net from "net";
const m = await import({json.dumps(str(copy))});
const calls = [];
const promptAsync = async (req) => {{ calls.push(req.path.id); return {{}}; }};
const client = {{ session: {{ promptAsync }} }};
const hooks = await m.PaneboardDoor({{ client, directory: {json.dumps(str(tmp_path))} }});
const transform = hooks["experimental.chat.system.transform"];
await transform({{ sessionID: "ses_1" }}, {{ system: [] }});
await transform({{ sessionID: "title-ses_1" }}, {{ system: [] }});
const reply = await new Promise((resolve) => {{
  const line = JSON.stringify({{ id: "p", text: "hi" }}) + "\\n";
  const conn = net.connect(m.state.socket, () => conn.write(line));
  let data = "";
  conn.on("data", (c) => (data += c));
  conn.on("end", () => resolve(data));
}});
console.log(JSON.stringify({{ session: m.state.session, calls, reply: JSON.parse(reply) }}));
process.exit(0);
"""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert 0 == done.returncode, done.stderr
    got = json.loads(done.stdout)
    assert {
        "session": "ses_1",
        "calls": ["ses_1"],
        "reply": {"ok": True, "session": "ses_1"},
    } == got


def test_a_prompt_is_one_line_and_the_plugin_accepts_it(home: Path, tmp_path: Path) -> None:
    """The line carries the prompt's id and composed text; the plugin's ok is a receipt."""
    plugin = PluginStandIn(tmp_path, os.getpid(), {"ok": True, "session": "ses_1"})
    try:
        with _listen(home, plugin.socket_path) as bob:
            pid = post(home, "--to", "bob", "review fetch.py")
            line = plugin.lines.get(timeout=10)
            bob.wait_err(f"delivered {pid} from alice via kilo")
    finally:
        plugin.close()
    assert pid == line["id"]
    assert "> review fetch.py" in line["text"]


def test_a_refusal_by_the_plugin_is_retried_then_undelivered(home: Path, tmp_path: Path) -> None:
    plugin = PluginStandIn(tmp_path, os.getpid(), {"ok": False, "error": "no session yet"})
    why = "the plugin did not hand it over: no session yet"
    assert (2, [why]) == undelivered(home, plugin, _listen(home, plugin.socket_path))


def test_session_start_needs_the_plugins_socket(home: Path) -> None:
    """Run without the plugin's socket in its environment, it starts nothing and says why."""
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(home)}).encode()
    done = run_cli(home, "hook", "session-start", "--agent", "kilo", "--as", "bob", input=payload)
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(no PANEBOARD_KILO_SOCKET from the plugin: no listener started)" in text
    assert not (home / "test" / "panes" / "bob.log").exists()


def test_doctor_tells_the_plugin_and_each_kilo_process_with_its_door_up(
    home: Path, tmp_path: Path
) -> None:
    assert 0 == _install(home, tmp_path).returncode
    folder = tmp_path / "run" / "paneboard-kilo"
    folder.mkdir(parents=True, mode=0o700)
    door = PluginStandIn(folder, os.getpid(), {"ok": True})
    try:
        env = {"PATH": "/nonexistent", "XDG_RUNTIME_DIR": str(tmp_path / "run")}
        done = run_cli(home, "doctor", "--as", "bob", **env)
    finally:
        door.close()
    assert [
        f"warn  kilo     no `kilo` on PATH; plugin {tmp_path / PLUGIN}",
        f"ok    kilo     plugin door of Kilo Code pid {os.getpid()}: {door.socket_path}",
    ] == [ln for ln in done.stdout.splitlines() if ln.split()[1] == "kilo"]
    assert KILO.door == "kilo"
