"""Sweep machinery cost (issue 8): a 200-point sweep of short runs on 1 and 2 workers.

For each configuration this runs the whole sweep into a fresh directory and reports the wall
time, the throughput in runs per second, the simulation's own time (the sum of the runs'
``wall_seconds``) and the machinery's cost per run: everything that is not simulating (process
hand-off, writing summary.json, the Parquet files and plots, the results store, the driver),
``(workers × wall − Σ simulation) / runs``; "worker ms/run" is the worker's own time on a run
(simulation and outputs), and the occupancy is the workers' time on runs over workers × wall:
near 100 % means the driver keeps every worker busy, so throughput follows the cores the
machine gives. Prints a Markdown table for bench/RESULTS.md.

    python bench/sweep.py [--points 200] [--duration 2s] [--plots] [--dask]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tfcc import store
from tfcc import sweep as sw

SCENARIO = """\
duration = "2s"
measure_from = "0.5s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "10ms", queue = "droptail", limit = 20 }
access = { rate = "100Mbps", delay = { random = ["0.1ms", "2ms"] } }
[[flows]]
protocol = "tcp-sack"
count = 2
[[flows]]
protocol = "tfwc"
count = 2
"""


def one(
    scen: Path, root: Path, points: int, workers: int, plots: bool, backend: str
) -> dict[str, float]:
    # 10 bandwidths × points/10 seeds
    rates = ",".join(f"{1 + i * 0.5:g}Mbps" for i in range(10))
    s = sw.load(scen, [f"topology.bottleneck.rate={rates}"], seeds=points // 10)
    out = root / f"{backend}-{workers}-{int(plots)}"
    shutil.rmtree(out, ignore_errors=True)
    if backend == "pool":
        b: sw.Backend = sw.LocalPool(workers)
    else:
        b = sw.DaskBackend(workers=workers)
    try:
        t0 = time.perf_counter()
        o = sw.run(s, out, backend=b, plots=plots)
        wall = time.perf_counter() - t0
    finally:
        b.close()
    assert o.ran == points and o.failed == 0, o
    df = store.query(out, "SELECT wall_seconds, task_seconds FROM runs")
    sims = df["wall_seconds"].to_list()
    sim = sum(sims)
    task = sum(df["task_seconds"].to_list())
    return {
        # how busy the driver kept the workers: their time on tasks over workers × wall
        "occupancy": task / (workers * wall),
        "task_ms": 1e3 * task / points,
        "wall": wall,
        "rate": points / wall,
        "sim": sim,
        "sim_mean_ms": 1e3 * statistics.fmean(sims),
        "overhead_ms": 1e3 * (workers * wall - sim) / points,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--plots", action="store_true", help="also draw each run's PNG plots")
    ap.add_argument("--dask", action="store_true", help="also on a local Dask cluster")
    ap.add_argument("--duration", default="2s", help="simulated time of each run")
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tfcc-bench-sweep."))
    scen = root / "short.toml"
    scen.write_text(SCENARIO.replace('duration = "2s"', f'duration = "{a.duration}"'))
    rows = []
    try:
        backends = ["pool", "dask"] if a.dask else ["pool"]
        for backend in backends:
            for plots in sorted({False, a.plots}):
                for workers in (1, 2):
                    r = one(scen, root, a.points, workers, plots, backend)
                    rows.append((backend, plots, workers, r))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"{a.points} points of {a.duration}, {os.cpu_count()} cores, load average {load:.1f}\n")
    print(
        "| executor | plots | workers | wall s | runs/s | Σ simulation s | "
        "simulation ms/run | worker ms/run | machinery ms/run | worker occupancy |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for backend, plots, workers, r in rows:
        print(
            f"| {backend} | {'yes' if plots else 'no'} | {workers} | {r['wall']:.2f} | "
            f"{r['rate']:.1f} | {r['sim']:.2f} | {r['sim_mean_ms']:.1f} | "
            f"{r['task_ms']:.1f} | {r['overhead_ms']:.1f} | {r['occupancy']:.0%} |"
        )


if __name__ == "__main__":
    main()
