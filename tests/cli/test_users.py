"""A person's decisions out of an agent's reach (docs/trust.md, "An agent that cannot make your
decisions"), with two real Unix users on one NATS board.

The person's user runs the agent's listener in the person's home: the listener is what reads the
policy, the pins and the `approved` posts, so it is a process of the person's. The agent's user
has a home of its own and reaches the same board. Every command of the agent's side runs as
the agent's user on a pseudo-terminal (`script -qec`, Python's `pty`) whose other side types
the answer, so the terminal confirmation is answered: the agent's user still cannot approve
its own held prompt, loosen the policy or pin a key, while the person's user can.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing.helpers import PANEBOARD, Listening, NatsServer
from tests.cli.agentpty import Shown, on_pty, through_script

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(map(shutil.which, ("useradd", "userdel", "setpriv", "script"))),
    reason="makes two Unix users (useradd) and runs commands as them (setpriv): needs root and "
    "util-linux; CI runs as root",
)
APPROVED_LINE = (
    "[paneboard] held by paneboard, then approved at a terminal (`paneboard approve`, "
    "`paneboard trust` or `paneboard top`)"
)


@dataclass(frozen=True)
class User:
    """A Unix user made for the test, with a folder of its own and a paneboard home in it."""

    name: str
    uid: int
    gid: int
    folder: Path
    store: str

    @property
    def home(self) -> Path:
        return self.folder / "pb"

    @property
    def prefix(self) -> tuple[str, ...]:
        """What runs a command as this user, with no other group. It goes right before the
        interpreter, never before a shell that starts it: setpriv finds its command before
        root's capabilities end, so a Python under a folder the users cannot search (a pyenv in
        /root) still starts."""
        return ("setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--")

    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(self.folder),
            "LANG": "C.UTF-8",
            "PANEBOARD_HOME": str(self.home),
            "PANEBOARD_BOARD": "work",
            "PANEBOARD_STORE": self.store,
        }

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`paneboard ARGS` as this user, with no terminal."""
        return subprocess.run(
            [*self.prefix, *PANEBOARD, *args],
            env=self.env(),
            capture_output=True,
            text=True,
            start_new_session=True,
            timeout=60,
            check=False,
        )

    def on_pty(self, *args: str, answer: str = "y") -> Shown:
        """`paneboard ARGS` as this user, on a pseudo-terminal opened with Python's `pty`."""
        return on_pty([*PANEBOARD, *args], self.env(), answer, prefix=self.prefix)

    def through_script(self, *args: str, answer: str = "y") -> Shown:
        """`paneboard ARGS` as this user, under `script -qec`, the answer from a pipe."""
        return through_script([*PANEBOARD, *args], self.env(), answer, prefix=self.prefix)


def _make_user(base: Path, role: str, store: str) -> User:
    name = f"pb-{role}-{uuid.uuid4().hex[:6]}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--user-group", "--shell", "/bin/false", name],
        check=True,
        capture_output=True,
    )
    entry = pwd.getpwnam(name)
    folder = base / role
    folder.mkdir(mode=0o700)
    os.chown(folder, entry.pw_uid, entry.pw_gid)
    return User(name, entry.pw_uid, entry.pw_gid, folder, store)


@pytest.fixture
def users(nats_server: NatsServer) -> Iterator[tuple[User, User]]:
    """The person's user and the agent's, each with a private folder, on one NATS board."""
    base = Path(tempfile.mkdtemp(prefix="pb-users-"))
    base.chmod(0o755)
    store = f"{nats_server.url}/u{uuid.uuid4().hex[:12]}"
    made: list[User] = []
    try:
        made = [_make_user(base, "person", store), _make_user(base, "agent", store)]
        ran = subprocess.run(
            [*made[1].prefix, sys.executable, "-c", "import paneboard"], check=False
        )
        if ran.returncode != 0:
            pytest.skip(f"another user cannot run {sys.executable} with paneboard")
        yield made[0], made[1]
    finally:
        for user in made:
            subprocess.run(["userdel", user.name], check=False, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _post(sender_home: Path, store: str, body: str) -> str:
    """alice, on another home (root's, standing for another machine), posts to bob."""
    env = {**os.environ, "PANEBOARD_HOME": str(sender_home), "PANEBOARD_BOARD": "work"}
    done = subprocess.run(
        [*PANEBOARD, "post", "--as", "alice", "--to", "bob", "--store", store, body],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


def _stage(person: User, pid: str) -> tuple[str, list[str]]:
    """bob's stage of *pid* as the person's home reads it, and the posts it did not count."""
    done = person.run("status", pid, "--json")
    assert 0 == done.returncode, done.stderr
    status = json.loads(done.stdout)
    doubted = [f"{d['kind']} {d['verdict']}" for d in status["doubted"]]
    return status["recipients"]["bob"]["stage"], doubted


_APPROVE_AS_AGENT = """
import sys
from paneboard.board.context import Context, header
from paneboard.protocol.posts import Approved
with Context.resolve(None, None, "bob") as ctx:
    ctx.paths.ensure()
    ctx.store().append([Approved(**header(ctx.board, "bob"), prompt_id=sys.argv[1])])
"""


def test_the_agents_user_cannot_make_the_persons_decisions_and_the_person_can(
    users: tuple[User, User], tmp_path: Path
) -> None:
    person, agent = users
    alice = tmp_path / "alice"
    alice.mkdir(mode=0o700)
    # The person holds what is not from an allowed sender, on a terminal of their own (a first
    # key on the shared board is let through to that rule: first contact is not the subject).
    held_policy = person.on_pty(
        "policy", "--as", "bob", "--others", "hold", "--first-contact", "deliver"
    )
    assert 0 == held_policy.returncode, held_policy.text
    policy_file = person.home / "work" / "panes" / "bob.policy"
    with Listening(
        person.home, "bob", "--door", "stdout", env=person.env(), prefix=person.prefix
    ) as gate:
        first = _post(alice, person.store, "deploy to prod")
        gate.wait_err(f"held {first} from alice by policy: not allowed")
        assert 0 == person.run("keys").returncode  # the person's home pins bob's key: its own
        pins, policy = (person.home / "work" / "pins").read_bytes(), policy_file.read_bytes()

        # The agent's user, on a pseudo-terminal it opened, answering yes itself:
        # the person's home is out of its reach: nothing there can be read, let alone changed.
        for args in (
            ("approve", first, "--as", "bob"),
            ("policy", "--as", "bob", "--others", "deliver"),
            ("trust", "alice", "a" * 26),
        ):
            tried = agent.through_script(*args, "--home", str(person.home))
            assert (1, 0) == (tried.returncode, tried.asked), tried.text
            assert f"home {person.home}" in tried.text, tried.text
        written = subprocess.run(
            [*agent.prefix, "sh", "-c", f"echo 'alice {'a' * 26}' >> {person.home}/work/pins"],
            capture_output=True,
            check=False,
        )
        assert 0 != written.returncode
        # From its own home on the same board it may write what it likes: `approve` (its
        # confirmation answered on its own terminal), and an `approved` post under bob's name,
        # signed with the only key for bob it has.
        agent.through_script("approve", first, "--as", "bob")
        raw = subprocess.run(
            [*agent.prefix, sys.executable, "-c", _APPROVE_AS_AGENT, first],
            env=agent.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == raw.returncode, raw.stderr
        loosened = agent.on_pty("policy", "--as", "bob", "--others", "deliver", "--rate", "0")
        assert 0 == loosened.returncode, loosened.text  # its own home's policy, read by no gate
        trusted = agent.on_pty("trust", "alice", "a" * 26)
        assert 0 == trusted.returncode, trusted.text  # its own home's pins
        # None of it counts for the person: the prompt stays held, the approvals forged.
        stage, doubted = _stage(person, first)
        assert "held" == stage
        assert doubted and {"approved forged"} == set(doubted), doubted
        second = _post(alice, person.store, "rotate the keys")
        gate.wait_err(f"held {second} from alice by policy: not allowed")
        assert (pins, policy) == (
            (person.home / "work" / "pins").read_bytes(),
            policy_file.read_bytes(),
        )

        # The person's user decides: approve (delivered, saying how), then the policy.
        approved = person.on_pty("approve", first, "--as", "bob")
        assert (0, 1) == (approved.returncode, approved.asked), approved.text
        delivered = json.loads(gate.line(timeout=30))
        assert (first, True) == (delivered["id"], APPROVED_LINE in delivered["text"].splitlines())
        allowed = person.on_pty("policy", "--as", "bob", "--allow", "alice")
        assert 0 == allowed.returncode, allowed.text
        third = _post(alice, person.store, "and this one")
        assert third == json.loads(gate.line(timeout=30))["id"]
        assert "held" == _stage(person, second)[0]  # decided once: waits for its own approval
    fingerprint = "b" * 26
    pinned = person.on_pty("trust", "carol", fingerprint)
    assert 0 == pinned.returncode, pinned.text
    assert f"carol {fingerprint}" in (person.home / "work" / "pins").read_text()
