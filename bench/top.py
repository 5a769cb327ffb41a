"""`paneboard top` under load, in a real pseudo-terminal.

A board of 10,000 open prompts; another process posts every 10 ms (new prompts, receipts,
acks, in turn). A key is answered when the screen it asks for is drawn: enter opens the
selected prompt's thread (its title appears in top's output), `q` goes back (the open
prompts' title appears). Then, with nothing posted, the CPU top uses while idle.
"""

from __future__ import annotations

import os
import pty
import random
import signal
import struct
import subprocess
import termios
import threading
import time
from fcntl import ioctl
from pathlib import Path
from typing import Any

from bench.harness import PY, cpu_seconds, env_for, peak_rss_mb, summary
from paneboard.protocol.ids import new_id
from paneboard.protocol.posts import Ack, Delivered, Post, Prompt
from paneboard.state.filelog.log import append_posts, read_posts

AGENTS = ("ann", "ben", "cal", "dee", "eve")
PRIORITIES = ("low", "normal", "normal", "normal", "high", "urgent")


def _id(rng: random.Random) -> str:
    return new_id(time.time(), rng.randbytes(10))


def _prompt(rng: random.Random, n: int, ago: float = 0.0) -> Prompt:
    to = (rng.choice(AGENTS),)
    return Prompt(
        id=_id(rng),
        board="bench",
        sender="bench",
        ts=time.time() - ago,
        to=to,
        body=f"prompt {n}: please look at module {rng.randrange(1000)}",
        priority=rng.choice(PRIORITIES),  # type: ignore[arg-type]  # one of the four
    )


def build(home: Path, n: int) -> None:
    """A board of *n* open prompts posted an hour ago, appended in batches."""
    rng = random.Random(1)
    log = home / "bench" / "log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for start in range(0, n, 1000):
        append_posts(log, [_prompt(rng, i, 3600) for i in range(start, min(n, start + 1000))])


def post_every(home: str, interval: float, seconds: float) -> None:
    """Run in another process: one post every *interval* s for *seconds* s, cycling kinds."""
    log = Path(home) / "bench" / "log"
    rng = random.Random(2)
    open_ = [p for _, p in read_posts(log) if isinstance(p, Prompt)]
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        post: Post
        head = {"id": _id(rng), "board": "bench", "ts": time.time()}
        if n % 3 == 0 or not open_:
            post = _prompt(rng, 10**6 + n)
            open_.append(post)
        elif n % 3 == 1:
            p = rng.choice(open_)
            post = Delivered(**head, sender=p.to[0], prompt_id=p.id, door="stdout")
        else:
            p = open_.pop(rng.randrange(len(open_)))
            post = Ack(**head, sender=p.to[0], prompt_id=p.id)
        append_posts(log, [post])
        n += 1
        time.sleep(interval)


class Terminal:
    """`paneboard top` on a pseudo-terminal of 140x45; its output is read as it comes."""

    def __init__(self, home: Path) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: top, on the terminal
            argv = [PY, "-m", "paneboard", "top", "--as", "bench"]
            os.execve(PY, argv, env_for(home, TERM="xterm-256color"))
        self.pid, self.fd = pid, fd
        ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 140, 0, 0))
        self.out = bytearray()
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                chunk = b""
            with self.cond:
                self.out += chunk
                self.cond.notify_all()
            if not chunk:
                return

    def mark(self) -> int:
        with self.cond:
            return len(self.out)

    def wait_for(self, text: bytes, start: int, timeout: float = 60.0) -> float:
        """Block until *text* appears in the output after *start*; return the time it did."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while self.out.find(text, max(0, start - len(text))) < 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"top never drew {text!r}")
                self.cond.wait(left)
            return time.perf_counter()

    def key(self, data: bytes, answer: bytes) -> float:
        """Milliseconds from writing *data* to the terminal until *answer* is drawn."""
        start = self.mark()
        t0 = time.perf_counter()
        os.write(self.fd, data)
        return (self.wait_for(answer, start) - t0) * 1000

    def stop(self) -> int:
        os.kill(self.pid, signal.SIGTERM)
        _, status = os.waitpid(self.pid, 0)
        self.reader.join(timeout=5)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def top(home: Path, quick: bool) -> dict[str, Any]:
    n, samples, idle_s = 10_000, (20 if quick else 100), (3.0 if quick else 10.0)
    build(home, n)
    t0 = time.perf_counter()
    term = Terminal(home)
    try:
        term.wait_for(f"open prompts {n}".encode(), 0)
        shown_ms = (time.perf_counter() - t0) * 1000
        code = f"from bench.top import post_every; post_every({str(home)!r}, 0.01, 600)"
        poster = subprocess.Popen([PY, "-c", code], env=env_for(home))
        rng = random.Random(3)
        opened, back = [], []
        cpu0, w0 = cpu_seconds(term.pid), time.monotonic()
        try:
            time.sleep(1.0)  # the posts are flowing before the first key
            for _ in range(samples):
                opened.append(term.key(b"\r", b"thread of prompt"))
                time.sleep(rng.uniform(0.03, 0.12))
                back.append(term.key(b"q", b"open prompts"))
                time.sleep(rng.uniform(0.03, 0.12))
            busy = (cpu_seconds(term.pid) - cpu0) / (time.monotonic() - w0) * 100
        finally:
            poster.terminate()
            poster.wait()
        time.sleep(1.0)  # the last posts drawn
        cpu1 = cpu_seconds(term.pid)
        time.sleep(idle_s)
        idle = (cpu_seconds(term.pid) - cpu1) / idle_s * 100
        rss = peak_rss_mb(term.pid)
    finally:
        exit_code = term.stop()
    keys = summary(opened + back)
    return {
        "load_average_1m": os.getloadavg()[0],  # the machine's other work, for reading tails
        "open_prompts": n,
        "post_interval_ms": 10,
        "first_screen_ms": shown_ms,
        "key_ms": keys,
        "open_thread_ms": summary(opened),
        "back_ms": summary(back),
        "samples_ms": opened + back,
        "cpu_under_load_percent": busy,
        "idle_seconds": idle_s,
        "idle_core_percent": idle,
        "peak_rss_mb": rss,
        "exit_code_on_sigterm": exit_code,
    }
