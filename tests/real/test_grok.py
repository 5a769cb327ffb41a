"""Grok CLI 1.0.1 (`@vibe-kit/grok-cli` 0.0.34), offline: what docs/agents.md says of it, that it
has no door and keeps no conversation file, checked on the binary."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testing.clients import PINNED
from testing.sessions import StandIn, base_env

GROK = PINNED["grok"]


def test_grok_answers_offline_and_keeps_no_conversation_file(tmp_path: Path) -> None:
    """`grok -p` reaches the stand-in once, and leaves only the project's settings file behind
    (its TUI adds `~/.grok/user-settings.json`): no session or history file to follow."""
    binary = GROK.installed()
    if binary is None:
        pytest.skip(GROK.missing)
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir()
    stand_in = StandIn(tmp_path)
    try:
        env = base_env(home, binary.parent, tmp_path / "pb")
        env.update(GROK_API_KEY="stand-in", GROK_BASE_URL=f"http://127.0.0.1:{stand_in.port}/v1")
        done = subprocess.run(
            [str(binary), "-p", "say hello"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert 0 == done.returncode, done.stderr
        assert '{"role":"assistant","content":"OK"}' in done.stdout
        assert 1 == len(stand_in.turns_with("say hello"))
    finally:
        stand_in.close()
    written = sorted(
        str(path.relative_to(tmp_path))
        for folder in (home, project)
        for path in folder.rglob("*")
        if path.is_file()
    )
    assert ["proj/.grok/settings.json"] == written
