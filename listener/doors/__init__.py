"""The doors a listener hands prompts through; each a small class behind `Door`."""

from __future__ import annotations

from paneboard.listener.doors.agents import ClaudeInboxDoor, CodexQueueDoor, check_socket
from paneboard.listener.doors.base import Door, HeldByAgent, Outcome
from paneboard.listener.doors.opencode import OpenCodeDoor
from paneboard.listener.doors.qwen import QwenInboxDoor
from paneboard.listener.doors.simple import ExecDoor, MaildirDoor, StdoutDoor

__all__ = [
    "ClaudeInboxDoor",
    "CodexQueueDoor",
    "Door",
    "ExecDoor",
    "HeldByAgent",
    "MaildirDoor",
    "OpenCodeDoor",
    "Outcome",
    "QwenInboxDoor",
    "StdoutDoor",
    "check_socket",
]
