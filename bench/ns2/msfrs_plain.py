"""Thesis 003's M2 plain gateway in stock ns-2.35's own web cache beside tfcc's (issue 10).

The claim m2-latency-reduction (scenarios/reproduce/msfrs.toml) compares MSF-RS's mean
transaction latency with the plain gateway's on M1's first-phase load (003 Sec. 4.5.3, Fig.
4.11: 6.76 s against 8.83 s). `msfrs_plain.tcl` runs that plain gateway in ns-2.35's
Http/Client - Http/Cache - Http/Server with the cache function disabled (every request a new
page: no hit, no merging) over FullTcp/Sack, with tfcc's own draws for the seed (requests,
servers, sizes, think times, server delays). tfcc runs the claim's scenario and `set` lines
(`tfcc.reproduce.default_runner`, the claims' own runner) with `web.gateway=plain` on both of its
connection layouts (`per-pair`, the claim's; `per-server`, ns-2's cache's) and, for the ratio,
the claim's MSF-RS side. Printed per seed: mean latency of the transactions arriving in
[0, 200 s), their count, the requests issued, the access downlink's utilisation over the run and
its drops.

`--load backlogged` runs scenarios/003-msfrs-backlogged.toml's load instead (4 threads per client,
1000 s, transactions arriving in 50-900 s; the third pass's M2 rows in log/msfrs.md).

Usage: `python bench/ns2/msfrs_plain.py [--seeds 1,2,3] [--load claim|backlogged]
[--ns-arg key=value ...] [--json FILE]` (`--ns-arg` passes keys to the Tcl script, e.g.
`nodelay=1`). Findings:
docs/reproductions/log/msfrs.md, "M2's plain gateway in stock ns-2.35's web cache".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tfcc import reproduce
from tfcc.ns2 import find_ns
from tfcc.sweep import SweepError, seeds_option

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLAIMS = ROOT / "scenarios" / "reproduce" / "msfrs.toml"
SCRIPT = HERE / "msfrs_plain.tcl"
CLAIM = "m2-latency-reduction"
BACKLOGGED = ROOT / "scenarios" / "003-msfrs-backlogged.toml"
# The Tcl script's keys for the backlogged scenario's load and latency window.
BACKLOGGED_NS = ["threads=4", "duration=1000", "window_start=50", "window_end=900"]


def claim_setup(load: str = "claim") -> tuple[Path, list[str], list[str]]:
    """The claim's scenario, its `set` lines and its `versus` (plain gateway) lines; for
    `load="backlogged"` the backlogged scenario with no `set` lines."""
    if load == "backlogged":
        return BACKLOGGED, [], ["web.gateway=plain"]
    doc = tomllib.loads(CLAIMS.read_text())
    (c,) = [c for c in doc["claims"] if c["id"] == CLAIM]
    return (CLAIMS.parent / c["scenario"]).resolve(), list(c["set"]), list(c["versus"]["set"])


def run_ns2(seed: int, extra: Sequence[str] = (), timeout: float = 600.0) -> dict[str, Any]:
    """One ns-2 run of `msfrs_plain.tcl`; its JSON report."""
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns binary (bash scripts/install-ns2.sh, or $TFCC_NS2)")
    out = subprocess.run(
        [ns, str(SCRIPT), f"seed={seed}", *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    lines = out.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    # `trace=1`: one `tx` line per completed transaction, in completion order.
    keys = ("n", "class", "client", "thread", "server", "bytes", "t_send", "t_cache", "t_at_cache")
    report["tx"] = [
        dict(zip((*keys, "t_done"), map(float, line.split()[1:]), strict=True))
        for line in lines[:-1]
        if line.startswith("tx ")
    ]
    return report


def _link(summary: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    (link,) = [x for x in summary["links"] if x["name"] == name]
    return link


def run_tfcc(seed: int, extra: Sequence[str], load: str = "claim") -> dict[str, Any]:
    """tfcc on the claim's scenario with its `set` lines and `extra`."""
    scenario, claim_set, _ = claim_setup(load)
    s = reproduce.default_runner(scenario, [*claim_set, *extra], seed).summary
    web = s["web"]
    down = _link(s, "access-down")
    return {
        "mean_latency_s": web["mean_latency_s"],
        "transactions": web["transactions"],
        "requests": web["requests"],
        "access_down_utilization": down["utilization"],
        "access_down_drops": down["drops"],
        "class_latency_s": [c["mean_latency_s"] for c in web["classes"]],
    }


def compare(
    seeds: Sequence[int], ns_args: Sequence[str] = (), load: str = "claim"
) -> list[dict[str, Any]]:
    """Per seed: ns-2's plain cache, tfcc's plain gateway per pair and per server, tfcc's
    MSF-RS (the claim's own side)."""
    _, _, plain = claim_setup(load)
    if load == "backlogged":
        ns_args = [*BACKLOGGED_NS, *ns_args]
    rows = []
    for seed in seeds:
        rows.append(
            {
                "seed": seed,
                "ns2_plain": run_ns2(seed, ns_args),
                "tfcc_plain_per_pair": run_tfcc(seed, plain, load),
                "tfcc_plain_per_server": run_tfcc(
                    seed, [*plain, 'web.connections="per-server"'], load
                ),
                "tfcc_msfrs": run_tfcc(seed, [], load),
            }
        )
    return rows


def print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    print("| seed | run | mean T_a (s) | transactions | requests | util access-down | drops |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        for key in ("ns2_plain", "tfcc_plain_per_pair", "tfcc_plain_per_server", "tfcc_msfrs"):
            v = r[key]
            print(
                f"| {r['seed']} | {key} | {v['mean_latency_s']:.2f} | {v['transactions']} "
                f"| {v['requests']} | {v['access_down_utilization']:.4f} "
                f"| {v['access_down_drops']} |"
            )
    n = len(rows)
    if n:
        mean = {
            k: sum(r[k]["mean_latency_s"] for r in rows) / n
            for k in ("ns2_plain", "tfcc_plain_per_pair", "tfcc_plain_per_server", "tfcc_msfrs")
        }
        print(
            "means over seeds: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in mean.items())
            + f"; tfcc MSF-RS / ns-2 plain {mean['tfcc_msfrs'] / mean['ns2_plain']:.3f}"
            + f" (per seed {', '.join(f'{x:.3f}' for x in per_seed_ratio(rows))})"
        )


def per_seed_ratio(rows: Sequence[Mapping[str, Any]]) -> list[float]:
    return [r["tfcc_msfrs"]["mean_latency_s"] / r["ns2_plain"]["mean_latency_s"] for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-3", help="N, A-B or A,B,C")
    ap.add_argument("--ns-arg", action="append", default=[], help="key=value for the Tcl script")
    ap.add_argument("--load", choices=["claim", "backlogged"], default="claim")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    try:
        a.seeds = seeds_option(a.seeds, first=1)
    except SweepError as e:
        ap.error(str(e))
    rows = compare(a.seeds, a.ns_arg, a.load)
    print_table(rows)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
