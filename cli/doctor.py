"""`paneboard doctor`: one line per check (ok, warn, fail); exit 1 if anything fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from argparse import Namespace
from pathlib import Path

from paneboard.board.context import Context
from paneboard.hooks import agents, codex_trust, settings
from paneboard.hooks import opencode as opencode_hooks
from paneboard.listener.doors.agents import check_socket
from paneboard.listener.doors.opencode import live_doors, plugin_folder
from paneboard.listener.doors.process import child_env
from paneboard.protocol.errors import DoorUnavailable, PaneboardError
from paneboard.state import presence
from paneboard.state.panelock import holder
from paneboard.state.stores import exposure, shown_word


class Checks:
    def __init__(self) -> None:
        self.failed = 0

    def line(self, level: str, what: str, detail: str) -> None:
        self.failed += level == "fail"
        from paneboard.protocol.visible import one_line

        print(one_line(f"{level:<5} {what:<8} {detail}"), flush=True)


def run_doctor(ctx: Context, socket: str | None, probe: bool) -> None:
    c = Checks()
    _home(c, ctx)
    _board(c, ctx)
    _board_private(c, ctx)
    _store_exposure(c, ctx)
    pid = _pane(c, ctx)
    _claude(c, socket or os.environ.get("CLAUDE_CODE_MESSAGING_SOCKET"))
    _codex(c)
    more_agents(c, Path.cwd())
    _hooks(c, Path.cwd())
    _mcp(c, Path.cwd())
    if probe:
        _probe(c, ctx, pid)
    if c.failed:
        raise PaneboardError(f"doctor: {c.failed} check(s) failed")


def _home(c: Checks, ctx: Context) -> None:
    home = ctx.home
    if not home.exists():
        c.line("warn", "home", f"{home} does not exist yet (the first post creates it)")
        return
    mode = home.stat().st_mode & 0o777
    ok = os.access(home, os.W_OK | os.X_OK)
    c.line(
        "ok" if ok and not mode & 0o077 else "warn" if ok else "fail",
        "home",
        f"{home} (mode {mode:o}{', writable' if ok else ', NOT writable'})",
    )


def _board(c: Checks, ctx: Context) -> None:
    from paneboard.state.abc import HealthReport

    try:
        store = ctx.store()
        if not isinstance(store, HealthReport):
            return
        health = store.health()
    except PaneboardError as exc:
        c.line("fail", "board", str(exc))
        return
    c.line(health.level, "board", health.text)


def _board_private(c: Checks, ctx: Context) -> None:
    """A board folder, panes folder or log another user owns or can write fails (writers
    refuse it); a private one adds no line."""
    if problem := ctx.paths.not_private():
        c.line("fail", "board", problem)


def _store_exposure(c: Checks, ctx: Context) -> None:
    """A warning for a store off this machine reached without credentials, or in clear."""
    try:
        warning = exposure(ctx.home, ctx.store_url, ctx.secret, ctx.nats)
    except PaneboardError as exc:
        warning = str(exc)
    if warning:
        c.line("warn", "store", warning)


def _pane(c: Checks, ctx: Context) -> int | None:
    pid = holder(ctx.paths.pane(ctx.agent, "lock"))
    seen = presence.read(ctx.paths.pane(ctx.agent, "presence"))
    if pid:
        door = seen.door if seen else "?"
        c.line("ok", "pane", f"`{ctx.agent}`: listener pid {pid}, door {door}")
    else:
        waiting = "no listener (prompts wait on the board, or for a Stop hook)"
        c.line("warn", "pane", f"`{ctx.agent}`: {waiting}")
    return pid


def _claude(c: Checks, socket: str | None) -> None:
    if not socket:
        c.line(
            "warn", "claude", "no inbox socket (not inside a Claude Code session, and no --socket)"
        )
        return
    try:
        check_socket(Path(socket))
    except DoorUnavailable as exc:
        c.line("fail", "claude", exc.reason)
        return
    c.line("ok", "claude", f"inbox socket {socket} (a socket, yours)")


def _codex(c: Checks) -> None:
    codex = shutil.which("codex")
    if codex is None:
        c.line("warn", "codex", "no `codex` on PATH")
        return
    env = child_env(os.environ)
    try:
        done = subprocess.run(
            [codex, "--version"], capture_output=True, text=True, timeout=10, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        c.line("fail", "codex", f"{codex} --version failed: {exc}")
        return
    version = (
        done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no version printed)"
    )
    c.line("ok" if done.returncode == 0 else "fail", "codex", f"{codex}: {version}")


def more_agents(c: Checks, project: Path) -> None:
    """Gemini CLI, Copilot CLI, OpenCode: on PATH? hooks or plugin installed? OpenCode's door up?"""
    for name, row in agents.STOP_AGENTS.items():
        events = agents.installed(row, project)
        where = shutil.which(name)
        cli = where or f"no `{name}` on PATH"
        if events:
            c.line(
                "ok" if where else "warn",
                name,
                f"{cli}; Stop-hook door: {', '.join(events)} in {row.path(project)}",
            )
        else:
            c.line(
                "warn",
                name,
                f"{cli}; no hooks in {row.path(project)} (paneboard hook install {name})",
            )
    where = shutil.which("opencode")
    cli = where or "no `opencode` on PATH"
    plugin = opencode_hooks.plugin_path(project)
    if opencode_hooks.installed(project):
        c.line("ok" if where else "warn", "opencode", f"{cli}; plugin {plugin}")
    else:
        c.line(
            "warn", "opencode", f"{cli}; no plugin at {plugin} (paneboard hook install opencode)"
        )
    doors = list(live_doors())
    for pid, socket in doors:
        c.line("ok", "opencode", f"plugin door of OpenCode pid {pid}: {socket}")
    if not doors:
        c.line(
            "warn", "opencode", f"no OpenCode runs with the plugin's door up (in {plugin_folder()})"
        )


def _hooks(c: Checks, project: Path) -> None:
    for agent in settings.AGENTS:
        path = settings.settings_path(agent, project)
        commands = settings.installed(agent, project)
        if commands:
            c.line("ok", "hooks", f"{agent}: {', '.join(commands)} in {path}")
            written = settings.written_options(next(iter(commands.values())))
            c.line("ok", "hooks", f"{agent} hooks use {_where(written)}")
        else:
            c.line("warn", "hooks", f"{agent}: none in {path} (paneboard hook install {agent})")
    _codex_hooks_trust(c, project)


def _codex_hooks_trust(c: Checks, project: Path) -> None:
    """Whether Codex trusts paneboard's hooks as they are now (it skips hooks it does not)."""
    path = settings.settings_path("codex", project)
    try:
        entries = codex_trust.wanted(path, settings.load(path), settings.is_ours)
        if not entries:
            return
        config = codex_trust.config_path(os.environ)
        states = codex_trust.trust_state(config, entries)
        project_ok = codex_trust.project_trusted(config, project.absolute())
    except PaneboardError as exc:
        c.line("fail", "trust", f"codex: {exc}")
        return
    bad = [f"{key.split(':')[-3]} {state}" for key, state in states.items() if state != "trusted"]
    if bad:
        fix = "Codex asks to review them at its next start, or: hook install codex --trust"
        which = ", ".join(bad)
        c.line("warn", "trust", f"codex: paneboard hooks not trusted in {config}: {which} ({fix})")
    else:
        c.line("ok", "trust", f"codex: paneboard's {len(states)} hook(s) trusted in {config}")
    if not project_ok:
        where = f"{project} is not a trusted project"
        c.line("warn", "trust", f"codex: {where}: Codex skips its {path}")


def _where(written: dict[str, str]) -> str:
    """Which agent, home, board and store hooks with these options act for."""
    parts = []
    for flag, what, default in (
        ("--as", "agent", "named by the session"),
        ("--home", "home", "$PANEBOARD_HOME or the default"),
        ("--board", "board", "$PANEBOARD_BOARD or the git repository's name"),
        ("--store", "store", "$PANEBOARD_STORE or the file log"),
    ):
        shown = shown_word(written[flag]) if flag in written else default
        parts.append(f"{what} {shown}")
    return ", ".join(parts)


def _mcp(c: Checks, project: Path) -> None:
    import importlib.util

    from paneboard.hooks import mcpconfig

    for agent in mcpconfig.AGENTS:
        path = mcpconfig.config_path(agent, project)
        entry = mcpconfig.registered(agent, project)
        if entry is None:
            hint = f"(paneboard hook install {agent} --mcp)"
            c.line("warn", "mcp", f"{agent}: no paneboard server in {path} {hint}")
            continue
        command, args = entry.get("command"), entry.get("args")
        shown = " ".join(
            map(shown_word, map(str, [command, *(args if isinstance(args, list) else [])]))
        )
        if not isinstance(command, str) or not shutil.which(command):
            c.line("fail", "mcp", f"{agent}: {path} runs {command!r}, which is not an executable")
        elif importlib.util.find_spec("mcp") is None:
            fix = "pip install 'paneboard[mcp]'"
            c.line("fail", "mcp", f"{agent}: registered, but the MCP SDK is missing: {fix}")
        else:
            c.line("ok", "mcp", f"{agent}: {shown} in {path}")


def _probe(c: Checks, ctx: Context, pid: int | None) -> None:
    from paneboard.board.close import cancel
    from paneboard.board.post import PromptRequest, append
    from paneboard.board.wait import wait_for

    if not pid:
        c.line("fail", "probe", f"no listener holds `{ctx.agent}`'s pane: nothing to probe")
        return
    doctor = ctx.acting_as("paneboard-doctor")
    probe = "paneboard doctor probe: no action needed, it is withdrawn at once."
    posted = append(doctor, PromptRequest([ctx.agent], probe, priority="low", ttl=120))
    started = time.monotonic()
    import anyio

    try:
        anyio.run(wait_for, doctor, posted.id, "delivered", 15.0)
    except PaneboardError as exc:
        c.line("fail", "probe", f"not delivered: {exc}")
    else:
        took = (time.monotonic() - started) * 1000
        c.line("ok", "probe", f"delivered through the door in {took:.0f} ms")
    finally:
        try:
            cancel(doctor, posted.id)
        except PaneboardError:
            pass
        doctor.close()


def doctor_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        run_doctor(ctx, args.socket, args.probe)
