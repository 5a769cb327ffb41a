"""Claude Code's intake, against a stand-in session: a real Unix socket that writes a real
transcript the way Claude Code 2.1.328 does when it admits, holds, drops or refuses a line."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio.testing

from paneboard.agents.claude import CLAUDE, ClaudeInboxDoor
from paneboard.agents.claude_transcript import Pace, held_reason
from paneboard.listener.doors import HeldByAgent
from paneboard.protocol.compose import compose
from paneboard.protocol.errors import DoorFailed, DoorUnavailable
from paneboard.protocol.posts import Delivered, Undelivered
from paneboard.state.filelog.log import read_posts
from paneboard.state.panes.transcript import LineReader, save_mark
from testing.helpers import Listening, SocketServer, post
from tests.factories import prompt

RATE = "Dropped a peer message from unknown: sender exceeded the peer message rate limit."
Session = Callable[[str], list[dict[str, Any]]]  # the records a session writes for a text


def admit(text: str) -> list[dict[str, Any]]:
    return [{"type": "queue-operation", "operation": "enqueue", "content": text}]


def hold(text: str) -> list[dict[str, Any]]:
    first = text.splitlines()[0].replace("[paneboard]", "paneboard")
    content = (
        "Held peer message — from an unidentified session [verified pid 1]; "
        f"preview: «{first}» …[6 lines] — not delivered to Claude (1 held). This repository's"
        ' settings set "crossSessionInbound" to "hold" (a repo may only tighten, so your own'
        ' "accept" cannot override it); remove the repo setting.'
    )
    return [{"type": "system", "subtype": "informational", "content": content}]


def drop(text: str) -> list[dict[str, Any]]:
    return [{"type": "system", "subtype": "informational", "content": RATE, "timestamp": _now()}]


def nothing(text: str) -> list[dict[str, Any]]:
    return []


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


class StandIn(SocketServer):
    """An inbox socket whose session answers the n-th line with *answers[n]* (the last one for
    every line after), written to its transcript."""

    def __init__(self, folder: Path, *answers: Session) -> None:
        self.transcript = folder / "session.jsonl"
        self.answers = list(answers)
        self.texts: list[str] = []
        super().__init__(folder / "inbox.sock")

    def handle(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as lines:
            for raw in lines:
                text = json.loads(raw)["message"]["content"]
                answer = self.answers[min(len(self.texts), len(self.answers) - 1)]
                self.texts.append(text)
                self.write(answer(text))

    def write(self, records: list[dict[str, Any]]) -> None:
        with open(self.transcript, "a") as f:
            f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


PROMPT = prompt(id="01abcdefghjkmnpqrstvwxyz01", ts=1.0, body="hi")
TEXT = compose(PROMPT, exe="pb", home="/h", agent="bob")


def _deliver(door: ClaudeInboxDoor) -> str:
    async def main() -> str:
        with anyio.fail_after(10):
            return await door.deliver(PROMPT, TEXT, "bob")

    return anyio.run(main)


def _door(server: StandIn, project: Path | None = None) -> ClaudeInboxDoor:
    return ClaudeInboxDoor(server.path, 5.0, server.transcript, project, admit_within=0.3)


def test_a_line_the_transcript_shows_enqueued_is_accepted(tmp_path: Path) -> None:
    """The enqueue line with the prompt's text is the session's admission."""
    server = StandIn(tmp_path, admit)
    try:
        assert ("accepted", [TEXT]) == (_deliver(_door(server)), server.texts)
    finally:
        server.close()


def test_a_held_line_raises_held_by_the_agent(tmp_path: Path) -> None:
    """Claude Code's "Held peer message" record naming the prompt: `HeldByAgent`."""
    server = StandIn(tmp_path, hold)
    try:
        with pytest.raises(HeldByAgent) as held:
            _deliver(_door(server))
        assert ("claude-inbox", "crossSessionInbound: hold") == (held.value.door, held.value.reason)
    finally:
        server.close()


def test_a_dropped_line_is_a_failure_naming_the_reason_and_empties_the_pace(
    tmp_path: Path,
) -> None:
    """No enqueue, and a drop record for the rate limit: retry later, after a refill."""
    server = StandIn(tmp_path, drop)
    door = _door(server)
    try:
        with pytest.raises(DoorFailed) as failed:
            _deliver(door)
    finally:
        server.close()
    reason = "Claude Code dropped it: rate-limited (sender exceeded the peer message rate limit)"
    assert (DoorFailed, reason) == (type(failed.value), failed.value.reason)
    assert door.pace.tokens < 1


def test_a_run_of_drops_recorded_once_names_the_reason_for_each(tmp_path: Path) -> None:
    """Claude Code records the first drop of a run only: the next silent one has its reason."""
    server = StandIn(tmp_path, drop, nothing)
    door = _door(server)
    try:
        for _ in range(2):
            with pytest.raises(DoorFailed) as failed:
                _deliver(door)
    finally:
        server.close()
    assert failed.value.reason.startswith("Claude Code dropped it: rate-limited (")
    assert 2 == len(server.texts)


def test_a_refusing_project_makes_the_door_unavailable(tmp_path: Path) -> None:
    """Nothing in the transcript, and the project's settings refuse peer messages: for good."""
    settings = tmp_path / "proj" / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"crossSessionInbound": "refuse"}))
    server = StandIn(tmp_path, nothing)
    try:
        with pytest.raises(DoorUnavailable) as failed:
            _deliver(_door(server, tmp_path / "proj"))
    finally:
        server.close()
    expected = f"Claude Code refuses peer messages (crossSessionInbound: refuse in {settings})"
    assert expected == failed.value.reason


def test_silence_is_not_delivered(tmp_path: Path) -> None:
    """No record at all within the bound: nothing was handed over, so retry."""
    server = StandIn(tmp_path, nothing)
    try:
        with pytest.raises(DoorFailed) as failed:
            _deliver(_door(server, tmp_path))
    finally:
        server.close()
    expected = "Claude Code did not take it: no enqueue in its transcript within 0.3 s"
    assert (DoorFailed, expected) == (type(failed.value), failed.value.reason)


def test_a_prompt_already_enqueued_is_not_sent_again(tmp_path: Path) -> None:
    """A listener that died after the door and before the record: the transcript already shows
    it enqueued, so it counts as delivered and no second copy goes out."""
    server = StandIn(tmp_path, admit)
    server.write(admit(TEXT))
    try:
        assert ("accepted", []) == (_deliver(_door(server)), server.texts)
    finally:
        server.close()


def test_the_door_and_seen_read_the_transcript_through_one_reader(tmp_path: Path) -> None:
    """In one listener the door's admission and `seen` follow the transcript through one open
    file: the door finds what the session admitted from the start, `seen` what the model was
    shown after the pane's mark."""
    server = StandIn(tmp_path, admit)
    shown = prompt(id="01abcdefghjkmnpqrstvwxyz02", ts=2.0, body="later")
    earlier = {"type": "user", "message": {"role": "user", "content": TEXT}}
    server.write([earlier])
    mark = tmp_path / "mark"
    passed = LineReader(server.transcript, b"[paneboard] prompt ")
    passed.read_new()
    assert passed.mark is not None
    save_mark(mark, passed.mark)
    passed.close()
    later = compose(shown, exe="pb", home="/h", agent="bob")
    server.write([{"type": "user", "message": {"role": "user", "content": later}}])
    try:
        door = _door(server, tmp_path)
        sighting = CLAUDE.sighting(mark, door, server.transcript.absolute())
        assert door.intake is not None and sighting is not None
        assert [shown.id] == sighting.read_new()
        door.intake.scan()
        assert {PROMPT.id: "admitted", shown.id: "admitted"} == door.intake.verdicts
        fds = [os.path.realpath(fd) for fd in Path("/proc/self/fd").iterdir()]
        assert 1 == fds.count(str(server.transcript.resolve()))
        sighting.close()
        door.intake.close()
    finally:
        server.close()


def test_the_pace_keeps_to_claude_codes_bucket() -> None:
    """29 at once, then one a second later (half a token kept in hand), then one every 2 s."""
    times: list[float] = []

    async def main() -> None:
        pace = Pace()
        for _ in range(33):
            await pace.take()
            times.append(anyio.current_time())

    clock = trio.testing.MockClock(autojump_threshold=0)
    anyio.run(main, backend="trio", backend_options={"clock": clock})
    assert [0.0] * 29 + [1.0, 3.0, 5.0, 7.0] == [round(t - times[0], 3) for t in times]


def test_the_listener_retries_a_dropped_prompt_and_delivers_it_once(
    home: Path, tmp_path: Path
) -> None:
    """Dropped, then admitted: one `delivered`, no notice; the log names Claude Code's reason."""
    server = StandIn(tmp_path, drop, admit)
    door = ("--door", "claude-inbox", "--socket", str(server.path))
    try:
        with Listening(home, "bob", *door, "--transcript", str(server.transcript)) as bob:
            pid = post(home, "--to", "bob", "once")
            bob.wait_err(f"delivered {pid}", timeout=20)
            bob.stop()
    finally:
        server.close()
    retry = [ln for ln in bob.stderr_lines if f"retry 2/9 of {pid}" in ln]
    assert ["door claude-inbox: Claude Code dropped it: rate-limited"] == [
        ln.split("after: ", 1)[1].split(" (")[0] for ln in retry
    ]
    posts = [p for _, p in read_posts(home / "test" / "log")]
    assert (1, 0) == (
        sum(isinstance(p, Delivered) for p in posts),
        sum(isinstance(p, Undelivered) for p in posts),
    )
    assert 2 == len(server.texts)


def test_the_reason_a_held_record_gives() -> None:
    """The setting in short, as Claude Code 2.1.328 wrote it; any other cause in its words."""
    real = (
        "Held peer message — from an unidentified session [verified pid 13713]; preview: "
        "«MSG-one» — not delivered to Claude (1 held). This repository's settings set "
        '"crossSessionInbound" to "hold" (a repo may only tighten, so your own "accept" cannot '
        "override it); remove the repo setting or exclude it with --setting-sources."
    )
    other = real.replace(
        real.split(" held). ")[1], "Your permission mode differs from the sender's."
    )
    assert ["crossSessionInbound: hold", "Your permission mode differs from the sender's."] == [
        held_reason(real),
        held_reason(other),
    ]
