"""Per-flow trains at the bottleneck in stock ns-2.35 (docs/reproductions/log/ptcp.md, "The inline
estimator against Reno, traced", imtcp2).

Runs `trains.tcl` (flow 0 and N Reno flows on the imtcp harness' dumbbell) with equal access
delays (2.5 ms, the thesis' set-up), with access delays spread (2.5 ± 2 ms) and with equal
delays and ns-2's `overhead_` (a random 0-0.5 ms delay before each send), and reads the
bottleneck's enqueue events over [from, to): how many runs of consecutive arrivals flow 0's
packets form and their mean length, and how many other flows' packets arrive in a 270 µs window
(a 5-segment stream's span at about 90 Mb/s) opened at a random instant and at one of flow 0's
arrivals, as the inline estimator's streams are (they are flow 0's own packets).

Usage: `python bench/ns2/trains.py [--n 1,10,40] [--from S] [--to S] [--window US]`
"""

from __future__ import annotations

import argparse
import bisect
import random
import statistics
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def arrivals(path: Path) -> list[tuple[float, int]]:
    """(time, flow id) of every TCP data packet enqueued at the bottleneck (`+` events)."""
    out = []
    for line in path.read_text().splitlines():
        p = line.split()
        if len(p) > 7 and p[0] == "+" and p[4] == "tcp":
            out.append((float(p[1]), int(p[7])))
    return out


def summarise(ev: list[tuple[float, int]], window: float, seed: int = 1) -> dict:
    times = [t for t, _ in ev]
    runs: list[tuple[int, int]] = []
    for _, f in ev:
        if runs and runs[-1][0] == f:
            runs[-1] = (f, runs[-1][1] + 1)
        else:
            runs.append((f, 1))
    own = [n for f, n in runs if f == 0]

    def cross(a: float) -> int:
        i = bisect.bisect_left(times, a)
        j = bisect.bisect_left(times, a + window)
        return sum(1 for _, f in ev[i:j] if f != 0)

    rng = random.Random(seed)
    lo, hi = times[0], times[-1] - window
    rand = [cross(rng.uniform(lo, hi)) for _ in range(2000)]
    starts = [t for t, f in ev if f == 0 and t < hi]
    at_own = [cross(t) for t in rng.sample(starts, min(2000, len(starts)))]
    return {
        "arrivals": len(ev),
        "flow0": sum(own),
        "flow0_runs": len(own),
        "flow0_mean_run": statistics.mean(own),
        "cross_random": statistics.mean(rand),
        "none_random": sum(c == 0 for c in rand) / len(rand),
        "cross_at_flow0": statistics.mean(at_own),
        "none_at_flow0": sum(c == 0 for c in at_own) / len(at_own),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="1,10,40", help="Reno flows beside flow 0, comma-separated")
    ap.add_argument("--from", dest="t0", type=float, default=8.0)
    ap.add_argument("--to", dest="t1", type=float, default=9.0)
    ap.add_argument("--window", type=float, default=270.0, help="µs")
    a = ap.parse_args()
    print(
        "| Reno flows | access delays (all flows) | flow 0's runs | mean run | "
        f"other flows' packets in {a.window:.0f} µs: random start (none) | "
        "from a flow-0 arrival (none) |"
    )
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in a.n.split(",")]:
            for spread, overhead, label in [
                (0.0, 0.0, "2.5 ms"),
                (2.0, 0.0, "0.5-4.5 ms"),
                (0.0, 0.0005, "2.5 ms, `overhead_` 0.5 ms"),
            ]:
                tr = Path(tmp) / f"q-{n}-{spread}.tr"
                subprocess.run(
                    [
                        "ns",
                        str(HERE / "trains.tcl"),
                        f"n={n}",
                        f"spread={spread}",
                        f"overhead={overhead}",
                        f"out={tr}",
                        f"from={a.t0}",
                        f"to={a.t1}",
                    ],
                    check=True,
                    cwd=tmp,
                    capture_output=True,
                )
                s = summarise(arrivals(tr), a.window * 1e-6)
                print(
                    f"| {n} | {label} | {s['flow0_runs']} | {s['flow0_mean_run']:.1f} | "
                    f"{s['cross_random']:.2f} ({100 * s['none_random']:.0f} %) | "
                    f"{s['cross_at_flow0']:.2f} ({100 * s['none_at_flow0']:.0f} %) |"
                )


if __name__ == "__main__":
    main()
