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
from paneboard.state.panelock import holder
from testing.helpers import wait_until
from testing.sessions import TmuxSession, user_records, workspace

READY = "Type your message"


def signed_in() -> str:
    user = {"uid": "pb-test", "name": "pb", "email": "pb@example.com", "login_method": "token"}
    return json.dumps(
        {"authenticated": True, "uid": "pb-test", "credentialUserInfo": json.dumps(user)}
    )


class QoderSession:
    """Qoder CLI's TUI with paneboard's hooks, its inbox registry, and its listener."""

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, "qoder", name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.home = root / "home"
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        qoder = self.home / ".qoder"
        qoder.mkdir(parents=True)
        trusted = {"permissions": {"trustDirectories": [str(self.project)]}}
        (qoder / "settings.json").write_text(json.dumps(trusted))
        self.env.update(
            XDG_RUNTIME_DIR=str(self.runtime),
            NO_BROWSER="1",
            QODER_FEATURE_CROSS_SESSION="1",
        )
        self.start()

    def start(self) -> None:
        env = {**self.env, "QODER_BOOTSTRAP_AUTH_STATE": signed_in()}
        self.tmux = TmuxSession(self.project, [str(self.bin)], env)
        self.tmux.wait_screen(READY, 90)
        self.registry = wait_until(self._registry, "no Qoder CLI session registry", 30, self.screen)
        self.listener = wait_until(
            lambda: holder(self.lock), f"no listener for {self.name}", 60, self.screen, every=0.1
        )

    @property
    def lock(self) -> Path:
        return self.pb_home / "test" / "panes" / f"{self.name}.lock"

    def _registry(self) -> dict[str, Any] | None:
        for path in (self.home / ".qoder" / "sessions").glob("*.json"):
            try:
                record = dict(json.loads(path.read_text()))
            except ValueError:
                continue
            if record.get("pid") in self.tmux.processes() and record.get("messagingSocketPath"):
                return record
        return None

    @property
    def pid(self) -> int:
        return int(self.registry["pid"])

    @property
    def socket(self) -> Path:
        return Path(self.registry["messagingSocketPath"])

    @property
    def transcript(self) -> Path:
        folder = self.home / ".qoder" / "projects"
        found = list(folder.glob(f"*/{self.registry['sessionId']}.jsonl"))
        return found[0] if found else folder / "none.jsonl"

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The transcript's user turns whose text holds *needle*."""
        return user_records(self.transcript, QODER.user_texts, needle)

    def screen(self) -> str:
        return self.tmux.screen()

    def close(self) -> None:
        self.tmux.close()
