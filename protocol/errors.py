"""paneboard's exceptions: one small hierarchy, each message built from data kept on it.

    PaneboardError
    ├── BadInput            (ValueError)     refused before anything is written
    ├── UnknownPost         (LookupError)    no post with that id or prefix
    ├── PaneLocked          (BlockingIOError) another listener holds the agent's pane
    ├── BoardIOError        (OSError)        the home or a board cannot be read or written
    ├── PromptClosed                          cancelled, expired or refused while waited on
    ├── WaitTimedOut        (TimeoutError)   `wait` / `ask` ran out of time
    └── DoorFailed                            a door handed nothing over (retried)
        └── DoorUnavailable                   the door cannot exist (not retried)

`DamagedRecord` is a warning, not an error: a damaged record is skipped, never fatal.
"""

from __future__ import annotations


class PaneboardError(Exception):
    """Base of every error paneboard raises on purpose."""


class MissingExtra(PaneboardError, ImportError):
    """A command needs an optional part of paneboard that is not installed."""

    def __init__(self, module: str, extra: str, feature: str) -> None:
        self.module, self.extra = module, extra
        super().__init__(
            f"{feature} needs the `{extra}` extra ({module} is not installed): "
            f"pip install 'paneboard[{extra}]'"
        )


class BadInput(PaneboardError, ValueError):
    """Input refused before anything was written."""


class UnknownPost(PaneboardError, LookupError):
    """No post on the board matches an id or prefix."""

    def __init__(self, board: str, ref: str) -> None:
        super().__init__(f"board `{board}`: no post matches `{ref}`")
        self.board = board
        self.ref = ref


class PaneLocked(PaneboardError, BlockingIOError):
    """A listener already holds the agent's pane."""

    def __init__(self, board: str, agent: str, pid: int | None) -> None:
        holder = f"listener pid {pid}" if pid else "another listener"
        super().__init__(f"board `{board}`: agent `{agent}` is held by {holder}")
        self.board = board
        self.agent = agent
        self.pid = pid


class BoardIOError(PaneboardError, OSError):
    """The home or a board's files cannot be read or written."""


class PromptClosed(PaneboardError):
    """A prompt someone waited on was cancelled, expired or refused (*reason*: why)."""

    def __init__(self, prompt: str, how: str, reason: str | None = None) -> None:
        because = f": {reason}" if reason else ""
        said = "expired" if how == "expired" else f"was {how}"
        super().__init__(f"prompt {prompt} {said}{because}")
        self.prompt = prompt
        self.how = how
        self.reason = reason


class WaitTimedOut(PaneboardError, TimeoutError):
    """`wait` or `ask` gave up before the prompt reached the state asked for."""

    def __init__(self, prompt: str, until: str, seconds: float) -> None:
        super().__init__(f"prompt {prompt} was not {until} within {seconds:g} s")
        self.prompt = prompt
        self.until = until
        self.seconds = seconds


class DoorFailed(PaneboardError):
    """A door handed nothing over; waiting and retrying may help."""

    def __init__(self, door: str, reason: str) -> None:
        super().__init__(f"door {door}: {reason}")
        self.door = door
        self.reason = reason


class DoorUnavailable(DoorFailed):
    """The door cannot exist (no socket, no binary): retrying will not help."""


class DamagedRecord(UserWarning):
    """A damaged span of a board log was skipped (*reason*: why its record is not a post)."""

    def __init__(self, path: str, start: int, end: int, reason: str = "") -> None:
        because = f" ({reason})" if reason else ""
        super().__init__(f"{path}: skipped {end - start} damaged bytes at offset {start}{because}")
        self.path = path
        self.start = start
        self.end = end
        self.reason = reason
