"""What the commands show: JSON lines, and the log's lines, on stdout."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from paneboard.board.read import with_verdict
from paneboard.board.text import log_line
from paneboard.protocol.posts import Post, to_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from paneboard.protocol.signing import Verdict


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


def print_posts(posts: Iterable[tuple[Post, Verdict]], *, json: bool) -> None:
    """Each post with its verdict, as a JSON line (its fields, then ``verdict``), or as a line
    of `log` (marked when it is not verified)."""
    for post, verdict in posts:
        if json:
            emit(with_verdict(post, verdict))
        else:
            print(log_line(post, verdict), flush=True)
