"""Log records: a frame around each msgpack payload, and a scanner that finds them.

    head  = magic "\\xa7PB1" | length u32 | crc32(payload) u32
    payload (length bytes)
    tail  = length u32 | magic "1BP\\xa7"

A frame is valid when both magics, both lengths and the checksum agree. The tail
lets a writer check the end of a log without reading it all. Standard library only.
"""

from __future__ import annotations

import os
import struct
import zlib

MAGIC = b"\xa7PB1"
TAIL_MAGIC = b"1BP\xa7"
HEAD = struct.Struct("<4sII")
TAIL = struct.Struct("<I4s")
OVERHEAD = HEAD.size + TAIL.size
MAX_PAYLOAD = 1 << 20


def frame(payload: bytes) -> bytes:
    """One record around *payload*."""
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError(f"record of {n} bytes exceeds {MAX_PAYLOAD}")
    return HEAD.pack(MAGIC, n, zlib.crc32(payload)) + payload + TAIL.pack(n, TAIL_MAGIC)


# The first record of every log this version creates says which log it is: a random generation,
# new when a log is created and when `compact` rewrites it. A checkpoint names the generation,
# so a log made again (whose inode number the file system may give back) is never taken for
# the old one. It is a msgpack map no post decoder accepts: readers skip it at offset 0.
GENERATION_PREFIX = b"\x82\xa4kind\xaalog-header\xaageneration\xb4"  # then 20 hex digits
GENERATION_RECORD_SIZE = len(GENERATION_PREFIX) + 20 + OVERHEAD


def generation_record() -> bytes:
    """The framed first record of a new log, with a fresh random generation."""
    return frame(GENERATION_PREFIX + os.urandom(10).hex().encode())


def generation_of(payload: bytes | memoryview) -> str | None:
    """The generation a log's first payload names, or None if it is a post."""
    if len(payload) != len(GENERATION_PREFIX) + 20:
        return None
    if bytes(payload[: len(GENERATION_PREFIX)]) != GENERATION_PREFIX:
        return None
    return bytes(payload[len(GENERATION_PREFIX) :]).decode("ascii", "replace")


def frame_at(buf: bytes | memoryview, i: int) -> int:
    """Size of the valid frame starting at *i*; 0 if it may be one but is cut short; -1 if not."""
    avail = len(buf) - i
    if avail < HEAD.size:
        return 0 if MAGIC.startswith(bytes(buf[i : i + len(MAGIC)])) else -1
    magic, n, crc = HEAD.unpack_from(buf, i)
    n = int(n)
    if magic != MAGIC or n > MAX_PAYLOAD:
        return -1
    total = n + OVERHEAD
    if avail < total:
        return 0
    start = i + HEAD.size
    if (
        TAIL.unpack_from(buf, start + n) != (n, TAIL_MAGIC)
        or zlib.crc32(buf[start : start + n]) != crc
    ):
        return -1
    return total


def next_frame(buf: bytes, start: int) -> int:
    """Offset of the first complete valid frame at or after *start*, or -1."""
    k = buf.find(MAGIC, start)
    while k >= 0:
        if frame_at(buf, k) > 0:
            return k
        k = buf.find(MAGIC, k + 1)
    return -1


class Scan:
    """What `scan` found (a plain class: `typing.NamedTuple` would cost `post` typing's import)."""

    __slots__ = ("damaged", "end", "frames")

    def __init__(
        self,
        frames: list[tuple[int, bytes | memoryview]],
        end: int,
        damaged: list[tuple[int, int]],
    ) -> None:
        self.frames = frames  # (absolute offset, payload)
        self.end = end  # absolute offset of the first byte not consumed
        self.damaged = damaged  # absolute (start, end) of skipped spans


def scan(buf: bytes, base: int = 0) -> Scan:
    """Every valid frame of *buf* (which starts at offset *base*).

    Bytes that do not form a frame are skipped as damage only when a valid frame
    follows them; otherwise they are left unconsumed at the end (a record being
    written, or a torn tail that the next append repairs).
    """
    view = memoryview(buf)
    frames: list[tuple[int, bytes | memoryview]] = []
    damaged: list[tuple[int, int]] = []
    i, n, hs, ts = 0, len(buf), HEAD.size, TAIL.size
    head, tail, crc32, tail_ok = HEAD.unpack_from, TAIL.unpack_from, zlib.crc32, TAIL_MAGIC
    while i < n:
        # The common case, inlined (this loop runs once per record of the whole log).
        if i + hs <= n:
            magic, length, crc = head(buf, i)
            start = i + hs
            end = start + length
            if (
                magic == MAGIC
                and end + ts <= n
                and tail(buf, end) == (length, tail_ok)
                and crc32(view[start:end]) == crc
            ):
                frames.append((base + i, view[start:end]))
                i = end + ts
                continue
        size = frame_at(buf, i)
        if size > 0:
            frames.append((base + i, view[i + hs : i + size - ts]))
            i += size
            continue
        j = next_frame(buf, i + 1)
        if j < 0:
            break
        damaged.append((base + i, base + j))
        i = j
    return Scan(frames, base + i, damaged)


def valid_end(tail: bytes, base: int) -> int:
    """End offset of the last valid frame in *tail* (the log's last bytes, from *base*), or -1."""
    k = tail.rfind(TAIL_MAGIC)
    while k >= 0:
        end = k + len(TAIL_MAGIC)
        (n,) = struct.unpack_from("<I", tail, k - 4) if k >= 4 else (-1,)
        start = end - n - OVERHEAD
        if n >= 0 and start >= 0 and frame_at(tail, start) == end - start:
            return base + end
        k = tail.rfind(TAIL_MAGIC, 0, k)
    return -1
