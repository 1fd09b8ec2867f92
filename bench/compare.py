"""tfcc against ns-2 on the same dumbbell, one after the other in one run (issue 4).

Each case is one set of parameters in ns-2's ``bench/ns2/dumbbell.tcl`` vocabulary; the same case
runs in tfcc as ``bench/scenarios/dumbbell.toml`` with ``--set`` overrides, through the ``tfcc run``
command line with its normal outputs (summary, parquet, plots) so that set-up and output are paid
for, as they are by ns-2. Both are timed from spawn to exit, and their peak RSS is ``ru_maxrss`` of
that very child (``os.wait4``).

    python bench/compare.py          # rows A (N = 2, 16, 64, 128) and B, writes bench/RESULTS.md
    python bench/compare.py --quick  # small rows only, prints the table

``crosscheck(case)`` is also used by ``tests/test_ns2_crosscheck.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfcc.ns2 import bernoulli_loss, cpu_model, peak_rss_prefix, read_peak_rss, run_ns2

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "scenarios" / "dumbbell.toml"
#: ns-2's TCP segment: ``packetSize_ 1000`` payload plus ``tcpip_base_hdr_size_ 40``.
TCP_PAYLOAD, TCP_HEADER = 1000, 40


@dataclass(frozen=True)
class Case:
    name: str
    tcp: int
    rate: float  # bit/s
    delay: float  # s, one way
    limit: int  # packets
    duration: float  # s
    loss: float = 0.0
    access_rate: float = 100e6
    access_delay: float = 0.001
    start_max: float = 1.0
    measure_from: float | None = None
    variant: str = "sack"

    def ns2_params(self) -> dict[str, Any]:
        return {
            "tcp": self.tcp,
            "tcp_variant": self.variant,
            "bottleneck_rate": self.rate,
            "bottleneck_delay": self.delay,
            "limit": self.limit,
            "loss": self.loss,
            "access_rate": self.access_rate,
            "access_delay": self.access_delay,
            "duration": self.duration,
            "measure_from": self.window_start(),
            "start_max": self.start_max,
            "start_mode": "even",
        }

    def window_start(self) -> float:
        return self.duration / 5 if self.measure_from is None else self.measure_from

    def tfcc_overrides(self) -> list[str]:
        # ns-2's "even" start: flow i of n at i·start_max/n, i.e. a spread over
        # [0, start_max·(n−1)/n].
        last = self.start_max * (self.tcp - 1) / self.tcp
        loss = bernoulli_loss(self.loss)
        return [
            f"duration={self.duration}",
            f"measure_from={self.window_start()}",
            f"topology.bottleneck.rate={self.rate}",
            f"topology.bottleneck.delay={self.delay}",
            f"topology.bottleneck.limit={self.limit}",
            f"topology.bottleneck.loss={loss}",
            f"topology.access.rate={self.access_rate}",
            f"topology.access.delay={self.access_delay}",
            f"flows.0.protocol=tcp-{self.variant}",
            f"flows.0.count={self.tcp}",
            f"flows.0.start=[0.0, {last}]",
        ]


def _measure(cmd: list[str], cwd: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB; through GNU time, as for ns-2: see
    :func:`tfcc.ns2.peak_rss_prefix`) and exit code of one child process."""
    rss_file = Path(cwd) / ".peak-rss"
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*peak_rss_prefix(rss_file), *cmd],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
        # wait4 rather than Popen.wait: it also returns the child's own resource usage.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code  # reaped here; tell Popen so it does not wait again
        if code != 0:
            err.seek(0)
            text = err.read().decode(errors="replace").strip()[-500:]
            raise RuntimeError(f"{' '.join(cmd)} exited with {code}: {text}")
    return wall, read_peak_rss(rss_file, usage.ru_maxrss), code


def run_tfcc(case: Case) -> dict[str, Any]:
    """``tfcc run`` on the case; returns its summary plus wall time and peak RSS."""
    tfcc = Path(sys.executable).with_name("tfcc")
    with tempfile.TemporaryDirectory(prefix="tfcc-bench-") as tmp:
        out = Path(tmp) / "out"
        cmd = [str(tfcc), "run", str(SCENARIO), "--out", str(out), "--quiet"]
        for o in case.tfcc_overrides():
            cmd += ["--set", o]
        wall, rss, _ = _measure(cmd, tmp)
        summary = json.loads((out / "summary.json").read_text())
    summary["wall_seconds_process"] = wall
    summary["peak_rss_kib"] = rss
    return summary


def bottleneck(summary: dict[str, Any]) -> dict[str, Any]:
    for link in summary["links"]:
        if link["name"] == "bottleneck":
            return link
    raise KeyError("bottleneck")


def crosscheck(case: Case, repeat: int = 1) -> dict[str, Any]:
    """Both simulators on one case, with the four compared quantities side by side. With
    ``repeat`` > 1 each runs that many times, alternating, and the row reports the median wall
    time and the largest peak RSS (both are deterministic, so the other figures do not change)."""
    nss, tfs = [], []
    for _ in range(max(1, repeat)):
        nss.append(run_ns2(case.ns2_params(), timeout=1800))
        tfs.append(run_tfcc(case))
    ns, tf = nss[0], tfs[0]
    ns["wall_seconds"] = statistics.median(r["wall_seconds"] for r in nss)
    ns["peak_rss_kib"] = max(r["peak_rss_kib"] for r in nss)
    tf["wall_seconds_process"] = statistics.median(r["wall_seconds_process"] for r in tfs)
    tf["peak_rss_kib"] = max(r["peak_rss_kib"] for r in tfs)
    nb, tb = ns["bottleneck"], bottleneck(tf)
    # ns-2's TCPSink counts wire bytes (1000 B payload + 40 B TCP/IP header, bench/ns2/README.md);
    # tfcc's summary counts payload delivered to the application. Compare goodput with goodput.
    ns_thr = [f["throughput_bps"] * TCP_PAYLOAD / (TCP_PAYLOAD + TCP_HEADER) for f in ns["flows"]]
    tf_thr = [f["throughput_bps"] for f in tf["flows"]]
    return {
        "case": case.name,
        "ns2": {
            "utilization": nb["utilization"],
            "throughput_bps": sum(ns_thr),
            "drops": nb["drops_pkts"] + nb["loss_model_drops_pkts"],
            "jain": ns["derived"]["jain_index"],
            "wall_s": ns["wall_seconds"],
            "rss_kib": ns["peak_rss_kib"],
            "departures": nb["departures_pkts"],
        },
        "tfcc": {
            "utilization": tb["utilization"],
            "throughput_bps": sum(tf_thr),
            "drops": tb["drops"],
            "jain": tf["metrics"]["jain_index"],
            "wall_s": tf["wall_seconds_process"],
            "rss_kib": tf["peak_rss_kib"],
            "departures": tb["tx_packets"],
        },
    }


ROWS_A = [Case(f"A N={n}", n, 15e6, 0.020, 100, 100.0) for n in (2, 16, 64, 128)]
ROW_B = Case("B N=1000", 1000, 1e9, 0.010, 1000, 20.0, access_rate=10e9, measure_from=5.0)
QUICK = [
    Case("A N=2 (20 s)", 2, 15e6, 0.020, 100, 20.0),
    Case("A N=16 (20 s)", 16, 15e6, 0.020, 100, 20.0),
]


def machine() -> str:
    cpu = cpu_model("unknown CPU")
    return f"{platform.node()}: {cpu}, {os.cpu_count()} cores, Linux {platform.release()}"


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| row | ns-2 wall s | tfcc wall s | speed-up | ns-2 RSS MiB | tfcc RSS MiB "
        "| ns-2 pkts/wall s | tfcc pkts/wall s | util ns-2 / tfcc | Jain ns-2 / tfcc |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        n, t = r["ns2"], r["tfcc"]
        lines.append(
            f"| {r['case']} | {n['wall_s']:.2f} | {t['wall_s']:.2f} "
            f"| {n['wall_s'] / t['wall_s']:.1f}× | {n['rss_kib'] / 1024:.0f} "
            f"| {t['rss_kib'] / 1024:.0f} | {n['departures'] / n['wall_s']:,.0f} "
            f"| {t['departures'] / t['wall_s']:,.0f} "
            f"| {n['utilization']:.3f} / {t['utilization']:.3f} "
            f"| {n['jain']:.3f} / {t['jain']:.3f} |"
        )
    return "\n".join(lines)


#: The generated part of RESULTS.md lies between these lines; the notes and the other
#: benchmarks' sections around it are kept.
BEGIN, END = "<!-- compare.py: begin -->", "<!-- compare.py: end -->"


def replace_block(doc: str, block: str) -> str:
    """``doc`` with its generated block replaced by ``block`` (prepended if it has none)."""
    fenced = f"{BEGIN}\n{block}{END}\n"
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        return head + fenced + ("\n" + tail if tail else "")
    return fenced + ("\n" + doc if doc else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two short rows, no RESULTS.md")
    ap.add_argument("--no-b", action="store_true", help="skip row B (1000 flows at 1 Gb/s)")
    ap.add_argument(
        "--repeat", type=int, default=5, help="runs per A row (median wall time); B runs once"
    )
    args = ap.parse_args()
    cases = QUICK if args.quick else ROWS_A + ([] if args.no_b else [ROW_B])
    results = []
    for c in cases:
        print(f"running {c.name} ...", file=sys.stderr, flush=True)
        results.append(crosscheck(c, 1 if c is ROW_B else args.repeat))
    text = table(results)
    print(text)
    if not args.quick:
        stamp = time.strftime("%Y-%m-%d")
        block = (
            "# tfcc vs ns-2, side by side\n\n"
            f"Recorded {stamp} by `python bench/compare.py` on {machine()}.\n"
            "Wall time is spawn to exit of each process (set-up and outputs included), the "
            f"median of {args.repeat} alternating runs per A row (B once); RSS is the peak "
            "resident set of that process, measured by GNU time for both (see "
            "`tfcc.ns2.peak_rss_prefix`). tfcc ran `tfcc run` (the console script, which hands "
            "over to the native tfcc-run) with its normal outputs (summary.json, "
            "timeseries.parquet, queues.parquet, plots).\n\n" + text + "\n"
        )
        path = ROOT / "bench" / "RESULTS.md"
        path.write_text(replace_block(path.read_text() if path.exists() else "", block))
        (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
