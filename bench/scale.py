"""The simulator at scale: wall time, CPU time, events/s, packets/s, peak RSS and output
sizes of ``tfcc run`` along one axis at a time (duration, bottleneck rate, flow count, protocol
family).

Each row is one ``tfcc run`` (the console script, which hands over to the native ``tfcc-run``)
under GNU time, with its normal outputs but no plots (``--no-plots``; plots are a fixed cost per
run). Use a release build (``make install``, the default profile), not ``ci``.

    python bench/scale.py                      # every axis, prints the tables (Markdown)
    python bench/scale.py --axis duration      # one axis (repeatable)
    python bench/scale.py --row dur-600        # one row by name (repeatable)
    python bench/scale.py --json out.json      # also the raw numbers

On a shared machine the wall time is what the process waited for, CPU time (user + system)
what it used: the per-packet figures divide CPU time. "Packets" are the data packets the
senders put on the network over the whole run (every row runs with ``measure_from = 0`` so
that a summary's ``packets_sent`` covers the run); every data packet also costs an ACK (or a
feedback packet) and one event per hop each way, which is what ``events`` counts. Not part of
``make test``: the long rows take a minute each.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "bench" / "scenarios" / "scale.toml"
TFCC = ROOT / ".venv" / "bin" / "tfcc"


@dataclass(frozen=True)
class Row:
    axis: str
    name: str
    what: str
    scenario: Path = SCALE
    sets: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


def _rate_row(rate: str, flows: int, limit: int) -> Row:
    return Row(
        "rate",
        f"rate-{rate}",
        f"{flows} TCP-SACK, {rate}, 60 s, queue {limit}",
        sets=(
            f"topology.bottleneck.rate={rate}",
            f"topology.bottleneck.limit={limit}",
            f"flows.0.count={flows}",
        ),
    )


def _proto_row(protocol: str, what: str, params: str | None = None) -> Row:
    sets = [f'flows.0.protocol="{protocol}"']
    if params:
        sets.append(f"flows.0.params={params}")
    return Row("protocol", f"proto-{protocol}", what, sets=tuple(sets))


ROWS: list[Row] = [
    # Duration: 10 TCP-SACK flows on 100 Mb/s.
    *(
        Row("duration", f"dur-{d}", f"10 TCP-SACK, 100 Mb/s, {d} s", sets=(f"duration={d}s",))
        for d in (60, 600, 3600)
    ),
    # Bottleneck rate: flows in proportion, queue about one BDP.
    _rate_row("10Mbps", 10, 53),
    _rate_row("100Mbps", 100, 530),
    _rate_row("1Gbps", 1000, 5300),
    # Flow count on a fixed 1 Gb/s bottleneck (queue one BDP), 30 s.
    *(
        Row(
            "flows",
            f"flows-{n}",
            f"{n} TCP-SACK, 1 Gb/s, 30 s, queue 5300",
            sets=(
                "duration=30s",
                "topology.bottleneck.rate=1Gbps",
                "topology.bottleneck.limit=5300",
                f"flows.0.count={n}",
                'flows.0.start=["0s", "5s"]',
            ),
        )
        for n in (10, 1000, 5000)
    ),
    # Toward the 1-hour, 1 Gb/s experiment: 1000 flows on 1 Gb/s for 600 s (the hour is six
    # times this: about 20 minutes on one core here).
    Row(
        "long",
        "long-1G-600",
        "1000 TCP-SACK, 1 Gb/s, 600 s, queue 5300",
        sets=(
            "duration=600s",
            "topology.bottleneck.rate=1Gbps",
            "topology.bottleneck.limit=5300",
            "flows.0.count=1000",
            'flows.0.start=["0s", "5s"]',
        ),
    ),
    # Protocol families: 10 flows of one protocol on 100 Mb/s for 60 s.
    _proto_row("tcp-sack", "10 TCP-SACK"),
    _proto_row("tcp-cubic", "10 CUBIC"),
    _proto_row("tfrc", "10 TFRC"),
    _proto_row("tfwc", "10 TFWC"),
    _proto_row("ttfwc", "10 TTFWC (tp 0.9)", "{ tp = 0.9 }"),
    _proto_row("warc", "10 WARC"),
    *(_proto_row(p, f"10 {p.upper()}") for p in ("gaimd", "iiad", "sqrt", "simd", "aiadh")),
    _proto_row("tfrcp", "10 TFRCP"),
    _proto_row("tear", "10 TEAR"),
    _proto_row(
        "ptcp",
        "10 PTCP, bw 5 Mb/s each, inline estimator",
        '{ bw = "5Mbps", e = 32, k_min = true, estimator = "inline" }',
    ),
    Row(
        "protocol",
        "web-300",
        "001-e6-web: 10 PTCP (aggregate, oracle) + 300 SURGE users, 100 Mb/s, 60 s",
        scenario=ROOT / "scenarios" / "001-e6-web.toml",
        sets=("measure_from=0s",),
    ),
    Row(
        "protocol",
        "web-1000",
        "001-e6-web with 1000 SURGE users, 600 s",
        scenario=ROOT / "scenarios" / "001-e6-web.toml",
        sets=(
            "measure_from=0s",
            "duration=600s",
            "flows.1.count=1000",
            'flows.1.start=["0s", "10s"]',
        ),
    ),
    Row(
        "protocol",
        "msfrs-1000",
        "003-msfrs-backlogged (MSF-RS gateway, 3 × 4 users, 2 Mb/s), 1000 s",
        scenario=ROOT / "scenarios" / "003-msfrs-backlogged.toml",
        sets=("measure_from=0s",),
    ),
    Row(
        "protocol",
        "msfrs-3600",
        "003-msfrs-backlogged, 3600 s",
        scenario=ROOT / "scenarios" / "003-msfrs-backlogged.toml",
        sets=("measure_from=0s", "duration=3600s"),
    ),
]


def _gnu_time(stderr: str) -> tuple[float, float, int]:
    """Elapsed wall seconds, CPU seconds (user + system) and peak RSS (KiB) from
    ``/usr/bin/time -v``'s report."""
    m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    if not m:
        raise RuntimeError(f"no GNU time report in: {stderr[-2000:]}")
    h, mnt, s = m.groups()
    wall = (int(h) if h else 0) * 3600 + int(mnt) * 60 + float(s)

    def field(name: str) -> str:
        return re.search(rf"{name}: ([\d.]+)", stderr).group(1)

    cpu = float(field(r"User time \(seconds\)")) + float(field(r"System time \(seconds\)"))
    return wall, cpu, int(field(r"Maximum resident set size \(kbytes\)"))


def measure(row: Row, out: Path) -> dict[str, object]:
    cmd = ["/usr/bin/time", "-v", str(TFCC), "run", str(row.scenario), "--out", str(out)]
    cmd += ["--no-plots", "-q"]
    for s in row.sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{row.name}: {p.stderr[-3000:]}")
    wall, cpu, rss = _gnu_time(p.stderr)
    s = json.loads((out / "summary.json").read_text())
    packets = sum(f["packets_sent"] for f in s["flows"])
    sizes = {f.name: f.stat().st_size for f in sorted(out.iterdir()) if f.is_file()}
    n_flows = len(s["flows"])
    return {
        "axis": row.axis,
        "row": row.name,
        "what": row.what,
        "flows": n_flows,
        "sim_s": s["sim_seconds"],
        "events": s["events"],
        "packets": packets,
        "wall_s": wall,
        "cpu_s": cpu,
        "run_s": s["wall_seconds"],
        "rss_kib": rss,
        "sizes": sizes,
        "ts_bytes_per_flow_s": sizes.get("timeseries.parquet", 0)
        / max(1, n_flows)
        / s["sim_seconds"],
    }


def table(rows: list[dict[str, object]]) -> str:
    head = (
        "| row | scenario | sim s | data packets | events | wall s | CPU s | packets/CPU s "
        "| events/CPU s | CPU ns/packet | peak RSS MiB | timeseries.parquet | queues.parquet "
        "| summary.json | ts B/flow/sim s |\n" + "|---" * 15 + "|\n"
    )
    lines = []
    for r in rows:
        sz = r["sizes"]
        lines.append(
            f"| {r['row']} | {r['what']} | {r['sim_s']:g} | {r['packets']:,} | {r['events']:,} "
            f"| {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['packets'] / r['cpu_s']:,.0f} "
            f"| {r['events'] / r['cpu_s']:,.0f} | {1e9 * r['cpu_s'] / max(1, r['packets']):,.0f} "
            f"| {r['rss_kib'] / 1024:.0f} | {_kib(sz.get('timeseries.parquet'))} "
            f"| {_kib(sz.get('queues.parquet'))} | {_kib(sz.get('summary.json'))} "
            f"| {r['ts_bytes_per_flow_s']:.1f} |"
        )
    return head + "\n".join(lines) + "\n"


def _kib(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:,.0f} KiB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--axis", action="append", help="duration, rate, flows, long, protocol")
    ap.add_argument("--row", action="append", help="a row by name, e.g. dur-600")
    ap.add_argument("--json", type=Path, help="also write the raw numbers here")
    ap.add_argument("--list", action="store_true", help="list the rows and stop")
    a = ap.parse_args()
    rows = [r for r in ROWS if (not a.axis or r.axis in a.axis) and (not a.row or r.name in a.row)]
    if a.list:
        for r in rows:
            print(f"{r.axis:9} {r.name:16} {r.what}")
        return 0
    if not TFCC.exists():
        print(f"{TFCC} is missing: run `make install` first", file=sys.stderr)
        return 1
    results = []
    with tempfile.TemporaryDirectory(prefix="tfcc-scale-") as tmp:
        for r in rows:
            try:
                res = measure(r, Path(tmp) / r.name)
            except RuntimeError as e:
                print(e, file=sys.stderr, flush=True)
                continue
            results.append(res)
            print(
                f"{r.name}: {res['packets']:,} packets, {res['wall_s']:.2f} s wall, "
                f"{res['cpu_s']:.2f} s CPU, "
                f"{res['rss_kib'] / 1024:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    for axis in dict.fromkeys(r["axis"] for r in results):
        print(f"\n### {axis}\n")
        print(table([r for r in results if r["axis"] == axis]))
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
