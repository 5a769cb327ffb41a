"""OpenCode, live and offline: paneboard's plugin, its socket, the listener's `opencode` door."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from paneboard.protocol.posts import Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from testing.clients import PINNED
from testing.helpers import Listening, cli_env, run_cli, wait_until
from testing.sessions import OpenCodeSession, one_shot, opencode_plugin_deps, post, running, status

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no live OpenCode session"
)


@pytest.fixture(scope="module")
def opencode(
    tmp_path_factory: pytest.TempPathFactory, clients_bin: Path
) -> Iterator[OpenCodeSession]:
    """One live OpenCode TUI for this module's tests, with `hook install opencode`'s plugin."""
    deps = opencode_plugin_deps()
    if deps is None:
        pytest.skip(PINNED["opencode-plugin"].missing)
    session = OpenCodeSession(tmp_path_factory.mktemp("opencode"), clients_bin, "oc-bob", deps)
    try:
        yield session
    finally:
        session.close()


def _lock(s: OpenCodeSession) -> Path:
    return s.pb_home / "test" / "panes" / f"{s.name}.lock"


def _door(s: OpenCodeSession) -> tuple[int, Path]:
    [registry] = (s.runtime / "paneboard-opencode").glob("*.json")
    return int(json.loads(registry.read_text())["pid"]), registry.with_suffix(".sock")


def test_the_plugin_starts_the_listener_and_a_prompt_reaches_the_model_once(
    opencode: OpenCodeSession,
) -> None:
    """A private socket per process; the listener starts with the first session; one turn each."""
    s = opencode
    assert (
        f"installed paneboard plugin {s.project / '.opencode/plugins/paneboard.js'}"
        == s.installed.strip()
    )
    pid, socket = _door(s)
    assert running(pid) and stat.S_ISSOCK(os.lstat(socket).st_mode)
    assert 0o700 == stat.S_IMODE(os.lstat(socket.parent).st_mode)
    assert holder(_lock(s)) is None  # no session yet: prompts wait on the board
    _opencode_run_starts_no_listener(s)
    s.type("hello")
    listener = wait_until(
        lambda: holder(_lock(s)), "no listener after the first turn", 30, s.screen
    )
    s.turn("hello")
    prompt = post(s.pb_home, s.name, "check the flaky test")
    handed = s.turn(prompt)
    assert ("delivered", "opencode", "accepted") == tuple(
        status(s.pb_home, prompt, s.name)[k] for k in ("stage", "door", "outcome")
    )
    assert s.contexts(f"paneboard: you are `{s.name}` on board `test`") >= 1
    s.type("again")
    s.turn("again")
    assert [handed] == s.stand_in.turns_with(prompt)
    doctor = run_cli(s.pb_home, "doctor", "--as", s.name, XDG_RUNTIME_DIR=str(s.runtime))
    assert (
        f"ok    opencode plugin door of OpenCode pid {pid}: {socket}" in doctor.stdout.splitlines()
    )
    assert listener == holder(_lock(s))


def _opencode_run_starts_no_listener(s: OpenCodeSession) -> None:
    """`opencode run` exits at its first idle moment: a prompt handed to it would never run."""
    one_shot([str(s.bin_dir / "opencode"), "run", "one shot"], s.project, s.env)
    s.turn("one shot")
    assert not (s.pb_home / "test" / "panes" / f"{s.name}.log").exists()


def test_a_busy_session_takes_the_prompt_after_its_current_turn(opencode: OpenCodeSession) -> None:
    """OpenCode accepts the prompt while a turn runs, and runs it once that turn has ended."""
    s = opencode
    busy = post(s.pb_home, s.name, "STAND-IN-SLOW-3 a long turn")
    started = s.turn(busy)
    queued = post(s.pb_home, s.name, "after the long turn")
    wait_until(
        lambda: status(s.pb_home, queued, s.name)["stage"] == "delivered",
        "not accepted while busy",
        30,
    )
    assert s.stand_in.turns_with(queued) == []
    assert s.turn(queued) >= started + 3


def test_the_listener_ends_with_opencode_and_a_dead_door_is_refused(
    opencode: OpenCodeSession,
) -> None:
    """OpenCode killed: its listener exits; its socket and registry, left behind, are refused."""
    s = opencode
    listener = holder(_lock(s))
    pid, socket = _door(s)
    assert listener is not None and s.tmux is not None
    os.kill(pid, signal.SIGKILL)  # a crash: no exit handler removes the socket or the registry
    s.tmux.close()
    wait_until(lambda: not running(listener), "the listener outlived OpenCode", 15)
    assert holder(_lock(s)) is None and not running(pid)
    env = cli_env(s.pb_home)
    with Listening(
        s.pb_home,
        s.name,
        "--door",
        "opencode",
        "--socket",
        str(socket),
        "--backoff",
        "0.05",
        env=env,
    ) as late:
        prompt = post(s.pb_home, s.name, "nobody is there")
        late.wait_err(f"undelivered {prompt}")
    [notice] = [
        p
        for _, p in read_posts(s.pb_home / "test" / "log")
        if isinstance(p, Undelivered) and p.prompt_id == prompt
    ]
    assert f"the OpenCode process {pid} behind {socket} has ended" == notice.reason
