"""The doors a listener hands prompts through; each a small class behind `Door`.

The doors of one agent (Claude Code's inbox, `codex queue`, OpenCode's plugin) live with
that agent, in `paneboard.agents`; these are the generic ones, and Qwen Code's.
"""

from __future__ import annotations

from paneboard.listener.doors.base import Door, HeldByAgent, Outcome
from paneboard.listener.doors.qwen import QwenInboxDoor
from paneboard.listener.doors.simple import ExecDoor, MaildirDoor, StdoutDoor
from paneboard.listener.doors.socket import check_socket

__all__ = [
    "Door",
    "ExecDoor",
    "HeldByAgent",
    "MaildirDoor",
    "Outcome",
    "QwenInboxDoor",
    "StdoutDoor",
    "check_socket",
]
