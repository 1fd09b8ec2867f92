"""E2.1 and E2.3 (thesis 003 Sec. 2.5.1, Figs. 2.1 and 2.3) in stock ns-2.35 and in tfcc.

The claims of `scenarios/reproduce/taxonomy.toml` on `003-e21-nonperiodic.toml` and
`003-e23-twostate.toml` are evaluated twice by `tfcc.reproduce.evaluate`, the claims' own code
(seeds, metric, arguments): once with tfcc's runner and once with `ns2_runner`, which runs
`e2_artloss.tcl` (ns-2.35's own agents) on the same network, the same flows at the same flow
indices and the same loss schedule: the Tcl script draws tfcc's drop instants for the seed and
link itself (tfcc_rng.tcl). ns-2's throughput series go through the same metric functions.
Only TCP-SACK, GAIMD, IIAD, SQRT and TFRC exist in stock ns-2.35; claims on SIMD, AIAD/H,
TFRCP, TEAR and WARC are left out, and the ns-2 run holds only the flows the claim reads.

Usage: `python bench/ns2/e2_artloss.py [CLAIM_IDS] [--seeds 1,2] [--precise] [--same-flows]
[--json FILE]`,
CLAIM_IDS a comma list (default: every claim of the two scenarios on those protocols with
`quick = true`); `--seeds` replaces the claims' seeds; `--precise` is a diagnostic: the exact
decrease on both sides, ns-2 with precisionReduce_ true (ns-2.35's default) and tfcc's TCP-SACK,
GAIMD, IIAD and SQRT flows with `precision_reduce = true` (the rest of `ns-2.1b9` kept);
`--same-flows` starts tfcc's flows of the protocols ns-2.35 lacks 1 ms before the end, so that
both bottlenecks carry the same flows (`tfcc_overrides`).
Findings: docs/reproductions/log/taxonomy.md, "E2.1 and E2.3 in stock ns-2.35".
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tfcc import _core, reproduce
from tfcc.metrics import RunResult
from tfcc.ns2 import find_ns
from tfcc.sweep import seeds_option

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "e2_artloss.tcl"
SCENARIOS = ("003-e21-nonperiodic.toml", "003-e23-twostate.toml")
# tfcc protocol name -> e2_artloss.tcl's.
NS2_NAME = {"tcp-sack": "sack", "gaimd": "gaimd", "iiad": "iiad", "sqrt": "sqrt", "tfrc": "tfrc"}
DT = 0.1  # tfcc's sampling interval (crates/tfcc-sim/src/recorder.rs)


def _seconds(text: str) -> float:
    q = _core.parse_quantity(str(text))
    if q is None or q[0] != "duration":
        raise ValueError(f"not a duration: {text!r}")
    return float(q[1])


def _override(doc: dict[str, Any], line: str) -> None:
    """Apply one `--set` line of the kinds these claims use (a dotted key, list indices as
    numbers, a TOML value)."""
    key, value = line.split("=", 1)
    parsed = tomllib.loads(f"v = {value}")["v"] if not re.fullmatch(r"\d+\w+", value) else value
    node: Any = doc
    parts = key.split(".")
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = parsed
    else:
        node[last] = parsed


@dataclasses.dataclass
class Setup:
    """What e2_artloss.tcl needs of a scenario after the claim's overrides."""

    flows: list[tuple[int, str]]  # (tfcc flow index, tfcc protocol), every flow
    schedule: dict[int, list[tuple[float, float, float]]]  # flow index -> (at, mean, cv)
    duration: float
    measure_from: float


def setup(scenario: Path, overrides: Sequence[str]) -> Setup:
    doc = tomllib.loads(Path(scenario).read_text())
    for line in overrides:
        _override(doc, line)
    flows = []
    for f in doc["flows"]:
        for _ in range(int(f.get("count", 1))):
            flows.append((len(flows), f["protocol"]))
    schedule: dict[int, list[tuple[float, float, float]]] = {}
    for e in doc.get("events", []):
        m = re.fullmatch(r"access-src-(\d+)", e.get("link", ""))
        loss = e.get("loss", {})
        if m is None or loss.get("model") != "interval" or loss.get("scope"):
            raise ValueError(f"{scenario}: event {e} is not per-access-link interval loss")
        schedule.setdefault(int(m.group(1)), []).append(
            (_seconds(e["at"]), _seconds(loss["mean"]), float(loss.get("cv", 0.0)))
        )
    return Setup(
        flows, schedule, _seconds(doc["duration"]), _seconds(doc.get("measure_from", "0s"))
    )


@dataclasses.dataclass
class Ns2Run:
    result: RunResult
    drops: dict[int, list[float]]  # tfcc flow index -> drop times
    cwnd: dict[int, tuple[list[float], list[float]]]
    summary: dict[str, Any]


def ns2_run(
    scenario: Path,
    overrides: Sequence[str],
    seed: int,
    protocols: Sequence[str] | None = None,
    *,
    precise: bool = False,
    cwnd: bool = False,
    duration: float | None = None,
    timeout: float = 3600.0,
) -> Ns2Run:
    """The scenario's flows of `protocols` (tfcc names; default all that ns-2 has) in ns-2.35,
    as a RunResult in tfcc's shape: `flows` with `id` (the tfcc index), `protocol` and
    `throughput_bps` over the measurement window, and the flows' `throughput_bps` series."""
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns-2: make ns2")
    s = setup(scenario, overrides)
    end = s.duration if duration is None else duration
    chosen = [
        (i, p)
        for i, p in s.flows
        if p in NS2_NAME and (protocols is None or any(p.startswith(x) for x in protocols))
    ]
    schedules = {tuple(s.schedule[i]) for i, _ in chosen}
    if len(schedules) != 1:
        raise ValueError("the flows' loss schedules differ; e2_artloss.tcl takes one")
    sched = ",".join(f"{a:g}:{m:g}:{c:g}" for a, m, c in schedules.pop())
    series: dict[str, list[Any]] = {"t": [], "flow": [], "throughput_bps": []}
    drops: dict[int, list[float]] = {i: [] for i, _ in chosen}
    windows: dict[int, tuple[list[float], list[float]]] = {i: ([], []) for i, _ in chosen}
    totals: dict[int, dict[str, Any]] = {}
    crashed: list[dict[str, Any]] = []
    # The flows share nothing, so they may run in separate processes: the window-based ones
    # together, each TFRC flow alone, because ns-2.35's Agent/TFRC can die of SIGFPE when its
    # slow start reaches the 1 Gb/s link before its first drop (CV 0: the first instant is at
    # 5 s); the other flows' results are kept and the crash is reported in the summary.
    groups = [[f for f in chosen if f[1] != "tfrc"]] + [[f] for f in chosen if f[1] == "tfrc"]
    for group in (g for g in groups if g):
        args = [
            ns,
            str(SCRIPT),
            "flows=" + ",".join(f"{i}:{NS2_NAME[p]}" for i, p in group),
            f"schedule={sched}",
            f"seed={seed}",
            f"duration={end:g}",
            f"dt={DT:g}",
            f"precise={int(precise)}",
            f"cwnd={int(cwnd)}",
        ]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        lines = proc.stdout.splitlines()
        if proc.returncode != 0:
            last = next((ln for ln in reversed(lines) if ln.startswith("s ")), "s 0")
            crashed.append(
                {
                    "flows": [i for i, _ in group],
                    "returncode": proc.returncode,
                    "last_sample_s": float(last.split()[1]),
                    "stderr_tail": proc.stderr[-300:],
                }
            )
            continue
        for line in lines:
            if line.startswith("s "):
                parts = line.split()
                t = float(parts[1])
                for (i, _), b in zip(group, parts[2:], strict=True):
                    series["t"].append(t)
                    series["flow"].append(i)
                    series["throughput_bps"].append(float(b) * 8 / DT)
            elif line.startswith("w "):
                parts = line.split()
                for (i, _), w in zip(group, parts[2:], strict=True):
                    if w != "-":
                        windows[i][0].append(float(parts[1]))
                        windows[i][1].append(float(w))
            elif line.startswith("drop "):
                _, k, t = line.split()
                drops[group[int(k)][0]].append(float(t))
            elif line.startswith("{"):
                for (i, _), f in zip(group, json.loads(line)["flows"], strict=True):
                    totals[i] = {k: v for k, v in f.items() if k != "index"}
    lo, hi = s.measure_from, end
    flows = []
    for i, p in chosen:
        if i not in totals:
            continue
        inside = [
            v
            for t, f, v in zip(series["t"], series["flow"], series["throughput_bps"], strict=True)
            if f == i and lo + 1e-9 < t <= hi + 1e-9
        ]
        flows.append(
            {
                "id": i,
                "protocol": p,
                "throughput_bps": sum(inside) * DT / (hi - lo),
                # the loss model's drops in (measure_from, duration] (the report's count runs
                # half a sample past the end); queue drops are not counted
                "artificial_drops": sum(lo < t <= hi for t in drops[i]),
                # ns-2's counters over the whole run (not tfcc's window counts)
                "ns2_totals": totals[i],
            }
        )
    summary = {"flows": flows, "duration_s": end, "measure_from_s": lo, "ns2_crashed": crashed}
    return Ns2Run(RunResult(summary, series), drops, windows, summary)


def tfcc_overrides(
    scenario: Path, overrides: Sequence[str], *, precise: bool, same_flows: bool
) -> list[str]:
    """Overrides for tfcc's side of a diagnostic. `precise`: the exact decrease
    (`precision_reduce = true`) on the window-based flows ns-2 has, beside ns-2's
    precisionReduce_ true. `same_flows`: the flows ns-2.35 lacks (SIMD, AIAD/H, TFRCP, TEAR,
    WARC) start 1 ms before the end, so that tfcc's bottleneck carries the flows of ns-2's run
    only (in the claims' run all eleven share the 1 Gb/s bottleneck, and their synchronised
    bursts interleave there)."""
    entries = tomllib.loads(Path(scenario).read_text())["flows"]
    end = setup(scenario, overrides).duration
    extra = []
    for k, f in enumerate(entries):
        if f["protocol"] not in NS2_NAME:
            if same_flows:
                extra.append(f'flows.{k}.start="{end - 0.001:.3f}s"')
        elif precise and f["protocol"] != "tfrc":
            extra.append(f"flows.{k}.params={{ max_window = 200, precision_reduce = true }}")
    return extra


def ns2_runner(precise: bool = False):
    """A `tfcc.reproduce` runner that answers with ns-2.35's run."""

    def runner(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
        return ns2_run(scenario, overrides, seed, precise=precise).result

    return runner


def _protocols_of(claim: reproduce.Claim) -> set[str]:
    args = dict(claim.args)
    names = {args.get("protocol"), args.get("tcp"), args.get("steady_from")}
    names |= set(args.get("protocols", []))
    return {n for n in names if n}


def claims(ids: Sequence[str] | None = None) -> list[reproduce.Claim]:
    """The taxonomy claims on E2.1's and E2.3's scenarios that ns-2.35 can run."""
    _, all_claims = reproduce.load("taxonomy")
    picked = []
    for c in all_claims:
        if c.scenario is None or Path(c.scenario).name not in SCENARIOS or c.versus:
            continue
        if ids is not None:
            if c.id in ids:
                picked.append(c)
            continue
        names = _protocols_of(c)
        ok = all(n == "tcp" or n in NS2_NAME for n in names)
        if c.quick and ok:
            picked.append(c)
    return picked


def main() -> None:
    argv = sys.argv[1:]
    out = None
    seeds = None
    precise = "--precise" in argv
    same_flows = "--same-flows" in argv
    if "--json" in argv:
        out = Path(argv[argv.index("--json") + 1])
    if "--seeds" in argv:
        seeds = seeds_option(argv[argv.index("--seeds") + 1], first=1)
    pos = [
        a
        for k, a in enumerate(argv)
        if not a.startswith("--") and (k == 0 or argv[k - 1] not in ("--json", "--seeds"))
    ]
    ids = pos[0].split(",") if pos else None
    rows = []
    cache: dict[tuple[str, tuple[str, ...], int], Mapping[str, Any]] = {}

    def cached(runner):
        def run(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
            key = (f"{runner.__name__}{scenario}", tuple(overrides), seed)
            if key not in cache:
                cache[key] = runner(scenario, overrides, seed)
            return cache[key]

        return run

    def tfcc_side(scenario: Path, overrides: list[str], seed: int) -> Mapping[str, Any]:
        extra = tfcc_overrides(scenario, overrides, precise=precise, same_flows=same_flows)
        return reproduce.default_runner(scenario, [*overrides, *extra], seed)

    tfcc_runner = cached(tfcc_side)
    ns_runner = cached(ns2_runner(precise))
    for c in claims(ids):
        if seeds is not None:
            c = dataclasses.replace(c, seeds=seeds)
        t = reproduce.evaluate(c, tfcc_runner)
        n = reproduce.evaluate(c, ns_runner)
        lo, hi = c.bounds()
        row = {
            "claim": c.id,
            "bounds": [lo, hi],
            "seeds": list(c.seeds),
            "tfcc": t.measured,
            "tfcc_per_seed": t.per_seed,
            "tfcc_error": t.error,
            "ns2": n.measured,
            "ns2_per_seed": n.per_seed,
            "ns2_error": n.error,
        }
        rows.append(row)

        def fmt(o: reproduce.Outcome) -> str:
            if o.measured is None:
                return f"error ({o.error})"
            return f"{o.measured:.3f} ({'pass' if o.passed else 'FAIL'})"

        print(f"{c.id:24} [{lo:g}, {hi:g}]  tfcc {fmt(t)}  ns-2.35 {fmt(n)}", flush=True)
    for (name, overrides, seed), r in cache.items():
        for c in r.get("ns2_crashed", []):
            print(
                f"ns-2.35 died (status {c['returncode']}) on flows {c['flows']} at "
                f"{c['last_sample_s']:g} s, seed {seed}, {Path(name.removeprefix('runner')).name} "
                f"{' '.join(o for o in overrides if not o.startswith('events.'))}"
            )
    if out is not None:
        out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
