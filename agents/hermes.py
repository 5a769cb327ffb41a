"""Hermes Agent (PyPI `hermes-agent`, checked with 0.19.0): paneboard's plugin, the
`hermes-plugin` door it serves, and the doctor's checks.

Hermes has plugins: a folder with a ``plugin.yaml`` manifest and an ``__init__.py`` whose
``register(ctx)`` Hermes calls at start. `hook install hermes` writes paneboard's
(``hermes_plugin.py`` beside this module, standard library only) into the project as
``.hermes/plugins/paneboard/``, with the command and options it was given; installing the same
again changes nothing; a file at either path that paneboard did not write is refused and left
untouched; uninstall removes both (and the folders install made, when they are left empty).
Hermes loads a project's plugins only when ``HERMES_ENABLE_PROJECT_PLUGINS=1`` is in its
environment, and any plugin only once it is listed under ``plugins.enabled`` in
``$HERMES_HOME/config.yaml`` (``hermes plugins enable paneboard`` answers that the plugin "is
not installed or bundled": it does not look at a project's plugins): install says so.

The plugin serves a private Unix socket ``DIR/<pid>.sock`` beside the registry
``DIR/<pid>.json`` ``{"pid", "socket", "cwd", "session"}`` in each interactive Hermes process
(the classic CLI, Hermes's default; not `hermes chat -q`, which exits once its query is done,
nor the Ink interface, `hermes --tui`, whose Python side gives plugins no CLI), and starts the
session's listener (its session-start hook). The door writes ``{"id": ID, "text": TEXT}`` and a
newline; the plugin puts TEXT on the queue Hermes's own input box feeds (a turn at once when
idle; the next turn, once the running one has ended, when busy) and answers ``{"ok": true,
"busy": BOOL, "session": ID}``, else ``{"ok": false, "error": WHY}``: `delivered` means the text
is on that queue of a live Hermes process. Hermes's plugin API `inject_message` is not used: in
a busy session it interrupts the running turn.

`seen` comes from Hermes's own SQLite database (``$HERMES_HOME/state.db``, the one its session
uses: the plugin tells the listener its path as the session start's ``transcript_path``), read
only (agents/sqlite_seen.py): a row of its ``messages`` table with ``role`` ``user`` whose
``content`` holds the prompt's header, which Hermes writes once the prompt is a turn's input
(what waits on its input queue is in memory only). Its JSON snapshots are off by default and
rewritten whole, so they are not read. Nor is its ACP server (`hermes-acp`) a door: an editor
starts it over stdio for a session of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents.base import Change, DoctorRequest, Setup, WakeRequest
from paneboard.agents.hookfile import write_project_file
from paneboard.agents.script import Script, ScriptAgent, ScriptDoor, socket_option
from paneboard.agents.sqlite_seen import DbSighting, user_text
from paneboard.agents.wake import resume_door
from paneboard.listener.doors.base import Door
from paneboard.listener.doors.resume import Mark, session_word
from paneboard.listener.seen import Sighting
from paneboard.protocol.errors import BoardIOError
from paneboard.state.health import Check

NAME = "hermes-plugin"
FOLDER = Path(".hermes") / "plugins" / "paneboard"
PLUGIN = FOLDER / "__init__.py"
MANIFEST = FOLDER / "plugin.yaml"
MARK = "# paneboard: the Hermes Agent door."
MANIFEST_TEXT = f"""{MARK} Written by `paneboard hook install hermes`.
name: paneboard
version: "1"
description: "paneboard: prompts from the other agents of the board start a turn here"
"""
SOURCE = "hermes-db"
# The user messages holding a prompt's header, after the last row read (`id` is Hermes's
# AUTOINCREMENT key: never reused); each is a turn's input as soon as it is written.
QUERY = (
    "SELECT id, content, 1 FROM messages WHERE id > ? AND role = 'user' "
    "AND instr(content, '[paneboard] prompt ') > 0 ORDER BY id"
)
DEFAULT = 'COMMAND = ["paneboard", "hook", "session-start", "--agent", "hermes"]'
ENABLE = (
    "Hermes Agent loads it only with HERMES_ENABLE_PROJECT_PLUGINS=1 in its environment and "
    "paneboard under plugins: enabled: in $HERMES_HOME/config.yaml (hermes plugins enable does "
    "not see a project's plugins)"
)


class PluginScript(Script):
    """The plugin's ``__init__.py``: Python, its command a list literal."""

    def text(self, exe: str, options: list[str] | tuple[str, ...]) -> str:  # type: ignore[override]
        template = (Path(__file__).parent / self.template).read_text(encoding="utf-8")
        command = [exe, "hook", "session-start", "--agent", self.kind, *options]
        return template.replace(DEFAULT, f"COMMAND = {json.dumps(command)}")


SCRIPT = PluginScript(PLUGIN, "hermes_plugin.py", MARK, "hermes", "plugin")
MANIFEST_FILE = Script(MANIFEST, "", MARK, "hermes", "plugin manifest")


class HermesPluginDoor(ScriptDoor):
    """Hands a prompt to a Hermes session through paneboard's plugin."""

    name = NAME
    gone_reason = "Hermes Agent has ended"
    title = "Hermes Agent"
    word = "plugin"
    not_taken = "Hermes did not take it"


@dataclass(frozen=True)
class Hermes(ScriptAgent):
    """Hermes Agent, reached through a listener its plugin starts (`--mode listen` only)."""

    def files(self, setup: Setup, action: str) -> list[Path]:
        return [setup.project / PLUGIN, setup.project / MANIFEST]

    def install(self, setup: Setup) -> list[Change]:
        """The plugin and its manifest, both checked before either is written."""
        plugin, manifest = setup.project / PLUGIN, setup.project / MANIFEST
        texts = {plugin: SCRIPT.text(setup.exe, setup.words()), manifest: MANIFEST_TEXT}
        stale = [
            p
            for p, old in ((plugin, SCRIPT), (manifest, MANIFEST_FILE))
            if old.current(p) != texts[p]
        ]
        for path in stale:
            try:
                write_project_file(path, texts[path].encode(), setup.project)
            except OSError as exc:
                raise BoardIOError(f"cannot write {path}: {exc.strerror}") from exc
        done = "installed paneboard plugin" if stale else "paneboard plugin already installed:"
        return [Change(f"{done} {plugin}", plugin, bool(stale)), Change(ENABLE)]

    def uninstall(self, setup: Setup) -> list[Change]:
        """Remove the plugin and its manifest, and the folders install made if left empty."""
        plugin, manifest = setup.project / PLUGIN, setup.project / MANIFEST
        found = [p for p, own in ((manifest, MANIFEST_FILE), (plugin, SCRIPT)) if own.current(p)]
        if not found:
            return [Change(f"no paneboard plugin at {plugin}", plugin)]
        for path in found:
            path.unlink()
        for folder in (FOLDER, FOLDER.parent, FOLDER.parent.parent):
            try:
                (setup.project / folder).rmdir()
            except OSError:
                break  # not empty: someone else's files live there
        return [Change(f"removed paneboard plugin {plugin}", plugin, True)]

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        """Hermes's database, as its plugin named it: the user rows added since the mark."""
        if transcript is None:
            return None
        return DbSighting(mark, SOURCE, transcript, self.user_texts, QUERY)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        return user_text(record)

    def wake_door(self, request: WakeRequest) -> Door:
        """`hermes chat --resume ID -Q --query=TEXT`: one headless turn of the stored session,
        in the same conversation (its SQLite database, which no `seen` follows). Hermes reads
        no query on its input, and prints text, not events. Admitted: its line ``↻ Resumed
        session ID``, printed once the session is loaded and before the query's turn. Not
        `hermes -z`, which takes `--resume` and starts a new session all the same."""
        session = session_word(request.session, self.title)
        argv = ["hermes", "chat", "--resume", session, "-Q"]
        resumed = f"↻ Resumed session {session} "
        marks: tuple[Mark, ...] = (lambda e: str(e.get("line", "")).startswith(resumed),)
        return resume_door(request, "hermes-resume", self.title, argv, marks, "--query=")

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        """The script agent's checks, and, with the plugin installed, whether this environment
        lets Hermes load it."""
        checks = super().doctor(ask)
        flag = ask.env.get("HERMES_ENABLE_PROJECT_PLUGINS", "").lower()
        if SCRIPT.installed(ask.project) and flag not in ("1", "true", "yes", "on"):
            checks.append(Check("warn", self.kind, f"no HERMES_ENABLE_PROJECT_PLUGINS=1: {ENABLE}"))
        return checks


HERMES = Hermes(
    kind="hermes",
    title="Hermes Agent",
    modes=("listen",),
    default_mode="listen",
    hooks_file=str(PLUGIN),
    events={},
    door=NAME,
    seen_source=SOURCE,
    listener_runner="its plugin",
    script=SCRIPT,
    socket_env="PANEBOARD_HERMES_SOCKET",
    folder="paneboard-hermes",
    door_class=HermesPluginDoor,
    command="hermes",
    listen_options=(socket_option(SCRIPT),),
)
