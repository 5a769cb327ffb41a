"""`hook install|uninstall droid`: Factory Droid's Stop-hook door in `.factory/settings.json`,
and the Stop hook answering in Droid's (Claude-style) format."""

from __future__ import annotations

import json
from pathlib import Path

from testing.helpers import post, run_cli


def _hook(home: Path, action: str, project: Path, *extra: str) -> tuple[int, str, str]:
    args = ("hook", action, "droid", "--project", str(project), "--as", "droid-bob", *extra)
    done = run_cli(home, *args)
    return done.returncode, done.stdout, done.stderr


def test_install_writes_session_start_and_stop_and_keeps_the_settings_own_keys(
    home: Path, tmp_path: Path
) -> None:
    settings = tmp_path / ".factory" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "custom:Mine-0"}))
    trust = "Factory Droid loads a project's hooks only in folders you have trusted"
    done = (0, f"installed paneboard hooks in {settings} (mode stop)\n{trust}\n", "")
    assert done == _hook(home, "install", tmp_path)
    data = json.loads(settings.read_text())
    assert "custom:Mine-0" == data["model"]
    assert ["SessionStart", "Stop"] == sorted(data["hooks"])
    [stop] = data["hooks"]["Stop"]
    command = stop["hooks"][0]["command"]
    assert " hook stop --agent droid --mode stop --as droid-bob" in command
    assert (0, f"removed paneboard hooks from {settings}\n", "") == _hook(
        home, "uninstall", tmp_path
    )
    assert {"model": "custom:Mine-0"} == json.loads(settings.read_text())


def test_install_refuses_a_project_whose_hooks_json_droid_reads_instead(
    home: Path, tmp_path: Path
) -> None:
    hooks_json = tmp_path / ".factory" / "hooks.json"
    hooks_json.parent.mkdir()
    hooks_json.write_text("{}")
    why = (
        f"paneboard: {hooks_json} exists: Droid reads its hooks from there and ignores those in "
        f"{tmp_path / '.factory/settings.json'}; nothing was changed\n"
    )
    assert (1, "", why) == _hook(home, "install", tmp_path)
    assert ["hooks.json"] == [p.name for p in hooks_json.parent.iterdir()]


def test_droid_has_a_stop_hook_only(home: Path, tmp_path: Path) -> None:
    why = "paneboard: Factory Droid is reached through a Stop hook only: use --mode stop\n"
    assert (1, "", why) == _hook(home, "install", tmp_path, "--mode", "listen")
    assert not (tmp_path / ".factory").exists()


def test_the_stop_hook_blocks_with_the_prompt_and_then_stays_silent(home: Path) -> None:
    prompt = post(home, "--to", "droid-bob", "check the flaky test")
    hook = ("hook", "stop", "--agent", "droid", "--mode", "stop", "--as", "droid-bob")
    data = json.dumps({"hook_event_name": "Stop", "stop_hook_active": False}).encode()
    first = run_cli(home, *hook, input=data)
    reply = json.loads(first.stdout)
    assert (0, "block") == (first.returncode, reply["decision"])
    assert f"[paneboard] prompt {prompt} from alice on board test" in reply["reason"]
    again = run_cli(home, *hook, input=data)
    assert (0, "") == (again.returncode, again.stdout)
