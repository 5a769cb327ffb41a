"""Where boards live: the home folder, a board's files, and the default names.

Everything here is standard library only, because `paneboard post` imports it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

from paneboard.protocol.errors import BadInput, BoardIOError
from paneboard.protocol.names import check_name, to_name

APP = "paneboard"


def user_data_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """platformdirs' user data dir for paneboard, computed without importing it on Linux."""
    if sys.platform.startswith("linux"):
        base = environ.get("XDG_DATA_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.local/share")
        return os.path.join(base, APP)
    import platformdirs  # macOS and Windows: its rules are worth its import there

    return platformdirs.user_data_dir(APP, appauthor=False)


def git_common_dir(cwd: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """What ``git rev-parse --git-common-dir`` answers in *cwd* (absolute),
    found by reading files."""
    if environ.get("GIT_COMMON_DIR"):
        return os.path.abspath(os.path.join(cwd, environ["GIT_COMMON_DIR"]))
    gitdir = (
        os.path.abspath(os.path.join(cwd, environ["GIT_DIR"])) if environ.get("GIT_DIR") else None
    )
    here = os.path.abspath(cwd)
    while gitdir is None:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
        elif os.path.isfile(dotgit):
            gitdir = _read_gitfile(dotgit)
        elif _is_bare_repo(here):
            gitdir = here
        else:
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent
    commondir = os.path.join(gitdir, "commondir")
    if os.path.isfile(commondir):
        with open(commondir, encoding="utf-8") as f:
            return os.path.normpath(os.path.join(gitdir, f.read().strip()))
    return os.path.normpath(gitdir)


def _read_gitfile(path: str) -> str | None:
    with open(path, encoding="utf-8") as f:
        line = f.readline().strip()
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(path), line[len("gitdir:") :].strip()))


def _is_bare_repo(path: str) -> bool:
    join = os.path.join
    return (
        os.path.isfile(join(path, "HEAD"))
        and os.path.isdir(join(path, "objects"))
        and os.path.isdir(join(path, "refs"))
    )


def default_board(cwd: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """The main checkout's folder name when *cwd* is in a git repository, else ``default``."""
    common = git_common_dir(cwd, environ)
    if common is None:
        return "default"
    name = os.path.basename(common)
    if name == ".git":
        name = os.path.basename(os.path.dirname(common))
    elif name.endswith(".git"):
        name = name[: -len(".git")]
    return to_name(name)


def open_home(path: str | os.PathLike[str], *, create: bool = True) -> Path:
    """The home folder, created 0700 with its missing parents 0700, checked to be a folder
    of this user that no one else can write (`BadInput` otherwise), and writable."""
    home = Path(path).absolute()
    try:
        st = os.stat(home)
    except (FileNotFoundError, NotADirectoryError):
        if not create:
            return home
        try:
            _make_private(home)
        except OSError as exc:
            raise BoardIOError(f"home {home} cannot be created: {exc.strerror}") from exc
        st = os.stat(home)
    except OSError as exc:
        raise BoardIOError(f"home {home} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise BoardIOError(f"home {home} is not a folder")
    if problem := not_private("home", home, st):
        raise BadInput(problem)
    if create and not os.access(home, os.W_OK | os.X_OK):
        raise BoardIOError(f"home {home} is not writable")
    return home


def _make_private(folder: Path) -> None:
    """Create *folder* and each missing parent 0700, whatever the umask."""
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:
            continue  # made meanwhile by another process
        os.chmod(each, 0o700)


_OWN_HOME = "use a private folder of your own (--home or PANEBOARD_HOME)"


def not_private(kind: str, path: Path, st: os.stat_result) -> str | None:
    """Why *path* (the home, or a *kind* of file or folder in it, whose lstat is *st*) is not
    private to this user: a symlink, another owner, or writable by group or others; None if
    it is."""
    mode, folder = stat.S_IMODE(st.st_mode), stat.S_ISDIR(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return f"{kind} {path} is a symlink; refusing to follow it"
    if st.st_uid != os.geteuid():
        why = f"{kind} {path} belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()})"
        return f"{why}; {_OWN_HOME if kind == 'home' else 'move it away'}"
    if not mode & 0o022:
        return None
    why = f"{kind} {path} is writable by others (mode {mode:o})"
    if folder and mode & stat.S_ISVTX:  # a folder made to be shared, such as /tmp
        return f"{why}; {_OWN_HOME}"
    return f"{why}; fix it with: chmod {700 if folder else 600} {path}"


class PaneFiles:
    """The files of one agent's pane on a board, ``panes/AGENT.*``: its pane lock, delivered
    keys, checkpoint, presence, transcript mark (how far its conversation file was read), its
    listener's log, the Stop hook's last check, the agent's policy on the board, its wakes, and
    the record of the session `paneboard spawn` started for it."""

    __slots__ = (
        "checkpoint",
        "delivered",
        "lock",
        "log",
        "mark",
        "policy",
        "presence",
        "spawned",
        "stopcheck",
        "wakes",
    )

    def __init__(self, panes: Path, agent: str) -> None:
        self.lock = panes / f"{agent}.lock"
        self.delivered = panes / f"{agent}.delivered"
        self.checkpoint = panes / f"{agent}.checkpoint"
        self.presence = panes / f"{agent}.presence"
        self.mark = panes / f"{agent}.transcript"
        self.log = panes / f"{agent}.log"
        self.stopcheck = panes / f"{agent}.stopcheck"
        self.policy = panes / f"{agent}.policy"
        self.spawned = panes / f"{agent}.spawned"
        self.wakes = panes / f"{agent}.wakes"  # the wakes of the last hour (listener/sleep.py)


class BoardPaths:
    """The files of one board under a home. Names are checked before any path is built."""

    def __init__(self, home: Path, board: str) -> None:
        self.home = home
        self.board = check_name("board", board)
        self.dir = home / board
        self.log = self.dir / "log"
        self.panes = self.dir / "panes"

    def pane(self, agent: str) -> PaneFiles:
        """The files of *agent*'s pane on this board."""
        return PaneFiles(self.panes, check_name("agent", agent))

    def ensure(self) -> None:
        """Create the home and the board's folders 0700 if missing."""
        open_home(self.home, create=True)
        for folder in (self.dir, self.panes):
            try:
                with contextlib.suppress(FileExistsError):  # a file in its place: said below
                    folder.mkdir(mode=0o700, exist_ok=True)
                st = os.lstat(folder)
            except OSError as exc:
                raise BoardIOError(
                    f"board `{self.board}`: cannot create {folder}: {exc.strerror}"
                ) from exc
            if stat.S_ISLNK(st.st_mode):
                raise BoardIOError(
                    f"board `{self.board}`: {folder} is a symlink; refusing to follow it"
                )
            if not stat.S_ISDIR(st.st_mode):
                raise BoardIOError(
                    f"board `{self.board}`: {folder} is not a folder (a file holds its name)"
                )
            if problem := not_private("folder", folder, st):
                raise BadInput(f"board `{self.board}`: {problem}")  # before making one inside
        if problem := self.not_private():
            raise BadInput(problem)

    def not_private(self) -> str | None:
        """Why the board folder, its panes folder or its log is not private to this user
        (see `not_private`); None when they are, or do not exist."""
        for what, path in (("folder", self.dir), ("folder", self.panes), ("log", self.log)):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if problem := not_private(what, path, st):
                return f"board `{self.board}`: {problem}"
        return None
