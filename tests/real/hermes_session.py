"""A live Hermes Agent 0.19.0 CLI in a detached tmux server, offline against the loopback
stand-in (hermes_stand_in.py, OpenAI Chat Completions, a `custom` provider in its
config.yaml), with a private HOME and HERMES_HOME and `hook install hermes`'s plugin in its
project, enabled.

No pytest here: the fixtures are in test_hermes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paneboard.state.panelock import holder
from testing.helpers import wait_until
from testing.sessions import StandIn, TmuxSession, workspace

CONFIG = """model:
  provider: custom
  base_url: http://127.0.0.1:{port}/v1
  default: stand-in
  api_key: stand-in
plugins:
  enabled: [paneboard]
auxiliary:
  title_generation:
    enabled: false
"""


class HermesSession:
    """Hermes's CLI with paneboard's plugin, its door's registry, and its listener."""

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        self.root, self.bin, self.name = root, bin_path, name
        folders = workspace(root, bin_path.parent, "hermes", name)
        self.pb_home, self.project, self.installed, self.env = folders
        self.stand_in = StandIn(root, "tests.real.hermes_stand_in")
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        hermes_home = root / "home" / ".hermes"
        hermes_home.mkdir(parents=True)
        (hermes_home / "config.yaml").write_text(CONFIG.format(port=self.stand_in.port))
        self.env.update(
            XDG_RUNTIME_DIR=str(self.runtime),
            HERMES_HOME=str(hermes_home),
            HERMES_ENABLE_PROJECT_PLUGINS="1",
        )
        self.tmux = TmuxSession(self.project, [str(bin_path)], self.env)
        self.registry = wait_until(self._registry, "no Hermes door registry", 90, self.screen)
        self.listener = wait_until(
            lambda: holder(self.lock), f"no listener for {name}", 30, self.screen, every=0.1
        )

    @property
    def lock(self) -> Path:
        return self.pb_home / "test" / "panes" / f"{self.name}.lock"

    def _registry(self) -> dict[str, Any] | None:
        for path in (self.runtime / "paneboard-hermes").glob("*.json"):
            try:
                return dict(json.loads(path.read_text()))
            except ValueError:
                continue
        return None

    @property
    def pid(self) -> int:
        return int(self.registry["pid"])

    @property
    def socket(self) -> Path:
        return Path(self.registry["socket"])

    def screen(self) -> str:
        return self.tmux.screen()

    def turn(self, needle: str, timeout: float = 60) -> float:
        """When the model got a request whose newest user text holds *needle*."""
        return self.stand_in.wait_turn(needle, timeout, self.screen)

    def close(self) -> None:
        self.tmux.close()
        self.stand_in.close()
