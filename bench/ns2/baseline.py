"""Records the ns-2 baseline: timing rows of issue 4, its cross-check grid, and issue 5's TFRC rows.

    python3 bench/ns2/baseline.py [--quick] [--only timing,grid,tfrc] [--out bench/ns2]

writes BASELINE.md (tables) and baseline.json (every run's parameters, counters, derived metrics
and resource use) beside this file. Each run is checked for physical consistency (utilisation at
most 1, receiver bytes = bottleneck departures within edge effects, packets sent = packets
arriving at the bottleneck + loss-model drops); a violation is printed and marked in the table,
never dropped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# tfcc.ns2 is standard-library only; load it by path so that the compiled extension need not be
# built just to record a baseline.
_spec = importlib.util.spec_from_file_location("tfcc_ns2", ROOT / "python" / "tfcc" / "ns2.py")
assert _spec is not None and _spec.loader is not None
ns2 = importlib.util.module_from_spec(_spec)
sys.modules["tfcc_ns2"] = ns2
_spec.loader.exec_module(ns2)

# Issue 4's dumbbell: access links 100 Mb/s / 1 ms, DropTail 100 packets at the bottleneck.
DUMBBELL_A = {
    "bottleneck_rate": 15e6,
    "bottleneck_delay": 0.02,
    "queue": "droptail",
    "limit": 100,
    "access_rate": 100e6,
    "access_delay": 0.001,
}
DUMBBELL_B = {
    "tcp": 1000,
    "bottleneck_rate": 1e9,
    "bottleneck_delay": 0.01,
    "queue": "droptail",
    "limit": 1000,
    "access_rate": 10e9,
    "access_delay": 0.001,
    "duration": 20.0,
}


def timing_rows(quick: bool) -> list[tuple[str, dict[str, Any], int]]:
    rows: list[tuple[str, dict[str, Any], int]] = []
    for n in (2, 16, 64, 128):
        rows.append((f"A N={n}", {**DUMBBELL_A, "tcp": n, "duration": 100.0}, 1 if quick else 3))
    rows.append(("B N=1000", dict(DUMBBELL_B), 1 if quick else 2))
    return rows


def grid_rows(quick: bool) -> list[tuple[str, dict[str, Any], int]]:
    """Issue 4's cross-check: 1-16 SACK flows, 2-15 Mb/s, 10-50 ms, DropTail 20-100, + 1 % loss."""
    rows: list[tuple[str, dict[str, Any], int]] = []
    seeds = 1 if quick else 3
    flows = (1, 4, 16) if quick else (1, 2, 4, 8, 16)
    for n in flows:
        for rate in (2e6, 15e6):
            for delay in (0.01, 0.05):
                for limit in (20, 100):
                    params = {
                        **DUMBBELL_A,
                        "tcp": n,
                        "bottleneck_rate": rate,
                        "bottleneck_delay": delay,
                        "limit": limit,
                        "duration": 100.0,
                    }
                    name = f"{n} SACK {rate / 1e6:g} Mb/s {delay * 1e3:g} ms DT{limit}"
                    rows.append((name, params, seeds))
    for n, rate, delay, limit in (
        (1, 15e6, 0.02, 100),
        (4, 15e6, 0.02, 100),
        (16, 15e6, 0.02, 100),
        (2, 2e6, 0.05, 20),
    ):
        params = {
            **DUMBBELL_A,
            "tcp": n,
            "bottleneck_rate": rate,
            "bottleneck_delay": delay,
            "limit": limit,
            "loss": 0.01,
            "duration": 100.0,
        }
        name = f"{n} SACK {rate / 1e6:g} Mb/s {delay * 1e3:g} ms DT{limit} + 1% Bernoulli"
        rows.append((name, params, seeds))
    return rows


def tfrc_rows(quick: bool) -> list[tuple[str, dict[str, Any], int]]:
    """Issue 5: N TCP-SACK + N TFRC on dumbbell A for 100 s; one TFRC alone over 1 % loss."""
    seeds = 1 if quick else 3
    rows: list[tuple[str, dict[str, Any], int]] = []
    for n in (1, 8, 32, 64):
        rows.append(
            (f"{n} TCP + {n} TFRC", {**DUMBBELL_A, "tcp": n, "tfrc": n, "duration": 100.0}, seeds)
        )
    rows.append(
        (
            "1 TFRC alone, 1% Bernoulli",
            {**DUMBBELL_A, "tcp": 0, "tfrc": 1, "loss": 0.01, "duration": 100.0},
            seeds,
        )
    )
    return rows


def run_row(name: str, params: dict[str, Any], repeats: int, vary_seed: bool) -> list[dict]:
    out = []
    for i in range(repeats):
        p = dict(params)
        p["seed"] = i + 1 if vary_seed else 1
        try:
            r = ns2.run_ns2(p, timeout=900)
        except ns2.Ns2Error as exc:
            print(f"  {name} seed {p['seed']}: FAILED: {exc}", file=sys.stderr)
            out.append({"name": name, "params": p, "error": str(exc)})
            continue
        r["name"] = name
        r["problems"] = ns2.physical_problems(r)
        tag = "; ".join(r["problems"]) or "ok"
        print(
            f"  {name} seed {p['seed']}: {r['wall_seconds']:.2f} s wall, "
            f"{r['peak_rss_kib'] / 1024:.1f} MiB, util {r['bottleneck']['utilization']:.4f}, {tag}",
            file=sys.stderr,
            flush=True,
        )
        out.append(r)
    return out


def compact(r: dict[str, Any]) -> dict[str, Any]:
    """A run as stored in baseline.json: per-flow entries only for small runs."""
    keep = {k: v for k, v in r.items() if k not in ("command", "flows")}
    if "flows" in r:
        if len(r["flows"]) <= 16:
            keep["flows"] = r["flows"]
        keep["flow_throughput_bps"] = [f["throughput_bps"] for f in r["flows"]]
    return keep


def _fmt_mbps(x: float) -> str:
    return f"{x / 1e6:.3f}"


def _spread(values: Iterable[float], fmt: str = "{:.3f}") -> str:
    v = list(values)
    if len(v) == 1:
        return fmt.format(v[0])
    return f"{fmt.format(statistics.mean(v))} [{fmt.format(min(v))}–{fmt.format(max(v))}]"


def machine() -> str:
    cpu = ns2.cpu_model()
    load = os.getloadavg()
    return (
        f"`nproc` = {os.cpu_count()}, CPU model (/proc/cpuinfo) `{cpu}`, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
        "(the 2 cores are shared with other work, so timings carry noise; min and median shown)"
    )


def _table(
    head: list[str],
    runs: dict[str, list[dict]],
    cells: Callable[[list[dict]], list[str]],
    failed: Callable[[list[dict]], str] = lambda rs: "failed",
) -> list[str]:
    """A Markdown table with a row per named run group: `head` names the columns (the first is
    the row's name), `cells` writes the other cells from the group's runs that did not fail,
    and a group whose runs all failed gets `failed(runs)` and empty cells."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, rs in runs.items():
        ok = [r for r in rs if "error" not in r]
        if not ok:
            lines.append(f"| {name} | {failed(rs)} |" + " |" * (len(head) - 2))
            continue
        lines.append("| " + " | ".join([name, *cells(ok)]) + " |")
    return lines


def _bottleneck_cells(ok: list[dict]) -> list[str]:
    """Queue drops and loss-model drops at the bottleneck, as spreads over the runs."""
    return [
        _spread((r["bottleneck"]["drops_pkts"] for r in ok), "{:.0f}"),
        _spread((r["bottleneck"]["loss_model_drops_pkts"] for r in ok), "{:.0f}"),
    ]


def _closing_cells(ok: list[dict]) -> list[str]:
    """Median wall time and the physical-consistency problems of any run (or `ok`)."""
    problems = sorted({p for r in ok for p in r["problems"]})
    return [
        f"{statistics.median(r['wall_seconds'] for r in ok):.2f}",
        "; ".join(problems) or "ok",
    ]


def timing_table(runs: dict[str, list[dict]]) -> list[str]:
    def cells(ok: list[dict]) -> list[str]:
        walls = [r["wall_seconds"] for r in ok]
        best = min(ok, key=lambda r: r["wall_seconds"])
        pkts = best["bottleneck_totals"]["departures_pkts"]
        tput = sorted(f["throughput_bps"] for f in best["flows"])
        return [
            str(len(ok)),
            f"{min(walls):.2f} / {statistics.median(walls):.2f}",
            f"{statistics.median(r['cpu_seconds'] for r in ok):.2f}",
            f"{max(r['peak_rss_kib'] for r in ok) / 1024:.1f}",
            str(pkts),
            f"{pkts / best['wall_seconds']:.0f}",
            f"{best['bottleneck']['utilization']:.4f}",
            _fmt_mbps(best["derived"]["total_throughput_bps"]),
            f"{_fmt_mbps(tput[0])} / {_fmt_mbps(statistics.median(tput))} / {_fmt_mbps(tput[-1])}",
            f"{best['derived']['jain_index']:.3f}",
            str(best["bottleneck"]["drops_pkts"]),
            "; ".join(best["problems"]) or "ok",
        ]

    head = [
        "row",
        "runs",
        "wall s (min / median)",
        "CPU s (median)",
        "peak RSS MiB",
        "pkts across bottleneck",
        "pkts / wall s (at min wall)",
        "utilisation",
        "aggregate Mb/s",
        "per-flow Mb/s min / median / max",
        "Jain",
        "drops (queue)",
        "checks",
    ]
    return _table(head, runs, cells, lambda rs: f"failed: {rs[0].get('error', '')[:80]}")


def grid_table(runs: dict[str, list[dict]]) -> list[str]:
    def cells(ok: list[dict]) -> list[str]:
        return [
            _spread((r["bottleneck"]["utilization"] for r in ok), "{:.4f}"),
            _spread((r["derived"]["total_throughput_bps"] / 1e6 for r in ok), "{:.3f}"),
            *_bottleneck_cells(ok),
            _spread((r["bottleneck"]["mean_queue_pkts"] for r in ok), "{:.1f}"),
            _spread((r["derived"]["jain_index"] for r in ok), "{:.3f}"),
            *_closing_cells(ok),
        ]

    head = [
        "scenario",
        "utilisation",
        "aggregate Mb/s",
        "queue drops",
        "loss-model drops",
        "mean queue pkts",
        "Jain",
        "wall s",
        "checks",
    ]
    return _table(head, runs, cells)


def tfrc_table(runs: dict[str, list[dict]]) -> list[str]:
    def cells(ok: list[dict]) -> list[str]:
        thetas = [r["derived"]["theta"] for r in ok if r["derived"]["theta"] is not None]
        by_kind = [r["derived"]["throughput_bps"] for r in ok]
        return [
            _spread(thetas) if thetas else "–",
            _spread((k.get("tcp", 0) / 1e6 for k in by_kind), "{:.3f}"),
            _spread((k.get("tfrc", 0) / 1e6 for k in by_kind), "{:.3f}"),
            _spread(r["bottleneck"]["utilization"] for r in ok),
            *_bottleneck_cells(ok),
            _spread(r["derived"]["jain_index"] for r in ok),
            *_closing_cells(ok),
        ]

    head = [
        "scenario",
        "θ = TCP bytes / all bytes",
        "TCP Mb/s",
        "TFRC Mb/s",
        "utilisation",
        "queue drops",
        "loss-model drops",
        "Jain (all)",
        "wall s",
        "checks",
    ]
    return _table(head, runs, cells)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat/seed, smaller grid")
    ap.add_argument("--only", default="timing,grid,tfrc")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args()
    if not ns2.have_ns2():
        print("ns-2 is not installed: run scripts/install-ns2.sh", file=sys.stderr)
        return 2
    parts = set(args.only.split(","))
    header_machine = machine()
    results: dict[str, dict[str, list[dict]]] = {}
    for part, rows, vary in (
        ("timing", timing_rows(args.quick), False),
        ("grid", grid_rows(args.quick), True),
        ("tfrc", tfrc_rows(args.quick), True),
    ):
        if part not in parts:
            continue
        print(f"{part}:", file=sys.stderr)
        results[part] = {name: run_row(name, p, reps, vary) for name, p, reps in rows}

    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    raw = {
        "generated": stamp,
        "machine": header_machine,
        "results": {
            part: {name: [compact(r) for r in rs] for name, rs in rows.items()}
            for part, rows in results.items()
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "baseline.json").write_text(json.dumps(raw, indent=1) + "\n")

    md = [
        "# ns-2.35 baseline",
        "",
        f"Generated {stamp} by `python3 bench/ns2/baseline.py"
        f"{' --quick' if args.quick else ''}` "
        "(raw numbers of every run in `baseline.json`). Scenario: `bench/ns2/dumbbell.tcl`, "
        "parameters and measurement as in `bench/ns2/README.md`; measurement window "
        "[duration/5, duration]. Byte counts are ns-2's on-wire sizes (1040 B per TCP segment, "
        "1032 B per TFRC packet).",
        "",
        f"Machine: {header_machine}.",
        "",
    ]
    if "timing" in results:
        md += [
            "## Timing rows (issue 4: A = 15 Mb/s, 20 ms, DropTail 100, access 100 Mb/s / 1 ms, "
            "100 s; B = 1 Gb/s, 10 ms, DropTail 1000, access 10 Gb/s / 1 ms, 20 s; TCP-SACK)",
            "",
            "Wall time is measured around the whole `ns` process (start-up and set-up included); "
            "peak RSS is the process's `ru_maxrss`; packets across the bottleneck count the "
            "whole run (from t = 0). Seed 1 for every repeat (the runs are deterministic; repeats "
            "only measure timing noise).",
            "",
            *timing_table(results["timing"]),
            "",
        ]
    if "grid" in results:
        md += [
            "## Cross-check grid (issue 4), 100 s, seeds 1–3: mean [min–max] over seeds",
            "",
            *grid_table(results["grid"]),
            "",
        ]
    if "tfrc" in results:
        md += [
            "## TFRC rows (issue 5), dumbbell A, 100 s, seeds 1–3: mean [min–max] over seeds",
            "",
            *tfrc_table(results["tfrc"]),
            "",
        ]
    (args.out / "BASELINE.md").write_text("\n".join(md))
    bad = [
        (part, r["name"])
        for part, rows in results.items()
        for rs in rows.values()
        for r in rs
        if "error" in r or r["problems"]
    ]
    if bad:
        print(f"{len(bad)} runs failed or broke a physical check: {bad}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
