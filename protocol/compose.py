"""The text an agent receives for a prompt.

Every header line starts with ``[paneboard]``; every body line starts with ``> ``,
so a body that imitates a header is still read as body. Every field of the record in a
header or command line (sender, board, id, thread, reply-to, priority) is shown as one line,
so nothing a sender writes starts a line of its own. Control and format characters
(protocol/visible.py) are shown as escapes rather than passed raw to the agent's screen
or model; the body keeps its newlines and tabs.

What paneboard checked about the sender comes in as `Provenance` (the reader's verdict on the
prompt's signature, and whether an `approved` post let it through after it was held): composing
never verifies anything itself, so every door says the same about one prompt. The clock comes in
too (*now*: "written 4 min ago"): composing reads none.

Several prompts handed over at once are one text (`coalesce`): each prompt apart, with its own
header, id and close commands, under one line saying how many. A prompt the recipient takes as a
*notice* (`notice`) is fixed text paneboard writes: its header (sender, board, priority, size,
age), what paneboard checked of the key, and the command that prints the body; no byte of the
body is in it, nor the thread's name.
"""

from __future__ import annotations

import shlex

from paneboard.protocol.posts import Prompt
from paneboard.protocol.visible import one_line, visible

__all__ = [
    "Provenance",
    "age",
    "close_commands",
    "coalesce",
    "compose",
    "notice",
    "provenance_lines",
    "read_commands",
    "size",
    "visible",
    "where_options",
]

FINGERPRINT_SHOWN = 12  # characters of the sender's fingerprint the agent is shown
APPROVED = "approved at a terminal (`paneboard approve`, `paneboard trust` or `paneboard top`)"


class Provenance:
    """What paneboard checked about a prompt: the verdict on its signature, the signing key's
    fingerprint (when signed), whether it was approved after it was held (an `approved` post of
    the recipient's, which `paneboard approve` and `top` write after a yes on a terminal), and
    whether the key is only the *first* one seen for the sender's name (neither the home's own
    agent's nor one a person pinned)."""

    __slots__ = ("approved", "fingerprint", "first", "verdict")

    def __init__(
        self,
        verdict: str,
        fingerprint: str | None = None,
        approved: bool = False,
        *,
        first: bool = False,
    ) -> None:
        self.verdict, self.fingerprint, self.approved = verdict, fingerprint, approved
        self.first = first


def provenance_lines(sender: str, provenance: Provenance) -> list[str]:
    """paneboard's own lines about who sent the prompt (each one line, fields made visible)."""
    shown = one_line(sender)
    if provenance.verdict == "verified" and provenance.fingerprint:
        key = provenance.fingerprint[:FINGERPRINT_SHOWN]
        if provenance.first:  # nothing known to check it against: say so, never "checked"
            lines = [f"first key seen for {shown} on this board, key {key}… (no person pinned it)"]
        else:
            lines = [f"paneboard checked the sender's key: {shown}, key {key}…"]
    else:
        lines = [f"paneboard could not check the sender's key: the prompt is {provenance.verdict}"]
    if provenance.approved:  # what is known: a yes on a terminal, not who typed it
        lines.append(f"held by paneboard, then {APPROVED}")
    return [f"[paneboard] {one_line(line)}" for line in lines]


def where_options(
    *, home: str, board: str, agent: str, store: tuple[tuple[str, str], ...] = ()
) -> str:
    """The options naming home, board, agent and store, each value quoted for a POSIX shell.

    *store* holds the options naming a store other than the file log (`--store URL`, …).
    """
    given = [("--home", home), ("--board", board), ("--as", agent), *store]
    return " ".join(f"{k} {shlex.quote(v)}" for k, v in given)


def close_commands(
    prompt_id: str,
    *,
    exe: str,
    home: str,
    board: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
) -> tuple[str, str]:
    """The complete ack and answer command lines for *agent* (*store*: as `where_options`)."""
    where = where_options(home=home, board=board, agent=agent, store=store)
    # `--`: whatever the agent writes as its answer is text, even a word that looks like an option
    return (
        one_line(_command(exe, "ack", prompt_id, where)),
        one_line(_command(exe, "answer", prompt_id, where) + " -- 'YOUR ANSWER'"),
    )


def _command(exe: str, verb: str, prompt_id: str, where: str) -> str:
    """`EXE VERB ID OPTIONS`, each word quoted for a POSIX shell (*where*: `where_options`)."""
    return f"{shlex.quote(exe)} {verb} {shlex.quote(prompt_id)} {where}"


def age(seconds: float) -> str:
    """How long ago a prompt was written, in words: ``written 4 min ago``."""
    s = max(0.0, seconds)
    if s < 5:
        return "written just now"
    for unit, length in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= length:
            return f"written {int(s // length)} {unit} ago"
    return f"written {int(s)} s ago"


def size(prompt: Prompt) -> str:
    """The body's size in bytes, in words: ``200 B``, ``50.0 KB``."""
    n = len(prompt.body.encode())
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} KB"


def read_commands(
    prompt_id: str,
    *,
    exe: str,
    home: str,
    board: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
) -> tuple[str, str]:
    """The command line that prints *prompt_id*'s body to *agent*, and the MCP call that does."""
    where = where_options(home=home, board=board, agent=agent, store=store)
    command = _command(exe, "read", prompt_id, where)
    return one_line(command), f'the MCP tool `read` with id "{prompt_id}"'


def compose(
    prompt: Prompt,
    *,
    exe: str,
    home: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
    provenance: Provenance | None = None,
    now: float | None = None,
) -> str:
    """The text handed to *agent*: who asked (and what paneboard checked of it), where, the
    body, and how to close it (*now*: the reader's clock, to say when it was written)."""
    details = [f"priority {prompt.priority}"]
    if now is not None:
        details.append(age(now - prompt.ts))
    if prompt.thread:
        details.append(f"thread {prompt.thread}")
    if prompt.reply_to:
        details.append(f"reply to {prompt.reply_to}")
    ack, answer = close_commands(
        prompt.id, exe=exe, home=home, board=prompt.board, agent=agent, store=store
    )
    body = "\n".join("> " + line for line in visible(prompt.body).split("\n"))
    head = f"prompt {prompt.id} from {prompt.sender} on board {prompt.board} ({', '.join(details)})"
    checked = (
        ""
        if provenance is None
        else "".join(line + "\n" for line in provenance_lines(prompt.sender, provenance))
    )
    return (
        f"[paneboard] {one_line(head)}\n"
        f"{checked}"
        f"{body}\n"
        f"[paneboard] when done, close it (the sender is waiting on this):\n"
        f"  {ack}\n"
        f"  {answer}\n"
    )


def notice(
    prompt: Prompt,
    *,
    exe: str,
    home: str,
    agent: str,
    store: tuple[tuple[str, str], ...] = (),
    provenance: Provenance | None = None,
    now: float,
) -> str:
    """The notice of *prompt* for *agent*: paneboard's own words only (sender, board, id,
    priority, size, age, what was checked of the key, how to read it), never the body's."""
    details = [f"priority {prompt.priority}", size(prompt), age(now - prompt.ts)]
    if prompt.reply_to:
        details.append(f"reply to {prompt.reply_to}")
    head = f"prompt {prompt.id} from {prompt.sender} on board {prompt.board} ({', '.join(details)})"
    checked = (
        ""
        if provenance is None
        else "".join(line + "\n" for line in provenance_lines(prompt.sender, provenance))
    )
    command, tool = read_commands(
        prompt.id, exe=exe, home=home, board=prompt.board, agent=agent, store=store
    )
    return (
        f"[paneboard] {one_line(head)}\n"
        f"{checked}"
        f"[paneboard] a notice: its body is not shown here; read it with\n"
        f"  {command}\n"
        f"  (or {tool}); it prints the body with its ack and answer commands\n"
    )


def coalesce(texts: list[str], *, notices: int = 0, more: int = 0) -> str:
    """One text of the composed *texts*, each apart (*notices* of them are notices; *more*:
    how many prompts wait beyond them); a single body is the text alone."""
    if len(texts) == 1 and not notices and not more:
        return texts[0]
    parts = [f"{len(texts)} prompt(s) for you"]
    if notices:
        parts.append(f"{notices} of them as notices (no body shown)")
    intro = f"[paneboard] {', '.join(parts)}; each has its own id and commands, urgent first:"
    after = (
        "paneboard sends their notice once you read one of these"
        if notices
        else "they come in the next text"
    )
    tail = [f"[paneboard] {more} more wait; {after}"] if more else []
    return "\n".join([intro, *texts, *tail]) + ("\n" if tail else "")
