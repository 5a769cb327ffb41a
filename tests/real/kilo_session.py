"""A live Kilo Code 7.7.9 TUI in a detached tmux server, offline against the loopback stand-in
(kilo_stand_in.py, OpenAI Chat Completions, a provider of Kilo Code's global `kilo.json`), with
a private HOME and `hook install kilo`'s plugin in its project.

No pytest here: the fixtures are in test_kilo.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.state.panelock import holder
from testing.helpers import wait_until
from testing.sessions import StandIn, TmuxSession, workspace

READY = "Ask anything"  # the prompt box, once the TUI is up


def kilo_config(home: Path, port: int) -> None:
    """Kilo Code's global config under *home*: the stand-in as its one provider and model."""
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
    folder = home / ".config" / "kilo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kilo.json").write_text(json.dumps(config))


class KiloSession:
    """Kilo Code's TUI with paneboard's plugin, its door's registry, and its listener (which
    starts with the person's first turn)."""

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, "kilo", name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.stand_in = StandIn(root, "tests.real.kilo_stand_in")
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        kilo_config(root / "home", self.stand_in.port)
        self.env.update(
            XDG_RUNTIME_DIR=str(self.runtime),
            KILO_DISABLE_AUTOUPDATE="1",
            KILO_DISABLE_MODELS_FETCH="1",
            KILO_DISABLE_LSP_DOWNLOAD="1",
            KILO_DISABLE_SHARE="1",
        )
        self.start()

    def start(self) -> None:
        """The TUI, its door up, and a first turn typed: the session the listener serves."""
        self.tmux = TmuxSession(self.project, [str(self.bin)], self.env)
        self.tmux.wait_screen(READY, 120)
        self.registry = wait_until(self._registry, "no Kilo Code door registry", 30, self.screen)
        self.tmux.type("hello")
        self.listener = wait_until(
            lambda: holder(self.lock), f"no listener for {self.name}", 60, self.screen, every=0.1
        )

    @property
    def lock(self) -> Path:
        return self.pb_home / "test" / "panes" / f"{self.name}.lock"

    def _registry(self) -> dict[str, Any] | None:
        for path in (self.runtime / "paneboard-kilo").glob("*.json"):
            try:
                record = dict(json.loads(path.read_text()))
            except ValueError:
                continue
            if record["pid"] in self.tmux.processes():
                return record
        return None

    @property
    def pid(self) -> int:
        return int(self.registry["pid"])

    @property
    def socket(self) -> Path:
        return Path(self.registry["socket"])

    def screen(self) -> str:
        return self.tmux.screen()

    def turns_with(self, needle: str) -> list[float]:
        """The times of the session's turns (requests offering the tools) whose newest user text
        holds *needle*: not the request for the session's title, which quotes the first ones."""
        return [
            r["ts"]
            for r in self.stand_in.requests()
            if needle in r["user"] and r["body"].get("tools")
        ]

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got the turn whose newest user text holds *needle*."""
        what = f"no turn with {needle!r}"
        return float(
            wait_until(lambda: (self.turns_with(needle) or [0.0])[0], what, timeout, self.screen)
        )

    def close(self) -> None:
        self.tmux.close()
        self.stand_in.close()
