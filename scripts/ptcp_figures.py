"""Sweeps and figures of docs/reproductions/ptcp.md (thesis 001 Figs. 7-11) from the current code.

Usage: python scripts/ptcp_figures.py [--jobs N] [--seeds 1,2,3] [--only e2,e4,e4r,e5,e6]
[--from-json FILE] OUTDIR (--from-json: draw and tabulate an earlier run's numbers, no runs)

Runs the scenarios of `tfcc reproduce ptcp` along the x axes of the thesis' Figs. 7-11 (too
many runs for the claims, which check single points), writes OUTDIR/ptcp-e2-load.png,
OUTDIR/ptcp-e4-sweep.png, OUTDIR/ptcp-e5-load.png, OUTDIR/ptcp-e6-load.png, the raw numbers
(OUTDIR/ptcp-sweeps-EXPS.json) and prints the page's Markdown tables. The time-series figures
(ptcp-e1-*.png, ptcp-e4-multi.png) are the claim file's `[[figures]]`: `tfcc reproduce ptcp
--out DIR` draws them into DIR/figures.

Axes. Figs. 7 and 8 (E2, E3): N_reno, the number of Reno flows (capped at max_window = 15 for
Fig. 8, the page's reading of "100 packets ≈ 4 Mbps"), 1-50 as in the claims. Fig. 9: N_reno,
the number of capped Reno flows (001 Sec. 3.2), 10-50. Figs. 10 and 11: "the amount of
background traffic" (001 Sec. 3.3.1); the text gives neither its unit nor its range, and the
figures are images. The unit here is the spec's reading (spec 001 §3.1, E5: "presumably the
number of SURGE sources"): SURGE users, each a sequence of Reno transfers with 001 Table 1's
sizes and think times. The range is chosen here: 100 to 1000 users, from a light load to past
the point where the web users alone offer more than the 80 Mb/s the 100 Mb/s bottleneck leaves
beside bw = 20 Mb/s (the tables give the web traffic each load carries). E2-E4 are run with
seed 1 only: their starts are spread evenly, so every seed is the same run; "e4r" runs E4 again
with the background's starts drawn at random over the first second, for each of --seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCEN = ROOT / "scenarios"
BW = 20e6
LOADS = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
N_RENO = [10, 20, 30, 40, 50]
N_RENO_E2 = [1, 5, 10, 20, 30, 40, 50]
BWS = [10, 20]

AGG = (
    'flows.0.params={ bw = "20Mbps", e = 32, k_min = true, estimator = "oracle", group = "proxy" }'
)
FOR_ONE = 'flows.0.params={ bw = "2Mbps", e = 32, k_min = true, estimator = "oracle" }'
RENO = ['flows.0.protocol="tcp-reno"', "flows.0.params={}"]
INLINE_E5 = ['flows.0.params.estimator="inline"']
INLINE_E6 = [
    'flows.0.params.estimator="inline"',
    'flows.1.params.congestion.ptcp.estimator="inline"',
]
WITHOUT = ['flows.0.start="0s"', 'flows.0.stop="1ms"']

CAPPED = "flows.1.params={ max_window = 15 }"
#: E4 with the background's starts drawn at random (the scenario spreads them evenly, which
#: makes every seed the same run), as the page's 4-seed E4 numbers were measured (h-ptcp6).
RANDOM_STARTS = 'flows.1.start={ random = ["0s", "1s"] }'
#: E2/E3 (Figs. 7, 8): the flow in PTCP's place (flow 0), per bw; the bw is set per run.
E2 = {
    "PTCP oracle": ['flows.0.params.estimator="oracle"'],
    "PTCP inline": ['flows.0.params.estimator="inline"'],
    "Reno": RENO,
    "constant": ["flows.0.params.constant=true"],
    "PTCP oracle, Reno capped": [CAPPED, 'flows.0.params.estimator="oracle"'],
    "PTCP inline, Reno capped": [CAPPED, 'flows.0.params.estimator="inline"'],
}
#: E4 (Fig. 9) configurations: Sender 1's ten connections as the claims run them.
E4 = {
    "For multi, N_pm = 10": [AGG],
    "For multi, N_pm = 5": [AGG, "flows.0.count=5"],
    "For one": [FOR_ONE],
    "TCP Reno": RENO,
}
#: E5 (Fig. 10): 10 connections from Sender 1 beside the SURGE users.
E5 = {"PTCP, oracle": [], "PTCP, inline": INLINE_E5, "TCP Reno": RENO}
#: E6 (Fig. 11): 5 long-lived PTCP connections and 5 SURGE users in one aggregate; "without"
#: stops the long-lived ones after 1 ms (as the claims do).
E6 = {
    "oracle": [],
    "oracle, without": WITHOUT,
    "inline": INLINE_E6,
    "inline, without": [*INLINE_E6, *WITHOUT],
}


def measure(job: tuple[str, str, tuple[str, ...], int]) -> dict[str, Any]:
    """One run, reduced to the numbers the page uses."""
    from tfcc.metrics import slot_success_pct
    from tfcc.reproduce import default_runner

    exp, scenario, overrides, seed = job
    r = default_runner(SCEN / scenario, list(overrides), seed)
    flows = r.summary["flows"]
    if exp.startswith("e2"):
        bw = float(exp.split(":")[1]) * 1e6
        f0 = flows[0]
        return {
            "slots_pct": slot_success_pct(r, flow=0, bw_bps=bw),
            "mbps": float(f0["throughput_bps"]) / 1e6,
            "timeouts": int(f0.get("timeouts", 0)),
        }

    def total(pred: Any) -> float:
        return sum(float(f["throughput_bps"]) for f in flows if pred(f)) / 1e6

    s1 = [f for f in flows if f.get("label") == "sender1"]
    out = {
        "slots_pct": slot_success_pct(r, label="sender1", bw_bps=BW, own_slots=False),
        "sender1_mbps": total(lambda f: f.get("label") == "sender1"),
        "sender1_timeouts": sum(int(f.get("timeouts", 0)) for f in s1),
    }
    if exp in ("e5", "e6"):
        out["surge_mbps"] = total(lambda f: f.get("label") == "surge")
    if exp == "e6":
        out["short_mbps"] = total(lambda f: f.get("label") == "sender1" and f["protocol"] == "web")
        out["long_mbps"] = total(lambda f: f.get("label") == "sender1" and f["protocol"] == "ptcp")
    return out


def jobs_for(only: list[str], seeds: list[int]) -> list[tuple[str, str, str, int, int]]:
    """(experiment, configuration, scenario, x, seed) for every run of the sweeps."""
    out = []
    if "e2" in only:
        out += [
            ("e2", f"{c}@{b}", "001-e2-load.toml", n, 1) for c in E2 for b in BWS for n in N_RENO_E2
        ]
    if "e4" in only:
        out += [("e4", c, "001-e4-multi.toml", n, 1) for c in E4 for n in N_RENO]
    if "e4r" in only:
        out += [("e4r", c, "001-e4-multi.toml", n, s) for c in E4 for n in N_RENO for s in seeds]
    if "e5" in only:
        out += [("e5", c, "001-e6-web.toml", n, s) for c in E5 for n in LOADS for s in seeds]
    if "e6" in only:
        out += [("e6", c, "001-e6-mixture.toml", n, s) for c in E6 for n in LOADS for s in seeds]
    return out


def tag(exp: str, config: str) -> str:
    """The experiment as :func:`measure` needs it: E2's carries the bw in Mb/s ("e2:20")."""
    return f"e2:{config.split('@')[1]}" if exp == "e2" else exp


def overrides(exp: str, config: str, x: int) -> tuple[str, ...]:
    if exp == "e2":
        name, bw = config.split("@")
        bw_set = [] if name == "Reno" else [f'flows.0.params.bw="{bw}Mbps"']
        return (f"flows.1.count={x}", *E2[name], *bw_set)
    if exp == "e4":
        return (f"flows.1.count={x}", *E4[config])
    if exp == "e4r":
        return (f"flows.1.count={x}", *E4[config], RANDOM_STARTS)
    if exp == "e5":
        return (f"flows.1.count={x}", *E5[config])
    return (f"flows.2.count={x}", *E6[config])


def mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.fmean(r[key] for r in rows)


def table_e2(res: dict) -> str:
    lines = ["| bw | N_reno | " + " | ".join(E2) + " |", "|---" * (len(E2) + 2) + "|"]
    for b in BWS:
        for n in N_RENO_E2:
            cells = []
            for c in E2:
                r = res["e2"][f"{c}@{b}"][str(n)][0]
                to = f", {r['timeouts']} TO" if r["timeouts"] else ""
                cells.append(f"{r['slots_pct']:.1f} %, {r['mbps']:.1f}{to}")
            lines.append(f"| {b} Mb/s | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_e2(res: dict, out: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(13, 4), sharey=True)
    for ax, b in zip(axes, BWS, strict=True):
        for c in E2:
            ys = [res["e2"][f"{c}@{b}"][str(n)][0]["slots_pct"] for n in N_RENO_E2]
            ax.plot(N_RENO_E2, ys, "o--" if "capped" in c else "o-", label=c)
        ax.set_title(f"bw = {b} Mb/s", fontsize=10)
        ax.set_xlabel("N_reno")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("% of evaluation slots with ≥ bw")
    axes[0].set_ylim(-3, 103)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8)
    fig.suptitle(
        "001 Figs. 7 and 8 (E2, E3): one flow against N_reno Reno flows, seed 1", fontsize=11
    )
    fig.tight_layout(rect=(0, 0, 0.8, 1))
    fig.savefig(out / "ptcp-e2-load.png", dpi=100)
    plt.close(fig)


def table_e4(res: dict) -> str:
    lines = [
        "| N_reno | " + " | ".join(E4) + " |",
        "|---" * (len(E4) + 1) + "|",
    ]
    for n in N_RENO:
        cells = []
        for c in E4:
            r = res["e4"][c][str(n)][0]
            cells.append(
                f"{r['slots_pct']:.1f} %, {r['sender1_mbps']:.2f} Mb/s, {r['sender1_timeouts']} TO"
            )
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table_e4r(res: dict) -> str:
    lines = ["| N_reno | " + " | ".join(E4) + " |", "|---" * (len(E4) + 1) + "|"]
    for n in N_RENO:
        cells = []
        for c in E4:
            rows = res["e4r"][c][str(n)]
            to = "-".join(str(f(r["sender1_timeouts"] for r in rows)) for f in (min, max))
            cells.append(
                f"{_per_seed(rows, 'slots_pct', '.1f')}, {mean(rows, 'sender1_mbps'):.2f} Mb/s, "
                f"{to} TO"
            )
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _per_seed(rows: list[dict[str, Any]], key: str, fmt: str) -> str:
    m = format(mean(rows, key), fmt)
    if len(rows) == 1:
        return m
    return f"{m} ({'/'.join(format(r[key], fmt) for r in rows)})"


def table_e5(res: dict) -> str:
    head = " | ".join(f"{c}: % slots" for c in E5)
    lines = [
        f"| SURGE users | web Mb/s (beside Reno) | {head} "
        "| Sender 1 Mb/s (oracle / inline / Reno) |",
        "|---" * (len(E5) + 3) + "|",
    ]
    for n in LOADS:
        rows = {c: res["e5"][c][str(n)] for c in E5}
        pct = " | ".join(_per_seed(rows[c], "slots_pct", ".1f") for c in E5)
        mbps = " / ".join(f"{mean(rows[c], 'sender1_mbps'):.1f}" for c in E5)
        web = mean(rows["TCP Reno"], "surge_mbps")
        lines.append(f"| {n} | {web:.1f} | {pct} | {mbps} |")
    return "\n".join(lines)


def table_e6(res: dict) -> str:
    lines = [
        "| SURGE users | background web Mb/s (without) | % slots, oracle | % slots, inline "
        "| 5 short-lived users, Mb/s with / without, oracle | the same, inline "
        "| long-lived Mb/s (oracle / inline) |",
        "|---" * 7 + "|",
    ]
    for n in LOADS:
        r = {c: res["e6"][c][str(n)] for c in E6}
        short = []
        for est in ("oracle", "inline"):
            w, wo = mean(r[est], "short_mbps"), mean(r[f"{est}, without"], "short_mbps")
            short.append(f"{w:.3f} / {wo:.3f} ({w / wo:.2f})")
        lines.append(
            f"| {n} | {mean(r['oracle, without'], 'surge_mbps'):.1f} "
            f"| {_per_seed(r['oracle'], 'slots_pct', '.1f')} "
            f"| {_per_seed(r['inline'], 'slots_pct', '.1f')} | {short[0]} | {short[1]} "
            f"| {mean(r['oracle'], 'long_mbps'):.1f} / {mean(r['inline'], 'long_mbps'):.1f} |"
        )
    return "\n".join(lines)


def plot_e4(res: dict, out: Path) -> None:
    panels = [("e4", "seed 1 (the claims' runs)")]
    if "e4r" in res:
        n = len(res["seeds"])
        panels.append(("e4r", f"background starts at random, mean of {n} seeds"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 3.8), squeeze=False)
    for ax, (exp, title) in zip(axes[0], panels, strict=True):
        for c in E4:
            ax.plot(N_RENO, [mean(res[exp][c][str(n)], "slots_pct") for n in N_RENO], "o-", label=c)
        ax.set_xlabel("N_reno (capped Reno flows, max_window = 15)")
        ax.set_ylabel("% of 1 s slots with ≥ 20 Mb/s")
        ax.set_ylim(-3, 103)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("001 Fig. 9 (E4): Sender 1's connections together, oracle", fontsize=11)
    fig.tight_layout()
    fig.savefig(out / "ptcp-e4-sweep.png", dpi=100)
    plt.close(fig)


def plot_e5(res: dict, out: Path, nseeds: int) -> None:
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for c in E5:
        ax.plot(LOADS, [mean(res["e5"][c][str(n)], "slots_pct") for n in LOADS], "o-", label=c)
    ax.set_xlabel("SURGE users (background web traffic)")
    ax.set_ylabel("% of 1 s slots with ≥ 20 Mb/s")
    ax.set_ylim(-3, 103)
    ax.set_title(
        f"001 Fig. 10 (E5): 10 connections of Sender 1, mean of {nseeds} seeds", fontsize=10
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "ptcp-e5-load.png", dpi=100)
    plt.close(fig)


def plot_e6(res: dict, out: Path, nseeds: int) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for est in ("oracle", "inline"):
        axes[0].plot(
            LOADS, [mean(res["e6"][est][str(n)], "slots_pct") for n in LOADS], "o-", label=est
        )
        for c, style in ((est, "o-"), (f"{est}, without", "s--")):
            axes[1].plot(
                LOADS,
                [mean(res["e6"][c][str(n)], "short_mbps") for n in LOADS],
                style,
                label="with long-lived, " + est if c == est else "without long-lived, " + est,
            )
    axes[0].set_ylabel("% of 1 s slots with ≥ 20 Mb/s")
    axes[0].set_ylim(-3, 103)
    axes[0].set_title("aggregate of 5 long- + 5 short-lived", fontsize=10)
    axes[1].set_ylabel("sum of the 5 short-lived users' goodput (Mb/s)")
    axes[1].set_title("short-lived connections", fontsize=10)
    axes[1].set_ylim(bottom=0)
    for ax in axes:
        ax.set_xlabel("SURGE users (background web traffic)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"001 Fig. 11 (E6), mean of {nseeds} seeds", fontsize=11)
    fig.tight_layout()
    fig.savefig(out / "ptcp-e6-load.png", dpi=100)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seeds", default="1,2,3", help="seeds of E4r, E5 and E6 (E2, E4: 1)")
    ap.add_argument("--only", default="e2,e4,e4r,e5,e6")
    ap.add_argument("--from-json", type=Path, help="numbers of an earlier run (no runs)")
    a = ap.parse_args()
    only = a.only.split(",")
    seeds = [int(s) for s in a.seeds.split(",")]
    a.outdir.mkdir(parents=True, exist_ok=True)
    if a.from_json:
        res = json.loads(a.from_json.read_text())
        seeds = res["seeds"]
        only = [e for e in only if e in res]
    else:
        todo = jobs_for(only, seeds)
        with ProcessPoolExecutor(a.jobs) as pool:
            runs = [(tag(e, c), sc, overrides(e, c, x), s) for e, c, sc, x, s in todo]
            done = list(pool.map(measure, runs))
        res = {"seeds": seeds}
        for (e, c, _, x, s), r in zip(todo, done, strict=True):
            res.setdefault(e, {}).setdefault(c, {}).setdefault(str(x), []).append({"seed": s, **r})
        name = "-".join(only)
        (a.outdir / f"ptcp-sweeps-{name}.json").write_text(json.dumps(res, indent=1) + "\n")
    if "e2" in only:
        plot_e2(res, a.outdir)
        print("E2/E3 (Figs. 7, 8)\n\n" + table_e2(res) + "\n")
    if "e4" in only:
        plot_e4(res, a.outdir)
        print("E4 (Fig. 9)\n\n" + table_e4(res) + "\n")
    if "e4r" in only:
        print("E4 (Fig. 9), random starts\n\n" + table_e4r(res) + "\n")
    if "e5" in only:
        plot_e5(res, a.outdir, len(seeds))
        print("E5 (Fig. 10)\n\n" + table_e5(res) + "\n")
    if "e6" in only:
        plot_e6(res, a.outdir, len(seeds))
        print("E6 (Fig. 11)\n\n" + table_e6(res) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
