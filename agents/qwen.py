"""Qwen Code: its hooks in ``DIR/.qwen/settings.json``, its inbox, its controller token.

A session's SessionStart hook starts a listener whose door is the session's cross-session
inbox (`QwenInboxDoor`, agents/qwen_inbox.py), found in Qwen Code's registry by the hook
input's session id; SessionEnd stops it. Qwen Code answers each prompt with a receipt:
``delivered`` (queued for the model), ``held`` for its person (``/peers``), or a refusal. The
listener follows the session file the hook input names (``transcript_path``) to post `seen`.

Without a controller token Qwen Code holds every prompt for its person. `hook install qwen
--trust` mints one (``qwen sessions controllers add``) after a yes on the controlling terminal
(board/confirm.py, the one confirmation of every decision), and keeps it private in the
paneboard home (`CONTROLLER_FILE`), where the listener reads it: never on a command line, in
the environment or in a hook file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents.base import (
    Change,
    DoctorRequest,
    DoorRequest,
    ListenOption,
    Setup,
    WakeRequest,
)
from paneboard.agents.hookfile import HookFileAgent, load
from paneboard.agents.qwen_inbox import (
    CONTROLLER,
    NAME,
    QwenInboxDoor,
    find_session,
    inbox_folder,
    qwen_home,
    read_session,
    registry,
    session_file,
)
from paneboard.agents.wake import resume_door
from paneboard.board.confirm import confirm
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import session_uuid
from paneboard.listener.seen import Sighting, content_texts, field
from paneboard.protocol.errors import BadInput, BoardIOError, DoorUnavailable
from paneboard.state.files import read_private, write_atomic
from paneboard.state.health import Check
from paneboard.state.paths import open_home, user_data_dir

CONTROLLER_FILE = "qwen-controller.json"  # in the paneboard home: {id, token, qwenHome}
LABEL = "paneboard"  # the grant's label, as `qwen sessions controllers list` shows it
MINT_TIMEOUT = 60.0


def controller_path(home: Path) -> Path:
    return home / CONTROLLER_FILE


def read_controller(home: Path) -> dict[str, str] | None:
    """The controller grant kept in *home*, or None where there is none; `BadInput` for one
    others could read or change, or one that is not a grant paneboard wrote."""
    path = controller_path(home)
    data = read_private(path, 4096)
    if data is None:
        return None
    st = os.lstat(path)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise BadInput(f"{path} is readable by others: remove it and run hook install --trust")
    try:
        grant = json.loads(data)
    except ValueError:
        grant = None
    fields = ("id", "token", "qwenHome")
    if not isinstance(grant, dict) or not all(isinstance(grant.get(k), str) for k in fields):
        raise BadInput(f"{path} is not a Qwen Code controller grant paneboard kept")
    if not CONTROLLER.fullmatch(grant["token"]):
        raise BadInput(f"{path} holds no Qwen Code controller token (qpc_ + 64 hex)")
    return {k: grant[k] for k in fields}


def mint(qwen: str, env: Mapping[str, str]) -> dict[str, str]:
    """A controller token from ``qwen sessions controllers add`` (printed once, kept by us)."""
    argv = [qwen, "sessions", "controllers", "add", "--label", LABEL, "--json"]
    try:
        done = subprocess.run(
            argv, check=False, env=dict(env), capture_output=True, text=True, timeout=MINT_TIMEOUT
        )
        grant = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        grant = None
    if not isinstance(grant, dict) or not CONTROLLER.fullmatch(str(grant.get("token"))):
        raise BoardIOError(f"`{' '.join(argv)}` minted no controller token; nothing was written")
    return {"id": str(grant.get("id")), "token": str(grant["token"])}


def paneboard_home(setup: Setup) -> Path:
    """The paneboard home the hooks act for: --home as given, else the environment's."""
    given = dict(setup.options).get("--home")
    env = dict(setup.env)
    return Path(given or env.get("PANEBOARD_HOME") or user_data_dir(env)).absolute()


@dataclass(frozen=True)
class Qwen(HookFileAgent):
    def check_mode(self, mode: str | None) -> str:
        if mode not in (None, "listen"):
            raise BadInput(f"{self.title} is reached through its inbox only: use --mode listen")
        return "listen"

    def install(self, setup: Setup) -> list[Change]:
        if not setup.trust:
            return super().install(setup)
        load(self.path(setup.project))  # a malformed hook file is refused before the grant
        trusted = self._trust(setup)
        return [*super().install(setup), trusted]

    def _trust(self, setup: Setup) -> Change:
        """The controller grant: kept already, or minted on the person's yes and kept."""
        home = paneboard_home(setup)
        path = controller_path(home)
        kept = read_controller(home)
        qwen_at = str(qwen_home(setup.env).absolute())
        if kept is not None and kept["qwenHome"] == qwen_at:
            return Change(f"a Qwen Code controller token ({kept['id']}) already kept in {path}")
        qwen = shutil.which("qwen", path=setup.env.get("PATH"))
        if qwen is None:
            raise BadInput("no `qwen` on PATH to mint a controller token; nothing was changed")
        question = (
            f"let paneboard's listeners deliver prompts to your Qwen Code sessions ({qwen_at}) "
            "without your review in /peers (hook install qwen --trust)?"
        )
        confirm(question)  # a no, or no terminal: one line, no token minted, nothing written
        grant = {**mint(qwen, setup.env), "qwenHome": qwen_at}
        open_home(home)
        write_atomic(path, (json.dumps(grant) + "\n").encode(), mode=0o600)
        return Change(
            f"minted Qwen Code controller token {grant['id']} (label {LABEL}) and kept it in "
            f"{path} (0600); revoke it with `qwen sessions controllers remove {grant['id']}`",
            path,
            True,
        )

    def uninstall(self, setup: Setup) -> list[Change]:
        changes = super().uninstall(setup)
        path = controller_path(paneboard_home(setup))
        if read_private(path, 1) is not None:
            note = f"the controller token in {path} stays: other projects' listeners use it"
            changes.append(Change(note, path))
        return changes

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The session's Qwen Code process: its registry record's, else the hook's agent."""
        session_id = self.session(data)
        found = find_session(qwen_home(environ), session_id) if session_id else None
        pid = int(found.stem) if found is not None else parent
        return ["--door", NAME, "--parent-pid", str(pid)], {}

    def open_door(self, request: DoorRequest) -> Door:
        pid = request.pid
        if pid is None or pid <= 0:
            raise BadInput(f"--door {NAME} needs --parent-pid PID (the Qwen Code process)")
        home = qwen_home(request.env)
        grant = None if request.home is None else read_controller(request.home)
        usable = grant is not None and grant["qwenHome"] == str(home.absolute())
        inbox = inbox_folder(request.env) / f"{os.getpid()}.sock"
        token = grant["token"] if grant is not None and usable else None
        return QwenInboxDoor(registry(home, pid), min(request.timeout, 10.0), inbox, token)

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        """The session file the hook input names, else the one its registry record leads to."""
        if transcript is None and isinstance(door, QwenInboxDoor):
            with contextlib.suppress(DoorUnavailable):
                session = read_session(door.record)
                transcript = session_file(door.record.parent.parent, session.session_id)
        return super().sighting(mark, door, transcript)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``"type": "user"`` record of its session file, its text in ``message.parts`` (a
        delivered cross-session message is one, wrapped in ``<cross_session_message>``)."""
        if record.get("type") != "user":
            return []
        return content_texts(field(record, "message").get("parts"))

    def wake_session(self, request: DoorRequest) -> str | None:
        """Qwen Code names a session's file after its id (``chats/<id>.jsonl``, the listener's
        `--transcript`); without one, the live session's registry record says."""
        if request.transcript:
            word = Path(request.transcript).stem
        elif request.pid is not None and request.pid > 0:
            try:
                word = read_session(registry(qwen_home(request.env), request.pid)).session_id
            except DoorUnavailable:
                return None
        else:
            return None
        try:
            return session_uuid(word, self.title)
        except BadInput:
            return None

    def wake_door(self, request: WakeRequest) -> Door:
        """`qwen --resume ID -o stream-json` with the text on its input: one headless turn of
        the recorded session, appended to its session file (where `seen` is read). Admitted:
        its events ``system``/``init`` with that session id, then the model's answer starting
        (``message_start``)."""
        session = session_uuid(request.session, self.title)
        partial = "--include-partial-messages"
        argv = ["qwen", "-o", "stream-json", partial, "--resume", session]

        def started(event: Mapping[str, Any]) -> bool:
            inner = event.get("event")
            return (
                event.get("type") == "stream_event"
                and event.get("session_id") == session
                and isinstance(inner, dict)
                and inner.get("type") == "message_start"
            )

        marks = (lambda e: e.get("subtype") == "init" and e.get("session_id") == session, started)
        return resume_door(request, "qwen-resume", self.title, argv, marks)

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        where = shutil.which("qwen", path=ask.env.get("PATH"))
        cli = Check("ok", "qwen", where) if where else Check("warn", "qwen", "no `qwen` on PATH")
        hooks = self.hook_checks(ask.project)
        return [cli, *hooks, _live(ask.project, ask.env), _grant(ask.home)]


def _live(project: Path, env: Mapping[str, str]) -> Check:
    """A live Qwen Code session of *project* in the registry, with an inbox."""
    sessions = qwen_home(env) / "sessions"
    for path in sorted(sessions.glob("*.json")):
        with contextlib.suppress(DoorUnavailable, OSError, ValueError):
            session = read_session(path)
            if Path(session.cwd) == project.absolute():
                return Check("ok", "qwen", f"live session {session.pid}: inbox {session.ipc_path}")
    return Check("warn", "qwen", f"no live Qwen Code session of {project} in {sessions}")


def _grant(home: Path) -> Check:
    """The controller grant kept in the home `doctor` checks."""
    try:
        grant = read_controller(home)
    except BadInput as exc:
        return Check("fail", "qwen", str(exc))
    if grant is None:
        why = "Qwen Code holds each prompt for its person (/peers)"
        return Check("warn", "qwen", f"no controller token: {why}; hook install qwen --trust")
    return Check("ok", "qwen", f"controller token {grant['id']} in {controller_path(home)}")


QWEN = Qwen(
    kind="qwen",
    title="Qwen Code",
    modes=("listen",),
    default_mode="listen",
    hooks_file=".qwen/settings.json",
    events={"session-start": "SessionStart", "session-end": "SessionEnd"},
    door=NAME,
    seen_source="qwen-session",
    trusts=True,
    trust_help="mint a Qwen Code controller token for the listener, once you say yes",
    cli_argv_suffixes=("/qwen", "/qwen-code/cli.js"),
    no_transcript=" (no session file found in the registry record's Qwen home)",
    listen_options=(ListenOption("--parent-pid", "the Qwen Code session's pid", "PID"),),
)
