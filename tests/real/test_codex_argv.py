"""The real `codex queue` takes its message only as an argument, as docs/trust.md says.

The codex-queue door therefore puts the prompt's text in codex's command line. If a Codex
release reads the message from stdin or a file, this fails: the door should use that.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from testing.clients import offline_codex_thread


def _queued(codex_home: Path) -> list[str]:
    with sqlite3.connect(codex_home / "queue_1.sqlite") as db:
        rows = db.execute("SELECT payload_json FROM queued_items ORDER BY queue_order")
        payloads = [json.loads(payload) for (payload,) in rows]
    return [p["UserInput"]["content"][0]["text"] for p in payloads]


def test_codex_queue_reads_no_message_from_stdin_or_a_file(
    tmp_path: Path, clients_bin: Path
) -> None:
    """`--message -` and `--message @FILE` are queued as those very words."""
    codex_home = tmp_path / "codex"
    thread, _ = offline_codex_thread(codex_home, tmp_path)
    message = tmp_path / "message"
    message.write_text("from a file")
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    for word, stdin in (("-", b"from stdin"), (f"@{message}", b"")):
        done = subprocess.run(
            [str(clients_bin / "codex"), "queue", "--thread", thread, "--message", word],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert 0 == done.returncode, done.stderr[-500:]
    assert ["-", f"@{message}"] == _queued(codex_home)
