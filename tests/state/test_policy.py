"""The recipient's policy: the pure decision for a prompt, its facts, and its private file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.posts import Prompt
from paneboard.state.fold import BoardState, fold
from paneboard.state.policy import (
    Decision,
    Facts,
    Policy,
    chain_depth,
    decide,
    facts_for,
    policy_path,
    read_policy,
    write_policy,
)
from tests.factories import prompt

VERIFIED = Facts("verified", recent=0, depth=0)


def test_by_default_verified_prompts_are_delivered_and_the_rest_held() -> None:
    """The default policy: verified from any agent delivered; unsigned or forged held."""
    p = prompt(1, sender="anyone")
    assert Decision("deliver") == decide(Policy(), p, VERIFIED)
    assert Decision("hold", "unverified: the post is unsigned") == decide(
        Policy(), p, Facts("unsigned", 0, 0)
    )


def test_a_key_conflict_is_named_in_the_reason() -> None:
    """A post signed by another key than the pinned one says so, with the pin's prefix."""
    held = decide(Policy(), prompt(1), Facts("forged", 0, 0, conflict="abcdefgh" + "a" * 18))
    assert (
        Decision(
            "hold",
            "unverified: the post is forged (key conflict: another key than the pinned abcdefgh "
            "signed it)",
        )
        == held
    )


def test_unverified_may_be_refused() -> None:
    assert "refuse" == decide(Policy(unverified="refuse"), prompt(1), Facts("forged", 0, 0)).action


def test_the_allow_list_and_others() -> None:
    """Allowed senders are delivered; others get `others`, with the reason `not allowed`."""
    policy = Policy(allow=("alice",), others="hold")
    assert Decision("deliver") == decide(policy, prompt(1, sender="alice"), VERIFIED)
    assert Decision("hold", "not allowed") == decide(policy, prompt(1, sender="mallory"), VERIFIED)
    refusing = Policy(allow=("alice",), others="refuse")
    assert Decision("refuse", "not allowed") == decide(refusing, prompt(1, sender="eve"), VERIFIED)


def test_rate_and_loop_hold_past_their_limits_and_zero_turns_them_off() -> None:
    """30 earlier prompts in the minute hold the next; a chain deeper than 10 is held."""
    p = prompt(1)
    assert "deliver" == decide(Policy(), p, Facts("verified", 29, 10)).action
    assert Decision("hold", "rate: over 30 prompts a minute from alice") == decide(
        Policy(), p, Facts("verified", 30, 0)
    )
    assert Decision("hold", "loop: a reply chain 11 deep (limit 10)") == decide(
        Policy(), p, Facts("verified", 0, 11)
    )
    assert "deliver" == decide(Policy(rate=0, loop=0), p, Facts("verified", 10**5, 10**5)).action


def _chain(n: int, a: str = "alice", b: str = "bob") -> list[Prompt]:
    """n prompts answering each other between *a* and *b*, each a reply to the one before."""
    out: list[Prompt] = []
    for i in range(n):
        sender, to = (a, b) if i % 2 == 0 else (b, a)
        reply_to = out[-1].id if out else None
        out.append(prompt(i, sender=sender, to=(to,), reply_to=reply_to))
    return out


def test_chain_depth_counts_replies_between_the_two_agents_only() -> None:
    """Each reply between the same two agents is one deeper; a third agent's prompt ends it."""
    chain = _chain(12)
    prompts = {p.id: p for p in chain}
    assert 11 == chain_depth(prompts, chain[-1], chain[-1].to[0])
    bystander = prompt(99, sender="carol", to=("alice",))
    reply = prompt(100, sender="alice", to=("bob",), reply_to=bystander.id)
    assert 0 == chain_depth(prompts | {bystander.id: bystander}, reply, "bob")


def test_a_cycle_of_reply_ids_ends_the_walk() -> None:
    """Forged ids pointing at each other do not loop forever."""
    a = prompt(1, id="0" * 25 + "a", reply_to="0" * 25 + "b", to=("bob",))
    b = prompt(2, id="0" * 25 + "b", reply_to="0" * 25 + "a", sender="bob", to=("alice",))
    assert 1 == chain_depth({a.id: a, b.id: b}, a, "bob")


def test_facts_count_the_senders_prompts_to_the_recipient_in_the_last_minute() -> None:
    """Prompts of the minute before count; older ones, other recipients' and others' do not."""
    posts = [prompt(i, ts=1000.0 + i) for i in range(5)]
    posts += [prompt(10, ts=900.0), prompt(11, ts=1003.0, to=("carol",))]
    posts.append(prompt(12, ts=1003.0, sender="dave"))
    state: BoardState = fold(enumerate(posts))
    last = posts[4]
    assert Facts("verified", 4, 0) == facts_for(state, last, "bob", "verified")


def test_the_policy_file_is_private_and_read_back(tmp_path: Path) -> None:
    """Stored 0600 under the board's panes folder; no file is the default."""
    (tmp_path / "panes").mkdir()
    assert Policy() == read_policy(tmp_path, "bob")
    policy = Policy(allow=("alice",), others="refuse", rate=0)
    write_policy(tmp_path, "bob", policy)
    assert policy == read_policy(tmp_path, "bob")
    assert 0o600 == stat.S_IMODE(os.stat(policy_path(tmp_path, "bob")).st_mode)


def test_a_damaged_policy_file_is_an_error_naming_it(tmp_path: Path) -> None:
    """A policy that does not decode is refused, not taken as the default."""
    (tmp_path / "panes").mkdir()
    policy_path(tmp_path, "bob").write_bytes(b'{"rate": -1}')
    with pytest.raises(BoardIOError, match=r"policy file .*bob.policy is damaged"):
        read_policy(tmp_path, "bob")


def test_first_contact_is_held_unless_the_policy_delivers_it() -> None:
    """A first key on a shared store is held by default, naming the sender; `first_contact`
    says otherwise; a lookalike name is held whatever it says, naming the known name."""
    p = prompt(1, sender="carol")
    first = Facts("verified", 0, 0, first_contact=True)
    assert Decision("hold", "first key seen for carol") == decide(Policy(), p, first)
    assert Decision("refuse", "first key seen for carol") == decide(
        Policy(first_contact="refuse"), p, first
    )
    assert Decision("deliver") == decide(Policy(first_contact="deliver"), p, first)
    like = Facts("verified", 0, 0, lookalike="caro1")
    assert Decision("hold", "first key seen for carol, a name like caro1's") == decide(
        Policy(first_contact="deliver"), p, like
    )
    assert "unverified" in str(decide(Policy(), p, Facts("forged", 0, 0, first_contact=True)))
