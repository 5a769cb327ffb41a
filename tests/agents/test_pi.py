"""The `pi-extension` door against paneboard's real pi extension, run by node with a stand-in
for pi's extension API; its refusals against a socket server standing in for the extension;
and `hook install|uninstall pi`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.agents import pi
from testing.helpers import Listening, post, run_cli
from tests.agents.scriptdoors import (
    Harness,
    PluginStandIn,
    hook,
    listen,
    undelivered,
)

# pi's side of the extension API: `on`, `sendUserMessage` (which shows the text to the `input`
# handlers, as pi does, unless PI_MODE is "deaf"), and a session context whose idleness
# PI_MODE says. Each message pi is given is one JSON line in SENT.
HARNESS = """
import fs from "fs";
const [ext, sent] = process.argv.slice(1);
const mode = process.env.PI_MODE || "idle";
const handlers = {};
const pi = {
  on: (name, f) => (handlers[name] = f),
  sendUserMessage: (text, options) => {
    fs.appendFileSync(sent, JSON.stringify({ text, options }) + "\\n");
    if (mode !== "deaf") setTimeout(() => handlers.input({ source: "extension", text }), 5);
  },
};
(await import(ext)).default(pi);
const ctx = {
  hasUI: true,
  cwd: process.cwd(),
  isIdle: () => mode !== "busy",
  sessionManager: { getSessionFile: () => "/nowhere/session.jsonl" },
};
await handlers.session_start({ reason: "startup" }, ctx);
console.log("ready");
setInterval(() => {}, 1000);
"""


class Extension(Harness):
    """paneboard's extension in a node process of its own, with pi played by HARNESS."""

    def __init__(self, folder: Path, mode: str) -> None:
        self.runtime = folder / "run"
        self.runtime.mkdir(mode=0o700)
        self.sent = folder / "sent.jsonl"
        ext = folder / "paneboard.mjs"
        ext.write_text(pi.extension_text("true", []))  # its session-start hook does nothing
        env = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": str(self.runtime), "PI_MODE": mode}
        argv = ["node", "--input-type=module", "-e", HARNESS, str(ext), str(self.sent)]
        self.proc = subprocess.Popen(argv, env=env, cwd=folder, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and "ready" == self.proc.stdout.readline().strip()
        self.socket = self.runtime / "paneboard-pi" / f"{self.proc.pid}.sock"


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is missing")


@pytest.fixture
def extension(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Extension]:
    ext = Extension(tmp_path, getattr(request, "param", "idle"))
    yield ext
    ext.close()


def _listen(home: Path, socket_path: Path, *extra: str) -> Listening:
    return listen(home, "pi-extension", socket_path, *extra)


@needs_node
@pytest.mark.parametrize("extension", ["idle", "busy"], indirect=True)
def test_the_extension_gives_pi_the_prompt_as_a_user_message(
    home: Path, extension: Extension
) -> None:
    """One user message with the composed text, as a follow-up when pi is busy; pi's `input`
    event carrying it is the receipt."""
    registry = json.loads(extension.socket.with_suffix(".json").read_text())
    assert {"pid": extension.proc.pid, "socket": str(extension.socket)}.items() <= registry.items()
    assert 0o700 == extension.socket.parent.stat().st_mode & 0o777
    with _listen(home, extension.socket) as bob:
        prompt = post(home, "--to", "bob", "review fetch.py")
        bob.wait_err(f"delivered {prompt} from alice via pi-extension")
    [message] = extension.given()
    assert {"deliverAs": "followUp"} == message["options"]
    text = str(message["text"])
    assert text.startswith(f"[paneboard] prompt {prompt} from alice on board test")
    assert "> review fetch.py" in text


def test_a_refusal_by_the_extension_is_retried_then_undelivered(home: Path, tmp_path: Path) -> None:
    why = "pi did not take the message within 5000 ms"
    server = PluginStandIn(tmp_path, os.getpid(), {"ok": False, "error": why})
    sent = undelivered(home, server, _listen(home, server.socket_path))
    assert (2, [f"pi did not take it: {why}"]) == sent


def _hook(home: Path, action: str, project: Path) -> tuple[int, str, str]:
    return hook(home, action, "pi", project, "pi-bob")


def test_hook_install_writes_the_extension_once_and_uninstall_removes_it(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    path = project / ".pi" / "extensions" / "paneboard.ts"
    assert (0, f"installed paneboard extension {path}\n", "") == _hook(home, "install", project)
    text = path.read_text()
    assert text.startswith("// paneboard: the pi door.")
    assert '"session-start", "--agent", "pi", "--as", "pi-bob"]' in text
    assert (0, f"paneboard extension already installed: {path}\n", "") == _hook(
        home, "install", project
    )
    assert (0, f"removed paneboard extension {path}\n", "") == _hook(home, "uninstall", project)
    assert [] == list(project.iterdir())


def test_hook_install_refuses_an_extension_it_did_not_write(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    path = project / ".pi" / "extensions" / "paneboard.ts"
    path.parent.mkdir(parents=True)
    path.write_text("export default function () {}\n")
    why = f"paneboard: {path} is not paneboard's extension; move it away, nothing was changed\n"
    assert (1, "", why) == _hook(home, "install", project)
    assert (1, "", why) == _hook(home, "uninstall", project)
    assert "export default function () {}\n" == path.read_text()


def test_pi_has_a_listener_only(home: Path, tmp_path: Path) -> None:
    done = run_cli(home, "hook", "install", "pi", "--project", str(tmp_path), "--mode", "stop")
    why = "pi is reached through a listener, through its extension only: use --mode listen"
    assert (1, f"paneboard: {why}\n") == (done.returncode, done.stderr)
    assert not (tmp_path / ".pi").exists()


def test_the_session_start_hook_without_the_extensions_socket_starts_no_listener(
    home: Path, tmp_path: Path
) -> None:
    done = run_cli(home, "hook", "session-start", "--agent", "pi", "--as", "pi-bob", input=b"{}")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 0 == done.returncode
    assert "(no PANEBOARD_PI_SOCKET from the extension: no listener started)" in context
