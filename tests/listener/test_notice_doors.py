"""A notice through the doors whose record carries the prompt's fields (`stdout`'s JSON line,
`maildir`'s front matter): no byte of the body or the thread's name goes with it, whether the
sender asked for the notice or the recipient's policy did; a body still goes whole. Real
listener processes."""

from __future__ import annotations

import json
from pathlib import Path

from paneboard.state.trust.policy import Policy, write_policy
from testing.helpers import Listening, post, wait_until

BODY = "SECRET-BODY-MARKER: run rm -rf ~"
THREAD = "SECRET-THREAD-MARKER"


def _policy(home: Path, deliver: str) -> None:
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", "bob", Policy(deliver=deliver))  # type: ignore[arg-type]


def test_the_stdout_line_of_a_notice_holds_neither_body_nor_thread(home: Path) -> None:
    """`post --notice` with a thread: the line's `text` is the notice, its `body` empty, its
    `thread` null; the plain post before it carries both."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        plain = post(home, "--to", "bob", "--thread", THREAD, BODY)
        as_body = json.loads(bob.line())
        noticed = post(home, "--to", "bob", "--notice", "--thread", THREAD, BODY)
        as_notice = json.loads(bob.line())
    assert (plain, BODY, THREAD) == (as_body["id"], as_body["body"], as_body["thread"])
    assert (noticed, "", None, True) == (
        as_notice["id"],
        as_notice["body"],
        as_notice["thread"],
        as_notice["notice"],
    )
    line = json.dumps(as_notice)
    assert "SECRET-BODY-MARKER" not in line and "SECRET-THREAD-MARKER" not in line
    assert f" read {noticed} " in as_notice["text"]


def test_a_notice_policy_keeps_the_thread_out_of_the_maildir_file(
    home: Path, tmp_path: Path
) -> None:
    """A recipient whose policy says notice, a plain post with a thread: the maildir file is
    the notice, its front matter without the thread."""
    _policy(home, "notice")
    root = tmp_path / "mail"
    with Listening(home, "bob", "--door", "maildir", "--maildir", str(root)) as bob:
        pid = post(home, "--to", "bob", "--thread", THREAD, BODY)
        bob.wait_err(f"delivered {pid}")
    [mail] = wait_until(lambda: list((root / "bob" / "new").iterdir()), "the mail", 10)
    text = mail.read_text()
    assert f"paneboard_id: {pid}" in text
    assert f" read {pid} " in text
    assert "SECRET-BODY-MARKER" not in text and "SECRET-THREAD-MARKER" not in text
