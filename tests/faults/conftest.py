"""Seeded randomness for the fault scenarios: each prints its seed,
and PANEBOARD_SEED replays it."""

from __future__ import annotations

import os
import random

import pytest


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    seed = int(os.environ.get("PANEBOARD_SEED", random.SystemRandom().randrange(2**32)))
    print(f"\n{request.node.name}: seed {seed} (replay with PANEBOARD_SEED={seed})")
    return random.Random(seed)
