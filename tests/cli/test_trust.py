"""`keys`, `trust`, `policy`, `approve`, `refuse` through the real command line, on each store.

A person's decision is confirmed on a real terminal (a pseudo-terminal that is the process's
controlling terminal); a process with no controlling terminal is refused and writes nothing.
"""

from __future__ import annotations

import fcntl
import os
import select
import subprocess
import termios
from pathlib import Path

import pytest

from paneboard.board.context import Context, header
from paneboard.protocol.posts import Ack, Held, Post
from paneboard.state.trust.keys import open_key
from paneboard.state.trust.sealing import Sealer
from testing.helpers import PANEBOARD, cli_env, post, run_cli


def on_terminal(
    home: Path, *args: str, answer: str = "y"
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run `paneboard ARGS` with a pseudo-terminal as its controlling terminal, typing
    *answer*; the finished process and what it wrote on the terminal."""
    master, slave = os.openpty()

    def take_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    try:
        proc = subprocess.Popen(
            [*PANEBOARD, *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(home),
            preexec_fn=take_terminal,  # noqa: PLW1509  # the only way to give it a terminal
        )
    finally:
        os.close(slave)
    os.write(master, answer.encode() + b"\n")
    out, err = proc.communicate(timeout=30)
    shown = _drain(master)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out.decode(), err.decode())
    return done, shown


def _drain(master: int) -> str:
    chunks = []
    try:
        while select.select([master], [], [], 0.5)[0]:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:  # EIO: the terminal's other side is closed
        pass
    finally:
        os.close(master)
    return b"".join(chunks).decode(errors="replace")


def no_terminal(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `paneboard ARGS` in a session of its own, with no controlling terminal."""
    done = subprocess.run(
        [*PANEBOARD, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=cli_env(home),
        start_new_session=True,
        timeout=30,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def _context(home: Path, agent: str) -> Context:
    """The context of a command acting as *agent* on board `test` of the store under test."""
    return Context.resolve(str(home), "test", agent, store=os.environ.get("PANEBOARD_TEST_STORE"))


def _append(home: Path, post_: Post, signer_home: Path | None = None) -> None:
    """Append *post_* as its sender would, signed in *signer_home* (by default, *home*)."""
    with _context(home, post_.sender) as ctx:
        ctx.paths.ensure()
        store = ctx.store()
        if signer_home is not None:
            store.sealer = Sealer(signer_home, post_.sender)
        store.append([post_])


def _held(home: Path, prompt_id: str) -> None:
    held = Held(
        **header("test", "bob"), prompt_id=prompt_id, door="exec", by="policy", reason="unverified"
    )
    _append(home, held)


def _log(home: Path) -> str:
    done = run_cli(home, "log")
    assert 0 == done.returncode, done.stderr
    return done.stdout


def _stage_of_bob(home: Path, prompt_id: str) -> str:
    done = run_cli(home, "status", prompt_id)
    assert 0 == done.returncode, done.stderr
    return next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("  bob "))


def test_approve_on_the_terminal_lets_a_held_prompt_through(home: Path, store_url: str) -> None:
    """Confirmed with `y` on the controlling terminal, `approve` writes `approved`."""
    pid = post(home, "--to", "bob", "deploy it")
    _held(home, pid)
    done, shown = on_terminal(home, "approve", pid[:8], "--as", "bob")
    assert (0, "") == (done.returncode, done.stderr)
    assert f"approve prompt {pid} for `bob` on board `test`? [y/N]" in shown
    assert "approved" == _stage_of_bob(home, pid)


def test_approve_without_a_terminal_is_refused_and_writes_nothing(
    home: Path, store_url: str
) -> None:
    """An agent's command has no controlling terminal: one line, exit 1, the log unchanged."""
    pid = post(home, "--to", "bob", "deploy it")
    _held(home, pid)
    before = _log(home)
    done = no_terminal(home, "approve", pid, "--as", "bob")
    assert 1 == done.returncode
    assert (
        f"paneboard: approve prompt {pid} for `bob` on board `test`: it is asked on the "
        "controlling terminal (/dev/tty), and this process has none; nothing written\n"
    ) == done.stderr
    assert (before, "held") == (_log(home), _stage_of_bob(home, pid))


def test_an_answer_other_than_yes_writes_nothing(home: Path, store_url: str) -> None:
    """`n` on the terminal: exit 1, not confirmed, the prompt still held."""
    pid = post(home, "--to", "bob", "deploy it")
    _held(home, pid)
    done, _ = on_terminal(home, "approve", pid, "--as", "bob", answer="n")
    said = f"paneboard: approve prompt {pid} for `bob` on board `test`: not confirmed; "
    assert (1, said + "nothing written\n") == (done.returncode, done.stderr)
    assert "held" == _stage_of_bob(home, pid)


def test_refused_makes_the_senders_wait_exit_1_naming_the_reason(
    home: Path, store_url: str
) -> None:
    """`refuse --reason` ends the prompt for bob; alice's `wait` says why, exit 1."""
    pid = post(home, "--to", "bob", "rm -rf build")
    done, _ = on_terminal(home, "refuse", pid, "--as", "bob", "--reason", "not today")
    assert (0, "") == (done.returncode, done.stderr)
    waited = run_cli(home, "wait", pid, "--as", "alice", "--timeout", "10")
    assert (1, f"paneboard: prompt {pid} was refused: not today (by bob)\n") == (
        waited.returncode,
        waited.stderr,
    )


def test_keys_lists_pinned_unsigned_and_conflict(
    home: Path, store_url: str, tmp_path: Path
) -> None:
    """The home's own agents are pinned to their keys; a post under such a name with another key
    is a conflict; an agent whose posts are unsigned is unsigned."""
    pid = post(home, "--to", "bob", "hello")
    impostor = tmp_path / "impostor"
    impostor.mkdir(mode=0o700)
    _append(home, Ack(**header("test", "bob"), prompt_id=pid))
    with _context(home, "carol") as ctx:
        unsigned = Ack(**header("test", "carol"), prompt_id=pid)
        store = ctx.store()
        store.sealer = None
        store.append([unsigned])
    _append(home, Ack(**header("test", "alice"), prompt_id=pid), signer_home=impostor)
    done = run_cli(home, "keys")
    assert 0 == done.returncode, done.stderr
    alice, bob = open_key(home, "alice").fingerprint, open_key(home, "bob").fingerprint
    other = open_key(impostor, "alice").fingerprint
    assert [
        f"alice            {alice}  conflict (own)  other keys: {other}",
        f"bob              {bob}  pinned (own)",
        "carol            -                           unsigned",
    ] == done.stdout.splitlines()


def test_status_shows_a_forged_ack_apart(home: Path, store_url: str, tmp_path: Path) -> None:
    """An ack signed by another key than bob's pinned one closes nothing; status says so."""
    pid = post(home, "--to", "bob", "hello")
    _append(home, Held(**header("test", "bob"), prompt_id=pid, door="exec", by="agent", reason="r"))
    impostor = tmp_path / "impostor"
    impostor.mkdir(mode=0o700)
    forged = Ack(**header("test", "bob"), prompt_id=pid)
    _append(home, forged, signer_home=impostor)
    done = run_cli(home, "status", pid)
    assert 0 == done.returncode, done.stderr
    lines = done.stdout.splitlines()
    assert "held" == lines[1].split()[1]
    assert (["·", "posted"], ["·", "held"]) == (lines[2].split()[:2], lines[3].split()[:2])
    assert (
        f"  not counted: ack {forged.id} by bob (forged: a bad signature or another key than "
        "the pinned one)"
    ) == lines[4]


def test_trust_pins_another_key_after_confirmation(
    home: Path, store_url: str, tmp_path: Path
) -> None:
    """`trust AGENT FINGERPRINT` on the terminal makes the other key dave's pin, and says that
    running listeners pick it up; the home's own agent keeps its own key."""
    pid = post(home, "--to", "bob", "hello")
    laptop, desk = tmp_path / "laptop", tmp_path / "desk"
    laptop.mkdir(mode=0o700)
    desk.mkdir(mode=0o700)
    _append(home, Ack(**header("test", "dave"), prompt_id=pid), signer_home=laptop)
    run_cli(home, "keys")  # pins dave's first key
    _append(home, Ack(**header("test", "dave"), prompt_id=pid), signer_home=desk)
    other = open_key(desk, "dave").fingerprint
    own = run_cli(desk, "keys", "--own", "--as", "dave")
    assert (0, f"{other}\n") == (own.returncode, own.stdout)
    refused = no_terminal(home, "trust", "dave", other)
    assert 1 == refused.returncode and "nothing written" in refused.stderr
    done, shown = on_terminal(home, "trust", "dave", other)
    said = f"paneboard: pinned dave: {other}; running listeners pick it up\n"
    assert (0, said) == (done.returncode, done.stderr), shown
    keys = run_cli(home, "keys").stdout.splitlines()
    assert keys[1].startswith(f"dave             {other}  conflict (trusted)  other keys: ")
    alice = open_key(home, "alice").fingerprint
    mine, _ = on_terminal(home, "trust", "alice", other)
    assert (
        1,
        f"paneboard: `alice` is this home's own agent: its key {alice} is its pin on every board\n",
    ) == (mine.returncode, mine.stderr)


def test_trust_refuses_what_is_not_a_fingerprint(home: Path) -> None:
    done = run_cli(home, "trust", "alice", "not-a-key")
    assert (1, "paneboard: fingerprint 'not-a-key' is not 26 of a-z and 2-7\n") == (
        done.returncode,
        done.stderr,
    )


def test_policy_alone_prints_it_and_a_change_is_confirmed(home: Path) -> None:
    """`policy` prints the default; a change without a terminal is refused; on it, stored."""
    shown = run_cli(home, "policy", "--as", "bob")
    assert [
        "policy of `bob` on board `test`",
        "  allowed:    (none listed)",
        "  others:     deliver",
        "  unverified: hold",
        "  rate:       30 prompts a minute from one sender",
        "  loop:       10 replies deep between two agents",
        "  first contact: hold (a name's first key, on a shared store)",
        "  wake:       never (the listener stops with the session)",
        "  deliver:    body (the prompt's text; a sender's --notice still comes as a notice)",
    ] == shown.stdout.splitlines()
    refused = no_terminal(home, "policy", "--as", "bob", "--others", "hold")
    assert 1 == refused.returncode
    assert not (home / "test" / "panes" / "bob.policy").exists()
    done, _ = on_terminal(
        home, "policy", "--as", "bob", "--allow", "alice", "--others", "hold", "--rate", "0"
    )
    assert 0 == done.returncode, done.stderr
    assert ["  allowed:    alice", "  others:     hold"] == done.stdout.splitlines()[1:3]
    assert "  rate:       off" == run_cli(home, "policy", "--as", "bob").stdout.splitlines()[4]
    done, _ = on_terminal(home, "policy", "--as", "bob", "--allow-none")
    assert (0, "  allowed:    (none listed)") == (done.returncode, done.stdout.splitlines()[1])
    both = run_cli(home, "policy", "--as", "bob", "--allow", "carol", "--allow-none")
    assert (2, "") == (both.returncode, both.stdout)
    assert 1 == len(both.stderr.splitlines()), both.stderr


def test_policy_deliver_is_a_change_confirmed_like_any_other(home: Path) -> None:
    """`--deliver notice` without a terminal is refused and writes nothing; on one, it is
    stored and printed; a word it does not know is a usage error."""
    refused = no_terminal(home, "policy", "--as", "bob", "--deliver", "notice")
    assert 1 == refused.returncode
    assert not (home / "test" / "panes" / "bob.policy").exists()
    done, _ = on_terminal(home, "policy", "--as", "bob", "--deliver", "notice")
    assert 0 == done.returncode, done.stderr
    shown = run_cli(home, "policy", "--as", "bob").stdout.splitlines()[-1]
    assert shown.startswith("  deliver:    notice (paneboard's notice only")
    done, _ = on_terminal(home, "policy", "--as", "bob", "--deliver", "auto")
    assert "auto (a notice for a body over 4096 bytes or a burst of more than 10)" in done.stdout
    bad = run_cli(home, "policy", "--as", "bob", "--deliver", "everything")
    assert (2, "") == (bad.returncode, bad.stdout)


@pytest.mark.parametrize("store_url", ["file"], indirect=True)
def test_approve_refuses_a_prompt_that_is_not_held(home: Path, store_url: str) -> None:
    pid = post(home, "--to", "bob", "hello")
    done, _ = on_terminal(home, "approve", pid, "--as", "bob")
    assert (1, f"paneboard: prompt {pid} is posted for `bob`, not held\n") == (
        done.returncode,
        done.stderr,
    )
