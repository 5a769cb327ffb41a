"""Posting a prompt: the one operation agents run for every message.

`append` is `paneboard post`'s path, kept to the standard library: it builds the prompt's
fields, packs them with the stdlib msgpack writer and appends the bytes, without importing
msgspec or typing (about half of a cold start). `post` is the same prompt as a `Prompt`
Struct, for the front ends that hold msgspec already.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from typing import Any

    from paneboard.protocol.posts import Prompt

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput
from paneboard.protocol.ids import header
from paneboard.protocol.names import check_body, check_name, check_priority, check_recipients
from paneboard.protocol.wire import pack_post
from paneboard.state.limit import OpenLimit

MAX_OPEN = 1000


class PromptRequest:
    """A prompt as asked for: recipients, body and options, not yet checked."""

    __slots__ = ("body", "max_open", "notice", "priority", "reply_to", "thread", "to", "ttl")

    def __init__(
        self,
        to: list[str],
        body: str,
        *,
        priority: str = "normal",
        thread: str | None = None,
        reply_to: str | None = None,
        ttl: float | None = None,
        max_open: int = MAX_OPEN,
        notice: bool = False,
    ) -> None:
        self.to, self.body, self.priority = to, body, priority
        self.thread, self.reply_to, self.ttl, self.max_open = thread, reply_to, ttl, max_open
        self.notice = notice  # only a notice may reach the recipient, never the body


class Posted:
    """A prompt as appended: its fields in wire order, every one checked."""

    __slots__ = ("fields",)

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    @property
    def id(self) -> str:
        return str(self.fields["id"])

    def prompt(self) -> Prompt:
        """The prompt as a Struct (this imports msgspec)."""
        import msgspec

        from paneboard.protocol.posts import Prompt

        return msgspec.convert(self.fields, Prompt)


def prompt_fields(ctx: Context, request: PromptRequest, reply_to: str | None) -> dict[str, Any]:
    """A prompt's fields in wire order, every one checked (*reply_to*: a whole id, or None)."""
    recipients = check_recipients(
        list(dict.fromkeys(check_name("recipient", name) for name in request.to))
    )
    ttl = request.ttl
    if ttl is not None and not (0 < ttl < 10**9):
        raise BadInput(
            f"--ttl {ttl:g} is out of range: give more than 0 and less than 10^9 seconds"
        )
    ts = time.time()
    return {
        "kind": "prompt",
        **header(ctx.board, ctx.agent, ts, os.urandom(10)),
        "to": recipients,
        "body": check_body("prompt body", request.body),
        "priority": check_priority(request.priority),
        "thread": None if request.thread is None else check_name("thread", request.thread),
        "reply_to": reply_to,
        "expires": None if ttl is None else ts + ttl,
        "notice": request.notice is True,
    }


def append(ctx: Context, request: PromptRequest) -> Posted:
    """Check, then append a prompt durably (standard library only, on the file log)."""
    reply_to = request.reply_to
    if reply_to is not None:
        from paneboard.board.lookup import resolve_id

        reply_to = resolve_id(ctx, reply_to)
    fields = prompt_fields(ctx, request, reply_to)
    payload = pack_post(fields)
    ctx.paths.ensure()
    limit = OpenLimit(fields, request.max_open, ctx.paths.dir)
    ctx.store().append_encoded([payload], limit=limit)  # the file log skips msgspec
    return Posted(fields)


def post(ctx: Context, request: PromptRequest) -> Prompt:
    """Check, then append a prompt durably; return it."""
    return append(ctx, request).prompt()
