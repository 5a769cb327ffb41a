"""What one home makes of the signatures on one board: pins taken in log order, verdicts
asked only when needed.

**Pins.** A home's own agents' keys (``HOME/.keys``) are its pins for those names on every
board. Any other name is pinned from its first post in log order whose signature checks:
every reader hands `note` each record it reads, in log order, and the first such post of a
name not pinned yet pins its key (state/trust/keys.py ``pin_first``). Readers of one home racing on
a new name thus pin the same key, the first in the log, whichever post each goes on to check.
A name's pin costs one signature check, once per home (the pins file keeps it); a pinned name
costs a set lookup per record.

**Verdicts.** A reader pairs each post it reads with a `LazyVerdict` (state/fold.py): the verdict is
computed the first time the fold asks for it, from the exact bytes as stored, against the
pin. A cold catch-up thus verifies the first signed post of each name it has no pin for, and
the posts that move the prompts it keeps: the trailer of the rest is not even looked at.

The pins file and the keys folder are read again when they change (their stat stamps), so a
long-running reader follows a person's `trust` and a key made after it started.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from paneboard.protocol.compose import Provenance
from paneboard.protocol.posts import Post, Prompt
from paneboard.protocol.signing import (
    TRAILER,
    UNSIGNED,
    VERIFIED,
    fingerprint,
    signed_part,
    verdict,
)
from paneboard.state.trust.keys import KEYS_DIR, Pin, Pins, open_key, own_keys, stamp, verify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, TypeAlias

    from paneboard.protocol.signing import Verdict
    from paneboard.state.abc import Log
    from paneboard.state.fold import LazyVerdict

    PinnedBy: TypeAlias = Literal["own", "trusted", "first"]

__all__ = ["Verdicts", "checked", "lookalike_key", "read_checked"]

_KEY_NAME = 0xA3  # the trailer's first byte: msgpack's 3-character string, ``key``
_LOOKALIKE = str.maketrans("i10", "llo")  # after lower(): I, l and 1 alike; 0 and O alike


def lookalike_key(name: str) -> str:
    """What two names that differ only by case, ``l``/``I``/``1``, ``0``/``O`` or trailing
    punctuation have in common."""
    return name.lower().translate(_LOOKALIKE).rstrip("._-")


class Verdicts:
    """The verdicts of one home on one board's posts, and its pins (see the module's docstring).

    *own*, the agent the reader acts as, gets its key made now if it has none: from then on
    its name is this home's on every board.
    """

    def __init__(self, board_dir: Path, own: str | None = None) -> None:
        self.home = board_dir.parent
        self.pins = Pins(board_dir)
        self.board = board_dir.name  # the board read: what each signature must name
        if own is not None:
            open_key(self.home, own)
        self.verified = 0  # how many signatures were checked: what laziness saves, counted
        self.taken: list[tuple[str, str]] = []  # (agent, fingerprint) this reader pinned
        self.settled: set[str] = set()  # names with a pin: `note` has nothing to do for them
        self._stamp: tuple[tuple[int, ...], ...] | None = None
        self._own: dict[str, str] = {}
        self._pins: dict[str, Pin] = {}

    def _fresh(self) -> None:
        """Read the own keys and the pins again if either changed since they were read."""
        now = (stamp(self.pins.path), stamp(self.home / KEYS_DIR))
        if now == self._stamp:
            return
        self._own, self._pins = own_keys(self.home), self.pins.entries()
        self._stamp = now
        self.settled.clear()
        self.settled.update(self._own, self._pins)

    def pinned(self) -> dict[str, str]:
        """agent -> the fingerprint this home pins for it on this board (an own agent's key over
        any pin of the file)."""
        self._fresh()
        return {a: p.fingerprint for a, p in self._pins.items()} | self._own

    def pin_of(self, sender: str) -> str | None:
        """The fingerprint pinned for *sender*, if any."""
        self._fresh()
        own = self._own.get(sender)
        if own is not None:
            return own
        pin = self._pins.get(sender)
        return None if pin is None else pin.fingerprint

    def pinned_by(self, sender: str) -> PinnedBy | None:
        """Who pinned *sender*'s key: this home (``own``), a person, or the board (``first``:
        its first signed post in log order)."""
        self._fresh()
        if sender in self._own:
            return "own"
        pin = self._pins.get(sender)
        if pin is None:
            return None
        return "trusted" if pin.trusted else "first"

    def note(self, sender: str, payload: bytes | memoryview) -> None:
        """Read the record *payload* of *sender*, next in log order: it pins *sender*'s key if
        it is the first of theirs whose signature checks."""
        if sender in self.settled:
            return
        if self._stamp is None:  # a record costs no stat: `verdict` reads changes, as it is asked
            self._fresh()
            if sender in self.settled:
                return
        # Not signed (an old log, a raw writer): told apart before `signed_part` copies it.
        if len(payload) <= TRAILER or payload[-TRAILER] != _KEY_NAME:
            return
        part = signed_part(payload)
        if part is None:
            return
        self.verified += 1
        if not verify(part.key, part.sig, part.message(self.board)):
            return
        seen = fingerprint(part.key)
        kept, new = self.pins.pin_new(sender, seen)  # a racing reader of the log pins the same
        self._pins.setdefault(sender, Pin(kept))  # the file is read again when next asked
        self.settled.add(sender)
        if new:
            self.taken.append((sender, seen))

    def verdict(self, sender: str, payload: bytes | memoryview) -> Verdict:
        """Verified, unsigned or forged, against *sender*'s pin."""
        self.note(sender, payload)  # a reader of this one post alone: it may be the first
        pinned = self.pin_of(sender)
        self.verified += 1
        found = verdict(payload, pinned, verify, self.board)
        # No pin: no post of the name so far has a signature that checks, this one included.
        return "forged" if pinned is None and found == VERIFIED else found

    def conflict(self, sender: str, payload: bytes | memoryview) -> str | None:
        """The fingerprint pinned for *sender* when *payload* is signed with another key (what
        a held prompt's reason names); None otherwise."""
        pinned = self.pin_of(sender)
        part = signed_part(payload)
        if pinned is None or part is None or fingerprint(part.key) == pinned:
            return None
        return pinned

    def lookalike(self, sender: str) -> str | None:
        """The name *sender* looks like, when *sender* is neither this home's own agent nor
        pinned by a person: an own agent, a name a person pinned, or one pinned earlier (in
        log order) that differs from it only by case, ``l``/``I``/``1``, ``0``/``O`` or
        trailing punctuation."""
        if self.pinned_by(sender) in ("own", "trusted"):
            return None
        names, before = list(self._own), True
        for name, pin in self._pins.items():
            if name == sender:
                before = False
            elif pin.trusted or before:
                names.append(name)
        key = lookalike_key(sender)
        return next((n for n in names if n != sender and lookalike_key(n) == key), None)

    def provenance(
        self,
        prompt: Prompt,
        payload: bytes | memoryview | None,
        *,
        verdict: Verdict | None = None,
        approved: bool = False,
    ) -> Provenance:
        """What a door tells the agent about *prompt* (stored as *payload*): the verdict (given
        as *verdict* when the reader has it already; unsigned with no payload), the key's
        fingerprint when verified, with ``first`` when the key is only the first one seen for
        the name (this home does not own it, and no person pinned it), and whether a person
        approved it."""
        if verdict is None:
            verdict = UNSIGNED if payload is None else self.verdict(prompt.sender, payload)
        part = signed_part(payload) if verdict == VERIFIED and payload is not None else None
        if part is None:
            return Provenance(verdict, None, approved)
        key = fingerprint(part.key)
        self._fresh()
        confirmed = key in self._own.values() or any(
            p.trusted and p.fingerprint == key for p in self._pins.values()
        )
        return Provenance(verdict, key, approved, first=not confirmed)

    def lazy(self, post: Post, payload: bytes | memoryview) -> LazyVerdict:
        """The verdict on *post* (stored as *payload*), computed when first asked and kept."""
        found: list[Verdict] = []

        def lazy() -> Verdict:
            if not found:
                found.append(self.verdict(post.sender, payload))
            return found[0]

        return lazy


def checked(
    verdicts: Verdicts, records: Iterable[list[tuple[int, Post, bytes]]]
) -> Iterator[tuple[int, Post, LazyVerdict]]:
    """Each (position, post, payload) of *records* as (position, post, check), each record
    noted in log order (the pins)."""
    settled = verdicts.settled
    for batch in records:
        for position, post, payload in batch:
            if post.sender not in settled:
                verdicts.note(post.sender, payload)
            yield position, post, verdicts.lazy(post, payload)


def read_checked(log: Log, verdicts: Verdicts) -> list[tuple[int, Post, LazyVerdict]]:
    """Every post of *log* with its check."""
    follower = log.follow(0)
    try:
        return list(checked(verdicts, follower.records()))
    finally:
        follower.close()
