"""What the loopback model stand-ins share: a handler that logs JSON lines and answers, and the
server that prints `ready` once it listens. A stand-in runs as `python -m testing.NAME PORT
LOG` from the project's root."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log: Any = sys.stderr

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def _write(self, record: dict[str, Any]) -> None:
        """One JSON line in the stand-in's log."""
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    def _send(self, body: bytes, ctype: str = "application/json", code: int = 200) -> None:
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _read_json(self) -> tuple[bytes, Any]:
        """The request's body, raw and parsed (None where it is not JSON)."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            return raw, json.loads(raw or b"{}")
        except ValueError:
            return raw, None


def serve(handler: type[Handler]) -> None:
    """Serve *handler* on 127.0.0.1:argv[1], logging to argv[2]; print `ready` once listening."""
    ThreadingHTTPServer.daemon_threads = True
    with open(sys.argv[2], "a", buffering=1) as handler.log:
        server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler)
        print("ready", flush=True)
        server.serve_forever()
