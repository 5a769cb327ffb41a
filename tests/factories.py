"""Posts for tests: one factory per kind, every field overridable."""

from __future__ import annotations

from typing import Any

from paneboard.protocol.posts import Prompt


def prompt(n: int = 0, **fields: Any) -> Prompt:
    """Prompt number *n* (its id and its time), from alice to bob on board `b`; *fields* override
    any of them."""
    given: dict[str, Any] = {
        "id": f"{n:026d}",
        "board": "b",
        "sender": "alice",
        "ts": float(n),
        "to": ("bob",),
        "body": f"body {n}",
    }
    return Prompt(**(given | fields))
