"""``tfcc report DIR``: one self-contained HTML file about a sweep.

Everything is inline (CSS, and the figures as base64 PNG), so the file can be mailed or
archived alone. It holds: what was swept; per grid point the mean of each metric over seeds
with its 95 % confidence interval; heat maps of the first two axes (002 Fig. 4.3 plots θ over
bandwidth × number of sources, one map per protocol and queue); each metric along the first
axis with 95 % confidence bands over seeds, one line per combination of the other axes; time
series of a few runs; and the failed points with their errors.

The confidence interval is Student's t over the seeds of a point (``mean ± t(0.975, n-1)·s/√n``),
the usual reading of the theses' error bars (:func:`tfcc.confidence.mean_ci`); with one seed
there is no interval.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import itertools
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfcc import store
from tfcc.confidence import mean_ci
from tfcc.run import read_summary
from tfcc.sweep import ordered_cases

#: Run columns that are bookkeeping rather than metrics.
NOT_METRICS = {"seed", "sim_seconds", "wall_seconds", "task_seconds", "events"}
#: Metrics shown first when present (the TCP-friendliness ones).
PREFERRED = ("fairness_theta", "jain_index")
#: At most this many heat maps and time-series runs (a report stays readable and small).
MAX_MAPS = 12
MAX_SERIES = 3
#: At most this many points per time-series line: a 300 s run sampled every 100 ms drew 3000
#: per line, and the last line drawn covered the others (the fairness map's TCP at 0.21 Mb/s
#: hid under TFRC's 0.17, as if TCP were starved where θ was 0.52).
MAX_BINS = 300
#: The window widths the time series are averaged over, in seconds: the narrowest that keeps a
#: run within MAX_BINS and is not narrower than its sampling interval.
BIN_WIDTHS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


class ReportError(ValueError):
    """Nothing to report (no finished run), an unknown metric or run was asked for, or the
    report cannot be written where --out says."""


#: Metrics that cannot leave [0, 1] (TCP's share, Jain's index, a link's utilisation): their
#: confidence bands are drawn within it, where a t interval over a few seeds can overshoot.
BOUNDED = {"fairness_theta": (0.0, 1.0), "jain_index": (0.0, 1.0), "utilization": (0.0, 1.0)}


def ci_band(metric: str, mean: float, ci: float) -> tuple[float, float]:
    """The band drawn for a mean ± its 95 % half-width, clipped to the metric's range."""
    lo, hi = mean - ci, mean + ci
    if metric in BOUNDED:
        a, b = BOUNDED[metric]
        lo, hi = max(lo, a), min(hi, b)
    return lo, hi


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


#: Line styles beyond matplotlib's ten colours: the fairness map's CI figures hold 12 lines
#: (4 source counts × 3 protocols), and on one style the 11th and 12th took the 1st's and 2nd's
#: colour and marker, so two of its lines could not be told apart.
_MARKERS = ("o", "s", "^", "D", "v", "P")
_DASHES = ("-", "--", ":", "-.")


def _line_style(i: int) -> dict[str, str]:
    """The i-th line's colour, marker and dash, different from every other line's for the
    first 10 × 6 lines."""
    cycle = i // 10
    return {
        "color": f"C{i % 10}",
        "marker": _MARKERS[cycle % len(_MARKERS)],
        "linestyle": _DASHES[cycle % len(_DASHES)],
    }


def _legend_outside(ax: Any, ncol: int = 1) -> None:
    """The legend to the right of the axes: inside them it hid a dozen points of the CI
    figures (and peaks of the time series), wherever matplotlib's "best" put it."""
    ax.legend(fontsize=7, ncol=ncol, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)


def _img(data: str, alt: str) -> str:
    return f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}"></figure>'


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _fmt(v: float | None, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}g}"


class _Data:
    """The finished runs grouped by grid point, in the order of the sweep's axes."""

    def __init__(
        self, root: Path, metrics: Sequence[str] | None, runs: Sequence[str] | None = None
    ) -> None:
        self.meta = store.meta(root)
        # quantities in numeric order even in a sweep.json written before sweeps ordered them
        self.axes: list[dict[str, Any]] = [
            {**a, "cases": ordered_cases(a["cases"])} for a in self.meta["axes"]
        ]
        df = store.runs(root)
        self.all = df.to_dicts()
        self.ok = [r for r in self.all if r.get("status") == "ok"]
        self.failed = [r for r in self.all if r.get("status") == "failed"]
        if not self.ok:
            raise ReportError(f"{root}: no finished run to report on")
        cols = {c for c in df.columns}
        # an axis and its quantity in SI units (store._numeric_axes) are not metrics
        axis_cols = {c for a in self.axes for c in (a["column"], f"{a['column']}_value")}
        numeric = [
            c
            for c in df.columns
            if c not in NOT_METRICS
            and c not in axis_cols
            and any(isinstance(r.get(c), float | int) for r in self.ok)
            and not isinstance(self.ok[0].get(c), bool)
        ]
        if metrics:
            unknown = [m for m in metrics if m not in cols]
            if unknown:
                raise ReportError(
                    f"--metric {unknown[0]}: no such column (metrics: {', '.join(numeric)})"
                )
            self.metrics = list(metrics)
        else:
            self.metrics = [m for m in PREFERRED if m in numeric] + [
                m for m in numeric if m not in PREFERRED
            ]
        ok_ids = {r["run_id"] for r in self.ok}
        unknown_runs = [r for r in runs or [] if r not in ok_ids]
        if unknown_runs:
            raise ReportError(f"--run {unknown_runs[0]}: no finished run with that id")
        self.groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for r in self.ok:
            self.groups.setdefault(self.key(r), []).append(r)

    def key(self, r: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(r.get(a["column"])) for a in self.axes)

    def values(self, key: tuple[str, ...], metric: str) -> list[float]:
        out = []
        for r in self.groups.get(key, []):
            v = r.get(metric)
            if isinstance(v, int | float) and not math.isnan(v):
                out.append(float(v))
        return out


def _points_table(d: _Data) -> str:
    headers = [a["name"] for a in d.axes] + ["seeds"]
    for m in d.metrics:
        headers += [m, "± 95 %"]
    rows = []
    for key in itertools.product(*(a["cases"] for a in d.axes)):
        if key not in d.groups:
            continue
        row: list[Any] = [*key, len(d.groups[key])]
        for m in d.metrics:
            vs = d.values(key, m)
            if vs:
                mean, ci = mean_ci(vs)
                row += [_fmt(mean), _fmt(ci, 2) if len(vs) > 1 else "–"]
            else:
                row += ["–", "–"]
        rows.append(row)
    return _table(headers, rows, "points")


def _heatmaps(d: _Data) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    if len(d.axes) < 2:
        return []
    xa, ya, rest = d.axes[0], d.axes[1], d.axes[2:]
    out = []
    for m in d.metrics:
        for facet in itertools.product(*(a["cases"] for a in rest)):
            if len(out) >= MAX_MAPS:
                return out
            grid = np.full((len(ya["cases"]), len(xa["cases"])), np.nan)
            for (i, y), (j, x) in itertools.product(enumerate(ya["cases"]), enumerate(xa["cases"])):
                vs = d.values((x, y, *facet), m)
                if vs:
                    grid[i, j] = statistics.fmean(vs)
            if np.isnan(grid).all():
                continue
            theta = m == "fairness_theta"
            fig, ax = plt.subplots(
                figsize=(1.2 + 1.1 * len(xa["cases"]), 1.4 + 0.8 * len(ya["cases"]))
            )
            # a bounded metric keeps its whole range on the colour scale: scaled to the data,
            # Jain's index of 0.986 and 0.994 were purple against yellow (ux3)
            lo, hi = BOUNDED.get(m, (None, None))
            im = ax.imshow(
                grid,
                origin="lower",
                cmap="RdBu" if theta else "viridis",
                vmin=lo,
                vmax=hi,
                aspect="auto",
            )
            for i, j in itertools.product(range(grid.shape[0]), range(grid.shape[1])):
                if not np.isnan(grid[i, j]):
                    # dark text on light cells and light text on dark ones
                    shade = im.cmap(im.norm(grid[i, j]))
                    light = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2] > 0.5
                    ax.text(
                        j,
                        i,
                        f"{grid[i, j]:.2f}",
                        ha="center",
                        va="center",
                        fontsize=9,
                        color="black" if light else "white",
                    )
            ax.set_xticks(range(len(xa["cases"])), xa["cases"])
            ax.set_yticks(range(len(ya["cases"])), ya["cases"])
            ax.set_xlabel(xa["name"])
            ax.set_ylabel(ya["name"])
            where = ", ".join(f"{a['name']} = {v}" for a, v in zip(rest, facet, strict=True))
            ax.set_title(f"{m}" + (f" ({where})" if where else ""), fontsize=10)
            fig.colorbar(im, ax=ax, label=m + (" (0.5 = fair)" if theta else ""))
            out.append(_img(_png(fig), f"heat map of {m} {where}"))
    return out


def _lines(d: _Data) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xa, rest = d.axes[0] if d.axes else None, d.axes[1:]
    if xa is None:
        return []
    out = []
    xs = list(range(len(xa["cases"])))
    for m in d.metrics:
        fig, ax = plt.subplots(figsize=(6.4, 3.6))
        drawn = single = 0
        for combo in itertools.product(*(a["cases"] for a in rest)):
            pts = []
            for j, x in enumerate(xa["cases"]):
                vs = d.values((x, *combo), m)
                if vs:
                    pts.append((j, *mean_ci(vs), len(vs)))
            if not pts:
                continue
            j, mean, ci, n = zip(*pts, strict=True)
            label = ", ".join(f"{a['name']}={v}" for a, v in zip(rest, combo, strict=True))
            (line,) = ax.plot(j, mean, label=label or m, **_line_style(drawn))
            lo, hi = zip(*(ci_band(m, a, b) for a, b in zip(mean, ci, strict=True)), strict=True)
            ax.fill_between(j, lo, hi, alpha=0.2, color=line.get_color())
            # A point of one seed has no interval: its band would shrink to the mean and read
            # as certainty (a grid grown with fewer seeds for its new points), so it is ringed.
            ones = [(a, b) for a, b, k in zip(j, mean, n, strict=True) if k == 1]
            if ones:
                xs1, ys1 = zip(*ones, strict=True)
                ax.scatter(xs1, ys1, s=90, facecolors="none", edgecolors=line.get_color(), zorder=3)
                single += len(ones)
            drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xticks(xs, xa["cases"])
        ax.set_xlabel(xa["name"])
        ax.set_ylabel(m)
        ringed = "; ringed: one seed, no interval" if single else ""
        ax.set_title(f"{m}: mean and 95 % confidence interval over seeds{ringed}", fontsize=10)
        ax.grid(alpha=0.3)
        if drawn > 1:
            _legend_outside(ax, ncol=1 if drawn <= 20 else 2)
        out.append(_img(_png(fig), f"{m} along {xa['name']}"))
    return out


def bin_means(points: dict[float, float], span: float) -> tuple[float, list[float], list[float]]:
    """``points`` (time in s -> value) averaged over consecutive windows of one of BIN_WIDTHS,
    the narrowest that makes at most MAX_BINS windows over ``span`` seconds and holds at least
    one sampling interval: the width, each window's centre and its mean. A sample stamped
    ``t`` covers the interval that ends at ``t``, so the window ``(k·w, (k+1)·w]`` holds it;
    times are matched in integer nanoseconds, where 0.3 / 0.1 in floating point would put
    0.3 s into the next window."""
    t_ns = {t: round(t * 1e9) for t in points}
    stamps = sorted(set(t_ns.values()))
    step = min((b - a for a, b in itertools.pairwise(stamps)), default=0)
    width = next(
        (w for w in BIN_WIDTHS if span / w <= MAX_BINS and round(w * 1e9) >= step),
        BIN_WIDTHS[-1],
    )
    w_ns = round(width * 1e9)
    bins: dict[int, list[float]] = {}
    for t, v in points.items():
        bins.setdefault(max(t_ns[t] - 1, 0) // w_ns, []).append(v)
    ks = sorted(bins)
    return width, [(k + 0.5) * width for k in ks], [statistics.fmean(bins[k]) for k in ks]


def _series(root: Path, d: _Data, run_ids: Sequence[str] | None) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pyarrow as pa
    import pyarrow.parquet as pq

    if run_ids:
        chosen = list(run_ids)
    else:
        # a few runs spread over the grid: first, middle and last in grid order
        ordered = sorted(d.ok, key=lambda r: (_order(d, r), r["seed"]))
        idx = sorted({0, len(ordered) // 2, len(ordered) - 1})[:MAX_SERIES]
        chosen = [ordered[i]["run_id"] for i in idx]
    out = []
    by_id = {r["run_id"]: r for r in d.ok}
    for rid in chosen:
        path = root / "runs" / rid / "timeseries.parquet"
        if not path.exists():
            continue
        try:
            ts = pq.read_table(path, columns=["t", "flow", "throughput_bps"]).to_pydict()
        except (OSError, pa.ArrowException) as e:
            # a run's file damaged after the sweep stored it: name it, not a traceback
            raise ReportError(f"{path}: not a readable Parquet file ({e})") from None
        summary = read_summary(root / "runs" / rid, ReportError)
        labels = {f["id"]: f.get("label") or f["protocol"] for f in summary.get("flows", [])}
        groups: dict[str, dict[float, list[float]]] = {}
        for t, f, v in zip(ts["t"], ts["flow"], ts["throughput_bps"], strict=True):
            if v is not None:
                groups.setdefault(labels.get(f, "?"), {}).setdefault(t, []).append(v)
        fig, ax = plt.subplots(figsize=(6.4, 3.0))
        span = max((t for pts in groups.values() for t in pts), default=0.0)
        width = BIN_WIDTHS[0]
        for label, pts in sorted(groups.items()):
            per_t = {t: statistics.fmean(vs) / 1e6 for t, vs in pts.items()}
            width, xs, ys = bin_means(per_t, span)
            ax.plot(xs, ys, linewidth=1, label=f"{label} (mean)")
        r = by_id[rid]
        where = ", ".join(f"{a['name']}={r.get(a['column'])}" for a in d.axes)
        ax.set_title(f"run {rid}: {where}, seed {r['seed']}", fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"throughput per flow (Mb/s),\n{width:g} s means", fontsize=9)
        ax.grid(alpha=0.3)
        _legend_outside(ax)
        out.append(_img(_png(fig), f"time series of run {rid}"))
    return out


def _order(d: _Data, r: dict[str, Any]) -> tuple[int, ...]:
    out = []
    for a in d.axes:
        v = str(r.get(a["column"]))
        out.append(a["cases"].index(v) if v in a["cases"] else len(a["cases"]))
    return tuple(out)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
figure { display: inline-block; margin: 0.5em; } img { max-width: 100%; }
.error { color: #a00; white-space: pre-wrap; text-align: left; }
"""

# Marks, once the page has loaded, how many figures the browser decoded (the headless-browser
# test reads the attribute from the rendered DOM, which checks the embedded PNGs, not only the
# HTML text) and tells the reader only when some could not be shown.
_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img');
  var ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  if (ok < imgs.length) {
    document.getElementById('render-check').textContent =
      (imgs.length - ok) + ' of ' + imgs.length + ' figures could not be shown';
  }
  document.body.setAttribute('data-figures-decoded', ok);
});
"""


def render(
    root: Path, metrics: Sequence[str] | None = None, runs: Sequence[str] | None = None
) -> str:
    """The report of the sweep in ``root`` as an HTML string."""
    d = _Data(root, metrics, runs)
    m = d.meta
    info = [
        ("scenario", m.get("scenario", "")),
        ("overrides for every point", " ".join(m.get("set", [])) or "–"),
        ("seeds", ", ".join(map(str, m.get("seeds", [])))),
        ("runs finished", len(d.ok)),
        ("runs failed", len(d.failed)),
        (
            "simulated / wall seconds (sum)",
            f"{sum(r.get('sim_seconds') or 0 for r in d.ok):.0f} / "
            f"{sum(r.get('wall_seconds') or 0 for r in d.ok):.2f}",
        ),
    ] + [(f"axis {a['name']}", ", ".join(a["cases"])) for a in d.axes]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>tfcc sweep report: {html.escape(str(m.get('scenario', '')))}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Sweep report: {html.escape(Path(str(m.get('scenario', ''))).name)}</h1>",
        "<p id='render-check' class='error'></p>",
        "<h2>Sweep</h2>",
        _table(["", ""], info, "info"),
        "<h2>Results per grid point</h2>",
        "<p>Mean over seeds and half-width of the 95 % confidence interval (Student's t).</p>",
        _points_table(d),
    ]
    maps = _heatmaps(d)
    if maps:
        parts += [
            f"<h2>Heat maps: {html.escape(d.axes[0]['name'])} × "
            f"{html.escape(d.axes[1]['name'])}</h2>",
            "<p>Mean over seeds; for θ (TCP's share) 0.5 is fair, blue favours TCP, "
            "red the other protocol (cf. 002 Fig. 4.3).</p>",
            *maps,
        ]
    lines = _lines(d)
    if lines:
        parts += ["<h2>Metrics with 95 % confidence intervals</h2>", *lines]
    series = _series(root, d, runs)
    if series:
        parts += ["<h2>Time series of chosen runs</h2>", *series]
    if d.failed:
        rows = [
            [r["run_id"], *(r.get(a["column"]) for a in d.axes), r.get("seed"), r.get("error")]
            for r in d.failed
        ]
        parts += [
            "<h2>Failed points</h2>",
            _table(["run", *(a["name"] for a in d.axes), "seed", "error"], rows, "failed"),
        ]
    parts += [f"<script>{_SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts)


def write(
    root: Path | str,
    out: Path | str | None = None,
    metrics: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
) -> Path:
    """Write the report (default ``root/report.html``) atomically; returns its path. A place
    that cannot be written is refused before the rendering, which takes seconds."""
    from tfcc import store

    store.meta(root)  # not a sweep directory: that first
    name = f"--out {out}" if out is not None else None
    out = Path(out) if out is not None else Path(root) / "report.html"
    name = name or str(out)
    if out.is_dir():
        raise ReportError(f"{name}: is a directory; give the HTML file's path")
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_text("")
    except OSError as e:
        raise ReportError(f"{name}: cannot write the report ({e.strerror})") from None
    try:
        text = render(Path(root), metrics, runs)
        tmp.write_text(text)
        tmp.rename(out)
    except OSError as e:
        raise ReportError(f"{name}: cannot write the report ({e.strerror})") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return out
