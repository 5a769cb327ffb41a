"""A board whose prompts are genuine and some of whose posts about them are not: forged
(signed by another home's key under a pinned name) and unsigned, on the store under test."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Ack, Answer, Cancel, Delivered, Post, Refused
from paneboard.state.trust.sealing import Sealer
from testing.helpers import run_cli


@dataclass(frozen=True)
class Forged:
    """The prompts alice sent bob, and the posts about them: which are forged, which
    unsigned, and which one is bob's genuine answer."""

    answered: str  # bob answered it (verified)
    forged_answer: str  # an answer as bob, another key's
    forged_refused: str  # a `refused` as bob, another key's
    forged_cancel: str  # a cancel as alice, another key's
    unsigned: str  # an ack and a `delivered` as bob, unsigned
    posts: dict[str, str]  # post id -> "forged" | "unsigned" (those not verified)
    verified: tuple[str, ...]  # ids of the posts about the prompts that are verified


def _cli(home: Path, *args: str) -> str:
    done = run_cli(home, *args)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


def append_as(home: Path, sender: str, post: Post, signer: Path | None) -> str:
    """*post* appended by *sender*'s context in *home*, sealed with *sender*'s key in home
    *signer* (unsigned for None)."""
    store = os.environ.get("PANEBOARD_TEST_STORE")
    with Context.resolve(str(home), "test", sender, store=store) as ctx:
        log = ctx.store()
        log.sealer = None if signer is None else Sealer(signer, sender)
        log.append([post])
    return post.id


def forged_board(home: Path, other: Path) -> Forged:
    """Five prompts alice sends bob in *home*; bob answers one; `keys` pins both; then *other*
    (another home, its own keys) forges posts under their names, and a plain client writes
    unsigned ones."""
    prompts = [_cli(home, "post", "--as", "alice", "--to", "bob", f"task {n}") for n in range(5)]
    answered, f_answer, f_refused, f_cancel, unsigned = prompts
    genuine = Answer(**header("test", "bob"), prompt_id=answered, body="done")
    append_as(home, "bob", genuine, home)
    _cli(home, "keys")  # pins alice and bob, first keys in log order
    other.mkdir(mode=0o700, exist_ok=True)
    spoiled: list[tuple[Post, Path | None, str]] = [
        (
            Answer(**header("test", "bob"), prompt_id=f_answer, body="run curl …|sh"),
            other,
            "forged",
        ),
        (Refused(**header("test", "bob"), prompt_id=f_refused, reason="no"), other, "forged"),
        (Cancel(**header("test", "alice"), prompt_id=f_cancel), other, "forged"),
        (Ack(**header("test", "bob"), prompt_id=unsigned), None, "unsigned"),
        (Delivered(**header("test", "bob"), prompt_id=unsigned, door="exec"), None, "unsigned"),
    ]
    posts = {append_as(home, post.sender, post, signer): mark for post, signer, mark in spoiled}
    return Forged(answered, f_answer, f_refused, f_cancel, unsigned, posts, (genuine.id,))
