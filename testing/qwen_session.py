"""A live Qwen Code 0.24.4 TUI in a detached tmux server, offline against the loopback stand-in
(qwen_stand_in.py, OpenAI Chat Completions), with a private HOME; and its listener.

No pytest here: the fixtures are in tests/real/test_qwen.py (and the bench meets it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from paneboard.agents import qwen_inbox as qwen
from paneboard.agents.qwen import QWEN, controller_path
from paneboard.state.files import write_atomic
from testing.clients import free_port
from testing.helpers import Listening, ScriptServer, cli_env, wait_until
from testing.sessions import TmuxSession, base_env, install, user_records


class QwenStandIn(ScriptServer):
    """The stand-in on a free loopback port; its log is one JSON line per model request."""

    def __init__(self, folder: Path) -> None:
        super().__init__("testing.qwen_stand_in", free_port(), folder / "model.log")

    def turns_with(self, needle: str) -> list[float]:
        """The times of the model requests whose newest user text holds *needle*."""
        return [r["ts"] for r in self.records() if needle in r["user"]]


class QwenSession:
    """Qwen Code's TUI in YOLO mode (so a turn may run `paneboard answer` with no question), its
    registry record, and paneboard's home beside it.

    Its project has paneboard's hooks (`hook install qwen --as qwen-hooked`), and paneboard's
    home a controller grant from the start: the SessionStart hook's listener delivers to it.
    """

    def __init__(self, root: Path, bin_path: Path) -> None:
        self.root, self.bin = root, bin_path
        self.pb_home = root / "pb"
        self.pb_home.mkdir(mode=0o700, parents=True)
        self.project = root / "proj"
        self.project.mkdir()
        self.stand_in = QwenStandIn(root)
        self.env = base_env(root / "home", bin_path.parent, self.pb_home)
        self.qwen_home = root / "home" / ".qwen"
        self.qwen_home.mkdir(parents=True)
        (self.qwen_home / "settings.json").write_text(json.dumps({"ui": {"hideTips": True}}))
        self.env.update(
            OPENAI_API_KEY="stand-in",
            OPENAI_BASE_URL=f"http://127.0.0.1:{self.stand_in.port}/v1",
            OPENAI_MODEL="stand-in",
            TMPDIR=str(root / "tmp"),
            # a short private folder for the sockets, as a login session's /run/user/UID is: a
            # test folder's path is too long for a socket's name (108 bytes) under ~/.cache
            XDG_RUNTIME_DIR=tempfile.mkdtemp(prefix="pb-run-"),
        )
        (root / "tmp").mkdir()
        self.grant = self._mint()
        write_atomic(controller_path(self.pb_home), json.dumps(self.grant).encode(), mode=0o600)
        install(self.pb_home, "qwen", self.project, "qwen-hooked")
        argv = [str(bin_path), "--auth-type", "openai", "--approval-mode", "yolo"]
        self.tmux = TmuxSession(self.project, argv, self.env)
        self.record = wait_until(self._record, "a Qwen Code registry record", 90, self.screen)
        self.tmux.wait_screen("Type your message", 60)

    def _record(self) -> Path | None:
        for path in (self.qwen_home / "sessions").glob("*.json"):
            try:
                if json.loads(path.read_text()).get("ipcPath"):
                    return path
            except ValueError:
                continue
        return None

    @property
    def pid(self) -> int:
        return int(self.record.stem)

    def session(self) -> qwen.Session:
        return qwen.read_session(self.record)

    def screen(self) -> str:
        return self.tmux.screen()

    def type(self, text: str) -> None:
        self.tmux.type(text)

    def controller(self) -> dict[str, str]:
        return self.grant

    def _mint(self) -> dict[str, str]:
        """A controller grant minted by `qwen sessions controllers add` (the person's decision,
        which `hook install qwen --trust` asks for; tests/agents/test_qwen.py proves that)."""
        argv = [str(self.bin), "sessions", "controllers", "add", "--label", "paneboard", "--json"]
        done = subprocess.run(
            argv, env=self.env, capture_output=True, text=True, timeout=60, check=True
        )
        grant = json.loads(done.stdout)
        return {"id": grant["id"], "token": grant["token"], "qwenHome": str(self.qwen_home)}

    def listen(
        self, agent: str, *extra: str, controller: dict[str, str] | None = None
    ) -> Listening:
        """`listen --door qwen-inbox --parent-pid PID` as *agent*, with the controller grant kept
        in paneboard's home when given (none there otherwise)."""
        env = cli_env(
            self.pb_home,
            HOME=self.env["HOME"],
            TMPDIR=self.env["TMPDIR"],
            XDG_RUNTIME_DIR=self.env["XDG_RUNTIME_DIR"],
        )
        kept = controller_path(self.pb_home)
        if controller:
            write_atomic(kept, json.dumps(controller).encode(), mode=0o600)
        else:
            kept.unlink(missing_ok=True)
        args = ("--door", "qwen-inbox", "--parent-pid", str(self.pid), *extra)
        return Listening(self.pb_home, agent, *args, env=env)

    def turn(self, needle: str, timeout: float = 90) -> float:
        """When the model got a request whose newest user text holds *needle*."""
        what = f"no model request with {needle!r}"
        found = wait_until(
            lambda: self.stand_in.turns_with(needle), what, timeout, self.screen, every=0.05
        )
        return float(found[0])

    def user_records(self, needle: str) -> list[dict[str, Any]]:
        """The session file's user-role records whose text holds *needle*."""
        path = qwen.session_file(self.qwen_home, self.session().session_id)
        return user_records(path, QWEN.user_texts, needle)

    def close(self) -> None:
        self.tmux.close()
        self.stand_in.close()
        shutil.rmtree(self.env["XDG_RUNTIME_DIR"], ignore_errors=True)
