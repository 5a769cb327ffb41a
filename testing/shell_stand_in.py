"""The model stand-in (model_stand_in.py) answering a paneboard prompt with a call of the
agent's own shell tool: what pi_stand_in.py and droid_stand_in.py share.

A turn whose newest message is a user message carrying a paneboard prompt with a body line
`> MOCK-ANSWER: TEXT`, in a request that offers the tool, is answered with a call of it
running the prompt's own answer command with TEXT as the answer; the request carrying the
tool's result gets "OK".
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from typing import Any

from testing import model_stand_in
from testing.api_stand_in import _ANSWER_LINE, _MOCK_ANSWER

Arguments = Callable[[str], dict[str, Any]]  # the shell command -> the tool call's arguments


def answer_command(req: dict[str, Any], tool: str) -> str | None:
    """The `paneboard answer` command the turn should run, if the request offers *tool*."""
    messages = req.get("messages") or []
    if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
        return None  # a tool's result came back: the turn ends with "OK"
    tools = [t.get("function", {}).get("name") for t in req.get("tools") or []]
    text = model_stand_in.newest_user_text(req)
    answer, wanted = _ANSWER_LINE.search(text), _MOCK_ANSWER.search(text)
    if tool not in tools or answer is None or wanted is None:
        return None
    return f"{answer.group(1)} {shlex.quote(wanted.group(1).strip())}"


def tool_call_stream(req: dict[str, Any], tool: str, arguments: dict[str, Any]) -> bytes:
    """A streamed Chat Completions answer that calls *tool* with *arguments*."""
    base = {"id": "chatcmpl-pb", "created": int(time.time()), "model": req.get("model")}
    call = {
        "index": 0,
        "id": f"call_pb_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }
    deltas = [({"role": "assistant", "tool_calls": [call]}, None), ({}, "tool_calls")]
    chunks = [
        {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": d, "finish_reason": why}],
        }
        for d, why in deltas
    ]
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def handler(tool: str, arguments: Arguments) -> type[model_stand_in.Handler]:
    """The stand-in's handler for an agent whose shell tool is *tool*."""

    class Handler(model_stand_in.Handler):
        def _chat(self, req: dict[str, Any]) -> None:
            command = answer_command(req, tool) if req.get("stream") else None
            if command is None:
                return super()._chat(req)
            body = tool_call_stream(req, tool, arguments(command))
            self._send(body, "text/event-stream")

    return Handler
