"""Thesis 000 Sec. 5.1.1's on/off-CBR set-up with two SACK TCP flows in stock ns-2.35 and in
tfcc: the denominator of the claims 511-idle-* (`scenarios/reproduce/ttfwc.toml`).

For each half-period x and seed, runs `onoff_cbr.tcl` (ns-2's `Agent/TCP/Sack1`, the flows
started at tfcc's draws for the seed) and tfcc on `scenarios/000-onoff-cbr.toml` with the
claims' `versus` overrides (`flows.0.protocol=tcp-sack`, `flows.0.params={}`) and x, and prints
the idle-bandwidth use (`tfcc.metrics.idle_bandwidth_use`, as the claims compute it; the Tcl
script computes the same from ns-2's counters), the TCP flows' timeouts and retransmissions,
and their summed goodput while the CBR is on and while it is off. tfcc's phase goodput comes
from its time series sampled every x (`sample_interval`, which does not change the run), each
sample lying wholly in one phase. Then, per x, the mean, standard deviation and range over the
seeds in each simulator.

Usage: `python bench/ns2/onoff_cbr.py [XS] [SEEDS] [--min-rto S] [--tick-phase P] [--cbr-exact]
[--json FILE]`, XS a comma list of half-periods in seconds (default `0.05,0.4,1.6,3.2`), SEEDS
e.g. `1-5` (the default) or `1,3`; `--min-rto` sets both simulators' minimum RTO (a diagnostic:
the claims run ns-2's 0.2 s, whose backed-off multiples are multiples of the CBR's period 2x at
x = 0.05 and 0.4 s); `--tick-phase random` also runs tfcc with `rtt.tick_phase = "random"`
(ns-2's per-agent tick phase `boot_time_`) and reports it as a third simulator, `tfcc-random`;
`--cbr-exact` runs ns-2 with `cbr_exact=1` (its CBR stopped 1 us before each off instant, so
that every on phase sends tfcc's number of packets instead of one more at the off instant
itself, a diagnostic).
Findings: docs/reproductions/log/ttfwc.md, "The on/off-CBR TCP baseline in stock ns-2.35" and "The
lock gap on the on/off network".
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from tfcc import _core
from tfcc.metrics import RunResult, idle_bandwidth_use
from tfcc.ns2 import find_ns
from tfcc.sweep import seeds_option

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "onoff_cbr.tcl"
SCENARIO = HERE.parents[1] / "scenarios" / "000-onoff-cbr.toml"
CAPACITY_BPS = 15e6  # the claims' `args = { capacity_bps = 15e6 }`
TCP_FLOWS = (0, 1)


def ns2_run(x: float, seed: int, timeout: float = 300.0, **extra: Any) -> dict:
    """One run of onoff_cbr.tcl: its JSON line."""
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns-2: make ns2")
    args = [f"x={x}", f"seed={seed}"] + [f"{k}={v}" for k, v in extra.items()]
    out = subprocess.run(
        [ns, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def overrides(x: float, min_rto: float | None = None, tick_phase: str | None = None) -> list[str]:
    """The claims' `versus` run at half-period x, sampled once per phase; `min_rto` (seconds)
    replaces the TCP's 200-ms minimum RTO, a diagnostic only; `tick_phase` sets the TCPs'
    `rtt.tick_phase` (`"random"`: ns-2's per-agent `boot_time_` draw)."""
    rtt = []
    if min_rto is not None:
        rtt.append(f'min_rto = "{min_rto * 1e3:g}ms"')
    if tick_phase is not None:
        rtt.append(f'tick_phase = "{tick_phase}"')
    params = f"{{ rtt = {{ {', '.join(rtt)} }} }}" if rtt else "{}"
    return [
        "flows.0.protocol=tcp-sack",
        f"flows.0.params={params}",
        f"flows.1.on={x}s",
        f"flows.1.off={x}s",
        f"flows.1.start={x}s",
        f"sample_interval={x}s",
    ]


def tfcc_run(
    x: float,
    seed: int,
    min_rto: float | None = None,
    extra: list[str] | None = None,
    tick_phase: str | None = None,
) -> dict:
    """tfcc's run in the keys of onoff_cbr.tcl's report (idle use from the claims' metric);
    `extra` are further `--set` overrides (e.g. another access-delay spread)."""
    sets = overrides(x, min_rto, tick_phase) + (extra or [])
    r = _core.run_scenario(str(SCENARIO), sets, seed, None)
    s = RunResult(r["summary"], r["flow_series"], r["link_series"])
    start = float(s["measure_from_s"])
    end = float(s["sim_seconds"])
    flows = []
    for fid in TCP_FLOWS:
        f = s["flows"][fid]
        t, v = s.flow_column(fid, "throughput_bps")
        on, off, n_on, n_off = 0.0, 0.0, 0, 0
        run, stall = 0.0, 0.0
        for ti, vi in zip(t, v, strict=True):
            if ti <= start + 1e-9 or ti > end + 1e-9:
                continue
            run = run + x if vi == 0 else 0.0
            stall = max(stall, run)
            # The sample covers ((k - 1) x, k x]; the CBR is on in [(2j + 1) x, (2j + 2) x).
            k = round(ti / x)
            if (k - 1) % 2 == 1:
                on, n_on = on + vi, n_on + 1
            else:
                off, n_off = off + vi, n_off + 1
        flows.append(
            {
                "id": fid,
                "goodput_bps": f["throughput_bps"],
                "on_goodput_bps": on / max(n_on, 1),
                "off_goodput_bps": off / max(n_off, 1),
                "packets_sent": f["packets_sent"],
                "packets_retransmitted": f["retransmits"],
                "timeouts": f["timeouts"],
                "longest_stall_s": stall,
            }
        )
    link = next(li for li in s["links"] if li["name"] == "bottleneck")
    return {
        "idle_use": idle_bandwidth_use(s, CAPACITY_BPS),
        "utilization": link["utilization"],
        "bottleneck_drops": link["drops"],
        "cbr_bps": s["flows"][2]["throughput_bps"],
        "flows": flows,
    }


def per_run(r: dict) -> dict[str, float]:
    """The numbers compared per run: idle use, both flows' summed goodput per phase (Mb/s),
    timeouts and retransmissions per flow (mean of the two), bottleneck drops, the longer of
    the two flows' longest stalls (whole phases without a delivery) and Jain's index."""
    f = r["flows"]
    return {
        "idle_use": r["idle_use"],
        "on_mbps": sum(g["on_goodput_bps"] for g in f) / 1e6,
        "off_mbps": sum(g["off_goodput_bps"] for g in f) / 1e6,
        "timeouts": statistics.mean(g["timeouts"] for g in f),
        "rexmit": statistics.mean(g["packets_retransmitted"] for g in f),
        "drops": r["bottleneck_drops"],
        "stall_s": max(g["longest_stall_s"] for g in f),
        "jain": sum(g["goodput_bps"] for g in f) ** 2 / (2 * sum(g["goodput_bps"] ** 2 for g in f)),
    }


def spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.4g} ± {sd:.2g} ({min(values):.4g}-{max(values):.4g})"


def main() -> None:
    argv = sys.argv[1:]
    out = None
    if "--json" in argv:
        i = argv.index("--json")
        out = Path(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    min_rto = None
    if "--min-rto" in argv:
        i = argv.index("--min-rto")
        min_rto = float(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    tick_phase = None
    if "--tick-phase" in argv:
        i = argv.index("--tick-phase")
        tick_phase = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    extra: dict[str, Any] = {} if min_rto is None else {"minrto": min_rto}
    if "--cbr-exact" in argv:
        argv.remove("--cbr-exact")
        extra["cbr_exact"] = 1
    xs = [float(v) for v in (argv[0] if argv else "0.05,0.4,1.6,3.2").split(",")]
    seeds = seeds_option(argv[1] if len(argv) > 1 else "1-5", first=1)
    rows = []
    table: dict[float, dict[str, list[dict[str, float]]]] = {}
    for x in xs:
        table[x] = {"ns2": [], "tfcc": []}
        if tick_phase is not None:
            table[x][f"tfcc-{tick_phase}"] = []
        for seed in seeds:
            n = ns2_run(x, seed, **extra)
            t = tfcc_run(x, seed, min_rto)
            rows.append({"x": x, "seed": seed, "ns2": n, "tfcc": t})
            pn, pt = per_run(n), per_run(t)
            table[x]["ns2"].append(pn)
            table[x]["tfcc"].append(pt)
            if tick_phase is not None:
                tp = tfcc_run(x, seed, min_rto, tick_phase=tick_phase)
                rows[-1][f"tfcc-{tick_phase}"] = tp
                pp = per_run(tp)
                table[x][f"tfcc-{tick_phase}"].append(pp)
                print(
                    f"x {x:5} seed {seed}: tfcc with tick_phase {tick_phase}: idle use "
                    f"{pp['idle_use']:.4f}; timeouts per flow "
                    f"{'+'.join(str(g['timeouts']) for g in tp['flows'])}; Jain "
                    f"{pp['jain']:.3f}; longest stall s {pp['stall_s']:.1f}",
                    flush=True,
                )
            print(
                f"x {x:5} seed {seed}: idle use ns-2 {pn['idle_use']:.4f} / tfcc "
                f"{pt['idle_use']:.4f}; timeouts per flow "
                f"{'+'.join(str(g['timeouts']) for g in n['flows'])} / "
                f"{'+'.join(str(g['timeouts']) for g in t['flows'])}; on/off Mb/s "
                f"{pn['on_mbps']:.2f}/{pn['off_mbps']:.2f} / {pt['on_mbps']:.2f}/"
                f"{pt['off_mbps']:.2f}; drops {pn['drops']} / {pt['drops']}; Jain "
                f"{pn['jain']:.3f} / {pt['jain']:.3f}; longest stall s "
                f"{pn['stall_s']:.1f} / {pt['stall_s']:.1f}",
                flush=True,
            )
    summary = {}
    for x, sims in table.items():
        for key in (
            "idle_use",
            "timeouts",
            "rexmit",
            "on_mbps",
            "off_mbps",
            "drops",
            "jain",
            "stall_s",
        ):
            line = []
            for sim, runs in sims.items():
                vals = [r[key] for r in runs]
                summary[f"x={x} {sim} {key}"] = vals
                line.append(f"{sim} {spread(vals)}")
            print(f"x {x:5} {key:9}: {' | '.join(line)}")
    if out is not None:
        out.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
