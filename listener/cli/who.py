"""`who`: the agents on a board, and whether a listener holds each pane."""

from __future__ import annotations

from argparse import Namespace

from paneboard.listener.cli.board import emit
from paneboard.listener.context import Context
from paneboard.state import presence
from paneboard.state.panelock import holder


def _remote_presences(ctx: Context) -> dict[str, presence.Presence]:
    import msgspec

    out = {}
    for name, raw in ctx.store().presences().items():
        try:
            out[name] = msgspec.json.decode(raw, type=presence.Presence)
        except msgspec.DecodeError:
            continue
    return out


def run_who(ctx: Context) -> None:
    agents: dict[str, None] = {}
    for _, post in ctx.store().read_all():
        agents[post.sender] = None
        for name in getattr(post, "to", ()):
            agents[name] = None
    if ctx.paths.panes.is_dir():
        for lock in sorted(ctx.paths.panes.glob("*.lock")):
            agents[lock.name[: -len(".lock")]] = None
    remote = _remote_presences(ctx)
    agents.update(dict.fromkeys(remote))
    for name in sorted(agents):
        pid = holder(ctx.paths.pane(name, "lock"))
        seen = presence.read(ctx.paths.pane(name, "presence"))
        if (
            not pid and name in remote
        ):  # a listener on another machine, seen within the presence TTL
            seen = remote[name]
            pid = seen.pid
        row = {
            "agent": name,
            "listening": pid is not None,
            "pid": pid if pid and pid > 0 else None,
            "door": seen.door if seen and pid else None,
            "last_delivery": seen.last_delivery if seen else None,
        }
        if ctx.json:
            emit(row)
        else:
            from paneboard.listener.cli.board import clock

            state = f"listening  pid {row['pid']}  door {row['door']}" if pid else "no listener"
            last = (
                f"  last delivery {clock(seen.last_delivery)}"
                if seen and seen.last_delivery
                else ""
            )
            print(f"{name:<20} {state}{last}")


def who_command(args: Namespace) -> None:
    run_who(Context.from_args(args))
