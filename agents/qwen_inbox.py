"""Qwen Code's `qwen-inbox` door: its cross-session inbox, answered by Qwen Code's receipts.

A Qwen Code session publishes ``$QWEN_HOME/sessions/<pid>.json`` (``sessionId``, ``ipcPath``,
``ipcToken``). For every prompt the door re-reads that record (``/clear`` swaps the session id),
connects to ``ipcPath``, writes the auth line and one ``user`` frame, and half-closes. The
frame's ``msgId`` is the prompt's id: Qwen Code answers a re-sent id with its earlier verdict,
so a retry never starts a second turn. Its ``from`` is an inbox of the door's own, where Qwen
Code connects back with a ``delivery_status`` frame (after an auth line carrying the door's
``replyToken``). What the receipt says is what the door reports:

- ``delivered`` (queued for the model): ``accepted``;
- ``held`` (parked for the session's person, ``/peers``): `QwenHeld`, a `HeldByAgent`: the
  listener posts `held` and goes on. Qwen Code's later receipt for it (``delivered`` once the
  person releases it, ``denied``, ``expired``) reaches `follow`, which hands it to the
  listener: `delivered`, or `undelivered` naming Qwen Code's reason;
- ``denied`` (the person said no), ``refused`` (the session takes no peer messages),
  ``expired``: `QwenRefused`, not retried (Qwen Code repeats the verdict for that id);
- ``dropped`` (rate, duplicate, full queue), ``misaddressed``: `DoorFailed`, retried;
- no receipt within the time limit after the frame went out: ``unknown``.

The auth line presents a controller token (``qwen sessions controllers add``: a program the
person trusts, delivered without review) when the door has one, else the record's
``ipcToken``; the frame asserts no ``fromMode``, so without a controller token Qwen Code holds
every prompt for its person.

    HeldByAgent
     └── QwenHeld         (a receipt `held`: a `held` post, `by: agent`)
    DoorFailed
     └── DoorUnavailable
          └── QwenRefused (a receipt `denied`, `refused` or `expired`)
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import re
import secrets
import socket
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskStatus

from paneboard.agents.script import private_folder
from paneboard.listener.doors.base import HeldByAgent, Outcome, Settle
from paneboard.listener.doors.process import alive
from paneboard.listener.doors.socket import check_socket
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Prompt

NAME = "qwen-inbox"
RECORD_LIMIT = 64 * 1024
RECEIPT_LIMIT = 1024 * 1024
SETTLED = ("held", "delivered", "denied", "refused", "expired")  # verdicts a re-send repeats
CONTROLLER = re.compile(r"qpc_[0-9a-f]{64}")
# The state moves a receipt may make (cross-session-protocol.md §5); anything else is a repeat.
MOVES: dict[str | None, set[str]] = {
    None: {"held", "delivered", "denied", "refused", "expired", "misaddressed", "dropped"},
    "held": {"delivered", "denied", "expired", "misaddressed"},
    "delivered": {"expired", "misaddressed"},
}


class QwenHeld(HeldByAgent):
    """Qwen Code holds the prompt for its person; `.reason` is Qwen Code's own words."""

    def __init__(self, reason: str) -> None:
        super().__init__(NAME, reason)


class QwenRefused(DoorUnavailable):
    """Qwen Code turned the prompt away for good (`.status`: denied, refused or expired)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(NAME, f"Qwen Code answered `{status}`: {reason}")
        self.status = status


class Session(msgspec.Struct, frozen=True):
    """A live session's registry record: what a frame needs."""

    pid: int
    session_id: str
    ipc_path: Path
    ipc_token: str | None
    cwd: str


def qwen_home(env: Mapping[str, str]) -> Path:
    """``$QWEN_HOME``, else ``~/.qwen``."""
    if env.get("QWEN_HOME"):
        return Path(env["QWEN_HOME"])
    return Path(env.get("HOME") or Path.home()) / ".qwen"


def _proc_start(pid: int) -> str | None:
    """``<boot id>:<start ticks>`` as Qwen Code writes ``procStart`` (None off Linux)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        ticks = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None
    return f"{boot}:{ticks}"


def _read_record(path: Path) -> dict[str, Any]:
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        raise DoorUnavailable(NAME, f"{path} is not a file of this user")
    if st.st_size > RECORD_LIMIT:
        raise DoorUnavailable(NAME, f"{path} is {st.st_size} bytes, too big for a record")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise DoorUnavailable(NAME, f"the registry {path} is not a JSON object")
    return data


def parse_record(path: Path, data: Mapping[str, Any]) -> Session:
    """The record's fields, checked as cross-session-protocol.md §1 says; else `DoorUnavailable`."""

    def bad(why: str) -> DoorUnavailable:
        return DoorUnavailable(NAME, f"the registry {path} {why}")

    pid, sid, ipc, token = (data.get(k) for k in ("pid", "sessionId", "ipcPath", "ipcToken"))
    if data.get("schemaVersion") != 1:
        raise bad(f"has schemaVersion {data.get('schemaVersion')!r}, not 1")
    if type(pid) is not int or path.stem.split("-")[0] != str(pid):
        raise bad(f"names pid {pid!r}, not the one in its name")
    if not isinstance(sid, str) or not 0 < len(sid) <= 128 or not sid.isprintable():
        raise bad("has no valid sessionId")
    if not isinstance(ipc, str) or not ipc.startswith("/"):
        raise bad("has no ipcPath (the session takes no messages)")
    if token is not None and (not isinstance(token, str) or len(token) != 64):
        raise bad("has an ipcToken that is not 64 hex characters")
    return Session(pid, sid, Path(ipc), token, str(data.get("cwd") or ""))


def read_session(path: Path) -> Session:
    """The live session a registry file describes; else `DoorUnavailable`, naming why."""
    try:
        data = _read_record(path)
        session = parse_record(path, data)
    except FileNotFoundError:
        raise DoorUnavailable(NAME, f"no registry {path} (has Qwen Code ended?)") from None
    except (OSError, ValueError) as exc:
        raise DoorUnavailable(NAME, f"cannot read the registry {path}: {exc}") from None
    if not alive(session.pid, zombie=False):
        raise DoorUnavailable(NAME, f"the Qwen Code process {session.pid} has ended")
    started = data.get("procStart")
    if isinstance(started, str) and _proc_start(session.pid) not in (None, started):
        raise DoorUnavailable(NAME, f"pid {session.pid} is no longer the Qwen Code of {path}")
    return session


def registry(home: Path, pid: int) -> Path:
    return home / "sessions" / f"{pid}.json"


def find_session(home: Path, session_id: str) -> Path | None:
    """The registry file of the live session *session_id* (a hook input's ``session_id``)."""
    for path in sorted((home / "sessions").glob("*.json")):
        with contextlib.suppress(DoorUnavailable):
            if read_session(path).session_id == session_id:
                return path
    return None


def session_file(home: Path, session_id: str) -> Path | None:
    """The session's conversation file, ``projects/<project>/chats/<sessionId>.jsonl``: where
    it is, or where it will be (its ``<sessionId>.runtime.json`` is written at start, the
    conversation file with the first turn)."""
    for suffix in (".jsonl", ".runtime.json"):
        found = sorted((home / "projects").glob(f"*/chats/{session_id}{suffix}"))
        if found:
            return found[0].with_name(f"{session_id}.jsonl")
    return None


def inbox_folder(env: Mapping[str, str]) -> Path:
    """Where doors bind their inboxes: a folder of this user's, by the scripts' rule
    (`agents.script.private_folder`: never a name in /tmp another user could make first)."""
    return private_folder("paneboard-qwen", env)


def _private_folder(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise DoorUnavailable(NAME, f"{folder} is not a private folder of this user")


class Receipts:
    """What Qwen Code has said about each ``msgId``: its state, and how many receipts came."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.state: dict[str, str] = {}
        self.reason: dict[str, str] = {}
        self.count: dict[str, int] = {}

    def take(self, data: bytes) -> None:
        """One connection's bytes: an auth line with the door's token, then frames."""
        lines = data.split(b"\n")
        try:
            auth = json.loads(lines[0])
        except ValueError:
            return
        if not isinstance(auth, dict) or auth.get("type") != "auth":
            return
        if not secrets.compare_digest(str(auth.get("token")), self.token):
            return
        for line in lines[1:]:
            with contextlib.suppress(ValueError):
                frame = json.loads(line)
                if isinstance(frame, dict) and frame.get("action") == "delivery_status":
                    self._frame(frame)

    def _frame(self, frame: dict[str, Any]) -> None:
        status, reason = frame.get("status"), frame.get("reason")
        ids = [frame.get("origMsgId")]
        if status == "dropped":
            ids += list(frame.get("droppedMsgIds") or [])[:256]
            reason = f"dropped ({frame.get('dropReason')}): {reason}"
        for msg_id in ids:
            if isinstance(msg_id, str) and isinstance(status, str):
                self._move(msg_id, status, str(reason or status))

    def _move(self, msg_id: str, status: str, reason: str) -> None:
        self.count[msg_id] = self.count.get(msg_id, 0) + 1
        if status in MOVES.get(self.state.get(msg_id), set()):
            self.state[msg_id] = status
            self.reason[msg_id] = reason


class QwenInboxDoor:
    """Hands a prompt to the Qwen Code session whose registry file is *record*."""

    name = NAME

    def __init__(
        self, record: Path, timeout: float, inbox: Path, controller: str | None = None
    ) -> None:
        self.record = record
        self.timeout = timeout
        self.controller = controller
        self.inbox = inbox
        self.receipts = Receipts(secrets.token_hex(32))
        self._server: socket.socket | None = None
        self._held: set[str] = set()  # reported held: Qwen Code's later word on each is owed
        self._heard: anyio.Event | None = None  # set by `follow` at each receipt, then renewed

    def check(self) -> None:
        session = read_session(self.record)
        check_socket(session.ipc_path, self.name)

    def _listening(self) -> socket.socket:
        """The door's own inbox, bound on first use and kept: receipts that come between
        deliveries wait in its backlog."""
        if self._server is None:
            _private_folder(self.inbox.parent)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.inbox)
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(self.inbox))
            os.chmod(self.inbox, 0o600)
            server.listen(64)
            server.setblocking(False)
            self._server = server
            atexit.register(self.close)
        return self._server

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.inbox)

    def _frame(self, session: Session, prompt: Prompt, text: str) -> bytes:
        token = self.controller or session.ipc_token
        auth = msgspec.json.encode({"msgV": 1, "type": "auth", "token": token}) + b"\n"
        frame = {
            "msgV": 1,
            "msgId": prompt.id,
            "type": "user",
            "from": str(self.inbox),
            "replyToken": self.receipts.token,
            "fromName": f"paneboard {prompt.sender}",
            "toSessionId": session.session_id,
            "message": {"role": "user", "content": text},
        }
        return (auth if token else b"") + msgspec.json.encode(frame) + b"\n"

    async def follow(
        self, settle: Settle, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Read every receipt as it comes, for as long as the listener runs; *settle* hears
        of each held prompt Qwen Code has decided on since (None: delivered). An inbox that
        cannot be bound is left to each delivery to report."""
        try:
            server = self._listening()
        except (DoorUnavailable, OSError):
            task_status.started()
            return
        self._heard = anyio.Event()
        task_status.started()
        try:
            while True:
                await anyio.wait_readable(server)
                await self._drain(server)
                self._heard.set()
                self._heard = anyio.Event()
                self._settle(settle)
        finally:
            self._heard = None

    def _settle(self, settle: Settle) -> None:
        for msg_id in sorted(self._held):
            state = self.receipts.state.get(msg_id)
            if state == "held":
                continue
            self._held.discard(msg_id)
            if state == "delivered":
                settle(msg_id, None)
            else:
                reason = self.receipts.reason.get(msg_id, "")
                failure = QwenRefused(str(state), reason)
                settle(msg_id, failure)

    async def _next_receipt(self, server: socket.socket) -> None:
        """Wait for the next receipt: from `follow`, when it runs (one reader of the inbox)."""
        if self._heard is not None:
            await self._heard.wait()
        else:
            await anyio.wait_readable(server)
            await self._drain(server)

    async def deliver(self, prompt: Prompt, text: str, agent: str) -> Outcome:
        server = self._listening()
        if self._heard is None:  # else `follow` reads the inbox
            await self._drain(server)
        if self.receipts.state.get(prompt.id) in SETTLED:
            return self._verdict(prompt.id)  # never re-sent: a copy within 30 s is `dropped`
        session = read_session(self.record)
        check_socket(session.ipc_path, self.name)
        heard = self.receipts.count.get(prompt.id, 0)
        data = self._frame(session, prompt, text)
        try:
            with anyio.fail_after(self.timeout):
                await _send(session.ipc_path, data)
        except TimeoutError:
            raise DoorFailed(
                self.name, f"the frame was not taken within {self.timeout:g} s"
            ) from None
        with anyio.move_on_after(self.timeout):
            while self.receipts.count.get(prompt.id, 0) == heard:
                await self._next_receipt(server)
            return self._verdict(prompt.id)
        return "unknown"  # Qwen Code has the frame and may have queued it: no receipt came

    async def _drain(self, server: socket.socket) -> None:
        """Read every receipt connection waiting in the backlog."""
        for conn in _accepted(server):
            with conn, anyio.move_on_after(min(self.timeout, 5.0)):
                self.receipts.take(await _read_all(conn))

    def _verdict(self, msg_id: str) -> Outcome:
        state = self.receipts.state.get(msg_id)
        reason = self.receipts.reason.get(msg_id, "")
        if state == "delivered":
            return "accepted"
        if state == "held":
            self._held.add(msg_id)
            raise QwenHeld(reason)
        if state in ("denied", "refused", "expired"):
            raise QwenRefused(state, reason)
        self.receipts.state.pop(msg_id, None)  # dropped or misaddressed: nothing is settled
        raise DoorFailed(self.name, f"Qwen Code answered `{state}`: {reason}")


def _accepted(server: socket.socket) -> Iterator[socket.socket]:
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        yield conn


async def _read_all(conn: socket.socket) -> bytes:
    data = b""
    while len(data) < RECEIPT_LIMIT:
        try:
            chunk = conn.recv(65536)
        except BlockingIOError:
            await anyio.wait_readable(conn)
            continue
        if not chunk:
            break
        data += chunk
    return data


async def _send(path: Path, data: bytes) -> None:
    """One connection: the lines, a half-close, then the session's close of its side."""
    try:
        async with await anyio.connect_unix(str(path)) as stream:
            await stream.send(data)
            await stream.send_eof()
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while await stream.receive():
                    pass
    except ConnectionRefusedError:
        raise DoorUnavailable(NAME, f"nobody listens on {path} (Qwen Code has ended)") from None
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise DoorUnavailable(NAME, f"no socket at {path}") from None
        raise DoorFailed(NAME, f"cannot write to {path}: {exc}") from exc
