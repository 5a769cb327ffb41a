"""Live sessions of agent CLIs in detached tmux servers, offline, against a model stand-in
(model_stand_in.py, or an agent's own), each with a private HOME: Gemini CLI, Copilot CLI and
OpenCode here, and `DoorSession`, the base of those whose door is in a registry."""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paneboard.state.panes.lock import holder
from testing.clients import PINNED, TOOLS, free_port
from testing.helpers import ScriptServer, Tmux, run_cli, wait_until


class StandIn(ScriptServer):
    """A model stand-in (the script *module*) on a free loopback port; its log is one JSON line
    per model request."""

    def __init__(self, folder: Path, module: str = "testing.model_stand_in") -> None:
        super().__init__(module, free_port(), folder / "model.log")

    def contexts(self, needle: str) -> int:
        """How many model requests carry *needle* anywhere (the session-start context line)."""
        return sum(needle in json.dumps(r["body"]) for r in self.records())

    def requests(self) -> list[dict[str, Any]]:
        """The requests logged so far (a line still being written is left for the next look)."""
        return self.records()

    def turns_with(self, needle: str) -> list[float]:
        """The times of the model requests whose newest user text holds *needle*."""
        return [r["ts"] for r in self.requests() if needle in r["user"]]

    def wait_turn(self, needle: str, timeout: float = 60, show: Callable[[], str] = str) -> float:
        what = f"no model request with {needle!r}"
        return float(wait_until(lambda: (self.turns_with(needle) or [0.0])[0], what, timeout, show))


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class TmuxSession(Tmux):
    """A program in a detached private tmux server; the test plays its person at the keyboard."""

    def wait_screen(self, text: str, timeout: float = 60) -> None:
        wait_until(lambda: text in self.screen(), f"{text!r} not on screen", timeout, self.screen)

    def processes(self) -> list[int]:
        return [self.pane_pid, *_descendants(self.pane_pid)]

    def close(self) -> None:
        """End the tmux server and every process of the pane (some agents outlive SIGHUP)."""
        procs = self.processes()
        super().close()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in procs:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and any(running(p) for p in procs):
                time.sleep(0.05)


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def base_env(home: Path, bin_dir: Path, pb_home: Path) -> dict[str, str]:
    """A private HOME and XDG folders, paneboard's home and board, node and the CLIs on PATH."""
    node = Path(shutil.which("node") or "/usr/bin/node").parent
    path = f"{Path(sys.executable).parent}:{bin_dir}:{node}:/usr/local/bin:/usr/bin:/bin"
    env = {
        "HOME": str(home),
        "PATH": path,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PANEBOARD_HOME": str(pb_home),
        "PANEBOARD_BOARD": "test",
    }
    for key in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


def post(pb_home: Path, to: str, *args: str) -> str:
    """`paneboard post` from another process, as alice; returns the id."""
    from testing.helpers import run_cli

    done = run_cli(pb_home, "post", "--as", "alice", "--to", to, *args)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


def status(pb_home: Path, prompt: str, agent: str) -> dict[str, Any]:
    from testing.helpers import run_cli

    return dict(
        json.loads(run_cli(pb_home, "status", prompt, "--json").stdout)["recipients"][agent]
    )


def install(pb_home: Path, agent: str, project: Path, name: str) -> str:
    """`hook install AGENT --as NAME --home … --board test`; returns what it printed."""
    from testing.helpers import run_cli

    done = run_cli(
        pb_home,
        "hook",
        "install",
        agent,
        "--project",
        str(project),
        "--as",
        name,
        "--home",
        str(pb_home),
        "--board",
        "test",
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout


def stage(pb_home: Path, prompt: str, agent: str, third: str) -> tuple[str, str, str]:
    """*agent*'s stage of *prompt*, its door, and its *third* field (`source`, `outcome`)."""
    got = status(pb_home, prompt, agent)
    return got["stage"], got.get("door", ""), got.get(third) or ""


def one_shot(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float = 120,
    stdin: int | None = subprocess.DEVNULL,
) -> None:
    """An agent's one-shot run *argv* in *cwd* (its input *stdin*; None: the test's): it exits 0
    within *timeout* seconds."""
    done = subprocess.run(
        argv, cwd=cwd, env=env, stdin=stdin, capture_output=True, timeout=timeout, check=False
    )
    assert 0 == done.returncode, done.stderr


def user_records(
    path: Path | None, texts: Callable[[dict[str, Any]], list[str]], needle: str
) -> list[dict[str, Any]]:
    """The records of the conversation file *path* (none while there is no file) whose user
    texts, as the agent reads them (*texts*), hold *needle*."""
    if path is None or not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if any(needle in t for t in texts(r))]


def workspace(
    root: Path, bin_dir: Path, agent: str, name: str
) -> tuple[Path, Path, str, dict[str, str]]:
    """A live session's paneboard home, its project with paneboard's hooks for *agent* installed
    as *name* (and what `hook install` printed), and the environment of a private HOME."""
    pb_home, project = root / "pb", root / "proj"
    pb_home.mkdir(mode=0o700, parents=True)
    project.mkdir()
    installed = install(pb_home, agent, project, name)
    return pb_home, project, installed, base_env(root / "home", bin_dir, pb_home)


class DoorSession:
    """One agent CLI's live session whose door is in a registry the agent's process writes: the
    project with paneboard's hooks for *agent* as *name*, a private HOME and
    ``XDG_RUNTIME_DIR``, the model stand-in *stand_in* (a module; none: the agent asks no
    model), the CLI in tmux (`open`). A subclass names where the registry is (`registries`),
    which record is its own (`ours`), the record's socket field (`socket_field`), and the field
    of a prompt's status `stage` gives besides the stage and the door (`third`)."""

    socket_field = "socket"
    third = "outcome"

    def __init__(
        self, root: Path, bin_path: Path, agent: str, name: str, stand_in: str = ""
    ) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, agent, name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.stand_in = StandIn(root, stand_in) if stand_in else None
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.env["XDG_RUNTIME_DIR"] = str(self.runtime)

    def open(
        self,
        argv: list[str],
        registry: tuple[str, float],
        listener: float,
        ready: tuple[str, float] | None = None,
        typed: str = "",
        env: dict[str, str] | None = None,
    ) -> None:
        """The CLI *argv* in tmux (in *env*, else the session's): its *ready* text on screen
        (within its seconds), its registry (*registry*: what a timeout says, and its seconds),
        *typed* typed, and the session's listener (within *listener* seconds)."""
        self.tmux = TmuxSession(self.project, argv, self.env if env is None else env)
        if ready:
            self.tmux.wait_screen(*ready)
        what, wait = registry
        self.registry: dict[str, Any] = wait_until(self._registry, what, wait, self.screen)
        if typed:
            self.tmux.type(typed)
        self.listener = wait_until(
            lambda: holder(self.lock),
            f"no listener for {self.name}",
            listener,
            self.screen,
            every=0.1,
        )

    def registries(self) -> Path:
        """The folder of the registry's records (one JSON file a process)."""
        raise NotImplementedError

    def ours(self, record: dict[str, Any]) -> bool:
        """Whether *record* is this session's."""
        return True

    def _registry(self) -> dict[str, Any] | None:
        for path in self.registries().glob("*.json"):
            try:
                record = dict(json.loads(path.read_text()))
            except ValueError:
                continue
            if self.ours(record):
                return record
        return None

    @property
    def lock(self) -> Path:
        return self.pb_home / "test" / "panes" / f"{self.name}.lock"

    @property
    def pid(self) -> int:
        return int(self.registry["pid"])

    @property
    def socket(self) -> Path:
        return Path(self.registry[self.socket_field])

    def screen(self) -> str:
        return self.tmux.screen()

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got a request whose newest user text holds *needle*."""
        assert self.stand_in is not None
        return self.stand_in.wait_turn(needle, timeout, self.screen)

    def stage(self, prompt: str) -> tuple[str, str, str]:
        """The session's stage of *prompt*, its door, and its `third` field."""
        return stage(self.pb_home, prompt, self.name, self.third)

    def reached(self, prompt: str, stage: str, timeout: float = 30) -> None:
        """Wait until the session's stage of *prompt* is *stage*."""
        what = f"{prompt} not {stage}"
        wait_until(lambda: self.stage(prompt)[0] == stage, what, timeout, self.screen, every=0.1)

    def round_trip(self, wait: float = 60) -> str:
        """A prompt whose turn runs its `paneboard answer`; `wait` (for *wait* seconds) prints
        the answer. The prompt."""
        prompt = post(self.pb_home, self.name, "what is six times seven?\nMOCK-ANSWER: forty-two")
        done = run_cli(self.pb_home, "wait", prompt, "--timeout", f"{wait:g}", timeout=wait + 30)
        assert (0, "forty-two\n") == (done.returncode, done.stdout), done.stderr + self.screen()
        return prompt

    def during_a_long_turn(self) -> tuple[str, str, float]:
        """A long turn (the stand-in's three seconds) running, a prompt posted: it is delivered
        within 2.5 s. The long turn's prompt, the one posted during it, and when the long turn
        reached the model."""
        busy = post(self.pb_home, self.name, "STAND-IN-SLOW-3 a long turn")
        started = self.turn(busy)
        queued = post(self.pb_home, self.name, "after the long turn")
        self.reached(queued, "delivered", 2.5)
        return busy, queued, started

    def time_to_model(self, agent: str, idle: Callable[[str], object]) -> list[str]:
        """Eight prompts to the idle session, one at a time, each awaited by *idle* (its turn
        over); prints how long each took to reach the model (*agent* names the line). The
        prompts."""
        times, ids = [], []
        for n in range(8):
            t0 = time.time()
            ids.append(post(self.pb_home, self.name, f"timed {n}"))
            times.append(self.turn(ids[-1]) - t0)
            idle(ids[-1])
        print(f"{agent}: post -> model: median {statistics.median(times):.3f} s of {len(times)}")
        return ids

    def unserved(self, text: str = "nobody is there yet") -> str:
        """A prompt posted while no session serves it: a second later it is still `posted`."""
        prompt = post(self.pb_home, self.name, text)
        time.sleep(1)
        assert "posted" == self.stage(prompt)[0]
        return prompt

    def crash(self, title: str) -> tuple[int, Path]:
        """Kill the agent (*title*) as a crash does (nothing removes its socket or registry) and
        its tmux; its listener exits. The agent's pid and socket."""
        pid, socket, listener = self.pid, self.socket, self.listener
        os.kill(pid, signal.SIGKILL)
        self.tmux.close()
        wait_until(lambda: not running(listener), f"the listener outlived {title}", 15)
        # and whichever listener holds the pane now (a turn's end may have started another)
        wait_until(lambda: not holder(self.lock), f"a listener outlived {title}", 15)
        return pid, socket

    def post_as(self, sender: str, text: str) -> str:
        """`paneboard post` to the session as *sender* (paneboard holds a sender's 31st prompt
        within a minute, and alice posts the other tests' prompts); returns the id."""
        done = run_cli(self.pb_home, "post", "--as", sender, "--to", self.name, text)
        assert 0 == done.returncode, done.stderr
        return str(done.stdout.strip())

    def close(self) -> None:
        self.tmux.close()
        if self.stand_in:
            self.stand_in.close()


class AgentSession:
    """One agent CLI's live session: project, private HOME, stand-in, tmux."""

    def __init__(self, root: Path, bin_dir: Path, agent: str, name: str) -> None:
        self.root, self.bin_dir, self.name, self.agent = root, bin_dir, name, agent
        self.pb_home, self.project, self.installed, self.env = workspace(root, bin_dir, agent, name)
        self.stand_in = StandIn(root)
        self.tmux: TmuxSession | None = None

    def start(self, argv: list[str], ready: str, timeout: float = 90) -> None:
        self.tmux = TmuxSession(self.project, argv, self.env)
        self.tmux.wait_screen(ready, timeout)

    def screen(self) -> str:
        return self.tmux.screen() if self.tmux else ""

    def type(self, text: str) -> None:
        assert self.tmux is not None
        self.tmux.type(text)

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got a request whose newest user text holds *needle*."""
        return self.stand_in.wait_turn(needle, timeout, self.screen)

    def contexts(self, needle: str) -> int:
        """How many model requests carry *needle* anywhere (the session-start context line)."""
        return self.stand_in.contexts(needle)

    def close(self) -> None:
        if self.tmux:
            self.tmux.close()
        self.stand_in.close()


class GeminiSession(AgentSession):
    """Gemini CLI 0.61.0's TUI: API key auth against the stand-in, no first-run screens."""

    def __init__(self, root: Path, bin_dir: Path, name: str) -> None:
        super().__init__(root, bin_dir, "gemini", name)
        settings = {
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": False},
            },
            "ide": {"enabled": False, "hasSeenNudge": True},
            "ui": {"hideBanner": True, "hideTips": True, "theme": "Default"},
            "model": {"name": "gemini-2.5-flash"},
        }
        (root / "home" / ".gemini").mkdir(parents=True)
        (root / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
        self.env.update(
            GEMINI_API_KEY="stand-in",
            GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{self.stand_in.port}",
        )
        self.start([str(bin_dir / "gemini")], "Type your message")


class CopilotSession(AgentSession):
    """Copilot CLI 1.0.102's TUI: its own-key provider is the stand-in; the project is trusted."""

    def __init__(self, root: Path, bin_dir: Path, name: str) -> None:
        super().__init__(root, bin_dir, "copilot", name)
        (root / "home" / ".copilot").mkdir(parents=True)
        (root / "home" / ".copilot" / "config.json").write_text(
            json.dumps({"trustedFolders": [str(self.project)]})
        )
        self.env.update(
            COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{self.stand_in.port}/v1",
            COPILOT_PROVIDER_TYPE="openai",
            COPILOT_PROVIDER_API_KEY="stand-in",
            COPILOT_MODEL="gpt-4.1",
        )
        self.start(
            [str(bin_dir / "copilot"), "--no-auto-update", "--disable-client-telemetry"],
            "/ commands",
        )


def opencode_plugin_deps() -> Path | None:
    """The folder holding `@opencode-ai/plugin` (`make clients` installs it there), which
    OpenCode would otherwise `npm install` at every first start; None where it is missing."""
    plugin = PINNED["opencode-plugin"]
    return TOOLS / plugin.folder if plugin.installed() else None


def opencode_config(path: Path, port: int) -> None:
    """OpenCode's config (or a fork's: Kilo Code's) at *path*: the stand-in on *port* as its one
    provider and model, no updates, no sharing."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "stand-in",
        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "stand-in"},
        "models": {"stand-in": {"name": "stand-in", "limit": {"context": 128000, "output": 4096}}},
    }
    config = {
        "autoupdate": False,
        "share": "disabled",
        "model": "pb/stand-in",
        "small_model": "pb/stand-in",
        "provider": {"pb": provider},
    }
    path.write_text(json.dumps(config))


def opencode_env(prefix: str) -> dict[str, str]:
    """What OpenCode (its variables' *prefix* ``OPENCODE``; a fork's, its own) must not do
    offline: update, fetch models, download language servers, share."""
    return {
        f"{prefix}_DISABLE_{what}": "1"
        for what in ("AUTOUPDATE", "MODELS_FETCH", "LSP_DOWNLOAD", "SHARE")
    }


class OpenCodeSession(AgentSession):
    """OpenCode 1.18.33's TUI: OpenAI-compatible provider at the stand-in; plugin deps in place."""

    def __init__(self, root: Path, bin_dir: Path, name: str, deps: Path) -> None:
        super().__init__(root, bin_dir, "opencode", name)
        config = Path(self.env["XDG_CONFIG_HOME"]) / "opencode"
        config.mkdir(parents=True)
        for folder in (config, self.project / ".opencode"):
            for name_ in ("package.json", "package-lock.json"):
                shutil.copy(deps / name_, folder / name_)
            shutil.copytree(deps / "node_modules", folder / "node_modules", symlinks=True)
        opencode_config(config / "opencode.json", self.stand_in.port)
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.env.update(XDG_RUNTIME_DIR=str(self.runtime), **opencode_env("OPENCODE"))
        self.start([str(bin_dir / "opencode")], "Ask anything")
