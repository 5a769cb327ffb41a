"""Factory Droid (`@factory/cli`, checked with the 0.225.2 binary, `@factory/cli-linux-x64`):
reached through its Stop hook.

Droid runs Claude-style command hooks (`SessionStart`, `Stop`, …) with Claude-style input
(``session_id``, ``transcript_path``, ``cwd``, ``stop_hook_active``). A Stop hook's reply
``{"decision": "block", "reason": TEXT}`` makes TEXT the next user turn of the same session;
the hook runs again after it with ``stop_hook_active: true``; with nothing to hand over it
prints nothing and Droid stops. `hook install droid` writes the hooks under the ``hooks`` key
of the project's ``.factory/settings.json``, which Droid reads when the project has no
``.factory/hooks.json`` (that file, keyed by event at its top, takes its place): with one
present, install refuses and says so.

`delivered` means the block reply was printed. `seen` comes from Droid's session file
(``~/.factory/sessions/<cwd with / as ->/<session>.jsonl``, the hook input's
``transcript_path``): the block reason shows as ``{"type": "message", "message": {"role":
"user", "content": [{"type": "text", "text": TEXT}]}}``; the record of the hook's run beside it
carries the reply only in ``hookResults``, with empty ``content``.

Droid asks for a login at start (offline too) unless ``FACTORY_AIRGAP_ENABLED=true``, and
asks once per folder whether to trust it (``trustedFolders`` in ``~/.factory/settings.json``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paneboard.agents.base import Change, Setup
from paneboard.agents.hookfile import StopHookAgent
from paneboard.listener.seen import message_texts
from paneboard.protocol.errors import BadInput

HOOKS_JSON = ".factory/hooks.json"  # read instead of the settings' hooks when present
TRUST = "Factory Droid loads a project's hooks only in folders you have trusted"


@dataclass(frozen=True)
class Droid(StopHookAgent):
    def entry(self, action: str, command: str) -> dict[str, Any]:
        """No matcher: Droid's Stop and SessionStart take none."""
        return {"hooks": [{"type": "command", "command": command, "timeout": 30}]}

    def install(self, setup: Setup) -> list[Change]:
        """Refused, writing nothing, where Droid would not read the hooks it writes."""
        hooks_json = setup.project / HOOKS_JSON
        if hooks_json.exists() or hooks_json.is_symlink():
            raise BadInput(
                f"{hooks_json} exists: Droid reads its hooks from there and ignores those in "
                f"{self.path(setup.project)}; nothing was changed"
            )
        return super().install(setup)

    def user_texts(self, record: dict[str, Any]) -> list[str]:
        """A ``"type": "message"`` record of its session file whose message is the user's (the
        record of a hook's run has that shape too, its content empty)."""
        return message_texts(record)


DROID = Droid(
    kind="droid",
    title="Factory Droid",
    modes=("stop",),
    default_mode="stop",
    hooks_file=".factory/settings.json",
    events={"session-start": "SessionStart", "stop": "Stop"},
    seen_source="droid-transcript",
    per_stop=1,
    notes=(TRUST,),
)
