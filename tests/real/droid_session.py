"""A live Factory Droid 0.225.2 TUI in a detached tmux server, offline against the loopback
stand-in (droid_stand_in.py, OpenAI Chat Completions, a BYOK custom model in Droid's
settings), with a private HOME and `hook install droid`'s hooks in its project.

Droid's platform package holds the binary itself, and that is what is pinned and run
(testing/clients.txt says why). Offline, Droid asks for a login at
start unless FACTORY_AIRGAP_ENABLED=true; the project is trusted in its settings beforehand.

No pytest here: the fixtures are in test_droid.py.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from paneboard.agents.droid import DROID
from testing.clients import PINNED
from testing.sessions import StandIn, TmuxSession, workspace

MODEL = "custom:Stand-In-0"  # Droid's id for the first custom model, named "Stand In"


def droid_bin() -> Path | None:
    """The pinned Droid binary (PANEBOARD_DROID_BIN overrides); None (the tests skip) where
    `make clients` has not installed it."""
    given = os.environ.get("PANEBOARD_DROID_BIN")
    if given:
        return Path(given)
    return PINNED["droid"].installed()


class DroidStandIn(StandIn):
    """Droid's stand-in on a free loopback port; its log is one JSON line per model request."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder, "tests.real.droid_stand_in")

    def turns_with(self, needle: str) -> list[float]:
        """The times of the turns' requests (those offering tools: Droid's title requests
        offer none) whose newest user text holds *needle*."""
        return [r["ts"] for r in self.records() if needle in r["user"] and r["body"].get("tools")]


class DroidSession:
    """Droid's TUI in auto-high autonomy (a turn may run `paneboard answer` with no question)."""

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, "droid", name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.stand_in = DroidStandIn(root)
        self.env["FACTORY_AIRGAP_ENABLED"] = "true"
        self.factory = root / "home" / ".factory"
        self.factory.mkdir(parents=True)
        model = {
            "model": "stand-in",
            "displayName": "Stand In",
            "baseUrl": f"http://127.0.0.1:{self.stand_in.port}/v1",
            "apiKey": "stand-in",
            "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096,
        }
        trusted = {str(self.project): {"trustedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z")}}
        settings = {
            "customModels": [model],
            "cloudSessionSync": False,
            "logoAnimation": "off",
            "trustedFolders": trusted,
        }
        (self.factory / "settings.json").write_text(json.dumps(settings))
        self.tmux = TmuxSession(self.project, [str(bin_path), "--auto", "high"], self.env)
        self.tmux.wait_screen("for help", 60)

    def screen(self) -> str:
        return self.tmux.screen()

    def type(self, text: str) -> None:
        self.tmux.type(text)

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got a turn's request whose newest user text holds *needle*."""
        return self.stand_in.wait_turn(needle, timeout, self.screen)

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The session files' user messages whose text holds *needle*."""
        found = []
        for path in (self.factory / "sessions").glob("*/*.jsonl"):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if any(needle in t for t in DROID.user_texts(record)):
                    found.append(record)
        return found

    def close(self) -> None:
        self.tmux.close()
        self.stand_in.close()
