"""The committed table of Ed25519 base-point multiples is what its script writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.helpers import ROOT


def test_the_script_writes_the_committed_table(tmp_path: Path) -> None:
    """`scripts/ed25519_table.py` regenerates protocol/_ed25519_table.py byte for byte, so the
    way docs/developers.md gives to make it again is the way it was made."""
    out = tmp_path / "table.py"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts/ed25519_table.py"), str(out)], check=True, timeout=60
    )
    assert out.read_bytes() == (ROOT / "protocol/_ed25519_table.py").read_bytes()
