"""`paneboard hook …`: install, uninstall, and the hooks the agents run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from paneboard.listener.context import Context, executable
from paneboard.listener.hooks import codex_trust, mcpconfig, more, run, settings
from paneboard.protocol.errors import BadInput
from paneboard.state.paths import default_board

CODEX_REVIEW = (
    "Codex runs new or changed hooks only once they are trusted: at its next start it shows "
    '"Hooks need review"; choose "Trust all and continue" (or install with --trust to record '
    "the trust in {config} now)."
)


def hook_command(args: argparse.Namespace) -> None:
    if args.action in ("install", "uninstall"):
        _install(args)
        return
    data = run.read_hook_input()
    cwd = str(data.get("cwd") or os.getcwd())
    name, derived = run.agent_name(args.agent, args.agent_type, cwd)
    board = os.environ.get("PANEBOARD_BOARD") or default_board(cwd)  # where the agent runs
    ctx = Context.from_args(args, board=board, agent=name)
    transcript = data.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    if args.action == "session-start":
        mode = more.check_mode(args.agent_type, args.mode)
        print(run.session_start(ctx, args.agent_type, mode, derived, data))
    elif args.action == "session-end":
        run.session_end(ctx)
    else:
        run.stop(ctx, args.agent_type, args.cooldown, sys.stdout, transcript)


def _given_options(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The where-and-who options given to `hook install`, as the hooks will be given them.

    A home or file is written as an absolute path: the hooks run in the agent's folder.
    """
    paths = {"--home", "--nats-creds", "--nats-tls-ca"}
    given = [
        ("--as", args.agent),
        ("--home", args.home),
        ("--board", args.board),
        ("--store", args.store),
        ("--nats-creds", args.nats_creds),
        ("--nats-tls-ca", args.nats_tls_ca),
    ]
    return [
        (flag, str(Path(value).absolute()) if flag in paths else value)
        for flag, value in given
        if value
    ]


def _install(args: argparse.Namespace) -> None:
    if args.target is None:
        raise BadInput(f"say which agent: paneboard hook {args.action} {'|'.join(more.ALL_AGENTS)}")
    project = (args.project or Path.cwd()).absolute()
    if not project.is_dir():
        what = (
            f"{project} is not a folder" if project.exists() else f"folder {project} does not exist"
        )
        raise BadInput(f"project {what}")
    if args.mcp:
        mcpconfig.config_path(args.target, project)  # claude and codex only: refused for others
    if args.target in more.MORE_AGENTS:
        more.install_or_uninstall(args, project, [p for pair in _given_options(args) for p in pair])
        return
    if args.trust and (args.action, args.target) != ("install", "codex"):
        raise BadInput("--trust goes with `paneboard hook install codex`")
    if args.trust or (args.action, args.target) == ("uninstall", "codex"):
        # both edit config.toml: refuse a broken one before writing anything
        codex_trust.trust_state(codex_trust.config_path(os.environ), {})
    args.mode = args.mode or "listen"
    settings.load(settings.settings_path(args.target, project))  # refuse a malformed file first
    mcp = args.mcp or (args.action == "uninstall" and args.target in mcpconfig.AGENTS)
    if mcp:
        mcpconfig.check(args.target, project)  # and refuse a malformed one before writing
    if args.action == "install":
        path, changed = settings.install(
            args.target, project, args.mode, executable(), _given_options(args)
        )
        done = "installed paneboard hooks in" if changed else "paneboard hooks already installed in"
        print(f"{done} {path} (mode {args.mode})")
        if args.mcp:
            _register(args, project)
        if args.target == "codex":
            _codex_trust(path, project, args.trust)
    else:
        trusted = _codex_entries(project) if args.target == "codex" else {}
        path, changed = settings.uninstall(args.target, project)
        print(f"{'removed paneboard hooks from' if changed else 'no paneboard hooks in'} {path}")
        if trusted:
            config = codex_trust.config_path(os.environ)
            if gone := codex_trust.remove_trust(config, trusted):
                print(f"removed the trust of {gone} paneboard hook(s) from {config}")
        if mcp:
            path, changed = mcpconfig.uninstall(args.target, project)
            if changed:
                print(f"removed the paneboard MCP server from {path}")


def _register(args: argparse.Namespace, project: Path) -> None:
    """`paneboard mcp` in the agent's project configuration, with the options given here."""
    exe = executable()
    server = mcpconfig.server_args(args.target, _given_options(args))
    path, changed = mcpconfig.install(args.target, project, exe, server)
    done = (
        "registered the paneboard MCP server in" if changed else "paneboard MCP server already in"
    )
    print(f"{done} {path} ({exe} mcp)")


def _codex_entries(project: Path) -> dict[str, str]:
    """The trust entries Codex's config would hold for paneboard's hooks in *project*."""
    hooks_json = settings.settings_path("codex", project)
    return codex_trust.wanted(hooks_json, settings.load(hooks_json), settings.is_ours)


def _codex_trust(hooks_json: Path, project: Path, trust: bool) -> None:
    """Say that Codex will ask to review the hooks; with --trust, record the trust as Codex does."""
    config = codex_trust.config_path(os.environ)
    if not trust:
        print(CODEX_REVIEW.format(config=config))
    else:
        entries = _codex_entries(project)
        changed = codex_trust.write_trust(config, entries)
        done = "trusted" if changed else "already trusted:"
        print(f"{done} {len(entries)} paneboard hook(s) in {config}")
    if not codex_trust.project_trusted(config, project):
        print(f"Codex reads {hooks_json} only in a trusted project; {project} is not trusted yet.")
