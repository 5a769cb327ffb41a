"""Processes as paneboard meets them: whether one is alive, waiting for one to end, and
finding the agent process above a hook.

Linux's ``/proc`` and pidfds where they exist; elsewhere a signal 0, and a check a second.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

# What a hook runs under on its way from the agent: skipped when looking for the agent.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "node"})
_AGENT_CLIS = (b"/claude", b"/codex", b"cli.js")


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


def cmdline(pid: int) -> list[bytes] | None:
    """The argv of process *pid*, from /proc (None where it cannot be read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None


def agent_pid(start: int | None = None) -> int:
    """The agent process: the first ancestor of *start* (this process's parent) that is not a
    shell (hooks run under `sh -c`)."""
    pid = os.getppid() if start is None else start
    for _ in range(8):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return pid
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name not in SHELLS or (name == "node" and _is_agent_cli(pid)):
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pid


def _is_agent_cli(pid: int) -> bool:
    argv = cmdline(pid)
    return argv is not None and any(part.endswith(_AGENT_CLIS) for part in argv[:3])
