"""Shared fixtures: a private home, and running the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's own paneboard settings."""
    for var in ("PANEBOARD_HOME", "PANEBOARD_BOARD", "PANEBOARD_AGENT", "PANEBOARD_STORE", "CLAUDE_CODE_MESSAGING_SOCKET", "CODEX_THREAD_ID"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PANEBOARD_", "CLAUDE_CODE_"))}
    env.update(PANEBOARD_HOME=str(home), PANEBOARD_BOARD="test", **extra)
    return env


def run_cli(home: Path, *args: str, input: bytes | None = None, timeout: float = 30, **env: str) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run `paneboard ARGS` as a real process."""
    done = subprocess.run(
        [sys.executable, "-m", "listener", *args], input=input, capture_output=True,
        env=cli_env(home, **env), timeout=timeout, check=False,
    )  # fmt: skip
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))  # fmt: skip
