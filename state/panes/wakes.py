"""An asleep agent's wakes: when its listener started its session again, and for which prompt.

Kept per pane at ``panes/AGENT.wakes`` (JSON, 0600, replaced whole, durably), the wakes of the
last hour: the wake budget (`Policy.wake_limit` an hour) counts them, `status` reads them to
say why a prompt waits, and each is written *before* the agent's resume runs, so a listener
killed in the middle of a wake finds, started again, that the prompt may be with the agent
already (`began`) and does not start the session a second time on its own word.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from paneboard.state.files import read_private, write_atomic

HOUR = 3600.0
WAKES_MAX = 64 * 1024  # bytes: a record is a few dozen, and a limit is at most a few hundred


class Wake(msgspec.Struct, frozen=True, array_like=True):
    ts: float  # when the resume began (the listener's clock)
    session: str  # the agent's session it started again
    prompt: str  # the prompt it carried


def read(path: Path) -> list[Wake]:
    """The wakes kept at *path*, oldest first; [] for none, or a file that does not decode
    (it only bounds a cost: a damaged one counts as no wakes, and is replaced at the next)."""
    data = read_private(path, WAKES_MAX + 1)
    if not data or len(data) > WAKES_MAX:
        return []
    try:
        return msgspec.json.decode(data, type=list[Wake])
    except msgspec.ValidationError:
        return []
    except msgspec.DecodeError:
        return []


def last_hour(wakes: list[Wake], now: float) -> list[Wake]:
    return [w for w in wakes if w.ts > now - HOUR]


def record(path: Path, wake: Wake) -> None:
    """Add *wake* (durably: it is on disk before the agent's resume runs)."""
    kept = [*last_hour(read(path), wake.ts), wake][-256:]
    write_atomic(path, msgspec.json.encode(kept), durable=True)


def spent_until(wakes: list[Wake], limit: int, now: float) -> float | None:
    """Until when the budget of *limit* wakes an hour is spent (None: a wake may run now)."""
    recent = last_hour(wakes, now)
    if not limit or len(recent) < limit:
        return None
    return recent[-limit].ts + HOUR


def budget_reason(limit: int) -> str:
    """Why a prompt for an asleep agent waits past its budget."""
    return f"wake budget: {limit} wakes in the last hour spent; the agent stays asleep until then"
