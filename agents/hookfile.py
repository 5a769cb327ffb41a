"""Agents reached by hooks in a JSON file: merging paneboard's hooks into it, and out again.

Claude Code reads ``DIR/.claude/settings.local.json``, Codex ``DIR/.codex/hooks.json``,
Gemini CLI ``DIR/.gemini/settings.json`` and Copilot CLI ``DIR/.github/hooks/paneboard.json``,
all shaped ``{"hooks": {EVENT: [ENTRY, …]}}`` where an entry holds ``{"hooks": [{"type":
"command", "command": …}]}`` (each agent adds its own keys: `HookFileAgent.entry`).
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
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paneboard.agents.base import Agent, Change, DoctorRequest, Options, Setup
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.files import write_atomic
from paneboard.state.health import Check
from paneboard.state.stores import shown_word

_OURS = re.compile(r"paneboard\S*'? hook (session-start|session-end|stop)\b")


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


def with_ours(data: dict[str, Any], entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """*data* with paneboard's *entries* (event -> entry) last in their events, once."""
    out = without_ours(data)
    hooks = dict(out.get("hooks", {}))
    for event, entry in entries.items():
        hooks[event] = [*hooks.get(event, []), entry]
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


def written_options(command: str) -> dict[str, str]:
    """The where-and-who options a hook command carries (`--home`, `--board`, `--store`, …)."""
    words = shlex.split(command)
    return {
        word: value
        for word, value in itertools.pairwise(words)
        if word in ("--as", "--home", "--board", "--store", "--nats-creds", "--nats-tls-ca")
    }


def our_commands(path: Path) -> dict[str, str]:
    """Each event of the file at *path* that runs a paneboard hook, with its command."""
    try:
        data = load(path)
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


def acting_for(written: dict[str, str]) -> str:
    """Which agent, home, board and store hooks with these options act for (for `doctor`)."""
    parts = []
    for flag, what, default in (
        ("--as", "agent", "named by the session"),
        ("--home", "home", "$PANEBOARD_HOME or the default"),
        ("--board", "board", "$PANEBOARD_BOARD or the git repository's name"),
        ("--store", "store", "$PANEBOARD_STORE or the file log"),
    ):
        shown = shown_word(written[flag]) if flag in written else default
        parts.append(f"{what} {shown}")
    return ", ".join(parts)


def remove_own_file(path: Path) -> None:
    """Remove a file of paneboard's own, and the two folders above it if that empties them."""
    path.unlink()
    for folder in (path.parent, path.parent.parent):
        try:
            folder.rmdir()
        except OSError:
            break  # not empty: someone else's files live there


@dataclass(frozen=True)
class HookFileAgent(Agent):
    """An agent whose hooks paneboard merges into a JSON file of the project.

    *own_file*: the file is paneboard's alone (uninstall removes it once it is empty);
    *notes*: what install tells the person whatever it changed; *revives*: its Stop hook runs
    in `--mode listen` too, to start a listener that died again at a turn's end.
    """

    own_file: bool = False
    notes: tuple[str, ...] = ()
    revives: bool = False

    def path(self, project: Path) -> Path:
        assert self.hooks_file is not None
        return project / self.hooks_file

    def entry(self, action: str, command: str) -> dict[str, Any]:
        """One entry of the event's list, running *command* for the hook *action*."""
        return {"hooks": [{"type": "command", "command": command}]}

    def commands(self, mode: str, exe: str, options: Options = ()) -> dict[str, str]:
        """The command each hook event runs in *mode*, with the *options* given at install.

        Options given (`--as`, `--home`, `--board`, `--store`, …) are written into every
        command; those not given are left to the environment of the agent's session. The
        Stop hook runs in the stop modes (and in `listen` where the agent `revives`: it starts
        a listener that died again); session-end, where the agent has it, in the listen modes
        (it stops the listener).
        """
        given = "".join(f" {flag} {shlex.quote(value)}" for flag, value in options)
        tail = f" --agent {self.kind} --mode {mode}{given}"
        stop = mode != "listen" or self.revives
        wanted = {"session-start": True, "stop": stop, "session-end": mode != "stop"}
        return {
            event: f"{shlex.quote(exe)} hook {action}{tail}"
            for action, event in self.events.items()
            if wanted[action]
        }

    def merged(self, data: dict[str, Any], setup: Setup) -> dict[str, Any]:
        """*data* with this install's hooks in it."""
        commands = self.commands(setup.mode, setup.exe, setup.options)
        actions = {event: action for action, event in self.events.items()}
        return with_ours(
            data, {event: self.entry(actions[event], cmd) for event, cmd in commands.items()}
        )

    def files(self, setup: Setup, action: str) -> list[Path]:
        files = [self.path(setup.project)]
        if self.mcp is not None and (setup.mcp or action == "uninstall"):
            files.append(self.mcp.path(setup.project))
        return files

    def install(self, setup: Setup) -> list[Change]:
        path = self.path(setup.project)
        data = load(path)
        new = self.merged(data, setup)
        if setup.mcp:
            self._register(setup, write=False)  # every check of the write, before any write
        changed = new != data
        if changed:
            save(path, new, setup.project)
        done = "installed paneboard hooks in" if changed else "paneboard hooks already installed in"
        changes = [Change(f"{done} {path} (mode {setup.mode})", path, changed)]
        if setup.mcp:
            changes.append(self._register(setup))
        return changes + [Change(note) for note in self.notes]

    def uninstall(self, setup: Setup) -> list[Change]:
        path = self.path(setup.project)
        data = load(path)
        if self.mcp is not None:
            self.mcp.check(setup.project)  # refuse a malformed one before writing
        return [self._unhook(path, data, setup.project), *self._unregister(setup)]

    def _unhook(self, path: Path, data: dict[str, Any], project: Path) -> Change:
        """Remove exactly the entries `install` added."""
        new = without_ours(data)
        if new == data:
            return Change(f"no paneboard hooks in {path}", path)
        if new == {} and self.own_file:
            remove_own_file(path)
        else:
            save(path, new, project)
        return Change(f"removed paneboard hooks from {path}", path, True)

    def _register(self, setup: Setup, *, write: bool = True) -> Change:
        """`paneboard mcp` in the agent's project configuration, with the options given."""
        assert self.mcp is not None
        args = ["mcp", "--agent", self.kind, *setup.words()]
        path, changed = self.mcp.install(setup.project, setup.exe, args, write=write)
        done = (
            "registered the paneboard MCP server in"
            if changed
            else "paneboard MCP server already in"
        )
        return Change(f"{done} {path} ({setup.exe} mcp)", path, changed)

    def _unregister(self, setup: Setup) -> list[Change]:
        if self.mcp is None:
            return []
        path, changed = self.mcp.uninstall(setup.project)
        return (
            [Change(f"removed the paneboard MCP server from {path}", path, True)] if changed else []
        )

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        return self.hook_checks(ask.project) + self.mcp_checks(ask.project)

    def hook_checks(self, project: Path) -> list[Check]:
        path = self.path(project)
        commands = our_commands(path)
        if not commands:
            hint = f"(paneboard hook install {self.kind})"
            return [Check("warn", "hooks", f"{self.kind}: none in {path} {hint}")]
        written = written_options(next(iter(commands.values())))
        return [
            Check("ok", "hooks", f"{self.kind}: {', '.join(commands)} in {path}"),
            Check("ok", "hooks", f"{self.kind} hooks use {acting_for(written)}"),
        ]

    def mcp_checks(self, project: Path) -> list[Check]:
        if self.mcp is None:
            return []
        return [self.mcp.doctor(self.kind, project)]


@dataclass(frozen=True)
class StopHookAgent(HookFileAgent):
    """An agent reached only through its Stop hook (`--mode stop`), as Gemini CLI and Copilot
    CLI are: the hook reply ``{"decision": "block", "reason": TEXT}`` makes TEXT the next user
    turn, and the hook fires again after it with ``stop_hook_active``."""

    def doctor(self, ask: DoctorRequest) -> list[Check]:
        """On PATH? Hooks installed?"""
        path = self.path(ask.project)
        events = list(our_commands(path))
        where = shutil.which(self.kind)
        cli = where or f"no `{self.kind}` on PATH"
        if not events:
            hint = f"(paneboard hook install {self.kind})"
            return [Check("warn", self.kind, f"{cli}; no hooks in {path} {hint}")]
        door = f"Stop-hook door: {', '.join(events)} in {path}"
        return [Check("ok" if where else "warn", self.kind, f"{cli}; {door}")]
