"""Processes as Linux's /proc shows them: whether one is alive, waiting for one to end, a
process's name, parent, command line and executable, and the agent process above a hook.

Each read answers None (or stops walking) when the process is gone or not readable: a
process can end between two reads, and callers treat that as "not the one we look for".
Where there is no /proc or pidfd: a signal 0, and a check a second.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import anyio

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "node"})
_DEPTH = 8  # hooks run under a few shells at most; a deeper walk is a loop or not ours


def alive(pid: int, *, zombie: bool = True) -> bool:
    """Whether process *pid* exists (one of another user's counts); a zombie (ended, not yet
    reaped) counts unless *zombie* is False."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return zombie or not is_zombie(pid)


def is_zombie(pid: int) -> bool:
    """Whether *pid* has ended and waits to be reaped (False where /proc cannot say)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


async def wait_process_gone(pid: int) -> None:
    """Return once process *pid* has exited: a pidfd wakes us on Linux; elsewhere, a check a
    second."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        while alive(pid):  # noqa: ASYNC110  # no pidfd here: nothing to wait on but time
            await anyio.sleep(1.0)
        return
    try:
        await anyio.wait_readable(fd)
    finally:
        os.close(fd)


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
