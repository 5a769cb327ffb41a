"""Names of agents and boards, and the limits on what a post may carry."""

from __future__ import annotations

from paneboard.protocol.errors import BadInput

NAME_MAX = 64
BODY_MAX = 256 * 1024
RECIPIENTS_MAX = 100  # recipients of one prompt
TEXT_MAX = 64 * 1024  # a notice's reason
TIME_MAX = 253_402_300_799.0  # the last second of the year 9999: every clock can show it
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
# `check_name`'s rule as the decoder checks it (msgspec searches: hence ^ and \Z, not $).
NAME_PATTERN = rf"^[A-Za-z0-9_-][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}\Z"
from paneboard.protocol.words import PRIORITIES


def check_name(what: str, value: str) -> str:
    """Return *value* if it is a valid name (1-64 of ``A-Za-z0-9._-``, no leading dot)."""
    if not value:
        raise BadInput(f"{what} name is empty")
    if len(value) > NAME_MAX:
        raise BadInput(
            f"{what} name `{value[:20]}…` is {len(value)} characters; the limit is {NAME_MAX}"
        )
    if value[0] == "." or not _NAME_CHARS.issuperset(value):
        raise BadInput(
            f"{what} name {value!r} is not valid: "
            f"use 1-{NAME_MAX} of A-Z a-z 0-9 . _ -, not starting with `.`"
        )
    return value


def is_name(value: str) -> bool:
    """Whether `check_name` accepts *value*."""
    return 0 < len(value) <= NAME_MAX and value[0] != "." and _NAME_CHARS.issuperset(value)


def to_name(raw: str) -> str:
    """Make any string a valid name: other characters become `-`, cut to 64 (`default` if empty)."""
    name = "".join(c if c in _NAME_CHARS else "-" for c in raw)[:NAME_MAX].lstrip(".")
    return name or "default"


def check_body(what: str, body: str) -> str:
    """Return *body* if it is non-empty, encodable and at most 256 KiB as UTF-8."""
    if not body:
        raise BadInput(f"{what} is empty")
    try:
        size = len(body.encode())
    except UnicodeEncodeError:
        raise BadInput(f"{what} is not valid text (unpaired surrogates)") from None
    if size > BODY_MAX:
        raise BadInput(f"{what} is {size} bytes; the limit is {BODY_MAX} (256 KiB)")
    return body


def check_recipients(names: list[str]) -> list[str]:
    """Return *names* (already checked one by one) if there are at most `RECIPIENTS_MAX`."""
    if len(names) > RECIPIENTS_MAX:
        raise BadInput(f"{len(names)} recipients; a prompt may have at most {RECIPIENTS_MAX}")
    return names


def check_priority(value: str) -> str:
    if value not in PRIORITIES:
        raise BadInput(f"priority {value!r} is not one of {', '.join(PRIORITIES)}")
    return value
