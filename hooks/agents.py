"""Gemini CLI and GitHub Copilot CLI: the Stop-hook agents, one row each in `STOP_AGENTS`.

Both answer a turn's end with the hook reply ``{"decision": "block", "reason": TEXT}``,
TEXT becoming the next user turn, and fire again with ``stop_hook_active`` after it. Each
row says where `hook install` writes, how an entry of that file looks, what the stop hook
prints when it has nothing to hand over, and how the session-start context is shaped.

    gemini   DIR/.gemini/settings.json        SessionStart, AfterAgent
    copilot  DIR/.github/hooks/paneboard.json SessionStart, Stop (Claude-style payloads)

Copilot loads a project's ``.github/hooks/`` only in folders the person trusts.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.hooks import settings
from paneboard.protocol.errors import BadInput

Entry = Callable[[str, str], dict[str, Any]]


def _gemini_entry(action: str, command: str) -> dict[str, Any]:
    hook = {"name": f"paneboard-{action}", "type": "command", "command": command, "timeout": 30_000}
    return {"matcher": "*", "hooks": [hook]}


def _copilot_entry(action: str, command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}


def _hook_specific(text: str) -> str:
    output = {"hookEventName": "SessionStart", "additionalContext": text}
    return json.dumps({"hookSpecificOutput": output})


def _top_level(text: str) -> str:
    return json.dumps({"additionalContext": text})


@dataclass(frozen=True)
class StopAgent:
    """One agent reached through its Stop-hook door (`--mode stop`, its only mode)."""

    name: str
    settings: str  # the hook file, relative to the project
    events: dict[str, str]  # hook action -> the agent's event name
    entry: Entry  # (action, command) -> one entry of the event's list
    idle_reply: str  # what `hook stop` prints with nothing to hand over
    context: Callable[[str], str]  # the session-start hook's output, given the context line
    per_stop: int = 1  # prompts handed over per turn end: one each, urgent first

    def path(self, project: Path) -> Path:
        return project / self.settings


STOP_AGENTS = {
    "gemini": StopAgent(
        name="gemini",
        settings=".gemini/settings.json",
        events={"session-start": "SessionStart", "stop": "AfterAgent"},
        entry=_gemini_entry,
        idle_reply="{}",
        context=_hook_specific,
    ),
    "copilot": StopAgent(
        name="copilot",
        settings=".github/hooks/paneboard.json",
        events={"session-start": "SessionStart", "stop": "Stop"},
        entry=_copilot_entry,
        idle_reply="",
        context=_top_level,
    ),
}


def commands(agent: StopAgent, exe: str, options: Sequence[str]) -> dict[str, str]:
    """Each event's command line."""
    tail = shlex.join(["--agent", agent.name, "--mode", "stop", *options])
    return {
        agent.events[action]: f"{shlex.quote(exe)} hook {action} {tail}" for action in agent.events
    }


def install(agent: StopAgent, project: Path, exe: str, options: Sequence[str]) -> tuple[Path, bool]:
    """Merge the hooks into the agent's file; return it and whether it changed."""
    path = agent.path(project)
    data = settings.load(path)
    out = settings.without_ours(data)
    hooks = dict(out.get("hooks", {}))
    for action, event in agent.events.items():
        command = commands(agent, exe, options)[event]
        hooks[event] = [*hooks.get(event, []), agent.entry(action, command)]
    new = {**out, "hooks": hooks}
    if new == data:
        return path, False
    settings.save(path, new, project)
    return path, True


def uninstall(agent: StopAgent, project: Path) -> tuple[Path, bool]:
    """Remove exactly the entries `install` added; a file left empty is removed too."""
    path = agent.path(project)
    data = settings.load(path)
    new = settings.without_ours(data)
    if new == data:
        return path, False
    if new == {} and path.name == "paneboard.json":
        path.unlink()  # the file is paneboard's own: install created it, and its folders
        for folder in (path.parent, path.parent.parent):
            try:
                folder.rmdir()
            except OSError:
                break  # not empty: someone else's files live there
    else:
        settings.save(path, new, project)
    return path, True


def installed(agent: StopAgent, project: Path) -> list[str]:
    """The events that run a paneboard hook (for `doctor`)."""
    try:
        data = settings.load(agent.path(project))
    except BadInput:
        return []
    kept = settings.without_ours(data).get("hooks", {})
    hooks = data.get("hooks", {})
    return [event for event, entries in hooks.items() if len(kept.get(event, [])) < len(entries)]
