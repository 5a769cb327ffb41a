"""A live Qoder CLI 1.1.52 TUI in a detached tmux server, offline, with a private HOME, its
cross-session inbox on, and `hook install qoder`'s hooks in its project.

Qoder CLI starts a session only signed in to its vendor. Offline, the session is given the
signed-in state a Qoder CLI process hands a child of its own (`QODER_BOOTSTRAP_AUTH_STATE`,
with a made-up user): enough for the TUI, its hooks and its inbox; every model request still
fails (it needs a context created at a real sign-in), so a turn ends at once with Qoder CLI's
"The request could not be completed".

A session can instead be given Qoder CLI's own stand-in for its model, a file of model
responses it replays in order (its hidden option `--fake-responses FILE`, one JSON line a
response: `fake_responses`); with ``QODER_FAKE_STREAM_DELAY_MS`` a response of N chunks takes
N - 1 times that delay. Then its turns run to their end, tools and all: no request leaves the
process. Its network model cannot be replaced by a loopback stand-in: the endpoint override
(``QODER_SERVER_ENDPOINT``) is read only by its China build, and only as an https origin.

No pytest here: the fixtures are in test_qoder.py and test_qoder_turns.py.
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


def response(*parts: dict[str, Any]) -> str:
    """One model response of a `--fake-responses` file: its chunks, each with one part."""
    last = len(parts) - 1
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [p]}, "finishReason": "STOP"}]}
        if n == last
        else {"candidates": [{"content": {"role": "model", "parts": [p]}}]}
        for n, p in enumerate(parts)
    ]
    return json.dumps({"method": "generateContentStream", "response": chunks})


def text(*chunks: str) -> str:
    """A response that says *chunks*, one chunk each."""
    return response(*({"text": c} for c in chunks))


def shell(command: str) -> str:
    """A response that runs *command* in Qoder CLI's shell tool (`Bash`)."""
    return response({"functionCall": {"name": "Bash", "args": {"command": command}}})


class QoderSession(DoorSession):
    """Qoder CLI's TUI with paneboard's hooks, its inbox registry, and its listener."""

    socket_field = "messagingSocketPath"
    third = "source"

    def __init__(
        self, root: Path, bin_path: Path, name: str, fake_responses: list[str] | None = None
    ) -> None:
        super().__init__(root, bin_path, "qoder", name)
        self.home = root / "home"
        qoder = self.home / ".qoder"
        qoder.mkdir(parents=True)
        permissions: dict[str, Any] = {"trustDirectories": [str(self.project)]}
        self.argv = [str(self.bin)]
        if fake_responses is not None:
            fake = root / "fake-responses.jsonl"
            fake.write_text("".join(f"{line}\n" for line in fake_responses))
            self.argv += ["--fake-responses", str(fake)]
            permissions["allow"] = ["Bash"]  # the responses' shell commands run unasked
            self.env["QODER_FAKE_STREAM_DELAY_MS"] = "1000"
        (qoder / "settings.json").write_text(json.dumps({"permissions": permissions}))
        self.env.update(NO_BROWSER="1", QODER_FEATURE_CROSS_SESSION="1")
        self.start()

    def start(self) -> None:
        env = {**self.env, "QODER_BOOTSTRAP_AUTH_STATE": signed_in()}
        registry = ("no Qoder CLI session registry", 30)
        self.open(self.argv, registry, 60, ready=(READY, 90), env=env)

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
