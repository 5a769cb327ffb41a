"""Where the `qwen-inbox` door binds its inbox: a folder of this user's, never a name in /tmp
that another user could make first."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from paneboard.agents.qwen_inbox import inbox_folder
from paneboard.protocol.posts import Undelivered
from paneboard.state.filelog.log import read_posts
from testing.helpers import Listening, cli_env, post
from tests.agents.test_qwen_inbox import Inbox, _record

NOBODY = 65534


def test_the_folder_follows_the_scripts_rule(tmp_path: Path) -> None:
    """XDG_RUNTIME_DIR, else XDG_CACHE_HOME, else HOME/.cache; TMPDIR is never used."""
    run, cache, home = (str(tmp_path / n) for n in ("run", "cache", "home"))
    tmp = {"TMPDIR": str(tmp_path / "tmp")}
    assert [
        tmp_path / "run" / "paneboard-qwen",
        tmp_path / "cache" / "paneboard-qwen",
        tmp_path / "home" / ".cache" / "paneboard-qwen",
    ] == [
        inbox_folder({**tmp, "XDG_RUNTIME_DIR": run, "XDG_CACHE_HOME": cache, "HOME": home}),
        inbox_folder({**tmp, "XDG_RUNTIME_DIR": "", "XDG_CACHE_HOME": cache, "HOME": home}),
        inbox_folder({**tmp, "HOME": home}),
    ]


def test_a_folder_another_user_made_in_tmp_does_not_close_the_door(tmp_path: Path) -> None:
    """With XDG_RUNTIME_DIR unset, `nobody` makes TMPDIR/paneboard-qwen-UID first (0700, its
    own): a real listener still delivers, its inbox in HOME/.cache, and posts no
    `undelivered`."""
    squatted = tmp_path / "tmp" / f"paneboard-qwen-{os.getuid()}"
    squatted.mkdir(parents=True, mode=0o700)
    os.chown(squatted, NOBODY, NOBODY)
    # HOME short, whatever the test's own folder: the inbox socket's path fits AF_UNIX's 108 bytes
    user_home, home = Path(tempfile.mkdtemp(prefix="pbq-")), tmp_path / "pb"
    inbox = Inbox(tmp_path, "delivered")
    _record(tmp_path, inbox.path)
    env = cli_env(home, QWEN_HOME=str(tmp_path), TMPDIR=str(tmp_path / "tmp"), HOME=str(user_home))
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        env.pop(name, None)
    args = ("--door", "qwen-inbox", "--parent-pid", str(os.getpid()))
    try:
        with Listening(home, "bob", *args, env=env) as bob:
            pid = post(home, "--to", "bob", "hello")
            bob.wait_err(f"delivered {pid} from alice via qwen-inbox")
    finally:
        inbox.close()
        shutil.rmtree(user_home)
    [frame] = inbox.frames
    assert user_home / ".cache" / "paneboard-qwen" == Path(frame["from"]).parent
    assert [] == [p for _, p in read_posts(home / "test" / "log") if isinstance(p, Undelivered)]
    assert [] == os.listdir(squatted)
