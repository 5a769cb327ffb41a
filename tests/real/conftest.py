"""The real Claude Code and Codex CLIs, offline: installed with npm into a folder of the
project's own."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.clients import CLIENTS, CLIS, PACKAGES, free_port
from testing.helpers import ScriptServer


@pytest.fixture(scope="session")
def clients_bin() -> Path:
    """The folder holding the agent CLIs; installed here on first use (skipped only without npm)."""
    bin_dir = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    if not all((bin_dir / cli).exists() for cli in CLIS):
        if shutil.which("npm") is None:
            pytest.skip(
                "npm is missing: cannot install the real agent CLIs "
                "(Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode)"
            )
        CLIENTS.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, DISABLE_AUTOUPDATER="1")
        subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(CLIENTS),
                *PACKAGES,
            ],
            check=True,
            env=env,
            timeout=600,
        )
        bin_dir = CLIENTS / "node_modules" / ".bin"
    return bin_dir


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The API stand-in on a free loopback port; yields (port, request log)."""
    server = ScriptServer("testing.api_stand_in", free_port(), tmp_path / "api.log")
    yield server.port, server.log
    server.close()
