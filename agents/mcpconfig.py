"""`hook install … --mcp`: registering `paneboard mcp` in an agent's project file of MCP servers.

Claude Code reads project MCP servers from ``DIR/.mcp.json`` (``{"mcpServers": {NAME:
{"type": "stdio", "command": …, "args": […]}}}``); Codex from the ``[mcp_servers.NAME]``
table of ``DIR/.codex/config.toml``. paneboard's entry is the one named ``paneboard``.
Registering twice changes nothing; everything else in the file is kept as it was (the TOML
file is edited as text, so its comments and layout survive); unregistering removes exactly
that entry. A file that does not parse, or that holds the entry in a form paneboard does
not edit, is refused and left untouched.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents.hookfile import parse_json, write_project_file
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.health import Check
from paneboard.state.stores import shown_word

NAME = "paneboard"
_HEADER = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]\s*(#.*)?$")
_OURS = re.compile(r'^\[?\s*mcp_servers\s*\.\s*(paneboard|"paneboard")\s*(\..*)?$')


@dataclass(frozen=True)
class McpConfig:
    """One agent's project file of MCP servers, *file* relative to the project."""

    file: str

    def path(self, project: Path) -> Path:
        return project / self.file

    def install(
        self, project: Path, exe: str, args: list[str], *, write: bool = True
    ) -> tuple[Path, bool]:
        """Register the server; return the file and whether it changed (would change, when
        not *write*: every check is made, nothing is written)."""
        path = self.path(project)
        text = _read(path)
        new = self.registering(path, text, exe, args)
        changed = new != text
        if changed and write:
            _write(path, new, project)
        return path, changed

    def uninstall(self, project: Path) -> tuple[Path, bool]:
        """Remove paneboard's entry (and nothing else); return the file and whether it changed."""
        path = self.path(project)
        text = _read(path)
        new = self.unregistering(path, text)
        if new == text:
            return path, False
        _write(path, new, project)
        return path, True

    def check(self, project: Path) -> None:
        """Refuse (`BadInput`) if the file is one `install` or `uninstall` would refuse."""
        path = self.path(project)
        self.unregistering(path, _read(path))

    def registered(self, project: Path) -> dict[str, Any] | None:
        """paneboard's entry in *project*'s file (for `doctor`); None if it has none."""
        import tomllib  # here, where a TOML file is read: a hook that reads none does not pay

        path = self.path(project)
        try:
            entry = self.entry(path, _read(path))
        except (BadInput, BoardIOError, tomllib.TOMLDecodeError, AttributeError):
            return None
        return entry if isinstance(entry, dict) else None

    def doctor(self, kind: str, project: Path) -> Check:
        path = self.path(project)
        entry = self.registered(project)
        if entry is None:
            hint = f"(paneboard hook install {kind} --mcp)"
            return Check("warn", "mcp", f"{kind}: no paneboard server in {path} {hint}")
        command, args = entry.get("command"), entry.get("args")
        words = [command, *(args if isinstance(args, list) else [])]
        shown = " ".join(shown_word(str(word)) for word in words)
        if not isinstance(command, str) or not shutil.which(command):
            why = f"{path} runs {command!r}, which is not an executable"
            return Check("fail", "mcp", f"{kind}: {why}")
        if importlib.util.find_spec("mcp") is None:
            fix = "pip install 'paneboard[mcp]'"
            return Check("fail", "mcp", f"{kind}: registered, but the MCP SDK is missing: {fix}")
        return Check("ok", "mcp", f"{kind}: {shown} in {path}")

    def registering(self, path: Path, text: str, exe: str, args: list[str]) -> str:
        raise NotImplementedError

    def unregistering(self, path: Path, text: str) -> str:
        raise NotImplementedError

    def entry(self, path: Path, text: str) -> Any:
        raise NotImplementedError


class JsonServers(McpConfig):
    """Claude Code's ``.mcp.json``: ``{"mcpServers": {NAME: {"type": "stdio", …}}}``."""

    def registering(self, path: Path, text: str, exe: str, args: list[str]) -> str:
        data = _load_json(path, text)
        ours = {"type": "stdio", "command": exe, "args": args}
        new = {**data, "mcpServers": {**data.get("mcpServers", {}), NAME: ours}}
        return text if new == data else json.dumps(new, indent=2) + "\n"

    def unregistering(self, path: Path, text: str) -> str:
        data = _load_json(path, text)
        if NAME not in data.get("mcpServers", {}):
            return text
        servers = {k: v for k, v in data["mcpServers"].items() if k != NAME}
        rest = {k: v for k, v in data.items() if k != "mcpServers"}
        return json.dumps({**rest, **({"mcpServers": servers} if servers else {})}, indent=2) + "\n"

    def entry(self, path: Path, text: str) -> Any:
        return _load_json(path, text).get("mcpServers", {}).get(NAME)


class TomlServers(McpConfig):
    """Codex's ``config.toml``: a ``[mcp_servers.NAME]`` table, edited as text."""

    def registering(self, path: Path, text: str, exe: str, args: list[str]) -> str:
        rest = _without_ours_toml(path, text).rstrip("\n")
        listed = ", ".join(map(toml_string, args))
        table = f"[mcp_servers.{NAME}]\ncommand = {toml_string(exe)}\nargs = [{listed}]\n"
        new = (rest + "\n\n" if rest else "") + table
        _same_but_ours(path, text, new, {"command": exe, "args": args})
        return new

    def unregistering(self, path: Path, text: str) -> str:
        new = _without_ours_toml(path, text)
        if new == text:
            return text
        return new.rstrip("\n") + "\n" if new.strip() else ""

    def entry(self, path: Path, text: str) -> Any:
        import tomllib

        return tomllib.loads(text).get("mcp_servers", {}).get(NAME)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise BoardIOError(f"cannot read {path}: {exc.strerror}") from exc


def _write(path: Path, text: str, project: Path) -> None:
    write_project_file(path, text.encode(), project)


def _load_json(path: Path, text: str) -> dict[str, Any]:
    data = parse_json(path, text)
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise BadInput(
            f"{path} does not hold an object with an `mcpServers` map; nothing was changed"
        )
    return data


def _without_ours_toml(path: Path, text: str) -> str:
    """*text* without the ``[mcp_servers.paneboard]`` table and its sub-tables; refused if it
    does not parse, or still defines the entry some other way (inline, dotted keys)."""
    _parse_toml(path, text)
    kept: list[str] = []
    ours = False
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            ours = bool(_OURS.match(header.group(1)))
        if not ours:
            kept.append(line)
    rest = "".join(kept)
    if NAME in _parse_toml(path, rest).get("mcp_servers", {}):
        raise BadInput(
            f"{path} defines mcp_servers.{NAME} other than as a [mcp_servers.{NAME}] table; "
            "nothing was changed"
        )
    _same_but_ours(path, text, rest, None)
    return rest


def _same_but_ours(path: Path, old: str, new: str, entry: dict[str, Any] | None) -> None:
    """Refuse an edit whose parsed result is not the parsed original with paneboard's entry
    set to *entry* (None: gone): a header inside a multi-line string is not a table."""
    have, want = _parse_toml(path, new), _parse_toml(path, old)
    servers = {k: v for k, v in want.get("mcp_servers", {}).items() if k != NAME}
    if entry is not None:
        servers[NAME] = entry
    want = {k: v for k, v in want.items() if k != "mcp_servers"}
    if servers or "mcp_servers" in have:
        want["mcp_servers"] = servers
    if have != want:
        raise BadInput(
            f"{path}: editing its [mcp_servers.{NAME}] table would change other settings "
            "(a table header inside a multi-line string?); edit it by hand, nothing was changed"
        )


def _parse_toml(path: Path, text: str) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(
            f"{path} is not valid TOML ({exc}); fix or move it, nothing was changed"
        ) from None
    if not isinstance(data.get("mcp_servers", {}), dict):
        raise BadInput(f"{path}: `mcp_servers` is not a table; nothing was changed")
    return data


def toml_string(value: str) -> str:
    """A TOML basic string of *value*; `BadInput` for text that is not Unicode (a path that
    is not UTF-8), which no TOML file can hold."""
    try:
        value.encode()
    except UnicodeEncodeError:
        why = "is not valid UTF-8, which a TOML file cannot hold"
        raise BadInput(f"{value!r} {why}; nothing was changed") from None
    # JSON's escapes are TOML's; DEL, which JSON leaves raw, TOML refuses raw
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
