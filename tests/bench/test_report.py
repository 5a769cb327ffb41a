"""The benchmark report: each figure in the unit its name gives, and no ratio between stages."""

from __future__ import annotations

from pathlib import Path

from bench.report import headline, unit_of, write_report


def _stats(median: float) -> dict[str, float]:
    return {"median": median, "p50": median, "p99": median * 2, "min": 1.0, "max": 9.0, "n": 5}


def test_a_figure_is_printed_in_the_unit_its_name_ends_with(tmp_path: Path) -> None:
    run = {
        "machine": {"cpus": 2, "cpu": "x", "memory_gib": 24, "python": "3.11", "kernel": "6"},
        "quick": True,
        "started": "now",
        "signing": {"sign_stdlib_us": _stats(279.97), "verify_1m_posts_s": _stats(2.5)},
        "wake-bare": {"latency_ms": _stats(0.3)},
    }
    text = write_report(run, tmp_path)
    assert "sign_stdlib_us: 279.97 µs" in text
    assert "verify_1m_posts_s: 2.50 s" in text
    assert "latency_ms: 0.30 ms" in text
    assert "279.97 ms" not in text


def test_units_by_suffix() -> None:
    assert [unit_of(n) for n in ("a_us", "a_ms", "a_s", "latency")] == ["µs", "ms", "s", "ms"]


def test_delivered_to_seen_has_no_ratio_against_the_stage_before_it() -> None:
    run = {
        "seen-claude": {"delivered_to_seen_ms": _stats(0.4), "door_ms": _stats(3.0)},
    }
    [(_what, pb, base, ratio)] = headline(run)
    assert "\N{MULTIPLICATION SIGN}" not in ratio
    assert (pb, base) == ("0 / 1 ms", "3.0 / 6.0 ms")


def test_a_woken_agent_is_set_beside_its_live_session() -> None:
    run = {"woken-codex": {"woken_ms": _stats(1200.0), "live_ms": _stats(200.0)}}
    [(what, woken, live, ratio)] = headline(run)
    assert "Codex asleep (woken) vs live" in what
    assert ("1200 ms", "200 ms") == (woken, live)
    assert ratio.startswith("6.0\N{MULTIPLICATION SIGN}")
