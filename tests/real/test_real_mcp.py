"""paneboard's MCP tools in the real Claude Code, offline (see tests/real/conftest.py).

The API stand-in plays the model: handed a paneboard prompt, it calls `mcp__paneboard__answer`
with the prompt's id (testing/api_stand_in.py). Claude Code runs paneboard's server as
`hook install --mcp` registered it, and the answer it writes closes the prompt.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testing.api_stand_in import MCP_ANSWER_BODY
from testing.clients import ClaudeSession
from testing.helpers import cli_env, post, run, run_cli, wait_until

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is missing: no interactive Claude Code session"
)


def _approve(project: Path) -> None:
    """What the person does once: approve the project's server and let the agent answer."""
    path = project / ".claude" / "settings.local.json"
    settings = json.loads(path.read_text())
    settings["enabledMcpjsonServers"] = ["paneboard"]
    settings["permissions"] = {"allow": ["mcp__paneboard__answer"]}
    path.write_text(json.dumps(settings))


def _wait_connected(session: ClaudeSession, timeout: float = 60) -> None:
    """Until Claude Code's own log of the paneboard server says it connected (its tools are
    offered to the model from then on)."""
    logs = session.home / ".cache" / "claude-cli-nodejs"
    wait_until(
        lambda: any(
            "Connection established" in log.read_text()
            for log in logs.glob("*/mcp-logs-paneboard/*.jsonl")
        ),
        "Claude Code connected paneboard's server",
        timeout,
        session.screen,
        every=0.2,
    )


def _tool_blocks(session: ClaudeSession) -> list[dict[str, Any]]:
    """The tool calls and tool results of the session's transcript so far (only whole lines are
    read: Claude Code may be writing the next one)."""
    text = session.transcript()
    blocks = []
    for line in text[: text.rfind("\n") + 1].splitlines():
        content = json.loads(line).get("message", {}).get("content")
        if isinstance(content, list):
            blocks += [b for b in content if b.get("type") in ("tool_use", "tool_result")]
    return blocks


def _tool_turns(session: ClaudeSession, timeout: float = 60) -> list[dict[str, Any]]:
    """The tool calls and tool results of the session's transcript, once there are both."""

    def both() -> list[dict[str, Any]] | None:
        blocks = _tool_blocks(session)
        return blocks if {b["type"] for b in blocks} == {"tool_use", "tool_result"} else None

    return wait_until(
        both, "a tool call and its result in the transcript", timeout, session.screen, every=0.25
    )


def test_claude_answers_a_prompt_through_paneboards_mcp_tool(
    home: Path, tmp_path: Path, clients_bin: Path, api: tuple[int, Path]
) -> None:
    """A prompt delivered to the session is answered by the model calling `answer` over MCP:
    Claude Code runs the tool, the answer closes the prompt, and the sender's `wait` prints it."""
    project = tmp_path / "proj"
    project.mkdir()
    done = run_cli(
        home, "hook", "install", "claude", "--project", str(project), "--mcp", "--as", "claude-bob"
    )
    assert 0 == done.returncode, done.stderr
    _approve(project)
    path = f"{Path(sys.executable).parent}:{clients_bin}:/usr/local/bin:/usr/bin:/bin"
    session = ClaudeSession(
        clients_bin,
        tmp_path / "claude-home",
        project,
        api[0],
        cli_env(home, PATH=path, ENABLE_TOOL_SEARCH="false"),
    )
    waiter = None
    try:
        session.wait_listener("claude-bob", home)
        _wait_connected(session)
        pid = post(home, "--to", "claude-bob", "what is six times seven?")
        waiter = subprocess.Popen(
            [sys.executable, "-m", "paneboard", "wait", pid, "--timeout", "90"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(home),
        )
        out, err = waiter.communicate(timeout=120)
        assert (0, f"{MCP_ANSWER_BODY}\n", "") == (waiter.returncode, out, err), session.screen()
        status = json.loads(run_cli(home, "status", pid, "--json").stdout)["recipients"]
        assert ("answered", MCP_ANSWER_BODY) == (
            status["claude-bob"]["stage"],
            status["claude-bob"]["answer"],
        )
        [answer] = [
            json.loads(line)
            for line in run_cli(home, "log", "--kind", "answer", "--json").stdout.splitlines()
        ]
        assert ("claude-bob", pid, "verified") == (
            answer["sender"],
            answer["prompt"],
            answer.pop("verdict"),  # `log` adds this home's verdict to the post's fields
        )
        blocks = _tool_turns(session)
        [call] = [b for b in blocks if b["type"] == "tool_use"]  # called once
        # (Claude Code may record the one result twice)
        results = {json.dumps(b, sort_keys=True) for b in blocks if b["type"] == "tool_result"}
        [result] = [json.loads(r) for r in results]
        assert ("mcp__paneboard__answer", {"id": pid, "body": MCP_ANSWER_BODY}) == (
            call["name"],
            call["input"],
        )
        assert (call["id"], answer) == (result["tool_use_id"], json.loads(result["content"]))
        assert {"mcp_answer": pid} in [json.loads(line) for line in api[1].read_text().splitlines()]
    finally:
        if waiter is not None and waiter.poll() is None:
            waiter.kill()
            waiter.communicate()
        session.close()


def test_codex_reads_the_registration_in_a_trusted_project(
    home: Path, tmp_path: Path, clients_bin: Path
) -> None:
    """`hook install codex --mcp` writes what Codex itself lists as an enabled MCP server."""
    project, codex_home = tmp_path / "proj", tmp_path / "codex-home"
    project.mkdir()
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    done = run_cli(
        home, "hook", "install", "codex", "--project", str(project), "--mcp", "--as", "cx"
    )
    assert 0 == done.returncode, done.stderr
    env = {
        k: v for k, v in cli_env(home, CODEX_HOME=str(codex_home)).items() if k != "RUST_BACKTRACE"
    }
    listed = run([str(clients_bin / "codex"), "mcp", "list", "--json"], project, env, 60)
    assert 0 == listed.returncode, listed.stderr
    [server] = [s for s in json.loads(listed.stdout) if s["name"] == "paneboard"]
    exe = str(Path(sys.executable).with_name("paneboard"))
    transport = server["transport"]
    assert (exe, ["mcp", "--agent", "codex", "--as", "cx"]) == (
        transport["command"],
        transport["args"],
    )
    assert server["enabled"]
