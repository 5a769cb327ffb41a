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

No `seen`: Kilo Code keeps its conversations as rows of a SQLite database
(``$XDG_DATA_HOME/kilo/kilo.db``, tables ``message`` and ``part``), not in a file paneboard
follows. For each local plugin Kilo Code tries, at every start, to `npm install
@kilocode/plugin` of its own version into the plugin's folder; no such version is on the
registry (7.3.1 is the newest), the attempt fails in the background, and the plugin, which
needs nothing, runs.
"""

from __future__ import annotations

from pathlib import Path

from paneboard.agents.opencode import PluginDoor, plugin_agent
from paneboard.agents.script import Script, private_folder

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


KILO = plugin_agent("kilo", "Kilo Code", SCRIPT, FOLDER, SOCKET_ENV, KiloDoor)
