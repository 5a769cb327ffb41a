"""The board as MCP tools over stdio, for any MCP client (`paneboard mcp`, extra `mcp`).

The tools (tools.py) run the operations of `board/` as the agent, home, board and store of
the server's options. A refusal is a tool error whose text is the command's one-line message;
nothing a client sends ends the server.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
)
from pydantic import ValidationError

from paneboard.board.context import Context
from paneboard.board.errors import error_message, unwrap
from paneboard.mcpserver.tools import TOOLS
from paneboard.protocol.visible import one_line


class BoardServer(MCPServer[Context]):
    """The SDK's server, with every failure of a tool turned into paneboard's one-line message."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise ToolError(refusal(exc)) from exc


def refusal(exc: ToolError) -> str:
    """The one line a client reads for a failed call: the command's message where there is one."""
    cause = None if exc.__cause__ is None else unwrap(exc.__cause__)
    if cause is None:  # the SDK's own refusal: an unknown tool, say
        return one_line(f"paneboard: {exc}")
    if isinstance(cause, ValidationError):
        where = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in cause.errors()
        )
        return one_line(f"paneboard: bad arguments: {where}")
    return error_message(cause) or one_line(
        f"paneboard: internal error: {type(cause).__name__}: {cause}"
    )


def create_server(ctx: Context) -> BoardServer:
    """The server with its eleven tools, each acting as *ctx* (its agent, home, board and store)."""

    @asynccontextmanager
    async def acting_as(_: MCPServer[Context]) -> AsyncIterator[Context]:
        yield ctx  # what every tool call acts as (`tools.board`)

    me = f"`{ctx.agent}` on board `{ctx.board}`"
    server = BoardServer(
        "paneboard",
        instructions=(
            "paneboard hands prompts between coding agents through a shared board. "
            f"You are agent {me}. A prompt for you arrives as a message naming its id (or as a "
            "notice naming only its id: `read` gives its text); when you have done it, close it "
            "with `answer` (or `ack` when there is nothing to say). "
            "Give work to another agent with `post` (or `ask` to post and wait for the answer "
            "in one call)."
        ),
        version=version("paneboard"),
        log_level="WARNING",
        lifespan=acting_as,
    )
    for name, fn in TOOLS.items():
        server.add_tool(fn, name=name, description=description(fn), structured_output=False)
    return server


def description(tool: Callable[..., Any]) -> str:
    """A tool's docstring as the one paragraph its client reads."""
    return " ".join((tool.__doc__ or "").split())


def serve(ctx: Context) -> None:
    """Serve *ctx*'s board on stdin/stdout until the client closes them, or SIGINT/SIGTERM."""
    ctx.store()  # opened once, before the tools' threads share it (a store that fails, fails here)
    server = create_server(ctx)

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def stop() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        tg.cancel_scope.cancel()

            tg.start_soon(stop)
            await run_stdio(server)
            tg.cancel_scope.cancel()

    anyio.run(main)


async def run_stdio(server: BoardServer) -> None:
    """The SDK's stdio transport, except that a line it cannot read (not JSON, or JSON its
    parser refuses, such as a lone surrogate) gets a JSON-RPC parse error: the SDK itself
    drops such a line without an answer, and its client would wait for its own timeout."""
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (lines, out):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception]()

        async def relay() -> None:
            async with send:
                async for item in lines:
                    if isinstance(item, Exception):
                        await out.send(SessionMessage(unreadable(item)))
                    else:
                        await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            low = server._lowlevel_server  # as the SDK's own run_stdio_async does
            await low.run(receive, out, low.create_initialization_options())


def unreadable(exc: Exception) -> JSONRPCError:
    """The parse error (-32700) for a line the SDK could not read; its id, when Python's own
    JSON parser can still find one, so the client's waiting request ends."""
    line = _line_of(exc)
    try:
        found = _top_level(line).get("id") if line is not None else None
    except (ValueError, AttributeError):
        found = None
    request_id = found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
    message = one_line(f"Parse error: {detail}")
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=PARSE_ERROR, message=message)
    )


def _top_level(line: str) -> Any:
    """*line* as JSON; one nested deeper than Python's recursion limit (the SDK refuses 500
    levels, Python's parser stops near 1000) is read with every value below its top level
    taken for null: its own fields, the id among them, are all there is to find."""
    try:
        return json.loads(line)
    except RecursionError:
        return json.loads(_shallow(line))


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}]')  # a JSON string (skipped whole), a bracket


def _shallow(line: str) -> str:
    """*line* with each array or object inside its top-level value replaced by ``null``."""
    pieces, depth, kept = [], 0, 0
    for token in _TOKENS.finditer(line):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth == 2:
                pieces += [line[kept : token.start()], "null"]
        elif mark in "]}":
            depth -= 1
            if depth == 1:
                kept = token.end()
    return "".join(pieces) + (line[kept:] if depth <= 1 else "")


def _line_of(exc: Exception) -> str | None:
    if isinstance(exc, ValidationError) and exc.errors():
        line = exc.errors()[0].get("input")
        return line if isinstance(line, str) else None
    return None
