"""Skimming a log for a pane: every frame checked, only the records its interest needs handed out.

`skim` is `framing.scan` for a reader with an `Interest` (state/interest.py): each frame's
magics, lengths and CRC-32 are checked as `scan` checks them, and damaged spans are found
and reported the same way, but a valid frame is handed out only if its head (three fields,
read with msgspec) says the interest needs it, or cannot be read. The record is sliced once
(bytes, which a reader keeps for the signature) and nothing else is built for the rest.

The loop reads the tail of a frame and the head of the next with one `struct` call: it runs
once per record of the whole log.
"""

from __future__ import annotations

import struct
import zlib

from paneboard.state.filelog.framing import (
    HEAD,
    MAGIC,
    TAIL,
    TAIL_MAGIC,
    Scan,
    frame_at,
    next_frame,
)
from paneboard.state.interest import Interest, decode_head, decode_named

_JOINT = struct.Struct("<I4s4sII")  # a frame's tail, then the next frame's head


def skim(buf: bytes, base: int, interest: Interest) -> Scan:
    """The frames of *buf* (which starts at offset *base*) that *interest* needs, as bytes;
    damage and the unconsumed end as `framing.scan` finds them."""
    frames: list[tuple[int, bytes | memoryview]] = []
    damaged: list[tuple[int, int]] = []
    agent, prompts, pending = interest.agent, interest.prompts, interest.pending
    settled = interest.settled
    head, joint, crc32 = HEAD.unpack_from, _JOINT.unpack_from, zlib.crc32
    hs, ts = HEAD.size, TAIL.size
    i, n = 0, len(buf)
    while i < n:
        if i + hs <= n:
            magic, length, crc = head(buf, i)
            # The common case, inlined: a run of valid frames, each tail read with the next head.
            while magic == MAGIC:
                start = i + hs
                end = start + length
                nxt = end + ts
                if nxt + hs <= n:
                    size, tail, magic, following, next_crc = joint(buf, end)
                elif nxt <= n:
                    size, tail = TAIL.unpack_from(buf, end)
                    magic = b""  # the last frame of the buffer: the loop ends after it
                    following = next_crc = 0
                else:
                    break
                if size != length or tail != TAIL_MAGIC:
                    break
                payload = buf[start:end]
                if crc32(payload) != crc:
                    break
                try:
                    h = decode_head(payload)
                except Exception:  # noqa: BLE001  # any head not read: decoded whole, it is damaged
                    frames.append((base + i, payload))
                else:
                    if agent in h.to:
                        frames.append((base + i, payload))
                        _pend(pending, payload)
                    elif (
                        h.sender == agent
                        or h.prompt in prompts
                        or h.prompt in pending
                        or (settled is not None and h.sender not in settled)
                        or base + i == 0  # the log's own first record (framing.py)
                    ):
                        frames.append((base + i, payload))
                i, length, crc = nxt, following, next_crc
            if i >= n:
                break
        # Not a run of valid frames at *i*: as `scan` does, one frame or a damaged span.
        size = frame_at(buf, i)
        if size > 0:
            payload = buf[i + hs : i + size - ts]
            if _needed(payload, base + i, interest):
                frames.append((base + i, payload))
            i += size
            continue
        j = next_frame(buf, i + 1)
        if j < 0:
            break
        damaged.append((base + i, base + j))
        i = j
    return Scan(frames, base + i, damaged)


def _needed(payload: bytes, offset: int, interest: Interest) -> bool:
    """Whether *interest* needs the record (as the loop above decides it, for one frame)."""
    try:
        h = decode_head(payload)
    except Exception:  # noqa: BLE001  # as above
        return True
    if offset == 0 or interest.needs(h):
        if interest.agent in h.to:
            _pend(interest.pending, payload)
        return True
    return False


def _pend(pending: set[str], payload: bytes) -> None:
    """Note the id of a record addressed to the agent: the posts about it are needed next."""
    try:
        pending.add(decode_named(payload).id)
    except Exception:  # noqa: BLE001, S110  # decoded whole, it is counted damaged
        pass
