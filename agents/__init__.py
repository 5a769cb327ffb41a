"""One module per agent kind: its hook files and their install, its hook input, its door and
admission check, its `seen` source, its doctor checks, its session-start context.

Each module makes one `Agent` (agents/base.py), named as its kind in capitals (`CLAUDE`);
`AGENTS` lists them by kind, in the order `doctor` and the help show them, and imports a
module only when its record is asked for: a `hook stop --agent claude` or a `listen --door
claude-inbox` loads Claude Code's module alone. `RECORDS` is what the parser and `by_door` know
without importing any: each kind's door and whether it reads a conversation file for `seen`
(tests/agents/test_agents.py holds it equal to the records). Adding an agent is one module here
and a line in `RECORDS` (docs/developers.md, "Adding an agent").
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

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
from paneboard.protocol.errors import BadInput
from paneboard.state.health import Check

# kind: (the `listen --door` its record opens, whether it has a `seen` source)
RECORDS: dict[str, tuple[str | None, bool]] = {
    "claude": ("claude-inbox", True),
    "codex": ("codex-queue", True),
    "gemini": (None, True),
    "copilot": (None, True),
    "opencode": ("opencode", False),
    "qwen": ("qwen-inbox", True),
    "pi": ("pi-extension", True),
    "droid": (None, True),
    "hermes": ("hermes-plugin", True),
    "kilo": ("kilo", True),
    "qoder": ("qoder-inbox", True),
}
DEFAULT_KIND = "claude"  # the agent a hook runs for when it names none (`hook --agent`)


class _Registry(MutableMapping[str, Agent]):
    """The records by kind, each module imported the first time its record is asked for.

    A record set here (a test's agent of its own) is listed after `RECORDS`' kinds."""

    def __init__(self, kinds: list[str]) -> None:
        self._kinds = kinds
        self._loaded: dict[str, Agent] = {}

    def __getitem__(self, kind: str) -> Agent:
        if kind not in self._loaded:
            if kind not in self._kinds:
                raise KeyError(kind)
            module = importlib.import_module(f"paneboard.agents.{kind}")
            self._loaded[kind] = getattr(module, kind.upper())
        return self._loaded[kind]

    def __setitem__(self, kind: str, agent: Agent) -> None:
        if kind not in self._kinds:
            self._kinds.append(kind)
        self._loaded[kind] = agent

    def __delitem__(self, kind: str) -> None:
        self._kinds.remove(kind)
        self._loaded.pop(kind, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._kinds))

    def __len__(self) -> int:
        return len(self._kinds)

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds


AGENTS: MutableMapping[str, Agent] = _Registry(list(RECORDS))

__all__ = [
    "AGENTS",
    "DEFAULT_KIND",
    "RECORDS",
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
    "seen_sources",
]


def by_kind(kind: str) -> Agent:
    """The agent of *kind*; `BadInput` for a kind paneboard has no module for."""
    try:
        return AGENTS[kind]
    except KeyError:
        raise BadInput(f"no agent kind `{kind}`: one of {', '.join(AGENTS)}") from None


def _door_of(kind: str) -> str | None:
    return RECORDS[kind][0] if kind in RECORDS else AGENTS[kind].door


def by_door(door: str) -> Agent | None:
    """The agent whose listener uses the door named *door*, if one does (its module alone
    imported)."""
    return next((AGENTS[kind] for kind in AGENTS if _door_of(kind) == door), None)


def seeing_doors() -> list[str]:
    """The doors whose agent keeps a conversation file paneboard reads to prove `seen`."""
    sees = {
        kind: RECORDS[kind][1] if kind in RECORDS else bool(AGENTS[kind].seen_source)
        for kind in AGENTS
    }
    return [door for kind in AGENTS if (door := _door_of(kind)) and sees[kind]]


def agent_doors() -> list[str]:
    """The `listen --door`s an agent's record opens, in `AGENTS`' order."""
    return [door for kind in AGENTS if (door := _door_of(kind))]


def seen_sources() -> dict[str, str]:
    """Each agent's `seen` source, by kind (every record imported)."""
    return {a.kind: a.seen_source for a in AGENTS.values() if a.seen_source}


def door_options(door: str | None = None) -> dict[str, list[tuple[str, ListenOption]]]:
    """Every `listen` option an agent's door declares, by flag, with each door declaring it
    (in `AGENTS`' order): what the parser builds `listen`'s options and help from. Given
    *door*, that door's alone (only its agent's module imported)."""
    agents = AGENTS.values() if door is None else [a for a in [by_door(door)] if a]
    out: dict[str, list[tuple[str, ListenOption]]] = {}
    for agent in agents:
        for option in agent.listen_options:
            if agent.door is not None:
                out.setdefault(option.flag, []).append((agent.door, option))
    return out
