"""The vocabulary of the board, defined once: priorities, post kinds, stages, seeing doors.

Plain tuples with no imports, so `paneboard post` and the parser can use them without paying
for msgspec or typing. The `Literal` types in posts.py and fold.py spell the same words for
the type checker; tests/protocol/test_words.py keeps the two spellings equal.
"""

from __future__ import annotations

PRIORITIES = ("low", "normal", "high", "urgent")
PRIORITY_RANK = {"urgent": 0, "high": 1, "normal": 2, "low": 3}  # catch-up order: urgent first
KINDS = (
    "prompt",
    "ack",
    "answer",
    "cancel",
    "delivered",
    "undelivered",
    "seen",
    "held",
    "approved",
    "refused",
    "read",
)
OUTCOMES = ("accepted", "unknown")
HELD_BY = ("agent", "policy")  # who holds a prompt back: the agent itself, or paneboard's policy
# A recipient may still close it:
OPEN_STAGES = ("posted", "held", "approved", "delivered", "undelivered", "seen", "read")
HANDED_STAGES = ("delivered", "undelivered")  # a listener has tried the door
CLOSED_STAGES = ("acked", "answered")  # the recipient closed it
ENDED_STAGES = ("cancelled", "expired", "refused")  # ended for the recipient without a close
VERDICTS = ("verified", "unsigned", "forged")  # what a post's signature says (protocol/signing.py)
WAIT_UNTIL = ("delivered", "seen", "read", "closed")
READ_VIA = ("cli", "mcp")  # the commands that print a body to its recipient (a `read` receipt)
STOP_HOOK_DOOR = "stop-hook"  # the door a Stop hook's receipts name
# Doors whose agent keeps a conversation file that paneboard reads to prove `seen`.
SEEING_DOORS = (
    "claude-inbox",
    "codex-queue",
    "qwen-inbox",
    "pi-extension",
    "qoder-inbox",
    "hermes-plugin",
    "kilo",
    STOP_HOOK_DOOR,
)
