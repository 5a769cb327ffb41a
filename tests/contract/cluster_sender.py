"""One sender of the leader-loss test: `python -m tests.contract.cluster_sender N ARG…`.

Runs ``paneboard post ARG… "SENDER I"`` N times in a row, each a process of its own, forked
from this one after paneboard and nats-py are imported (so a post costs its own work, not
the interpreter's start-up, and a thousand of them fit in a test), and prints one JSON line
per post as it ends: ``{"i", "rc", "out", "err", "seconds"}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

import nats.js  # noqa: F401  # imported once here, by every forked post

import paneboard.state.nats.store  # noqa: F401
from paneboard.cli import main


def _read(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def post(argv: list[str]) -> tuple[int, str, str]:
    """Run `paneboard ARGV` in a forked process: its exit code, stdout and stderr."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the post's own process
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        code = 1
        try:
            code = main(argv)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(out_w)
    os.close(err_w)
    out, err = _read(out_r), _read(err_r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out, err


def run(count: int, args: list[str]) -> None:
    sender = args[args.index("--as") + 1]
    for i in range(count):
        start = time.monotonic()
        rc, out, err = post(["post", *args, f"{sender} {i}"])
        seconds = time.monotonic() - start
        line = {"i": i, "rc": rc, "out": out, "err": err, "seconds": seconds}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), sys.argv[2:])
