"""`paneboard doctor`: one line per check (ok, warn, fail); exit 1 if anything fails."""

from __future__ import annotations

import os
import time
from argparse import Namespace
from pathlib import Path

from paneboard.agents import AGENTS, DoctorRequest
from paneboard.board.context import Context
from paneboard.protocol.errors import PaneboardError
from paneboard.state.health import Check
from paneboard.state.panes import presence
from paneboard.state.panes.lock import holder
from paneboard.state.stores import exposure


class Checks:
    """The lines `doctor` prints, one `Check` each, and how many failed."""

    def __init__(self) -> None:
        self.failed = 0

    def add(self, check: Check) -> None:
        self.failed += check.level == "fail"
        from paneboard.protocol.visible import one_line

        print(one_line(f"{check.level:<5} {check.what:<8} {check.detail}"), flush=True)


def run_doctor(ctx: Context, socket: str | None, probe: bool) -> None:
    c = Checks()
    _home(c, ctx)
    _board(c, ctx)
    _board_private(c, ctx)
    _store_exposure(c, ctx)
    pid = _pane(c, ctx)
    _agents(c, DoctorRequest(Path.cwd(), os.environ, socket, ctx.home))
    if probe:
        _probe(c, ctx, pid)
    if c.failed:
        raise PaneboardError(f"doctor: {c.failed} check(s) failed")


def _home(c: Checks, ctx: Context) -> None:
    home = ctx.home
    if not home.exists():
        c.add(Check("warn", "home", f"{home} does not exist yet (the first post creates it)"))
        return
    mode = home.stat().st_mode & 0o777
    ok = os.access(home, os.W_OK | os.X_OK)
    c.add(
        Check(
            "ok" if ok and not mode & 0o077 else "warn" if ok else "fail",
            "home",
            f"{home} (mode {mode:o}{', writable' if ok else ', NOT writable'})",
        )
    )


def _board(c: Checks, ctx: Context) -> None:
    from paneboard.state.abc import HealthReport

    try:
        store = ctx.store()
        if not isinstance(store, HealthReport):
            return
        health = store.health()
    except PaneboardError as exc:
        c.add(Check("fail", "board", str(exc)))
        return
    c.add(health)


def _board_private(c: Checks, ctx: Context) -> None:
    """A board folder, panes folder or log another user owns or can write fails (writers
    refuse it); a private one adds no line."""
    if problem := ctx.paths.not_private():
        c.add(Check("fail", "board", problem))


def _store_exposure(c: Checks, ctx: Context) -> None:
    """A warning for a store off this machine reached without credentials, or in clear."""
    try:
        warning = exposure(ctx.home, ctx.store_url, ctx.secret, ctx.nats)
    except PaneboardError as exc:
        warning = str(exc)
    if warning:
        c.add(Check("warn", "store", warning))


def _pane(c: Checks, ctx: Context) -> int | None:
    pid = holder(ctx.paths.pane(ctx.agent).lock)
    seen = presence.read(ctx.paths.pane(ctx.agent).presence)
    if pid:
        door = seen.door if seen else "?"
        c.add(Check("ok", "pane", f"`{ctx.agent}`: listener pid {pid}, door {door}"))
    else:
        waiting = "no listener (prompts wait on the board, or for a Stop hook)"
        c.add(Check("warn", "pane", f"`{ctx.agent}`: {waiting}"))
    return pid


def _agents(c: Checks, ask: DoctorRequest) -> None:
    """Each agent's own checks: its CLI, its hooks or plugin, its door, its MCP entry, its
    grant kept in the home."""
    for agent in AGENTS.values():
        for check in agent.doctor(ask):
            c.add(check)


def _probe(c: Checks, ctx: Context, pid: int | None) -> None:
    from paneboard.board.close import cancel
    from paneboard.board.post import PromptRequest, append
    from paneboard.board.wait import wait_for

    if not pid:
        c.add(Check("fail", "probe", f"no listener holds `{ctx.agent}`'s pane: nothing to probe"))
        return
    doctor = ctx.acting_as("paneboard-doctor")
    probe = "paneboard doctor probe: no action needed, it is withdrawn at once."
    posted = append(doctor, PromptRequest([ctx.agent], probe, priority="low", ttl=120))
    started = time.monotonic()
    import anyio

    try:
        anyio.run(wait_for, doctor, posted.id, "delivered", 15.0)
    except PaneboardError as exc:
        c.add(Check("fail", "probe", f"not delivered: {exc}"))
    else:
        took = (time.monotonic() - started) * 1000
        c.add(Check("ok", "probe", f"delivered through the door in {took:.0f} ms"))
    finally:
        try:
            cancel(doctor, posted.id)
        except PaneboardError:
            pass
        doctor.close()


def doctor_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_doctor(ctx, args.socket, args.probe)
