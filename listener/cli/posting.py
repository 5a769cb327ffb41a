"""`paneboard post`: the one command agents run for every message, kept to the standard library."""

from __future__ import annotations

import os
import sys
import time
from argparse import Namespace

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


def prompt_fields(
    ctx: Context,
    to: list[str],
    body: str,
    priority: str,
    thread: str | None,
    reply_to: str | None,
    ttl: float | None,
) -> dict[str, object]:
    """A prompt's fields in wire order, every one checked."""
    recipients = list(dict.fromkeys(check_name("recipient", name) for name in to))
    if ttl is not None and not (0 < ttl < 10**9):
        raise BadInput(f"--ttl {ttl:g} is not a positive number of seconds")
    ts = time.time()
    return {
        "kind": "prompt",
        "id": new_id(ts, os.urandom(10)),
        "board": ctx.board,
        "sender": ctx.agent,
        "ts": ts,
        "to": recipients,
        "body": check_body("prompt body", body),
        "priority": check_priority(priority),
        "thread": None if thread is None else check_name("thread", thread),
        "reply_to": reply_to,
        "expires": None if ttl is None else ts + ttl,
    }


MAX_OPEN = 1000


def post_prompt(
    ctx: Context,
    to: list[str],
    body: str,
    priority: str,
    thread: str | None,
    reply_to: str | None,
    ttl: float | None,
    max_open: int = MAX_OPEN,
) -> dict[str, object]:
    """Check, then append a prompt durably; return its fields."""
    if reply_to is not None:
        from paneboard.listener.cli.board import resolve_id

        reply_to = resolve_id(ctx, reply_to)
    fields = prompt_fields(ctx, to, body, priority, thread, reply_to, ttl)
    payload = pack_post(fields)  # type: ignore[arg-type]  # values are the wire's types by construction
    ctx.paths.ensure()

    def within_limit() -> None:
        admit(
            ctx.paths.dir,
            ctx.board,
            ctx.agent,
            str(fields["id"]),
            fields["to"],  # type: ignore[arg-type]  # built above
            fields["expires"],  # type: ignore[arg-type]  # built above
            max_open,
        )

    if ctx.store_url:
        from paneboard.protocol.posts import decode

        ctx.store().append([decode(payload)], guard=within_limit)
    else:
        append_payloads(
            ctx.paths.log, [payload], guard=within_limit
        )  # the file log, without msgspec's import
    return fields


def post_command(args: Namespace) -> None:
    fields = post_prompt(
        Context.from_args(args),
        args.to,
        read_text(args.text, "prompt body"),
        args.priority,
        args.thread,
        args.reply_to,
        args.ttl,
        args.max_open,
    )
    if args.json:
        from paneboard.protocol.posts import decode, to_json

        # values are the wire's types by construction
        sys.stdout.buffer.write(to_json(decode(pack_post(fields))) + b"\n")  # type: ignore[arg-type]
    else:
        sys.stdout.write(f"{fields['id']}\n")
