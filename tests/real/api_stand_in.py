"""A loopback stand-in for the Anthropic Messages API: every turn is answered "OK" at once.

Run as `python api_stand_in.py PORT LOG`; each request's last user text goes to LOG.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _events(model: str) -> bytes:
    message = {
        "id": "msg_pb",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "OK"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log = sys.stderr

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def _send(self, body: bytes, ctype: str = "application/json", code: int = 200) -> None:
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(b"{}")

    def do_HEAD(self) -> None:
        self._send(b"")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return self._send(b'{"input_tokens": 1}')
        if not path.endswith("/v1/messages"):
            return self._send(
                b'{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}',
                code=404,
            )
        for m in req.get("messages", [])[-1:]:
            c = m.get("content")
            text = (
                c
                if isinstance(c, str)
                else " ".join(x.get("text", "") for x in c if isinstance(x, dict))
            )
            self.log.write(json.dumps({"last": text[-2000:]}) + "\n")
            self.log.flush()
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
    Handler.log = open(sys.argv[2], "a", buffering=1)  # noqa: SIM115  # lives as long as the server
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()
