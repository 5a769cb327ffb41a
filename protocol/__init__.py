"""paneboard's wire: post types, ids, names, the codec and the composed text. Pure.

Names are imported on first use (PEP 562), so `paneboard post` can use the small
modules here without paying for msgspec's import.
"""

from __future__ import annotations

from paneboard.protocol.lazy import lazy_attributes

_WHERE = {
    "Ack": "posts",
    "Answer": "posts",
    "Cancel": "posts",
    "Delivered": "posts",
    "Post": "posts",
    "Prompt": "posts",
    "Undelivered": "posts",
    "Seen": "posts",
    "KINDS": "posts",
    "PRIORITY_RANK": "posts",
    "decode": "posts",
    "encode": "posts",
    "to_json": "posts",
    "delivered_key": "posts",
    "new_id": "ids",
    "check_ref": "ids",
    "check_name": "names",
    "check_body": "names",
    "compose": "compose",
    "pack_post": "wire",
    "PaneboardError": "errors",
    "BadInput": "errors",
    "UnknownPost": "errors",
    "PaneLocked": "errors",
    "BoardIOError": "errors",
    "DoorFailed": "errors",
    "DoorUnavailable": "errors",
    "DamagedRecord": "errors",
    "PromptClosed": "errors",
    "WaitTimedOut": "errors",
}
__all__ = [
    "KINDS",
    "PRIORITY_RANK",
    "Ack",
    "Answer",
    "BadInput",
    "BoardIOError",
    "Cancel",
    "DamagedRecord",
    "Delivered",
    "DoorFailed",
    "DoorUnavailable",
    "PaneLocked",
    "PaneboardError",
    "Post",
    "Prompt",
    "PromptClosed",
    "Seen",
    "Undelivered",
    "UnknownPost",
    "WaitTimedOut",
    "check_body",
    "check_name",
    "check_ref",
    "compose",
    "decode",
    "delivered_key",
    "encode",
    "new_id",
    "pack_post",
    "to_json",
]


__getattr__ = lazy_attributes("paneboard.protocol", _WHERE)
