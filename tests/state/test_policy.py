"""The recipient's policy: the pure decision for a prompt, its facts, and its private file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec
import pytest

from paneboard.protocol.errors import BoardIOError
from paneboard.protocol.posts import Ack, Delivered, Post, Prompt
from paneboard.state.fold import BoardState, fold
from paneboard.state.trust.policy import (
    Decision,
    Facts,
    Policy,
    Traffic,
    TrafficState,
    chain_depth,
    decide,
    policy_path,
    rate_due,
    rate_waits,
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


def test_past_the_rate_a_prompt_waits_for_the_window_and_a_loop_is_held() -> None:
    """30 prompts handed over in the minute make the next wait until the first of them is a
    minute old (no person needed); a chain deeper than 10 is held; 0 turns either off."""
    p = prompt(1)
    times = tuple(1000.0 + i for i in range(30))
    assert "deliver" == decide(Policy(), p, Facts("verified", 29, 10, now=1030.0)).action
    assert Decision("wait", "rate: over 30 prompts a minute from alice", 1060.0) == decide(
        Policy(), p, Facts("verified", 30, 0, times=times, now=1030.0)
    )
    assert Decision("hold", "loop: a reply chain 11 deep (limit 10)") == decide(
        Policy(), p, Facts("verified", 0, 11)
    )
    off = Facts("verified", 30, 10**5, times=times, waiting=10**5, now=1030.0)
    assert "deliver" == decide(Policy(rate=0, loop=0), p, off).action


def test_a_runaway_sender_is_held_for_a_person() -> None:
    """Ten minutes of the rate already waiting from one sender: the next is held (`rate`)."""
    p = prompt(1)
    assert "wait" == decide(Policy(rate=2), p, Facts("verified", 2, 0, waiting=19)).action
    assert Decision(
        "hold", "rate: a runaway: 20 prompts from alice already wait (10 minutes at 2 a minute)"
    ) == decide(Policy(rate=2), p, Facts("verified", 2, 0, waiting=20))


def test_a_ts_far_from_the_readers_clock_is_held() -> None:
    """More than 300 s ahead of or behind the time it reached the board: held (`time`)."""
    p = prompt(1)
    assert "deliver" == decide(Policy(), p, Facts("verified", 0, 0, skew=-300.0)).action
    assert Decision(
        "hold", "time: its ts is 301 s ahead of this reader's clock (limit 300 s)"
    ) == decide(Policy(), p, Facts("verified", 0, 0, skew=301.0))
    assert "time: its ts is 610 s behind" in str(
        decide(Policy(), p, Facts("verified", 0, 0, skew=-610.0)).reason
    )


def test_rate_due_gives_each_waiting_prompt_the_next_free_place() -> None:
    """Places free up a minute after each handover; the ones ahead take them first."""
    times = [100.0, 101.0, 102.0]
    assert 120.0 == rate_due(times, 5, 1, 120.0)  # 3 + 1 ahead < 5: now
    assert 160.0 == rate_due(times, 3, 0, 120.0)
    assert 162.0 == rate_due(times, 3, 2, 120.0)
    assert 220.0 == rate_due(times, 3, 3, 120.0)  # the ones ahead fill the next minute
    assert 130.0 == rate_due([10.0, 20.0], 2, 0, 130.0)  # out of the minute: free


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


def test_a_bystander_in_to_does_not_end_the_chain() -> None:
    """Links between alice and bob count whoever else they are sent to (carol on each)."""
    out: list[Prompt] = []
    for i in range(14):
        sender, to = ("alice", ("bob", "carol")) if i % 2 == 0 else ("bob", ("alice",))
        out.append(prompt(i, sender=sender, to=to, reply_to=out[-1].id if out else None))
    assert 13 == chain_depth({p.id: p for p in out}, out[-1], "alice")
    depth = chain_depth({p.id: p for p in out}, out[-1], "alice")
    assert Decision("hold", "loop: a reply chain 13 deep (limit 10)") == decide(
        Policy(), out[-1], Facts("verified", 0, depth)
    )


def test_a_thread_counts_the_turns_when_reply_to_points_elsewhere() -> None:
    """A chain in one thread whose replies name another prompt (or none) is as deep as its
    turns between the two agents."""
    traffic = Traffic("bob", now=lambda: 0.0)
    other = prompt(99, sender="carol", to=("bob",))
    traffic.note(other)
    chain = []
    for i in range(13):
        sender, to = ("alice", ("bob",)) if i % 2 == 0 else ("bob", ("alice",))
        chain.append(prompt(i, sender=sender, to=to, thread="t", reply_to=other.id))
        traffic.note(chain[-1])
    assert (0, 12) == (chain_depth(traffic.links, chain[-1], "bob"), traffic.depth(chain[-1]))
    one_way = prompt(50, thread="u")
    for i in range(5):
        traffic.note(prompt(60 + i, thread="u"))
    assert 0 == traffic.depth(one_way)  # many from alice alone: no turn


def test_handovers_of_the_last_minute_count_and_a_checkpoint_keeps_them() -> None:
    """The rate counts handovers by the reader's clock (never the prompts' ts); what a
    checkpoint keeps counts the same in a reader started later."""
    clock = [1000.0]
    traffic = Traffic("bob", now=lambda: clock[0])
    p = prompt(1, ts=5.0)
    for i in range(3):
        traffic.handed_over("alice", f"{i:026d}", 990.0 + i)
    traffic.handed_over("alice", "x" * 26, 900.0)  # out of the minute
    expected = Facts("verified", 3, 0, None, (990.0, 991.0, 992.0), 0, 0.0, 1000.0)
    assert expected == traffic.facts(p, "verified")
    later = Traffic("bob", now=lambda: clock[0])
    kept = msgspec.msgpack.encode(traffic.kept(BoardState()))
    later.restore(msgspec.msgpack.decode(kept, type=TrafficState))
    assert (990.0, 991.0, 992.0) == later.recent("alice")
    clock[0] = 1051.0
    assert (992.0,) == later.recent("alice")


def test_a_prompt_read_again_after_a_restart_keeps_its_arrival() -> None:
    """The time a prompt reached the board is the reader's clock when it was first read: a
    checkpoint keeps it, so a prompt that waited is not judged by the time it is read again."""
    clock = [1000.0]
    traffic = Traffic("bob", now=lambda: clock[0])
    traffic.reading()
    traffic.read()  # an empty board read at 1000
    clock[0] = 1010.0
    p = prompt(1, ts=1009.0)
    traffic.reading()
    traffic.note(p)
    traffic.read()
    state = fold([(0, p)], BoardState(keep_closed=False, recipient="bob"))
    later = Traffic("bob", now=lambda: clock[0])
    later.restore(traffic.kept(state))
    clock[0] = 5000.0
    assert 0.0 == later.skew(p)
    late = prompt(2, ts=600.0)  # written 400 s before a time it certainly came after
    later.reading()
    later.note(late)
    later.read()
    assert -410.0 == later.skew(late)
    ahead = prompt(3, ts=5400.0)
    assert 400.0 == later.skew(ahead)


def test_rate_waits_counts_the_boards_receipts() -> None:
    """`status` and `open` count the recipient's receipts of the minute, closed prompts' too,
    and give each waiting prompt its time."""
    posts: list[Post] = []
    for i in range(3):
        p = prompt(i, ts=float(i))
        posts += [
            p,
            Delivered(
                id=f"d{i:025d}",
                board="b",
                sender="bob",
                ts=100.0 + i,
                prompt_id=p.id,
                door="stdout",
            ),
            Ack(id=f"a{i:025d}", board="b", sender="bob", ts=101.0 + i, prompt_id=p.id),
        ]
    waiting = [prompt(10 + i) for i in range(3)]
    posts += waiting
    state = fold(enumerate(posts), BoardState(recipient="bob"))
    expected = {waiting[0].id: 160.0, waiting[1].id: 161.0, waiting[2].id: 162.0}
    assert expected == rate_waits(state, "bob", 3, 120.0)
    assert {waiting[2].id: 160.0} == rate_waits(state, "bob", 5, 120.0)
    assert {} == rate_waits(state, "bob", 0, 120.0)
    assert {} == rate_waits(state, "bob", 3, 200.0)


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
