"""Processes: alive or a zombie, waited for without polling, and the agent above a hook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import anyio

from paneboard.state.proc import agent_pid, alive, cmdline, is_zombie, wait_process_gone
from testing.helpers import wait_until


def test_an_ended_unreaped_child_is_a_zombie_and_counts_only_when_asked() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    wait_until(lambda: is_zombie(child.pid), "the child is a zombie")
    assert (True, False) == (alive(child.pid), alive(child.pid, zombie=False))
    child.wait()
    assert (False, False) == (alive(child.pid), is_zombie(child.pid))


def test_another_users_process_counts_as_alive() -> None:
    assert alive(1)  # init: another user's for a normal user, our own as root
    assert not is_zombie(1)


def test_waiting_for_a_process_returns_once_it_exits() -> None:
    reads = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    child = subprocess.Popen(reads, stdin=subprocess.PIPE)

    async def wait_while_it_ends() -> None:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait_process_gone, child.pid)
                await anyio.wait_all_tasks_blocked()
                assert child.stdin is not None
                child.stdin.close()  # the child reads to the end, and exits

    try:
        anyio.run(wait_while_it_ends)
    finally:
        child.wait()


def test_waiting_for_a_process_that_is_gone_returns_at_once() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()

    async def wait_briefly() -> None:
        with anyio.fail_after(1):
            await wait_process_gone(child.pid)

    anyio.run(wait_briefly)


def test_the_agent_is_the_first_ancestor_that_is_not_a_shell() -> None:
    """A hook runs under `sh -c` (and maybe more shells): the agent is above them."""
    shells = subprocess.Popen(["sh", "-c", "sh -c 'sleep 30; :'; :"], start_new_session=True)
    try:
        inner = wait_until(lambda: _child_of(shells.pid), "the inner shell started")
        assert (os.getpid(), os.getpid()) == (agent_pid([], inner), agent_pid([], shells.pid))
        assert os.getpid() == agent_pid([], os.getpid())  # not a shell: the agent itself
    finally:
        os.killpg(shells.pid, signal.SIGKILL)
        shells.wait()


def test_cmdline_is_the_argv_or_none() -> None:
    argv = [sys.executable, "-c", "import sys; sys.stdin.read()", "marker"]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE)
    try:
        expected = [*argv, ""]
        wait_until(lambda: cmdline(child.pid) == expected, "the child's argv")  # once it execs
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert cmdline(child.pid) is None


def _child_of(pid: int) -> int | None:
    """The pid of a child of *pid* (the inner shell, once the outer one started it)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None
