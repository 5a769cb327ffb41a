"""The MCP tools: each runs one operation of `board/` as the server's agent, home, board and
store, and returns its result as structured content (``msgspec.to_builtins``; a list wrapped
in an object, as MCP asks) plus a short text for the model. Each tool's docstring is the
description its client reads.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
import msgspec
from mcp.server.mcpserver import Context as ToolContext
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from paneboard.board import close, read
from paneboard.board.body import read_body
from paneboard.board.context import Context
from paneboard.board.post import PromptRequest
from paneboard.board.post import post as post_prompt
from paneboard.board.read import OpenPrompt
from paneboard.board.text import log_line, status_lines, who_line
from paneboard.board.wait import WaitOutcome, wait_for
from paneboard.board.who import who
from paneboard.protocol.posts import Kind, Priority, Prompt
from paneboard.protocol.visible import one_line, visible
from paneboard.state.fold import PromptState, stage

# The words of protocol/words.py as types the SDK turns into JSON schema: the posts' own, and the
# stages `wait` takes (a test keeps them equal).
Until = Literal["delivered", "seen", "read", "closed"]
Id = Annotated[str, Field(description="a post id, or a unique prefix of at least 4 characters")]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Notice = Annotated[
    bool,
    Field(
        description="only a notice reaches the recipients (sender, id, size, never the body); "
        "they read the body with `read`"
    ),
]
Tool = ToolContext[Context, Any]
Waiting = Callable[[Callable[[PromptState], Awaitable[None]]], Awaitable[list[WaitOutcome]]]

# Under the 60 s after which Codex (and clients on the TypeScript SDK) drop a tool call; the
# descriptions of `wait` and `ask` name it.
WAIT_TIMEOUT = 50.0
PROGRESS_EVERY = 5.0
LOG_LIMIT = 50
LOG_MAX = 1000


def post(
    to: Annotated[list[str], Field(min_length=1, description="recipient agent names")],
    body: Annotated[str, Field(description="the prompt: what you want the recipient to do")],
    tool: Tool,
    priority: Priority = "normal",
    thread: Annotated[
        str | None, Field(description="a thread name grouping related prompts")
    ] = None,
    reply_to: Annotated[
        str | None, Field(description="the id of a post this one answers to")
    ] = None,
    ttl: Annotated[float | None, Field(description="expire after this many seconds")] = None,
    notice: Notice = False,
) -> CallToolResult:
    """Post a prompt to one or more agents on the board: it is handed to each recipient's
    session through its door. Use it to give another agent work without waiting. Returns the
    prompt (its `id` closes, cancels or waits on it)."""
    request = PromptRequest(
        to, body, priority=priority, thread=thread, reply_to=reply_to, ttl=ttl, notice=notice
    )
    prompt = post_prompt(board(tool), request)
    return result(prompt, f"posted prompt {prompt.id} to {', '.join(prompt.to)}")


def open_(tool: Tool) -> CallToolResult:
    """The prompts open for you (not yet acked or answered), urgent first, oldest first. Use it
    to see what other agents asked of you. Returns `prompts`, each with the `verdict` on its
    signature (verified, unsigned or forged) and the `key` that signed it, and `held`: those
    held for a person (by your policy or your agent), with who sent them and why, but not their
    text; only a decision asked on a terminal lets them through."""
    ctx = board(tool)
    rows = read.open_prompts(ctx)
    me = f"`{ctx.agent}` on board `{ctx.board}`"
    text = "\n\n".join(map(open_text, rows)) if rows else f"no prompts open for {me}"
    held = [HeldRow(r.prompt.id, r.prompt.sender, r.held_by, r.reason) for r in rows if r.held]
    found: dict[str, object] = {"prompts": [read.open_row(r) for r in rows if not r.held]}
    return result({**found, "held": held} if held else found, text)


class HeldRow(msgspec.Struct, frozen=True):
    """A prompt open for the agent that waits for a person: who sent it, who holds it, and why
    (its text reaches the agent once it is approved at a terminal)."""

    id: str
    sender: str
    by: str | None
    reason: str | None


def ack(
    id: Id,
    tool: Tool,
    note: Annotated[str | None, Field(description="a short note for the sender")] = None,
) -> CallToolResult:
    """Close a prompt you received without an answer (optionally with a short note). Returns
    the ack."""
    done = close.ack(board(tool), id, note)
    return result(done, f"acked prompt {done.prompt_id}")


def answer(
    id: Id,
    body: Annotated[str, Field(description="your answer, sent back to the prompt's sender")],
    tool: Tool,
) -> CallToolResult:
    """Close a prompt you received with your answer; the sender's `wait` or `ask` returns it.
    Use it when you have done what a prompt asked. Returns the answer post."""
    done = close.answer(board(tool), id, body)
    return result(done, f"answered prompt {done.prompt_id}")


def cancel(id: Id, tool: Tool) -> CallToolResult:
    """Withdraw a prompt you sent, for every recipient still holding it. Returns the cancel
    post."""
    done = close.cancel(board(tool), id)
    return result(done, f"cancelled prompt {done.prompt_id}")


def status(id: Id, tool: Tool) -> CallToolResult:
    """Where a prompt stands for each recipient: posted, delivered, undelivered, seen (the
    recipient's model has it), read (its text read with `read`), acked, answered, cancelled or
    expired, with answers and notes, and each stage it reached with its time. Returns the
    prompt with `recipients` and `stages`."""
    done = read.prompt_status(board(tool), id)
    return result(done, "\n".join(status_lines(done)))


def read_(id: Id, tool: Tool) -> CallToolResult:
    """Read a prompt sent to you: its text as it would arrive as a message (who sent it, what
    paneboard checked of the sender, the sender's words quoted apart with `> `, how to close
    it). Use it when you are told of a prompt by its id (a notice) rather than given its text.
    The first reading tells the sender you read it (a `read` receipt). Returns `prompt`, `text`,
    `receipt` (null when you had read it before) and `read_at`."""
    done = read_body(board(tool), id, "mcp", time.time())
    return result(done, done.text)


async def wait(
    id: Id,
    tool: Tool,
    until: Until = "closed",
    timeout: Seconds = WAIT_TIMEOUT,  # noqa: ASYNC109  # the contract's argument name
) -> CallToolResult:
    """Block until a prompt is closed (or delivered, seen by the model, or read, with
    until=delivered, until=seen or until=read) for every recipient, then return each
    recipient's stage and answer as `outcomes`. Fails when the prompt is cancelled or
    expires, or after `timeout` seconds (default 50); call it again to keep waiting."""
    ctx = board(tool)
    done = await _waiting(
        tool,
        f"prompt {id} to be {until}",
        timeout,
        lambda seen: wait_for(ctx, id, until, timeout, seen),
    )
    return result({"outcomes": done}, outcome_text(done))


async def ask(
    to: Annotated[str, Field(description="the one agent to ask")],
    body: Annotated[str, Field(description="the prompt")],
    tool: Tool,
    priority: Priority = "normal",
    timeout: Seconds = WAIT_TIMEOUT,  # noqa: ASYNC109  # the contract's argument name
    notice: Notice = False,
) -> CallToolResult:
    """Post a prompt to one agent and wait until it answers (or acks): the answer is returned
    in `outcomes`. Fails after `timeout` seconds (default 50); the prompt stays open, and
    `wait` with its id keeps waiting."""
    ctx = board(tool)
    request = PromptRequest([to], body, priority=priority, notice=notice)
    prompt = await anyio.to_thread.run_sync(post_prompt, ctx, request)
    done = await _waiting(
        tool,
        f"{to} to close prompt {prompt.id}",
        timeout,
        lambda seen: wait_for(ctx, prompt.id, "closed", timeout, seen),
    )
    return result({"prompt": prompt, "outcomes": done}, outcome_text(done))


def who_(tool: Tool) -> CallToolResult:
    """The agents on the board: whether a listener holds each one's pane, its door and its
    last delivery. Returns `agents`."""
    rows = who(board(tool))
    text = "\n".join(map(who_line, rows)) or "no agents on the board yet"
    return result({"agents": rows}, text)


def log(
    tool: Tool,
    kind: Kind | None = None,
    after: Annotated[
        str | None, Field(description="start after this post id (default: the newest posts)")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=LOG_MAX)] = LOG_LIMIT,
) -> CallToolResult:
    """The board's posts in log order (prompts, acks, answers, cancels, receipts): the newest
    `limit` (default 50), or the first `limit` after post `after`; `kind` keeps one kind.
    Returns `posts`, each with its `verdict` (verified, unsigned or forged: only a verified post
    moves a prompt's stage), and `more` (how many follow)."""
    page = read.read_log(board(tool), () if kind is None else (kind,), after, limit)
    lines = map(log_line, page.posts, page.verdicts)
    text = "\n".join(lines) or "no posts"
    if page.more:
        text += f"\n({page.more} more: call log with after={page.posts[-1].id})"
    return result({"posts": page.marked(), "more": page.more}, text)


TOOLS: dict[str, Callable[..., Any]] = {
    "post": post,
    "open": open_,
    "ack": ack,
    "answer": answer,
    "cancel": cancel,
    "status": status,
    "read": read_,
    "wait": wait,
    "ask": ask,
    "who": who_,
    "log": log,
}


def board(tool: Tool) -> Context:
    """The context the server acts as (its agent, home, board and store)."""
    return tool.request_context.lifespan_context


def result(data: object, text: str) -> CallToolResult:
    """Structured content (the result's fields, as ``--json`` writes them) plus a short text."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=msgspec.to_builtins(data),
    )


def quoted(text: str) -> str:
    """A sender's words as the model reads them: every line starts with ``> `` (as in compose),
    so no body can imitate a line of the tool's own."""
    return "\n".join("> " + line for line in visible(text).split("\n"))


def prompt_text(p: Prompt) -> str:
    return one_line(f"prompt {p.id} from {p.sender} [{p.priority}]:") + "\n" + quoted(p.body)


def open_text(row: OpenPrompt) -> str:
    """A prompt of `open`: its first line, paneboard's lines on what it checked of the sender
    (as every door's text has them), and the sender's words; for one held for a person (which
    no tool can decide), why instead of its words, which wait for the person too."""
    first, words = prompt_text(row.prompt).split("\n", 1)
    if not row.held:
        return "\n".join([first, *row.told, words])
    why = one_line(f"held by the {row.held_by}: {row.reason}")
    until = "it waits for a decision asked on a terminal, which no tool makes; its text waits too"
    return "\n".join([first, *row.told, f"({why}; {until})"])


def outcome_text(outcomes: list[WaitOutcome]) -> str:
    lines = []
    for row in outcomes:
        if row.answer is not None:
            lines.append(one_line(f"{row.recipient} answered:") + "\n" + quoted(row.answer))
        else:
            lines.append(one_line(f"{row.recipient}: {row.stage}"))
    return "\n".join(lines)


class Progress:
    """Progress notifications for one waiting call: at its start, whenever the prompt moves,
    and every `PROGRESS_EVERY` seconds; the value is the seconds waited, of *limit*."""

    def __init__(self, tool: Tool, what: str, limit: float) -> None:
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


async def _waiting(tool: Tool, what: str, limit: float, waiting: Waiting) -> list[WaitOutcome]:
    """Await *waiting* (called with the progress callback), reporting progress meanwhile."""
    progress = Progress(tool, what, limit)
    await progress.report()
    async with anyio.create_task_group() as tg:
        tg.start_soon(progress.ticks)
        try:
            done: list[WaitOutcome] = await waiting(progress.report)
        finally:
            tg.cancel_scope.cancel()
    return done
