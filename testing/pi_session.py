"""A live pi 0.73.1 TUI in a detached tmux server, offline against the loopback stand-in
(pi_stand_in.py, OpenAI Chat Completions, configured in pi's `models.json`), with a private
HOME and `hook install pi`'s extension in its project.

No pytest here: the fixtures are in tests/real/test_pi.py (and the bench meets it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.agents.pi import PI
from testing.sessions import DoorSession, StandIn, user_records


class PiSession(DoorSession):
    """pi's TUI with paneboard's extension, its door's registry, and its listener."""

    stand_in: StandIn

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        super().__init__(root, bin_path, "pi", name, "testing.pi_stand_in")
        self.env.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1")
        self.env["PI_TELEMETRY"] = "0"
        pi_agent_dir(root / "home", self.stand_in.port)
        argv = [str(bin_path), "--provider", "pb", "--model", "stand-in"]
        self.open(argv, ("no pi door registry", 60), 30)

    def registries(self) -> Path:
        return self.runtime / "paneboard-pi"

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The session file's user messages whose text holds *needle*."""
        return user_records(Path(self.registry["sessionFile"]), PI.user_texts, needle)


def pi_agent_dir(home: Path, port: int) -> Path:
    """pi's agent folder under *home*, made, with a provider `pb` whose one model `stand-in` is
    the stand-in on *port* (pi's `models.json`); returns the folder."""
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True)
    provider = {
        "baseUrl": f"http://127.0.0.1:{port}/v1",
        "api": "openai-completions",
        "apiKey": "stand-in",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "stand-in", "reasoning": False}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"pb": provider}}))
    return agent_dir
