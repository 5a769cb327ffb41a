"""Bad input: one line on stderr naming the problem, exit 1 (2 for usage), nothing written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from paneboard.cli import main
from paneboard.state.filelog.log import read_posts
from testing.helpers import PANEBOARD, Listening, cli_env, post, run_cli


@pytest.fixture
def board(home: Path) -> tuple[Path, str]:
    """A board holding one prompt from alice to bob."""
    return home, post(home, "--to", "bob", "first")


def _log(home: Path) -> bytes:
    path = home / "test" / "log"
    return path.read_bytes() if path.exists() else b""


CASES = [
    (
        ["post", "--as", "alice", "--to", "bob", "-"],
        "paneboard: prompt body read from stdin is over 262144 bytes (256 KiB), the limit",
    ),
    (
        ["post", "--as", "alice", "--to", "../x", "hi"],
        (
            "paneboard: recipient name '../x' is not valid: "
            "use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`"
        ),
    ),
    (["post", "--as", "", "--to", "bob", "hi"], "paneboard: agent name is empty"),
    (
        ["post", "--as", "a" * 65, "--to", "bob", "hi"],
        "paneboard: agent name `aaaaaaaaaaaaaaaaaaaa…` is 65 characters; the limit is 64",
    ),
    (
        ["post", "--as", ".x", "--to", "bob", "hi"],
        (
            "paneboard: agent name '.x' is not valid: "
            "use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`"
        ),
    ),
    (
        ["post", "--board", "../etc", "--to", "bob", "hi"],
        (
            "paneboard: board name '../etc' is not valid: "
            "use 1-64 of A-Z a-z 0-9 . _ -, not starting with `.`"
        ),
    ),
    (["post", "--as", "alice", "--to", "bob", ""], "paneboard: prompt body is empty"),
    (
        ["post", "--as", "alice", "--to", "bob", "--reply-to", "zzzzzz", "hi"],
        "paneboard: board `test`: no post matches `zzzzzz`",
    ),
    (["ack", "--as", "bob", "zzzz"], "paneboard: board `test`: no post matches `zzzz`"),
    (["ack", "--as", "bob", "ab"], "paneboard: id `ab` is too short: give at least 4 characters"),
    (["ack", "--as", "bob", "not-an-id!"], "paneboard: `not-an-id!` is not a post id"),
]


@pytest.mark.parametrize(("args", "message"), CASES)
def test_bad_input_is_refused_and_nothing_is_written(
    board: tuple[Path, str], args: list[str], message: str
) -> None:
    home, _ = board
    before = _log(home)
    done = run_cli(home, *args, input=b"x" * (256 * 1024 + 1) if args[-1] == "-" else None)
    assert (1, "", message + "\n") == (done.returncode, done.stdout, done.stderr)
    assert before == _log(home)


def test_close_rules(board: tuple[Path, str]) -> None:
    """Only recipients ack or answer, only the sender cancels, nothing closes twice."""
    home, pid = board
    cases = [
        (
            ["ack", "--as", "carol", pid],
            f"paneboard: agent `carol` is not a recipient of prompt {pid} (sent to bob)",
        ),
        (
            ["answer", "--as", "carol", pid, "hi"],
            f"paneboard: agent `carol` is not a recipient of prompt {pid} (sent to bob)",
        ),
        (
            ["cancel", "--as", "bob", pid],
            (
                f"paneboard: agent `bob` did not send prompt {pid} (`alice` did); "
                "only its sender can cancel it"
            ),
        ),
    ]
    for args, message in cases:
        before = _log(home)
        done = run_cli(home, *args)
        assert (1, message + "\n") == (done.returncode, done.stderr)
        assert before == _log(home)
    assert 0 == run_cli(home, "ack", "--as", "bob", pid[:12]).returncode
    before = _log(home)
    done = run_cli(home, "answer", "--as", "bob", pid, "late")
    assert (1, f"paneboard: prompt {pid} is already acked for `bob`\n") == (
        done.returncode,
        done.stderr,
    )
    done = run_cli(home, "cancel", "--as", "alice", pid)
    assert (1, f"paneboard: prompt {pid} is already closed for every recipient\n") == (
        done.returncode,
        done.stderr,
    )
    assert before == _log(home)


def test_an_ambiguous_prefix_is_refused(board: tuple[Path, str]) -> None:
    home, pid = board
    second = post(home, "--to", "bob", "second")
    common = next((pid[:n] for n in range(len(pid), 0, -1) if second.startswith(pid[:n])), "")
    assert len(common) >= 4, f"two posts a moment apart share no prefix: {pid} {second}"
    done = run_cli(home, "ack", "--as", "bob", common)
    assert (
        1,
        f"paneboard: board `test`: id `{common}` matches 2 posts; give more characters\n",
    ) == (
        done.returncode,
        done.stderr,
    )


def test_an_ack_of_a_non_prompt_is_refused(board: tuple[Path, str]) -> None:
    home, pid = board
    ack = run_cli(home, "ack", "--as", "bob", pid, "--json")
    ack_id = ack.stdout.split('"id":"')[1][:26]
    done = run_cli(home, "ack", "--as", "bob", ack_id)
    assert (1, f"paneboard: board `test`: post {ack_id} is an ack, not a prompt\n") == (
        done.returncode,
        done.stderr,
    )


def test_usage_errors_exit_2_with_one_line(home: Path) -> None:
    done = run_cli(home, "post", "hi")
    assert (
        2,
        (
            "paneboard post: the following arguments are required: --to "
            "(see `paneboard post --help`)\n"
        ),
    ) == (done.returncode, done.stderr)
    assert 2 == run_cli(home, "frobnicate").returncode
    assert 2 == run_cli(home, "post", "--to", "bob", "--ttl", "soon", "hi").returncode


def test_an_unwritable_home_is_refused(tmp_path: Path) -> None:
    """A home on a read-only file system: one line, exit 1."""
    home = tmp_path / "ro"
    home.mkdir(mode=0o700)
    if os.geteuid() == 0:
        if subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,mode=700", "tmpfs", str(home)], check=False
        ).returncode:
            pytest.skip("cannot mount a read-only tmpfs here")
    else:
        home.chmod(0o500)
    try:
        done = run_cli(home, "post", "--as", "alice", "--to", "bob", "hi")
        assert (1, f"paneboard: home {home} is not writable\n") == (done.returncode, done.stderr)
        assert [] == os.listdir(home)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(home)], check=False)


def test_stdin_body_and_json_output(home: Path) -> None:
    """`-` reads the body from stdin; --json prints the post written."""
    done = run_cli(
        home,
        *["post", "--as", "alice", "--to", "bob", "--json", "-"],
        input=b"line 1\nline 2 $(rm -rf /) `x` 'q'\n",
    )
    assert 0 == done.returncode, done.stderr
    assert '"body":"line 1\\nline 2 $(rm -rf /) `x` \'q\'\\n"' in done.stdout
    bad = run_cli(home, "post", "--as", "alice", "--to", "bob", "-", input=b"\xff\xfe")
    assert (
        1,
        "paneboard: prompt body read from stdin is not valid UTF-8 (byte 0xff at offset 0)\n",
    ) == (
        bad.returncode,
        bad.stderr,
    )


def test_main_runs_in_process(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`main(argv)` returns the exit code instead of exiting."""
    assert 0 == main(
        ["post", "--home", str(home), "--board", "b", "--as", "alice", "--to", "bob", "hi"]
    )
    out = capsys.readouterr().out.strip()
    assert 26 == len(out)
    assert 0 == main(["open", "--home", str(home), "--board", "b", "--as", "bob"])
    assert out in capsys.readouterr().out


def test_post_from_an_endless_stdin_is_refused_past_the_limit(home: Path) -> None:
    """`post -` reads at most one byte past 256 KiB: an endless stdin is refused, not held."""
    with subprocess.Popen(["yes"], stdout=subprocess.PIPE) as endless:
        done = subprocess.run(
            [*PANEBOARD, "post", "--as", "alice", "--to", "bob", "-"],
            stdin=endless.stdout,
            capture_output=True,
            env=cli_env(home),
            timeout=30,
            check=False,
        )
        endless.kill()
    message = b"paneboard: prompt body read from stdin is over 262144 bytes (256 KiB), the limit\n"
    assert (1, b"", message) == (done.returncode, done.stdout, done.stderr)
    assert b"" == _log(home)


def test_a_body_word_that_is_not_utf8_is_refused_naming_the_byte(home: Path) -> None:
    """A command-line word holding a byte that is not UTF-8 is refused, naming the byte."""
    done = subprocess.run(
        [
            *PANEBOARD,
            "post",
            "--as",
            "alice",
            "--to",
            "bob",
            "ok",
            b"caf\xff".decode(errors="surrogateescape"),
        ],
        capture_output=True,
        env=cli_env(home),
        timeout=30,
        check=False,
    )
    message = (
        b"paneboard: prompt body on the command line is not valid UTF-8 "
        b"(byte 0xff at character 6)\n"
    )
    assert (1, message) == (done.returncode, done.stderr)
    assert b"" == _log(home)


def test_ttl_out_of_range_names_the_range(home: Path) -> None:
    """`--ttl 1e9` is positive but past the limit: the message says what the range is."""
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "--ttl", "1e9", "hi")
    message = (
        "paneboard: --ttl 1e+09 is out of range: give more than 0 and less than 10^9 seconds\n"
    )
    assert (1, message) == (done.returncode, done.stderr)
    assert b"" == _log(home)


def test_the_composed_answer_command_takes_an_answer_that_looks_like_an_option(
    home: Path,
) -> None:
    """The answer command an agent is given ends its options with `--`: run by a shell with an
    answer such as `--priority=urgent`, it answers with that text; `post --` and
    `ack --note=` take such words as text too."""
    with Listening(home, "bob", "--door", "stdout") as bob:
        post(home, "--to", "bob", "--", "--priority=urgent")
        text = json.loads(bob.line())["text"]
        bob.wait_err("delivered ")  # its receipt is on the board
    answer = next(line.strip() for line in text.splitlines() if " answer " in line)
    assert answer.endswith(" -- 'YOUR ANSWER'")
    ran = subprocess.run(
        ["sh", "-c", answer.replace("'YOUR ANSWER'", "'--verbose'")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (0, "", "") == (ran.returncode, ran.stdout, ran.stderr)
    [prompt, _, answered] = [p for _, p in read_posts(home / "test" / "log")]
    assert ("--priority=urgent", "normal") == (prompt.body, prompt.priority)  # type: ignore[union-attr]
    assert "--verbose" == answered.body  # type: ignore[union-attr]
    other = post(home, "--to", "bob", "two")
    assert 0 == run_cli(home, "ack", "--as", "bob", other, "--note=--verbose").returncode
    assert "--verbose" == read_posts(home / "test" / "log")[-1][1].note  # type: ignore[union-attr]


@pytest.mark.parametrize("pid", ["0", "-1", "99999999999"])
def test_listen_parent_pid_must_be_a_process_id(home: Path, pid: str) -> None:
    """`--parent-pid` outside 1…pid_max is a usage error before anything is taken."""
    done = run_cli(home, "listen", "--as", "bob", "--door", "stdout", f"--parent-pid={pid}")
    assert 2 == done.returncode
    assert done.stderr.startswith(f"paneboard listen: argument --parent-pid: '{pid}' is not a ")
    assert 1 == len(done.stderr.splitlines())
    assert not (home / "test").exists()


def test_listen_transcript_folder_is_refused(home: Path, tmp_path: Path) -> None:
    """`--transcript` names the conversation file; a folder is refused in one line."""
    done = run_cli(
        home,
        *["listen", "--as", "bob", "--door", "claude-inbox", "--socket", str(tmp_path / "s")],
        *["--transcript", str(tmp_path)],
    )
    message = f"paneboard: --transcript {tmp_path} is a folder: give the conversation file\n"
    assert (1, message) == (done.returncode, done.stderr)
    assert not (home / "test").exists()


@pytest.mark.parametrize(
    ("name", "shown", "why"),
    [
        (b"h\xffx".decode(errors="surrogateescape"), "h\\udcffx", "is not a UTF-8 path"),
        ("h\nx", "h\\nx", "holds a control or format character"),
    ],
    ids=["not-utf8", "newline"],
)
def test_listen_refuses_a_home_no_command_line_can_name(
    tmp_path: Path, name: str, shown: str, why: str
) -> None:
    """A home whose path is not UTF-8, or holds a newline, cannot be named on the command lines a
    prompt's text gives: refused at start in one line, not at the first delivery with a crash."""
    home = tmp_path / name
    post(home, "--to", "bob", "hi")
    done = run_cli(home, "listen", "--as", "bob", "--door", "stdout")
    message = (
        f"paneboard: home {tmp_path}/{shown} {why}: the commands a prompt's text gives could "
        "not name it; use another --home\n"
    )
    assert (1, "", message) == (done.returncode, done.stdout, done.stderr)
    assert ["prompt"] == [p.__struct_config__.tag for _, p in read_posts(home / "test" / "log")]


def test_hook_install_in_a_file_says_it_is_not_a_folder(home: Path, tmp_path: Path) -> None:
    """`--project` naming a file is refused as not a folder (not as missing)."""
    file = tmp_path / "plain"
    file.write_text("x")
    done = run_cli(home, "hook", "install", "claude", "--project", str(file))
    assert (1, f"paneboard: project {file} is not a folder\n") == (
        done.returncode,
        done.stderr,
    )


def test_a_file_in_place_of_the_panes_folder_is_named_as_one(home: Path) -> None:
    """A file where a board's `panes` folder belongs is named as such, not as `File exists`."""
    post(home, "--to", "bob", "hi")
    (home / "test" / "panes").rmdir()
    (home / "test" / "panes").write_text("")
    done = run_cli(home, "listen", "--as", "bob", "--door", "stdout")
    panes = home / "test" / "panes"
    expected = f"paneboard: board `test`: {panes} is not a folder (a file holds its name)\n"
    assert (1, expected) == (done.returncode, done.stderr)


@pytest.mark.parametrize(
    ("ca", "reason"),
    [
        ("/etc/passwd", " holds no CA certificate in PEM form"),
        ("/nonexistent/ca.pem", ": No such file or directory"),
    ],
)
def test_a_ca_file_that_is_not_one_is_named(home: Path, ca: str, reason: str) -> None:
    """`--nats-tls-ca` naming a file that holds no CA is refused naming the file, before any
    connection."""
    pytest.importorskip("nats")
    done = run_cli(
        home, "post", "--to", "bob", "--store", "nats://127.0.0.1:9", "--nats-tls-ca", ca, "hi"
    )
    assert (1, f"paneboard: --nats-tls-ca {ca}{reason}\n") == (done.returncode, done.stderr)


def test_a_file_in_place_of_the_senders_folder_is_named_and_nothing_is_posted(home: Path) -> None:
    """`post` refuses a board whose `senders` folder is a file, naming it, and writes nothing."""
    post(home, "--to", "bob", "first")
    senders = home / "test" / "senders"
    for child in senders.iterdir():
        child.unlink()
    senders.rmdir()
    senders.write_text("")
    before = (home / "test" / "log").read_bytes()
    done = run_cli(home, "post", "--as", "alice", "--to", "bob", "second")
    said = f"paneboard: cannot update {senders}/alice.open: {senders} is not a folder\n"
    assert (1, said) == (done.returncode, done.stderr)
    assert before == (home / "test" / "log").read_bytes()
