"""`who`: the agents on a board, and whether a listener holds each pane."""

from __future__ import annotations

import time
from argparse import Namespace

from paneboard.board.context import Context
from paneboard.cli.board import emit
from paneboard.protocol.visible import one_line
from paneboard.state import presence
from paneboard.state.fold import BoardState, fold, stage
from paneboard.state.panelock import holder


def _remote_presences(ctx: Context) -> dict[str, presence.Presence]:
    out = {}
    for name, raw in ctx.store().presence.read().items():
        if (seen := presence.parse(f"presence of `{name}`", raw)) is not None:
            out[name] = seen
    return out


def _held(state: BoardState) -> dict[str, int]:
    """How many open prompts each recipient's agent (or policy) holds for a person."""
    now = time.time()
    counts: dict[str, int] = {}
    for ps in state.prompts.values():
        for name in ps.recipients:
            if stage(ps, name, now) == "held":
                counts[name] = counts.get(name, 0) + 1
    return counts


def who(ctx: Context) -> list[dict[str, object]]:
    """`who --json`: the board's agents; for each, whether a listener holds its pane, its door,
    and its last delivery."""
    agents: dict[str, None] = {}
    posts = list(ctx.store().read_all())
    held = _held(fold(posts))
    for _, post in posts:
        agents[post.sender] = None
        for name in getattr(post, "to", ()):
            agents[name] = None
    if ctx.paths.panes.is_dir():
        for lock in sorted(ctx.paths.panes.glob("*.lock")):
            agents[lock.name[: -len(".lock")]] = None
    remote = _remote_presences(ctx)
    agents.update(dict.fromkeys(remote))
    rows: list[dict[str, object]] = []
    for name in sorted(agents):
        pid = holder(ctx.paths.pane(name, "lock"))
        seen = presence.read(ctx.paths.pane(name, "presence"))
        if (
            not pid and name in remote
        ):  # a listener on another machine, seen within the presence TTL
            seen = remote[name]
            pid = seen.pid
        rows.append(
            {
                "agent": name,
                "listening": pid is not None,
                "pid": pid if pid and pid > 0 else None,
                "door": seen.door if seen and pid else None,
                "last_delivery": seen.last_delivery if seen else None,
                "held": held.get(name, 0),
            }
        )
    return rows


def who_line(row: dict[str, object]) -> str:
    """One line of `who` for a row of `who()`."""
    from paneboard.cli.board import clock

    state = (
        f"listening  pid {row['pid']}  door {row['door']}" if row["listening"] else "no listener"
    )
    when = row["last_delivery"]
    last = f"  last delivery {clock(when)}" if isinstance(when, float) and when else ""
    count = row.get("held")
    waiting = f"  {count} held for a person" if isinstance(count, int) and count else ""
    return one_line(f"{row['agent']:<20} {state}{last}{waiting}")


def run_who(ctx: Context) -> None:
    for row in who(ctx):
        if ctx.json:
            emit(row)
        else:
            print(who_line(row))


def who_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_who(ctx)
