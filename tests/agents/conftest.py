"""The fixture the agents' tests share (a module may define its own `project`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder."""
    path = tmp_path / "proj"
    path.mkdir()
    return path
