"""The board as MCP tools over stdio, for any MCP client (`paneboard mcp`, extra `mcp`).

Each tool runs the same function as its command (cli/closing.py, posting.py,
reading.py, waiting.py, who.py), as the agent, home, board and store of the server's options.
A result is structured content (the command's ``--json`` objects; a list is wrapped in an
object, as MCP asks) plus a short text for the model. A refusal is a tool error whose text is
the command's one-line message; nothing a client sends ends the server.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Awaitable, Callable
from importlib.metadata import version
from typing import Annotated, Any, Literal

import anyio
import msgspec
from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
    TextContent,
)
from pydantic import Field, ValidationError

from paneboard.board.context import Context
from paneboard.cli import closing, error_message, one_line, reading, unwrap
from paneboard.cli.board import describe, match_id
from paneboard.cli.posting import PromptRequest, post_prompt
from paneboard.cli.waiting import outcomes, wait_for
from paneboard.cli.who import who, who_line
from paneboard.protocol.posts import Post, Prompt, decode, to_json
from paneboard.protocol.visible import visible
from paneboard.protocol.wire import pack_post
from paneboard.state.fold import PromptState, stage

# The words of protocol/words.py, as types the SDK turns into JSON schema (a test keeps them equal).
Priority = Literal["low", "normal", "high", "urgent"]
Kind = Literal[
    "prompt",
    "ack",
    "answer",
    "cancel",
    "delivered",
    "undelivered",
    "seen",
    "held",
    "approved",
    "refused",
]
Until = Literal["delivered", "seen", "closed"]
Id = Annotated[str, Field(description="a post id, or a unique prefix of at least 4 characters")]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]

# Under the 60 s after which Codex (and clients on the TypeScript SDK) drop a tool call.
WAIT_TIMEOUT = 50.0
PROGRESS_EVERY = 5.0
LOG_LIMIT = 50
LOG_MAX = 1000
Waiting = Callable[[Callable[[PromptState], Awaitable[None]]], Awaitable[PromptState]]


class BoardServer(MCPServer[Any]):
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


def result(data: object, text: str) -> CallToolResult:
    """Structured content (as the command's ``--json`` writes it) plus a short text."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=builtins(data)
    )


def builtins(data: object) -> Any:
    """*data* as JSON values, encoded exactly as ``--json`` encodes it."""
    return msgspec.json.decode(to_json(data))


def as_prompt(fields: dict[str, Any]) -> Prompt:
    """The prompt `post_prompt` wrote, as `post --json` prints it."""
    prompt = decode(pack_post(fields))
    assert isinstance(prompt, Prompt)
    return prompt


def quoted(text: str) -> str:
    """A sender's words as the model reads them: every line starts with ``> `` (as in compose),
    so no body can imitate a line of the tool's own."""
    return "\n".join("> " + line for line in visible(text).split("\n"))


def prompt_text(p: Prompt) -> str:
    return one_line(f"prompt {p.id} from {p.sender} [{p.priority}]:") + "\n" + quoted(p.body)


def outcome_text(rows: list[dict[str, str | None]]) -> str:
    lines = []
    for row in rows:
        answer = row["answer"]
        if answer is not None:
            lines.append(one_line(f"{row['recipient']} answered:") + "\n" + quoted(answer))
        else:
            lines.append(one_line(f"{row['recipient']}: {row['stage']}"))
    return "\n".join(lines)


def create_server(ctx: Context) -> BoardServer:
    """The server with its ten tools, each acting as *ctx* (its agent, home, board and store)."""
    me = f"`{ctx.agent}` on board `{ctx.board}`"
    server = BoardServer(
        "paneboard",
        instructions=(
            "paneboard hands prompts between coding agents through a shared board. "
            f"You are agent {me}. A prompt for you arrives as a message naming its id; when "
            "you have done it, close it with `answer` (or `ack` when there is nothing to say). "
            "Give work to another agent with `post` (or `ask` to post and wait for the answer "
            "in one call)."
        ),
        version=version("paneboard"),
        log_level="WARNING",
    )

    def post(
        to: Annotated[list[str], Field(min_length=1, description="recipient agent names")],
        body: Annotated[str, Field(description="the prompt: what you want the recipient to do")],
        priority: Priority = "normal",
        thread: Annotated[
            str | None, Field(description="a thread name grouping related prompts")
        ] = None,
        reply_to: Annotated[
            str | None, Field(description="the id of a post this one answers to")
        ] = None,
        ttl: Annotated[float | None, Field(description="expire after this many seconds")] = None,
    ) -> CallToolResult:
        request = PromptRequest(
            to, body, priority=priority, thread=thread, reply_to=reply_to, ttl=ttl
        )
        prompt = as_prompt(post_prompt(ctx, request))
        return result(prompt, f"posted prompt {prompt.id} to {', '.join(prompt.to)}")

    def ack(
        id: Id, note: Annotated[str | None, Field(description="a short note for the sender")] = None
    ) -> CallToolResult:
        done = closing.run_ack(ctx, id, note)
        return result(done, f"acked prompt {done.prompt}")

    def answer(
        id: Id,
        body: Annotated[str, Field(description="your answer, sent back to the prompt's sender")],
    ) -> CallToolResult:
        done = closing.run_answer(ctx, id, body)
        return result(done, f"answered prompt {done.prompt}")

    def cancel(id: Id) -> CallToolResult:
        done = closing.run_cancel(ctx, id)
        return result(done, f"cancelled prompt {done.prompt}")

    def open_() -> CallToolResult:
        prompts = reading.open_prompts(ctx)
        text = "\n\n".join(map(prompt_text, prompts)) if prompts else f"no prompts open for {me}"
        return result({"prompts": prompts}, text)

    def status(id: Id) -> CallToolResult:
        ps, stages = reading.prompt_status(ctx, id)
        return result(
            reading.status_object(ps, stages), "\n".join(reading.status_lines(ps, stages))
        )

    async def wait(
        id: Id,
        tool: ToolContext,
        until: Until = "closed",
        timeout: Seconds = WAIT_TIMEOUT,  # noqa: ASYNC109  # the contract's argument name
    ) -> CallToolResult:
        ps = await _waiting(
            tool,
            f"prompt {id} to be {until}",
            timeout,
            lambda seen: wait_for(ctx, id, until, timeout, seen),
        )
        rows = outcomes(ps)
        return result({"outcomes": rows}, outcome_text(rows))

    async def ask(
        to: Annotated[str, Field(description="the one agent to ask")],
        body: Annotated[str, Field(description="the prompt")],
        tool: ToolContext,
        priority: Priority = "normal",
        timeout: Seconds = WAIT_TIMEOUT,  # noqa: ASYNC109  # the contract's argument name
    ) -> CallToolResult:
        request = PromptRequest([to], body, priority=priority)
        prompt = as_prompt(await anyio.to_thread.run_sync(post_prompt, ctx, request))
        ps = await _waiting(
            tool,
            f"{to} to close prompt {prompt.id}",
            timeout,
            lambda seen: wait_for(ctx, prompt.id, "closed", timeout, seen),
        )
        rows = outcomes(ps)
        return result({"prompt": prompt, "outcomes": rows}, outcome_text(rows))

    def who_() -> CallToolResult:
        rows = who(ctx)
        return result(
            {"agents": rows},
            "\n".join(who_line(row) for row in rows) or "no agents on the board yet",
        )

    def log(
        kind: Kind | None = None,
        after: Annotated[
            str | None, Field(description="start after this post id (default: the newest posts)")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=LOG_MAX)] = LOG_LIMIT,
    ) -> CallToolResult:
        posts, more = select(ctx, kind, after, limit)
        text = "\n".join(one_line(describe(p)) for p in posts) or "no posts"
        if more:
            text += f"\n({more} more: call log with after={posts[-1].id})"
        return result({"posts": posts, "more": more}, text)

    for fn, name, description in (
        (post, "post", POST),
        (open_, "open", OPEN),
        (ack, "ack", ACK),
        (answer, "answer", ANSWER),
        (cancel, "cancel", CANCEL),
        (status, "status", STATUS),
        (wait, "wait", WAIT),
        (ask, "ask", ASK),
        (who_, "who", WHO),
        (log, "log", LOG),
    ):
        server.add_tool(fn, name=name, description=description, structured_output=False)
    return server


class Progress:
    """Progress notifications for one waiting call: at its start, whenever the prompt moves,
    and every `PROGRESS_EVERY` seconds; the value is the seconds waited, of *limit*."""

    def __init__(self, tool: ToolContext, what: str, limit: float) -> None:
        self.tool, self.what, self.limit = tool, what, limit
        self.started = time.monotonic()
        self.last = -1.0
        self.stages = ""

    async def report(self, ps: PromptState | None = None) -> None:
        if ps is not None:
            now = time.time()
            self.stages = ", ".join(f"{name} {stage(ps, name, now)}" for name in ps.recipients)
        elapsed = max(self.last + 0.001, round(time.monotonic() - self.started, 3))  # increasing
        self.last = 0.0 if self.last < 0 else elapsed
        where = f" ({self.stages})" if self.stages else ""
        message = f"waiting for {self.what}{where}: {self.last:.0f} of {self.limit:g} s"
        await self.tool.report_progress(self.last, self.limit, message)

    async def ticks(self) -> None:
        while True:
            await anyio.sleep(PROGRESS_EVERY)
            await self.report()


async def _waiting(tool: ToolContext, what: str, limit: float, waiting: Waiting) -> PromptState:
    """Await *waiting*, reporting progress meanwhile."""
    progress = Progress(tool, what, limit)
    await progress.report()
    async with anyio.create_task_group() as tg:
        tg.start_soon(progress.ticks)
        try:
            done = await waiting(progress.report)
        finally:
            tg.cancel_scope.cancel()
    return done


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
        found = json.loads(line).get("id") if line is not None else None
    except (ValueError, AttributeError):
        found = None
    request_id = found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
    message = one_line(f"Parse error: {detail}")
    return JSONRPCError(
        jsonrpc="2.0", id=request_id, error=ErrorData(code=PARSE_ERROR, message=message)
    )


def _line_of(exc: Exception) -> str | None:
    if isinstance(exc, ValidationError) and exc.errors():
        line = exc.errors()[0].get("input")
        return line if isinstance(line, str) else None
    return None


def select(ctx: Context, kind: str | None, after: str | None, limit: int) -> tuple[list[Post], int]:
    """Up to *limit* posts of *kind*: the first after post *after*, else the newest; and how
    many more follow them."""
    everything = ctx.store().read_all()
    start = 0
    if after is not None:
        pid = match_id(ctx, everything, after)
        start = next(i for i, (_, p) in enumerate(everything) if p.id == pid) + 1
    posts = [p for _, p in everything[start:] if kind is None or p.__struct_config__.tag == kind]
    if after is None:
        return posts[-limit:], 0
    return posts[:limit], max(0, len(posts) - limit)


POST = (
    "Post a prompt to one or more agents on the board: it is handed to each recipient's "
    "session through its door. Use it to give another agent work without waiting. Returns "
    "the prompt (its `id` closes, cancels or waits on it)."
)
OPEN = (
    "The prompts open for you (not yet acked or answered), urgent first, oldest first. Use it "
    "to see what other agents asked of you. Returns `prompts`."
)
ACK = (
    "Close a prompt you received without an answer (optionally with a short note). Returns the ack."
)
ANSWER = (
    "Close a prompt you received with your answer; the sender's `wait` or `ask` returns it. Use "
    "it when you have done what a prompt asked. Returns the answer post."
)
CANCEL = (
    "Withdraw a prompt you sent, for every recipient still holding it. Returns the cancel post."
)
STATUS = (
    "Where a prompt stands for each recipient: posted, delivered, undelivered, seen (the "
    "recipient's model has it), acked, answered, cancelled or expired, with answers and notes. "
    "Returns the prompt with `recipients`."
)
WAIT = (
    "Block until a prompt is closed (or delivered, or seen by the model, with until=delivered "
    "or until=seen) for every recipient, "
    "then return each recipient's stage and answer as `outcomes`. Fails when the prompt is "
    f"cancelled or expires, or after `timeout` seconds (default {WAIT_TIMEOUT:g}); call it again "
    "to keep waiting."
)
ASK = (
    "Post a prompt to one agent and wait until it answers (or acks): the answer is returned in "
    f"`outcomes`. Fails after `timeout` seconds (default {WAIT_TIMEOUT:g}); the prompt stays "
    "open, and `wait` with its id keeps waiting."
)
WHO = (
    "The agents on the board: whether a listener holds each one's pane, its door and its last "
    "delivery. Returns `agents`."
)
LOG = (
    "The board's posts in log order (prompts, acks, answers, cancels, receipts): the newest "
    f"`limit` (default {LOG_LIMIT}), or the first `limit` after post `after`; `kind` keeps one "
    "kind. Returns `posts` and `more` (how many follow)."
)
