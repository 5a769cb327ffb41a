"""The report of one run: a Markdown table led by ratios, and PNG plots when matplotlib is there."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _ms(s: dict[str, Any], unit: str = "ms") -> str:
    """A summary of samples (median, p50, p99, range, count) in *unit*."""
    return (
        f"{s['median']:.2f} {unit} (p50 {s['p50']:.2f}, p99 {s['p99']:.2f}, "
        f"{s['min']:.2f}–{s['max']:.2f}, n={s['n']})"
        if s.get("n")
        else "–"
    )


def headline(r: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(what, paneboard, baseline, ratio) rows."""
    rows: list[tuple[str, str, str, str]] = []
    if "wake" in r:
        pb = r["wake"]["paneboard"]["latency_ms"]
        for name in ("sqlite-5s", "sqlite-1s", "maildir-1s"):
            base = r["wake"][name]["latency_ms"]
            rows.append(
                (
                    f"delivery latency, median, vs {name} poll",
                    f"{pb['median']:.2f} ms",
                    f"{base['median']:.0f} ms",
                    f"{base['median'] / pb['median']:.0f}× faster",
                )
            )
    if "post-cli" in r:
        pc = r["post-cli"]
        rows.append(
            (
                "`paneboard post` vs `python -c pass`",
                f"{pc['post_ms']['median']:.1f} ms",
                f"{pc['python_pass_ms']['median']:.1f} ms",
                f"{pc['ratio_post_to_pass']:.2f}×",
            )
        )
        for name in ("sqlite", "maildir"):
            if f"{name}_send_ms" in pc:
                base = pc[f"{name}_send_ms"]["median"]
                rows.append(
                    (
                        f"send cost vs {name} send script",
                        f"{pc['post_ms']['median']:.1f} ms",
                        f"{base:.1f} ms",
                        f"{pc['post_ms']['median'] / base:.2f}×",
                    )
                )
    if "mcp-call" in r:
        for tool in ("post", "open"):
            m = r["mcp-call"][tool]
            rows.append(
                (
                    f"`{tool}` as an MCP tool call vs `paneboard {tool}` as a process",
                    f"{m['mcp_ms']['median']:.1f} ms",
                    f"{m['process_ms']['median']:.1f} ms",
                    f"{m['ratio_process_to_mcp']:.0f}× faster",
                )
            )
    if "append" in r:
        a = r["append"]
        rows.append(
            (
                "durable appends/s, one by one, vs SQLite WAL+FULL",
                f"{a['one_by_one_per_s']:,.0f}/s",
                f"{a['sqlite_wal_full_per_s']:,.0f}/s",
                f"{a['ratio_one_by_one_to_sqlite']:.2f}×",
            )
        )
    if "wake-nats" in r:
        nb = r["wake-nats"]["latency_ms"]
        base = r["wake"]["paneboard"]["latency_ms"] if "wake" in r else None
        rows.append(
            (
                "delivery latency, median, NATS store vs file log",
                f"{nb['median']:.2f} ms (p99 {nb['p99']:.2f})",
                f"{base['median']:.2f} ms (p99 {base['p99']:.2f})" if base else "–",
                f"{nb['median'] / base['median']:.1f}×" if base else "–",
            )
        )
    if "append-nats" in r:
        an = r["append-nats"]
        base_a = r.get("append")
        rows.append(
            (
                "acknowledged appends/s, one by one, NATS store vs file log",
                f"{an['one_by_one_per_s']:,.0f}/s",
                f"{base_a['one_by_one_per_s']:,.0f}/s" if base_a else "–",
                f"{an['one_by_one_per_s'] / base_a['one_by_one_per_s']:.2f}×" if base_a else "–",
            )
        )
        rows.append(
            (
                "acknowledged appends/s, batches of 1000, NATS store vs file log",
                f"{an['batched_per_s']:,.0f}/s",
                f"{base_a['batched_per_s']:,.0f}/s" if base_a else "–",
                f"{an['batched_per_s'] / base_a['batched_per_s']:.2f}×" if base_a else "–",
            )
        )
    rows += _cluster_rows(r)
    if "catch-up" in r:
        for n, row in r["catch-up"].items():
            cp, cold = row["checkpoint_ms"]["median"], row["cold_ms"]["median"]
            poll = row["sqlite_poll_ms"]["median"]
            rows.append(
                (
                    f"catch-up, {int(n):,} posts, first delivery (checkpoint / cold)",
                    f"{cp:.0f} / {cold:.0f} ms",
                    f"{poll:.0f} ms (SQLite first poll)",
                    f"{cp / poll:.1f}× / {cold / poll:.1f}×",
                )
            )
    if "seen-claude" in r:
        s, d = r["seen-claude"]["delivered_to_seen_ms"], r["seen-claude"]["door_ms"]
        rows.append(
            (
                "delivered → seen, real Claude Code (p50 / p99), beside append → delivered",
                f"{s['p50']:.0f} / {s['p99']:.0f} ms",
                f"{d['p50']:.1f} / {d['p99']:.1f} ms",
                "– (stages in a row, not rivals)",
            )
        )
    woken = (
        ("woken-claude", "Claude Code"),
        ("woken-codex", "Codex"),
        ("woken-pi", "pi"),
        ("woken-qwen", "Qwen Code"),
    )
    for name, title in woken:
        if name in r:
            w = r[name]
            rows.append(
                (
                    f"post → model, {title} asleep (woken) vs live, median",
                    f"{w['woken_ms']['median']:.0f} ms",
                    f"{w['live_ms']['median']:.0f} ms",
                    f"{w['woken_ms']['median'] / w['live_ms']['median']:.1f}× (the agent's start)",
                )
            )
    if "transcript" in r:
        t = r["transcript"]
        rows.append(
            (
                f"following a {t['mb']:.0f} MB transcript: from the mark vs all of it",
                f"{t['from_mark_ms']:.2f} ms",
                f"{t['all_ms']:.0f} ms",
                f"{t['all_ms'] / t['from_mark_ms']:.0f}× less",
            )
        )
    return rows


def _cluster_rows(r: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """The three-node cluster (R3) beside one NATS server (R1), and a post through a leader loss."""
    rows = []
    if "wake-cluster" in r:
        c = r["wake-cluster"]["latency_ms"]
        one = r.get("wake-nats", {}).get("latency_ms")
        base = f"{one['median']:.2f} ms (p99 {one['p99']:.2f})" if one else "–"
        ratio = f"{c['median'] / one['median']:.1f}×" if one else "–"
        cell = f"{c['median']:.2f} ms (p99 {c['p99']:.2f})"
        rows.append(("delivery latency, median, R3 cluster vs R1 server", cell, base, ratio))
    if "append-cluster" in r:
        c = r["append-cluster"]
        one = r.get("append-nats")
        for key, what in (("one_by_one_per_s", "one by one"), ("batched_per_s", "batches of 1000")):
            base = f"{one[key]:,.0f}/s" if one else "–"
            ratio = f"{c[key] / one[key]:.2f}×" if one else "–"
            label = f"acknowledged appends/s, {what}, R3 cluster vs R1 server"
            rows.append((label, f"{c[key]:,.0f}/s", base, ratio))
    if "leader-loss" in r:
        w = r["leader-loss"]["wait_ms"]
        failed = sum(code != 0 for code in r["leader-loss"]["exit_codes"])
        wait = f"{w['median'] / 1000:.1f} / {w['max'] / 1000:.1f} s"
        what = "`paneboard post` right after its leader is killed: wait (median / max)"
        rows.append((what, wait, f"{failed} of {w['n']} failed", "–"))
    return rows


def targets(r: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    if "wake" in r:
        w = r["wake"]["paneboard"]["latency_ms"]
        out.append(
            (
                "append → door p50 ≤ 1 ms, p99 ≤ 5 ms",
                f"p50 {w['p50']:.2f}, p99 {w['p99']:.2f} ms",
                w["p50"] <= 1 and w["p99"] <= 5,
            )
        )
    if "post-cli" in r:
        ratio = r["post-cli"]["ratio_post_to_pass"]
        out.append(("`post` ≤ 4× `python -c pass`", f"{ratio:.2f}×", ratio <= 4))
    if "append" in r:
        a = r["append"]
        out.append(
            (
                "one-by-one ≥ SQLite durable inserts",
                f"{a['ratio_one_by_one_to_sqlite']:.2f}×",
                a["ratio_one_by_one_to_sqlite"] >= 1,
            )
        )
        out.append(
            (
                "batched ≥ 100,000 posts/s",
                f"{a['batched_per_s']:,.0f}/s",
                a["batched_per_s"] >= 100_000,
            )
        )
    if "catch-up" in r:
        big = r["catch-up"][max(r["catch-up"], key=int)]
        n = int(max(r["catch-up"], key=int))
        cp, cold = big["checkpoint_ms"]["median"], big["cold_ms"]["median"]
        poll = big["sqlite_poll_ms"]["median"]
        out.append(
            (
                f"catch-up {n:,}: checkpoint ≤ 1.5× SQLite's first poll",
                f"{cp / poll:.2f}× ({cp:.0f} ms, {big['checkpoint_rss_mb']:.0f} MB)",
                cp <= 1.5 * poll,
            )
        )
        out.append(
            (
                f"catch-up {n:,}: cold ≤ 20× SQLite's first poll, peak RSS ≤ 100 MB",
                f"{cold / poll:.1f}× ({cold:.0f} ms), {big['cold_rss_mb']:.0f} MB",
                cold <= 20 * poll and big["cold_rss_mb"] <= 100,
            )
        )
        mid = r["catch-up"].get("100000")
        if mid is not None:
            cold, poll = mid["cold_ms"]["median"], mid["sqlite_poll_ms"]["median"]
            out.append(
                (
                    "catch-up 100,000: cold ≤ 10× SQLite's first poll",
                    f"{cold / poll:.1f}× ({cold:.0f} ms)",
                    cold <= 10 * poll,
                )
            )
        if "compact" in big:
            c = big["compact"]
            out.append(
                (
                    f"`compact` {n:,} posts (no target): time, size, cold catch-up after",
                    (
                        f"{c['seconds']:.1f} s, {c['before_mb']:.0f} → {c['after_mb']:.2f} MB, "
                        f"{c['cold_after_ms']:.0f} ms"
                    ),
                    True,
                )
            )
    if "fan-out" in r:
        f = r["fan-out"]
        out.append(
            (
                f"fan-out to {f['listeners']} listeners p99 ≤ 50 ms",
                f"p99 {f['to_all_ms']['p99']:.1f} ms",
                f["to_all_ms"]["p99"] <= 50,
            )
        )
    if "top" in r:
        t = r["top"]
        keys, idle = t["key_ms"], t["idle_core_percent"]
        what = f"`top`, {t['open_prompts']:,} open prompts, a post every {t['post_interval_ms']} ms"
        measured = f"p50 {keys['p50']:.1f}, p99 {keys['p99']:.1f} ms"
        out.append((f"{what}: a key answered ≤ 100 ms (p99)", measured, keys["p99"] <= 100))
        out.append(("`top` idle: CPU (no target)", f"{idle:.3f}% of a core", True))
    if "idle" in r:
        m = r["idle"]["many_listeners"]
        out.append(
            (
                f"{m['listeners']} idle listeners ≤ 0.5% of a core",
                f"{m['core_percent']:.3f}%",
                m["core_percent"] <= 0.5,
            )
        )
    return out


def write_report(r: dict[str, Any], out: Path) -> str:
    m = r["machine"]
    lines = [
        (
            f"Run {r['started']}{' (--quick)' if r['quick'] else ''} on {m['cpus']} × {m['cpu']}, "
            f"{m['memory_gib']} GiB, Python {m['python']}, Linux {m['kernel']}."
        ),
        "",
    ]
    lines += [
        "| measured side by side | paneboard | baseline | ratio |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in headline(r)]
    lines += ["", "| target | measured | met |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {'yes' if ok else '**no**'} |" for a, b, ok in targets(r)]
    lines += ["", "Details:", ""] + [
        f"- {k}: {_detail(v, k)}" for k, v in r.items() if k not in ("machine", "quick", "started")
    ]
    lines += _plots(r, out)
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


# A figure's unit, from how its name ends (`sign_stdlib_us`, `cold_ms`, `verify_1m_posts_s`).
UNITS = (("_us", "µs"), ("_ms", "ms"), ("_s", "s"))


def unit_of(name: str) -> str:
    """The unit a figure named *name* is in: its suffix says; ms when it names none."""
    return next((unit for suffix, unit in UNITS if name.endswith(suffix)), "ms")


def _detail(v: Any, name: str = "") -> str:
    if isinstance(v, dict):
        if "n" in v and "median" in v:
            return _ms(v, unit_of(name))
        return "; ".join(f"{k}: {_detail(x, k)}" for k, x in v.items() if k != "samples_ms")
    if isinstance(v, float):
        return f"{v:,.3f}"
    return str(v)


def _plots(r: dict[str, Any], out: Path) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["", "(no plots: install the `bench` extra, matplotlib)"]
    made = []
    if "wake" in r:
        fig, ax = plt.subplots(figsize=(7, 4))
        curves = dict(r["wake"])
        if "wake-nats" in r:
            curves["paneboard (NATS store)"] = r["wake-nats"]
        for name, v in curves.items():
            xs = sorted(v["samples_ms"])
            ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], label=name)
        ax.set(
            xscale="log",
            xlabel="delivery latency (ms, log)",
            ylabel="fraction delivered",
            title="Delivery latency CDF",
        )
        ax.legend()
        fig.savefig(out / "latency-cdf.png", dpi=110, bbox_inches="tight")
        made.append("![latency CDF](latency-cdf.png)")
    if "catch-up" in r and len(r["catch-up"]) > 1:
        sizes = sorted(r["catch-up"], key=int)
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        xs = [int(n) for n in sizes]
        for key, label in (("cold_ms", "cold"), ("checkpoint_ms", "checkpoint")):
            a1.plot(xs, [r["catch-up"][n][key]["median"] for n in sizes], marker="o", label=label)
        a1.plot(
            xs,
            [r["catch-up"][n]["sqlite_poll_ms"]["median"] for n in sizes],
            marker="o",
            label="SQLite first poll",
        )
        a1.set(
            xscale="log",
            yscale="log",
            xlabel="posts on the board",
            ylabel="ms to first delivery",
            title="Catch-up time",
        )
        for key, label in (("cold_rss_mb", "cold"), ("checkpoint_rss_mb", "checkpoint")):
            a2.plot(xs, [r["catch-up"][n][key] for n in sizes], marker="o", label=label)
        a2.set(
            xscale="log",
            xlabel="posts on the board",
            ylabel="peak RSS (MB)",
            title="Catch-up memory",
        )
        a1.legend()
        a2.legend()
        fig.savefig(out / "catch-up.png", dpi=110, bbox_inches="tight")
        made.append("![catch-up](catch-up.png)")
    plt.close("all")
    return ["", *made]
