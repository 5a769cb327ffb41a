"""Small files written whole: a temporary file beside the target, renamed over it.

Standard library only (`paneboard post` writes its tally through it).
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600, durable: bool = False) -> None:
    """Replace *path* with *data*: readers see the old file or the new one, never a part.

    The temporary name carries the pid, so concurrent writers never share one. With
    *durable*, the data and the rename are on disk before this returns.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        sync_dir(path.parent)


def sync_dir(folder: Path) -> None:
    """Make a folder's entries (a new or renamed file) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
