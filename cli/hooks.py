"""`paneboard hook …`: install, uninstall, and the hooks the agents run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from paneboard.board.context import Context, executable
from paneboard.hooks import agents, codex_trust, mcpconfig, more, opencode, settings
from paneboard.hooks import stop as run
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import check_name
from paneboard.state.files import refuse_links
from paneboard.state.paths import default_board
from paneboard.state.stores import check_url, refuse_secret

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
    with ctx:
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
    refuse_secret(args.store)  # hooks and .mcp.json would carry it in plain text
    if args.target is None:
        raise BadInput(f"say which agent: paneboard hook {args.action} {'|'.join(more.ALL_AGENTS)}")
    for what, value in (("agent", args.agent), ("board", args.board)):
        if value is not None:
            check_name(what, value)  # written into every hook: refused here, not at each start
    check_url(args.store or "")
    project = (args.project or Path.cwd()).absolute()
    if not project.is_dir():
        what = (
            f"{project} is not a folder" if project.exists() else f"folder {project} does not exist"
        )
        raise BadInput(f"project {what}")
    if args.mcp:
        mcpconfig.config_path(args.target, project)  # claude and codex only: refused for others
    for path in _project_files(args, project):
        refuse_links(path, project)  # a cloned repository may plant one: refuse before writing
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
    if args.action == "install" and args.mcp:
        _register(args, project, write=False)  # every check of the write, before any write
    elif mcp:
        mcpconfig.check(args.target, project)  # and refuse a malformed one before writing
    if args.trust:
        _codex_trust_check(args, project)
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


def _project_files(args: argparse.Namespace, project: Path) -> list[Path]:
    """Every file of *project* this `hook install|uninstall` may write or remove."""
    if args.target == "opencode":
        return [opencode.plugin_path(project)]
    if args.target in agents.STOP_AGENTS:
        return [agents.STOP_AGENTS[args.target].path(project)]
    files = [settings.settings_path(args.target, project)]
    if args.mcp or args.action == "uninstall":
        files.append(mcpconfig.config_path(args.target, project))
    return files


def _register(args: argparse.Namespace, project: Path, *, write: bool = True) -> None:
    """`paneboard mcp` in the agent's project configuration, with the options given here."""
    exe = executable()
    server = mcpconfig.server_args(args.target, _given_options(args))
    path, changed = mcpconfig.install(args.target, project, exe, server, write=write)
    if not write:
        return
    done = (
        "registered the paneboard MCP server in" if changed else "paneboard MCP server already in"
    )
    print(f"{done} {path} ({exe} mcp)")


def _codex_entries(project: Path) -> dict[str, str]:
    """The trust entries Codex's config would hold for paneboard's hooks in *project*."""
    hooks_json = settings.settings_path("codex", project)
    return codex_trust.wanted(hooks_json, settings.load(hooks_json), settings.is_ours)


def _codex_trust_check(args: argparse.Namespace, project: Path) -> None:
    """Refuse (`BadInput`) the trust `install codex --trust` would record, before any write:
    the entries of the hooks.json it is about to write, checked against config.toml."""
    hooks_json = settings.settings_path("codex", project)
    commands = settings.hook_commands("codex", args.mode, executable(), _given_options(args))
    data = settings.with_ours(settings.load(hooks_json), commands)
    entries = codex_trust.wanted(hooks_json, data, settings.is_ours)
    codex_trust.write_trust(codex_trust.config_path(os.environ), entries, write=False)


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
