"""A live Qoder CLI 1.1.52 TUI in a detached tmux server, offline, with a private HOME, its
cross-session inbox on, and `hook install qoder`'s hooks in its project.

Qoder CLI starts a session only signed in to its vendor. Offline, the session is given the
signed-in state a Qoder CLI process hands a child of its own (`QODER_BOOTSTRAP_AUTH_STATE`,
with a made-up user): enough for the TUI, its hooks and its inbox; every model request still
fails (it needs a context created at a real sign-in), so a turn ends at once with Qoder CLI's
"The request could not be completed".

No pytest here: the fixtures are in test_qoder.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.agents.qoder import QODER
from testing.sessions import DoorSession, user_records

READY = "Type your message"


def signed_in() -> str:
    user = {"uid": "pb-test", "name": "pb", "email": "pb@example.com", "login_method": "token"}
    return json.dumps(
        {"authenticated": True, "uid": "pb-test", "credentialUserInfo": json.dumps(user)}
    )


class QoderSession(DoorSession):
    """Qoder CLI's TUI with paneboard's hooks, its inbox registry, and its listener."""

    socket_field = "messagingSocketPath"
    third = "source"

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        super().__init__(root, bin_path, "qoder", name)
        self.home = root / "home"
        qoder = self.home / ".qoder"
        qoder.mkdir(parents=True)
        trusted = {"permissions": {"trustDirectories": [str(self.project)]}}
        (qoder / "settings.json").write_text(json.dumps(trusted))
        self.env.update(NO_BROWSER="1", QODER_FEATURE_CROSS_SESSION="1")
        self.start()

    def start(self) -> None:
        env = {**self.env, "QODER_BOOTSTRAP_AUTH_STATE": signed_in()}
        registry = ("no Qoder CLI session registry", 30)
        self.open([str(self.bin)], registry, 60, ready=(READY, 90), env=env)

    def registries(self) -> Path:
        return self.home / ".qoder" / "sessions"

    def ours(self, record: dict[str, Any]) -> bool:
        return record.get("pid") in self.tmux.processes() and bool(
            record.get("messagingSocketPath")
        )

    @property
    def transcript(self) -> Path:
        folder = self.home / ".qoder" / "projects"
        found = list(folder.glob(f"*/{self.registry['sessionId']}.jsonl"))
        return found[0] if found else folder / "none.jsonl"

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The transcript's user turns whose text holds *needle*."""
        return user_records(self.transcript, QODER.user_texts, needle)
