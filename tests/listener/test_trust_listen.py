"""The recipient's policy, applied by real listeners and the Stop hook, on each store.

A prompt the policy holds gets one `held` post (``by: policy``) and never reaches the door
until it is approved; one it refuses gets `refused`, and the sender's `wait` says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Answer, Prompt
from paneboard.state.trust.policy import Policy, write_policy
from paneboard.state.trust.sealing import Sealer
from testing.helpers import Listening, post, run_cli, run_hook, wait_until
from tests.cli.test_trust import on_terminal

APPROVED_LINE = (
    "[paneboard] held by paneboard, then approved at a terminal (`paneboard approve`, "
    "`paneboard trust` or `paneboard top`)"
)


def _policy(home: Path, agent: str, policy: Policy) -> None:
    """Set *agent*'s policy as `paneboard policy` stores it (its confirmation is tested in
    tests/cli/test_trust.py)."""
    (home / "test" / "panes").mkdir(parents=True, exist_ok=True)
    write_policy(home / "test", agent, policy)


def _posts(home: Path, kind: str) -> list[dict[str, object]]:
    done = run_cli(home, "log", "--json")
    assert 0 == done.returncode, done.stderr
    return [p for p in map(json.loads, done.stdout.splitlines()) if p["kind"] == kind]


def _bob(home: Path, pid: str) -> dict[str, object]:
    done = run_cli(home, "status", pid, "--json")
    assert 0 == done.returncode, done.stderr
    return dict(json.loads(done.stdout)["recipients"]["bob"])


def _prompt_as(signer: Path | None, home: Path, sender: str, body: str) -> str:
    """Append a prompt from *sender* to bob signed in home *signer* (unsigned for None)."""
    store = os.environ.get("PANEBOARD_TEST_STORE")
    with Context.resolve(str(home), "test", sender, store=store) as ctx:
        ctx.paths.ensure()
        log = ctx.store()
        log.sealer = None if signer is None else Sealer(signer, sender)
        p = Prompt(**header("test", sender), to=("bob",), body=body)
        log.append([p])
    return p.id


def test_held_then_approved_is_delivered_saying_it_was_approved_at_a_terminal(
    home: Path, store_url: str
) -> None:
    """Not on bob's allow list: held once, nothing delivered; approved on the terminal: the
    door gets it, and the text says it was approved at a terminal."""
    _policy(home, "bob", Policy(allow=("carol",), others="hold"))
    with Listening(home, "bob", "--door", "stdout") as bob:
        pid = post(home, "--to", "bob", "deploy")
        bob.wait_err(f"held {pid} from alice by policy: not allowed")
        got = _bob(home, pid)
        assert ("held", "policy", "not allowed") == (got["stage"], got["held_by"], got["reason"])
        kept = post(home, "--to", "bob", "from carol", sender="carol")
        first = json.loads(bob.line())
        assert kept == first["id"]
        assert APPROVED_LINE not in first["text"]
        done, _ = on_terminal(home, "approve", pid, "--as", "bob")
        assert 0 == done.returncode, done.stderr
        delivered = json.loads(bob.line())
        assert (pid, True) == (delivered["id"], APPROVED_LINE in delivered["text"].splitlines())
        wait_until(lambda: _bob(home, pid)["stage"] == "delivered", "bob's receipt")
    assert [pid] == [p["prompt"] for p in _posts(home, "held")]


def test_a_listener_started_later_holds_nothing_twice_and_delivers_a_missed_approval(
    home: Path, store_url: str
) -> None:
    """Held by one listener; approved while none runs; the next one delivers it, and posts no
    second `held` for it or for the one still held."""
    _policy(home, "bob", Policy(allow=("carol",), others="hold"))
    with Listening(home, "bob", "--door", "stdout") as bob:
        pid = post(home, "--to", "bob", "one")
        still = post(home, "--to", "bob", "two")
        bob.wait_err(f"held {still} from alice by policy")
        bob.stop()
    done, _ = on_terminal(home, "approve", pid, "--as", "bob")
    assert 0 == done.returncode, done.stderr
    with Listening(home, "bob", "--door", "stdout") as bob:
        assert pid == json.loads(bob.line())["id"]
        post(home, "--to", "bob", "after", sender="carol")
        assert "after" == json.loads(bob.line())["body"]
    assert sorted([pid, still]) == sorted(p["prompt"] for p in _posts(home, "held"))
    assert "held" == _bob(home, still)["stage"]


def test_refused_by_policy_ends_the_senders_wait_naming_the_reason(
    home: Path, store_url: str
) -> None:
    """`--others refuse`: a `refused` post, nothing delivered; alice's `wait` exits 1."""
    _policy(home, "bob", Policy(allow=("carol",), others="refuse"))
    with Listening(home, "bob", "--door", "stdout") as bob:
        pid = post(home, "--to", "bob", "rm -rf build")
        bob.wait_err(f"refused {pid} from alice by policy: not allowed")
        waited = run_cli(home, "wait", pid, "--as", "alice", "--timeout", "10")
        assert (1, f"paneboard: prompt {pid} was refused: not allowed (by bob)\n") == (
            waited.returncode,
            waited.stderr,
        )
        post(home, "--to", "bob", "fine", sender="carol")
        assert "fine" == json.loads(bob.line())["body"]


def test_an_impostor_and_an_unsigned_prompt_are_held_unverified(
    home: Path, store_url: str, tmp_path: Path
) -> None:
    """alice's first key is pinned; a prompt signed as alice in another home is held naming
    the key conflict, an unsigned one is held as unsigned, the real alice's is delivered."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        real = post(home, "--to", "bob", "the real alice")
        assert real == json.loads(bob.line())["id"]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        fake = _prompt_as(elsewhere, home, "alice", "the impostor")
        said = bob.wait_err(f"held {fake} from alice by policy: unverified")
        assert "(key conflict: another key than the pinned " in said, said
        bare = _prompt_as(None, home, "alice", "no signature")
        bob.wait_err(f"held {bare} from alice by policy: unverified: the post is unsigned")
        again = post(home, "--to", "bob", "the real alice again")
        got = json.loads(bob.line())
        assert (again, "[paneboard] paneboard checked the sender's key: alice, key ") == (
            got["id"],
            got["text"].splitlines()[1][:59],
        )


def test_the_stop_hook_applies_the_same_policy(home: Path, store_url: str) -> None:
    """The Stop hook hands over carol's prompt and holds alice's, with one `held` post."""
    _policy(home, "bob", Policy(allow=("carol",), others="hold"))
    pid = post(home, "--to", "bob", "from alice")
    kept = post(home, "--to", "bob", "from carol", sender="carol")
    event = {"session_id": "s1", "hook_event_name": "Stop"}
    done = run_hook(home, "stop", "claude", event, "--as", "bob")
    assert 0 == done.returncode, done.stderr
    reason = json.loads(done.stdout)["reason"]
    assert (kept in reason, pid in reason) == (True, False)
    again = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    assert (0, "") == (again.returncode, again.stdout)
    assert [pid] == [p["prompt"] for p in _posts(home, "held")]
    got = _bob(home, pid)
    assert ("held", "policy", "stop-hook") == (got["stage"], got["held_by"], got["door"])


def test_a_forged_answer_ends_no_wait(home: Path, store_url: str, tmp_path: Path) -> None:
    """An answer signed as bob in another home moves nothing: `wait` runs out of time; bob's
    own answer ends it, and is the one printed."""
    pid = post(home, "--to", "bob", "which branch?")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    answered = run_cli(home, "answer", pid, "--as", "bob", "main")
    assert 0 == answered.returncode, answered.stderr
    assert "pinned" in run_cli(home, "keys").stdout  # bob's first key, pinned in this home
    other = post(home, "--to", "bob", "and the tag?")
    store = os.environ.get("PANEBOARD_TEST_STORE")
    with Context.resolve(str(home), "test", "bob", store=store) as ctx:
        log = ctx.store()
        log.sealer = Sealer(elsewhere, "bob")
        log.append([Answer(**header("test", "bob"), prompt_id=other, body="forged")])
    waited = run_cli(home, "wait", other, "--as", "alice", "--timeout", "1")
    assert (3, "") == (waited.returncode, waited.stdout)
    real = run_cli(home, "answer", other, "--as", "bob", "v1")
    assert 0 == real.returncode, real.stderr
    waited = run_cli(home, "wait", other, "--as", "alice", "--timeout", "10")
    assert (0, "v1") == (waited.returncode, waited.stdout.strip().split()[-1])


def test_the_stop_hook_delivers_a_prompt_once_approved(home: Path, store_url: str) -> None:
    """Held at one turn's end; approved; handed over at the next, saying how it was approved."""
    _policy(home, "bob", Policy(allow=("carol",), others="hold"))
    pid = post(home, "--to", "bob", "from alice")
    event = {"session_id": "s1", "hook_event_name": "Stop"}
    held = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    assert (0, "") == (held.returncode, held.stdout)
    done, _ = on_terminal(home, "approve", pid, "--as", "bob")
    assert 0 == done.returncode, done.stderr
    after = run_hook(home, "stop", "claude", event, "--as", "bob", "--cooldown", "0")
    reason = json.loads(after.stdout)["reason"]
    assert (pid in reason, APPROVED_LINE in reason.splitlines()) == (True, True)
