"""`post`: the one command agents run for every message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.helpers import cli_env

_POST_AND_LIST = """
import sys
from paneboard.cli import main
code = main(["post", "--as", "alice", "--to", "bob", "hi"])
print(code, sorted({"msgspec", "typing", "anyio"} & set(sys.modules)))
"""


def test_post_on_the_file_log_imports_neither_msgspec_nor_typing(home: Path) -> None:
    """`post` builds, packs and appends the prompt with the standard library: msgspec and
    typing are about half of a cold start, paid by every message an agent sends."""
    env = cli_env(home)
    env.pop("PANEBOARD_STORE", None)  # the file log's path: NATS needs its client
    done = subprocess.run(
        [sys.executable, "-c", _POST_AND_LIST],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (0, "", "0 []") == (done.returncode, done.stderr, done.stdout.splitlines()[-1])
