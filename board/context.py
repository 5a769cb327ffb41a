"""Who, where and which board a command acts for: options, then environment, then defaults."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from paneboard.protocol import ids
from paneboard.protocol.names import check_name, to_name
from paneboard.state.paths import BoardPaths, default_board, open_home, user_data_dir
from paneboard.state.stores import (
    check_url,
    connect_url,
    open_store,
    remember_secret,
    split_secret,
    store_environment,
    store_options,
)
from paneboard.state.trust.sealing import Sealer

TYPE_CHECKING = False  # typing's import is a cost `post` does not pay
if TYPE_CHECKING:
    from argparse import Namespace
    from typing import Self

    from paneboard.protocol.posts import Header
    from paneboard.state.abc import Store


class Context:
    """The resolved ``--home``, ``--board``, ``--as`` and ``--json`` of one command."""

    __slots__ = (
        "_reconnect",
        "_store",
        "agent",
        "board",
        "home",
        "json",
        "nats",
        "paths",
        "secret",
        "store_url",
    )

    def __init__(
        self,
        home: Path,
        board: str,
        agent: str,
        *,
        json: bool = False,
        store_url: str = "",
        nats: dict[str, str] | None = None,
        secret: str = "",
    ) -> None:
        self.home = home
        self.board = board
        self.agent = agent
        self.json = json
        self.paths = BoardPaths(home, board)
        self.store_url = store_url  # never with a secret: it is shown and composed
        self.secret = secret  # the secret given with --store or PANEBOARD_STORE, if any
        self.nats = nats or {}
        self._store: Store | None = None
        self._reconnect = False

    def store(self, *, reconnect: bool = False) -> Store:
        """The board's store: the file log, or NATS JetStream with ``--store nats://…``.

        Opened once, and closed with the context; asked to *reconnect* (keep trying for as
        long as it runs) when it was opened without, it is opened again so.
        """
        if self._store is not None and reconnect and not self._reconnect:
            self.close()
        if self._store is None:
            url = connect_url(self.home, self.store_url, self.secret)
            sealer = Sealer(self.home, self.agent)  # every post written is signed
            self._store = open_store(
                url, self.paths.dir, self.board, self.nats, sealer=sealer, reconnect=reconnect
            )
            self._reconnect = reconnect
            if self.secret:  # it connected: later commands name only the URL without it
                remember_secret(open_home(self.home), self.store_url, self.secret)
        return self._store

    def close(self) -> None:
        """Close the store, if one was opened (a later `store()` opens it again)."""
        store, self._store = self._store, None
        if store is not None:
            store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @classmethod
    def resolve(
        cls,
        home: str | None,
        board: str | None,
        agent: str | None,
        *,
        json: bool = False,
        store: str | None = None,
        nats: dict[str, str] | None = None,
    ) -> Context:
        """Check every name and the home; create nothing (writers call ``paths.ensure()``)."""
        env = os.environ
        if board is None:
            board = env.get("PANEBOARD_BOARD") or default_board(os.getcwd())
        if agent is None:
            agent = env.get("PANEBOARD_AGENT") or to_name(login_name())
        if home is None:
            home = env.get("PANEBOARD_HOME") or user_data_dir()
        board, agent = check_name("board", board), check_name("agent", agent)
        home_path = open_home(home, create=False)
        store = env.get("PANEBOARD_STORE", "") if store is None else store
        nats = nats or {
            key: env[f"PANEBOARD_NATS_{key.upper()}"]
            for key in ("creds", "tls_ca")
            if env.get(f"PANEBOARD_NATS_{key.upper()}")
        }
        store, secret = split_secret(check_url(store))
        return cls(home_path, board, agent, json=json, store_url=store, nats=nats, secret=secret)

    def acting_as(self, agent: str) -> Context:
        """This context (home, board, store and its options) acting as another agent."""
        return Context(
            self.home,
            self.board,
            agent,
            json=self.json,
            store_url=self.store_url,
            nats=self.nats,
            secret=self.secret,
        )

    def store_options(self) -> tuple[tuple[str, str], ...]:
        """The options naming this context's store, for a command line ((): the file log)."""
        return store_options(self.store_url, self.nats)

    @classmethod
    def from_args(
        cls, args: Namespace, *, board: str | None = None, agent: str | None = None
    ) -> Context:
        """The context a command's options name; *board* and *agent* stand in for missing ones."""
        nats = {k: v for k, v in (("creds", args.nats_creds), ("tls_ca", args.nats_tls_ca)) if v}
        return cls.resolve(
            args.home,
            board if args.board is None else args.board,
            agent if args.agent is None else args.agent,
            json=args.json,
            store=args.store,
            nats=nats,
        )

    def child_env(self) -> dict[str, str]:
        """The environment that makes a paneboard command act as this context.

        It names the store without its secret: a secret given to this command is kept in the
        home first, where the child finds it.
        """
        if self.secret:
            remember_secret(open_home(self.home), self.store_url, self.secret)
        env = {
            "PANEBOARD_HOME": str(self.home),
            "PANEBOARD_BOARD": self.board,
            "PANEBOARD_AGENT": self.agent,
        }
        env.update(store_environment(self.store_url, self.nats))
        return env


def header(board: str, sender: str, ts: float | None = None) -> Header:
    """A new post's id, board, sender and time (now, unless *ts* is given)."""
    return ids.header(board, sender, time.time() if ts is None else ts, os.urandom(10))


def login_name() -> str:
    name = os.environ.get("LOGNAME") or os.environ.get("USER")
    if name:
        return name
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def executable() -> str:
    """The absolute path of the paneboard command being run, for composed texts and hooks."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0) == "paneboard" and os.path.exists(argv0):
        return os.path.abspath(argv0)
    beside = Path(sys.executable).with_name("paneboard")
    return str(beside) if beside.exists() else "paneboard"
