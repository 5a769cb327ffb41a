"""The text an agent receives for a prompt.

Every header line starts with ``[paneboard]``; every body line starts with ``> ``,
so a body that imitates a header is still read as body. Control characters other
than newline and tab, and Unicode's bidirectional overrides, are shown as escapes
rather than passed raw to the agent's screen or model.
"""

from __future__ import annotations

import shlex

from paneboard.protocol.posts import Prompt

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))


def visible(text: str) -> str:
    """*text* with control characters (but newline and tab) made visible as escapes."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t" or (code >= 0x20 and not 0x7F <= code <= 0x9F and code not in _BIDI):
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def close_commands(
    prompt_id: str,
    *,
    exe: str,
    home: str,
    board: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
) -> tuple[str, str]:
    """The complete ack and answer command lines for *agent*.

    *store* holds the options naming a store other than the file log (`--store URL`, …).
    """
    given = [("--home", home), ("--board", board), ("--as", agent), *store]
    common = " ".join([shlex.quote(prompt_id), *(f"{k} {shlex.quote(v)}" for k, v in given)])
    exe_q = shlex.quote(exe)
    return f"{exe_q} ack {common}", f"{exe_q} answer {common} 'YOUR ANSWER'"


def compose(
    prompt: Prompt,
    *,
    exe: str,
    home: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
) -> str:
    """The text handed to *agent*: who asked, where, the body, and how to close it."""
    details = [f"priority {prompt.priority}"]
    if prompt.thread:
        details.append(f"thread {visible(prompt.thread)}")
    if prompt.reply_to:
        details.append(f"reply to {prompt.reply_to}")
    ack, answer = close_commands(
        prompt.id, exe=exe, home=home, board=prompt.board, agent=agent, store=store
    )
    body = "\n".join("> " + line for line in visible(prompt.body).split("\n"))
    return (
        f"[paneboard] prompt {prompt.id} from {prompt.sender} on board {prompt.board} "
        f"({', '.join(details)})\n"
        f"{body}\n"
        f"[paneboard] when done, close it (the sender is waiting on this):\n"
        f"  {ack}\n"
        f"  {answer}\n"
    )
