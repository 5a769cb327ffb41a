"""A NATS store's address: ``nats://HOST:PORT[,HOST:PORT…][/PREFIX][?replicas=N]``.

Every listed server is a seed the client connects to and fails over between (a cluster's
servers also announce each other). ``tls://`` is the same with TLS required. A
``USER:PASSWORD@`` or ``TOKEN@`` before the first server (the secret: everything up to the
last ``@``) applies to every server, and never appears in a message: `shown` takes it out.
``replicas`` is how many copies JetStream keeps of a board's stream and of the presence
bucket when paneboard creates them (1 to 5; default 1; 3 on a three-node cluster). Pure
parsing: no I/O, and cheap to import.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import parse_qsl

from paneboard.protocol.errors import BadInput

FORM = "nats://HOST:PORT[,HOST:PORT…][/PREFIX][?replicas=N]"
MAX_REPLICAS = 5  # JetStream's own limit


class NatsAddress(NamedTuple):
    servers: tuple[str, ...]  # one URL per seed, credentials included
    prefix: str  # subject and stream prefix, a dot written ``~``
    replicas: int

    @property
    def shown(self) -> str:
        """The seeds as messages show them: without any user or password."""
        scheme = self.servers[0].partition("://")[0]
        return f"{scheme}://" + ",".join(_host(server) for server in self.servers)


def shown(url: str) -> str:
    """*url* as messages show it: without any user, password or token in it."""
    return split_secret(url)[0]


def split_secret(url: str) -> tuple[str, str]:
    """*url* without its secret (``USER:PASSWORD`` or ``TOKEN``), and the secret ("" if none).

    The secret is everything from the scheme to the last ``@``: a password holding ``/``, ``?``
    or ``@`` is cut out whole, never shown in part.
    """
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    secret, _, rest = rest.rpartition("@")
    return f"{scheme}{sep}{rest}", secret


def with_secret(url: str, secret: str) -> str:
    """*url* (without a secret) with *secret* put before its first server."""
    if not secret:
        return url
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{secret}@{rest}"


def _host(server: str) -> str:
    return server.partition("://")[2].rpartition("@")[2]


def parse_url(url: str) -> NatsAddress:
    """Parse *url*; `BadInput` (naming the part at fault, never a secret) if it is not one."""
    bare, auth = split_secret(url)
    scheme, sep, rest = bare.partition("://")
    if not sep or scheme not in ("nats", "tls"):
        raise BadInput(f"--store {bare!r} is not a {FORM} address")
    rest, _, query = rest.partition("?")
    hosts, _, prefix = rest.partition("/")
    shown = f"{scheme}://{hosts}"
    seeds = hosts.split(",")
    if not all(_valid_host(seed) for seed in seeds):
        raise BadInput(f"--store {shown!r}: each server must be HOST or HOST:PORT ({FORM})")
    user = f"{auth}@" if auth else ""
    servers = tuple(f"{scheme}://{user}{seed}" for seed in seeds)
    prefix = (prefix.strip("/") or "paneboard").replace(".", "~")
    return NatsAddress(servers, prefix, _replicas(shown, query))


def _valid_host(seed: str) -> bool:
    host, colon, port = seed.rpartition(":") if ":" in seed else (seed, "", "")
    port_ok = not colon or (port.isdigit() and 0 < int(port) < 65536)
    return bool(host) and "/" not in host and port_ok


def _replicas(shown: str, query: str) -> int:
    replicas = 1
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key != "replicas":
            raise BadInput(f"--store {shown!r}: unknown option {key!r} (only replicas=N)")
        if not (value.isdigit() and 1 <= int(value) <= MAX_REPLICAS):
            wrong = f"replicas={value!r} is not a number from 1 to {MAX_REPLICAS}"
            raise BadInput(f"--store {shown!r}: {wrong}")
        replicas = int(value)
    return replicas
