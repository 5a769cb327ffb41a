"""The MCP server shows held prompts and why, and has no way to let one through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paneboard.board.context import header
from paneboard.protocol.posts import Held, Prompt, encode
from paneboard.state.filelog.append import append_payloads
from paneboard.state.trust.sealing import Sealer
from testing.helpers import post, run_cli
from tests.mcpserver.test_tools import board_client, call, text

pytestmark = pytest.mark.anyio
WHY = "not allowed"


def _hold(home: Path, pid: str) -> None:
    """bob's listener holds *pid* under bob's policy (the `held` post, signed as it writes it)."""
    held = Held(**header("test", "bob"), prompt_id=pid, door="exec", by="policy", reason=WHY)
    append_payloads(home / "test" / "log", [Sealer(home, "bob").seal(encode(held))])


async def test_open_and_status_say_held_and_why(home: Path) -> None:
    pid, plain = post(home, "--to", "bob", "deploy"), post(home, "--to", "bob", "read it")
    _hold(home, pid)
    async with board_client(home, "bob") as bob:
        opened = await bob.call_tool("open", {})
        status = await bob.call_tool("status", {"id": pid})
    assert [plain] == [p["id"] for p in opened.structured_content["prompts"]]
    held = [{"id": pid, "sender": "alice", "by": "policy", "reason": WHY}]
    assert held == opened.structured_content["held"]
    shown = text(opened).split("\n\n")
    assert shown[0].endswith(
        f"(held by the policy: {WHY}; it waits for a decision asked on a terminal, which no tool "
        "makes; its text waits too)"
    )
    assert "deploy" not in shown[0]
    assert "held" not in shown[1]
    assert f"held by the policy ({WHY}) since " in text(status).splitlines()[1]


async def test_an_mcp_client_cannot_approve_a_held_prompt(home: Path) -> None:
    """No tool approves or refuses; asking for one is an error, and the prompt stays held."""
    pid = post(home, "--to", "bob", "deploy")
    _hold(home, pid)
    async with board_client(home, "bob") as bob:
        names = {t.name for t in (await bob.list_tools()).tools}
        tried = [await bob.call_tool(name, {"id": pid}) for name in ("approve", "refuse")]
        stage = (await call(bob, "status", id=pid))["recipients"]["bob"]["stage"]
    assert set() == names & {"approve", "refuse", "trust", "policy"}
    assert [True, True] == [res.is_error for res in tried]
    assert [True, True] == ["unknown tool" in text(res).lower() for res in tried]
    assert "held" == stage
    kinds = [json.loads(ln)["kind"] for ln in run_cli(home, "log", "--json").stdout.splitlines()]
    assert ["prompt", "held"] == kinds


async def test_the_open_tool_says_what_paneboard_checked_of_the_sender(home: Path) -> None:
    """The same lines a door's text carries: the key checked (its fingerprint's start), or that
    it could not be checked; paneboard's lines stand apart from the sender's words."""
    signed = post(home, "--to", "bob", "signed by alice")
    prompt = Prompt(**header("test", "carol"), to=["bob"], body="from a plain client")
    append_payloads(home / "test" / "log", [encode(prompt)])
    keys = {ln.split()[0]: ln.split()[1] for ln in run_cli(home, "keys").stdout.splitlines()}
    async with board_client(home, "bob") as bob:
        shown = text(await bob.call_tool("open", {})).split("\n\n")
    assert [
        f"[paneboard] paneboard checked the sender's key: alice, key {keys['alice'][:12]}…",
        "[paneboard] paneboard could not check the sender's key: the prompt is unsigned",
    ] == [block.splitlines()[1] for block in shown]
    assert [f"prompt {signed} from alice [normal]:", "> signed by alice"] == [
        shown[0].splitlines()[i] for i in (0, 2)
    ]
