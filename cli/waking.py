"""`paneboard wake NAME`: wake an asleep agent by hand.

It posts a prompt to NAME saying who woke it and why: the asleep listener acts on it as on
any prompt, so the recipient's policy decides (a sender it holds or refuses wakes nothing)
and the wake budget counts it. Refused for an agent whose listener is not asleep.
"""

from __future__ import annotations

import sys
from argparse import Namespace

from paneboard.board.context import Context
from paneboard.board.post import PromptRequest, append
from paneboard.board.who import remote_presences, rows
from paneboard.protocol.errors import BadInput
from paneboard.protocol.names import check_name


def wake_command(args: Namespace) -> None:
    target = check_name("agent", args.target)
    with Context.from_args(args) as ctx:
        row = rows(ctx.paths, [target], remote_presences(ctx.store()))
        found = next((r for r in row if r.agent == target), None)
        if found is None or found.sleep != "asleep":
            now = "no listener" if found is None or not found.listening else found.sleep or "live"
            raise BadInput(f"`{target}` is not asleep ({now}): only an asleep agent is woken")
        body = f"paneboard wake: `{ctx.agent}` woke you by hand; nothing else is asked."
        posted = append(ctx, PromptRequest([target], body))
    if args.json:
        from paneboard.cli.show import emit

        emit(posted.prompt())
    else:
        sys.stdout.write(f"{posted.id}\n")
