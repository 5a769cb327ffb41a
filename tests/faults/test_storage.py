"""Faults in storage: a full disk, a damaged log."""

from __future__ import annotations

import json
import os
import random
import subprocess
import warnings
from pathlib import Path

import pytest

from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Prompt, encode
from paneboard.protocol.signing import verdict
from paneboard.state.filelog.framing import frame
from paneboard.state.filelog.log import LogReader, read_posts
from paneboard.state.trust.keys import verify
from paneboard.state.trust.policy import Policy, write_policy
from paneboard.state.trust.sealing import Sealer
from testing.helpers import Listening, run_cli
from tests.factories import prompt


@pytest.fixture
def small_home(tmp_path: Path) -> Path:
    """A 256 KiB tmpfs as the home (root mounts one; elsewhere the test skips)."""
    home = tmp_path / "small"
    home.mkdir(mode=0o700)
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k,mode=700", "tmpfs", str(home)], check=False
        ).returncode
    ):
        pytest.skip("needs root to mount a small tmpfs")
    yield home
    subprocess.run(["umount", "-l", str(home)], check=False)


@pytest.mark.slow
def test_disk_full(small_home: Path) -> None:
    """Posts fail with one clear line and exit 1 once full; none reported is missing;
    freed, the board works."""
    filler = small_home / "filler"
    filler.write_bytes(b"\0" * 64 * 1024)  # deleted later to free space
    reported, failure = [], None
    for i in range(5000):
        done = run_cli(
            small_home,
            "post",
            "--as",
            "alice",
            "--to",
            "bob",
            "-",
            input=(f"{i} " + "x" * 2000).encode(),
        )
        if done.returncode:
            failure = done
            break
        reported.append(done.stdout.strip())
    assert failure is not None, "the disk never filled"
    assert 1 == failure.returncode and "" == failure.stdout
    assert failure.stderr.startswith("paneboard: cannot ") and failure.stderr.endswith(
        ": No space left on device\n"
    )
    assert 1 == failure.stderr.count("\n")
    ids = [p.id for _, p in read_posts(small_home / "test" / "log")]
    assert reported == ids
    filler.unlink()
    after = run_cli(small_home, "post", "--as", "alice", "--to", "bob", "after freeing space")
    assert 0 == after.returncode, after.stderr
    assert [*reported, after.stdout.strip()] == [
        p.id for _, p in read_posts(small_home / "test" / "log")
    ]


def _prompt(i: int) -> Prompt:
    return prompt(i, board="test", body=f"work item {i} " + "y" * (i % 50))


@pytest.mark.parametrize("round_", range(20))
def test_damaged_log(home: Path, rng: random.Random, round_: int) -> None:
    """Flips, truncations and garbage at random offsets: every undamaged record comes back,
    with warnings, never an exception; a listener on it delivers every undamaged open prompt."""
    posts = [_prompt(i) for i in range(60)]
    sealer = Sealer(home, "alice")  # signed, as alice's commands write them
    frames = [frame(sealer.seal(encode(p))) for p in posts]
    starts = [sum(map(len, frames[:i])) for i in range(len(frames))]
    raw = bytearray(b"".join(frames))
    damaged: set[int] = set()
    for _ in range(rng.randint(1, 4)):
        if not raw:
            break  # truncated to nothing: no byte left to damage
        at = rng.randrange(len(raw))
        hit = max(i for i, s in enumerate(starts) if s <= at)
        how = rng.choice(["flip", "garbage", "truncate"])
        if how == "flip":
            raw[at] ^= 1 << rng.randrange(8)
            damaged.add(hit)
        elif how == "garbage":
            junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
            raw[at:at] = junk
            damaged.add(hit)  # inserted inside (or just before) this record
            starts = [s + len(junk) if s > at else s for s in starts]
        else:
            del raw[at:]
            damaged |= {i for i, s in enumerate(starts) if s + len(frames[i]) > at}
            starts = [s for s in starts if s < at]
    log = home / "test" / "log"
    log.parent.mkdir(mode=0o700)
    log.write_bytes(bytes(raw))
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always", DamagedRecord)
        got = [p.id for _, p in read_posts(log)]
        records = [r for batch in LogReader(log).records() for r in batch]
    expected = [p.id for i, p in enumerate(posts) if i not in damaged]
    assert set(expected) <= set(got) <= {p.id for p in posts}
    # a flip inside a record's signature leaves it readable and forged: held, not delivered
    signed = {p.id for _, p, raw in records if verdict(raw, None, verify, "test") == "verified"}
    (home / "test" / "panes").mkdir(mode=0o700)
    write_policy(home / "test", "bob", Policy(rate=0))  # 60 prompts within a minute
    with Listening(home, "bob", "--door", "stdout") as bob:
        delivered = {json.loads(bob.line())["id"] for _ in range(len(signed))}
    assert (set(expected) <= signed, signed) == (True, delivered)
