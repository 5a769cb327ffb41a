"""The recipient's policy, applied to a pane's prompts before any door takes them.

The deliverer (listener/deliverer.py: the listener's and the Stop hook's) asks one
`PolicyScreen` about every prompt it would hand over (`admit`), so both decide alike
(state/trust/policy.py `decide`): a prompt let through comes back
with what the door tells the agent about it (`Provenance`); one the policy holds gets a
`held` post (``by: policy``) and one it refuses a `refused` post, both under the agent's
name, and neither reaches the door. A held prompt waits for a decision: once the fold reads the
agent's verified `approved` post (written by `paneboard approve` or `top` after a yes on a
terminal), `admit` lets it through, saying it was approved at a terminal: the post cannot say
who typed the yes (board/confirm.py). A prompt past the rate waits for no one: `admit` says
until when (`waits`), posts nothing, and lets it through when asked again once the window
allows.

A prompt is decided once: the `held` or `refused` post is on the board before the next read,
and a deliverer started later reads it there, so it never posts a second one.
"""

from __future__ import annotations

import os

import msgspec

from paneboard.board.context import header
from paneboard.board.view import BoardView
from paneboard.protocol.compose import Provenance
from paneboard.protocol.posts import Held, Post, Prompt, Refused
from paneboard.protocol.signing import UNSIGNED, VERIFIED
from paneboard.state.fold import PromptState, is_open, order_key
from paneboard.state.panes.pane import Pane
from paneboard.state.trust.policy import (
    Decision,
    Facts,
    Policy,
    decide,
    policy_path,
    read_policy,
)

__all__ = ["PolicyScreen"]


class PolicyScreen:
    """The policy of *pane*'s agent over the prompts *view* folds for it.

    The view is one opened with verdicts and traffic (the prompts read to and from the agent:
    the rate and the loop limit); the screen reads its fold, its verdicts and the bytes each
    prompt is stored as (what its signature covers), and counts handovers in its traffic.
    """

    def __init__(self, pane: Pane, view: BoardView) -> None:
        if view.verdicts is None or view.traffic is None:
            raise TypeError("a policy screen needs a view with verdicts and traffic")
        self.pane = pane
        self.view = view
        self.verdicts = view.verdicts
        self.traffic = view.traffic
        self.decided: dict[str, Decision] = {}  # held or refused by this process, not read back
        self.waits: dict[str, Decision] = {}  # prompts that wait for the rate, and until when
        self._policy: tuple[tuple[int, ...], Policy] | None = None  # (the file's stamp, policy)

    def waiting(self, ps: PromptState) -> bool:
        """Whether *ps* waits for a person (held by the policy, here or earlier)."""
        stage = ps.recipients[self.pane.agent].stage
        return stage == "held" or (stage != "approved" and ps.prompt.id in self.decided)

    def admit(self, ps: PromptState, door: str, turn: str | None = None) -> Provenance | None:
        """What *door* tells the agent about *ps*, if it may have it now; None if it is held
        (a `held` post naming *door*, the first time) or refused (a `refused` post). *turn* is
        the handover it would go in (its first prompt's id; this prompt's own if None): the
        rate counts handovers, so a prompt joining one its sender has a place in goes too."""
        if self.waiting(ps):
            return None
        prompt, stage = ps.prompt, ps.recipients[self.pane.agent].stage
        payload = self.view.payload(ps)
        if stage == "approved":  # a person let it through: the policy is not asked again
            return self._provenance(prompt, payload, approved=True)
        verdict = UNSIGNED if payload is None else self.verdicts.verdict(prompt.sender, payload)
        conflict = None if payload is None else self.verdicts.conflict(prompt.sender, payload)
        policy = self.policy()
        facts = self._first_contact(
            prompt,
            self.traffic.facts(
                prompt, verdict, conflict, self._ahead(ps), policy.rate, turn or prompt.id
            ),
        )
        decision = decide(policy, prompt, facts)
        if decision.action == "wait":
            self.waits[prompt.id] = decision
            return None
        self.waits.pop(prompt.id, None)
        if decision.action == "deliver":
            # Counted now, so the next prompt of this pass sees it; the receipt read back later
            # gives its time (`Traffic.take_back` if the door fails).
            self.traffic.handed_over(prompt.sender, turn or prompt.id, self.pane.now())
            return self.verdicts.provenance(prompt, payload, verdict=verdict)
        self.pane.post([self._post(prompt, decision, door)])
        self.decided[prompt.id] = decision
        return None

    def _ahead(self, ps: PromptState) -> int:
        """How many prompts from *ps*'s sender before it (in catch-up order) wait for the rate;
        those no longer waiting (handed over, closed, held) are forgotten."""
        state, agent, now, n = self.view.state, self.pane.agent, self.pane.now(), 0
        for pid in list(self.waits):
            other = state.prompts.get(pid)
            if (
                other is None
                or not is_open(other, agent, now)
                or self.pane.handed_over(other.prompt)
                or self.waiting(other)
            ):
                del self.waits[pid]
            elif (
                pid != ps.prompt.id
                and other.prompt.sender == ps.prompt.sender
                and order_key(other) < order_key(ps)
            ):
                n += 1
        return n

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
        """The agent's policy as stored now (read again only when its file changed: its
        contents, or what it is, a link or another owner's, which `read_policy` refuses)."""
        path = policy_path(self.pane.paths.dir, self.pane.agent)
        try:
            st = os.lstat(path)
            stamp: tuple[int, ...] = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        except FileNotFoundError:
            stamp = ()
        if self._policy is None or self._policy[0] != stamp:
            self._policy = (stamp, read_policy(self.pane.paths.dir, self.pane.agent))
        return self._policy[1]

    def _post(self, prompt: Prompt, decision: Decision, door: str) -> Post:
        head = header(self.pane.board, self.pane.agent, self.pane.now())
        reason = decision.reason or decision.action
        if decision.action == "refuse":
            return Refused(**head, prompt_id=prompt.id, reason=reason)
        return Held(**head, prompt_id=prompt.id, door=door, by="policy", reason=reason)
