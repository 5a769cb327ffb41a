"""Measuring helpers: real processes on a temporary home, percentiles, CPU and memory from /proc."""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paneboard.protocol.posts import Post
    from paneboard.state.trust.sealing import Sealer

PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")


def summary(samples: Sequence[float]) -> dict[str, Any]:
    """median, p50, p99, min, max and count of *samples* (any unit)."""
    xs = sorted(samples)
    if not xs:
        return {"n": 0}

    def pct(p: float) -> float:
        return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]

    return {
        "n": len(xs),
        "median": statistics.median(xs),
        "p50": pct(50),
        "p99": pct(99),
        "min": xs[0],
        "max": xs[-1],
    }


def signed(home: Path, posts: Sequence[Post]) -> list[bytes]:
    """*posts* as their senders' paneboard commands in *home* write them: encoded and signed
    (a listener holds an unsigned prompt, and counts no unsigned receipt)."""
    from paneboard.protocol.posts import encode
    from paneboard.state.trust.sealing import Sealer

    sealer = _sealers.get(home) or _sealers.setdefault(home, Sealer(home, "bench"))
    return [sealer.seal(encode(p), p.sender) for p in posts]


_sealers: dict[Path, Sealer] = {}


def unlimited(home: Path, *agents: str) -> None:
    """Turn the rate limit off for *agents* (a benchmark sends one sender's prompts faster
    than 30 a minute, which their policy would hold)."""
    from paneboard.state.trust.policy import Policy, write_policy

    (home / "bench" / "panes").mkdir(parents=True, exist_ok=True, mode=0o700)
    for agent in agents:
        write_policy(home / "bench", agent, Policy(rate=0))


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PANEBOARD_", "CLAUDE_CODE_"))}
    env.update(PANEBOARD_HOME=str(home), PANEBOARD_BOARD="bench", **extra)
    return env


class Proc:
    """A child process whose stdout lines are read with a deadline (no threads, no sleeps)."""

    def __init__(
        self, argv: Sequence[str], env: dict[str, str], *, stderr: int | None = subprocess.DEVNULL
    ) -> None:
        self.p = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=stderr, env=env)
        assert self.p.stdout is not None
        self.fd = self.p.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""

    def readline(self, timeout: float = 30.0) -> bytes:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError(f"no line from {self.p.args!r} within {timeout} s")
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError(f"{self.p.args!r} ended (exit {self.p.wait()})")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        assert self.p.stdout is not None
        self.p.stdout.close()


def listener(home: Path, agent: str, *door: str) -> Proc:
    """A running `paneboard listen --door stdout` (or *door*), started, with no rate limit;
    not yet known to be ready."""
    unlimited(home, agent)
    return Proc(
        [PY, "-m", "paneboard", "listen", "--as", agent, *(door or ("--door", "stdout"))],
        env_for(home),
    )


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of *pid* so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_ready(home: Path, agent: str, timeout: float = 60.0) -> None:
    """Block until the agent's listener has written its presence file
    (it is caught up and watching)."""
    path = home / "bench" / "panes" / f"{agent}.presence"
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"listener for {agent} not ready")
        time.sleep(0.005)
