"""Hypothesis over the command line and the record decoder: no traceback, ever."""

from __future__ import annotations

import contextlib
import io
import tempfile
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paneboard.cli import main
from paneboard.protocol.errors import DamagedRecord
from paneboard.protocol.posts import Ack, encode
from paneboard.state.filelog.framing import frame
from paneboard.state.filelog.log import read_posts

words = st.text(st.characters(exclude_categories=("Cs",)), max_size=70)
names = st.one_of(
    words, st.sampled_from(["bob", "a" * 64, "a" * 65, ".x", "../x", "", "-", "--", "é"])
)
ids = st.one_of(words, st.text("0123456789abcdefghjkmnpqrstvwxyz", min_size=0, max_size=30))
bodies = st.one_of(
    words, st.sampled_from(["x" * (256 * 1024), "x" * (256 * 1024 + 1), "\x00\x1b[2J", "-"])
)


def _args() -> st.SearchStrategy[list[str]]:
    common = st.lists(
        st.just("--json"), max_size=1
    )  # not --verbose: it shows tracebacks on purpose
    return st.one_of(
        st.tuples(
            st.just(["post"]),
            st.lists(st.tuples(st.just("--to"), names), max_size=3).map(
                lambda pairs: [word for pair in pairs for word in pair]
            ),
            st.lists(
                st.sampled_from(["--priority", "urgent", "--ttl", "-1", "--thread", "t"]),
                max_size=3,
            ),
            st.lists(bodies, max_size=2),
            st.tuples(st.just("--as"), names).map(list),
            common,
        ),
        st.tuples(
            st.sampled_from(
                [["ack"], ["answer"], ["cancel"], ["status"], ["wait", "--timeout", "0"]]
            ),
            st.lists(ids, max_size=2),
            st.tuples(st.just("--as"), names).map(list),
            common,
        ),
        st.tuples(st.lists(words, max_size=4)),
    ).map(lambda parts: [a for part in parts for a in part])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_args(), st.sampled_from(["fuzz", "../evil", ".x"]))
def test_cli_never_shows_a_traceback(args: list[str], board: str) -> None:
    """Every outcome is an exit code of 0-4 and, on refusal, one line on stderr."""
    with tempfile.TemporaryDirectory() as d:
        err, out = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stderr(err),
            contextlib.redirect_stdout(out),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            code = main(
                [*args, "--home", str(Path(d) / "home"), "--board", board]
                if args and not args[0].startswith("-")
                else args
            )
        assert code in (0, 1, 2, 3, 4)
        assert "Traceback" not in err.getvalue()
        if code in (1, 2):
            assert err.getvalue().count("\n") == 1, err.getvalue()
            assert "internal error" not in err.getvalue()


@given(st.binary(max_size=3000), st.lists(st.integers(0, 3000), max_size=3))
def test_decoder_never_raises(noise: bytes, cuts: list[int]) -> None:
    """Garbage around valid records: the reader returns exactly the records left whole."""
    posts = [
        Ack(id=f"{i:026d}", board="b", sender="s", ts=float(i), prompt_id="p" * 26, note="n" * i)
        for i in range(3)
    ]
    frames = [frame(encode(p)) for p in posts]
    data = bytearray(noise)
    cuts = sorted(min(cut, len(noise)) for cut in cuts)  # places in the noise, not in a record
    for cut in reversed(cuts):  # valid records spliced into the noise
        data[cut:cut] = frames[cut % 3]
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore", DamagedRecord)
        log = Path(d) / "log"
        log.write_bytes(bytes(data))
        got = [post for _, post in read_posts(log)]
    assert [posts[cut % 3] for cut in cuts] == got
