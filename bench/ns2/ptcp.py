"""Thesis 001's PTCP on stock ns-2.35's TCP against tfcc's, case for case (issue 9).

Each case is a claim's scenario and `set` lines (scenarios/reproduce/ptcp.toml, the oracle
estimator): tfcc runs it (`tfcc.reproduce.default_runner`, the claims' own runner) and
`ptcp.tcl` builds the same network in ns-2.35, with ns-2's Agent/TCP/Sack1 under the same
controller (Eq. 1 through `increase_num_`, set from a 1 ms tick) and ns-2's Agent/TCP/Reno as
the Reno flows, started at the instants tfcc starts them. Printed side by side: % of
evaluation slots meeting bw (the claims' `slot_success_pct`: the flow's own slots, or 1 s bins
of goodput for Reno in PTCP's place), the PTCP flow's mean goodput, timeouts, mean k and min /
mean s (over the 0.1 s samples), the Reno flows' total goodput and the bottleneck's drops.

Usage: `python bench/ns2/ptcp.py [CASES] [--seeds 1,2,3] [--random-starts] [--tick 0.001]
[--k-series ack|tick] [--json FILE]`, CASES a comma list of the names in `CASES` (default all).
The k column is the mean over 0.1 s samples of the k the last congestion-avoidance ACK met, on
both sides; `--k-series tick` records ns-2's k from every tick instead, also from ticks no ACK
meets (the harness before 2026-11-27, which inflated ns-2's mean k 1.4-1.9 times). The
scenarios spread the Reno starts evenly, so only `--random-starts` (uniform draws in the same
ranges, tfcc's streams on both sides) makes seeds differ. Findings: docs/reproductions/log/ptcp.md,
"PTCP in stock ns-2.35".
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfcc import _core, reproduce
from tfcc.metrics import RunResult, binned_throughput, ptcp_slot_rows, slot_success_pct
from tfcc.ns2 import find_ns
from tfcc.sweep import seeds_option

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from e2_artloss import _override, _seconds  # noqa: E402  (shared with the E2.1 harness)

SCRIPT = HERE / "ptcp.tcl"
SCENARIOS = HERE.parent.parent / "scenarios"
ORACLE = 'flows.0.params.estimator="oracle"'
N30_CAPPED = ["flows.1.count=30", "flows.1.params={ max_window = 15 }"]


@dataclasses.dataclass(frozen=True)
class Case:
    scenario: str
    overrides: tuple[str, ...]
    skip: int = 0  # evaluation slots left out at the start (e1-slots-*: "after the first few")


# The claims' cases (their ids in scenarios/reproduce/ptcp.toml), with the oracle.
CASES: dict[str, Case] = {
    "e1": Case("001-e1-load-steps.toml", (ORACLE,), skip=2),
    "e2-bw20-n10": Case("001-e2-load.toml", ("flows.1.count=10", ORACLE)),
    "e2-bw20-n30": Case("001-e2-load.toml", ("flows.1.count=30", ORACLE)),
    "e2-bw10-n30": Case(
        "001-e2-load.toml", ("flows.1.count=30", 'flows.0.params.bw="10Mbps"', ORACLE)
    ),
    "e3-bw20-n30": Case("001-e2-load.toml", (*N30_CAPPED, ORACLE)),
    # E3 with the thesis' literal cap (maximum cwnd 100 packets, spec 001 §3.1), not a claim.
    "e3-literal-bw20-n30": Case(
        "001-e2-load.toml", ("flows.1.count=30", "flows.1.params={ max_window = 100 }", ORACLE)
    ),
    # Plain Reno in PTCP's place against E3's capped flows (not a claim): the baseline of E3.
    "e3-reno-bw20-n30": Case(
        "001-e2-load.toml", (*N30_CAPPED, 'flows.0.protocol="tcp-reno"', "flows.0.params={}")
    ),
    "e2-reno-bw20-n30": Case(
        "001-e2-load.toml", ("flows.1.count=30", 'flows.0.protocol="tcp-reno"', "flows.0.params={}")
    ),
}


def _quantity(text: Any, kind: str) -> float:
    q = _core.parse_quantity(str(text))
    if q is None or q[0] != kind:
        raise ValueError(f"not a {kind}: {text!r}")
    return float(q[1])


def ns2_args(scenario: Path, overrides: Sequence[str], seed: int) -> list[str]:
    """ptcp.tcl's key=value arguments for the scenario after the claim's overrides."""
    doc = tomllib.loads(scenario.read_text())
    for line in overrides:
        _override(doc, line)
    flows = doc["flows"]
    first = flows[0]
    if first["protocol"] not in ("ptcp", "tcp-reno"):
        raise ValueError(f"{scenario}: flow 0 is {first['protocol']}, not ptcp or tcp-reno")
    params = first.get("params", {})
    groups, windows = [], set()
    for f in flows[1:]:
        if f["protocol"] != "tcp-reno":
            raise ValueError(f"{scenario}: only tcp-reno flows may follow the PTCP flow")
        start = f.get("start", "0s")
        how = "even"
        if isinstance(start, dict):
            start, how = start["random"], "random"
        lo, hi = (start, start) if isinstance(start, str) else start
        groups.append(f"{int(f.get('count', 1))}:{_seconds(lo):g}:{_seconds(hi):g}:{how}")
        windows.add(int(f.get("params", {}).get("max_window", 10000)))
    if len(windows) > 1:
        raise ValueError(f"{scenario}: the Reno groups' windows differ")
    args = [
        f"groups={','.join(groups)}",
        f"reno_window={windows.pop() if windows else 10000}",
        f"mode={'ptcp' if first['protocol'] == 'ptcp' else 'reno'}",
        f"seed={seed}",
        f"duration={_seconds(doc['duration']):g}",
    ]
    if first["protocol"] == "ptcp":
        if params.get("estimator") != "oracle":
            raise ValueError("ptcp.tcl has the oracle only (set the estimator to oracle)")
        args += [
            f"bw={_quantity(params.get('bw', '20Mbps'), 'rate'):g}",
            f"e={int(params.get('e', 32))}",
            f"s_init={int(params.get('s_init', 16))}",
            f"kmin={int(bool(params.get('k_min', True)))}",
        ]
    return args


@dataclasses.dataclass
class Side:
    """One simulator's numbers for a case."""

    slots_pct: float
    slots: int
    ptcp_mbps: float
    timeouts: int
    k_mean: float | None
    s_min: float | None
    s_mean: float | None
    reno_mbps: float
    drops: int

    def row(self) -> str:
        def f(x: float | None, fmt: str) -> str:
            return "-" if x is None else format(x, fmt)

        return (
            f"{self.slots_pct:5.1f}% of {self.slots:3d}  {self.ptcp_mbps:6.2f} Mb/s  "
            f"TO {self.timeouts:3d}  k {f(self.k_mean, '6.1f')}  s {f(self.s_min, '.0f')}/"
            f"{f(self.s_mean, '4.1f')}  Reno {self.reno_mbps:6.2f} Mb/s  drops {self.drops:5d}"
        )


def _mean(v: Sequence[float]) -> float | None:
    return sum(v) / len(v) if v else None


def random_starts(case: Case) -> Case:
    """The case with every Reno group's `[lo, hi]` start spread replaced by uniform draws from
    the seed's streams (`{ random = [lo, hi] }`), so that seeds differ (the scenarios' spreads
    are even and the runs have no other randomness)."""
    doc = tomllib.loads((SCENARIOS / case.scenario).read_text())
    extra = []
    for k, f in enumerate(doc["flows"]):
        if k > 0 and isinstance(f.get("start"), list):
            lo, hi = f["start"]
            extra.append(f'flows.{k}.start={{ random = ["{lo}", "{hi}"] }}')
    return dataclasses.replace(case, overrides=(*case.overrides, *extra))


def ns2_side(
    case: Case, seed: int, tick: float = 0.001, k_series: str = "ack"
) -> tuple[Side, dict[str, Any]]:
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns-2: make ns2")
    scenario = SCENARIOS / case.scenario
    args = [ns, str(SCRIPT), *ns2_args(scenario, case.overrides, seed), f"tick={tick:g}"]
    if dict(a.split("=", 1) for a in args[2:]).get("mode") == "ptcp":
        args.append(f"k_series={k_series}")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ns-2 failed ({proc.returncode}): {proc.stderr[-500:]}")
    xs, evals, ctrls, report = [], [], [], {}
    for line in proc.stdout.splitlines():
        p = line.split()
        if line.startswith("x "):
            xs.append([float(v) for v in p[1:]])
        elif line.startswith("e "):
            evals.append((float(p[1]), float(p[2]), float(p[3])))
        elif line.startswith("c "):
            ctrls.append(line)
        elif line.startswith("{"):
            report = json.loads(line)
    duration = float(dict(a.split("=", 1) for a in args[2:])["duration"])
    mode = report["mode"]
    bw = dict(a.split("=", 1) for a in args[2:]).get("bw", "20e6")
    if mode == "ptcp":
        slots = evals[case.skip :]
        pct = 100.0 * sum(1 for e in slots if e[2] >= float(bw)) / max(1, len(slots))
        nslots = len(slots)
    else:
        t = [x[0] for x in xs]
        v = [x[1] * 8 / 0.1 for x in xs]
        bins = binned_throughput(t, v, 0.0, 1.0)[case.skip :]
        pct = 100.0 * sum(1 for b in bins if b >= 20e6) / max(1, len(bins))
        nslots = len(bins)
    side = Side(
        slots_pct=pct,
        slots=nslots,
        ptcp_mbps=sum(x[1] for x in xs) * 8 / duration / 1e6,
        timeouts=int(xs[-1][6]) if xs else 0,
        k_mean=_mean([x[3] for x in xs]) if mode == "ptcp" else None,
        s_min=min(x[4] for x in xs) if mode == "ptcp" and xs else None,
        s_mean=_mean([x[4] for x in xs]) if mode == "ptcp" else None,
        reno_mbps=report["reno_payload_bytes"] * 8 / duration / 1e6,
        drops=int(report["bottleneck"]["drops_pkts"]),
    )
    return side, {"report": report, "series": xs, "eval": evals, "ctrl": ctrls}


def tfcc_side(case: Case, seed: int) -> tuple[Side, RunResult]:
    r = reproduce.default_runner(SCENARIOS / case.scenario, list(case.overrides), seed)
    assert isinstance(r, RunResult)
    f0 = r["flows"][0]
    is_ptcp = bool(f0.get("ptcp"))
    if is_ptcp:
        pct = slot_success_pct(r, flow=0, skip=case.skip)
        nslots = len(ptcp_slot_rows(r, f0)[case.skip :])
        k = r.flow_column(0, "ptcp_k")[1]
        s = r.flow_column(0, "ptcp_s")[1]
    else:
        pct = slot_success_pct(r, flow=0, bw_bps=20e6, skip=case.skip)
        t, v = r.flow_column(0, "throughput_bps")
        nslots = len(binned_throughput(t, v, 0.0, 1.0)[case.skip :])
        k, s = [], []
    bneck = next(link for link in r["links"] if link["name"] == "bottleneck")
    side = Side(
        slots_pct=pct,
        slots=nslots,
        ptcp_mbps=f0["throughput_bps"] / 1e6,
        timeouts=int(f0["timeouts"]),
        k_mean=_mean([x for x in k if x is not None]) if is_ptcp else None,
        s_min=min(x for x in s if x is not None) if is_ptcp else None,
        s_mean=_mean([x for x in s if x is not None]) if is_ptcp else None,
        reno_mbps=sum(f["throughput_bps"] for f in r["flows"][1:]) / 1e6,
        drops=int(bneck["drops"]),
    )
    return side, r


def main() -> None:
    argv = sys.argv[1:]
    seeds, tick, out, k_series = [1], 0.001, None, "ack"
    randomize = "--random-starts" in argv
    valued = ("--seeds", "--tick", "--json", "--k-series")
    for flag in valued:
        if flag in argv:
            value = argv[argv.index(flag) + 1]
            if flag == "--seeds":
                seeds = seeds_option(value, first=1)
            elif flag == "--tick":
                tick = float(value)
            elif flag == "--k-series":
                k_series = value
            else:
                out = Path(value)
    pos = [
        a
        for k, a in enumerate(argv)
        if not a.startswith("--") and (k == 0 or argv[k - 1] not in valued)
    ]
    names = pos[0].split(",") if pos else list(CASES)
    rows = []
    for name in names:
        case = random_starts(CASES[name]) if randomize else CASES[name]
        for seed in seeds:
            t, _ = tfcc_side(case, seed)
            n, _ = ns2_side(case, seed, tick, k_series)
            print(f"{name:17} seed {seed}  tfcc    {t.row()}", flush=True)
            print(f"{'':17}         ns-2.35 {n.row()}", flush=True)
            rows.append({"case": name, "seed": seed, "tfcc": vars(t), "ns2": vars(n)})
    if out is not None:
        out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
