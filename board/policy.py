"""A recipient's policy on a board, as operations every front end shares (state/trust/policy.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from paneboard.board.context import Context
from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.names import check_name
from paneboard.state.trust.policy import AUTO_BODY, AUTO_BURST, Policy, read_policy, write_policy

__all__ = ["changed", "policy_lines", "policy_of", "rates", "set_policy"]


def policy_of(ctx: Context) -> Policy:
    """The context's agent's policy on its board (the default where none is stored)."""
    return read_policy(ctx.paths.dir, ctx.agent)


def rates(ctx: Context, agents: Iterable[str]) -> dict[str, int]:
    """Each of *agents*' rate on the board, as this home keeps its policy (a policy file that
    cannot be read counts as the default here: `top` only shows it)."""
    out = {}
    for agent in agents:
        try:
            out[agent] = read_policy(ctx.paths.dir, agent).rate
        except BoardIOError:
            continue
    return out


def changed(
    policy: Policy,
    *,
    allow: Sequence[str] | None = None,
    others: str | None = None,
    unverified: str | None = None,
    rate: int | None = None,
    loop: int | None = None,
    first_contact: str | None = None,
    wake: str | None = None,
    wake_limit: int | None = None,
    deliver: str | None = None,
) -> Policy:
    """*policy* with each option given in place of its own; `BadInput` for a bad value."""
    given: dict[str, object] = {
        "allow": None if allow is None else tuple(check_name("agent", a) for a in allow),
        "others": others,
        "unverified": unverified,
        "rate": rate,
        "loop": loop,
        "first_contact": first_contact,
        "wake": wake,
        "wake_limit": wake_limit,
        "deliver": deliver,
    }
    fields = msgspec.structs.asdict(policy) | {k: v for k, v in given.items() if v is not None}
    try:
        return msgspec.convert(fields, Policy)
    except msgspec.ValidationError as exc:
        raise BadInput(f"policy: {exc}") from None


def set_policy(ctx: Context, policy: Policy) -> None:
    """Store *policy* for the context's agent on its board (a person's decision)."""
    ctx.paths.ensure()
    write_policy(ctx.paths.dir, ctx.agent, policy)


def policy_lines(ctx: Context, policy: Policy) -> list[str]:
    """`paneboard policy` for people."""
    allowed = ", ".join(policy.allow) if policy.allow else "(none listed)"
    return [
        f"policy of `{ctx.agent}` on board `{ctx.board}`",
        f"  allowed:    {allowed}",
        f"  others:     {policy.others}",
        f"  unverified: {policy.unverified}",
        f"  rate:       {_limit(policy.rate, 'prompts a minute from one sender')}",
        f"  loop:       {_limit(policy.loop, 'replies deep between two agents')}",
        f"  first contact: {policy.first_contact} (a name's first key, on a shared store)",
        f"  wake:       {_wake(policy)}",
        f"  deliver:    {_deliver(policy)}",
    ]


def _deliver(policy: Policy) -> str:
    if policy.deliver == "body":
        return "body (the prompt's text; a sender's --notice still comes as a notice)"
    if policy.deliver == "notice":
        return "notice (paneboard's notice only; the agent reads the body with `paneboard read`)"
    return f"auto (a notice for a body over {AUTO_BODY} bytes or a burst of more than {AUTO_BURST})"


def _wake(policy: Policy) -> str:
    if policy.wake == "never":
        return "never (the listener stops with the session)"
    budget = _limit(policy.wake_limit, "wakes an hour")
    return f"resume (the ended session is started again for a prompt), {budget}"


def _limit(value: int, what: str) -> str:
    return f"{value} {what}" if value else "off"
