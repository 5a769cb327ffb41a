"""The agent CLIs' versions are one list, testing/clients.txt: `make clients` installs it, the
tests read it, and every version the docs, the tests or the code name for a listed CLI is the
listed one (the changelog and bench/RESULTS.md tell of the past and are left as written)."""

from __future__ import annotations

import re
from pathlib import Path

from paneboard.agents import AGENTS
from testing.clients import PINNED, Client
from testing.helpers import ROOT

VERSION = r"v?(\d+(?:\.\d+)+)"


def _texts() -> list[Path]:
    """The files that may name a CLI's version: the README, docs/, .ci/run, the Makefile, and
    the code of every folder (its Python and JavaScript)."""
    folders = [p for p in ROOT.iterdir() if (p / "__init__.py").is_file()]
    code = [f for d in folders for f in d.rglob("*") if f.suffix in (".py", ".js")]
    docs = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / ".ci/run", ROOT / "Makefile"]
    return docs + code


def _named(client: Client, text: str) -> list[str]:
    """The versions *text* gives *client*: after its name in the docs (`Qwen Code X.Y.Z`) or
    its npm package (`@qwen-code/qwen-code@X.Y.Z`, `opencode-ai X.Y.Z`)."""
    found = re.findall(rf"{re.escape(client.package)}[@ ]{VERSION}", text)
    if client.name != "-":
        found += re.findall(rf"(?<![\w.@/-]){re.escape(client.name)} {VERSION}\b", text)
    return found


def test_every_version_named_is_the_listed_one() -> None:
    """A version named is the pinned one, or its series (`Codex 0.169`)."""
    wrong = {
        f"{path.relative_to(ROOT)}: {client.key} {version}"
        for path in _texts()
        for client in PINNED.values()
        for version in _named(client, path.read_text())
        if version != client.version and not client.version.startswith(f"{version}.")
    }
    assert set() == wrong


def test_the_agents_tables_name_each_cli_with_its_version() -> None:
    """The README's table and docs/agents.md's name each agent CLI of the list, with its version,
    in a row's first cell."""
    for page in ("README.md", "docs/agents.md"):
        text = (ROOT / page).read_text()
        named = [c for c in PINNED.values() if c.name != "-"]
        absent = [c.key for c in named if f" {c.name} {c.version} |" not in text]
        assert [] == absent, page


def test_the_list_is_read_whole() -> None:
    """Every line of the list that is not a comment is a client with a version, read by key; the
    plugin SDK OpenCode loads is of OpenCode's own version."""
    lines = [
        ln for ln in (ROOT / "testing/clients.txt").read_text().splitlines() if ln and ln[0] != "#"
    ]
    assert len(lines) == len(PINNED)
    assert all(re.fullmatch(r"\d+(\.\d+)+", c.version) for c in PINNED.values())
    assert PINNED["opencode-plugin"].version == PINNED["opencode"].version
    assert set(AGENTS) <= set(PINNED)  # every agent's CLI
