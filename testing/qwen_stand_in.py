"""The model stand-in (model_stand_in.py) for Qwen Code, which can also run a shell command.

A turn whose newest message is a user message carrying a paneboard prompt with a body line
`> MOCK-ANSWER: TEXT` is answered with a call of Qwen Code's `run_shell_command` tool running
the prompt's own answer command with TEXT as the answer (the tool's result then gets "OK").
Run as `python -m testing.qwen_stand_in PORT LOG`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from testing import model_stand_in, stand_in
from testing.shell_stand_in import answer_command as shell_answer

SHELL = "run_shell_command"


def answer_command(req: dict[str, Any]) -> str | None:
    """The `paneboard answer` command the turn should run, if the request offers the shell."""
    return shell_answer(req, SHELL)


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
