"""A live interactive Codex TUI (codex-cli 0.169.0) in a detached tmux server, offline against
the loopback Responses-API stand-in of testing/codex_stand_in.py.

`CodexHome` is one private `CODEX_HOME`: a config that keeps Codex off the network, never asks,
and (given `unload`) unloads an idle thread after `unload` seconds once no TUI is attached
(`thread_unload_delay_secs`). The first TUI starts Codex's managed app-server daemon, which
copies about 400 MB into `packages/`, runs every thread and every hook of that home (with the
first TUI's environment) and outlives the TUIs; `close()` stops it and deletes the home.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from testing.helpers import ScriptServer, Tmux, wait_until

CONFIG = """model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
{unload}
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "MOCK_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[tui]
show_tooltips = false

[features]
plugins = false
remote_plugin = false
apps = false
"""


class StandIn(ScriptServer):
    """The Responses-API stand-in on a free loopback port, logging each request and answer."""

    def __init__(self, log: Path, port: int) -> None:
        super().__init__("testing.codex_stand_in", port, log)

    def requests(self, needle: str) -> list[dict[str, Any]]:
        """The requests of turns (not titles) whose newest user text holds *needle*."""
        return [r for r in self.records() if r.get("trigger") and needle in (r.get("text") or "")]

    def answered(self, needle: str) -> list[dict[str, Any]]:
        """The answers sent in turns (not titles) to a newest user text holding *needle*."""
        return [r for r in self.records() if r.get("trigger") and needle in (r.get("done") or "")]

    def wait_request(self, needle: str, timeout: float = 30) -> dict[str, Any]:
        what = f"a request with {needle!r}"
        found = wait_until(lambda: self.requests(needle), what, timeout, self.tail, every=0.05)
        return dict(found[0])

    def tail(self) -> str:
        return "\n".join(json.dumps(r)[:300] for r in self.records()[-8:])


class CodexHome:
    """A private CODEX_HOME with the offline config; `close()` stops its daemon and deletes it."""

    def __init__(self, folder: Path, bin_dir: Path, port: int, unload: int | None = None) -> None:
        self.folder, self.codex = folder, str(bin_dir / "codex")
        folder.mkdir(parents=True)
        self.config = folder / "config.toml"
        delay = "" if unload is None else f"thread_unload_delay_secs = {unload}\n"
        self.config.write_text(CONFIG.format(port=port, unload=delay))

    def trust_project(self, project: Path) -> None:
        """What the person does once per project (Codex's own trust screen, answered ahead)."""
        with self.config.open("a") as f:
            f.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')

    def rollout(self, thread: str) -> Path:
        [found] = self.folder.glob(f"sessions/*/*/*/rollout-*-{thread}.jsonl")
        return found

    def threads(self) -> set[str]:
        return {p.stem[-36:] for p in self.folder.glob("sessions/*/*/*/rollout-*.jsonl")}

    def daemon_pids(self) -> list[int]:
        """The managed daemon's and its pid-update-loop's pids, if they are this home's."""
        pids = []
        for name in ("daemon.pid", "daemon-updater.pid"):
            try:
                pid = int(json.loads((self.folder / "app-server-daemon" / name).read_text())["pid"])
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except (OSError, ValueError, KeyError):
                continue
            if f"{self.folder}/packages/app-server-daemon/".encode() in cmdline:
                pids.append(pid)
        return pids

    def close(self) -> None:
        """Stop the daemon (its own stop, then the pids it recorded), then delete the home and
        the daemon's socket in the system's temporary folder."""
        pids = self.daemon_pids()
        sockets = [p for pid in pids for p in _open_files(pid) if "/codex-daemon-" in p]
        managed = self.folder / "packages" / "app-server-daemon" / "current" / "bin" / "codex"
        env = {"PATH": "/usr/bin:/bin", "CODEX_HOME": str(self.folder)}
        if managed.exists():
            argv = [str(managed), "app-server", "daemon", "stop"]
            subprocess.run(argv, env=env, capture_output=True, timeout=30, check=False)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)
        for path in sockets:  # the daemon holds `<hash>.lock` open; `<hash>` is its socket
            for stale in (Path(path), Path(path.removesuffix(".lock"))):
                stale.unlink(missing_ok=True)


class CodexTui(Tmux):
    """`codex [ARGS]` in PROJECT, in a detached tmux server of its own, up to its composer."""

    pause = 0.5

    def __init__(self, home: CodexHome, project: Path, env: dict[str, str], *args: str) -> None:
        env = {**env, "CODEX_HOME": str(home.folder), "MOCK_OPENAI_API_KEY": "sk-dummy"}
        super().__init__(project, [home.codex, *args], env, hold=True)
        wait_until(self._composer, "the Codex composer", 30, self.screen, every=0.05)
        time.sleep(1)  # an Enter typed in the composer's first moments can be lost

    def _composer(self) -> bool:
        screen = self.screen()
        if "Hooks need review" in screen:
            raise AssertionError(f"Codex asks to review hooks:\n{screen}")
        return "Ask Codex to do anything" in screen

    def submit(self, stand_in: StandIn, text: str) -> dict[str, Any]:
        """Type a prompt; return the stand-in's record of its request (Enter again if lost)."""
        self.type(text)
        for _ in range(3):
            try:
                return stand_in.wait_request(text, timeout=5)
            except AssertionError:
                self.type("")
        return stand_in.wait_request(text, timeout=5)


def _open_files(pid: int) -> list[str]:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for fd in fds:
        with contextlib.suppress(OSError):
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return out
