"""Kilo Code (`@kilocode/cli-linux-x64`, checked with 7.7.9): paneboard's plugin, the `kilo` door
it serves, and the doctor's checks.

Kilo Code is a fork of OpenCode, and its door is OpenCode's: a plugin in each Kilo Code
process (the TUI's, `kilo serve`'s). Kilo Code loads a project's plugins from
``.kilo/plugins/`` (also the older ``.kilocode/plugins/``; it reads no ``.opencode/``), with
OpenCode's plugin interface, so `hook install kilo` writes paneboard's OpenCode plugin
(``opencode_plugin.js``) with Kilo Code's names (``kilo_plugin.js`` is its header) to
``DIR/.kilo/plugins/paneboard.js``; installing the same again changes nothing; a file at that
path that paneboard did not write is refused and left untouched; uninstall removes the file
(and the folders install created, when they are left empty: Kilo Code writes
``.kilo/.gitignore`` at its start, which is its own and stays).

The plugin serves a private Unix socket ``DIR/<pid>.sock`` and writes the registry
``DIR/<pid>.json`` ``{"pid", "socket", "directory"}`` (DIR: ``$XDG_RUNTIME_DIR/paneboard-kilo``,
else ``~/.cache/paneboard-kilo``), and starts the session's listener once the person's first
session starts (not in ``kilo run``, which exits at its first idle moment). The door writes
``{"id": ID, "text": TEXT}`` and a newline; the plugin answers ``{"ok": true, "session": ID}``
once Kilo Code has taken the prompt (``promptAsync``: a turn starts now if the session is idle,
after the current one if it is busy), else ``{"ok": false, "error": WHY}``: `delivered` means
Kilo Code took the prompt for the session shown.

`seen` comes from Kilo Code's own SQLite database, read only (agents/sqlite_seen.py):
``$KILO_DB`` (a path, absolute or in Kilo Code's data folder), else
``$XDG_DATA_HOME/kilo/kilo.db`` (``~/.local/share/kilo/kilo.db``); the session start gives the
listener that path, from the environment Kilo Code runs in. A prompt is seen once a text part
(table ``part``) of a ``user`` message (table ``message``) holds its header and a turn has
started with it: an assistant message of the session whose parent is that message or a later
one. Kilo Code writes a prompt handed to a busy session at once, as a user message; the
assistant message comes when its turn starts, after the running one.

For each local plugin Kilo Code tries, at every start, to `npm install @kilocode/plugin` of its
own version into the plugin's folder; no such version is on the registry (7.3.1 is the newest),
the attempt fails in the background, and the plugin, which needs nothing, runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from paneboard.agents.opencode import OpenCode, PluginDoor, plugin_agent
from paneboard.agents.script import Script, private_folder
from paneboard.agents.sqlite_seen import DbSighting, user_text
from paneboard.listener.doors.base import Door
from paneboard.listener.seen import Sighting

PLUGIN = Path(".kilo") / "plugins" / "paneboard.js"
FOLDER = "paneboard-kilo"
SOCKET_ENV = "PANEBOARD_KILO_SOCKET"
SCRIPT = Script(
    PLUGIN,
    "kilo_plugin.js",
    "// paneboard: the Kilo Code door.",
    "kilo",
    "plugin",
    base="opencode_plugin.js",
    names=(
        ("paneboard-opencode", FOLDER),
        ("PANEBOARD_OPENCODE_SOCKET", SOCKET_ENV),
        ('"--agent", "opencode"', '"--agent", "kilo"'),
        ("OpenCode", "Kilo Code"),
    ),
)


def plugin_folder() -> Path:
    """Where the plugin keeps its sockets (its `privateFolder()`)."""
    return private_folder(FOLDER)


class KiloDoor(PluginDoor):
    """Hands a prompt to a Kilo Code session through paneboard's plugin."""

    name = "kilo"
    gone_reason = "Kilo Code has ended"
    title = "Kilo Code"


SOURCE = "kilo-db"
# The text parts of user messages holding a prompt's header, after the last part read, and
# whether the message is a turn's input yet: Kilo Code writes a prompt handed to a busy session
# at once, and starts its turn later, with an assistant message whose parent is that user
# message or a later one of the session (message ids ascend with time).
QUERY = (
    "SELECT p.rowid, json_extract(p.data, '$.text'), EXISTS (SELECT 1 FROM message a "
    "WHERE a.session_id = m.session_id AND json_extract(a.data, '$.role') = 'assistant' "
    "AND json_extract(a.data, '$.parentID') >= m.id) "
    "FROM part p JOIN message m ON m.id = p.message_id "
    "WHERE p.rowid > ? AND instr(p.data, '[paneboard] prompt ') > 0 "
    "AND json_extract(p.data, '$.type') = 'text' AND json_extract(m.data, '$.role') = 'user' "
    "ORDER BY p.rowid"
)


def database(environ: Mapping[str, str]) -> Path | None:
    """Where Kilo Code 7.7.9, run in *environ*, keeps its conversations (None: in memory)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    data = Path(environ.get("XDG_DATA_HOME") or Path(home) / ".local" / "share") / "kilo"
    named = environ.get("KILO_DB", "")
    if named == ":memory:":
        return None
    return data / (named or "kilo.db")  # an absolute KILO_DB replaces the whole path


@dataclass(frozen=True)
class Kilo(OpenCode):
    """Kilo Code: OpenCode's plugin door, and `seen` from its database."""

    def listen_args(
        self, data: Mapping[str, Any], environ: Mapping[str, str], parent: int
    ) -> tuple[list[str], dict[str, str]]:
        """The plugin's door, and Kilo Code's database for `seen`."""
        args, env = super().listen_args(data, environ, parent)
        found = database(environ)
        return args + (["--transcript", str(found)] if found else []), env

    def sighting(self, mark: Path, door: Door, transcript: Path | None) -> Sighting | None:
        if transcript is None:
            return None
        return DbSighting(mark, SOURCE, transcript, self.user_texts, QUERY)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        return user_text(record)


_OPENCODE_SHAPED = plugin_agent("kilo", "Kilo Code", SCRIPT, FOLDER, SOCKET_ENV, KiloDoor)
KILO = Kilo(
    **{f.name: getattr(_OPENCODE_SHAPED, f.name) for f in fields(_OPENCODE_SHAPED)}
    | {"seen_source": SOURCE}
)
