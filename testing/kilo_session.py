"""A live Kilo Code 7.7.9 TUI in a detached tmux server, offline against the loopback stand-in
(kilo_stand_in.py, OpenAI Chat Completions, a provider of Kilo Code's global `kilo.json`), with
a private HOME and `hook install kilo`'s plugin in its project.

No pytest here: the fixtures are in test_kilo.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from testing.helpers import wait_until
from testing.sessions import DoorSession, StandIn, opencode_config, opencode_env

READY = "Ask anything"  # the prompt box, once the TUI is up


def kilo_config(home: Path, port: int) -> None:
    """Kilo Code's global config under *home*: the stand-in as its one provider and model."""
    folder = home / ".config" / "kilo"
    folder.mkdir(parents=True, exist_ok=True)
    opencode_config(folder / "kilo.json", port)


class KiloSession(DoorSession):
    """Kilo Code's TUI with paneboard's plugin, its door's registry, and its listener (which
    starts with the person's first turn)."""

    stand_in: StandIn

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        super().__init__(root, bin_path, "kilo", name, "testing.kilo_stand_in")
        kilo_config(root / "home", self.stand_in.port)
        self.env.update(opencode_env("KILO"))
        self.start()

    def start(self) -> None:
        """The TUI, its door up, and a first turn typed: the session the listener serves."""
        registry = ("no Kilo Code door registry", 30)
        self.open([str(self.bin)], registry, 60, ready=(READY, 120), typed="hello")

    def registries(self) -> Path:
        return self.runtime / "paneboard-kilo"

    def ours(self, record: dict[str, Any]) -> bool:
        return record["pid"] in self.tmux.processes()

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
