"""A loopback stand-in for the Gemini API and the OpenAI Chat Completions API: every turn is
answered "OK", at once, or after N seconds when the newest user text holds `STAND-IN-SLOW-N`.

Run as `python -m testing.model_stand_in PORT LOG`; it prints "ready" once listening. LOG
gets one JSON line per model request: {"ts", "api", "user", "body"}: the newest user text, and
the request.
Gemini CLI: GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT. Copilot CLI and OpenCode: an
OpenAI-compatible provider with base URL http://127.0.0.1:PORT/v1.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from testing import stand_in

SLOW = re.compile(r"STAND-IN-SLOW-(\d+(?:\.\d+)?)")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def newest_user_text(req: dict[str, Any]) -> str:
    """The last user message of a chat request, or the last user content of a Gemini one."""
    for m in reversed(req.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return _text(m.get("content"))
    contents = req.get("contents") or []
    if contents and contents[-1].get("role", "user") == "user":
        return _text(contents[-1].get("parts"))
    return ""


def from_schema(schema: Any, depth: int = 0) -> Any:
    """A small value that satisfies a JSON schema (Gemini CLI asks for JSON in side requests)."""
    if not isinstance(schema, dict) or depth > 8:
        return "ok"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type") or ("object" if "properties" in schema else "string")).lower()
    if kind == "object":
        return {k: from_schema(v, depth + 1) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    return False if kind == "boolean" else "ok"


class Handler(stand_in.Handler):
    def do_GET(self) -> None:
        models = [{"id": "stand-in", "object": "model", "created": 0, "owned_by": "stand-in"}]
        self._send(json.dumps({"object": "list", "data": models, "models": []}).encode())

    def do_POST(self) -> None:
        req = self._read_json()[1] or {}
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            return self._send(b'{"totalTokens": 1}')
        user = newest_user_text(req)
        api = "gemini" if ":" in path.rsplit("/", 1)[-1] else "chat"
        self._write({"ts": time.time(), "api": api, "user": user, "body": req})
        slow = SLOW.search(user)
        if slow:
            time.sleep(float(slow.group(1)))
        if api == "gemini":
            return self._gemini(path, req)
        return self._chat(req)

    def _gemini(self, path: str, req: dict[str, Any]) -> None:
        config = req.get("generationConfig") or {}
        text = "OK"
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            text = json.dumps(from_schema(schema))
        candidate = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP",
        }
        usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        body = json.dumps({"candidates": [candidate], "usageMetadata": usage})
        if path.endswith(":streamGenerateContent"):
            return self._send(f"data: {body}\r\n\r\n".encode(), "text/event-stream")
        return self._send(body.encode())

    def _chat(self, req: dict[str, Any]) -> None:
        base = {
            "id": "chatcmpl-pb",
            "created": int(time.time()),
            "model": req.get("model", "stand-in"),
        }
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        if not req.get("stream"):
            message = {"role": "assistant", "content": "OK"}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            return self._send(
                json.dumps(
                    {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
                ).encode()
            )
        deltas = [{"role": "assistant", "content": ""}, {"content": "OK"}, {}]
        chunks = [
            {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": d, "finish_reason": "stop" if not d else None}],
            }
            for d in deltas
        ]
        chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return self._send(body.encode(), "text/event-stream")


if __name__ == "__main__":
    stand_in.serve(Handler)
