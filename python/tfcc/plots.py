"""PNG plots of a run: throughput, congestion window or rate, and queue length over time.

The grouping of samples into lines happens here; the drawing is Rust (``_core.plot_panels``,
plotters), because matplotlib's import alone costs several times what a small simulation takes
and issue 4 counts outputs in the speed comparison with ns-2.
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from tfcc import _core

# Above this many flows, lines are drawn per protocol group (mean) instead of per flow.
MAX_LINES = 16

Line = tuple[str, list[float], list[float]]


@cache
def font_path() -> str | None:
    """A TrueType font for the chart text: matplotlib's DejaVu Sans (found without importing
    matplotlib), else Debian's copy; ``None`` draws the charts without text."""
    spec = importlib.util.find_spec("matplotlib")
    roots = list(spec.submodule_search_locations or []) if spec else []
    candidates = [Path(r) / "mpl-data" / "fonts" / "ttf" / "DejaVuSans.ttf" for r in roots]
    candidates.append(Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    for c in candidates:
        if c.is_file():
            return str(c)
    return None


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


def _lines(series, summary, key: str, scale: float) -> list[Line]:
    labels = _labels(summary)
    per_flow = _by_flow(series, key)
    if len(per_flow) <= MAX_LINES:
        return [
            (f"{fid} {labels.get(fid, '')}", xs, [y * scale for y in ys])
            for fid, (xs, ys) in sorted(per_flow.items())
        ]
    groups: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for fid, (xs, ys) in per_flow.items():
        for x, y in zip(xs, ys, strict=True):
            groups[labels.get(fid, "?")][x].append(y * scale)
    out = []
    for label, pts in sorted(groups.items()):
        xs = sorted(pts)
        out.append((f"{label} (mean)", xs, [sum(pts[x]) / len(pts[x]) for x in xs]))
    return out


def plot_run(
    out: Path,
    summary: Mapping[str, Any],
    flows: Mapping[str, Sequence[Any]],
    links: Mapping[str, Sequence[Any]],
) -> list[Path]:
    """Write throughput.png, window.png (cwnd or rate) and queue.png into ``out``."""
    written = []
    name = summary.get("scenario", "")
    font = font_path()

    def draw(file: str, panels: list[dict[str, Any]], title: str, height: int) -> None:
        _core.plot_panels(
            str(out / file), panels, title=title, xlabel="time (s)", height=height, font=font
        )
        written.append(out / file)

    throughput = _lines(flows, summary, "throughput_bps", 1e-6)
    if throughput:
        draw(
            "throughput.png",
            [{"ylabel": "throughput (Mb/s)", "lines": throughput}],
            f"{name}: throughput",
            440,
        )
    cwnd = _lines(flows, summary, "cwnd", 1.0)
    rate = _lines(flows, summary, "rate_bps", 1e-6)
    panels = [
        {"ylabel": label, "lines": lines}
        for label, lines in (("cwnd (packets)", cwnd), ("allowed rate (Mb/s)", rate))
        if lines
    ]
    if panels:
        draw("window.png", panels, f"{name}: window and rate", 110 + 330 * len(panels))
    if links.get("t"):
        per_link: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for link, t, q in zip(links["link"], links["t"], links["queue_pkts"], strict=True):
            per_link[link][0].append(t)
            per_link[link][1].append(q)
        queue = [(link, xs, ys) for link, (xs, ys) in sorted(per_link.items())]
        draw(
            "queue.png",
            [{"ylabel": "queue (packets)", "lines": queue}],
            f"{name}: queue length",
            330,
        )
    return written
