"""`paneboard hook …`: install, uninstall, and the hooks the agents run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from paneboard.agents import AGENTS, DEFAULT_KIND, Agent, Change, Setup, by_kind
from paneboard.board.context import Context, executable
from paneboard.hooks import session
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import check_name
from paneboard.state.files import refuse_links
from paneboard.state.paths import default_board
from paneboard.state.stores import check_url, refuse_secret


def hook_command(args: argparse.Namespace) -> None:
    if args.action in ("install", "uninstall"):
        for change in _install(args):
            print(change)
        return
    agent = by_kind(args.kind or DEFAULT_KIND)
    data = session.read_hook_input()
    cwd = str(data.get("cwd") or os.getcwd())
    name, derived = session.agent_name(args.agent, agent.kind, cwd)
    board = os.environ.get("PANEBOARD_BOARD") or default_board(cwd)  # where the agent runs
    ctx = Context.from_args(args, board=board, agent=name)
    with ctx:
        if args.action == "session-start":
            mode = agent.check_mode(args.mode)
            print(session.session_start(ctx, agent, mode, derived, data))
        elif args.action == "session-end":
            session.session_end(ctx)
        else:
            if args.mode == "listen":  # the listener delivers; the hook revives a dead one
                if agent.idle_reply:
                    print(agent.idle_reply)
            else:
                from paneboard.hooks import stop  # the delivery at a Stop: only this hook's

                stop.stop(ctx, agent, args.cooldown, sys.stdout, agent.transcript(data))
            if args.mode in ("listen", "both"):
                session.revive(ctx, agent, data)


def _given_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
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
    return tuple(
        (flag, str(Path(value).absolute()) if flag in paths else value)
        for flag, value in given
        if value
    )


def _install(args: argparse.Namespace) -> list[Change]:
    """Install or uninstall one agent's hooks; every check before any write."""
    refuse_secret(args.store)  # hooks and .mcp.json would carry it in plain text
    if args.kind is None:
        raise BadInput(f"say which agent: paneboard hook {args.action} {'|'.join(AGENTS)}")
    agent = by_kind(args.kind)
    for what, value in (("agent", args.agent), ("board", args.board)):
        if value is not None:
            check_name(what, value)  # written into every hook: refused here, not at each start
    check_url(args.store or "")
    setup = Setup(
        project=project_folder(args.project),
        exe=executable(),
        mode=agent.check_mode(args.mode),
        options=_given_options(args),
        mcp=args.mcp,
        trust=args.trust,
        env=os.environ,
    )
    _refuse_unsupported(agent, setup, args.action)
    for path in agent.files(setup, args.action):
        refuse_links(path, setup.project)  # a cloned repository may plant one: refuse first
    woken = _wake_policy(args, agent, setup) if args.wake else []
    return woken + list(
        agent.install(setup) if args.action == "install" else agent.uninstall(setup)
    )


def _wake_policy(args: argparse.Namespace, agent: Agent, setup: Setup) -> list[Change]:
    """`hook install --wake`: the agent's policy on its board set to `--wake resume`, confirmed
    on the terminal as any change of policy is (board/confirm.py)."""
    from paneboard.board import policy as board_policy
    from paneboard.board.confirm import confirm

    if args.action != "install":
        raise BadInput("--wake goes with `paneboard hook install`")
    name = args.agent or session.agent_name(None, agent.kind, str(setup.project))[0]
    board = args.board or os.environ.get("PANEBOARD_BOARD") or default_board(str(setup.project))
    with Context.from_args(args, board=board, agent=name) as ctx:
        current = board_policy.policy_of(ctx)
        new = board_policy.changed(current, wake="resume")
        if new != current:
            confirm(f"change the policy of `{ctx.agent}` on board `{ctx.board}`?")
            board_policy.set_policy(ctx, new)
        path = ctx.paths.pane(ctx.agent).policy
    return [Change(f"policy of `{name}` on board `{board}`: wake resume", path, new != current)]


def project_folder(given: Path | None) -> Path:
    project = (given or Path.cwd()).absolute()
    if not project.is_dir():
        what = (
            f"{project} is not a folder" if project.exists() else f"folder {project} does not exist"
        )
        raise BadInput(f"project {what}")
    return project


def _refuse_unsupported(agent: Agent, setup: Setup, action: str) -> None:
    """--mcp for an agent with no MCP file, --trust for one whose hooks need none."""
    if setup.mcp and agent.mcp is None:
        kinds = " or ".join(a.kind for a in AGENTS.values() if a.mcp is not None)
        raise BadInput(f"--mcp registers the server with {kinds}, not {agent.kind}")
    if setup.trust and not (action == "install" and agent.trusts):
        kinds = " or ".join(a.kind for a in AGENTS.values() if a.trusts)
        raise BadInput(f"--trust goes with `paneboard hook install {kinds}`")
