"""`paneboard post`: the one command agents run for every message, kept to the standard library."""

from __future__ import annotations

import os
import sys
import time
from argparse import Namespace

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from typing import Any

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput
from paneboard.protocol.ids import new_id
from paneboard.protocol.names import (
    BODY_MAX,
    check_body,
    check_name,
    check_priority,
    check_recipients,
)
from paneboard.protocol.wire import pack_post
from paneboard.state.limit import OpenLimit


def read_text(words: list[str], what: str) -> str:
    """The text given as words, or read from stdin when it is ``-`` (at most one byte past
    the limit: an endless stdin is refused, not held in memory)."""
    if words == ["-"]:
        data = sys.stdin.buffer.read(BODY_MAX + 1)
        if len(data) > BODY_MAX:
            raise BadInput(f"{what} read from stdin is over {BODY_MAX} bytes (256 KiB), the limit")
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise BadInput(
                f"{what} read from stdin is not valid UTF-8 (byte 0x{data[exc.start]:02x} "
                f"at offset {exc.start})"
            ) from None
    text = " ".join(words)
    bad = next((i for i, ch in enumerate(text) if 0xDC80 <= ord(ch) <= 0xDCFF), None)
    if bad is not None:  # a byte the locale could not decode, kept by Python as a surrogate
        raise BadInput(
            f"{what} on the command line is not valid UTF-8 (byte 0x{ord(text[bad]) - 0xDC00:02x} "
            f"at character {bad})"
        )
    return text


MAX_OPEN = 1000


class PromptRequest:
    """A prompt as asked for: recipients, body and options, not yet checked."""

    __slots__ = ("body", "max_open", "priority", "reply_to", "thread", "to", "ttl")

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
    ) -> None:
        self.to, self.body, self.priority = to, body, priority
        self.thread, self.reply_to, self.ttl, self.max_open = thread, reply_to, ttl, max_open


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
        "id": new_id(ts, os.urandom(10)),
        "board": ctx.board,
        "sender": ctx.agent,
        "ts": ts,
        "to": recipients,
        "body": check_body("prompt body", request.body),
        "priority": check_priority(request.priority),
        "thread": None if request.thread is None else check_name("thread", request.thread),
        "reply_to": reply_to,
        "expires": None if ttl is None else ts + ttl,
    }


def post_prompt(ctx: Context, request: PromptRequest) -> dict[str, Any]:
    """Check, then append a prompt durably; return its fields."""
    reply_to = request.reply_to
    if reply_to is not None:
        from paneboard.cli.board import resolve_id

        reply_to = resolve_id(ctx, reply_to)
    fields = prompt_fields(ctx, request, reply_to)
    payload = pack_post(fields)
    ctx.paths.ensure()
    limit = OpenLimit(fields, request.max_open, ctx.paths.dir)
    ctx.store().append_encoded([payload], limit=limit)  # the file log skips msgspec
    return fields


def post_command(args: Namespace) -> None:
    request = PromptRequest(
        args.to,
        read_text(args.text, "prompt body"),
        priority=args.priority,
        thread=args.thread,
        reply_to=args.reply_to,
        ttl=args.ttl,
        max_open=args.max_open,
    )
    with Context.from_args(args) as ctx:
        fields = post_prompt(ctx, request)
    if args.json:
        from paneboard.cli.board import write_json_line
        from paneboard.protocol.posts import decode, to_json

        write_json_line(to_json(decode(pack_post(fields))))
    else:
        sys.stdout.write(f"{fields['id']}\n")
