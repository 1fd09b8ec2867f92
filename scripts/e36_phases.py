"""Per-phase view of one E3.6 run (003 Sec. 3.5.3, Fig. 3.19): the test flow's goodput, window,
window cuts and timeouts, and the bottleneck queue, in the two phases of the on/off CBR.

    tfcc run scenarios/003-e36-oscillation.toml --out /tmp/e36-simd --no-plots \\
        --set flows.0.protocol=simd --set 'flows.0.params={ max_window = 200 }' \\
        --set flows.2.on=2s --set flows.2.off=2s --set sample_interval=10ms
    .venv/bin/python scripts/e36_phases.py /tmp/e36-simd [--half 2] [--limit 192]

The CBR starts with an on period (docs/scenarios.md), so cycle k of the measurement window
begins at ``measure_from + 2·half·k`` with the on (low-rate, 1 Mb/s left) phase. Goodput per
phase is the delivered payload between the phase's sample instants; a window cut is a sample
whose window is more than 2 % below the one before (so a sample interval of a few ms to 10 ms
is needed: 100 ms merges cuts); a timeout is a fall of the window to one packet. Used for the
section "E3.6's period-4 claims for SIMD and GAIMD" of docs/reproductions/log/warc.md (e36).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pyarrow.parquet as pq


def _column(table: dict, name: str, mask: list[bool]) -> list[float]:
    pairs = zip(table[name], mask, strict=True)
    return [math.nan if v is None else float(v) for v, m in pairs if m]


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def phases(run: Path, half: float, limit: int, bins: int = 8) -> dict:
    """The per-phase numbers of flow 0 of the run in ``run``."""
    summary = json.loads((run / "summary.json").read_text())
    t0, t1 = summary["measure_from_s"], summary["sim_seconds"]
    period = 2 * half
    ts = pq.read_table(run / "timeseries.parquet").to_pydict()
    mask = [f == 0 for f in ts["flow"]]
    t = _column(ts, "t", mask)
    delivered = _column(ts, "delivered_bytes", mask)
    cwnd = _column(ts, "cwnd", mask)
    qs = pq.read_table(run / "queues.parquet").to_pydict()
    qmask = [name == "bottleneck" for name in qs["link"]]
    qt = _column(qs, "t", qmask)
    qpk = _column(qs, "queue_pkts", qmask)
    qdrops = _column(qs, "drops", qmask)

    def phase_of(x: float) -> tuple[int, bool]:
        c = (x - 1e-9 - t0) / period
        k = math.floor(c)
        return k, (c - k) * period < half

    cycles = round((t1 - t0) / period)
    index = {round(x, 6): i for i, x in enumerate(t)}

    def delivered_at(x: float) -> float:
        return delivered[index[round(x, 6)]]

    on_bytes = off_bytes = 0.0
    for k in range(cycles):
        a = t0 + k * period
        on_bytes += delivered_at(a + half) - delivered_at(a)
        off_bytes += delivered_at(a + period) - delivered_at(a + half)
    out: dict = {
        "cycles": cycles,
        "goodput_on_mbps": on_bytes * 8 / (cycles * half) / 1e6,
        "goodput_off_mbps": off_bytes * 8 / (cycles * half) / 1e6,
        "throughput_mbps": summary["flows"][0]["throughput_bps"] / 1e6,
        "timeouts_summary": summary["flows"][0]["timeouts"],
    }
    cuts = {True: 0, False: 0}
    timeouts = {True: 0, False: 0}
    win = {True: [], False: []}
    profile: list[list[float]] = [[] for _ in range(2 * bins)]
    for i in range(1, len(t)):
        if not t0 < t[i] <= t1:
            continue
        _, on = phase_of(t[i])
        w, w_before = cwnd[i], cwnd[i - 1]
        win[on].append(w)
        if w < w_before * 0.98:
            cuts[on] += 1
        if w <= 1.0001 < w_before:
            timeouts[on] += 1
        pos = ((t[i] - 1e-9 - t0) % period) / period
        profile[min(int(pos * 2 * bins), 2 * bins - 1)].append(w)
    out["cuts_per_cycle_on"] = cuts[True] / cycles
    out["cuts_per_cycle_off"] = cuts[False] / cycles
    out["timeouts_on"] = timeouts[True]
    out["timeouts_off"] = timeouts[False]
    out["window_on"] = _mean(win[True])
    out["window_off"] = _mean(win[False])
    out["window_profile"] = [round(_mean(b), 1) for b in profile]
    drop_cycles = {True: set(), False: set()}
    qwin = {True: [], False: []}
    qprofile: list[list[float]] = [[] for _ in range(2 * bins)]
    for x, q, d in zip(qt, qpk, qdrops, strict=True):
        if not t0 < x <= t1:
            continue
        k, on = phase_of(x)
        qwin[on].append(q)
        if d > 0:
            drop_cycles[on].add(k)
        pos = ((x - 1e-9 - t0) % period) / period
        qprofile[min(int(pos * 2 * bins), 2 * bins - 1)].append(q)
    out["queue_on"] = _mean(qwin[True])
    out["queue_off"] = _mean(qwin[False])
    out["cycles_with_drops_on"] = len(drop_cycles[True])
    out["cycles_with_drops_off"] = len(drop_cycles[False])
    out["queue_profile"] = [round(_mean(b)) for b in qprofile]
    out["queue_limit"] = limit
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a `tfcc run` output directory")
    ap.add_argument("--half", type=float, default=2.0, help="seconds of each phase (flows.2.on)")
    ap.add_argument("--limit", type=int, default=192, help="the bottleneck's queue limit")
    args = ap.parse_args()
    out = phases(args.run, args.half, args.limit)
    for key, value in out.items():
        if isinstance(value, float):
            value = round(value, 3)
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
