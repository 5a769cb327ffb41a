"""`hook install|uninstall claude|codex --mcp`: the server in .mcp.json, .codex/config.toml."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from testing.helpers import cli_env, run_cli

PANEBOARD = str(Path(sys.executable).with_name("paneboard"))
CODEX_CONFIG = (
    '# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-server"  # keep\n'
)
CLAUDE_CONFIG = {"mcpServers": {"docs": {"command": "docs-server", "args": []}}, "other": [1, 2]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    (path / ".codex").mkdir(parents=True)
    (path / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    (path / ".mcp.json").write_text(json.dumps(CLAUDE_CONFIG))
    return path


def hook(home: Path, project: Path, *args: str) -> str:
    done = run_cli(home, "hook", *args, "--project", str(project))
    assert (0, "") == (done.returncode, done.stderr)
    return done.stdout


def test_claude_registration_is_idempotent_keeps_the_rest_and_uninstalls_exactly(
    home: Path, project: Path
) -> None:
    out = hook(
        home, project, "install", "claude", "--mcp", "--as", "cc", "--board", "web", "--home", "h"
    )
    assert (
        f"registered the paneboard MCP server in {project / '.mcp.json'} ({PANEBOARD} mcp)" in out
    )
    data = json.loads((project / ".mcp.json").read_text())
    args = [
        "mcp",
        "--agent",
        "claude",
        "--as",
        "cc",
        "--home",
        str(project.parent / "h"),
        "--board",
        "web",
    ]
    assert {"type": "stdio", "command": PANEBOARD, "args": args} == data["mcpServers"]["paneboard"]
    assert {
        **CLAUDE_CONFIG,
        "mcpServers": {**CLAUDE_CONFIG["mcpServers"], "paneboard": data["mcpServers"]["paneboard"]},
    } == data
    before = (project / ".mcp.json").read_bytes()
    again = hook(
        home, project, "install", "claude", "--mcp", "--as", "cc", "--board", "web", "--home", "h"
    )
    assert "paneboard MCP server already in" in again
    assert before == (project / ".mcp.json").read_bytes()
    assert "removed the paneboard MCP server from" in hook(home, project, "uninstall", "claude")
    assert CLAUDE_CONFIG == json.loads((project / ".mcp.json").read_text())


def test_codex_registration_edits_the_toml_as_text(home: Path, project: Path) -> None:
    """Comments and tables survive; installing again changes no byte; uninstall restores it."""
    config = project / ".codex" / "config.toml"
    hook(home, project, "install", "codex", "--mcp", "--store", "nats://127.0.0.1:4222/x")
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)
    entry = tomllib.loads(text)["mcp_servers"]["paneboard"]
    assert {
        "command": PANEBOARD,
        "args": ["mcp", "--agent", "codex", "--store", "nats://127.0.0.1:4222/x"],
    } == entry
    hook(home, project, "install", "codex", "--mcp", "--store", "nats://127.0.0.1:4222/x")
    assert text == config.read_text()
    hook(home, project, "uninstall", "codex")
    assert CODEX_CONFIG == config.read_text()


@pytest.mark.parametrize(
    ("agent", "file", "content", "message"),
    [
        (
            "claude",
            ".mcp.json",
            "{not json",
            (
                "is not valid JSON (line 1: Expecting property name enclosed in double quotes); "
                "fix or move it, nothing was changed"
            ),
        ),
        (
            "claude",
            ".mcp.json",
            '{"mcpServers": []}',
            "does not hold an object with an `mcpServers` map; nothing was changed",
        ),
        (
            "codex",
            ".codex/config.toml",
            "model = ",
            (
                "is not valid TOML (Invalid value (at end of document)); "
                "fix or move it, nothing was changed"
            ),
        ),
        (
            "codex",
            ".codex/config.toml",
            'mcp_servers = { paneboard = { command = "x" } }\n',
            (
                "defines mcp_servers.paneboard other than as a [mcp_servers.paneboard] table; "
                "nothing was changed"
            ),
        ),
    ],
)
def test_a_malformed_file_is_refused_and_nothing_is_written(
    home: Path, project: Path, agent: str, file: str, content: str, message: str
) -> None:
    (project / file).write_text(content)
    for action in ("install", "uninstall"):
        done = run_cli(home, "hook", action, agent, "--mcp", "--project", str(project))
        assert (1, f"paneboard: {project / file} {message}\n", "") == (
            done.returncode,
            done.stderr,
            done.stdout,
        )
        assert content == (project / file).read_text()
        assert (
            not (project / ".claude").exists() and not (project / ".codex" / "hooks.json").exists()
        )


def test_mcp_for_an_agent_without_a_registration_is_refused(home: Path, project: Path) -> None:
    done = run_cli(home, "hook", "install", "gemini", "--mcp", "--project", str(project))
    expected = "paneboard: --mcp registers the server with claude or codex, not gemini\n"
    assert (1, expected, "") == (done.returncode, done.stderr, done.stdout)
    assert not (project / ".gemini").exists()


def test_doctor_checks_the_registration(home: Path, project: Path) -> None:
    def mcp_lines() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "paneboard", "doctor"],
            capture_output=True,
            text=True,
            env=cli_env(home),
            cwd=project,
            timeout=30,
            check=False,
        )
        return [
            line
            for line in done.stdout.splitlines()
            if line.startswith(("ok    mcp", "warn  mcp", "fail  mcp"))
        ]

    assert [
        (
            f"warn  mcp      claude: no paneboard server in {project / '.mcp.json'} "
            "(paneboard hook install claude --mcp)"
        ),
        (
            f"warn  mcp      codex: no paneboard server in {project / '.codex/config.toml'} "
            "(paneboard hook install codex --mcp)"
        ),
    ] == mcp_lines()
    hook(home, project, "install", "claude", "--mcp")
    assert (
        f"ok    mcp      claude: {PANEBOARD} mcp --agent claude in {project / '.mcp.json'}"
        == mcp_lines()[0]
    )
    data = json.loads((project / ".mcp.json").read_text())
    data["mcpServers"]["paneboard"]["command"] = str(project / "gone")
    (project / ".mcp.json").write_text(json.dumps(data))
    assert (
        f"fail  mcp      claude: {project / '.mcp.json'} runs {str(project / 'gone')!r}, "
        "which is not an executable" == mcp_lines()[0]
    )


@pytest.mark.anyio
async def test_the_registered_command_serves_as_the_hooks_agent(home: Path, project: Path) -> None:
    """The command and args written run the server, in the project, as `<folder>-claude`."""
    hook(home, project, "install", "claude", "--mcp")
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["paneboard"]
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=cli_env(home), cwd=project
    )
    with anyio.fail_after(30):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool("post", {"to": ["bob"], "body": "hi"})
    assert ("proj-claude", "test") == (
        res.structured_content["sender"],
        res.structured_content["board"],
    )


TRICKY_TOML = 'a = """\n[mcp_servers.paneboard]\n"""\nb = """\n[x]\n"""\n'


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_header_inside_a_multi_line_string_is_never_edited_as_a_table(
    home: Path, tmp_path: Path, action: str
) -> None:
    """config.toml whose multi-line strings hold header-like lines: refused, one line, exit 1,
    config.toml untouched and no hook file written."""
    project = tmp_path / "proj"
    (project / ".codex").mkdir(parents=True)
    config = project / ".codex" / "config.toml"
    config.write_text(TRICKY_TOML)
    extra = ["--mcp"] if action == "install" else []
    done = run_cli(home, "hook", action, "codex", *extra, "--project", str(project))
    expected = (
        f"paneboard: {config}: editing its [mcp_servers.paneboard] table would change other "
        "settings (a table header inside a multi-line string?); edit it by hand, "
        "nothing was changed\n"
    )
    assert (1, "", expected) == (done.returncode, done.stdout, done.stderr)
    assert TRICKY_TOML == config.read_text()
    assert ["config.toml"] == sorted(p.name for p in (project / ".codex").iterdir())
