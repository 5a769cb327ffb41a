"""What one home makes of the signatures on one board: verdicts, asked only when needed.

A reader pairs each post it reads with a `Check` (state/fold.py): the verdict is computed the
first time the fold asks for it, from the exact bytes as stored, against the home's pins
(state/keys.py). A cold catch-up thus verifies the posts that move the prompts it keeps, and
recognises nothing else: the trailer is not even looked at for the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from paneboard.protocol.compose import Provenance
from paneboard.protocol.posts import Post, Prompt
from paneboard.protocol.signing import FORGED, VERIFIED, fingerprint, signed_part, verdict
from paneboard.state.keys import Pins, verify

TYPE_CHECKING = False
if TYPE_CHECKING:
    from paneboard.protocol.signing import Verdict
    from paneboard.state.abc import Log
    from paneboard.state.fold import Check

__all__ = ["Verdicts", "checked", "read_checked"]


class Verdicts:
    """The verdicts of one home on one board's posts, pinning each agent's first key."""

    def __init__(self, board_dir: Path) -> None:
        self.pins = Pins(board_dir)
        self.board = board_dir.name  # the board read: what each signature must name
        self._pinned: dict[str, str] | None = None
        self.verified = 0  # how many signatures were checked: what laziness saves, counted

    def pinned(self) -> dict[str, str]:
        """agent -> the fingerprint this home pinned on this board (read once)."""
        if self._pinned is None:
            self._pinned = self.pins.read()
        return self._pinned

    def of(self, sender: str, payload: bytes | memoryview) -> Verdict:
        """Verified, unsigned or forged; the first verified key of an agent is pinned."""
        pinned = self.pinned().get(sender)
        self.verified += 1
        result = verdict(payload, pinned, verify, self.board)
        if result != VERIFIED or pinned is not None:
            return result
        part = signed_part(payload)
        assert part is not None  # a verified post is signed
        seen = fingerprint(part.key)
        kept = self.pins.pin_first(sender, seen)  # another process may have pinned first
        self.pinned()[sender] = kept
        return VERIFIED if kept == seen else FORGED

    def conflict(self, sender: str, payload: bytes | memoryview) -> str | None:
        """The fingerprint pinned for *sender* when *payload* is signed with another key (what
        a held prompt's reason names); None otherwise."""
        pinned = self.pinned().get(sender)
        part = signed_part(payload)
        if pinned is None or part is None or fingerprint(part.key) == pinned:
            return None
        return pinned

    def provenance(
        self, prompt: Prompt, payload: bytes | memoryview, *, approved: bool = False
    ) -> Provenance:
        """What a door tells the agent about *prompt* (stored as *payload*): the verdict, the
        key's fingerprint when verified, and whether a person approved it."""
        result = self.of(prompt.sender, payload)
        part = signed_part(payload) if result == VERIFIED else None
        return Provenance(result, None if part is None else fingerprint(part.key), approved)

    def told(self, result: Verdict, payload: bytes | memoryview | None) -> Provenance:
        """The provenance of a prompt stored as *payload*, whose verdict is *result*."""
        part = signed_part(payload) if result == VERIFIED and payload is not None else None
        return Provenance(result, None if part is None else fingerprint(part.key))

    def check(self, post: Post, payload: bytes | memoryview) -> Check:
        """The verdict on *post* (stored as *payload*), computed when first asked and kept."""
        found: list[Verdict] = []

        def check() -> Verdict:
            if not found:
                found.append(self.of(post.sender, payload))
            return found[0]

        return check


def checked(
    verdicts: Verdicts, records: Iterable[list[tuple[int, Post, bytes]]]
) -> Iterator[tuple[int, Post, Check]]:
    """Each (position, post, payload) of *records* as (position, post, check)."""
    for batch in records:
        for position, post, payload in batch:
            yield position, post, verdicts.check(post, payload)


def read_checked(log: Log, verdicts: Verdicts) -> list[tuple[int, Post, Check]]:
    """Every post of *log* with its check."""
    follower = log.follow(0)
    try:
        return list(checked(verdicts, follower.records()))
    finally:
        follower.close()
