"""One turn for many prompts, on the real Claude Code 2.1.328 offline: a burst in one text, each
prompt `seen`; a notice recipient's burst in one turn; what the model is sent for a large body
against its notice (the API stand-in's byte counts); a sender's `--notice` against a `body`
policy, and a `notice` policy against a plain post.

One session for the module, with paneboard's hooks (listen mode: the inbox door) and the
default policy (30 a minute): the flood guard counts turns, so a burst of 60 waits for nothing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Prompt, Read
from paneboard.state.trust.policy import Policy, write_policy
from testing.clients import ClaudeSession, free_port
from testing.helpers import ScriptServer, post, run_cli
from tests.real.test_intake import AGENT, records, start_claude, taken, wait_stages

NO_TMUX = "tmux is missing: no interactive Claude Code session"
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason=NO_TMUX)
MARKER = "BODY-BYTES-MARKER"


@pytest.fixture(scope="module")
def shared(
    tmp_path_factory: pytest.TempPathFactory, clients_bin: Path
) -> Iterator[tuple[Path, ClaudeSession, Path]]:
    """(paneboard home, session, API log)."""
    folder = tmp_path_factory.mktemp("coalesce")
    home = folder / "pb"
    home.mkdir(mode=0o700)
    (home / "test" / "panes").mkdir(mode=0o700, parents=True)
    api = ScriptServer("testing.api_stand_in", free_port(), folder / "api.log")
    allow = {"permissions": {"allow": ["Bash"], "defaultMode": "default"}}  # it runs `read`
    session = start_claude(clients_bin, home, folder, api.port, allow)
    try:
        yield home, session, api.log
    finally:
        session.close()
        api.close()


def _policy(home: Path, deliver: str) -> None:
    write_policy(home / "test", AGENT, Policy(deliver=deliver))  # type: ignore[arg-type]


def _burst(home: Path, count: int, body: str) -> list[str]:
    store = Context.resolve(str(home), "test", "alice").store()
    prompts = [
        Prompt(**header("test", "alice"), to=(AGENT,), body=f"{body} {n} of {count}")
        for n in range(count)
    ]
    store.append(prompts)
    return [p.id for p in prompts]


def _read(home: Path, prompt_id: str) -> None:
    """The agent's `read` of *prompt_id*, signed with its key (as `paneboard read` posts it):
    the unread notice's wait ends."""
    store = Context.resolve(str(home), "test", AGENT).store()
    store.append([Read(**header("test", AGENT), prompt_id=prompt_id, via="cli")])


def _turns_with(session: ClaudeSession, ids: list[str]) -> int:
    """How many user turns and mid-turn attachments of the transcript carry any of *ids*."""
    marks = [f"[paneboard] prompt {pid} from" for pid in ids]
    n = 0
    for r in records(session):
        attachment = r.get("attachment") if r.get("type") == "attachment" else None
        if r.get("type") == "user":
            n += any(m in json.dumps(r.get("message")) for m in marks)
        elif isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            n += any(m in str(attachment.get("prompt")) for m in marks)
    return n


def _requests(api_log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in api_log.read_text().splitlines() if line.strip()]


def _sent_for(api_log: Path, prompt_id: str) -> dict[str, Any]:
    """The model request of the turn that carried *prompt_id* (its first)."""
    mark = f"[paneboard] prompt {prompt_id} from"
    return next(r for r in _requests(api_log) if r.get("tools") and mark in r.get("turn", ""))


def test_a_burst_of_60_reaches_the_model_once_each_in_at_most_three_turns(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """60 prompts appended at once, the default policy: each reaches the model exactly once, in
    at most 3 turns, and each is `seen`."""
    home, session, _ = shared
    _policy(home, "body")
    ids = _burst(home, 60, "burst")
    wait_stages(home, ids, "seen", session, timeout=60)
    assert dict.fromkeys(ids, 1) == {pid: sum(taken(session, pid)) for pid in ids}
    assert _turns_with(session, ids) <= 3


def test_a_burst_of_30_to_a_notice_recipient_starts_one_turn_with_no_body(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """`--deliver notice`: 30 prompts are one notice text, one turn, each `seen`; the model is
    sent none of their bodies."""
    home, session, api_log = shared
    _policy(home, "notice")
    ids = _burst(home, 30, MARKER)
    wait_stages(home, ids, "seen", session, timeout=60)
    assert 1 == _turns_with(session, ids)
    assert MARKER not in session.transcript()
    assert not any(MARKER in r.get("turn", "") for r in _requests(api_log))
    _read(home, ids[0])


def test_the_agent_reads_two_notices_from_its_shell_and_they_are_read(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """Three prompts to a notice recipient: one notice text; the model (told to read two of what
    it is told of) runs the first two notices' `paneboard read ID` in Bash. Those two are
    `read`, by the agent, verified, via cli, and their bodies come back to the model in the
    tool's result; the third stays `seen`, its body never sent."""
    home, session, api_log = shared
    _policy(home, "notice")
    reads = api_log.with_name(api_log.name + ".reads")
    before = _read_receipts(home)
    reads.write_text("2")
    ids = _burst(home, 3, f"{MARKER} told of")
    wait_stages(home, ids[:2], "read", session, timeout=60)
    wait_stages(home, ids[2:], "seen", session, timeout=30)
    turn = _sent_for(api_log, ids[2])["turn"]  # the one notice text told of all three
    assert all(f"[paneboard] prompt {pid} from alice" in turn for pid in ids), turn
    assert 1 == _turns_with(session, ids[2:])  # the two read come back in the tool's result
    assert {(pid, AGENT, "cli", "verified") for pid in ids[:2]} == _read_receipts(home) - before
    back = "\n".join(r["tool_result"] for r in _requests(api_log) if "tool_result" in r)
    assert f"> {MARKER} told of 0 of 3" in back and f"> {MARKER} told of 1 of 3" in back
    assert f"{MARKER} told of 2 of 3" not in back + session.transcript()


def _read_receipts(home: Path) -> set[tuple[str, str, str, str]]:
    """(prompt, sender, via, verdict) of every `read` on the board, as `log --json` shows them."""
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return {(r["prompt"], r["sender"], r["via"], r["verdict"]) for r in rows if r["kind"] == "read"}


def test_a_large_body_as_a_notice_keeps_what_the_model_is_sent_small(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """A 50 KB body: the turn's user text the model is sent is over 50 KB as a body, under
    2 KB as a notice (the stand-in counts the bytes)."""
    home, session, api_log = shared
    _policy(home, "body")
    large = "LARGE-BODY " * 4600
    as_body = post(home, "--to", AGENT, "-", input=large.encode())
    wait_stages(home, [as_body], "seen", session, timeout=60)
    as_notice = post(home, "--to", AGENT, "--notice", "-", input=large.encode())
    wait_stages(home, [as_notice], "seen", session, timeout=60)
    body_bytes = _sent_for(api_log, as_body)["turn_bytes"]
    notice_bytes = _sent_for(api_log, as_notice)["turn_bytes"]
    # the notice is paneboard's few lines (its paths, the read command), whatever the body's size
    assert (True, True) == (body_bytes > 50_000, notice_bytes < 2_000), (body_bytes, notice_bytes)
    _read(home, as_notice)


def test_a_senders_notice_and_a_recipients_notice_policy_each_give_a_notice(
    shared: tuple[Path, ClaudeSession, Path],
) -> None:
    """`post --notice` to a `body` recipient: the model gets the notice. A plain post to a
    `notice` recipient: the notice too; no sender can make the body reach it."""
    home, session, api_log = shared
    _policy(home, "body")
    asked = post(home, "--to", AGENT, "--notice", f"{MARKER} asked")
    wait_stages(home, [asked], "seen", session, timeout=60)
    _read(home, asked)
    _policy(home, "notice")
    plain = post(home, "--to", AGENT, f"{MARKER} plain")
    wait_stages(home, [plain], "seen", session, timeout=60)
    for pid in (asked, plain):
        turn = _sent_for(api_log, pid)["turn"]
        assert "a notice: its body is not shown here" in turn and MARKER not in turn
    _read(home, plain)
