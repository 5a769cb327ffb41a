"""One module per agent kind: its hook files and their install, its hook input, its door and
admission check, its `seen` source, its doctor checks, its session-start context.

Each module makes one `Agent` (agents/base.py); `AGENTS` lists them by kind, in the order
`doctor` and the help show them. Adding an agent is one module here and a line below
(docs/developers.md, "Adding an agent").
"""

from __future__ import annotations

from paneboard.agents.base import (
    Agent,
    Change,
    DoctorRequest,
    DoorRequest,
    ListenOption,
    Setup,
    Spawned,
    SpawnRequest,
    WakeRequest,
)
from paneboard.agents.claude import CLAUDE
from paneboard.agents.codex import CODEX
from paneboard.agents.copilot import COPILOT
from paneboard.agents.droid import DROID
from paneboard.agents.gemini import GEMINI
from paneboard.agents.hermes import HERMES
from paneboard.agents.kilo import KILO
from paneboard.agents.opencode import OPENCODE
from paneboard.agents.pi import PI
from paneboard.agents.qoder import QODER
from paneboard.agents.qwen import QWEN
from paneboard.protocol.errors import BadInput
from paneboard.state.health import Check

_ALL = (CLAUDE, CODEX, GEMINI, COPILOT, OPENCODE, QWEN, PI, DROID, HERMES, KILO, QODER)
AGENTS: dict[str, Agent] = {a.kind: a for a in _ALL}
DEFAULT_KIND = CLAUDE.kind  # the agent a hook runs for when it names none (`hook --agent`)
SEEN_SOURCES = {a.kind: a.seen_source for a in AGENTS.values() if a.seen_source}

__all__ = [
    "AGENTS",
    "DEFAULT_KIND",
    "SEEN_SOURCES",
    "Agent",
    "Change",
    "Check",
    "DoctorRequest",
    "DoorRequest",
    "ListenOption",
    "Setup",
    "SpawnRequest",
    "Spawned",
    "WakeRequest",
    "agent_doors",
    "by_door",
    "by_kind",
    "door_options",
    "seeing_doors",
]


def by_kind(kind: str) -> Agent:
    """The agent of *kind*; `BadInput` for a kind paneboard has no module for."""
    try:
        return AGENTS[kind]
    except KeyError:
        raise BadInput(f"no agent kind `{kind}`: one of {', '.join(AGENTS)}") from None


def by_door(door: str) -> Agent | None:
    """The agent whose listener uses the door named *door*, if one does."""
    return next((a for a in AGENTS.values() if a.door == door), None)


def seeing_doors() -> list[str]:
    """The doors whose agent keeps a conversation file paneboard reads to prove `seen`."""
    return [a.door for a in AGENTS.values() if a.door and a.seen_source]


def agent_doors() -> list[str]:
    """The `listen --door`s an agent's record opens, in `AGENTS`' order."""
    return [a.door for a in AGENTS.values() if a.door]


def door_options() -> dict[str, list[tuple[str, ListenOption]]]:
    """Every `listen` option an agent's door declares, by flag, with each door declaring it
    (in `AGENTS`' order): what the parser builds `listen`'s options and help from."""
    out: dict[str, list[tuple[str, ListenOption]]] = {}
    for agent in AGENTS.values():
        for option in agent.listen_options:
            if agent.door is not None:
                out.setdefault(option.flag, []).append((agent.door, option))
    return out
