"""The `opencode` door against a real Unix socket server standing in for paneboard's plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.agents.opencode import OPENCODE, plugin_folder
from testing.helpers import Listening, notices, post
from tests.agents.scriptdoors import (
    PluginStandIn,
    listen,
    undelivered,
)

PLUGIN = OPENCODE.own.text("paneboard", [])  # the plugin as `hook install` writes it


@pytest.fixture
def plugin(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[PluginStandIn]:
    reply = getattr(request, "param", {"ok": True, "session": "ses_1"})
    server = PluginStandIn(tmp_path, os.getpid(), reply)
    yield server
    server.close()


def _listen(home: Path, socket_path: Path, *extra: str) -> Listening:
    return listen(home, "opencode", socket_path, *extra)


def test_a_prompt_is_one_line_and_the_plugin_accepts_it(home: Path, plugin: PluginStandIn) -> None:
    """The line carries the prompt's id and composed text; the plugin's ok is a receipt."""
    with _listen(home, plugin.socket_path) as bob:
        pid = post(home, "--to", "bob", "review fetch.py")
        line = plugin.lines.get(timeout=10)
        bob.wait_err(f"delivered {pid} from alice via opencode")
    assert pid == line["id"]
    assert (
        f"[paneboard] prompt {pid} from alice on board test" in line["text"]
        and "> review fetch.py" in line["text"]
    )


@pytest.mark.parametrize(
    "plugin", [{"ok": False, "error": "no session yet in this OpenCode"}], indirect=True
)
def test_a_refusal_by_the_plugin_is_retried_then_undelivered(
    home: Path, plugin: PluginStandIn
) -> None:
    why = "the plugin did not hand it over: no session yet in this OpenCode"
    assert (2, [why]) == undelivered(home, plugin, _listen(home, plugin.socket_path))


@pytest.mark.parametrize("plugin", [None], indirect=True)
def test_no_answer_after_the_line_is_an_unknown_outcome(home: Path, plugin: PluginStandIn) -> None:
    """The plugin has the text and may have acted: recorded, `outcome: unknown`, not retried."""
    with _listen(home, plugin.socket_path, "--door-timeout", "0.5") as bob:
        pid = post(home, "--to", "bob", "hello")
        bob.wait_err(f"delivered {pid} from alice via opencode (outcome unknown")
    assert 1 == plugin.lines.qsize()


def test_a_symlinked_socket_is_refused(home: Path, plugin: PluginStandIn, tmp_path: Path) -> None:
    link = tmp_path / "link.sock"
    link.symlink_to(plugin.socket_path)
    with _listen(home, link) as bob:
        pid = post(home, "--to", "bob", "hello")
        bob.wait_err(f"undelivered {pid}")
    assert plugin.lines.empty()
    assert [f"{link} is a symlink; refusing to follow it"] == [n.reason for n in notices(home)]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is missing: the plugin is not run")
def test_without_a_runtime_dir_the_plugin_folder_is_the_users_not_a_tmp_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no XDG_RUNTIME_DIR, a folder another user made first under the temporary folder's
    old name changes nothing: the plugin and the door both use ~/.cache/paneboard-opencode."""
    tmp, fake_home = tmp_path / "tmp", tmp_path / "home"
    tmp.mkdir(mode=0o1777)
    fake_home.mkdir()
    squatted = tmp / f"paneboard-opencode-{os.getuid()}"
    squatted.mkdir(mode=0o755)
    if os.geteuid() == 0:
        os.chown(squatted, 65534, 65534)
    copy = tmp_path / "plugin.mjs"
    copy.write_text(PLUGIN + "\nexport { privateFolder };\n")
    script = f"import({json.dumps(str(copy))}).then((m) => console.log(m.privateFolder()));"
    env = {"PATH": os.environ["PATH"], "HOME": str(fake_home), "TMPDIR": str(tmp)}
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    expected = fake_home / ".cache" / "paneboard-opencode"
    assert (0, f"{expected}\n", "") == (done.returncode, done.stdout, done.stderr)
    assert 0o700 == expected.stat().st_mode & 0o777
    for key in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.setenv("TMPDIR", str(tmp))
    assert expected == plugin_folder()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is missing: the plugin is not run")
def test_a_session_start_hook_that_exits_unread_leaves_the_host_running(tmp_path: Path) -> None:
    """A hook command that closes its input and exits (a broken install, a wrapper that
    ignores stdin) makes the plugin's write fail with EPIPE: OpenCode must carry on, told
    the listener did not start. Twenty starts: the write loses the race nearly every time."""
    command = 'const COMMAND = ["paneboard", "hook", "session-start", "--agent", "opencode"];'
    unread = json.dumps(["sh", "-c", "exec 0<&-; sleep 0.2"])
    template = PLUGIN
    assert command in template
    copy = tmp_path / "plugin.mjs"
    copy.write_text(
        template.replace(command, f"const COMMAND = {unread};")
        + "\nexport { startListener, state };\n"
    )
    script = (
        f"const m = await import({json.dumps(str(copy))});"
        "for (let i = 0; i < 20; i++) "
        f"await m.startListener('/nonexistent.sock', {json.dumps(str(tmp_path))});"
        "console.log(m.state.context);"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    told = "paneboard: the listener did not start (exit 0): \n"
    assert (0, told, "") == (done.returncode, done.stdout, done.stderr)
