"""Write protocol/_ed25519_table.py, the table of Ed25519 base-point multiples that
`protocol/ed25519.py` signs with, from its `base_table()`:

    .venv/bin/python scripts/ed25519_table.py [OUT]      (OUT: protocol/_ed25519_table.py)

The module is one bytes literal, in lines of at most 92 characters of `repr` as ruff formats
them (double quotes unless they need more escapes), so the file written is byte for byte the
committed one; tests/protocol/test_ed25519_table.py checks that it is.
"""

from __future__ import annotations

import sys
from pathlib import Path

from paneboard.protocol.ed25519 import base_table

ROOT = Path(__file__).resolve().parent.parent
HEADER = '''\
"""The multiples of Ed25519's base point that ``ed25519`` signs with: its ``base_table()``.

Made once, so that no `paneboard post` computes them: 512 points of 96 bytes. A bytes
literal, so that loading it is part of reading the compiled module. Written by
`scripts/ed25519_table.py`; run it again if ``base_table()`` changes.
"""

from __future__ import annotations

TABLE = (
'''
WIDTH = 92  # of a line's literal, as repr() writes it


def lines(data: bytes) -> list[bytes]:
    """*data* cut greedily into pieces whose repr() is at most WIDTH characters."""
    pieces, start = [], 0
    while start < len(data):
        end = start + 1
        while end < len(data) and len(repr(data[start : end + 1])) <= WIDTH:
            end += 1
        pieces.append(data[start:end])
        start = end
    return pieces


def literal(piece: bytes) -> str:
    """repr(*piece*) in ruff's quotes: double, unless that escapes more quotes than single."""
    text = repr(piece)
    if text.startswith('b"') or piece.count(b'"') > piece.count(b"'"):
        return text
    return 'b"' + text[2:-1].replace("\\'", "'").replace('"', '\\"') + '"'


def module() -> str:
    return HEADER + "".join(f"    {literal(piece)}\n" for piece in lines(base_table())) + ")\n"


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "protocol" / "_ed25519_table.py"
    out.write_text(module())
