"""E2.2's loss claims (thesis 003 Sec. 2.4.2, Fig. 2.2(c)) in ns-2.35 and in tfcc, over seeds.

For each seed, runs `e22_lowmux.tcl` (ns-2.35; scheme `tfrc` is ns-2's `Agent/TFRC` at 1000 B on
the wire, `gaimd` the SACK agent with GAIMD's constants) and `tfcc run
scenarios/003-e22-lowmux.toml` with the `set` lines of the claims e22-<scheme>-loss-rtt0 /
-rtt-spread (`scenarios/reproduce/taxonomy.toml`), and computes the claims' metric,
`tfcc.metrics.normalized_loss_rate`, from both: packets lost / packets sent of the scheme's
shortest-RTT flow over that of TCP's shortest-RTT flow, over the window 100-600 s. tfcc picks the
flows by `mean_rtt_s` (the mean smoothed RTT); ns-2's TFRC agent exposes no RTT, so on the ns-2
side the flows are picked by propagation RTT, 2·(bottleneck delay + 2·access delay): the
bottleneck queue, the only one that builds, is common to all flows, so both orders agree
wherever the access delays differ (at CV[RTT] = 0 they are all equal and the ns-2 pick is the
lowest flow id of each group, an arbitrary one). Packets sent are the sender's (ns-2
`ndatapack_`), packets lost are drops at the bottleneck (ns-2: a Fid flow monitor) in both.

Prints per seed the metric, the two picked flows' loss rates (%), each group's pooled loss rate
(all lost / all sent, %) and the ratio of the group goodputs (`normalized_throughput`), then the
mean, median and range over the seeds.

ns-2's access delays and start times are drawn from independent MRG32k3a substreams per seed
(`e22_lowmux.tcl`'s `draws = substream`); `--draws seeded` gives h-e22's seeding, under which
TCP flow 0 has the shortest RTT of all flows in every seed (see the script).

Usage: `python bench/ns2/e22_loss.py [--scheme tfrc|gaimd|tear] [--case spread|rtt0] [--seeds 1-10]
[--side both|ns2|tfcc] [--draws substream|seeded] [--tfcc PATH]` (`--tfcc` defaults to
`.venv/bin/tfcc`). One ns-2 run
takes 2-6 s, one tfcc run about 1 s. Findings: docs/reproductions/log/taxonomy.md, "E2.2's TFRC in
stock ns-2.35".
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from tfcc.metrics import MetricError, normalized_loss_rate, normalized_throughput
from tfcc.sweep import SweepError, seeds_option

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPT = HERE / "e22_lowmux.tcl"
SCENARIO = ROOT / "scenarios" / "003-e22-lowmux.toml"
# bottleneck delay (ms), queue limit, access delay low and high (ms): the scenario's one-way
# reading, as e22_lowmux.py's rtt0-new and spread-new.
CASES = {"rtt0": (40, 300, 5, 5), "spread": (5, 300, 4.3, 40.7)}
SPREAD_SET = [
    "topology.bottleneck.delay=5ms",
    'topology.access.delay={ random = ["4.3ms", "40.7ms"] }',
]
# The claims' `set` lines for the scheme group (flows.1).
SCHEME_SET = {
    "tfrc": ["flows.1.protocol=tfrc", 'flows.1.params={ preset = "ns2", header_size = 0 }'],
    "gaimd": ["flows.1.protocol=gaimd"],
    # tfcc only: TEAR's code is its authors', not in ns-2.35.
    "tear": ["flows.1.protocol=tear", "flows.1.params={}"],
}


def ns2_summary(scheme: str, case: str, seed: int, draws: str) -> dict:
    """One ns-2 run as a summary the tfcc metrics read."""
    bd, q, lo, hi = CASES[case]
    args = [str(seed), str(bd), str(q), str(lo), str(hi), "200", "0.875", "0.2", "8", scheme, draws]
    out = subprocess.run(
        ["ns", str(SCRIPT), *args], capture_output=True, text=True, check=True
    ).stdout
    flows = []
    for line in out.strip().splitlines():
        r = line.split()
        flows.append(
            {
                "id": int(r[0]),
                "protocol": scheme if r[1] == "1" else "tcp-sack",
                "throughput_bps": float(r[3]) * 1000.0,
                "packets_sent": int(r[7]),
                "packets_lost": int(r[8]),
                # propagation RTT (s), see the module doc
                "mean_rtt_s": 2.0 * (bd + 2.0 * float(r[2])) / 1000.0,
            }
        )
    return {"flows": flows}


def tfcc_summary(tfcc: str, scheme: str, case: str, seed: int) -> dict:
    sets = SCHEME_SET[scheme] + (SPREAD_SET if case == "spread" else [])
    with tempfile.TemporaryDirectory() as out:
        cmd = [tfcc, "run", str(SCENARIO), "--seed", str(seed), "--no-plots", "-q", "--out", out]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        return json.loads((Path(out) / "summary.json").read_text())


def describe(s: dict, scheme: str) -> tuple[float, str]:
    def group(p: str) -> list[dict]:
        return [f for f in s["flows"] if f["protocol"] == p or f["protocol"].startswith(p + "-")]

    def rate(fs: list[dict]) -> float:
        return 100.0 * sum(f["packets_lost"] for f in fs) / sum(f["packets_sent"] for f in fs)

    def shortest(fs: list[dict]) -> dict:
        return min(fs, key=lambda f: f["mean_rtt_s"])

    mine, tcp = group(scheme), group("tcp")
    a, b = shortest(mine), shortest(tcp)
    try:
        m = normalized_loss_rate(s, scheme, "tcp")
    except MetricError:
        m = float("nan")
    text = (
        f"{m:6.3f} | shortest {scheme} #{a['id']} {1000 * a['mean_rtt_s']:5.1f} ms "
        f"{rate([a]):.3f} %, tcp #{b['id']} {1000 * b['mean_rtt_s']:5.1f} ms {rate([b]):.3f} % "
        f"| groups {rate(mine):.3f} % / {rate(tcp):.3f} % "
        f"| thr {normalized_throughput(s, scheme, 'tcp'):.3f}"
    )
    return m, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", choices=sorted(SCHEME_SET), default="tfrc")
    ap.add_argument("--case", choices=sorted(CASES), default="spread")
    ap.add_argument("--seeds", default="1-10", help="N, A-B or A,B,C")
    ap.add_argument("--side", choices=["both", "ns2", "tfcc"], default="both")
    ap.add_argument(
        "--draws",
        choices=["substream", "seeded"],
        default="substream",
        help="ns-2's access delay and start draws (e22_lowmux.tcl's `draws`)",
    )
    ap.add_argument("--tfcc", default=str(ROOT / ".venv" / "bin" / "tfcc"))
    a = ap.parse_args()
    try:
        a.seeds = seeds_option(a.seeds, first=1)
    except SweepError as e:
        ap.error(str(e))
    sides = ["ns2", "tfcc"] if a.side == "both" else [a.side]
    if a.scheme == "tear" and "ns2" in sides:
        ap.error("ns-2.35 has no TEAR: use --side tfcc")
    for side in sides:
        values = []
        print(f"{side}, {a.scheme}, {a.case}:")
        for seed in a.seeds:
            if side == "ns2":
                s = ns2_summary(a.scheme, a.case, seed, a.draws)
            else:
                s = tfcc_summary(a.tfcc, a.scheme, a.case, seed)
            m, text = describe(s, a.scheme)
            values.append(m)
            print(f"  seed {seed:2d}: {text}", flush=True)
        ok = [v for v in values if v == v]
        if ok:
            print(
                f"  mean {statistics.mean(ok):.3f}, median {statistics.median(ok):.3f}, "
                f"range {min(ok):.3f}-{max(ok):.3f}"
                + (f", seeds 1-3 {statistics.mean(values[:3]):.3f}" if len(values) >= 3 else "")
            )


if __name__ == "__main__":
    main()
