"""The real agent CLIs as test counterparts: the pinned list (clients.txt), where each is
installed, sessions of Claude Code and Codex.

No pytest here: bench/ uses these too (tests/real/conftest.py holds the fixtures).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from paneboard.state.panes.lock import holder
from testing.helpers import ROOT, Listening, LoadedThread, Tmux, cli_env, wait_until

TOOLS = ROOT / ".ci" / "tools"
CLIENTS = TOOLS / "clients"


class Client(NamedTuple):
    """One line of clients.txt: an agent CLI (or a package one needs), pinned."""

    key: str
    folder: str
    package: str
    version: str
    binary: str
    name: str

    @property
    def path(self) -> Path:
        """Where `make clients` puts its binary."""
        return TOOLS / self.folder / self.binary

    def installed(self) -> Path | None:
        """Its binary, or None where `make clients` has not installed it."""
        return self.path if self.path.exists() else None

    @property
    def missing(self) -> str:
        """Why its tests skip where it is not installed."""
        what = self.name if self.name != "-" else self.package
        return f"{what} {self.version} is not in .ci/tools/{self.folder}: run make clients"


def _read(path: Path) -> dict[str, Client]:
    """The clients of the list at *path*, by key, in its order (a line is its fields, split on
    spaces, the last one whole)."""
    rows = (line.split(None, 5) for line in path.read_text().splitlines())
    return {row[0]: Client(*row) for row in rows if row and not row[0].startswith("#")}


PINNED = _read(Path(__file__).with_name("clients.txt"))
CLIS = tuple(c for c in PINNED.values() if c.folder == "clients")  # the clients_bin fixture's


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def offline_codex_thread(codex_home: Path, cwd: Path) -> tuple[str, Path]:
    """A Codex thread that `codex queue` accepts, with no login, model or daemon; returns
    (id, rollout)."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "localdead"\n[model_providers.localdead]\nname = "localdead"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
        'wire_api = "responses"\n[features]\nplugins = false\nremote_plugin = false\napps = false\n'
    )
    tid = str(uuid.uuid4())
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    day = codex_home / "sessions" / time.strftime("%Y/%m/%d", time.gmtime())
    day.mkdir(parents=True, exist_ok=True)
    rollout = day / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', time.gmtime())}-{tid}.jsonl"
    meta = {
        "id": tid,
        "timestamp": now,
        "cwd": str(cwd),
        "originator": "codex_cli_rs",
        "cli_version": PINNED["codex"].version,
        "source": "cli",
        "model_provider": "localdead",
    }
    rollout.write_text(
        json.dumps({"timestamp": now, "type": "session_meta", "payload": meta}) + "\n"
    )
    return tid, rollout


def codex_env(home: Path, codex_home: Path, bin_dir: Path) -> dict[str, str]:
    """The command line's environment with CODEX_HOME and the real CLIs on PATH."""
    return cli_env(home, CODEX_HOME=str(codex_home), PATH=f"{bin_dir}:{os.environ['PATH']}")


@contextlib.contextmanager
def queue_listener(
    home: Path, folder: Path, bin_dir: Path
) -> Iterator[tuple[Path, str, Listening]]:
    """`listen --door codex-queue` as codex-bob on an offline thread whose writer lock is held
    (the door's check that a Codex process has it loaded) but that no Codex runs; yields
    (CODEX_HOME, the thread's id, the listener)."""
    codex_home = folder / "codex"
    tid, _ = offline_codex_thread(codex_home, folder)
    env = codex_env(home, codex_home, bin_dir)
    args = ("--door", "codex-queue", "--thread", tid, "--door-timeout", "60")
    with LoadedThread(codex_home, tid), Listening(home, "codex-bob", *args, env=env) as bob:
        yield codex_home, tid, bob


class ClaudeSession(Tmux):
    """An interactive Claude Code session in a detached tmux server, offline against the
    stand-in."""

    def __init__(
        self,
        bin_dir: Path,
        home: Path,
        project: Path,
        port: int,
        env: dict[str, str],
        *args: str,
    ) -> None:
        """*args* go to `claude` (`--resume ID`: a person reopening a session)."""
        self.home, self.project = home, project.resolve()
        home.mkdir(parents=True, exist_ok=True)
        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "lastOnboardingVersion": PINNED["claude"].version,
                    "theme": "dark",
                    "customApiKeyResponses": {"approved": ["sk-dummy"], "rejected": []},
                    "projects": {
                        str(self.project): {
                            "hasTrustDialogAccepted": True,
                            "allowedTools": [],
                            "hasCompletedProjectOnboarding": True,
                        }
                    },
                }
            )
        )
        env = {
            **env,
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-dummy",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }
        super().__init__(self.project, [str(bin_dir / "claude"), *args], env, hold=True)
        what = "a Claude Code session registry"
        self.registry = wait_until(self._registry, what, 60, self.screen, every=0.2)

    def _registry(self) -> dict[str, object] | None:
        for reg in (self.home / ".claude" / "sessions").glob("*.json"):
            try:
                data = json.loads(reg.read_text())
            except ValueError:
                continue
            if data.get("messagingSocketPath") and data.get("kind") != "bg":  # not a woken one
                return dict(data)
        return None

    def wait_listener(self, agent: str, pb_home: Path) -> int:
        """The pid of the listener that holds *agent*'s pane lock, once one does."""
        lock = pb_home / "test" / "panes" / f"{agent}.lock"
        return wait_until(
            lambda: _pid(holder(lock)), f"{agent}'s listener", 60, self.screen, every=0.1
        )

    def transcript(self) -> str:
        """The session's transcript (found by session id: the folder name mangles the project
        path)."""
        found = list(
            (self.home / ".claude" / "projects").glob(f"*/{self.registry['sessionId']}.jsonl")
        )
        return found[0].read_text() if found else ""

    def wait_transcript(self, needle: str, timeout: float = 90, count: int = 1) -> str:
        def enough() -> str | None:
            text = self.transcript()
            return text if text.count(needle) >= count else None

        what = f"{needle!r} in the transcript"
        return wait_until(enough, what, timeout, self.screen, every=0.25)

    def wait_user_turns(self, needle: str, timeout: float = 90) -> list[dict[str, Any]]:
        """The transcript's user turns carrying *needle*, once there is one (not queue lines)."""

        def turns() -> list[dict[str, Any]]:
            return [
                record
                for record in map(json.loads, self.transcript().splitlines())
                if record.get("type") == "user" and needle in json.dumps(record)
            ]

        what = f"a user turn with {needle!r}"
        return wait_until(turns, what, timeout, self.screen, every=0.25)


def _pid(held: int | None) -> int | None:
    """A lock holder's pid once it has written it (-1: held, the pid not written yet)."""
    return held if held is not None and held > 0 else None
