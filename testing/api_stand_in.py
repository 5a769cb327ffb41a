"""A loopback stand-in for the Anthropic Messages API: every turn is answered "OK" at once.

Run as `python -m testing.api_stand_in PORT LOG`; each request's last user text goes to LOG
(``last``), with the texts of the turn's user messages (``turn``), the bytes of the request's
body (``bytes``) and of the turn's user texts (``turn_bytes``): what the model was sent.
A request offering the Bash tool whose last user text is a paneboard prompt with a body line
`> MOCK-ANSWER: TEXT` is answered with a Bash `tool_use` running the prompt's own answer
command with TEXT as the answer (what the tool returns then gets "OK").
A request offering paneboard's MCP `answer` tool whose last turn is a paneboard prompt is
answered by calling that tool for the prompt's id (see "paneboard's MCP tools" below).

A request offering Bash whose turn is a paneboard prompt with a body line `> MOCK-READ: ID`
is answered with a Bash `tool_use` running `paneboard read ID` with the options of the prompt's
own answer command (the agent reads the prompt it was told of); LOG gets ``{"read": COMMAND}``,
and the request carrying a tool's result gets ``{"tool_result": TEXT}``.

A model that reads what it is told of: while a file LOG.reads holds a number N, the first
request offering Bash whose turn holds paneboard notices is answered with a Bash `tool_use`
running the `paneboard read ID` commands of its first N notices, one after the other; the file
is then removed (the model reads once), and LOG gets ``{"read": COMMAND}``.

A turn's request (one that offers tools) whose last user text holds ``PB-SLOW-<n>`` is
answered after n seconds (a busy session); LOG gets ``{"slow": TIME}`` as it starts holding the
answer back and ``{"done": TIME}`` as the answer goes out.

A turn's request offering Bash whose last user text holds ``PB-SLEEP-<n>`` (and no tool result
yet) is answered with a Bash `tool_use` running ``sleep n`` (a session busy in a tool); LOG gets
``{"sleep": TIME}`` as that call goes out. The request carrying the tool's result gets "OK".
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path
from typing import Any

from testing import stand_in

_ANSWER_LINE = re.compile(r"^\s*(\S+ answer \S+ .*) 'YOUR ANSWER'$", re.MULTILINE)
_MOCK_ANSWER = re.compile(r"^> MOCK-ANSWER: (.+)$", re.MULTILINE)
_SLEEP = re.compile(r"PB-SLEEP-(\d+(?:\.\d+)?)")
_MOCK_READ = re.compile(r"^> MOCK-READ: (\S+)$", re.MULTILINE)
_NOTICE_READ = re.compile(r"read it with\n\s+(\S+ read [0-9a-z]+ [^\n]*)")
_ANSWER_WORDS = re.compile(r"^\s*(\S+) answer \S+ (.*) -- 'YOUR ANSWER'$", re.MULTILINE)


def _offers(req: dict[str, Any], tool: str) -> bool:
    return any(isinstance(t, dict) and t.get("name") == tool for t in req.get("tools") or [])


def _has_result(message: dict[str, Any]) -> bool:
    """Whether a user message carries a tool's result (the turn goes on after a tool call)."""
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


def answer_command(req: dict[str, Any], text: str) -> str | None:
    """The `paneboard answer` command to run for *text*, if the request offers Bash."""
    answer, wanted = _ANSWER_LINE.search(text), _MOCK_ANSWER.search(text)
    bash = any(isinstance(t, dict) and t.get("name") == "Bash" for t in req.get("tools") or [])
    if not bash or answer is None or wanted is None:
        return None
    return f"{answer.group(1)} {shlex.quote(wanted.group(1).strip())}"


def read_command(req: dict[str, Any], text: str) -> str | None:
    """The `paneboard read ID` command to run for *text*, if the request offers Bash: the
    executable and options of the prompt's own answer command, the id of its MOCK-READ line."""
    answer, wanted = _ANSWER_WORDS.search(text), _MOCK_READ.search(text)
    if not _offers(req, "Bash") or answer is None or wanted is None:
        return None
    exe, options = answer.groups()
    return f"{exe} read {shlex.quote(wanted.group(1))} {options}"


def notices_read(req: dict[str, Any], text: str, reads: Path) -> str | None:
    """The commands reading the first N notices of *text* (N: the number in *reads*, which is
    then removed), if the request offers Bash and *text* holds notices."""
    commands = _NOTICE_READ.findall(text)
    if not _offers(req, "Bash") or not commands or not reads.exists():
        return None
    n = int(reads.read_text().strip() or 0)
    reads.unlink()
    return " && ".join(commands[:n]) or None


def tool_results(message: dict[str, Any]) -> str:
    """The text of the tool results a user message carries."""
    content = message.get("content")
    out = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            parts = inner if isinstance(inner, list) else [{"text": inner}]
            out += [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
    return "\n".join(out)


def _turn(req: dict[str, Any]) -> str:
    """The texts of the user messages after the last assistant message: a turn's input (a
    resumed session puts its hooks' context after the prompt, as a message of its own)."""
    texts: list[str] = []
    for m in reversed(req.get("messages") or []):
        if not isinstance(m, dict) or m.get("role") == "assistant":
            break
        if m.get("role") == "user":
            texts.insert(0, _text(m))
    return "\n".join(texts)


def _text(message: dict[str, Any]) -> str:
    c = message.get("content")
    return (
        c
        if isinstance(c, str)
        else " ".join(x.get("text", "") for x in c or [] if isinstance(x, dict))
    )


def _stream(model: str, start: dict[str, Any], delta: dict[str, Any], stop: str, mid: str) -> bytes:
    """A streamed assistant message of one content block: *start*, one *delta*, *stop*."""
    message = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": []}
    message.update(stop_reason=None, stop_sequence=None)
    message["usage"] = {"input_tokens": 1, "output_tokens": 1}
    done = {"stop_reason": stop, "stop_sequence": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": start},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": done, "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _events(model: str) -> bytes:
    """A streamed answer "OK" that ends the turn."""
    text, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": "OK"}
    return _stream(model, text, delta, "end_turn", "msg_pb")


def _tool_use(model: str, command: str) -> bytes:
    """A streamed answer that calls Bash with *command*."""
    block = {"type": "tool_use", "id": f"toolu_pb_{abs(hash(command))}", "name": "Bash"}
    return tool_use_events(model, {**block, "input": {"command": command}})


# --- paneboard's MCP tools (tests/real/test_real_mcp.py) ------------------------------------
# When the request offers `mcp__paneboard__answer` and its last user turn carries a paneboard
# prompt (not yet a tool result), the model "calls" that tool to answer the prompt by its id.

MCP_ANSWER_TOOL = "mcp__paneboard__answer"
MCP_ANSWER_BODY = "six times seven is 42 (answered through paneboard's MCP tool)"
_PROMPT_ID = re.compile(r"\[paneboard\] prompt ([0-9a-z]+)")


def mcp_answer_call(req: dict[str, Any]) -> dict[str, Any] | None:
    """The `tool_use` block answering the paneboard prompt of the last user turn, or None."""
    offered = {t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)}
    turns = [
        m for m in req.get("messages") or [] if m.get("role") != "system"
    ]  # context, not a turn
    if MCP_ANSWER_TOOL not in offered or not turns or turns[-1].get("role") != "user":
        return None
    content = turns[-1].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
        return None
    text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    found = _PROMPT_ID.search(text)
    if found is None:
        return None
    pid = found.group(1)
    call = {"id": pid, "body": MCP_ANSWER_BODY}
    return {
        "type": "tool_use",
        "id": f"toolu_pb{pid[-12:]}",
        "name": MCP_ANSWER_TOOL,
        "input": call,
    }


def tool_use_events(model: str, block: dict[str, Any]) -> bytes:
    """A streamed assistant turn that is one tool call, ending with `stop_reason: tool_use`."""
    delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return _stream(model, {**block, "input": {}}, delta, "tool_use", "msg_pb_tool")


# --- the handler --------------------------------------------------------------------------


class Handler(stand_in.Handler):
    def do_GET(self) -> None:
        self._send(b"{}")

    def do_HEAD(self) -> None:
        self._send(b"")

    def do_POST(self) -> None:
        raw, parsed = self._read_json()
        req = parsed or {}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self._send(b'{"input_tokens": 1}')
        if not path.endswith("/v1/messages"):
            return self._send(
                b'{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}',
                code=404,
            )
        turn = _turn(req)
        sizes = {"bytes": len(raw), "turn_bytes": len(turn.encode())}
        for m in req.get("messages", [])[-1:]:
            record = {"ts": time.time(), "last": _text(m)[-2000:], "turn": turn[:20000]}
            self._write({**record, **sizes, "tools": bool(req.get("tools"))})
        users = [
            m for m in req.get("messages", []) if m.get("role") == "user"
        ]  # not "system" notes
        if users and _has_result(users[-1]):
            self._write({"tool_result": tool_results(users[-1])[:20000]})
        command = answer_command(req, turn) if users else None
        if command is not None and req.get("stream"):
            return self._send(_tool_use(req.get("model", "stand-in"), command), "text/event-stream")
        fresh = users and not _has_result(users[-1])
        reading = read_command(req, turn) if fresh else None
        if reading is None and fresh:
            reading = notices_read(req, turn, Path(self.log.name + ".reads"))
        if reading is not None and req.get("stream"):
            self._write({"read": reading})
            return self._send(_tool_use(req.get("model", "stand-in"), reading), "text/event-stream")
        call = mcp_answer_call(req)
        if call is not None:
            self._write({"mcp_answer": call["input"]["id"]})
            if req.get("stream"):
                events = tool_use_events(req.get("model", "stand-in"), call)
                return self._send(events, "text/event-stream")

        sleep = _SLEEP.search(_text(users[-1])) if users and not _has_result(users[-1]) else None
        if sleep and req.get("stream") and _offers(req, "Bash"):
            self._write({"sleep": time.time()})
            command = f"sleep {sleep.group(1)}"
            return self._send(_tool_use(req.get("model", "stand-in"), command), "text/event-stream")
        slow = re.search(r"PB-SLOW-(\d+(?:\.\d+)?)", _text(users[-1]) if users else "")
        if slow and req.get("tools"):  # the session's turn, not its side requests (a title)
            self._write({"slow": time.time()})
            time.sleep(float(slow.group(1)))
            self._write({"done": time.time()})
        if req.get("stream"):
            return self._send(_events(req.get("model", "stand-in")), "text/event-stream")
        message = {
            "id": "msg_pb",
            "type": "message",
            "role": "assistant",
            "model": req.get("model", "x"),
            "content": [{"type": "text", "text": "OK"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return self._send(json.dumps(message).encode())


if __name__ == "__main__":
    stand_in.serve(Handler)
