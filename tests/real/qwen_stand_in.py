"""The model stand-in (model_stand_in.py) for Qwen Code, which can also run a shell command.

A turn whose newest message is a user message carrying a paneboard prompt with a body line
`> MOCK-ANSWER: TEXT` is answered with a call of Qwen Code's `run_shell_command` tool running
the prompt's own answer command with TEXT as the answer (the tool's result then gets "OK").
Run as `python -m tests.real.qwen_stand_in PORT LOG`.
"""

from __future__ import annotations

import json
import shlex
import time
from typing import Any

from tests.real import model_stand_in, stand_in
from tests.real.api_stand_in import _ANSWER_LINE, _MOCK_ANSWER

SHELL = "run_shell_command"


def answer_command(req: dict[str, Any]) -> str | None:
    """The `paneboard answer` command the turn should run, if the request offers the shell."""
    messages = req.get("messages") or []
    if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
        return None  # a tool's result came back: the turn ends with "OK"
    tools = [t.get("function", {}).get("name") for t in req.get("tools") or []]
    text = model_stand_in.newest_user_text(req)
    answer, wanted = _ANSWER_LINE.search(text), _MOCK_ANSWER.search(text)
    if SHELL not in tools or answer is None or wanted is None:
        return None
    return f"{answer.group(1)} {shlex.quote(wanted.group(1).strip())}"


class Handler(model_stand_in.Handler):
    def _chat(self, req: dict[str, Any]) -> None:
        command = answer_command(req) if req.get("stream") else None
        if command is None:
            return super()._chat(req)
        base = {"id": "chatcmpl-pb", "created": int(time.time()), "model": req.get("model")}
        call = {
            "index": 0,
            "id": f"call_pb_{abs(hash(command))}",
            "type": "function",
            "function": {"name": SHELL, "arguments": json.dumps({"command": command})},
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
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(body.encode(), "text/event-stream")


if __name__ == "__main__":
    stand_in.serve(Handler)
