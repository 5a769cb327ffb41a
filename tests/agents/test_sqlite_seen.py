"""`seen` from an agent's SQLite database (agents/sqlite_seen.py), with Kilo Code's and Hermes
Agent's queries, on real database files that another process writes and locks."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from paneboard.agents.hermes import QUERY as HERMES_QUERY
from paneboard.agents.kilo import KILO, database
from paneboard.agents.kilo import QUERY as KILO_QUERY
from paneboard.agents.sqlite_seen import DbSighting, RowReader, user_text
from paneboard.state.panes.transcript import Mark
from testing.helpers import post, run_cli
from tests.agents.scriptdoors import PluginStandIn, listen

HEADER = "[paneboard] prompt {} from alice on board test (priority normal)\n> hello"
A, B = "01abcdefghjkmnpqrstvwxyz01", "01abcdefghjkmnpqrstvwxyz02"
KILO_SCHEMA = """
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, data text NOT NULL);
"""
HERMES_SCHEMA = """
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
  role TEXT NOT NULL, content TEXT);
"""


def _db(path: Path, schema: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    return db


def _kilo_message(db: sqlite3.Connection, mid: str, role: str, parent: str = "") -> None:
    data = {"role": role, **({"parentID": parent} if parent else {})}
    db.execute("INSERT INTO message VALUES (?, 'ses_1', ?)", (mid, json.dumps(data)))


def _kilo_text(db: sqlite3.Connection, mid: str, text: str) -> None:
    data = json.dumps({"type": "text", "text": text})
    db.execute("INSERT INTO part VALUES (?, ?, ?)", (f"prt_{mid}", mid, data))


def _ids(reader: RowReader) -> list[str]:
    return [t.split()[2] for r in reader.read_new() for t in user_text(r)]


def test_hermes_user_rows_are_read_once_from_the_mark_on(tmp_path: Path) -> None:
    """User messages holding a header; not the assistant's, not one without a header; a
    reader from the saved mark (the last row found) reads only what came after it."""
    path = tmp_path / "state.db"
    db = _db(path, HERMES_SCHEMA)
    rows = [("user", HEADER.format(A)), ("assistant", HEADER.format(B)), ("user", "hi")]
    db.executemany("INSERT INTO messages VALUES (NULL, 's', ?, ?)", rows)
    reader = RowReader(path, HERMES_QUERY)
    assert ([A], []) == (_ids(reader), _ids(reader))
    mark = reader.mark
    db.execute("INSERT INTO messages VALUES (NULL, 's', 'user', ?)", (HEADER.format(B),))
    assert (Mark(str(path), os.stat(path).st_ino, 1), [B]) == (
        mark,
        _ids(RowReader(path, HERMES_QUERY, mark)),
    )


def test_a_kilo_prompt_queued_behind_a_running_turn_is_seen_once_its_turn_starts(
    tmp_path: Path,
) -> None:
    """A user message with no assistant message after it is queued, not seen, and holds the
    mark; it is seen once an assistant message's parent is it or a later user message."""
    path = tmp_path / "kilo.db"
    db = _db(path, KILO_SCHEMA)
    _kilo_message(db, "msg_01", "user")
    _kilo_text(db, "msg_01", HEADER.format(A))
    _kilo_message(db, "msg_02", "assistant", parent="msg_01")  # the running turn
    _kilo_message(db, "msg_03", "user")
    _kilo_text(db, "msg_03", HEADER.format(B))
    reader = RowReader(path, KILO_QUERY)
    assert [A] == _ids(reader)
    assert [] == _ids(reader)
    _kilo_message(db, "msg_04", "assistant", parent="msg_03")
    assert [B] == _ids(reader)
    assert [] == _ids(reader)


def test_a_locked_or_missing_database_gives_nothing_until_it_can_be_read(tmp_path: Path) -> None:
    """No file: nothing. A file another process holds an exclusive lock on (rollback journal):
    nothing, within the busy wait, and the rows once it lets go. Not a database: nothing."""
    path = tmp_path / "state.db"
    reader = RowReader(path, HERMES_QUERY)
    assert [] == _ids(reader)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(HERMES_SCHEMA)
    db.execute("INSERT INTO messages VALUES (NULL, 's', 'user', ?)", (HEADER.format(A),))
    db.close()
    hold = (
        "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "db.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and "locked\n" == holder.stdout.readline()
        assert [] == _ids(reader)
    finally:
        holder.communicate("")
    assert [A] == _ids(reader)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 100)
    assert [] == _ids(RowReader(junk, HERMES_QUERY))


def test_reading_writes_nothing_and_a_replaced_database_is_read_from_its_start(
    tmp_path: Path,
) -> None:
    """The reads leave the database's bytes as they were; a file put in its place (another
    inode) is read from its first row, the mark's row number notwithstanding."""
    path = tmp_path / "state.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(HERMES_SCHEMA)
    db.executemany(
        "INSERT INTO messages VALUES (NULL, 's', 'user', ?)", [(HEADER.format(A),), ("hi",)]
    )
    db.close()
    before = path.read_bytes()
    reader = RowReader(path, HERMES_QUERY)
    assert [A] == _ids(reader)
    assert before == path.read_bytes()
    fresh = tmp_path / "fresh.db"
    other = sqlite3.connect(fresh, isolation_level=None)
    other.executescript(HERMES_SCHEMA)
    other.execute("INSERT INTO messages VALUES (NULL, 's', 'user', ?)", (HEADER.format(B),))
    other.close()
    os.replace(fresh, path)
    assert [B] == _ids(reader)


@pytest.mark.anyio
async def test_the_sighting_wakes_on_a_commit_to_the_wal(tmp_path: Path) -> None:
    """In WAL mode a commit writes only the ``-wal`` beside the database: the watch wakes, and
    the sighting finds the prompt."""
    path = tmp_path / "state.db"
    db = _db(path, HERMES_SCHEMA)
    sighting = DbSighting(tmp_path / "mark", "hermes-db", path, user_text, HERMES_QUERY)
    assert [] == sighting.read_new()
    watch = sighting.watch()
    try:
        with anyio.fail_after(5):
            db.execute("INSERT INTO messages VALUES (NULL, 's', 'user', ?)", (HEADER.format(A),))
            await watch.wait_changed()
        assert [A] == sighting.read_new()
        assert sighting.reader is not None
        assert Mark(str(path), os.stat(path).st_ino, 1) == sighting.reader.mark
    finally:
        watch.close()
        sighting.close()


def test_kilos_session_start_gives_its_listener_the_database() -> None:
    """`$KILO_DB` (absolute, or in Kilo Code's data folder), else the data folder's
    ``kilo.db``; an in-memory database: none to read."""
    socket = {"PANEBOARD_KILO_SOCKET": "/run/k.sock"}
    args, _ = KILO.listen_args({}, {**socket, "HOME": "/h"}, 7)
    assert ["--door", "kilo", "--socket", "/run/k.sock", "--parent-pid", "7"] == args[:6]
    assert ["--transcript", "/h/.local/share/kilo/kilo.db"] == args[6:]
    assert Path("/x/kilo/k.db") == database({"XDG_DATA_HOME": "/x", "KILO_DB": "k.db"})
    assert Path("/elsewhere/k.db") == database({"HOME": "/h", "KILO_DB": "/elsewhere/k.db"})
    assert database({"HOME": "/h", "KILO_DB": ":memory:"}) is None
    args, _ = KILO.listen_args({}, {**socket, "HOME": "/h", "KILO_DB": ":memory:"}, 7)
    assert "--transcript" not in args


def test_a_kilo_listener_posts_seen_once_the_database_shows_the_turn(
    home: Path, tmp_path: Path
) -> None:
    """`listen --door kilo --transcript DB`: the plugin (a stand-in) takes the prompt; the
    database, written by another connection as Kilo Code writes it, shows its user message and
    then the turn's assistant message: `seen`, from `kilo-db`."""
    path = tmp_path / "kilo.db"
    db = _db(path, KILO_SCHEMA)
    plugin = PluginStandIn(tmp_path, os.getpid(), {"ok": True, "session": "ses_1"})
    try:
        with listen(home, "kilo", plugin.socket_path, "--transcript", str(path)) as bob:
            assert f"paneboard listen bob@test: following {path} for seen" in bob.stderr_lines
            prompt = post(home, "--to", "bob", "review fetch.py")
            line = plugin.lines.get(timeout=10)
            bob.wait_err(f"delivered {prompt} from alice via kilo")
            _kilo_message(db, "msg_01", "user")
            _kilo_text(db, "msg_01", str(line["text"]))
            _kilo_message(db, "msg_02", "assistant", parent="msg_01")
            bob.wait_err(f"seen {prompt} in kilo-db")
    finally:
        plugin.close()
    shown = json.loads(run_cli(home, "status", prompt, "--json").stdout)["recipients"]["bob"]
    assert ("seen", "kilo", "kilo-db") == (shown["stage"], shown["door"], shown["source"])
