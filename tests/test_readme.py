"""The README and docs/ cannot drift from the program: their sessions run, their lines parse.

Every ```console block without a long-running command, in README.md or docs/*.md, is run,
line by line, in a fresh home, and what each command prints must be what the page shows (ids,
times and the spans between them aside). Every `paneboard …` line of any code block must be a
command line the parser accepts.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from paneboard.cli.parser import UsageError, parse
from testing.helpers import ROOT, run_cli

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    block
    for page in PAGES
    for block in re.findall(r"```(\w*)\n(.*?)```", page.read_text(), re.DOTALL)
]
ID = re.compile(r"\b0[0-9a-hjkmnp-tv-z]{25}\b")
TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
SPAN = re.compile(r"\b\d+(\.\d+)? (ms|s|min|h|days)( \d+ (s|min))? after\b")  # status's stages


def _timeless(line: str) -> str:
    return SPAN.sub("D after", TIME.sub("T", line))


LONG_RUNNING = ("wait", "ask", "listen", "log --follow", "top", "mcp")


def _sessions() -> list[list[tuple[str, list[str]]]]:
    """Each runnable console block as (command line, the lines it prints)."""
    sessions = []
    for kind, text in BLOCKS:
        if kind != "console":
            continue
        steps: list[tuple[str, list[str]]] = []
        for line in text.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:].split("  #")[0].strip(), []))
            elif steps:
                steps[-1][1].append(line)
        words = [shlex.split(cmd) for cmd, _ in steps]
        if words and all(w[0] == "paneboard" and w[1] not in LONG_RUNNING for w in words):
            sessions.append(steps)
    return sessions


def _command_lines() -> list[str]:
    lines = []
    for _, text in BLOCKS:
        for line in text.replace("\\\n", " ").splitlines():  # continued lines joined
            line = line.removeprefix("$ ").split("  #")[0].strip().rstrip("&").strip()
            if line.startswith("paneboard ") and not re.search(r"[\[…|]|\.\.\.|[A-Z]{3,}", line):
                lines.append(line)
    return lines


def test_the_docs_are_found() -> None:
    """The pages checked are the README and every page of docs/, and they hold sessions."""
    names = [p.name for p in PAGES]
    assert {"README.md", "commands.md", "agents.md", "listener.md"} <= set(names), names
    listen = (
        "paneboard listen --as claude-web --door claude-inbox --socket /tmp/cc-socks/12345.sock"
    )
    assert listen in _command_lines()  # a line of docs/listener.md
    assert _sessions()


@pytest.mark.parametrize("steps", _sessions(), ids=lambda steps: steps[0][0][:40])
def test_the_readme_sessions_print_what_they_show(
    home: Path, steps: list[tuple[str, list[str]]]
) -> None:
    """Each command exits 0 and prints the README's lines, with the README's ids mapped to ours."""
    ids: dict[str, str] = {}  # the README's id -> the one this run made

    def ours(word: str) -> str:
        for theirs, mine in ids.items():
            if len(word) >= 4 and theirs.startswith(word):
                return mine[: len(word)]
        return word

    for command, shown in steps:
        words = [ours(w) for w in shlex.split(command)[1:]]
        done = run_cli(home, *words, "--board", "demo")
        assert 0 == done.returncode, (command, done.stderr)
        printed = done.stdout.splitlines()
        if len(shown) == 1 and ID.fullmatch(shown[0]):
            ids[shown[0]] = printed[0]
        normal = [_timeless(_readme_ids(p, ids)) for p in printed]
        assert [_timeless(line) for line in shown] == normal, command


def _readme_ids(line: str, ids: dict[str, str]) -> str:
    """*line* with this run's ids written as the README's."""
    back = {mine: theirs for theirs, mine in ids.items()}
    return ID.sub(lambda m: back.get(m[0], m[0]), line)


@pytest.mark.parametrize("line", _command_lines())
def test_every_command_line_in_the_readme_parses(line: str) -> None:
    """A `paneboard …` line in the README or docs/ names a command and options that exist."""
    try:
        parse(shlex.split(line)[1:])
    except UsageError as exc:
        raise AssertionError(f"{line}: {exc}") from None
