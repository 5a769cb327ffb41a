"""The fold and signatures: only a verified post moves a stage; approved and refused stages."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from paneboard.protocol.posts import Ack, Approved, Cancel, Delivered, Held, Post, Prompt, Refused
from paneboard.state.fold import BoardState, Doubt, LazyVerdict, apply, fold_checked, stage
from tests.factories import prompt
from tests.strategies import posts, prompts

P = prompt(1, id="01" + "a" * 24, to=("bob", "carol"))


def _about(kind: type[Any], n: int, sender: str = "bob", **fields: Any) -> Post:
    post: Post = kind(
        id=f"{n:026d}", board="b", sender=sender, ts=float(n), prompt_id=P.id, **fields
    )
    return post


def _verdict(word: str) -> LazyVerdict:
    return lambda: word  # type: ignore[return-value]  # a verdict word, as the check returns


def _held(n: int, sender: str = "bob") -> Post:
    return _about(Held, n, sender, door="exec", by="policy", reason="unverified")


def test_a_forged_or_unsigned_ack_moves_nothing_and_is_kept_as_a_doubt() -> None:
    """An ack that is not verified leaves the stage, and `doubted` names it and its verdict."""
    forged, unsigned = _about(Ack, 2), _about(Ack, 3, "carol")
    state = fold_checked(
        [
            (0, P, _verdict("verified")),
            (1, forged, _verdict("forged")),
            (2, unsigned, _verdict("unsigned")),
        ]
    )
    ps = state.prompts[P.id]
    assert ["posted", "posted"] == [stage(ps, name, 10.0) for name in ("bob", "carol")]
    assert [
        Doubt(forged.id, "ack", "bob", "forged"),
        Doubt(unsigned.id, "ack", "carol", "unsigned"),
    ] == ps.doubted


def test_a_forged_cancel_does_not_cancel() -> None:
    """The sender's cancel counts only when verified."""
    state = fold_checked(
        [(0, P, _verdict("verified")), (1, _about(Cancel, 2, "alice"), _verdict("forged"))]
    )
    assert state.prompts[P.id].cancelled is None
    apply(state, 2, _about(Cancel, 3, "alice"), _verdict("verified"))
    assert 3.0 == state.prompts[P.id].cancelled


def test_the_check_is_asked_only_of_a_post_that_would_move_a_kept_prompt() -> None:
    """Posts about prompts the state does not keep, or by someone with no say, are never
    verified: a catch-up verifies what it acts on."""
    asked: list[str] = []

    def check(word: str) -> LazyVerdict:
        return lambda: asked.append(word) or "verified"  # type: ignore[func-returns-value,return-value]

    state = BoardState(recipient="bob", keep_closed=False)
    elsewhere = prompt(9, id="09" + "b" * 24, to=("dave",))
    apply(state, 0, elsewhere, check("elsewhere prompt"))
    apply(
        state,
        1,
        Ack(id="0" * 26, board="b", sender="dave", ts=1.0, prompt_id=elsewhere.id),
        check("elsewhere ack"),
    )
    apply(state, 2, P, check("prompt"))
    apply(state, 3, _about(Ack, 4, "mallory"), check("not a recipient"))
    apply(state, 4, _about(Ack, 5, "bob"), check("bob's ack"))
    assert ["bob's ack"] == asked


def test_held_then_approved_then_delivered() -> None:
    """A person's approval moves a held prompt on; the listener's receipt then delivers it."""
    state = fold_checked(
        [(0, P, _verdict("verified"))]
        + [
            (i, post, _verdict("verified"))
            for i, post in enumerate(
                [_held(2), _about(Approved, 3), _about(Delivered, 4, door="exec")], 1
            )
        ]
    )
    r = state.prompts[P.id].recipients["bob"]
    assert ("delivered", 3.0) == (r.stage, r.approved_at)


def test_approved_moves_only_a_held_prompt() -> None:
    """An approval of a prompt that is not held changes nothing."""
    state = fold_checked(
        [(0, P, _verdict("verified")), (1, _about(Approved, 2), _verdict("verified"))]
    )
    assert "posted" == state.prompts[P.id].recipients["bob"].stage


def test_refused_ends_the_prompt_for_that_recipient_only() -> None:
    """`refused` keeps its reason, and no later receipt or ack changes it; the others go on."""
    posts = [
        _held(2),
        _about(Refused, 3, reason="not from you"),
        _about(Delivered, 4, door="exec"),
        _about(Ack, 5),
    ]
    state = fold_checked(
        [(0, P, _verdict("verified"))]
        + [(i, p, _verdict("verified")) for i, p in enumerate(posts, 1)]
    )
    ps = state.prompts[P.id]
    assert ("refused", "not from you") == (stage(ps, "bob", 1e9), ps.recipients["bob"].reason)
    assert "posted" == stage(ps, "carol", 1.0)


def test_a_prompt_refused_and_closed_by_every_recipient_is_dropped_when_closed_ones_are() -> None:
    """A listener's fold forgets a prompt nobody can still receive."""
    state = BoardState(keep_closed=False)
    for i, post in enumerate([P, _about(Refused, 2, reason="no"), _about(Ack, 3, "carol")]):
        apply(state, i, post, _verdict("verified"))
    assert {} == state.prompts


@st.composite
def _boards(draw: st.DrawFn) -> list[Post]:
    """Prompts, then posts about them by their senders and recipients, in any order."""
    prompts_ = draw(st.lists(prompts, min_size=1, max_size=5, unique_by=lambda p: p.id))
    board: list[Post] = list(prompts_)
    for about in draw(st.lists(posts.filter(lambda p: not isinstance(p, Prompt)), max_size=12)):
        target = draw(st.sampled_from(prompts_))
        sender = draw(st.sampled_from([target.sender, *target.to]))
        board.append(msgspec.structs.replace(about, prompt_id=target.id, sender=sender))
    return board


@given(_boards(), st.sampled_from(["forged", "unsigned"]))
def test_posts_that_are_not_verified_leave_every_stage_as_the_prompts_alone_do(
    board: list[Post], verdict: str
) -> None:
    """Whatever closing posts and receipts follow, none that fails its check moves anything:
    the fold's stages are those of the prompts alone, and each such post is a doubt."""
    with_doubts = BoardState()
    alone = BoardState()
    for position, post in enumerate(board):
        is_prompt = isinstance(post, Prompt)
        apply(with_doubts, position, post, _verdict("verified" if is_prompt else verdict))
        if is_prompt:
            apply(alone, position, post)
    assert {pid: ps.recipients for pid, ps in alone.prompts.items()} == {
        pid: ps.recipients for pid, ps in with_doubts.prompts.items()
    }
    assert all(ps.cancelled is None for ps in with_doubts.prompts.values())
    doubted = [d for ps in with_doubts.prompts.values() for d in ps.doubted]
    assert all(d.verdict == verdict for d in doubted)
