"""Post → model for an asleep agent woken by its listener, beside a live session of the same
agent in the same run; and what the asleep listener costs while it waits.

On the real CLIs, offline, against the tests' model stand-ins (which answer at once), with
paneboard's hooks and the policy `--wake resume`:

- **Claude Code** (`woken-claude`): live, a prompt goes into the person's session through its
  inbox socket; asleep (the person typed `/exit`), each prompt starts the session again in the
  background (`claude --bg --resume`), which is then stopped as `claude stop` does before the
  next sample.
- **Codex** (`woken-codex`): live, `codex queue` on the TUI's thread (through Codex's managed
  daemon); asleep (the person typed `/exit` and the daemon unloaded the thread), each prompt is
  one headless turn, `codex exec resume` (its SessionStart hook runs, and starts no listener),
  and the listener is asleep again once the turn has ended.
- **pi** (`woken-pi`): live, its extension's door into the TUI; asleep (the person typed
  `/quit`), one headless turn, `pi -p --session`.
- **Qwen Code** (`woken-qwen`): live, its inbox (the listener's controller grant); asleep (the
  person typed `/quit`), one headless turn, `qwen --resume` (its shell tool under the person's
  `tools.approvalMode`, here `yolo`).

A sample is the time from `paneboard post` starting to the stand-in's log of the model
request whose input carries the prompt. The asleep listener's resident memory (VmRSS) and CPU
time are read from /proc over `IDLE_S` seconds of waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import summary
from paneboard.protocol.posts import Delivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.lock import holder
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import CLIENTS, PINNED, ClaudeSession, free_port
from testing.codex_session import CodexHome, CodexTui, StandIn
from testing.helpers import ScriptServer, cli_env, run_cli, wait_until
from testing.pi_session import PiSession
from testing.qwen_session import QwenSession

NAME = "bob"
IDLE_S = 5.0  # how long the asleep listener's CPU time is read over
TICK = os.sysconf("SC_CLK_TCK")


def clients_bin() -> Path | None:
    """The folder of the real `claude` and `codex`, as the tests find it (None: not there)."""
    found = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    have = all((found / Path(PINNED[key].binary).name).exists() for key in ("claude", "codex"))
    return found if have and shutil.which("tmux") else None


def installed(key: str) -> Path | None:
    """The real CLI *key* (`pi`, `qwen`) as the tests find it, with tmux (None: not there)."""
    binary = PINNED[key].installed()
    return binary if binary is not None and shutil.which("tmux") else None


class Pane:
    """The board home *home* of one run and the pane of the agent *name* measured."""

    def __init__(self, home: Path, name: str = NAME) -> None:
        self.home, self.name = home, name
        self.panes = self.home / "test" / "panes"
        self.panes.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.home, 0o700)
        write_policy(self.home / "test", name, Policy(wake="resume", rate=0))

    def presence(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.panes / f"{self.name}.presence").read_text()))
        except (OSError, ValueError):
            return {}

    def log(self) -> str:
        path = self.panes / f"{self.name}.log"
        return path.read_text()[-3000:] if path.exists() else ""

    def asleep(self, timeout: float = 120) -> int:
        """The pid of the pane's listener once it is asleep."""
        wait_until(lambda: self.presence().get("sleep") == "asleep", "asleep", timeout, self.log)
        return int(self.presence()["pid"])

    def delivered(self, pid: str, timeout: float = 120) -> None:
        def found() -> bool:
            posts = read_posts(self.home / "test" / "log")
            return any(isinstance(p, Delivered) and p.prompt_id == pid for _, p in posts)

        wait_until(found, f"{pid} delivered", timeout, self.log, every=0.05)

    def post(self, body: str) -> tuple[str, float]:
        started = time.time()
        done = run_cli(self.home, "post", "--as", "alice", "--to", self.name, "--", body)
        assert 0 == done.returncode, done.stderr
        return done.stdout.strip(), started

    def holder(self) -> int | None:
        return holder(self.panes / f"{self.name}.lock")

    def stop_listener(self) -> None:
        pid = self.holder()
        if pid is not None and pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            wait_until(lambda: not self.holder(), "listener gone", 15)


def asleep_cost(pid: int) -> dict[str, float]:
    """The asleep listener *pid*'s resident memory, and its CPU time over `IDLE_S` seconds."""
    before = _cpu_ticks(pid)
    time.sleep(IDLE_S)
    ticks = _cpu_ticks(pid) - before
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS:"))
    return {"rss_mib": round(rss / 1024, 1), "cpu_ms_per_s": round(ticks / TICK * 1000 / IDLE_S, 3)}


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def _result(live: list[float], woken: list[float], cost: dict[str, float]) -> dict[str, Any]:
    ms = lambda xs: [round(x * 1000, 1) for x in xs]
    return {
        "live_ms": summary(ms(live)),
        "woken_ms": summary(ms(woken)),
        "samples_ms": {"live": ms(live), "woken": ms(woken)},
        "asleep": cost,
    }


def _reached(records: Callable[[], list[dict[str, Any]]], key: str, pid: str) -> float:
    """When the stand-in logged the model request whose *key* text carries prompt *pid* (at a
    line's start, or after the reminders Qwen Code puts before it)."""
    mark = re.compile(rf"(^|\n|</system-reminder>) ?\[paneboard\] prompt {pid} from")

    def at() -> float | None:
        hits = [r["ts"] for r in records() if mark.search(str(r.get(key) or ""))]
        return float(hits[0]) if hits else None

    return wait_until(at, f"{pid} at the model", 120, every=0.02)


# --- Claude Code ---


def claude(home: Path, samples: int) -> dict[str, Any]:
    bin_dir = clients_bin()
    assert bin_dir is not None
    pane = Pane(home / "pb")
    api = ScriptServer("testing.api_stand_in", free_port(), home / "api.log")
    project = home / "proj"
    (project / ".claude").mkdir(parents=True)
    done = run_cli(pane.home, "hook", "install", "claude", "--project", str(project), "--as", NAME)
    assert 0 == done.returncode, done.stderr
    path = f"{Path(sys.executable).parent}:{bin_dir}:/usr/local/bin:/usr/bin:/bin"
    claude_home = home / "claude-home"
    session = ClaudeSession(bin_dir, claude_home, project, api.port, cli_env(pane.home, PATH=path))
    try:
        session.wait_listener(NAME, pane.home)
        session.type("hello")
        session.wait_transcript('"turn_duration"')
        live = []
        for i in range(samples):
            pid, posted = pane.post(f"live {i}")
            live.append(_reached(api.records, "turn", pid) - posted)
            pane.delivered(pid)
            time.sleep(1.0)  # its turn ends before the next
        session.type("/exit")
        cost = asleep_cost(pane.asleep())
        woken = []
        sid = str(session.registry["sessionId"])
        for i in range(samples):
            pane.asleep()
            pid, posted = pane.post(f"asleep {i}")
            woken.append(_reached(api.records, "turn", pid) - posted)
            pane.delivered(pid)
            _stop_background(bin_dir, claude_home, sid, session, project)
        return _result(live, woken, cost)
    finally:
        pane.stop_listener()
        session.close()
        _end_home(claude_home)
        api.close()


def _background(claude_home: Path, sid: str) -> list[dict[str, Any]]:
    found = []
    for reg in (claude_home / ".claude" / "sessions").glob("*.json"):
        with contextlib.suppress(ValueError, OSError):
            data = json.loads(reg.read_text())
            if data.get("kind") == "bg" and data.get("sessionId") == sid:
                found.append(data)
    return found


def _stop_background(
    bin_dir: Path, claude_home: Path, sid: str, session: ClaudeSession, project: Path
) -> None:
    """`claude stop` the woken background session; its listener falls asleep again."""
    for data in wait_until(lambda: _background(claude_home, sid), "the woken session", 30):
        env = {
            **os.environ,
            "HOME": str(claude_home),
            "ANTHROPIC_API_KEY": "sk-dummy",
            "DISABLE_AUTOUPDATER": "1",
        }
        argv = [str(bin_dir / "claude"), "stop", str(data["jobId"])]
        subprocess.run(argv, env=env, cwd=project, capture_output=True, timeout=60, check=False)
    wait_until(lambda: not _background(claude_home, sid), "the woken session stopped", 60)


def _end_home(home: Path) -> None:
    """End every process whose HOME is *home* (Claude Code's background daemon and its spares,
    started by this run)."""
    wanted = f"HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


# --- Codex ---


def codex(home: Path, samples: int) -> dict[str, Any]:
    bin_dir = clients_bin()
    assert bin_dir is not None
    pane = Pane(home / "pb")
    stand_in = StandIn(home / "model.log", free_port())
    codex_home = CodexHome(home / "codex-home", bin_dir, stand_in.port, unload=2)
    tui: CodexTui | None = None
    try:
        project = (home / "proj").resolve()
        project.mkdir()
        codex_home.trust_project(project)
        args = ("hook", "install", "codex", "--project", str(project), "--trust", "--as", NAME)
        done = run_cli(pane.home, *args, CODEX_HOME=str(codex_home.folder))
        assert 0 == done.returncode, done.stderr
        user = home / "user-home"
        user.mkdir()
        path = f"{Path(sys.executable).parent}:{bin_dir}:/usr/local/bin:/usr/bin:/bin"
        env = {"PATH": path, "HOME": str(user), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        env.update(PANEBOARD_HOME=str(pane.home), PANEBOARD_BOARD="test")
        tui = CodexTui(codex_home, project, env)
        tui.submit(stand_in, "hello")
        wait_until(lambda: (pane.holder() or 0) > 0, "the listener", 30)

        def turns() -> list[dict[str, Any]]:  # not the TUI's title requests
            return [r for r in stand_in.records() if r.get("trigger")]

        live = []
        for i in range(samples):
            pid, posted = pane.post(f"live {i}")
            live.append(_reached(turns, "text", pid) - posted)
            pane.delivered(pid)
            time.sleep(1.0)
        tui.type("/exit")
        cost = asleep_cost(pane.asleep())
        woken = []
        for i in range(samples):
            pane.asleep()
            pid, posted = pane.post(f"asleep {i}")
            woken.append(_reached(turns, "text", pid) - posted)
            pane.delivered(pid)
            time.sleep(1.0)  # the headless turn ends; the listener falls asleep again
        return _result(live, woken, cost)
    finally:
        pane.stop_listener()
        if tui is not None:
            tui.close()
        codex_home.close()
        stand_in.close()


# --- pi and Qwen Code ---


def _rounds(
    pane: Pane,
    records: Callable[[], list[dict[str, Any]]],
    end: Callable[[], None],
    samples: int,
) -> dict[str, Any]:
    """*samples* prompts to the live session, then *end* it (its person quits) and as many to
    the asleep one, each waking a headless turn; post → the model request with the prompt as
    its newest user text (`user`)."""
    live = []
    for i in range(samples):
        pid, posted = pane.post(f"live {i}")
        live.append(_reached(records, "user", pid) - posted)
        pane.delivered(pid)
        time.sleep(1.0)  # its turn ends before the next
    end()
    cost = asleep_cost(pane.asleep())
    woken = []
    for i in range(samples):
        pane.asleep()
        pid, posted = pane.post(f"asleep {i}")
        woken.append(_reached(records, "user", pid) - posted)
        pane.delivered(pid)
        time.sleep(1.0)  # the headless turn ends; the listener falls asleep again
    return _result(live, woken, cost)


def pi(home: Path, samples: int) -> dict[str, Any]:
    binary = installed("pi")
    assert binary is not None
    session = PiSession(home, binary, NAME)
    pane = Pane(session.pb_home)
    try:
        session.tmux.type("hello")
        session.turn("hello")
        return _rounds(pane, session.stand_in.records, lambda: session.tmux.type("/quit"), samples)
    finally:
        pane.stop_listener()
        session.close()


def qwen(home: Path, samples: int) -> dict[str, Any]:
    binary = installed("qwen")
    assert binary is not None
    session = QwenSession(home, binary)
    pane = Pane(session.pb_home, "qwen-hooked")  # the name its hooks are installed as
    try:
        settings = session.qwen_home / "settings.json"
        written = json.loads(settings.read_text())
        settings.write_text(json.dumps({**written, "tools": {"approvalMode": "yolo"}}))
        session.type("hello")
        session.turn("hello")
        wait_until(lambda: (pane.holder() or 0) > 0, "the listener", 30, pane.log)
        return _rounds(pane, session.stand_in.records, lambda: session.type("/quit"), samples)
    finally:
        pane.stop_listener()
        session.close()
