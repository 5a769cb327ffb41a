"""The door interface: how a listener hands a prompt to its agent.

`deliver()` returns the outcome (``accepted``, or ``unknown`` when a command ran out
of time after it may have acted) or raises `DoorFailed` (nothing was handed over:
retry) or `DoorUnavailable` (the door cannot exist: do not wait to retry).
"""

from __future__ import annotations

from typing import Protocol

from paneboard.protocol.posts import Outcome, Prompt

__all__ = ["Door", "Outcome"]


class Door(Protocol):
    name: str

    def check(self) -> None:
        """Raise `DoorUnavailable` if the door cannot exist (checked at start and per delivery)."""

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        """Hand *text* (the composed prompt) to *agent*."""
        ...
