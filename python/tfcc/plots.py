"""PNG plots of a run: throughput, congestion window or rate, and queue length over time."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Figures are built on the Agg canvas directly, without pyplot: pyplot's import and its figure
# manager cost most of a second, several times what a small simulation takes (issue 4 counts
# set-up and outputs in the speed comparison with ns-2).
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def _figure(height: float, rows: int = 1):
    fig = Figure(figsize=(8, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=True)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.12 if rows == 1 else 0.09, top=0.9)
    return fig, axes


# Above this many flows, lines are drawn per protocol group (mean) instead of per flow.
MAX_LINES = 16


def _by_flow(series: Mapping[str, Sequence[Any]], key: str) -> dict[int, tuple[list, list]]:
    out: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    for fid, t, v in zip(series["flow"], series["t"], series[key], strict=True):
        if v is None:
            continue
        xs, ys = out[fid]
        xs.append(t)
        ys.append(v)
    return out


def _labels(summary: Mapping[str, Any]) -> dict[int, str]:
    return {f["id"]: f.get("label") or f["protocol"] for f in summary.get("flows", [])}


def _plot_metric(ax, series, summary, key: str, scale: float) -> bool:
    labels = _labels(summary)
    per_flow = _by_flow(series, key)
    if not per_flow:
        return False
    if len(per_flow) <= MAX_LINES:
        for fid, (xs, ys) in sorted(per_flow.items()):
            ax.plot(xs, [y * scale for y in ys], lw=0.8, label=f"{fid} {labels.get(fid, '')}")
    else:
        groups: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
        for fid, (xs, ys) in per_flow.items():
            for x, y in zip(xs, ys, strict=True):
                groups[labels.get(fid, "?")][x].append(y * scale)
        for label, pts in sorted(groups.items()):
            xs = sorted(pts)
            ax.plot(xs, [sum(pts[x]) / len(pts[x]) for x in xs], lw=0.9, label=f"{label} (mean)")
    ax.legend(fontsize=6, ncol=2, loc="upper right")
    return True


def plot_run(
    out: Path,
    summary: Mapping[str, Any],
    flows: Mapping[str, Sequence[Any]],
    links: Mapping[str, Sequence[Any]],
) -> list[Path]:
    """Write throughput.png, window.png (cwnd or rate) and queue.png into ``out``."""
    written = []
    name = summary.get("scenario", "")

    fig, ax = _figure(4)
    if _plot_metric(ax, flows, summary, "throughput_bps", 1e-6):
        ax.set(xlabel="time (s)", ylabel="throughput (Mb/s)", title=f"{name}: throughput")
        fig.savefig(out / "throughput.png", dpi=110)
        written.append(out / "throughput.png")

    fig, (ax1, ax2) = _figure(6, rows=2)
    has_cwnd = _plot_metric(ax1, flows, summary, "cwnd", 1.0)
    has_rate = _plot_metric(ax2, flows, summary, "rate_bps", 1e-6)
    if has_cwnd or has_rate:
        ax1.set(ylabel="cwnd (packets)", title=f"{name}: window and rate")
        ax2.set(xlabel="time (s)", ylabel="allowed rate (Mb/s)")
        fig.savefig(out / "window.png", dpi=110)
        written.append(out / "window.png")

    if links.get("t"):
        fig, ax = _figure(3)
        per_link: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for link, t, q in zip(links["link"], links["t"], links["queue_pkts"], strict=True):
            per_link[link][0].append(t)
            per_link[link][1].append(q)
        for link, (xs, ys) in sorted(per_link.items()):
            ax.plot(xs, ys, lw=0.8, label=link)
        ax.set(xlabel="time (s)", ylabel="queue (packets)", title=f"{name}: queue length")
        ax.legend(fontsize=7)
        fig.savefig(out / "queue.png", dpi=110)
        written.append(out / "queue.png")
        return written
