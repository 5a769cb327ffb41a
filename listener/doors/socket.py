"""Doors that write one JSON line on a Unix socket an agent's session serves (Claude Code's
inbox, OpenCode's and Qwen Code's), and the check that the socket is the user's own."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import anyio
from anyio.abc import ByteStream

from paneboard.listener.doors.base import Outcome
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt


def check_socket(path: Path, door: str) -> None:
    """A Unix socket owned by this user, and not a symlink; else `DoorUnavailable`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise DoorUnavailable(door, f"no socket at {path} (is the session running?)") from None
    except OSError as exc:
        raise DoorUnavailable(door, f"cannot inspect {path}: {exc.strerror}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise DoorUnavailable(door, f"{path} is a symlink; refusing to follow it")
    if not stat.S_ISSOCK(st.st_mode):
        raise DoorUnavailable(door, f"{path} is not a socket")
    if st.st_uid != os.geteuid():
        raise DoorUnavailable(
            door, f"{path} belongs to uid {st.st_uid}, not to this user ({os.geteuid()})"
        )


class SocketDoor:
    """A door that writes one JSON line on a Unix socket a session serves, then reads the
    session's one-line reply if it gives one (`_reply`); subclasses say what the line is."""

    name: str
    sent_noun = "line"  # what the door sends, as "the line was not taken within" names it
    gone_reason = "the session has ended"  # why nobody listens any more, as a refusal says
    replies = False  # the session answers: a timeout or a break after sending is "unknown"

    def __init__(self, socket: Path, timeout: float) -> None:
        self.socket = socket
        self.timeout = timeout

    def check(self) -> None:
        check_socket(self.socket, self.name)

    def _line(self, prompt: Prompt, text: str) -> bytes:
        raise NotImplementedError

    async def _reply(self, stream: ByteStream) -> bytes:
        return b""

    def _outcome(self, reply: bytes) -> Outcome:
        return "accepted"

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        line = self._line(prompt, text) + b"\n"
        self.check()
        sent = False
        try:
            with anyio.fail_after(self.timeout):
                async with await anyio.connect_unix(str(self.socket)) as stream:
                    await stream.send(line)
                    sent = True
                    reply = await self._reply(stream)
        except TimeoutError:
            if sent and self.replies:
                return "unknown"  # the session has the text and may have taken it
            raise DoorFailed(
                self.name, f"the {self.sent_noun} was not taken within {self.timeout:g} s"
            ) from None
        except ConnectionRefusedError:
            raise DoorUnavailable(
                self.name, f"nobody listens on {self.socket} ({self.gone_reason})"
            ) from None
        except (OSError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            if getattr(exc, "errno", None) == errno.ENOENT:
                raise DoorUnavailable(self.name, f"no socket at {self.socket}") from None
            if sent and self.replies:
                return "unknown"
            raise DoorFailed(self.name, f"cannot write to {self.socket}: {exc}") from exc
        return self._outcome(reply)
