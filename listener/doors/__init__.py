"""The doors a listener hands prompts through; each a small class behind `Door`.

The doors of one agent (Claude Code's inbox, `codex queue`, OpenCode's plugin, Qwen Code's
inbox, pi's extension) live with that agent, in `paneboard.agents`; these are the generic ones.
"""

from __future__ import annotations

from paneboard.listener.doors.base import Door, DoorWaits, HeldByAgent, Outcome, Settle, Settles
from paneboard.listener.doors.simple import ExecDoor, MaildirDoor, StdoutDoor
from paneboard.listener.doors.socket import check_socket

__all__ = [
    "Door",
    "DoorWaits",
    "ExecDoor",
    "HeldByAgent",
    "MaildirDoor",
    "Outcome",
    "Settle",
    "Settles",
    "StdoutDoor",
    "check_socket",
]
