"""A decision asked on the controlling terminal: the one confirmation every front end uses.

`confirm` writes what is decided and the question to ``/dev/tty`` and reads one line back from
it, never from stdin (which a command an agent runs may well have been given). What it checks
is that the process has a controlling terminal and that the answer typed there is yes. It
does not check who typed it: a process with no controlling terminal cannot answer, but a
program that opens a pseudo-terminal for the command (``script -qec``, Python's ``pty``) can,
and its yes counts like a person's. A person whose decisions must be out of an agent's reach
runs the agent as a Unix user of its own (docs/trust.md); the terminal cannot tell them apart.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from paneboard.protocol.errors import BadInput
from paneboard.protocol.visible import one_line

__all__ = ["NOTE", "TTY", "NotConfirmed", "confirm"]

TTY = "/dev/tty"
LINE_MAX = 256  # bytes of an answer read; a longer line is not a yes
# What the terminal is told about its own check, above every question.
NOTE = (
    "(asked on this terminal: whoever types here answers, "
    "a program that opened it as a pseudo-terminal included)"
)


class NotConfirmed(BadInput):
    """The decision was not confirmed on the controlling terminal; nothing was written.

    *subject* (the question without its `?`) stays on the object; *why* says what happened.
    """

    def __init__(self, subject: str, why: str) -> None:
        self.subject = subject
        super().__init__(f"{one_line(subject)}: {why}; nothing written")


def confirm(question: str, shown: Sequence[str] = (), *, tty: str = TTY) -> None:
    """Ask *question* on the controlling terminal after the lines *shown* (each made one
    visible line); return on a yes, else raise `NotConfirmed`, also when there is no terminal."""
    subject = question.rstrip("?")
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        why = f"it is asked on the controlling terminal ({tty}), and this process has none"
        raise NotConfirmed(subject, why) from None
    try:
        lines = [one_line(line) for line in (*shown, NOTE)]
        os.write(fd, ("\n".join(lines) + "\n" + one_line(question) + " [y/N] ").encode())
        answer = _read_line(fd)
    finally:
        os.close(fd)
    if answer.strip().lower() not in (b"y", b"yes"):
        raise NotConfirmed(subject, "not confirmed")


def _read_line(fd: int) -> bytes:
    """One line typed on the terminal (its line discipline hands it over whole), at most
    `LINE_MAX` bytes; what came before an end of file; nothing if the terminal went away."""
    answer = b""
    while not answer.endswith(b"\n") and len(answer) <= LINE_MAX:
        try:
            chunk = os.read(fd, LINE_MAX + 1)
        except OSError:  # EIO: the terminal went away (its other side closed): no yes
            return b""
        if not chunk:
            break
        answer += chunk
    return answer if len(answer) <= LINE_MAX else b""
