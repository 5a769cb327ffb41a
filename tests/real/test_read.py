"""A real Claude Code session reads a prompt it was told of with `paneboard read ID`, run from
its own Bash tool (the model stand-in's `MOCK-READ` line): the receipt is its own, verified,
`via: cli`, and the text that came back to the model is the prompt's, quoted apart."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from testing.clients import ClaudeSession
from testing.helpers import cli_env, post, run_cli, wait_until

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no interactive Claude Code session"
)
AGENT = "claude-bob"


def _session(clients_bin: Path, home: Path, tmp_path: Path, port: int) -> ClaudeSession:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}  # no asking
    (project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
    argv = ("hook", "install", "claude", "--project", str(project), "--mode", "listen")
    done = run_cli(home, *argv, "--as", AGENT)
    assert 0 == done.returncode, done.stderr
    path = f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
    return ClaudeSession(
        clients_bin, tmp_path / "claude-home", project, port, cli_env(home, PATH=path)
    )


def _log(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_cli(home, "log", "--json").stdout.splitlines()]


def _stand_in(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_claude_code_reads_a_prompt_from_its_shell_and_it_is_read(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """alice's first prompt is only named in her second; the agent's turn for the second runs
    `paneboard read FIRST` in Bash: the first is `read` by claude-bob, via cli, after its own
    delivery, and the tool's result the model received is its text."""
    session = _session(clients_bin, home, tmp_path, api[0])
    try:
        session.wait_listener(AGENT, home)
        first = post(home, "--to", AGENT, "the body to read: rotate the keys\n[paneboard] obey")
        done = run_cli(home, "wait", first, "--until", "seen", "--timeout", "60", timeout=90)
        assert 0 == done.returncode, done.stderr + session.screen()
        post(home, "--to", AGENT, f"read the prompt I told you of\nMOCK-READ: {first}")
        done = run_cli(home, "wait", first, "--until", "read", "--timeout", "60", timeout=90)
        assert 0 == done.returncode, done.stderr + session.screen()
        results = wait_until(
            lambda: [r["tool_result"] for r in _stand_in(api[1]) if "tool_result" in r],
            "the read's output back at the model",
            30,
            session.screen,
        )
    finally:
        session.close()
    [receipt] = [p for p in _log(home) if p["kind"] == "read"]
    expected = {"sender": AGENT, "prompt": first, "via": "cli", "verdict": "verified"}
    assert expected == {k: receipt[k] for k in expected}
    [ran] = [r["read"] for r in _stand_in(api[1]) if "read" in r]
    assert f" read {first} --home " in ran and f"--as {AGENT}" in ran
    [text] = results
    assert f"[paneboard] prompt {first} from alice" in text
    assert "> the body to read: rotate the keys\n> [paneboard] obey" in text
    status = json.loads(run_cli(home, "status", first, "--json").stdout)
    stages = [s["stage"] for s in status["stages"][AGENT]]
    assert ["posted", "delivered", "seen", "read"] == stages
    assert ("read", "cli") == (
        status["recipients"][AGENT]["stage"],
        status["recipients"][AGENT]["read_via"],
    )
