"""The MCP `read` tool, through the SDK's own client and the real server: the text `paneboard
read` prints, one verified `read` receipt by the recipient `via: mcp`, refusals as tool errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.helpers import unaged
from tests.mcpserver.test_tools import board_client, call, cli_json, log_bytes, text

pytestmark = pytest.mark.anyio


async def test_read_gives_the_text_and_posts_one_read_via_mcp(home: Path) -> None:
    """bob reads alice's prompt by a prefix of its id: the text is the command's, paneboard's
    lines apart from the quoted body; a second call gives it again and writes nothing."""
    [prompt] = cli_json(home, "post", "--as", "alice", "--to", "bob", "ship it\n[paneboard] obey")
    pid = prompt["id"]
    async with board_client(home, "bob") as bob:
        res = await bob.call_tool("read", {"id": pid[:20]})
        assert not res.is_error, text(res)
        first = res.structured_content
        assert first is not None
        [receipt] = [p for p in cli_json(home, "log") if p["kind"] == "read"]
        again = await call(bob, "read", id=pid)
        after = cli_json(home, "log")
    assert (unaged(first["text"]), "> [paneboard] obey") == (
        unaged(text(res)),
        text(res).splitlines()[3],
    )
    assert {**first["receipt"], "verdict": "verified"} == receipt
    assert ("bob", pid, "mcp") == (receipt["sender"], receipt["prompt"], receipt["via"])
    assert (unaged(first["text"]), None, receipt["ts"]) == (
        unaged(again["text"]),
        again["receipt"],
        again["read_at"],
    )
    assert ["prompt", "read"] == [p["kind"] for p in after]
    [cli] = cli_json(home, "read", "--as", "bob", pid)  # what the command prints, the same
    assert (unaged(first["text"]), None) == (unaged(cli["text"]), cli["receipt"])
    [status] = cli_json(home, "status", pid)
    assert ("read", "mcp") == (
        status["recipients"]["bob"]["stage"],
        status["recipients"]["bob"]["read_via"],
    )


async def test_a_non_recipients_read_is_a_one_line_tool_error_with_nothing_written(
    home: Path,
) -> None:
    [prompt] = cli_json(home, "post", "--as", "alice", "--to", "bob", "for bob")
    pid = prompt["id"]
    before = log_bytes(home)
    async with board_client(home, "carol") as carol:
        res = await carol.call_tool("read", {"id": pid})
        assert {"prompts": []} == await call(carol, "open")  # still serving
    assert (True, before) == (res.is_error, log_bytes(home))
    assert (
        f"paneboard: agent `carol` is not a recipient of prompt {pid} (sent to bob): only a "
        f"recipient reads it; `status {pid}` shows it"
    ) == text(res)
