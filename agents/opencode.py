"""OpenCode: paneboard's plugin, the `opencode` door it serves, and the doctor's checks.

OpenCode has no shell hooks; a plugin runs inside each OpenCode process. `hook install
opencode` writes paneboard's (``opencode_plugin.js`` beside this module) to
``DIR/.opencode/plugins/paneboard.js``, with the command and options it was given; installing
the same again changes nothing; a file at that path that paneboard did not write is refused
and left untouched; uninstall removes the file (and the folders install created, when they
are left empty). OpenCode itself installs ``@opencode-ai/plugin`` into ``.opencode/``
(package.json, node_modules) for any local plugin: that is OpenCode's, not ours.

The plugin serves a private Unix socket ``DIR/<pid>.sock`` and writes the registry
``DIR/<pid>.json`` ``{"pid", "socket", "directory"}`` in each OpenCode process, and starts the
session's listener (its session-start hook). The door writes ``{"id": ID, "text": TEXT}`` and
a newline; the plugin answers one line, ``{"ok": true, "session": ID}`` once OpenCode has
taken the prompt (``promptAsync``: a turn starts now if the session is idle, after the
current one if it is busy), else ``{"ok": false, "error": WHY}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paneboard.agents.base import WakeRequest
from paneboard.agents.script import Script, ScriptAgent, ScriptDoor, private_folder, socket_option
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import session_word

PLUGIN = Path(".opencode") / "plugins" / "paneboard.js"
SCRIPT = Script(
    PLUGIN, "opencode_plugin.js", "// paneboard: the OpenCode door.", "opencode", "plugin"
)
FOLDER = "paneboard-opencode"


def plugin_folder() -> Path:
    """Where the plugin keeps its sockets (its `privateFolder()`)."""
    return private_folder(FOLDER)


class PluginDoor(ScriptDoor):
    """Hands a prompt to a session through paneboard's OpenCode plugin (in OpenCode, or in a
    fork of it with other names: Kilo Code)."""

    word = "plugin"
    not_taken = "the plugin did not hand it over"


class OpenCodeDoor(PluginDoor):
    """Hands a prompt to an OpenCode session through paneboard's plugin."""

    name = "opencode"
    gone_reason = "OpenCode has ended"
    title = "OpenCode"


@dataclass(frozen=True)
class OpenCode(ScriptAgent):
    """OpenCode, or a fork of it, reached through a listener its plugin starts (`--mode listen`
    only)."""

    def wake_door(self, request: WakeRequest) -> Door:
        """`opencode run --session ID --format json` with the text on its input (a fork's
        command: `kilo run`): one headless turn of the stored session, in the same
        conversation (OpenCode keeps it in its SQLite database, which no `seen` follows).
        Admitted: its first event, ``step_start`` with that session id (the text is stored and
        the model's step has begun). Not as an argument: `opencode run` wraps an argument with
        a space in quotes, escaping the quotes inside."""
        session = session_word(request.session, self.title)
        argv = [self.command, "run", "--session", session, "--format", "json"]

        marks = (lambda e: e.get("type") == "step_start" and e.get("sessionID") == session,)
        return resume_door(request, f"{self.kind}-resume", self.title, argv, marks)


def plugin_agent(
    kind: str, title: str, script: Script, folder: str, socket_env: str, door: type[PluginDoor]
) -> OpenCode:
    """The agent *kind* whose door is paneboard's OpenCode plugin (installed as *script*), its
    command *kind*."""
    return OpenCode(
        kind=kind,
        title=title,
        modes=("listen",),
        default_mode="listen",
        hooks_file=str(script.path),
        events={},
        door=kind,
        script=script,
        socket_env=socket_env,
        folder=folder,
        door_class=door,
        command=kind,
        listen_options=(socket_option(script),),
    )


OPENCODE = plugin_agent(
    "opencode", "OpenCode", SCRIPT, FOLDER, "PANEBOARD_OPENCODE_SOCKET", OpenCodeDoor
)
