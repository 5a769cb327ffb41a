"""A live pi 0.73.1 TUI in a detached tmux server, offline against the loopback stand-in
(pi_stand_in.py, OpenAI Chat Completions, configured in pi's `models.json`), with a private
HOME and `hook install pi`'s extension in its project.

No pytest here: the fixtures are in test_pi.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.agents.pi import PI
from paneboard.state.panelock import holder
from testing.helpers import wait_until
from testing.sessions import StandIn, TmuxSession, user_records, workspace


class PiSession:
    """pi's TUI with paneboard's extension, its door's registry, and its listener."""

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, "pi", name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.stand_in = StandIn(root, "tests.real.pi_stand_in")
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.env.update(
            XDG_RUNTIME_DIR=str(self.runtime), PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1"
        )
        self.env["PI_TELEMETRY"] = "0"
        agent_dir = root / "home" / ".pi" / "agent"
        agent_dir.mkdir(parents=True)
        provider = {
            "baseUrl": f"http://127.0.0.1:{self.stand_in.port}/v1",
            "api": "openai-completions",
            "apiKey": "stand-in",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "stand-in", "reasoning": False}],
        }
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"pb": provider}}))
        argv = [str(bin_path), "--provider", "pb", "--model", "stand-in"]
        self.tmux = TmuxSession(self.project, argv, self.env)
        self.registry = wait_until(self._registry, "no pi door registry", 60, self.screen)
        self.listener = wait_until(
            lambda: holder(self.lock), f"no listener for {name}", 30, self.screen, every=0.1
        )

    @property
    def lock(self) -> Path:
        return self.pb_home / "test" / "panes" / f"{self.name}.lock"

    def _registry(self) -> dict[str, Any] | None:
        for path in (self.runtime / "paneboard-pi").glob("*.json"):
            try:
                return dict(json.loads(path.read_text()))
            except ValueError:
                continue
        return None

    @property
    def pid(self) -> int:
        return int(self.registry["pid"])

    @property
    def socket(self) -> Path:
        return Path(self.registry["socket"])

    def screen(self) -> str:
        return self.tmux.screen()

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got a request whose newest user text holds *needle*."""
        return self.stand_in.wait_turn(needle, timeout, self.screen)

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The session file's user messages whose text holds *needle*."""
        return user_records(Path(self.registry["sessionFile"]), PI.user_texts, needle)

    def close(self) -> None:
        self.tmux.close()
        self.stand_in.close()
