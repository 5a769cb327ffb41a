"""Per-sender tallies of open prompts, so `post` can enforce `--max-open` without reading the log.

``HOME/BOARD/senders/SENDER.open`` holds a line ``RECIPIENT ID EXPIRES`` (``-`` for no
expiry) for each prompt SENDER left open for each recipient (names hold no spaces; a
plain format keeps `post` free of a parser's import). `post` reads and updates it under the
log's lock (standard library only); the commands that close prompts rebuild it from the fold
they already hold, so it corrects itself. It is a limit, not a record: a lost or stale tally
makes the limit looser or stricter for a while, and never loses a post.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

TYPE_CHECKING = False  # typing's import is a cost `paneboard post` does not pay
if TYPE_CHECKING:
    from paneboard.state.limit import OpenLimit

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.names import check_name
from paneboard.state.files import write_atomic
from paneboard.state.limit import refusal

# recipient -> [(prompt id, expires or None), ...]
Tally = dict[str, list[tuple[str, float | None]]]


def path_for(board_dir: Path, sender: str) -> Path:
    """The sender's tally file; a sender that is not a valid name is refused (`BadInput`)."""
    return board_dir / "senders" / f"{check_name('sender', sender)}.open"


def read(path: Path, now: float) -> Tally:
    """The tally, without expired prompts ({} when missing or not a regular file; unreadable
    lines are skipped)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return {}
            text = f.read().decode(errors="replace")
    except OSError:
        return {}
    tally: Tally = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            expires = None if parts[2] == "-" else float(parts[2])
        except ValueError:
            continue
        if expires is None or expires > now:
            tally.setdefault(parts[0], []).append((parts[1], expires))
    return tally


def write(path: Path, tally: Tally) -> None:
    """Replace the tally at *path* (in a `senders` folder that is not a link)."""
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
    except FileExistsError:
        raise BoardIOError(f"cannot update {path}: {path.parent} is not a folder") from None
    except OSError as exc:
        raise BoardIOError(f"cannot update {path}: {exc.strerror}") from exc
    if path.parent.is_symlink():
        raise BoardIOError(f"cannot update {path}: {path.parent} is a symlink")
    lines = "".join(
        f"{r} {pid} {'-' if exp is None else repr(exp)}\n"
        for r, ids in tally.items()
        for pid, exp in ids
    )
    try:
        write_atomic(path, lines.encode())
    except OSError as exc:
        raise BoardIOError(f"cannot update {path}: {exc.strerror}") from exc


def admit(limit: OpenLimit) -> None:
    """Count a new prompt in, or refuse it (`BadInput`) if any recipient is at the limit.
    Call under the log's lock."""
    sender, prompt_id = limit.prompt["sender"], limit.prompt["id"]
    to, expires = limit.prompt["to"], limit.prompt["expires"]
    path = path_for(limit.folder, sender)
    tally = read(path, time.time())
    for r in to:
        if len(tally.get(r, [])) >= limit.most:
            raise refusal(limit, r)
    for r in to:
        tally.setdefault(r, []).append((prompt_id, expires))
    write(path, tally)
