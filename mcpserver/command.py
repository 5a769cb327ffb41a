"""`paneboard mcp`: serve the board as MCP tools on stdin/stdout (the server is server.py)."""

from __future__ import annotations

import os
from argparse import Namespace

from paneboard.board.context import Context
from paneboard.protocol.lazy import require_extra


def mcp_command(args: Namespace) -> None:
    require_extra("mcp", "mcp", "`paneboard mcp`")
    from paneboard.mcpserver.server import serve

    if args.agent is None and args.kind and not os.environ.get("PANEBOARD_AGENT"):
        from paneboard.hooks.session import agent_name

        args.agent = agent_name(None, args.kind, os.getcwd())[0]
    with Context.from_args(args) as ctx:
        serve(ctx)
