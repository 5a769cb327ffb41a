"""Codex's hook trust: the `[hooks.state."…"] trusted_hash` entries of `$CODEX_HOME/config.toml`.

Codex runs a hook only once it is trusted: the TUI asks ("Hooks need review") and, on "Trust
all", writes one table per handler:

    [hooks.state."<absolute hooks.json>:<event_snake>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

The hash is SHA-256 of the compact, key-sorted JSON of ``{"event_name": E, "hooks":
[{"type": "command", "command": C, "timeout": T, "async": A}]}`` (plus ``"matcher"`` where
the event has one, and ``"statusMessage"`` when set). T is 600 when unset; SessionEnd's is 1
when unset and at most 3. So the trust covers the event, the command, its timeout and the
entry's place in the file: a changed command, or an entry moved, is "modified" to Codex and
asked about again; installing again writes the new hash.

config.toml is the user's own file: one kept as a link by a dotfiles manager is written
through that link when the link and its file are the user's (`state.ownfiles`), and refused,
naming why, when they are not.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from paneboard.agents.mcpconfig import toml_string
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.state.ownfiles import own_target, read_own, write_own

Trust = Literal["trusted", "untrusted", "changed"]
_NO_MATCHER = ("user_prompt_submit", "stop")
_KEY = r"""("(?:[^"\\]|\\.)*"|'[^']*')"""  # a TOML basic or literal string
_HEADER = re.compile(r"\s*\[\s*hooks\s*\.\s*state\s*\.\s*" + _KEY + r"\s*\]\s*(#.*)?")


def snake(event: str) -> str:
    """`SessionStart` → `session_start`, as Codex names events in trust keys."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", event).lower()


def handler_hash(event: str, group: Mapping[str, Any], handler: Mapping[str, Any]) -> str:
    """The `trusted_hash` Codex computes for one command *handler* of *group* under *event*."""
    ev = snake(event)
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    if ev in ("session_end", "interrupt"):
        timeout = 1 if timeout is None else min(3, int(timeout))
    item: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(600 if timeout is None else timeout)),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        item["statusMessage"] = handler["statusMessage"]
    ident: dict[str, Any] = {"event_name": ev, "hooks": [item]}
    if group.get("matcher") is not None and ev not in _NO_MATCHER:
        ident["matcher"] = group["matcher"]
    compact = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(compact.encode()).hexdigest()


def wanted(
    hooks_json: Path,
    data: Mapping[str, Any],
    ours: Callable[[Any], bool],
) -> dict[str, str]:
    """Trust key → hash for each command handler of *data* (a hooks.json) that *ours* accepts."""
    out: dict[str, str] = {}
    path = os.path.abspath(hooks_json)
    for event, groups in data.get("hooks", {}).items():
        for gi, group in enumerate(groups):
            if not isinstance(group, dict) or not ours(group):
                continue
            for hi, handler in enumerate(group.get("hooks", [])):
                if isinstance(handler, dict) and handler.get("type") == "command":
                    out[f"{path}:{snake(event)}:{gi}:{hi}"] = handler_hash(event, group, handler)
    return out


def _read(config: Path) -> tuple[str, dict[str, Any]]:
    try:
        data = read_own(config)
    except OSError as exc:
        raise BoardIOError(f"cannot read {config}: {exc.strerror}") from exc
    if data is None:
        return "", {}
    try:
        text = data.decode()
        return text, tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"{config} is not valid TOML ({exc}); nothing was changed") from None


def _state(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def trust_state(config: Path, entries: Mapping[str, str]) -> dict[str, Trust]:
    """For each key of *entries*: trusted (same hash), changed (another hash) or untrusted."""
    state = _state(_read(config)[1])
    out: dict[str, Trust] = {}
    for key, digest in entries.items():
        entry = state.get(key)
        have = entry.get("trusted_hash") if isinstance(entry, dict) else None
        out[key] = "untrusted" if have is None else "trusted" if have == digest else "changed"
    return out


def _header_key(line: str) -> str | None:
    m = _HEADER.fullmatch(line)
    if m is None:
        return None
    quoted = m.group(1)
    return str(json.loads(quoted)) if quoted.startswith('"') else quoted[1:-1]


def _without_tables(text: str, keys: set[str]) -> str:
    """*text* without the `[hooks.state."KEY"]` tables (header to the next header) of *keys*."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skipping = _header_key(line.rstrip("\r\n")) in keys
        if not skipping:
            out.append(line)
    return "".join(out)


def write_trust(config: Path, entries: Mapping[str, str], *, write: bool = True) -> bool:
    """Record *entries* as trusted in *config*, replacing older hashes for the same keys.

    Every other line is kept. A config that is not valid TOML, or cannot hold a key, is
    refused and left untouched. Returns whether the file changed (would change, when not
    *write*: every check is made, nothing is written).
    """
    text, doc = _read(config)
    state = _state(doc)
    if all(_hash_of(state.get(k)) == v for k, v in entries.items()):
        return False
    kept = _without_tables(text, set(entries))
    if kept and not kept.endswith("\n"):
        kept += "\n"
    tables = "".join(_table(key, digest) for key, digest in entries.items())
    new = kept + tables
    try:
        written = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"cannot add hook trust to {config} ({exc}); nothing was changed") from None
    if _pruned(written) != _pruned(_with_state(doc, dict(entries))):
        why = "keeps hook trust in a form paneboard cannot edit"
        raise BadInput(f"{config} {why}; nothing was changed")
    _replace(config, new, write)
    return True


def remove_trust(config: Path, entries: Mapping[str, str], *, write: bool = True) -> int:
    """Drop the trust tables of *entries* that still hold their hash (paneboard's own, as
    `write_trust` or Codex wrote them); a key trusted with another hash is left alone.

    Every other line is kept. Returns how many tables went (would go, when not *write*).
    """
    text, doc = _read(config)
    state = _state(doc)
    gone = {k for k, v in entries.items() if _hash_of(state.get(k)) == v}
    if not gone:
        return 0
    kept = _without_tables(text, gone).rstrip("\n")
    new = kept + "\n" if kept else ""  # the blank line written before a table goes with it
    try:
        left = tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        why = f"cannot remove hook trust from {config} ({exc})"
        raise BadInput(f"{why}; nothing was changed") from None
    if _pruned(left) != _pruned(_with_state(doc, dict.fromkeys(gone))):
        why = "keeps hook trust in a form paneboard cannot edit"
        raise BadInput(f"{config} {why}; nothing was changed")
    _replace(config, new, write)
    return len(gone)


def _with_state(doc: Mapping[str, Any], entries: Mapping[str, str | None]) -> dict[str, Any]:
    """*doc* as it should read after the edit: each key of *entries* trusted with its hash,
    or gone (None); everything else as it was."""
    hooks = doc.get("hooks")
    hooks = dict(hooks) if isinstance(hooks, dict) else {}
    state = {k: v for k, v in _state(doc).items() if k not in entries}
    state.update({k: {"trusted_hash": v} for k, v in entries.items() if v is not None})
    return {**doc, "hooks": {**hooks, "state": state}}


def _pruned(doc: Mapping[str, Any]) -> dict[str, Any]:
    """*doc* without an empty `hooks.state` and then an empty `hooks` (headers that only
    paneboard's tables implied)."""
    out = dict(doc)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        hooks = {k: v for k, v in hooks.items() if not (k == "state" and v == {})}
        out["hooks"] = hooks
        if not hooks:
            del out["hooks"]
    return out


def _replace(config: Path, new: str, write: bool) -> None:
    """Write *new* in place of *config* (through the user's own link), atomically, keeping
    its mode; when not *write*, only refuse what the write would refuse."""
    folder = config.parent
    if not (folder.exists() or folder.is_symlink()):
        if not write:
            return  # nothing there to refuse: the write makes the folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if write:
        write_own(config, new.encode(), mode=0o600)
    else:
        own_target(config)


def written_to(config: Path) -> str:
    """*config*, and the file a write of it goes to where that is another (for a `Change`)."""
    try:
        target = own_target(config)
    except BadInput:
        return str(config)
    return str(config) if target == config else f"{target} (through the link {config})"


def _table(key: str, digest: str) -> str:
    return f'\n[hooks.state.{toml_string(key)}]\ntrusted_hash = "{digest}"\n'


def _hash_of(entry: Any) -> Any:
    return entry.get("trusted_hash") if isinstance(entry, dict) else None


def project_trusted(config: Path, project: Path) -> bool:
    """Whether *config* marks *project* trusted (Codex reads its .codex/hooks.json only then)."""
    projects = _read(config)[1].get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"
