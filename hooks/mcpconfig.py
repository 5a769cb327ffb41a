"""`paneboard hook install … --mcp`: registering `paneboard mcp` with an agent, per project.

Claude Code reads project MCP servers from ``DIR/.mcp.json`` (``{"mcpServers": {NAME:
{"type": "stdio", "command": …, "args": […]}}}``); Codex from the ``[mcp_servers.NAME]``
table of ``DIR/.codex/config.toml``. paneboard's entry is the one named ``paneboard``.
Registering twice changes nothing; everything else in the file is kept as it was (the TOML
file is edited as text, so its comments and layout survive); unregistering removes exactly
that entry. A file that does not parse, or that holds the entry in a form paneboard does
not edit, is refused and left untouched.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from paneboard.hooks.codex_trust import toml_string
from paneboard.hooks.settings import parse_json, write_project_file
from paneboard.protocol.errors import BadInput, BoardIOError

NAME = "paneboard"
FILES = {"claude": ".mcp.json", "codex": ".codex/config.toml"}  # per agent, in the project
AGENTS = tuple(FILES)
_HEADER = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]\s*(#.*)?$")
_OURS = re.compile(r'^\[?\s*mcp_servers\s*\.\s*(paneboard|"paneboard")\s*(\..*)?$')


def config_path(agent: str, project: Path) -> Path:
    if agent not in FILES:
        raise BadInput(f"--mcp registers the server with {' or '.join(AGENTS)}, not {agent}")
    return project / FILES[agent]


def server_args(agent: str, given: list[tuple[str, str]]) -> list[str]:
    """`paneboard mcp`'s arguments: the agent type (for its default name) and the options given
    to `hook install` (a path already absolute)."""
    return ["mcp", "--agent", agent, *(word for option in given for word in option)]


def install(
    agent: str, project: Path, exe: str, args: list[str], *, write: bool = True
) -> tuple[Path, bool]:
    """Register the server; return the file and whether it changed (would change, when not
    *write*: every check is made, nothing is written)."""
    path = config_path(agent, project)
    text = _read(path)
    if agent == "claude":
        data = _load_json(path, text)
        servers = {
            **data.get("mcpServers", {}),
            NAME: {"type": "stdio", "command": exe, "args": args},
        }
        new = json.dumps({**data, "mcpServers": servers}, indent=2) + "\n"
        changed = {**data, "mcpServers": servers} != data
    else:
        rest = _without_ours_toml(path, text).rstrip("\n")
        listed = ", ".join(map(_toml, args))
        table = f"[mcp_servers.{NAME}]\ncommand = {_toml(exe)}\nargs = [{listed}]\n"
        new = (rest + "\n\n" if rest else "") + table
        _same_but_ours(path, text, new, {"command": exe, "args": args})
        changed = new != text
    if changed and write:
        _write(path, new, project)
    return path, changed


def uninstall(agent: str, project: Path) -> tuple[Path, bool]:
    """Remove paneboard's entry (and nothing else); return the file and whether it changed."""
    path = config_path(agent, project)
    text = _read(path)
    if agent == "claude":
        data = _load_json(path, text)
        if NAME not in data.get("mcpServers", {}):
            return path, False
        servers = {k: v for k, v in data["mcpServers"].items() if k != NAME}
        rest = {k: v for k, v in data.items() if k != "mcpServers"}
        _write(
            path,
            json.dumps({**rest, **({"mcpServers": servers} if servers else {})}, indent=2) + "\n",
            project,
        )
        return path, True
    new = _without_ours_toml(path, text)
    if new == text:
        return path, False
    _write(path, new.rstrip("\n") + "\n" if new.strip() else "", project)
    return path, True


def check(agent: str, project: Path) -> None:
    """Refuse (`BadInput`) if the file is one `install` or `uninstall` would refuse."""
    path = config_path(agent, project)
    text = _read(path)
    if agent == "claude":
        _load_json(path, text)
    else:
        _without_ours_toml(path, text)


def registered(agent: str, project: Path) -> dict[str, Any] | None:
    """paneboard's entry in *project*'s file for *agent* (for `doctor`); None if it has none."""
    path = config_path(agent, project)
    try:
        text = _read(path)
        if agent == "claude":
            entry = _load_json(path, text).get("mcpServers", {}).get(NAME)
        else:
            entry = tomllib.loads(text).get("mcp_servers", {}).get(NAME)
    except (BadInput, BoardIOError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return entry if isinstance(entry, dict) else None


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
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(
            f"{path} is not valid TOML ({exc}); fix or move it, nothing was changed"
        ) from None
    if not isinstance(data.get("mcp_servers", {}), dict):
        raise BadInput(f"{path}: `mcp_servers` is not a table; nothing was changed")
    return data


def _toml(value: str) -> str:
    return toml_string(value)
