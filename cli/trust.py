"""`keys`, `trust`, `policy`, `approve` and `refuse`: a person's decisions about a board.

Each decision (`trust`, `approve`, `refuse`, a change of `policy`) is confirmed on the
controlling terminal, never on stdin, which an agent's command may well have: an agent whose
commands run with no controlling terminal cannot approve its own held prompts. Without a
terminal the command says so and writes nothing.
"""

from __future__ import annotations

import os
import sys
from argparse import Namespace

from paneboard.board import policy as board_policy
from paneboard.board import trust
from paneboard.board.context import Context
from paneboard.cli.show import emit
from paneboard.protocol.errors import BadInput
from paneboard.protocol.signing import is_fingerprint
from paneboard.protocol.visible import one_line

TTY = "/dev/tty"


class NotConfirmed(BadInput):
    """A person's decision was not confirmed on the terminal; nothing was written."""


def confirm(question: str) -> None:
    """Ask *question* on the controlling terminal; `NotConfirmed` unless the answer is yes."""
    try:
        fd = os.open(TTY, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        raise NotConfirmed(
            f"{question.rstrip('?')}: a person's decision, confirmed on a terminal, and this "
            f"process has none ({TTY}); nothing written"
        ) from None
    with os.fdopen(fd, "r+b", buffering=0) as tty:  # a terminal cannot seek: no buffer
        tty.write((one_line(question) + " [y/N] ").encode())
        answer = tty.readline(64).decode(errors="replace").strip().lower()
    if answer not in ("y", "yes"):
        raise NotConfirmed("not confirmed; nothing written")


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
                f"paneboard: approved {post.prompt} for `{post.sender}`, held as first contact"
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
        confirm(f"approve prompt {args.id} for `{ctx.agent}` on board `{ctx.board}`?")
        post = trust.approve(ctx, args.id)
    if ctx.json:
        emit(post)


def refuse_command(args: Namespace) -> None:
    with Context.from_args(args) as ctx:
        confirm(f"refuse prompt {args.id} for `{ctx.agent}` on board `{ctx.board}`?")
        post = trust.refuse(ctx, args.id, args.reason)
    if ctx.json:
        emit(post)
