"""`paneboard post`: the one command agents run for every message, kept to the standard library."""

from __future__ import annotations

import os
import sys
import time

from paneboard.listener.context import Context
from paneboard.protocol.errors import BadInput
from paneboard.protocol.ids import new_id
from paneboard.protocol.names import check_body, check_name, check_priority
from paneboard.protocol.wire import pack_post
from paneboard.state.append import append_payloads
from paneboard.state.tally import admit


def read_text(words: list[str], what: str) -> str:
    """The text given as words, or read from stdin when it is ``-``."""
    if words == ["-"]:
        try:
            return sys.stdin.buffer.read().decode()
        except UnicodeDecodeError:
            raise BadInput(f"{what} read from stdin is not valid UTF-8") from None
    return " ".join(words)


def prompt_fields(ctx: Context, to: list[str], body: str, priority: str, thread: str | None, reply_to: str | None, ttl: float | None) -> dict[str, object]:  # fmt: skip
    """A prompt's fields in wire order, every one checked."""
    recipients = list(dict.fromkeys(check_name("recipient", name) for name in to))
    if ttl is not None and not (0 < ttl < 10**9):
        raise BadInput(f"--ttl {ttl:g} is not a positive number of seconds")
    ts = time.time()
    return {
        "kind": "prompt", "id": new_id(ts, os.urandom(10)), "board": ctx.board,
        "sender": ctx.agent, "ts": ts, "to": recipients, "body": check_body("prompt body", body),
        "priority": check_priority(priority), "thread": None if thread is None else check_name("thread", thread),
        "reply_to": reply_to, "expires": None if ttl is None else ts + ttl,
    }  # fmt: skip


MAX_OPEN = 1000


def post_prompt(ctx: Context, to: list[str], body: str, priority: str, thread: str | None, reply_to: str | None, ttl: float | None, max_open: int = MAX_OPEN) -> dict[str, object]:  # fmt: skip
    """Check, then append a prompt durably; return its fields."""
    if reply_to is not None:
        from paneboard.listener.board import resolve_id

        reply_to = resolve_id(ctx, reply_to)
    fields = prompt_fields(ctx, to, body, priority, thread, reply_to, ttl)
    payload = pack_post(fields)  # type: ignore[arg-type]  # values are the wire's types by construction
    ctx.paths.ensure()

    def within_limit() -> None:
        admit(ctx.paths.dir, ctx.board, ctx.agent, str(fields["id"]), fields["to"], fields["expires"], max_open)  # type: ignore[arg-type]  # built above

    if ctx.store_url:
        from paneboard.protocol.posts import decode

        ctx.store().append([decode(payload)], guard=within_limit)
    else:
        append_payloads(ctx.paths.log, [payload], guard=within_limit)  # the file log, without msgspec's import
    return fields


def run_post(ctx: Context, to: list[str], words: list[str], priority: str, thread: str | None, reply_to: str | None, ttl: float | None, max_open: int = MAX_OPEN) -> None:  # fmt: skip
    fields = post_prompt(ctx, to, read_text(words, "prompt body"), priority, thread, reply_to, ttl, max_open)
    if ctx.json:
        from paneboard.protocol.posts import decode, to_json

        sys.stdout.buffer.write(to_json(decode(pack_post(fields))) + b"\n")  # type: ignore[arg-type]  # as above
    else:
        sys.stdout.write(f"{fields['id']}\n")
