"""`paneboard hook install|uninstall`: merging paneboard's hooks into an agent's settings file.

Claude Code reads ``DIR/.claude/settings.local.json`` and Codex ``DIR/.codex/hooks.json``,
both shaped ``{"hooks": {EVENT: [{"hooks": [{"type": "command", "command": …}]}]}}``.
Installing twice changes nothing; every other key and hook is kept; uninstall removes
exactly the entries install added (recognised by their ``paneboard … hook`` command). A
file that is not valid JSON of that shape is refused and left untouched.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.files import write_atomic

AGENTS = ("claude", "codex")
_OURS = re.compile(r"paneboard\S*'? hook (session-start|session-end|stop)\b")


def settings_path(agent: str, project: Path) -> Path:
    return (
        project / ".claude" / "settings.local.json"
        if agent == "claude"
        else project / ".codex" / "hooks.json"
    )


def hook_commands(
    agent: str, mode: str, exe: str, options: Sequence[tuple[str, str]] = ()
) -> dict[str, str]:
    """The command each hook event runs, for *agent* in *mode*, with the *options* given.

    Options given at install (`--as`, `--home`, `--board`, `--store`, …) are written into
    every command; those not given are left to the environment of the agent's session.
    """
    given = "".join(f" {flag} {shlex.quote(value)}" for flag, value in options)
    tail = f" --agent {agent} --mode {mode}{given}"
    base = shlex.quote(exe)
    events = {"SessionStart": f"{base} hook session-start{tail}"}
    if mode in ("stop", "both"):
        events["Stop"] = f"{base} hook stop{tail}"
    if mode in ("listen", "both") and agent == "claude":
        events["SessionEnd"] = f"{base} hook session-end{tail}"
    return events


def parse_json(path: Path, text: str) -> Any:
    """The JSON *text* of the file *path* ({} if blank); `BadInput` if it is not JSON."""
    try:
        return json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); "
            "fix or move it, nothing was changed"
        ) from None


def load(path: Path) -> dict[str, Any]:
    """The settings at *path* ({} if missing); `BadInput` if it is not a JSON object with a valid
    `hooks`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise BoardIOError(f"cannot read {path}: {exc.strerror}") from exc
    data = parse_json(path, text)
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or not isinstance(hooks, dict)
        or not all(isinstance(v, list) for v in hooks.values())
    ):
        raise BadInput(
            f"{path} does not hold a settings object with a `hooks` map of lists; "
            "nothing was changed"
        )
    return data


def is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and any(
        isinstance(h, dict) and isinstance(h.get("command"), str) and _OURS.search(h["command"])
        for h in entry.get("hooks", [])
    )


def without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """*data* with every paneboard hook entry removed (and events left empty dropped)."""
    hooks = {
        event: [e for e in entries if not is_ours(e)]
        for event, entries in data.get("hooks", {}).items()
    }
    out = {k: v for k, v in data.items() if k != "hooks"}
    kept = {event: entries for event, entries in hooks.items() if entries}
    if kept or ("hooks" in data and not data["hooks"]):
        out["hooks"] = kept
    return out


def with_ours(data: dict[str, Any], commands: dict[str, str]) -> dict[str, Any]:
    out = without_ours(data)
    hooks = dict(out.get("hooks", {}))
    for event, command in commands.items():
        hooks[event] = [*hooks.get(event, []), {"hooks": [{"type": "command", "command": command}]}]
    return {**out, "hooks": hooks}


def save(path: Path, data: dict[str, Any], project: Path) -> None:
    """Write atomically, never through a link, its folders made under *project* if missing."""
    write_project_file(path, (json.dumps(data, indent=2) + "\n").encode(), project)


def write_project_file(path: Path, data: bytes, project: Path) -> None:
    """Write a file of *project* atomically: the file keeps its permissions (0644 when new,
    never writable by others), folders made 0755; a symlink on the way is refused."""
    try:
        mode = os.lstat(path).st_mode & 0o755  # the agent's file keeps its permissions
    except FileNotFoundError:
        mode = 0o644
    write_atomic(path, data, mode=mode, root=project, folder_mode=0o755)


def install(
    agent: str, project: Path, mode: str, exe: str, options: Sequence[tuple[str, str]] = ()
) -> tuple[Path, bool]:
    """Merge the hooks in; return the file and whether it changed."""
    path = settings_path(agent, project)
    data = load(path)
    new = with_ours(data, hook_commands(agent, mode, exe, options))
    if new == data:
        return path, False
    save(path, new, project)
    return path, True


def uninstall(agent: str, project: Path) -> tuple[Path, bool]:
    path = settings_path(agent, project)
    data = load(path)
    new = without_ours(data)
    if new == data:
        return path, False
    save(path, new, project)
    return path, True


def installed(agent: str, project: Path) -> dict[str, str]:
    """Each event that runs a paneboard hook in *project*, with its command (for `doctor`)."""
    try:
        data = load(settings_path(agent, project))
    except BadInput:
        return {}
    return {
        event: hook["command"]
        for event, entries in data.get("hooks", {}).items()
        for entry in entries
        if is_ours(entry)
        for hook in entry["hooks"]
        if isinstance(hook, dict) and _OURS.search(str(hook.get("command")))
    }


def written_options(command: str) -> dict[str, str]:
    """The where-and-who options a hook command carries (`--home`, `--board`, `--store`, …)."""
    words = shlex.split(command)
    return {
        word: value
        for word, value in itertools.pairwise(words)
        if word in ("--as", "--home", "--board", "--store", "--nats-creds", "--nats-tls-ca")
    }
