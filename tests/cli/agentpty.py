"""Running a command the way an agent's tool can: from a process with no controlling terminal,
on a pseudo-terminal it opens itself (Python's `pty`, or util-linux `script -qec`), typing an
answer once the command asks."""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

# The agent's side: fork onto a new pseudo-terminal (pty.fork makes it the child's controlling
# terminal), run the command, type the answer after the first `[y/N] `, print what was shown.
DRIVER = r"""
import os, pty, select, sys
answer, argv = sys.argv[1].encode(), sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
shown, typed = b"", False
while select.select([fd], [], [], 30)[0]:
    try:
        chunk = os.read(fd, 4096)
    except OSError:  # EIO: the command ended and closed the terminal
        break
    if not chunk:
        break
    shown += chunk
    if not typed and b"[y/N] " in shown:
        os.write(fd, answer + b"\n")
        typed = True
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(shown)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class Shown:
    """How a command run on a pseudo-terminal ended, and everything it wrote there."""

    returncode: int
    text: str  # the terminal's output: the question, the typed answer's echo, stdout, stderr

    @property
    def asked(self) -> int:
        """How many questions the command asked."""
        return self.text.count("[y/N] ")


def on_pty(
    argv: Sequence[str],
    env: dict[str, str],
    answer: str = "y",
    *,
    prefix: Sequence[str] = (),
    cwd: str | None = None,
) -> Shown:
    """Run *argv* on a pseudo-terminal opened by a process in a session of its own (no
    controlling terminal, as an agent's tool runs), typing *answer* when asked. *prefix*
    runs the command on it through another (`setpriv …`: as another user)."""
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, answer, *prefix, *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cwd,
        start_new_session=True,
        timeout=60,
        check=False,
    )
    text = done.stdout.decode(errors="replace").replace("\r\n", "\n")
    return Shown(done.returncode, text + done.stderr.decode(errors="replace"))


def through_script(
    argv: Sequence[str],
    env: dict[str, str],
    answer: str = "y",
    *,
    prefix: Sequence[str] = (),
) -> Shown:
    """Run *argv* under util-linux `script -qec` (which gives it a pseudo-terminal) from a
    process with no controlling terminal, *answer* written to script's stdin, a pipe, once the
    command asks; *prefix* as `on_pty`'s."""
    proc = subprocess.Popen(
        ["script", "-qec", shlex.join([*prefix, *argv]), "/dev/null"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    shown, fd = b"", proc.stdout.fileno()
    while select.select([fd], [], [], 30)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        if b"[y/N] " not in shown and b"[y/N] " in shown + chunk:
            proc.stdin.write(answer.encode() + b"\n")
            proc.stdin.flush()
        shown += chunk
    proc.stdin.close()
    proc.stdout.close()
    code = proc.wait(timeout=30)
    return Shown(code, shown.decode(errors="replace").replace("\r\n", "\n"))
