"""OpenCode: the door plugin `hook install opencode` writes, ``DIR/.opencode/plugins/paneboard.js``.

OpenCode has no shell hooks; a plugin runs inside each OpenCode process. paneboard's plugin
(``opencode_plugin.js`` beside this module) serves a private Unix socket and registry file,
starts the session's listener, and turns each line on the socket into a turn of the session
(see the plugin's header). Install writes the plugin with the command and options it was
given; installing the same again changes nothing; a file at that path that paneboard did not
write is refused and left untouched; uninstall removes the file (and the folders install
created, when they are left empty). OpenCode itself installs ``@opencode-ai/plugin`` into
``.opencode/`` (package.json, node_modules) for any local plugin: that is OpenCode's, not ours.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from paneboard.hooks.settings import write_project_file
from paneboard.protocol.errors import BadInput, BoardIOError

PLUGIN = Path(".opencode") / "plugins" / "paneboard.js"
_TEMPLATE = Path(__file__).with_name("opencode_plugin.js")
_MARK = "// paneboard: the OpenCode door."
_COMMAND_LINE = 'const COMMAND = ["paneboard", "hook", "session-start", "--agent", "opencode"];'


def plugin_path(project: Path) -> Path:
    return project / PLUGIN


def plugin_text(exe: str, options: Sequence[str]) -> str:
    """The plugin, its command the session-start hook with *options*."""
    template = _TEMPLATE.read_text(encoding="utf-8")
    command = [exe, "hook", "session-start", "--agent", "opencode", *options]
    return template.replace(_COMMAND_LINE, f"const COMMAND = {json.dumps(command)};")


def _current(path: Path) -> str | None:
    """The file's text (None if missing); `BadInput` if it is not paneboard's plugin."""
    try:
        if path.is_symlink():
            raise BadInput(f"{path} is a symlink; nothing was changed")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {path}: {exc}; nothing was changed") from None
    if not text.startswith(_MARK):
        raise BadInput(f"{path} is not paneboard's plugin; move it away, nothing was changed")
    return text


def install(project: Path, exe: str, options: Sequence[str]) -> tuple[Path, bool]:
    """Write the plugin; return its path and whether the file changed."""
    path = plugin_path(project)
    text = plugin_text(exe, options)
    if _current(path) == text:
        return path, False
    try:
        write_project_file(path, text.encode(), project)
    except OSError as exc:
        raise BoardIOError(f"cannot write {path}: {exc.strerror}") from exc
    return path, True


def uninstall(project: Path) -> tuple[Path, bool]:
    """Remove the plugin, and `.opencode/plugins` and `.opencode` if that leaves them empty."""
    path = plugin_path(project)
    if _current(path) is None:
        return path, False
    path.unlink()
    for folder in (path.parent, path.parent.parent):
        try:
            folder.rmdir()
        except OSError:
            break  # not empty: someone else's files live there
    return path, True


def installed(project: Path) -> bool:
    try:
        return _current(plugin_path(project)) is not None
    except BadInput:
        return False
