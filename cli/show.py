"""What the commands show: JSON lines, and the log's lines, on stdout."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from paneboard.board.text import describe
from paneboard.protocol.posts import Post, to_json
from paneboard.protocol.visible import one_line


def emit(obj: object) -> None:
    """One JSON line on stdout (a text stream without a buffer, as in tests, gets it decoded)."""
    write_json_line(to_json(obj))


def write_json_line(data: bytes) -> None:
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        sys.stdout.write(data.decode() + "\n")
    else:
        out.write(data + b"\n")
    sys.stdout.flush()


def print_posts(posts: Iterable[Post], *, json: bool) -> None:
    """Each post as a JSON line, or as a line of `log`."""
    for post in posts:
        if json:
            emit(post)
        else:
            print(one_line(describe(post)), flush=True)
