"""paneboard against a live interactive Codex TUI in tmux, offline (testing/codex_session.py).

The module shares one CODEX_HOME, so Codex's daemon (and its ~400 MB) is set up once and
removed at the end; and one paneboard home, since every hook runs with the environment of the
TUI that started the daemon.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.state.panes.lock import holder
from testing.clients import free_port
from testing.codex_session import CodexHome, CodexTui, StandIn
from testing.helpers import run_cli, wait_until

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no Codex TUI"
)
UNLOAD_S = 2
TIMINGS: dict[str, float] = {}


class Live:
    """What the tests share: the stand-in, the Codex home, the board's home, the TUIs' env."""

    def __init__(self, folder: Path, bin_dir: Path) -> None:
        port = free_port()
        self.stand_in = StandIn(folder / "stand-in.log", port)
        self.codex = CodexHome(folder / "codex-home", bin_dir, port, UNLOAD_S)
        self.home = folder / "board-home"
        self.home.mkdir(mode=0o700)
        # No codex on PATH: the hook finds the daemon's own binary for `codex queue`.
        path = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
        tui_home = folder / "user-home"
        tui_home.mkdir()
        self.env = {
            "PATH": path,
            "HOME": str(tui_home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
        }
        self.env.update(PANEBOARD_HOME=str(self.home), PANEBOARD_BOARD="test")
        self.tuis: list[CodexTui] = []

    def cli(self, *args: str) -> str:
        done = run_cli(self.home, *args, CODEX_HOME=str(self.codex.folder), timeout=90)
        assert 0 == done.returncode, done.stderr
        return done.stdout

    def project(self, folder: Path, *install: str) -> Path:
        folder.mkdir()
        project = folder.resolve()
        self.codex.trust_project(project)
        out = self.cli("hook", "install", "codex", "--project", str(project), "--trust", *install)
        assert "trusted" in out and "not trusted" not in out, out
        return project

    def tui(self, project: Path, *args: str) -> CodexTui:
        tui = CodexTui(self.codex, project, self.env, *args)
        self.tuis.append(tui)
        return tui

    def submit(self, tui: CodexTui, text: str) -> dict[str, Any]:
        return tui.submit(self.stand_in, text)

    def post(self, to: str, body: str) -> tuple[str, float]:
        pid = self.cli("post", "--as", "alice", "--to", to, body).strip()
        [line] = [
            ln for ln in self.cli("log", "--json").splitlines() if json.loads(ln)["id"] == pid
        ]
        return pid, float(json.loads(line)["ts"])

    def stage(self, pid: str, agent: str) -> str:
        return str(json.loads(self.cli("status", pid, "--json"))["recipients"][agent]["stage"])

    def pane_log(self, agent: str) -> str:
        path = self.home / "test" / "panes" / f"{agent}.log"
        return path.read_text() if path.exists() else ""

    def close(self) -> None:
        for tui in self.tuis:
            tui.close()
        self.codex.close()  # the daemon lets go of every thread: the listeners end
        self.stand_in.close()
        for lock in (self.home / "test" / "panes").glob("*.lock"):
            wait_until(lambda lk=lock: not holder(lk), f"{lock.stem}'s listener to end", 10)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, clients_bin: Path) -> Iterator[Live]:
    shared = Live(tmp_path_factory.mktemp("codex-live"), clients_bin)
    try:
        yield shared
    finally:
        shared.close()
        assert not shared.codex.folder.exists(), "the Codex home (and the daemon's copy) is left"
        if TIMINGS:
            print("\ncodex post -> turn start: " + json.dumps(TIMINGS), file=sys.stderr)


def test_codex_live_round_trip_busy_unload_and_resume(live: Live, tmp_path: Path) -> None:
    """hook install --trust; the first turn's SessionStart starts the listener; a post runs a
    turn that answers it; a busy session takes it after its turn; unloading ends the listener
    (the daemon lives on); a later post waits, and reaches the thread on `codex resume`."""
    project = live.project(tmp_path / "proj", "--as", "codex-bob")
    lock = live.home / "test" / "panes" / "codex-bob.lock"
    before = live.codex.threads()
    tui = live.tui(project)
    live.submit(tui, "ready")
    listener = wait_until(
        lambda: held if (held := holder(lock)) is not None and held > 0 else None,
        "the SessionStart listener",
        30,
        lambda: live.pane_log("codex-bob"),
    )
    [thread] = live.codex.threads() - before
    argv = Path(f"/proc/{listener}/cmdline").read_text().split("\0")
    # no codex on the TUI's PATH: the hook hands the listener the daemon's own binary
    codex_bin = str(live.codex.folder / "packages" / "app-server-daemon")
    at = argv.index("--thread")
    assert [thread, "--until-unloaded", "--codex-bin"] == argv[at + 1 : at + 4]
    assert argv[at + 4].startswith(codex_bin) and argv[at + 4].endswith("/bin/codex")

    # idle: a post starts a turn at once; the stand-in has Codex run the answer command
    pid, posted = live.post("codex-bob", "what is six times seven?\nMOCK-ANSWER: forty-two")
    assert "forty-two\n" == live.cli("wait", pid, "--as", "alice", "--timeout", "60")
    [request] = live.stand_in.requests(f"[paneboard] prompt {pid}")
    assert ("queue", thread) == (request["trigger"], request["thread"])
    TIMINGS["idle_s"] = round(float(request["ts"]) - posted, 3)
    rollout = live.codex.rollout(thread).read_text()
    assert '"turn_trigger":"queue"' in rollout and f"[paneboard] prompt {pid}" in rollout

    # busy: the prompt waits in Codex's queue and runs right after the current turn
    busy = live.submit(tui, "a long task MOCK-SLOW-3")
    pid, posted = live.post("codex-bob", "and now?\nMOCK-ANSWER: after the long task")
    assert "" == live.cli("wait", pid, "--until", "delivered", "--timeout", "20")
    assert [] == live.stand_in.answered("a long task MOCK-SLOW-3"), (
        "delivered only after the busy turn"
    )
    assert "after the long task\n" == live.cli("wait", pid, "--as", "alice", "--timeout", "60")
    [request] = live.stand_in.requests(f"[paneboard] prompt {pid}")
    [busy_done] = live.stand_in.answered("a long task MOCK-SLOW-3")
    assert float(busy["ts"]) < float(busy_done["ts"]) <= float(request["ts"])
    TIMINGS["busy_s"] = round(float(request["ts"]) - posted, 3)
    TIMINGS["busy_after_turn_end_s"] = round(float(request["ts"]) - float(busy_done["ts"]), 3)

    # the TUI goes away: the daemon unloads the thread, the listener ends, the daemon lives on
    daemon = live.codex.daemon_pids()
    tui.close()
    wait_until(
        lambda: not holder(lock),
        "the listener to end at unload",
        UNLOAD_S + 30,
        lambda: live.pane_log("codex-bob"),
    )
    assert f"Codex thread {thread} is no longer loaded: stopping" in live.pane_log("codex-bob")
    assert daemon == live.codex.daemon_pids() and len(daemon) == 2

    # a post now waits on the board (nobody to hand it to), and reaches the thread on resume
    pid, posted = live.post("codex-bob", "still there?\nMOCK-ANSWER: back again")
    assert "posted" == live.stage(pid, "codex-bob")
    with sqlite3.connect(live.codex.folder / "queue_1.sqlite") as db:
        assert [] == db.execute("SELECT id FROM queued_items").fetchall()
    resumed = live.tui(project, "resume", thread)
    live.submit(resumed, "I am back")
    assert "back again\n" == live.cli("wait", pid, "--as", "alice", "--timeout", "60")
    [request] = live.stand_in.requests(f"[paneboard] prompt {pid}")
    assert ("queue", thread) == (request["trigger"], request["thread"])


def test_codex_stop_mode_hands_a_prompt_over_once(live: Live, tmp_path: Path) -> None:
    """--mode stop: a prompt posted before the turn is the `<hook_prompt>` of the turn's next
    request, once; the turn answers it; the next Stop has nothing new."""
    project = live.project(tmp_path / "proj", "--as", "codex-carol", "--mode", "stop")
    pid, _ = live.post("codex-carol", "which port?\nMOCK-ANSWER: 8080")
    tui = live.tui(project)
    live.submit(tui, "hello there")
    assert "8080\n" == live.cli("wait", pid, "--as", "alice", "--timeout", "60")
    live.submit(tui, "anything else?")
    wait_until(
        lambda: live.stand_in.answered("anything else?"),
        "the second turn's answer",
        30,
        live.stand_in.tail,
    )
    handed = live.stand_in.requests(f"[paneboard] prompt {pid}")
    assert 1 == len(handed), live.stand_in.tail()
    assert str(handed[0]["text"]).startswith("<hook_prompt") and handed[0]["trigger"] == "user"
    status = json.loads(live.cli("status", pid, "--json"))["recipients"]["codex-carol"]
    assert ("answered", "stop-hook") == (status["stage"], status["door"])


def test_codex_reads_a_prompt_it_was_told_of_from_its_shell(live: Live, tmp_path: Path) -> None:
    """The turn for alice's second prompt runs `paneboard read FIRST` in Codex's own shell tool
    (the stand-in's MOCK-READ line): the first is `read` by codex-dave, verified, via cli."""
    project = live.project(tmp_path / "proj", "--as", "codex-dave")
    lock = live.home / "test" / "panes" / "codex-dave.lock"
    tui = live.tui(project)
    live.submit(tui, "ready")
    wait_until(
        lambda: (held := holder(lock)) is not None and held > 0,
        "the SessionStart listener",
        30,
        lambda: live.pane_log("codex-dave"),
    )
    first, _ = live.post("codex-dave", "the body to read: rotate the keys")
    live.cli("wait", first, "--until", "delivered", "--timeout", "60")
    live.post("codex-dave", f"read the prompt I told you of\nMOCK-READ: {first}")
    live.cli("wait", first, "--until", "read", "--timeout", "60")
    [receipt] = [
        row
        for row in map(json.loads, live.cli("log", "--json", "--kind", "read").splitlines())
        if row["prompt"] == first
    ]
    assert ("codex-dave", "cli", "verified") == (
        receipt["sender"],
        receipt["via"],
        receipt["verdict"],
    )
    status = json.loads(live.cli("status", first, "--json"))
    assert "read" in [s["stage"] for s in status["stages"]["codex-dave"]]
