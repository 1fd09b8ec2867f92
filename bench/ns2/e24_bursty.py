"""E2.4 (thesis 003 Sec. 2.5.2, Fig. 2.4(c)) in stock ns-2.35 and in tfcc, seed by seed.

For each protocol and seed, runs `e24_bursty.tcl` (ns-2's own agents) and tfcc on
`scenarios/003-e24-bursty.toml` with the overrides of the claims e24-tfrc-losses-vs-* in
`scenarios/reproduce/taxonomy.toml`, at the same start (the Tcl script draws tfcc's start for the
seed), and prints the test flow's packets sent and lost in [350, 370] s and in the 6 Mb/s phase
[200, 350] s, with its throughput in both windows. Then, for each pair of protocols, the claims'
aggregate (`tfcc.reproduce.evaluate`: the mean over seeds of the per-seed ratio of packets lost)
and the ratio of the sums, in each simulator.

Usage: `python bench/ns2/e24_bursty.py [PROTOCOLS] [SEEDS] [--json FILE]`, PROTOCOLS a comma list
of `tfrc`, `gaimd`, `sack` (default `sack,tfrc,gaimd`), SEEDS e.g. `1-12` (the default) or
`1,3,5`. Findings: docs/reproductions/log/taxonomy.md, "E2.4's loss counts in stock ns-2.35".
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tfcc.ns2 import find_ns
from tfcc.run import run
from tfcc.sweep import seeds_option

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "e24_bursty.tcl"
SCENARIO = HERE.parents[1] / "scenarios" / "003-e24-bursty.toml"
# The claims' flow 0 per protocol (scenarios/reproduce/taxonomy.toml, e24-*-losses-vs-*).
TFCC = {
    "tfrc": ("tfrc", '{ preset = "ns2", header_size = 0 }'),
    "gaimd": ("gaimd", "{ max_window = 200 }"),
    "sack": ("tcp-sack", "{ max_window = 200 }"),
}
START = 'flows.0.start={ random = ["0s", "1s"] }'


def ns2_run(protocol: str, seed: int, timeout: float = 300.0) -> dict:
    """One run of e24_bursty.tcl: its JSON line."""
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns-2: make ns2")
    out = subprocess.run(
        [ns, str(SCRIPT), f"protocol={protocol}", f"seed={seed}"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _tfcc_window(protocol: str, seed: int, start: str, end: str) -> dict:
    name, params = TFCC[protocol]
    with tempfile.TemporaryDirectory() as d:
        s = run(
            SCENARIO,
            Path(d) / "run",
            seed=seed,
            plots=False,
            overrides=[
                f"flows.0.protocol={name}",
                f"flows.0.params={params}",
                f"duration={end}",
                f"measure_from={start}",
                START,
            ],
        )
    return s["flows"][0]


def tfcc_run(protocol: str, seed: int) -> dict:
    """The claims' run (350-370 s) and the same up to 350 s measured from 200 s, in the keys of
    e24_bursty.tcl's report."""
    fall = _tfcc_window(protocol, seed, "350s", "370s")
    phase = _tfcc_window(protocol, seed, "200s", "350s")
    return {
        "sent_350_370": fall["packets_sent"],
        "lost_350_370": fall["packets_lost"],
        "sent_200_350": phase["packets_sent"],
        "lost_200_350": phase["packets_lost"],
        "throughput_bps": {"200_350": phase["throughput_bps"], "350_370": fall["throughput_bps"]},
    }


def ratios(lost: dict[str, dict[int, int]], a: str, b: str) -> tuple[float, float, list[float]]:
    """The claims' value (mean over seeds of a's packets lost over b's), the ratio of the sums
    and the per-seed ratios."""
    per = [lost[a][s] / lost[b][s] for s in lost[a]]
    return statistics.mean(per), sum(lost[a].values()) / sum(lost[b].values()), per


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = None
    if "--json" in sys.argv:
        out = Path(sys.argv[sys.argv.index("--json") + 1])
        args = [a for a in args if a != str(out)]
    protocols = (args[0] if args else "sack,tfrc,gaimd").split(",")
    seeds = seeds_option(args[1] if len(args) > 1 else "1-12", first=1)
    rows = []
    lost: dict[str, dict[str, dict[int, int]]] = {"ns2": {}, "tfcc": {}}
    for p in protocols:
        for sim in lost:
            lost[sim][p] = {}
        for seed in seeds:
            n = ns2_run(p, seed)
            t = tfcc_run(p, seed)
            lost["ns2"][p][seed] = n["lost_350_370"]
            lost["tfcc"][p][seed] = t["lost_350_370"]
            rows.append({"protocol": p, "seed": seed, "start_s": n["start_s"], "ns2": n, "tfcc": t})
            print(
                f"{p:5} seed {seed:2} start {n['start_s']:.9f}: lost 350-370 ns-2 "
                f"{n['lost_350_370']:4} / tfcc {t['lost_350_370']:4} (sent {n['sent_350_370']} / "
                f"{t['sent_350_370']}); 200-350 lost {n['lost_200_350']} / {t['lost_200_350']}, "
                f"Mb/s {n['throughput_bps']['200_350'] / 1e6:.2f} / "
                f"{t['throughput_bps']['200_350'] / 1e6:.2f}",
                flush=True,
            )
    summary = {}
    for a in protocols:
        for b in protocols:
            if a == b or a != "tfrc":
                continue
            for sim in lost:
                mean, sums, per = ratios(lost[sim], a, b)
                summary[f"{sim} {a}/{b}"] = {"claim_value": mean, "sum_ratio": sums, "per": per}
                print(
                    f"{sim} {a}/{b}: claim value (mean of per-seed ratios) {mean:.3f}, "
                    f"ratio of sums {sums:.3f}; per seed {' '.join(f'{r:.2f}' for r in per)}"
                )
    for sim in lost:
        for p in protocols:
            v = list(lost[sim][p].values())
            print(f"{sim} {p}: mean lost {statistics.mean(v):.1f} (range {min(v)}-{max(v)})")
    if out is not None:
        out.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
