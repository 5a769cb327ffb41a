"""Post → model latency through each agent's own door, on the real CLIs, offline.

`python -m bench.agents [--samples N]` (needs tmux, node and the CLIs: PANEBOARD_CLIENTS_BIN or
.ci/tools/clients, as `make clients` installs them). Each agent runs one live session against
the model stand-in (testing/model_stand_in.py), and the time is read from the stand-in's log
(when the model request came in):

- Gemini CLI, Copilot CLI (Stop-hook door): a prompt waits for the person's next turn; the
  number is from that turn's model request (answered at once, so the turn ends right after)
  to the model request carrying the prompt: the answer, the Stop hook, the next request.
- OpenCode (its plugin's socket): idle, from `paneboard post` returning to the model request;
  busy, from the end of the running turn (its model request plus the 2 s it takes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from testing.clients import CLIENTS, PINNED
from testing.sessions import (
    AgentSession,
    CopilotSession,
    GeminiSession,
    OpenCodeSession,
    opencode_plugin_deps,
    post,
)

BUSY = 2.0


def _stop_hook(session: AgentSession, samples: int) -> list[float]:
    out = []
    for i in range(samples):
        prompt = post(session.pb_home, session.name, f"sample {i}")
        session.type(f"turn {i}")
        out.append(session.turn(prompt) - session.turn(f"turn {i}"))
        time.sleep(1.0)  # the continuation turn ends before the next sample
    return out


def _opencode(session: OpenCodeSession, samples: int) -> tuple[list[float], list[float]]:
    session.type("hello")
    session.turn("hello")
    idle, busy = [], []
    for i in range(samples):
        time.sleep(1.0)
        started = time.time()
        prompt = post(session.pb_home, session.name, f"idle {i}")
        idle.append(session.turn(prompt) - started)
        time.sleep(1.0)
        slow = post(session.pb_home, session.name, f"STAND-IN-SLOW-{BUSY:g} busy {i}")
        began = session.turn(slow)
        queued = post(session.pb_home, session.name, f"queued {i}")
        busy.append(session.turn(queued) - (began + BUSY))
    return idle, busy


def _line(what: str, values: list[float]) -> str:
    ms = [round(v * 1000) for v in values]
    return f"{what:<46} median {statistics.median(ms):5.0f} ms  (each: {' '.join(map(str, ms))})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agents", description=__doc__)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args(argv)
    bin_dir = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, cls in (("gemini", GeminiSession), ("copilot", CopilotSession)):
            session = cls(root / name, bin_dir, f"{name}-bench")
            try:
                values = _stop_hook(session, args.samples)
            finally:
                session.close()
            print(_line(f"{name}: turn's request -> prompt's request", values), flush=True)
        deps = opencode_plugin_deps()
        if deps is None:
            raise SystemExit(PINNED["opencode-plugin"].missing)
        oc = OpenCodeSession(root / "opencode", bin_dir, "opencode-bench", deps)
        try:
            idle, busy = _opencode(oc, args.samples)
        finally:
            oc.close()
        print(_line("opencode: post -> model (idle)", idle))
        print(_line("opencode: end of running turn -> model (busy)", busy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
