"""`hook install|uninstall gemini|copilot|opencode`, and which modes each agent has.

Gemini CLI and Copilot CLI have a Stop-hook door only (`--mode stop`); OpenCode has a
listener only (`--mode listen`), through paneboard's plugin. Claude Code and Codex have both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from paneboard.board.context import executable
from paneboard.hooks import agents, opencode
from paneboard.protocol.errors import BadInput

MORE_AGENTS = ("gemini", "copilot", "opencode")
ALL_AGENTS = ("claude", "codex", *MORE_AGENTS)
_ONLY_MODE = {"gemini": "stop", "copilot": "stop", "opencode": "listen"}
_TITLE = {"gemini": "Gemini CLI", "copilot": "Copilot CLI", "opencode": "OpenCode"}
COPILOT_TRUST = "Copilot CLI loads a project's .github/hooks/ only in folders you have trusted"


def check_mode(agent: str, mode: str | None) -> str:
    """*mode*, or the agent's default; `BadInput` for a mode the agent has no door for."""
    only = _ONLY_MODE.get(agent)
    if only is None:
        return mode or "listen"
    if mode not in (None, only):
        why = "a Stop hook" if only == "stop" else "a listener, through its plugin"
        raise BadInput(f"{_TITLE[agent]} is reached through {why} only: use --mode {only}")
    return only


def install_or_uninstall(args: argparse.Namespace, project: Path, options: list[str]) -> None:
    """Install or uninstall for one of the three; *options* go into the hooks as given."""
    agent = args.target
    mode = check_mode(agent, args.mode)
    if agent == "opencode":
        _opencode(args, project, options)
        return
    row = agents.STOP_AGENTS[agent]
    if args.action == "uninstall":
        path, changed = agents.uninstall(row, project)
        print(f"{'removed paneboard hooks from' if changed else 'no paneboard hooks in'} {path}")
        return
    path, changed = agents.install(row, project, executable(), options)
    done = "installed paneboard hooks in" if changed else "paneboard hooks already installed in"
    print(f"{done} {path} (mode {mode})")
    if agent == "copilot":
        print(COPILOT_TRUST)


def _opencode(args: argparse.Namespace, project: Path, options: list[str]) -> None:
    if args.action == "uninstall":
        path, changed = opencode.uninstall(project)
        print(f"{'removed paneboard plugin' if changed else 'no paneboard plugin at'} {path}")
        return
    path, changed = opencode.install(project, executable(), options)
    done = "installed paneboard plugin" if changed else "paneboard plugin already installed:"
    print(f"{done} {path}")
