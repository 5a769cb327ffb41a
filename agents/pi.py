"""pi (`@mariozechner/pi-coding-agent`, checked with 0.73.1): paneboard's extension, the
`pi-extension` door it serves, its `seen` source and the doctor's checks.

pi has no shell hooks; an extension runs inside each pi process. `hook install pi` writes
paneboard's (``pi_extension.js`` beside this module) into the project as
``.pi/extensions/paneboard.ts``, where pi finds project extensions by itself, with the command
and options it was given; installing the same again changes nothing; a file at that path that
paneboard did not write is refused and left untouched; uninstall removes it (and the folders
install made, when they are left empty).

The extension serves a private socket ``DIR/<pid>.sock`` beside the registry ``DIR/<pid>.json``
``{"pid", "socket", "cwd", "sessionFile"}`` in each interactive pi process (not in ``pi -p``,
which exits once its prompt is done), and starts the session's listener (its session-start
hook, with the session file as ``transcript_path``). The door writes ``{"id": ID, "text":
TEXT}`` and a newline; the extension gives TEXT to pi as a user message and answers one line,
``{"ok": true, "session": FILE, "busy": BOOL}`` once pi's own `input` event has carried that
text (a turn at once when idle, a follow-up of the current turn when busy), else ``{"ok":
false, "error": WHY}``: `delivered` means pi took the message.

`seen` comes from pi's session file (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``),
which records a user message as the turn that carries it starts: ``{"type": "message",
"message": {"role": "user", "content": [{"type": "text", "text": …}]}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents import spawning
from paneboard.agents.base import DoorRequest, Spawned, SpawnRequest, WakeRequest
from paneboard.agents.script import Script, ScriptAgent, ScriptDoor, private_folder, socket_option
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import Mark, session_uuid
from paneboard.listener.doors.socket import check_socket
from paneboard.listener.seen import message_texts
from paneboard.protocol.errors import BadInput

NAME = "pi-extension"
EXTENSION = Path(".pi") / "extensions" / "paneboard.ts"
SCRIPT = Script(EXTENSION, "pi_extension.js", "// paneboard: the pi door.", "pi", "extension")
SOCKET_ENV = "PANEBOARD_PI_SOCKET"  # the extension tells the session-start hook its socket


def extension_text(exe: str, options: list[str]) -> str:
    """The extension, its command the session-start hook with *options*."""
    return SCRIPT.text(exe, options)


class PiExtensionDoor(ScriptDoor):
    """Hands a prompt to a pi session through paneboard's extension."""

    name = NAME
    gone_reason = "pi has ended"
    title = "pi"
    word = "extension"
    not_taken = "pi did not take it"


@dataclass(frozen=True)
class Pi(ScriptAgent):
    """pi, reached through a listener its extension starts (`--mode listen` only)."""

    def wake_session(self, request: DoorRequest) -> str | None:
        """pi names a session's file after its id, ``<time>_<id>.jsonl`` (the listener's
        `--transcript`, which the extension's session-start hook gives)."""
        if not request.transcript:
            return None
        try:
            return session_uuid(Path(request.transcript).stem.rpartition("_")[2], self.title)
        except BadInput:
            return None

    def wake_door(self, request: WakeRequest) -> Door:
        """`pi -p --session ID --mode json` with the text on its input: one headless turn of
        the session, appended to its session file (where `seen` is read), with the session's
        own model. Admitted: its events ``session`` with that id, then ``turn_start``. The id
        must be a whole UUID: pi's `--session` also takes a part of one, or a file's path."""
        session = session_uuid(request.session, self.title)
        argv = [self.command, "-p", "--session", session, "--mode", "json"]
        marks: tuple[Mark, ...] = (
            lambda e: e.get("type") == "session" and e.get("id") == session,
            lambda e: e.get("type") == "turn_start",
        )
        return resume_door(request, "pi-resume", self.title, argv, marks)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``"type": "message"`` record of its session file whose message is the user's."""
        return message_texts(record)

    # --- spawn and stop: pi's TUI in a tmux server of its own (the extension needs its UI) ---

    def spawn(self, request: SpawnRequest) -> Spawned:
        """`pi` (its provider and model from its own settings) in a private tmux server."""
        return spawning.in_tmux(self, [spawning.command("pi", request.env, self.title)], request)

    def stop_session(self, session: str, env: Mapping[str, str]) -> str:
        """pi's own quit, asked through the extension's socket (`ctx.shutdown`: the extension
        closes its door, the listener ends with pi), then the tmux server closed. pi 0.73.1
        dies of a SIGTERM without its cleanup: that is only where the extension cannot be
        reached."""

        def quit_(pid: int) -> str:
            path = private_folder(self.folder, env) / f"{pid}.sock"
            check_socket(path, NAME)  # a socket of this user's, not a link
            answer = spawning.ask_line(path, b'{"quit": true}\n')
            if answer.get("ok") is not True:
                raise ValueError(str(answer.get("error")))
            return "its own quit, asked through paneboard's extension"

        return spawning.stop_tmux(self, session, env, quit_)


PI = Pi(
    kind="pi",
    title="pi",
    modes=("listen",),
    default_mode="listen",
    hooks_file=str(EXTENSION),
    events={},
    door=NAME,
    seen_source="pi-session",
    cli_argv_suffixes=("pi-coding-agent/dist/cli.js",),
    listener_runner="its extension",
    script=SCRIPT,
    socket_env=SOCKET_ENV,
    folder="paneboard-pi",
    door_class=PiExtensionDoor,
    command="pi",
    listen_options=(socket_option(SCRIPT),),
)
