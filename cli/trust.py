"""`keys`, `trust`, `policy`, `approve` and `refuse`: the decisions about a board.

Each decision (`trust`, `approve`, `refuse`, a change of `policy`) is asked on the controlling
terminal (board/confirm.py), never on stdin: without a terminal the command says so and writes
nothing. That stops an agent whose tools run commands with no terminal, not one whose tools can
open a pseudo-terminal (docs/trust.md). `approve` and `refuse` read the board before they ask:
a prompt that is not held (or not open) for the agent is refused in one line, unasked.
"""

from __future__ import annotations

import sys
from argparse import Namespace

from paneboard.board import decide, trust
from paneboard.board import policy as board_policy
from paneboard.board.confirm import confirm
from paneboard.board.context import Context
from paneboard.cli.show import emit
from paneboard.protocol.errors import BadInput
from paneboard.protocol.signing import is_fingerprint
from paneboard.protocol.visible import one_line
from paneboard.protocol.words import OPEN_STAGES


def keys_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        if args.own:  # what a person reads out to pin this key on another machine
            print(trust.own_fingerprint(ctx))
            return
        rows = trust.key_table(ctx)
    for row in rows:
        if row.new:  # a pin taken now, from the name's first signed post on the board
            print(
                one_line(
                    f"paneboard: pinned {row.agent}: {row.fingerprint}, the first key seen for it"
                ),
                file=sys.stderr,
            )
        if ctx.json:
            emit(row)
            continue
        extra = f"  other keys: {', '.join(row.others)}" if row.others else ""
        by = f" ({row.pinned_by})" if row.pinned_by else ""
        print(one_line(f"{row.agent:<16} {row.fingerprint or '-':<26}  {row.state}{by}{extra}"))


def trust_command(args: Namespace) -> None:
    fingerprint = args.fingerprint.strip().lower()
    if not is_fingerprint(fingerprint):
        raise BadInput(f"fingerprint {args.fingerprint!r} is not 26 of a-z and 2-7")
    with Context.from_args(args) as ctx:
        agent = ctx.agent if args.target is None else args.target
        confirm(f"pin key {fingerprint} for `{agent}` on board `{ctx.board}`?")
        released = trust.pin(ctx, agent, fingerprint)
    print(
        one_line(f"paneboard: pinned {agent}: {fingerprint}; running listeners pick it up"),
        file=sys.stderr,
    )
    for post in released:
        print(
            one_line(
                f"paneboard: approved {post.prompt_id} for `{post.sender}`, held as first contact"
            ),
            file=sys.stderr,
        )


def policy_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        current = board_policy.policy_of(ctx)
        new = board_policy.changed(
            current,
            allow=() if args.allow_none else args.allow,
            others=args.others,
            unverified=args.unverified,
            rate=args.rate,
            loop=args.loop,
            first_contact=args.first_contact,
            wake=args.wake,
            wake_limit=args.wake_limit,
            deliver=args.deliver,
        )
        if new != current:
            confirm(f"change the policy of `{ctx.agent}` on board `{ctx.board}`?")
            board_policy.set_policy(ctx, new)
        if ctx.json:
            emit(new)
        else:
            print("\n".join(one_line(line) for line in board_policy.policy_lines(ctx, new)))


def approve_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        if args.sender is not None:
            held = decide.held_from(ctx, args.sender)
        else:
            held = [decide.held_for(ctx, args.id)]
        confirm(decide.question("approve", held), decide.question_lines(held))
        posts = decide.approve_all(ctx, [h.prompt.id for h in held])
    if ctx.json:
        for post in posts:
            emit(post)


def refuse_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        decide.check_reason(args.reason)
        held = [decide.held_for(ctx, args.id, OPEN_STAGES)]
        confirm(decide.question("refuse", held), decide.question_lines(held))
        post = decide.refuse(ctx, held[0].prompt.id, args.reason)
    if ctx.json:
        emit(post)
