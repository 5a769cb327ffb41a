"""The real agent CLIs, offline: installed by `make clients` (never by a test) into folders of
the project's own, .ci/tools/; a test whose CLI is not there skips, saying so."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.clients import CLIENTS, CLIS, free_port
from testing.helpers import ScriptServer


@pytest.fixture(scope="session")
def clients_bin() -> Path:
    """The folder holding Claude Code, Codex, Gemini CLI, Copilot CLI and OpenCode
    (PANEBOARD_CLIENTS_BIN overrides .ci/tools/clients)."""
    bin_dir = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    absent = [c for c in CLIS if not (bin_dir / Path(c.binary).name).exists()]
    if absent:
        pytest.skip(f"{', '.join(c.name for c in absent)}: not in {bin_dir}: run make clients")
    return bin_dir


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The API stand-in on a free loopback port; yields (port, request log)."""
    server = ScriptServer("testing.api_stand_in", free_port(), tmp_path / "api.log")
    yield server.port, server.log
    server.close()
