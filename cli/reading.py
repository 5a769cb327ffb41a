"""Reading the board: `open`, `status`, `read`, `log` and `log --follow`."""

from __future__ import annotations

import signal
import sys
import time
from argparse import Namespace
from collections.abc import Sequence

import anyio

from paneboard.board.body import read_body
from paneboard.board.context import Context
from paneboard.board.read import open_prompts, open_row, prompt_status, read_log
from paneboard.board.text import open_line, status_lines
from paneboard.board.trust import verdicts_for
from paneboard.cli.show import emit, print_posts
from paneboard.protocol.errors import BadInput
from paneboard.protocol.posts import Post


def open_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        prompts = open_prompts(ctx)
    for row in prompts:
        if args.json:
            emit(open_row(row))
        else:
            print(open_line(row))


def status_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        status = prompt_status(ctx, args.id)
    if args.json:
        emit(status)
    else:
        print("\n".join(status_lines(status)))


def read_command(args: Namespace) -> None:
    """The prompt's text as its door hands it over; the first reading posts `read`."""
    with Context.from_args(args) as ctx:
        done = read_body(ctx, args.id, "cli", time.time())
    if args.json:
        emit(done)
    else:
        sys.stdout.write(done.text)


def log_command(args: Namespace) -> None:
    if args.follow and (args.after is not None or args.limit is not None):
        raise BadInput("log --follow prints every post from the start: drop --after and --limit")
    with Context.from_args(args) as ctx:
        if args.follow:
            _follow(ctx, args.kind or (), json=args.json)
            return
        page = read_log(ctx, args.kind or (), args.after, args.limit)
    print_posts(zip(page.posts, page.verdicts, strict=True), json=args.json)
    if page.more:
        more = f"{page.more} more posts: log --after {page.posts[-1].id}"
        print(f"paneboard: {more}", file=sys.stderr)


def _follow(ctx: Context, kinds: Sequence[str], *, json: bool) -> None:
    """Print the log's posts of *kinds*, each with its verdict, as they are appended, until
    SIGINT or SIGTERM (a compacted log's posts come again, from its start)."""
    verdicts = verdicts_for(ctx)

    async def follow() -> None:
        follower = ctx.store().follow(0)
        try:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async with anyio.create_task_group() as tg:

                    async def stop() -> None:
                        async for _ in signals:
                            tg.cancel_scope.cancel()

                    tg.start_soon(stop)
                    while True:
                        for batch in follower.records():
                            new = [(p, payload) for _, p, payload in batch if _kept(p, kinds)]
                            print_posts(
                                ((p, verdicts.verdict(p.sender, b)) for p, b in new), json=json
                            )
                        await follower.wait_changed()
        finally:
            follower.close()

    anyio.run(follow)


def _kept(post: Post, kinds: Sequence[str]) -> bool:
    return not kinds or post.__struct_config__.tag in kinds
