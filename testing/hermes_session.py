"""A live Hermes Agent 0.19.0 CLI in a detached tmux server, offline against the loopback
stand-in (hermes_stand_in.py, OpenAI Chat Completions, a `custom` provider in its
config.yaml), with a private HOME and HERMES_HOME and `hook install hermes`'s plugin in its
project, enabled.

No pytest here: the fixtures are in test_hermes.py.
"""

from __future__ import annotations

from pathlib import Path

from testing.sessions import DoorSession, StandIn

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


class HermesSession(DoorSession):
    """Hermes's CLI with paneboard's plugin, its door's registry, and its listener."""

    stand_in: StandIn

    def __init__(self, root: Path, bin_path: Path, name: str) -> None:
        super().__init__(root, bin_path, "hermes", name, "testing.hermes_stand_in")
        hermes_home = root / "home" / ".hermes"
        hermes_home.mkdir(parents=True)
        (hermes_home / "config.yaml").write_text(CONFIG.format(port=self.stand_in.port))
        self.env.update(HERMES_HOME=str(hermes_home), HERMES_ENABLE_PROJECT_PLUGINS="1")
        self.open([str(bin_path)], ("no Hermes door registry", 90), 30)

    def registries(self) -> Path:
        return self.runtime / "paneboard-hermes"
