"""Shared fixtures (a private home, the NATS servers, the stores a test runs on) and the tiers
each test is marked with (pyproject.toml registers the markers; docs/developers.md says which
tier to run when)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from testing.helpers import NatsServer
from testing.natscluster import NatsCluster

TESTS = Path(__file__).parent
# Hypothesis times each example against a 200 ms deadline and its input generation against a
# second: on a shared machine under load, and in four workers, that measures the machine, not the
# code. The examples and their checks are unchanged.
settings.register_profile("shared", deadline=None, suppress_health_check=[HealthCheck.too_slow])
# `make check` (`--hypothesis-profile=check`): a quarter of Hypothesis' 100 examples for each
# property whose test does not set its own count; `make test` runs the 100.
settings.register_profile("check", parent=settings.get_profile("shared"), max_examples=25)
settings.load_profile("shared")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def anyio_backend() -> str:
    """Async tests (`pytest.mark.anyio`) run on asyncio, as paneboard does; test_clock.py runs the
    listener on trio for its MockClock."""
    return "asyncio"


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


@pytest.fixture(scope="session")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    """Three nats-server processes forming one JetStream cluster, shared by the session.

    A test that stops nodes starts them again before it ends (`NatsCluster.start`).
    """
    import shutil

    if shutil.which("nats-server") is None:
        pytest.skip("nats-server is missing (Debian package nats-server): no cluster to test")
    cluster = NatsCluster(tmp_path_factory.mktemp("cluster"))
    cluster.start()
    yield cluster
    cluster.stop()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test taking `store_url` runs on the file log and on one NATS server; marked
    ``cluster``, on a three-node JetStream cluster too (a few representative ones: a cluster
    costs seconds a test). A test that names its own stores (`parametrize("store_url", …)`)
    runs on those."""
    chosen = any(m.args[0] == "store_url" for m in metafunc.definition.iter_markers("parametrize"))
    if "store_url" in metafunc.fixturenames and not chosen:
        stores = ["file", "nats"]
        if metafunc.definition.get_closest_marker("cluster") is not None:
            stores.append("cluster")
        metafunc.parametrize("store_url", stores, indirect=True)


@pytest.fixture
def store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """ "" for the file log, or a NATS URL with a prefix of the test's own, on one server or on
    the three-node cluster with three replicas."""
    if request.param == "file":
        return ""
    import uuid

    prefix = f"t{uuid.uuid4().hex[:12]}"
    if request.param == "cluster":
        cluster = request.getfixturevalue("nats_cluster")
        cluster.start()  # every node up, whatever a test before did
        url = cluster.url(prefix, replicas=3)
    else:
        url = f"{request.getfixturevalue('nats_server').url}/{prefix}"
    monkeypatch.setenv("PANEBOARD_TEST_STORE", url)
    return url


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test gets its tiers from where it lives and what it uses, so a new test is tiered
    with no mark of its own: tests/real/ is `real` (agent CLIs, tmux); a test on a NATS server
    (its fixtures, or a store parameter `nats` or `cluster`) is `nats`; one on the three-node
    cluster is also `slow`; a test of tests/test_wheel.py on the installed wheel is `wheel`.
    A test meeting a real counterpart otherwise says so with its own mark (`top` in tmux is
    `real`, a module starting nats-servers of its own is `nats`)."""
    for item in items:
        where = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
        used = set(getattr(item, "fixturenames", ()))
        params = getattr(item, "callspec", None)
        on = params.params.items() if params else ()
        stores = {v for k, v in on if "store" in k and isinstance(v, str)}
        if where[:1] == ("real",):
            item.add_marker(pytest.mark.real)
        if where == ("test_wheel.py",) and "installed" in used:
            item.add_marker(pytest.mark.wheel)
        if used & {"nats_server", "nats_cluster"} or stores & {"nats", "cluster"}:
            item.add_marker(pytest.mark.nats)
        if "nats_cluster" in used or "cluster" in stores:
            item.add_marker(pytest.mark.slow)
    _longest_first(items)


def _longest_first(items: list[pytest.Item]) -> None:
    """The files with an `untimed` test (minutes of waiting for real CLIs), then those with a
    `slow` or `wheel` one, then the rest, each file's tests in their order: pytest-xdist hands
    a worker whole files in this order (`--dist loadfile`), so the long ones overlap the rest
    instead of ending a run."""
    untimed = {i.path for i in items if i.get_closest_marker("untimed") is not None}
    slow = {i.path for i in items if {"slow", "wheel"} & {m.name for m in i.iter_markers()}}
    items.sort(key=lambda i: 0 if i.path in untimed else 1 if i.path in slow else 2)
