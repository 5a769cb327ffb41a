"""The ways agents message each other today, rebuilt from their mechanisms for side-by-side runs.

- SQLite mailbox (agmsg's way): `send` is a shell script calling the sqlite3 CLI to insert
  a row into a WAL database; the receiver is a shell loop that polls for unread rows every
  5 s (agmsg's monitor default) or 1 s (claude-peers', claude-squad's) and marks them read.
- Maildir (agent-inbox's way): write into tmp/, rename into new/; the receiver polls new/
  every second and moves what it read into cur/.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from bench.harness import Proc

SQLITE_SEND = """#!/bin/bash
# send RECIPIENT BODY
exec sqlite3 "$DB" ".timeout 5000" "INSERT INTO messages(recipient, body, created) \
VALUES('$1', '${2//\\'/\\'\\'}', julianday('now'));"
"""
SQLITE_POLL = """#!/bin/bash
# the receiver: every INTERVAL seconds, print unread rows for RECIPIENT and mark them read
while true; do
  sqlite3 -separator ' ' "$DB" ".timeout 5000" "BEGIN IMMEDIATE; \
SELECT id, body FROM messages WHERE recipient='$1' AND read=0 ORDER BY id; \
UPDATE messages SET read=1 WHERE recipient='$1' AND read=0; COMMIT;"
  sleep "$INTERVAL"
done
"""
MAILDIR_SEND = """#!/bin/bash
# send RECIPIENT BODY: write into tmp/, rename into new/
f=$(mktemp "$ROOT/$1/tmp/msg.XXXXXX")
printf -- '---\\nfrom: bench\\nto: %s\\n---\\n%s\\n' "$1" "$2" > "$f"
mv "$f" "$ROOT/$1/new/$(basename "$f").md"
"""
MAILDIR_POLL = """#!/bin/bash
# the receiver: every second, print each new message's body and move it into cur/
shopt -s nullglob
while true; do
  for f in "$ROOT/$1"/new/*.md; do tail -n 1 "$f"; mv "$f" "$ROOT/$1/cur/"; done
  sleep 1
done
"""


class SqliteMailbox:
    def __init__(self, folder: Path, interval: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.db = folder / "mail.db"
        self.interval = interval
        with sqlite3.connect(self.db) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS messages(id INTEGER PRIMARY KEY, recipient TEXT, "
                "body TEXT, read INTEGER DEFAULT 0, created REAL)"
            )
        self.send_script = _script(folder / "send.sh", SQLITE_SEND)
        self.poll_script = _script(folder / "poll.sh", SQLITE_POLL)
        self.env = {"DB": str(self.db), "INTERVAL": str(interval), "PATH": "/usr/bin:/bin"}

    def send(self, recipient: str, body: str) -> None:
        subprocess.run([str(self.send_script), recipient, body], env=self.env, check=True)

    def receiver(self, recipient: str) -> Proc:
        return Proc([str(self.poll_script), recipient], self.env)

    def fill(self, n: int, unread_for: str, unread: int) -> None:
        """A history of *n* rows, all read but *unread* for *unread_for*."""
        every = max(1, n // unread)

        def row(i: int) -> tuple[str, str, int]:
            mine = i % every == 0
            return (unread_for if mine else f"agent{i % 20}", f"message {i}", 0 if mine else 1)

        with sqlite3.connect(self.db) as db:
            db.executemany(
                "INSERT INTO messages(recipient, body, read, created) VALUES(?, ?, ?, 0)",
                map(row, range(n)),
            )

    def poll_once(self, recipient: str) -> None:
        one = SQLITE_POLL.split("\n")[3].strip()
        subprocess.run(
            ["bash", "-c", one, "poll", recipient],
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )


class Maildir:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.root = folder / "inbox"
        self.send_script = _script(folder / "send.sh", MAILDIR_SEND)
        self.poll_script = _script(folder / "poll.sh", MAILDIR_POLL)
        self.env = {"ROOT": str(self.root), "PATH": "/usr/bin:/bin"}
        self.interval = 1.0

    def box(self, recipient: str) -> Path:
        for sub in ("tmp", "new", "cur"):
            (self.root / recipient / sub).mkdir(parents=True, exist_ok=True)
        return self.root / recipient

    def send(self, recipient: str, body: str) -> None:
        subprocess.run([str(self.send_script), recipient, body], env=self.env, check=True)

    def receiver(self, recipient: str) -> Proc:
        self.box(recipient)
        return Proc([str(self.poll_script), recipient], self.env)


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o700)
    return path
