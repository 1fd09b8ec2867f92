"""002 Fig. 4.3/4.4: the S3 fairness heat map, bottleneck bandwidth × sources per type → θ.

n TCP-SACK flows against n TFWC (or TFRC) flows, with n reverse-path TCP-SACK flows (Sec.
4.2), on ``scenarios/002-s3-fairness.toml`` at each grid point, θ = TCP's share of the forward
flows (:func:`tfcc.metrics.fairness_theta`) averaged over the seeds. The queue follows 002 Sec.
4.1: one bandwidth-delay product at the scenario's base RTT of about 44 ms, at least 15
packets. :func:`theta_grid` is a plain loop over the grid, meant to be swapped for the generic
sweep engine (issue 8) when it lands; :func:`plot` draws the map with matplotlib, outside the
simulator's hot path.

``python -m tfcc.heatmap [--quick] [--protocol tfwc|tfrc] [--seeds N] [--out FILE.png]``
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

from tfcc.metrics import fairness_theta
from tfcc.reproduce import CLAIMS_DIR, Runner, default_runner

SCENARIO = CLAIMS_DIR.parent / "002-s3-fairness.toml"

#: The spec's grid (spec 002 §3.3: the axes span 0.1-20 Mb/s and 1-100 sources per type).
FULL_BANDWIDTHS_MBPS = [0.1, 0.5, 1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
FULL_SOURCES = [1, 2, 5, 10, 20, 50, 100]
#: The coarse grid of ``--quick``.
QUICK_BANDWIDTHS_MBPS = [0.5, 2, 10]
QUICK_SOURCES = [1, 5, 20]

#: Base RTT of the S3 dumbbell: 2 × (20 ms + 2 × ~1 ms access) ≈ 44 ms.
BASE_RTT_S = 0.044


def queue_limit(mbps: float, packet_bytes: int = 1000) -> int:
    """DropTail limit in packets: one BDP at :data:`BASE_RTT_S`, at least 15 (002 Sec. 4.1)."""
    return max(15, math.ceil(mbps * 1e6 * BASE_RTT_S / (8 * packet_bytes)))


def theta_grid(
    bandwidths_mbps: Sequence[float],
    sources: Sequence[int],
    protocol: str = "tfwc",
    seeds: Sequence[int] = (1,),
    runner: Runner = default_runner,
) -> list[list[float]]:
    """θ at each (sources, bandwidth) point: rows follow ``sources``, columns ``bandwidths``."""
    params = '{ preset = "ns2" }' if protocol == "tfrc" else "{}"
    grid = []
    for n in sources:
        row = []
        for bw in bandwidths_mbps:
            sets = [
                f"topology.bottleneck.rate={bw}Mbps",
                f"topology.bottleneck.limit={queue_limit(bw)}",
                f"flows.0.count={n}",
                f"flows.1.count={n}",
                # As many reverse-path TCP flows (002 Sec. 4.2; see the scenario file).
                f"flows.2.count={n}",
                f"flows.1.protocol={protocol}",
                f"flows.1.params={params}",
            ]
            vals = [fairness_theta(runner(SCENARIO, sets, s)) for s in seeds]
            row.append(sum(vals) / len(vals))
        grid.append(row)
    return grid


def plot(
    grid: list[list[float]],
    bandwidths_mbps: Sequence[float],
    sources: Sequence[int],
    title: str,
    out: Path,
) -> None:
    """Write the heat map as a PNG: x bandwidth, y sources per type, colour θ on [0, 1]."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    im = ax.imshow(grid, origin="lower", cmap="RdBu", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(bandwidths_mbps)), [f"{b:g}" for b in bandwidths_mbps])
    ax.set_yticks(range(len(sources)), [str(n) for n in sources])
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xlabel("bottleneck bandwidth (Mb/s)")
    ax.set_ylabel("sources per type")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="θ (TCP's share)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="002 S3 fairness heat map (Fig. 4.3)")
    ap.add_argument("--quick", action="store_true", help="the coarse 3 × 3 grid, one seed")
    ap.add_argument("--protocol", default="tfwc", choices=["tfwc", "tfrc"])
    ap.add_argument("--seeds", type=int, default=None, help="seeds per point (full: 5)")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    bws = QUICK_BANDWIDTHS_MBPS if a.quick else FULL_BANDWIDTHS_MBPS
    ns = QUICK_SOURCES if a.quick else FULL_SOURCES
    seeds = list(range(1, (a.seeds or (1 if a.quick else 5)) + 1))
    grid = theta_grid(bws, ns, a.protocol, seeds)
    out = a.out or Path(f"s3-heatmap-{a.protocol}.png")
    plot(grid, bws, ns, f"002 S3, DropTail: θ, TCP-SACK vs {a.protocol.upper()}", out)
    print("sources \\ Mb/s", " ".join(f"{b:g}" for b in bws))
    for n, row in zip(ns, grid, strict=True):
        print(n, " ".join(f"{v:.3f}" for v in row))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
