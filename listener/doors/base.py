"""The door interface: how a listener hands a prompt to its agent.

`deliver()` returns the outcome (``accepted``, or ``unknown`` when a command ran out
of time after it may have acted) or raises `DoorFailed` (nothing was handed over:
retry) or `DoorUnavailable` (the door cannot exist: do not wait to retry). A door whose
agent can hold what it took for its person raises `HeldByAgent`: the agent has the text, so
the listener records the key and posts `held`, and does not send it again. A door whose
agent says later what became of a prompt it held (`Settles`) runs `follow` beside the
listener, which posts `delivered` or `undelivered` when it hears.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from anyio.abc import TaskStatus

from paneboard.protocol.errors import DoorFailed
from paneboard.protocol.posts import Outcome, Prompt

__all__ = ["Door", "DoorWaits", "HeldByAgent", "Outcome", "Settle", "Settles"]

# The agent's later word on a prompt it held: its id, and None (delivered) or why not.
Settle = Callable[[str, DoorFailed | None], None]


class HeldByAgent(Exception):
    """The agent took the prompt and holds it for its person (*reason* says why)."""

    def __init__(self, door: str, reason: str) -> None:
        super().__init__(f"door {door}: held by the agent ({reason})")
        self.door = door
        self.reason = reason


class DoorWaits(Exception):
    """The door cannot take the prompt before *until* (wall clock), for *reason* (an asleep
    agent's wake budget is spent, or it was just woken): nothing was handed over, and the
    listener sets the prompt aside until then, as it does one past the rate."""

    def __init__(self, door: str, until: float, reason: str) -> None:
        super().__init__(f"door {door}: waits: {reason}")
        self.door = door
        self.until = until
        self.reason = reason


class Door(Protocol):
    name: str

    def check(self) -> None:
        """Raise `DoorUnavailable` if the door cannot exist (checked at start and per delivery)."""

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        """Hand *text* (the composed prompt) to *agent*."""
        ...


@runtime_checkable
class Settles(Protocol):
    """A door that hears what became of the prompts its agent held."""

    async def follow(self, settle: Settle, *, task_status: TaskStatus[None]) -> None:
        """Report started, then call *settle* for each held prompt the agent decides on."""
