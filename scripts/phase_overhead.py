"""Do the testbed stand-in claims rest on DropTail phase effects? (2026-11-27, phase)

Runs the claims of one reproduction whose scenario is a simulated testbed (000 Sec. 5.2,
001 Sec. 4, 002 Ch. 6, 004's Dummynet/Internet experiments) with every TCP-based flow given
ns-2's ``overhead_`` (``params.overhead``, docs/scenarios.md) of ``SCALE`` times one bottleneck
service time of a full-sized segment: (packet_size + header_size) · 8 / the bottleneck's
initial rate, per run (the claim's ``set``, variant and ``versus`` applied). The claim files,
scenarios and defaults are untouched: the overhead is appended to each run's overrides.

    .venv/bin/python scripts/phase_overhead.py run ttfwc on /tmp/phase/ttfwc-on.json
    .venv/bin/python scripts/phase_overhead.py table ttfwc --dir /tmp/phase

Modes: ``off`` (no overhead, the claims as they are), ``on`` (one service time), ``half``,
``tiny`` (1 % of it, a control: a perturbation too small to break the phase effects). The
environment variable ``SEEDS=1,2,3`` replaces the claims' seeds, ``--only REGEX`` keeps the claims
whose id matches. Two claims at a time run in
parallel (the machine's 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from tfcc import _core
from tfcc import reproduce as rep

#: Reproduction → the scenario file names of its testbed stand-ins.
GROUPS = {
    "ttfwc": r"^000-testbed",
    "ptcp": r"^001-e(7|10)-testbed",
    "tfwc": r"^002-r",
    "tfrc": r"^004-",
}
SCALES = {"off": 0.0, "on": 1.0, "half": 0.5, "tiny": 0.01}


def load_toml(path: Path) -> dict[str, Any]:
    """A scenario as a dict, read by the simulator's own TOML parser (inline tables may span
    lines, which tomllib refuses)."""
    return _core.parse_toml(path.read_text())


def _value(text: str) -> Any:
    try:
        return _core.parse_toml(f"v = {text}")["v"]
    except ValueError:
        return text


def apply(doc: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` lines applied to a scenario dict (dotted keys, numbers index lists)."""
    for o in overrides:
        key, text = o.split("=", 1)
        *parents, last = key.strip().split(".")
        node: Any = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        if isinstance(node, list):
            node[int(last)] = _value(text.strip())
        else:
            node[last] = _value(text.strip())
    return doc


def _quantity(text: str, kind: str) -> float:
    parsed = _core.parse_quantity(text)
    if parsed is None or parsed[0] != kind:
        raise ValueError(f"expected a {kind}, got {text!r}")
    return parsed[1]


def bottleneck_rate(doc: dict[str, Any]) -> float:
    """The bottleneck's initial rate in b/s (a custom topology's link named ``bottleneck``)."""
    topo = doc["topology"]
    if topo.get("kind") == "custom":
        link = next(lk for lk in topo["links"] if lk["name"] == "bottleneck")
        return _quantity(link["rate"], "rate")
    return _quantity(topo["bottleneck"]["rate"], "rate")


def tcp_flows(scenario: Path, overrides: list[str]) -> list[int]:
    """The flow entries that take ``params.overhead`` (the TCP-based ones), found by asking
    the simulator's checker."""
    out = []
    for i in range(len(apply(load_toml(scenario), overrides).get("flows", []))):
        try:
            _core.check_scenario(str(scenario), [*overrides, f'flows.{i}.params.overhead="1ms"'])
        except _core.ScenarioError as e:
            if "unknown field" not in str(e):
                raise
            continue
        out.append(i)
    return out


def overhead(scenario: Path, overrides: list[str], scale: float) -> tuple[list[str], str]:
    """The override lines that give every TCP-based flow ``scale`` service times of overhead,
    and a label (wire bytes, bottleneck rate, overhead) for the report."""
    idx = tcp_flows(scenario, overrides)
    if not idx or scale == 0:
        return [], "none"
    doc = apply(load_toml(scenario), overrides)
    rate = bottleneck_rate(doc)
    wire = 0.0
    for i in idx:
        f = doc["flows"][i]
        size = _quantity(f.get("packet_size", "1000B"), "size")
        wire = max(wire, size + (f.get("params") or {}).get("header_size", 40))
    us = wire * 8 / rate * 1e6 * scale
    lines = [f'flows.{i}.params.overhead="{us:.3f}us"' for i in idx]
    return lines, f"{wire:g} B at {rate / 1e6:g} Mb/s: {us:.4g} µs"


def evaluate(args: tuple[rep.Claim, str]) -> dict[str, Any]:
    claim, mode = args
    scale = SCALES[mode]
    used: dict[str, int] = {}

    def runner(scenario: Path, overrides: list[str], seed: int) -> Any:
        lines, label = overhead(scenario, overrides, scale)
        used[label] = used.get(label, 0) + 1
        return rep.default_runner(scenario, [*overrides, *lines], seed)

    t = time.time()
    o = rep.evaluate(claim, runner)
    return {
        "id": claim.id,
        "target": claim.describe_target(),
        "measured": o.measured,
        "values": o.per_seed,
        "passed": o.passed,
        "error": o.error,
        "seeds": claim.seeds,
        "overheads": used,
        "wall": time.time() - t,
    }


def run(group: str, mode: str, out: Path, only: str = "") -> None:
    _, claims = rep.load(group)
    chosen = [c for c in claims if c.scenario and re.search(GROUPS[group], c.scenario.name)]
    chosen = [c for c in chosen if re.search(only, c.id)]
    with_tcp = [c for c in chosen if any(tcp_flows(c.scenario, ov) for ov, _ in c.runs())]
    if os.environ.get("SEEDS"):
        for c in with_tcp:
            c.seeds = [int(s) for s in os.environ["SEEDS"].split(",")]
    skipped = [c.id for c in chosen if c not in with_tcp]
    print(f"{group}: {len(chosen)} claims, {len(with_tcp)} with a TCP flow; skipped {skipped}")
    t = time.time()
    results = []
    with Pool(2) as pool:
        for r in pool.imap(evaluate, [(c, mode) for c in with_tcp]):
            print(r["id"], r["measured"], r["passed"], r["overheads"], flush=True)
            results.append(r)
    doc = {"group": group, "mode": mode, "skipped": skipped, "results": results}
    doc["wall"] = time.time() - t
    out.write_text(json.dumps(doc, indent=1))


def _g(v: float | None) -> str:
    return "–" if v is None else f"{v:.4g}"


def _verdict(r: dict[str, Any]) -> str:
    return "error" if r["measured"] is None else ("pass" if r["passed"] else "FAIL")


def _sd(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None


def table(group: str, where: Path, prefix: str = "") -> str:
    """The markdown table of one group from its off/tiny/half/on result files."""
    res = {}
    for mode in SCALES:
        path = where / f"{prefix or group}-{mode}.json"
        if path.is_file():
            res[mode] = {r["id"]: r for r in json.loads(path.read_text())["results"]}
    off, on = res["off"], res["on"]
    cols = [m for m in ("tiny", "half") if m in res]
    head = ["claim", "target", "without", *(f"{m}" for m in cols), "with", "verdict"]
    head += ["per seed without", "per seed with", "seed SD without → with"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    tighter = looser = 0
    for cid, a in off.items():
        b = on[cid]
        va, vb = _verdict(a), _verdict(b)
        change = va if va == vb else f"**{va} → {vb}**"
        sa, sb = _sd(a["values"]), _sd(b["values"])
        if sa is not None and sb is not None:
            tighter += sb < sa
            looser += sb > sa
        row = [cid, a["target"], _g(a["measured"])]
        row += [_g(res[m][cid]["measured"]) for m in cols]
        row += [_g(b["measured"]) + (f" ({b['error']})" if b["error"] else ""), change]
        row += [", ".join(_g(v) for v in a["values"]), ", ".join(_g(v) for v in b["values"])]
        row += [f"{_g(sa)} → {_g(sb)}"]
        lines.append("| " + " | ".join(row) + " |")
    labels = sorted({k for r in on.values() for k in r["overheads"] if k != "none"})
    lines.append("")
    lines.append(f"Seed SD smaller with the overhead in {tighter} claims, larger in {looser}.")
    lines.append("Overheads (one service time): " + "; ".join(labels) + ".")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("group", choices=GROUPS)
    r.add_argument("mode", choices=SCALES)
    r.add_argument("out", type=Path)
    r.add_argument("--only", default="", help="only the claims whose id matches this regex")
    t = sub.add_parser("table")
    t.add_argument("group", choices=GROUPS)
    t.add_argument("--dir", type=Path, default=Path("/tmp/phase"))
    t.add_argument("--prefix", default="")
    a = ap.parse_args()
    if a.cmd == "run":
        run(a.group, a.mode, a.out, a.only)
    else:
        print(table(a.group, a.dir, a.prefix))


if __name__ == "__main__":
    main()
