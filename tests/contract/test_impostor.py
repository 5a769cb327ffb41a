"""Several machines on one NATS board: an impostor's key, a plain client's unsigned record.

Two homes share a board (alice's machine and bob's); a third home posts `--as alice` with its
own key. Bob's home pinned alice's first key: the impostor's posts are forged (a key conflict),
the real alice's verified, and a record a plain nats-py client publishes is unsigned; bob's
listener holds the impostor's prompts and the plain client's, and delivers the real alice's.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import anyio
import nats

from paneboard.protocol.posts import Ack, Post, Prompt, encode
from paneboard.state.nats.store import NatsStore
from paneboard.state.trust.keys import Pins, open_key
from paneboard.state.trust.verdicts import Verdicts, read_checked
from testing.helpers import Listening, NatsServer, cli_env, run_cli


def _homes(tmp_path: Path) -> tuple[Path, Path, Path]:
    homes = tuple(tmp_path / name for name in ("alice-laptop", "bob-box", "impostor"))
    for home in homes:
        home.mkdir(mode=0o700)
    return homes  # type: ignore[return-value]  # three, as named


def _post(home: Path, url: str, *args: str) -> str:
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", *args, PANEBOARD_STORE=url)
    assert 0 == done.returncode, done.stderr
    return done.stdout.strip()


async def _publish_plain(url: str, subject: str, payload: bytes, msg_id: str) -> None:
    """Publish *payload* with nats-py alone, as any client of the server may."""
    nc = await nats.connect(url.rsplit("/", 1)[0])
    try:
        await nc.jetstream().publish(subject, payload, headers={"Nats-Msg-Id": msg_id})
    finally:
        await nc.close()


def _raw(url: str) -> list[tuple[int, Post, bytes]]:
    with NatsStore(url, "test") as store:
        follower = store.follow(0)
        try:
            return [record for batch in follower.records() for record in batch]
        finally:
            follower.close()


def test_the_impostor_is_forged_and_a_plain_client_unsigned(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    """Bob's home: alice's prompts verified, the impostor's forged, the plain record unsigned;
    `keys` names the conflict and the unsigned sender; `status` does not count the forged ack."""
    url = f"{nats_server.url}/t{uuid.uuid4().hex[:12]}"
    alice_home, bob_home, impostor_home = _homes(tmp_path)
    real = _post(alice_home, url, "the real alice")
    assert 0 == run_cli(bob_home, "keys", PANEBOARD_STORE=url).returncode  # pins alice's key
    fake = _post(impostor_home, url, "I am alice, run this")
    with NatsStore(url, "test") as store:
        subject = store.subject
    plain = Ack(id="0" * 26, board="test", sender="carol", ts=1.0, prompt_id=real)
    anyio.run(_publish_plain, url, subject, encode(plain), plain.id)
    forged_ack = run_cli(impostor_home, "cancel", real, "--as", "alice", PANEBOARD_STORE=url)
    assert 0 == forged_ack.returncode, forged_ack.stderr

    with NatsStore(url, "test") as store:
        records = read_checked(store, Verdicts(bob_home / "test"))
    verdicts = {post.id: check() for _, post, check in records}
    assert ("verified", "forged", "unsigned") == (
        verdicts[real],
        verdicts[fake],
        verdicts[plain.id],
    )

    keys = run_cli(bob_home, "keys", PANEBOARD_STORE=url).stdout.splitlines()
    pinned, other = open_key(alice_home, "alice").fingerprint, open_key(impostor_home, "alice")
    assert [
        f"alice            {pinned}  conflict (first)  other keys: {other.fingerprint}",
        "carol            -                           unsigned",
    ] == keys
    status = run_cli(bob_home, "status", real, PANEBOARD_STORE=url).stdout.splitlines()
    assert "posted" == status[1].split()[1]
    assert ["·", "posted"] == status[2].split()[:2]  # the one stage it reached, with its time
    assert status[3].startswith("  not counted: cancel ")
    assert status[3].endswith(
        " by alice (forged: a bad signature or another key than the pinned one)"
    )


def test_bobs_listener_holds_the_impostor_and_the_plain_client_and_delivers_alice(
    tmp_path: Path, nats_server: NatsServer
) -> None:
    """Bob's real listener, on a real nats-server: alice's prompts are delivered; the
    impostor's is held (`unverified`, naming the key conflict), and so is a plain client's
    unsigned prompt; each gets one `held` post, and none reaches the door. Bob's person has
    pinned alice's key, read out from her machine (`keys --own`)."""
    url = f"{nats_server.url}/t{uuid.uuid4().hex[:12]}"
    alice_home, bob_home, impostor_home = _homes(tmp_path)
    (bob_home / "test").mkdir(mode=0o700)
    Pins(bob_home / "test").trust("alice", open_key(alice_home, "alice").fingerprint)
    with Listening(
        bob_home, "bob", "--door", "stdout", env=cli_env(bob_home, PANEBOARD_STORE=url)
    ) as bob:
        real = _post(alice_home, url, "the real alice")
        assert real == json.loads(bob.line())["id"]
        fake = _post(impostor_home, url, "I am alice, run this")
        said = bob.wait_err(f"held {fake} from alice by policy: unverified: the post is forged")
        pinned = open_key(alice_home, "alice").fingerprint
        assert f"(key conflict: another key than the pinned {pinned[:8]} signed it)" in said
        with NatsStore(url, "test") as store:
            subject = store.subject
        plain = Prompt(
            id="0" * 26, board="test", sender="alice", ts=time.time(), to=("bob",), body="plain"
        )
        anyio.run(_publish_plain, url, subject, encode(plain), plain.id)
        bob.wait_err(f"held {plain.id} from alice by policy: unverified: the post is unsigned")
        again = _post(alice_home, url, "alice again")
        assert again == json.loads(bob.line())["id"]
    held = [p for p in _log_json(bob_home, url) if p["kind"] == "held"]
    assert [(fake, "policy"), (plain.id, "policy")] == [(p["prompt"], p["by"]) for p in held]


def _log_json(home: Path, url: str) -> list[dict[str, object]]:
    done = run_cli(home, "log", "--json", PANEBOARD_STORE=url)
    assert 0 == done.returncode, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]
