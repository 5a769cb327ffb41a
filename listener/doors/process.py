"""Running a door's command: argv (never a shell), bounded in time and in output kept."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from paneboard.state.proc import alive

__all__ = ["WOKEN_ENV", "Finished", "alive", "child_env", "run_command"]  # `alive`: the doors'

OUTPUT_KEPT = 64 * 1024
# Set in a woken turn's environment (listener/doors/resume.py), to the session it resumes: its
# hooks know the turn is a wake's (an agent whose headless turn has no door of its own starts
# no listener there).
WOKEN_ENV = "PANEBOARD_WOKEN"


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """*env* for a process paneboard starts (a listener, a door's command, codex).

    Without the agent session's own `CLAUDE_CODE_*` variables (a child must not talk to the
    session's socket as if it were the session), nor `RUST_BACKTRACE` (codex then prints a
    backtrace with every error, burying the one line paneboard reports), nor `WOKEN_ENV` (a
    woken turn's own: a listener its hook starts is not that turn).
    """
    dropped = ("RUST_BACKTRACE", WOKEN_ENV)
    return {k: v for k, v in env.items() if not k.startswith("CLAUDE_CODE_") and k not in dropped}


class Finished:
    """How a command ended: its exit code (None if killed at its time limit) and output head."""

    def __init__(self, returncode: int | None, output: bytes) -> None:
        self.returncode = returncode
        self.output = output

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def tail(self, limit: int = 300) -> str:
        text = self.output.decode(errors="replace").strip()
        return text[-limit:] if text else "(no output)"


async def run_command(
    argv: Sequence[str],
    stdin: bytes,
    env: Mapping[str, str],
    limit: float,
    cwd: Path | None = None,
) -> Finished:
    """Run *argv* with *stdin* (in *cwd*, if given); kill its whole process group if it
    outlives *limit* seconds."""
    proc = await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env),
        start_new_session=True,
        cwd=cwd,
    )
    out = bytearray()
    drained = anyio.Event()
    try:
        with anyio.move_on_after(limit):
            async with anyio.create_task_group() as tg:
                assert proc.stdin is not None and proc.stdout is not None
                tg.start_soon(_feed, proc.stdin, stdin)
                tg.start_soon(_drain, proc.stdout, out, drained)
                code = await proc.wait()
                with anyio.move_on_after(0.5):  # output still in the pipe; a child may hold it open
                    await drained.wait()
                tg.cancel_scope.cancel()
            return Finished(code, bytes(out))
        return Finished(None, bytes(out))
    finally:
        if proc.returncode is None:
            _kill_group(proc.pid)
            with anyio.move_on_after(2, shield=True):
                await proc.wait()


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    try:
        if data:
            await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        pass  # the command exited without reading all of it: its exit code decides
    finally:
        await stream.aclose()


async def _drain(stream: ByteReceiveStream, out: bytearray, drained: anyio.Event) -> None:
    async for chunk in stream:
        if len(out) < OUTPUT_KEPT:
            out += chunk[: OUTPUT_KEPT - len(out)]
    drained.set()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
