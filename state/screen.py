"""The recipient's policy, applied to a pane's prompts before any door takes them.

The listener and the Stop hook each ask one `Screen` about every prompt they would hand over
(`admit`), so both decide alike (state/policy.py `decide`): a prompt let through comes back
with what the door tells the agent about it (`Provenance`); one the policy holds gets a
`held` post (``by: policy``) and one it refuses a `refused` post, both under the agent's
name, and neither reaches the door. A held prompt waits for a person: once the fold reads
their `approved` post, `admit` lets it through, saying that a person approved it.

A prompt is decided once: the `held` or `refused` post is on the board before the next read,
and a deliverer started later reads it there, so it never posts a second one.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import msgspec

from paneboard.protocol.compose import Provenance
from paneboard.protocol.ids import new_id
from paneboard.protocol.posts import Held, Post, Prompt, Refused
from paneboard.protocol.signing import UNSIGNED, VERIFIED
from paneboard.state.fold import PromptState
from paneboard.state.pane import Pane
from paneboard.state.policy import (
    Decision,
    Facts,
    Policy,
    Traffic,
    decide,
    policy_path,
    read_policy,
)
from paneboard.state.verdicts import Verdicts

__all__ = ["Screen"]


class Screen:
    """The policy of *pane*'s agent over its prompts, as deliverer *door* applies it.

    *payload* gives a prompt's bytes as stored (what its signature covers); *traffic* the
    prompts read to and from the agent (the rate and the loop limit).
    """

    def __init__(
        self,
        pane: Pane,
        door: str,
        verdicts: Verdicts,
        payload: Callable[[PromptState], bytes | None],
        traffic: Traffic,
    ) -> None:
        self.pane = pane
        self.door = door
        self.verdicts = verdicts
        self.payload = payload
        self.traffic = traffic
        self.decided: dict[str, Decision] = {}  # held or refused by this process, not read back
        self._policy: tuple[tuple[int, ...], Policy] | None = None  # (the file's stamp, policy)

    def waiting(self, ps: PromptState) -> bool:
        """Whether *ps* waits for a person (held by the policy, here or earlier)."""
        stage = ps.recipients[self.pane.agent].stage
        return stage == "held" or (stage != "approved" and ps.prompt.id in self.decided)

    def admit(self, ps: PromptState) -> Provenance | None:
        """What the door tells the agent about *ps*, if it may have it now; None if it is held
        (a `held` post the first time) or refused (a `refused` post)."""
        if self.waiting(ps):
            return None
        prompt, stage = ps.prompt, ps.recipients[self.pane.agent].stage
        payload = self.payload(ps)
        if stage == "approved":  # a person let it through: the policy is not asked again
            return self._provenance(prompt, payload, approved=True)
        verdict = UNSIGNED if payload is None else self.verdicts.of(prompt.sender, payload)
        conflict = None if payload is None else self.verdicts.conflict(prompt.sender, payload)
        facts = self._first_contact(prompt, self.traffic.facts(prompt, verdict, conflict))
        decision = decide(self.policy(), prompt, facts)
        if decision.action == "deliver":
            return self.verdicts.told(verdict, payload)
        self.pane.post([self._post(prompt, decision)])
        self.decided[prompt.id] = decision
        return None

    def _first_contact(self, prompt: Prompt, facts: Facts) -> Facts:
        """*facts* with what the pins say of the sender's name: a lookalike of a known one, or
        a first key on a store other machines write to."""
        if facts.verdict != VERIFIED:
            return facts
        first = (
            self.pane.store.presence.shared and self.verdicts.pinned_by(prompt.sender) == "first"
        )
        lookalike = self.verdicts.lookalike(prompt.sender)
        return msgspec.structs.replace(facts, first_contact=first, lookalike=lookalike)

    def _provenance(
        self, prompt: Prompt, payload: bytes | None, *, approved: bool = False
    ) -> Provenance:
        if payload is None:
            return Provenance(UNSIGNED, None, approved)
        return self.verdicts.provenance(prompt, payload, approved=approved)

    def policy(self) -> Policy:
        """The agent's policy as stored now (read again only when its file changed)."""
        path = policy_path(self.pane.paths.dir, self.pane.agent)
        try:
            st = os.stat(path)
            stamp: tuple[int, ...] = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = ()
        if self._policy is None or self._policy[0] != stamp:
            self._policy = (stamp, read_policy(self.pane.paths.dir, self.pane.agent))
        return self._policy[1]

    def _post(self, prompt: Prompt, decision: Decision) -> Post:
        ts = self.pane.now()
        head = {"id": new_id(ts, os.urandom(10)), "board": self.pane.board}
        reason = decision.reason or decision.action
        if decision.action == "refuse":
            return Refused(**head, sender=self.pane.agent, ts=ts, prompt=prompt.id, reason=reason)
        return Held(
            **head,
            sender=self.pane.agent,
            ts=ts,
            prompt=prompt.id,
            door=self.door,
            by="policy",
            reason=reason,
        )
