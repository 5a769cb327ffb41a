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
- Kilo Code (the same plugin), Hermes Agent (its plugin's socket): idle, from just before
  `paneboard post` to the model request carrying the prompt, each turn over before the next.
- Qoder CLI (its inbox socket): its model is not reached offline (its vendor's service; see
  testing/qoder_session.py), and its own stand-in, a file of responses it replays, logs no
  request: from just before `paneboard post` to the user turn in its transcript, which Qoder
  CLI writes as the turn starts, before its model request.
- Grok CLI: no door (docs/agents.md): nothing to measure.

`--only NAME,…` runs some of them (gemini, copilot, opencode, kilo, hermes, qoder).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from testing.clients import CLIENTS, PINNED
from testing.helpers import wait_until
from testing.sessions import (
    AgentSession,
    CopilotSession,
    DoorSession,
    GeminiSession,
    OpenCodeSession,
    opencode_plugin_deps,
    post,
)

BUSY = 2.0
AGENTS = ("gemini", "copilot", "opencode", "kilo", "hermes", "qoder")


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


def _post_to(
    session: DoorSession,
    reached: Callable[[str], float],
    over: Callable[[str], object],
    samples: int,
) -> list[float]:
    """*samples* prompts to an idle session, one at a time: from just before each post to
    *reached* (when the model, or the transcript, got it); *over* waits for its turn's end."""
    out = []
    for i in range(samples):
        t0 = time.time()
        prompt = post(session.pb_home, session.name, f"timed {i}")
        out.append(reached(prompt) - t0)
        over(prompt)
    return out


def _kilo(root: Path, samples: int) -> list[float]:
    from testing.kilo_session import KiloSession

    s = KiloSession(root, _binary("kilo"), "kilo-bench")

    def over(_: str) -> None:
        wait_until(lambda: "esc interrupt" not in s.screen(), "Kilo Code still busy", 30)

    try:
        s.turn("hello")
        over("hello")
        return _post_to(s, s.turn, over, samples)
    finally:
        s.close()


def _hermes(root: Path, samples: int) -> list[float]:
    from testing.hermes_session import HermesSession

    s = HermesSession(root, _binary("hermes"), "hermes-bench")
    busy = "\u2695 \u276f"  # Hermes's input prompt while a turn runs

    def over(_: str) -> None:
        wait_until(lambda: busy not in s.screen(), "Hermes still busy", 30)

    try:
        return _post_to(s, s.turn, over, samples)
    finally:
        s.close()


def _qoder(root: Path, samples: int) -> list[float]:
    from testing.qoder_session import QoderSession, text

    s = QoderSession(root, _binary("qoder"), "qoder-bench", [text("OK")] * (samples + 2))

    def in_transcript(prompt: str) -> float:
        header = f"[paneboard] prompt {prompt} from alice"
        wait_until(lambda: s.user_records(header), "no user turn", 30, s.screen, 0.005)
        return time.time()

    def over(prompt: str) -> None:
        def answered() -> bool:
            lines = s.transcript.read_text().splitlines()
            at = next(n for n, line in enumerate(lines) if prompt in line)
            return any('"type":"assistant"' in line for line in lines[at:])

        wait_until(answered, "Qoder CLI's turn did not end", 30, s.screen)

    try:
        return _post_to(s, in_transcript, over, samples)
    finally:
        s.close()


def _binary(key: str) -> Path:
    found = PINNED[key].installed()
    if found is None:
        raise SystemExit(PINNED[key].missing)
    return found


def _line(what: str, values: list[float]) -> str:
    ms = [round(v * 1000) for v in values]
    return f"{what:<46} median {statistics.median(ms):5.0f} ms  (each: {' '.join(map(str, ms))})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agents", description=__doc__)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--only", default=",".join(AGENTS), help="some of: " + ", ".join(AGENTS))
    args = parser.parse_args(argv)
    only = args.only.split(",")
    if unknown := sorted(set(only) - set(AGENTS)):
        parser.error(f"--only: no agent {', '.join(unknown)} (one of {', '.join(AGENTS)})")
    bin_dir = Path(os.environ.get("PANEBOARD_CLIENTS_BIN", CLIENTS / "node_modules" / ".bin"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, cls in (("gemini", GeminiSession), ("copilot", CopilotSession)):
            if name not in only:
                continue
            session = cls(root / name, bin_dir, f"{name}-bench")
            try:
                values = _stop_hook(session, args.samples)
            finally:
                session.close()
            print(_line(f"{name}: turn's request -> prompt's request", values), flush=True)
        if "opencode" in only:
            deps = opencode_plugin_deps()
            if deps is None:
                raise SystemExit(PINNED["opencode-plugin"].missing)
            oc = OpenCodeSession(root / "opencode", bin_dir, "opencode-bench", deps)
            try:
                idle, busy = _opencode(oc, args.samples)
            finally:
                oc.close()
            print(_line("opencode: post -> model (idle)", idle))
            print(_line("opencode: end of running turn -> model (busy)", busy), flush=True)
        for name, run, what in (
            ("kilo", _kilo, "kilo: post -> model (idle)"),
            ("hermes", _hermes, "hermes: post -> model (idle)"),
            ("qoder", _qoder, "qoder: post -> transcript's user turn (idle)"),
        ):
            if name in only:
                print(_line(what, run(root / name, args.samples)), flush=True)
        if set(only) == set(AGENTS):
            print("grok: no door (nothing to measure)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
