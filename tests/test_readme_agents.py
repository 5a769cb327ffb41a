"""The README's three lists of agents are the registry's (`paneboard.agents.AGENTS`), in its order:
the first paragraph's names, the `hook install` lines with the file each writes, and the table's
first column. An agent added to the registry is added to all three, or this fails."""

from __future__ import annotations

import re

from paneboard.agents import AGENTS
from testing.helpers import ROOT

README = (ROOT / "README.md").read_text()
TITLES = [agent.title for agent in AGENTS.values()]


def test_the_first_paragraph_names_every_agent() -> None:
    """ "AI coding agents running side by side (Claude Code, …, scripts, people)"."""
    found = re.search(r"running side by side \(([^)]*)\)", README)
    assert found is not None
    names = [name.strip() for name in " ".join(found[1].split()).split(",")]
    assert names == [*TITLES, "scripts", "people"]


def test_the_install_lines_are_one_per_agent_with_its_file() -> None:
    """`paneboard hook install KIND  # FILE` per agent; `--trust` only where the record takes it."""
    block = README.split("## With your agents", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    line = re.compile(r"paneboard hook install (\S+)( --trust)?\s+# ([^\s,]+)")
    found = [line.match(text) for text in block.splitlines()]
    assert all(found), block
    got = [(m[1], m[3]) for m in found if m]
    assert got == [(kind, agent.hooks_file) for kind, agent in AGENTS.items()]
    trusting = {m[1] for m in found if m and m[2]}
    assert trusting <= {kind for kind, agent in AGENTS.items() if agent.trusts}


def test_the_table_has_a_row_per_agent() -> None:
    """The door table's first column: each agent's title and the version it was checked with."""
    table = README.split("| agent (checked with)", 1)[1]
    assert re.findall(r"^\| ([^|]+?) \d[\w.]* \|", table, re.MULTILINE) == TITLES
