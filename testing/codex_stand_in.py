"""A loopback stand-in for the OpenAI Responses API, so the real Codex CLI finishes turns offline.

Run as `python -m testing.codex_stand_in PORT LOG`; prints `ready`. Every streamed POST
…/responses is answered with one assistant message `MOCK-ACK`, except when the newest input
item (hook context, a `developer` message, skipped) is a user message that
- starts `MOCK-RUN: CMD`: the answer is a call of Codex's `exec_command` tool running CMD;
- is a paneboard prompt whose body has a line `> MOCK-ANSWER: TEXT`: the same, running the
  prompt's own answer command with TEXT as the answer;
- is a paneboard prompt whose body has a line `> MOCK-READ: ID`: the same, running
  `paneboard read ID` with the options of the prompt's own answer command.
(Only in a thread's turn: the TUI's title requests carry no `turn_trigger` and get text.)
`MOCK-SLOW-<n>` in that text holds the answer back n seconds (a busy session).
LOG gets a JSON line per request, `{"ts", "text", "trigger", "thread"}` (the newest user text
and the turn metadata Codex sends), and one `{"ts", "done", "trigger"}` as the answer's
end goes out.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import time
from typing import Any

from testing import stand_in

_SLOW = re.compile(r"MOCK-SLOW-(\d+(?:\.\d+)?)")
# A Stop hook's reason reaches the model HTML-escaped, inside <hook_prompt …>…</hook_prompt>.
_ANSWER_LINE = re.compile(
    r"^\s*(\S+ answer \S+ .*) 'YOUR ANSWER'(?:</hook_prompt>)?$", re.MULTILINE
)
_MOCK_ANSWER = re.compile(r"^(?:>|&gt;) MOCK-ANSWER: (.+)$", re.MULTILINE)
_MOCK_READ = re.compile(r"^(?:>|&gt;) MOCK-READ: (\S+)$", re.MULTILINE)
_ANSWER_WORDS = re.compile(
    r"^\s*(\S+) answer \S+ (.*) -- 'YOUR ANSWER'(?:</hook_prompt>)?$", re.MULTILINE
)
_COUNT = itertools.count(1)
_STAMP = int(time.time())


def newest_user_text(req: dict[str, Any]) -> str | None:
    """The text of the newest input item if it is a user message (developer notes skipped)."""
    for item in reversed(req.get("input") or []):
        if not isinstance(item, dict) or item.get("role") == "developer":
            continue
        if item.get("role") != "user":
            return None
        content = item.get("content")
        if isinstance(content, str):
            return content
        return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
    return None


def command_for(text: str) -> str | None:
    """The command the stand-in has Codex run for the user text *text*, if any."""
    if text.startswith("MOCK-RUN:"):
        return text[len("MOCK-RUN:") :].strip()
    read, words = _MOCK_READ.search(text), _ANSWER_WORDS.search(text)
    if read is not None and words is not None:
        exe, options = words.groups()
        return f"{exe} read {shlex.quote(read.group(1))} {options}"
    answer, wanted = _ANSWER_LINE.search(text), _MOCK_ANSWER.search(text)
    if answer is None or wanted is None:
        return None
    return f"{answer.group(1)} {shlex.quote(wanted.group(1).strip())}"


def events(model: str, command: str | None) -> list[dict[str, Any]]:
    """The SSE events of one answer: a message `MOCK-ACK`, or an `exec_command` call."""
    k = next(_COUNT)
    rid, mid = f"resp_pb_{_STAMP}_{k}", f"msg_pb_{_STAMP}_{k}"
    item: dict[str, Any] = {
        "type": "message",
        "id": mid,
        "role": "assistant",
        "status": "completed",
    }
    item["content"] = [{"type": "output_text", "text": "MOCK-ACK", "annotations": []}]
    if command is not None:
        arguments = json.dumps({"cmd": command})
        item = {"type": "function_call", "id": f"fc_pb_{_STAMP}_{k}", "call_id": f"call_pb_{k}"}
        item.update(name="exec_command", arguments=arguments, status="completed")
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 2}
    usage.update(output_tokens_details={"reasoning_tokens": 0}, total_tokens=12)
    response = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
    return [
        {
            "type": "response.created",
            "response": {**response, "status": "in_progress", "output": []},
        },
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [item], "usage": usage},
        },
    ]


class Handler(stand_in.Handler):
    def do_GET(self) -> None:
        self._send(b'{"models": [], "data": [], "object": "list"}')

    def do_POST(self) -> None:
        req = self._read_json()[1]
        if req is None:
            return self._send(b'{"error": {"message": "stand-in: not JSON"}}', code=400)
        if not self.path.split("?")[0].endswith("/responses") or not req.get("stream"):
            return self._send(b'{"error": {"message": "stand-in: not found"}}', code=404)
        meta = json.loads((req.get("client_metadata") or {}).get("x-codex-turn-metadata") or "{}")
        text = newest_user_text(req)
        trigger, thread = meta.get("turn_trigger"), meta.get("thread_id")
        self._write({"ts": time.time(), "text": text, "trigger": trigger, "thread": thread})
        slow = _SLOW.search(text or "") if trigger else None
        command = command_for(text or "") if trigger else None  # never for a title request
        answer = events(req.get("model", "mock-model"), command)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        self._event(answer[0])
        if slow:
            time.sleep(float(slow.group(1)))
        self._write({"ts": time.time(), "done": text, "trigger": trigger})
        for event in answer[1:]:
            self._event(event)
        return None

    def _event(self, event: dict[str, Any]) -> None:
        self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()


if __name__ == "__main__":
    stand_in.serve(Handler)
