"""Figures of docs/reproductions/msfrs.md from `tfcc run` summaries (thesis 003 Figs. 4.9-4.11).

Usage: python scripts/msfrs_figures.py M1_MSFRS M1_DRR M2_MSFRS M2_PLAIN OUTDIR, each a run
directory holding summary.json (003-msfrs-m1.toml with web.gateway msfrs and drr;
003-msfrs-backlogged.toml with msfrs and plain).
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PHASES = [(20, 200), (220, 400), (420, 600), (620, 800)]


def summary(d: str) -> dict:
    return json.loads((Path(d) / "summary.json").read_text())


def phase_rates(s: dict) -> list[list[float]]:
    """Mb/s per class per M1 phase, the first 20 s of each phase left out."""
    out = []
    for c in s["web"]["classes"]:
        x = c["bytes_per_second"]
        out.append([8 * sum(x[a:b]) / (b - a) / 1e6 for a, b in PHASES])
    return out


def main() -> None:
    m1, drr, m2, plain, outdir = sys.argv[1:6]
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, (name, d) in zip(
        axes, [("MSF-RS (Fig. 4.9)", m1), ("DRR (Fig. 4.10)", drr)], strict=True
    ):
        rates = phase_rates(summary(d))
        for k, r in enumerate(rates):
            ax.bar([p + 0.27 * (k - 1) for p in range(4)], r, width=0.27, label=f"class {k + 1}")
        ax.set_xticks(range(4), ["P1", "P2", "P3", "P4"])
        ax.set_title(name)
        ax.set_ylabel("Mb/s")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "msfrs-m1-phases.png", dpi=100)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    labels, tq, ts = [], [], []
    for name, d in [("MSF-RS", m2), ("plain", plain)]:
        w = summary(d)["web"]
        for k, c in enumerate(w["classes"]):
            labels.append(f"{name}\nclass {k + 1}")
            tq.append(c["mean_queued_s"])
            ts.append(c["mean_service_s"])
    ax.bar(range(len(labels)), tq, label="T_q (queued)")
    ax.bar(range(len(labels)), ts, bottom=tq, label="T_s (service)")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("s")
    ax.set_title("M2 latency by class (Fig. 4.11), seed 1")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "msfrs-m2-latency.png", dpi=100)


if __name__ == "__main__":
    main()
