"""Build a demo board with real listeners and save `paneboard top` on it as an SVG.

    python scripts/top_screenshot.py [OUT.svg]     (default: docs/top.svg)

The board lives in a temporary home and is removed afterwards. bob's listener hands prompts
to a stdout door and carol's to a maildir; dave has none. Two prompts have waited past the
threshold since they were delivered, so they stand out.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PB = [sys.executable, "-m", "paneboard"]
SIZE = (132, 34)
STALE = 2.0


def run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*PB, *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def build(home: Path) -> tuple[dict[str, str], list[subprocess.Popen[bytes]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PANEBOARD_")}
    env.update(PANEBOARD_HOME=str(home), PANEBOARD_BOARD="demo")

    def post(sender: str, *args: str) -> str:
        return run(env, "post", "--as", sender, *args)

    review = post("alice", "--to", "bob", "--thread", "retry", "Review the retry logic in fetch.py")
    question = post("bob", "--to", "alice", "--reply-to", review, "Which timeout do you want?")
    run(env, "answer", "--as", "alice", question, "30 s per attempt, then give up")
    urgent = post("alice", "--to", "bob", "--to", "carol", "--priority", "urgent", "CI is red")
    post("eve", "--to", "bob", "--priority", "high", "Benchmark the NATS store on 3 nodes")
    post("alice", "--to", "dave", "--priority", "low", "Update the changelog for 0.2")
    post("alice", "--to", "carol", "--thread", "retry", "Add a test for the retry backoff")
    listeners = [
        subprocess.Popen(
            [*PB, "listen", "--as", "bob", "--door", "stdout"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [*PB, "listen", "--as", "carol", "--door", "maildir", "--maildir", str(home / "mail")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ),
    ]
    run(env, "wait", urgent, "--until", "delivered", "--timeout", "20")
    run(env, "ack", "--as", "carol", urgent, "--note", "flaky test quarantined")
    time.sleep(STALE + 0.5)  # bob's prompts have now waited past the threshold
    post("alice", "--to", "carol", "--thread", "retry", "And document the new timeout")
    return env, listeners


async def shoot(home: Path, out: Path) -> None:
    from paneboard.board.context import Context
    from paneboard.top.app import TopApp

    app = TopApp(Context.resolve(str(home), "demo", "alice"), stale=STALE)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(app.loaded.wait(), 20)
        deadline = time.monotonic() + 20
        while sum(row.listening for row in app.agent_rows.rows) < 2:
            if time.monotonic() > deadline:
                raise TimeoutError("the listeners never showed")
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        app.save_screenshot(out.name, str(out.parent))


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/top.svg").absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pb-top-shot-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        _, listeners = build(home)
        try:
            asyncio.run(shoot(home, out))
        finally:
            for proc in listeners:
                proc.terminate()
                proc.wait(timeout=10)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
