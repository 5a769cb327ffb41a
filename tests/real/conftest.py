"""The real Claude Code and Codex CLIs, offline: installed with npm into a folder of the project's own."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

CLIENTS = ROOT / ".ci" / "tools" / "clients"
PACKAGES = [
    "@openai/codex@0.169.0",
    "@anthropic-ai/claude-code@2.1.328",
    "@google/gemini-cli@0.61.0",
    "@github/copilot@1.0.102",
    "opencode-ai@1.18.33",
]
CLIS = ("claude", "codex", "gemini", "copilot", "opencode")


@pytest.fixture(scope="session")
def clients_bin() -> Path:
    """The folder holding the agent CLIs; installed here on first use (skipped only without npm)."""
    bin_dir = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    if not all((bin_dir / cli).exists() for cli in CLIS):
        if shutil.which("npm") is None:
            pytest.skip(
                "npm is missing: cannot install the real agent CLIs "
                "(Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode)"
            )
        CLIENTS.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, DISABLE_AUTOUPDATER="1")
        subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(CLIENTS),
                *PACKAGES,
            ],
            check=True,
            env=env,
            timeout=600,
        )
        bin_dir = CLIENTS / "node_modules" / ".bin"
    return bin_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The API stand-in on a free loopback port; yields (port, request log)."""
    port, log = free_port(), tmp_path / "api.log"
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("api_stand_in.py")), str(port), str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and "ready" == proc.stdout.readline().strip()
    yield port, log
    proc.kill()
    proc.wait()
    proc.stdout.close()


def offline_codex_thread(codex_home: Path, cwd: Path) -> tuple[str, Path]:
    """A Codex thread that `codex queue` accepts, with no login, model or daemon; returns (id, rollout)."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "localdead"\n[model_providers.localdead]\nname = "localdead"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'wire_api = "responses"\n[features]\nplugins = false\nremote_plugin = false\napps = false\n'
    )
    tid = str(uuid.uuid4())
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    day = codex_home / "sessions" / time.strftime("%Y/%m/%d", time.gmtime())
    day.mkdir(parents=True, exist_ok=True)
    rollout = day / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', time.gmtime())}-{tid}.jsonl"
    meta = {
        "id": tid,
        "timestamp": now,
        "cwd": str(cwd),
        "originator": "codex_cli_rs",
        "cli_version": "0.169.0",
        "source": "cli",
        "model_provider": "localdead",
    }
    import json

    rollout.write_text(
        json.dumps({"timestamp": now, "type": "session_meta", "payload": meta}) + "\n"
    )
    return tid, rollout


class ClaudeSession:
    """An interactive Claude Code session in a detached tmux server, offline against the stand-in."""

    def __init__(
        self, bin_dir: Path, home: Path, project: Path, port: int, env: dict[str, str]
    ) -> None:
        self.home, self.project, self.name = home, project.resolve(), f"pb{uuid.uuid4().hex[:8]}"
        home.mkdir(parents=True, exist_ok=True)
        import json

        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "lastOnboardingVersion": "2.1.328",
                    "theme": "dark",
                    "customApiKeyResponses": {"approved": ["sk-dummy"], "rejected": []},
                    "projects": {
                        str(self.project): {
                            "hasTrustDialogAccepted": True,
                            "allowedTools": [],
                            "hasCompletedProjectOnboarding": True,
                        }
                    },
                }
            )
        )
        run_env = {k: v for k, v in env.items() if k not in ("RUST_BACKTRACE",)}
        run_env.update(
            HOME=str(home),
            ANTHROPIC_API_KEY="sk-dummy",
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_MAX_RETRIES="0",
        )
        exports = " ".join(f"{k}={_q(v)}" for k, v in run_env.items())
        command = f"cd {_q(str(self.project))} && env -i {exports} {_q(str(bin_dir / 'claude'))}; sleep 600"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.name,
                "new",
                "-d",
                "-s",
                self.name,
                "-x",
                "200",
                "-y",
                "50",
                command,
            ],
            check=True,
        )
        self.registry = self._wait_registry()

    def _wait_registry(self) -> dict[str, object]:
        import json

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for reg in (self.home / ".claude" / "sessions").glob("*.json"):
                try:
                    data = json.loads(reg.read_text())
                except ValueError:
                    continue
                if data.get("messagingSocketPath"):
                    return dict(data)
            time.sleep(0.2)
        raise AssertionError("no Claude Code session registry after 60 s:\n" + self.screen())

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "-L", self.name, "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=False,
        ).stdout

    def type(self, text: str) -> None:
        """Type into the session as its person would (the test plays the person)."""
        subprocess.run(
            ["tmux", "-L", self.name, "send-keys", "-t", self.name, "-l", text], check=True
        )
        time.sleep(0.3)
        subprocess.run(["tmux", "-L", self.name, "send-keys", "-t", self.name, "Enter"], check=True)

    def transcript(self) -> str:
        """The session's transcript (found by session id: the folder name mangles the project path)."""
        found = list(
            (self.home / ".claude" / "projects").glob(f"*/{self.registry['sessionId']}.jsonl")
        )
        return found[0].read_text() if found else ""

    def wait_transcript(self, needle: str, timeout: float = 90, count: int = 1) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.transcript()
            if text.count(needle) >= count:
                return text
            time.sleep(0.25)
        raise AssertionError(
            f"{needle!r} not in the transcript after {timeout} s; screen:\n{self.screen()}"
        )

    def wait_user_turns(self, needle: str, timeout: float = 90) -> list[dict[str, Any]]:
        """The transcript's user turns carrying *needle*, once there is one (not queue lines)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            turns = [
                record
                for record in map(json.loads, self.transcript().splitlines())
                if record.get("type") == "user" and needle in json.dumps(record)
            ]
            if turns:
                return turns
            time.sleep(0.25)
        raise AssertionError(f"no user turn with {needle!r} after {timeout} s:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], check=False, capture_output=True)


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)
