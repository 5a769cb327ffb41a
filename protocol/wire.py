"""A msgpack writer for the `post` command, which must start fast.

Importing msgspec costs about four times a bare interpreter start on the machines
paneboard targets, which is the whole budget of `paneboard post`. This module writes
the same bytes ``msgspec.msgpack.encode`` writes for a post (tests check it byte for
byte over arbitrary posts), using only the standard library. Readers use msgspec.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

Value = str | float | int | bool | None | Sequence[str]


def pack_post(fields: Mapping[str, Value]) -> bytes:
    """msgpack of a post given as ``{"kind": …, "id": …, …}`` in field order."""
    out = bytearray()
    _map_header(out, len(fields))
    for key, value in fields.items():
        _str(out, key)
        _value(out, value)
    return bytes(out)


def _value(out: bytearray, value: Value) -> None:
    if value is None:
        out.append(0xC0)
    elif isinstance(value, str):
        _str(out, value)
    elif isinstance(value, float):
        out.append(0xCB)
        out += struct.pack(">d", value)
    elif isinstance(value, bool):  # before int: a bool is an int to Python, not to msgpack
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, int):
        _int(out, value)
    else:
        _array_header(out, len(value))
        for item in value:
            _str(out, item)


def _str(out: bytearray, text: str) -> None:
    data = text.encode()
    n = len(data)
    if n < 32:
        out.append(0xA0 | n)
    elif n < 2**8:
        out += b"\xd9" + struct.pack(">B", n)
    elif n < 2**16:
        out += b"\xda" + struct.pack(">H", n)
    else:
        out += b"\xdb" + struct.pack(">I", n)
    out += data


def _int(out: bytearray, n: int) -> None:
    if 0 <= n < 128:
        out.append(n)
    elif -32 <= n < 0:
        out += struct.pack(">b", n)
    elif n >= 0:
        for code, fmt, bits in (
            (0xCC, ">B", 8),
            (0xCD, ">H", 16),
            (0xCE, ">I", 32),
            (0xCF, ">Q", 64),
        ):
            if n < 2**bits:
                out.append(code)
                out += struct.pack(fmt, n)
                return
        raise OverflowError(n)
    else:
        for code, fmt, bits in (
            (0xD0, ">b", 8),
            (0xD1, ">h", 16),
            (0xD2, ">i", 32),
            (0xD3, ">q", 64),
        ):
            if n >= -(2 ** (bits - 1)):
                out.append(code)
                out += struct.pack(fmt, n)
                return
        raise OverflowError(n)


def _map_header(out: bytearray, n: int) -> None:
    out += bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)


def _array_header(out: bytearray, n: int) -> None:
    if n < 16:
        out.append(0x90 | n)
    elif n < 2**16:
        out += b"\xdc" + struct.pack(">H", n)
    else:
        out += b"\xdd" + struct.pack(">I", n)
