"""A live Codex TUI (codex-cli 0.169.0) in tmux, offline, for the `seen` tests.

Run as a script (`python seen_codex.py PORT LOG`) it is a loopback stand-in for the OpenAI
Responses API: every turn is answered "OK"; a newest user text holding ``PB-SLOW-<n>`` is
answered after n seconds in a thread's turn (a busy session), and LOG gets ``{"done": TIME}`` as it goes out.
`LiveCodex` is one private CODEX_HOME with a config that keeps Codex off the network and a
TUI whose first turn has written the thread's rollout; `close()` ends the TUI and the app-server
daemon the TUI started (it outlives the TUI), by the pids the daemon recorded, and deletes the
400 MB the daemon copied into the home.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CONFIG = """model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "MOCK_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[tui]
show_tooltips = false

[features]
plugins = false
remote_plugin = false
apps = false

[projects."{project}"]
trust_level = "trusted"
"""


class LiveCodex:
    """A Codex TUI on a fresh thread of a private CODEX_HOME, its first turn done."""

    def __init__(self, bin_dir: Path, folder: Path, port: int) -> None:
        self.home, self.project = folder / "codex-home", folder / "codex-project"
        self.codex = str(bin_dir / "codex")
        self.project.mkdir(parents=True)
        self.home.mkdir()
        (self.home / "config.toml").write_text(CONFIG.format(port=port, project=self.project))
        self.name = f"pbcx{uuid.uuid4().hex[:8]}"
        self._polls = 0
        env = f"env -u RUST_BACKTRACE CODEX_HOME={self.home} MOCK_OPENAI_API_KEY=sk-dummy"
        command = f"cd {self.project} && {env} {self.codex}; sleep 600"
        tmux = ["tmux", "-L", self.name, "new", "-d", "-s", self.name, "-x", "200", "-y", "50"]
        subprocess.run([*tmux, command], check=True)
        try:
            self._until("the composer", lambda: "Ask Codex to do anything" in self.screen(), 30)
            time.sleep(1)  # an Enter in the composer's first moments can be lost (the recipe's)
            self.type("ready")
            self.rollout: Path = self._until("the first turn", self._first_turn, 60)
        except BaseException:
            self.close()
            raise
        self.thread = self.rollout.stem[-36:]

    def _first_turn(self) -> Path | None:
        rollouts = list(self.home.glob("sessions/*/*/*/rollout-*.jsonl"))
        for path in rollouts:
            if '"task_complete"' in path.read_text():
                return path
        self._polls += 1
        if not rollouts and self._polls % 30 == 0:  # still in the composer: the Enter was lost
            keys = ["tmux", "-L", self.name, "send-keys", "-t", self.name, "Enter"]
            subprocess.run(keys, check=True)
        return None

    def _until(self, what: str, check: Any, timeout: float) -> Any:
        """Poll *check*: Codex's files and screen have nothing to be woken by."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = check()
            if got:
                return got
            time.sleep(0.1)
        raise AssertionError(f"{what}: not within {timeout} s\n{self.screen()}")

    def screen(self) -> str:
        argv = ["tmux", "-L", self.name, "capture-pane", "-p", "-t", self.name]
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout

    def type(self, text: str) -> None:
        """Type a prompt into the TUI as its person would."""
        keys = ["tmux", "-L", self.name, "send-keys", "-t", self.name]
        subprocess.run([*keys, "-l", text], check=True)
        time.sleep(0.5)
        subprocess.run([*keys, "Enter"], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], check=False, capture_output=True)
        for name in ("daemon.pid", "daemon-updater.pid"):
            try:
                pid = int(json.loads((self.home / "app-server-daemon" / name).read_text())["pid"])
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except (OSError, ValueError, KeyError):
                continue
            if f"{self.home}/packages/".encode() in cmdline:  # this home's daemon, no other
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.home / "packages", ignore_errors=True)  # the daemon's 400 MB copy


def _events(reply: str) -> list[dict[str, Any]]:
    rid, mid = f"resp_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}"
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": "mock-model"}
    item = {"type": "message", "id": mid, "role": "assistant", "status": "completed"}
    text = {"type": "output_text", "text": reply, "annotations": []}
    done = {**item, "content": [text]}
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    part = {"item_id": mid, "output_index": 0, "content_index": 0}
    return [
        {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {"type": "response.content_part.added", **part, "part": {**text, "text": ""}},
        {"type": "response.output_text.delta", **part, "delta": reply},
        {"type": "response.output_text.done", **part, "text": reply},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [done], "usage": usage},
        },
    ]


def _newest_user_text(req: dict[str, Any]) -> str:
    for item in reversed(req.get("input") or []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
    return ""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_file: Any = sys.stderr

    def log_message(self, fmt: str, *args: object) -> None:
        pass

    def _log(self, record: dict[str, Any]) -> None:
        self.log_file.write(json.dumps(record) + "\n")
        self.log_file.flush()

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        req = json.loads(raw or b"{}")
        text = _newest_user_text(req)
        self._log({"ts": time.time(), "text": text[-2000:]})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        events = _events("OK")
        self.wfile.write(_sse(events[0]))
        self.wfile.flush()
        slow = re.search(r"PB-SLOW-(\d+(?:\.\d+)?)", text)
        if slow and b"turn_trigger" in raw:  # a thread's turn, not the TUI's title request
            time.sleep(float(slow.group(1)))
            self._log({"done": time.time()})
        self.wfile.write(b"".join(_sse(e) for e in events[1:]))
        self.wfile.flush()


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def main(port: int, log: str) -> None:
    _Handler.log_file = open(log, "a", buffering=1)  # noqa: SIM115  # lives as long as the server
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
