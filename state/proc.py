"""Processes as Linux's /proc shows them: a process's name, parent, command line, executable.

Each read answers None (or stops walking) when the process is gone or not readable: a
process can end between two reads, and callers treat that as "not the one we look for".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "node"})
_DEPTH = 8  # hooks run under a few shells at most; a deeper walk is a loop or not ours


def name_and_parent(pid: int) -> tuple[str, int] | None:
    """The process's name (`comm`, which may hold spaces and parentheses) and its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    return name, int(stat.rsplit(")", 1)[1].split()[1])


def cmdline(pid: int) -> list[str] | None:
    """The process's command line, one string per argument."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.decode(errors="replace").split("\0")


def executable(pid: int) -> str | None:
    """The file the process runs."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def option(argv: Sequence[str], name: str) -> str | None:
    """The value after *name* in *argv* (`--transcript PATH`), or None."""
    words = list(argv)
    return words[words.index(name) + 1] if name in words[:-1] else None


def agent_pid(clis: Sequence[str], start: int | None = None) -> int:
    """The agent process: the first ancestor that is not a shell (hooks run under `sh -c`).

    `node` counts as a shell unless one of its first arguments ends with one of *clis*
    (an agent CLI that runs on node, such as Claude Code's `cli.js`).
    """
    pid = os.getppid() if start is None else start
    for _ in range(_DEPTH):
        found = name_and_parent(pid)
        if found is None:
            return pid
        name, parent = found
        if name not in SHELLS or (name == "node" and _runs_cli(pid, clis)):
            return pid
        pid = parent
    return pid


def _runs_cli(pid: int, clis: Sequence[str]) -> bool:
    argv = cmdline(pid) or []
    return any(part.endswith(tuple(clis)) for part in argv[:3])
