"""Shared fixtures: a private home, and running the real command line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import NatsServer


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's own paneboard settings."""
    for var in (
        "PANEBOARD_HOME",
        "PANEBOARD_BOARD",
        "PANEBOARD_AGENT",
        "PANEBOARD_STORE",
        "PANEBOARD_TEST_STORE",
        "CLAUDE_CODE_MESSAGING_SOCKET",
        "CODEX_THREAD_ID",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    import shutil

    if shutil.which("nats-server") is None:
        pytest.skip(
            "nats-server is missing (Debian package nats-server): the NATS store is not tested"
        )
    server = NatsServer(tmp_path_factory.mktemp("nats"))
    yield server
    server.stop()


@pytest.fixture(params=["file", "nats"])
def store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """One suite, two stores: "" for the file log, or a NATS URL with a prefix of the test's own."""
    if request.param == "file":
        return ""
    import uuid

    server = request.getfixturevalue("nats_server")
    url = f"{server.url}/t{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("PANEBOARD_TEST_STORE", url)
    return url
