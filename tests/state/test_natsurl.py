"""A NATS store's address: seeds, prefix, replicas; refused in one line naming the fault."""

from __future__ import annotations

from pathlib import Path

import pytest

from paneboard.protocol.errors import BadInput
from paneboard.state.nats.url import FORM, NatsAddress, parse_url, shown, split_secret, with_secret
from testing.helpers import run_cli


def test_seeds_prefix_and_replicas() -> None:
    """Every listed server is a seed; the credentials before the first apply to all."""
    url = "nats://u:pw@a:4222,b:4223,c/team.x?replicas=3"
    expected = NatsAddress(
        ("nats://u:pw@a:4222", "nats://u:pw@b:4223", "nats://u:pw@c"), "team~x", 3
    )
    assert expected == parse_url(url)
    assert "nats://a:4222,b:4223,c" == parse_url(url).shown
    assert "nats://a:4222,b:4223,c/team.x?replicas=3" == shown(url)


def test_one_server_one_replica_by_default() -> None:
    assert NatsAddress(("tls://h:1",), "paneboard", 1) == parse_url("tls://h:1")
    assert "nats://h:1?replicas=2" == shown("nats://s3cret@h:1?replicas=2")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "http://h:1",
            f"--store 'http://h:1' is not a {FORM} address",
        ),
        (
            "nats://u:pw@h:1,:2",
            f"--store 'nats://h:1,:2': each server must be HOST or HOST:PORT ({FORM})",
        ),
        (
            "nats://h:99999",
            f"--store 'nats://h:99999': each server must be HOST or HOST:PORT ({FORM})",
        ),
        ("nats://h:1?replicas=0", "--store 'nats://h:1': replicas='0' is not a number from 1 to 5"),
        ("nats://h:1?replicas=x", "--store 'nats://h:1': replicas='x' is not a number from 1 to 5"),
        ("nats://h:1?copies=3", "--store 'nats://h:1': unknown option 'copies' (only replicas=N)"),
    ],
)
def test_a_bad_address_is_refused(url: str, message: str) -> None:
    with pytest.raises(BadInput) as refused:
        parse_url(url)
    assert message == str(refused.value)


def test_the_command_line_refuses_before_writing(home: Path) -> None:
    """One line, exit 1, no secret shown, nothing written in the home."""
    url = "nats://user:s3cret@127.0.0.1:1?replicas=6"
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi", "--store", url)
    said = "paneboard: --store 'nats://127.0.0.1:1': replicas='6' is not a number from 1 to 5\n"
    assert (1, "", said) == (done.returncode, done.stdout, done.stderr)
    assert [] == list(home.iterdir())


@pytest.mark.parametrize(
    ("url", "bare", "secret"),
    [
        ("nats://u1:pw@h:1/p?replicas=2", "nats://h:1/p?replicas=2", "u1:pw"),
        ("tls://T0KEN@a:1,b:2", "tls://a:1,b:2", "T0KEN"),
        ("nats://u1:p/w?x@h:1/p", "nats://h:1/p", "u1:p/w?x"),
        ("nats://u1:p@w@h:1", "nats://h:1", "u1:p@w"),
        ("u1:pw@h:1", "h:1", "u1:pw"),
        ("nats://h:1/p", "nats://h:1/p", ""),
    ],
)
def test_the_secret_is_cut_out_whole(url: str, bare: str, secret: str) -> None:
    """Everything up to the last `@` is the secret: a password holding `/`, `?` or `@` is
    never shown in part, and putting it back gives the URL again."""
    assert (bare, secret) == split_secret(url)
    assert bare == shown(url)
    if "://" in url:
        assert url == with_secret(bare, secret)


def test_a_password_holding_a_slash_is_not_in_the_refusal() -> None:
    with pytest.raises(BadInput) as refused:
        parse_url("http://u1:pa/ss@h")
    assert f"--store 'http://h' is not a {FORM} address" == str(refused.value)
