"""`paneboard post`: the one command agents run for every message, kept to the standard library
(see board/post.py)."""

from __future__ import annotations

import sys
from argparse import Namespace

from paneboard.board.context import Context
from paneboard.board.post import PromptRequest, append
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import BODY_MAX


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


def post_command(args: Namespace) -> None:
    request = PromptRequest(
        args.to,
        read_text(args.text, "prompt body"),
        priority=args.priority,
        thread=args.thread,
        reply_to=args.reply_to,
        ttl=args.ttl,
        max_open=args.max_open,
        notice=args.notice,
    )
    with Context.from_args(args) as ctx:
        posted = append(ctx, request)
    if args.json:
        from paneboard.cli.show import emit

        emit(posted.prompt())
    else:
        sys.stdout.write(f"{posted.id}\n")
