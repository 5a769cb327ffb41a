"""`policy --wake`, `--wake-limit` and `hook install --wake`: asked on the terminal as every
change of policy is; a no writes nothing, hooks included."""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.state.trust.policy import read_policy
from testing.helpers import PANEBOARD, cli_env, run_cli
from tests.cli.agentpty import on_pty


def test_policy_wake_and_its_limit_are_confirmed_and_printed(home: Path) -> None:
    args = [*PANEBOARD, "policy", "--as", "bob", "--wake", "resume", "--wake-limit", "3"]
    shown = on_pty(args, cli_env(home), "y")
    assert 0 == shown.returncode, shown.text
    assert (
        "wake:       resume (the ended session is started again for a prompt), 3 wakes an hour"
        in shown.text
    )
    policy = read_policy(home / "test", "bob")
    assert ("resume", 3) == (policy.wake, policy.wake_limit)


def test_the_default_is_never_with_six_wakes_an_hour(home: Path) -> None:
    done = run_cli(home, "policy", "--as", "bob", "--json")
    assert 0 == done.returncode, done.stderr
    assert ("never", 6) == tuple(json.loads(done.stdout)[k] for k in ("wake", "wake_limit"))


def test_hook_install_wake_sets_the_policy_once_confirmed(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    install = [*PANEBOARD, "hook", "install", "claude", "--wake", "--as", "bob"]
    refused = on_pty([*install, "--project", str(project)], cli_env(home), "n")
    assert 1 == refused.returncode, refused.text
    assert refused.text.splitlines()[-1].endswith("not confirmed; nothing written")
    assert "never" == read_policy(home / "test", "bob").wake
    assert [] == list(project.rglob("*.json"))
    shown = on_pty([*install, "--project", str(project)], cli_env(home), "y")
    assert 0 == shown.returncode, shown.text
    assert "resume" == read_policy(home / "test", "bob").wake
    hooks = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]
    assert {"SessionStart", "Stop", "SessionEnd"} <= set(hooks)
