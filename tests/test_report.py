"""``tfcc report``: the HTML report of a sweep, rendered in a real headless Chromium.

Chromium comes from scripts/install-chromium.sh (``make py-test`` runs it); a missing browser
fails these tests unless TFCC_SKIP_CHROMIUM=1 says the machine deliberately has none.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pair_scenario import PAIR
from tfcc import report, store
from tfcc import sweep as sw

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

SCENARIO = (
    PAIR
    + """[sweep]
seeds = 3
[sweep.grid]
bandwidth = { keys = ["topology.bottleneck.rate"], values = ["1Mbps", "2Mbps", "4Mbps"] }
sources = { keys = ["flows.0.count", "flows.1.count"], values = [1, 2] }
[sweep.grid.protocol.cases]
tfwc = { "flows.1.protocol" = "tfwc" }
tfrc = { "flows.1.protocol" = "tfrc" }
"""
)


def test_the_confidence_interval_is_students_t() -> None:
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303 → half-width 4.303/√3
    m, ci = report.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0
    assert ci == pytest.approx(4.303 / 3**0.5)
    assert report.mean_ci([5.0]) == (5.0, 0.0)


def test_bounded_metrics_keep_their_confidence_band_in_range() -> None:
    # θ 0.9 ± 0.3 over three seeds would reach 1.2; Jain's index cannot leave [0, 1] either.
    assert report.ci_band("fairness_theta", 0.9, 0.3) == (pytest.approx(0.6), 1.0)
    assert report.ci_band("jain_index", 0.05, 0.1) == (0.0, pytest.approx(0.15))
    # An unbounded metric keeps the interval as computed.
    assert report.ci_band("throughput_bps", 5.0, 7.0) == (-2.0, 12.0)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("report")
    scen = d / "map.toml"
    scen.write_text(SCENARIO)
    out = d / "out"
    outcome = sw.run(sw.load(scen), out, plots=False)
    assert (outcome.ran, outcome.failed) == (3 * 2 * 2 * 3, 0)
    return out


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        if os.environ.get("TFCC_SKIP_CHROMIUM") == "1":
            pytest.skip("Chromium not installed and TFCC_SKIP_CHROMIUM=1")
        pytest.fail("Chromium is not installed: run scripts/install-chromium.sh", pytrace=False)
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_report_renders_in_chromium_with_every_figure(swept: Path, tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "report", str(swept)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    html = swept / "report.html"
    assert r.stdout.strip() == f"report: {html}"
    text = html.read_text()
    assert 'src="http' not in text and 'href="http' not in text  # self-contained
    n_img = text.count("<img ")
    # 2 metrics × 2 protocols heat maps + 2 metric lines + 3 time series
    assert n_img == 2 * 2 + 2 + 3

    profile = tmp_path / "profile"
    dom = chromium(f"--user-data-dir={profile}", "--dump-dom", html.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the page's own script counted the PNGs the browser decoded, after load
    assert f'data-figures-decoded="{n_img}"' in dom.stdout
    assert '<p id="render-check" class="error"></p>' in dom.stdout, "a figure could not be shown"
    # the per-point table holds every grid point with the mean θ over seeds that SQL gives
    q = store.query(
        swept,
        "SELECT bandwidth, sources, protocol, avg(fairness_theta) AS t FROM runs GROUP BY ALL",
    )
    assert q.height == 12
    cells = re.findall(
        r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>3</td>"
        r"<td>([^<]*)</td>",
        dom.stdout,
    )
    assert len(cells) == 12
    got = {(b, s, p): float(t) for b, s, p, t in cells}
    for b, s, p, t in q.iter_rows():
        assert got[(b, s, p)] == pytest.approx(t, rel=1e-2)

    shot = tmp_path / "shot.png"
    r = chromium(
        f"--user-data-dir={profile}",
        "--window-size=1200,2000",
        f"--screenshot={shot}",
        html.as_uri(),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    from PIL import Image

    img = Image.open(shot).convert("RGB")
    assert img.size == (1200, 2000)
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200  # figures, not a blank page


def test_report_errors_name_what_is_wrong(swept: Path, tmp_path: Path) -> None:
    with pytest.raises(report.ReportError, match="--metric nope"):
        report.render(swept, metrics=["nope"])
    with pytest.raises(report.ReportError, match="--run x"):
        report.render(swept, runs=["x"])
    with pytest.raises(store.StoreError, match="not a sweep directory"):
        report.render(tmp_path)
    # a typo in the path said "not a sweep directory (no sweep.json)" of a path that is nothing
    with pytest.raises(store.StoreError, match="typo: no such directory"):
        report.render(tmp_path / "typo")


def test_damaged_store_or_run_files_are_one_message(swept: Path, tmp_path: Path) -> None:
    # Both were tracebacks: DuckDB's "too small to be a Parquet file" from the views, and the
    # JSON parser's from a run's summary read for the time-series figures.
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(swept, copy)
    summaries = sorted((copy / "runs").glob("*/summary.json"))
    for s in summaries:
        s.write_text("{")
    with pytest.raises(report.ReportError, match=r"summary\.json: cannot read it \(Expecting"):
        report.render(copy)
    part = sorted((copy / "store" / "runs").glob("part-*.parquet"))[0]
    part.write_bytes(b"garbage")
    with pytest.raises(store.StoreError, match=r"the results store cannot be read \(.*Parquet"):
        report.render(copy)
    with pytest.raises(store.StoreError, match="the results store cannot be read"):
        store.query(copy, "SELECT 1")


def test_an_out_that_cannot_be_written_is_one_message(swept: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for out, why in ((blocker / "r.html", "cannot write the report"), (tmp_path, "is a directory")):
        r = subprocess.run(
            [sys.executable, "-m", "tfcc.cli", "report", str(swept), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith(f"error: --out {out}: {why}"), r.stderr
        assert "Traceback" not in r.stderr
    assert not list(tmp_path.glob(".*.tmp"))


def test_an_unwritable_place_is_refused_before_rendering(
    swept: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ux3: the report was rendered (8 s for a 36-run sweep) and only then found unwritable;
    # and the message said "--out" of a path the user had not given
    def no_render(*args: object) -> str:
        raise AssertionError("rendered before checking the output")

    monkeypatch.setattr(report, "render", no_render)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(report.ReportError, match="cannot write the report"):
        report.write(swept, blocker / "r.html")
    monkeypatch.undo()
    # a failed render leaves no temporary file behind
    with pytest.raises(report.ReportError, match="--metric nope"):
        report.write(swept, tmp_path / "r.html", metrics=["nope"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_heat_maps_of_bounded_metrics_span_their_whole_range(
    swept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ux3: Jain's index was coloured on the data's own range, so 0.986 against 0.994 looked
    # like opposite ends of the scale; θ already had a fixed [0, 1]
    from matplotlib.axes import Axes

    seen: list[tuple[object, object]] = []
    imshow = Axes.imshow

    def spy(self: Axes, *args: object, **kwargs: object) -> object:
        seen.append((kwargs.get("vmin"), kwargs.get("vmax")))
        return imshow(self, *args, **kwargs)

    monkeypatch.setattr(Axes, "imshow", spy)
    report.render(swept, metrics=["jain_index", "fairness_theta"])
    assert seen and all(s == (0.0, 1.0) for s in seen), seen


@pytest.fixture(scope="module")
def many_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep whose CI figures hold 12 lines, as the fairness map's (4 source counts × 3
    protocols), one seed each: more lines than matplotlib has colours."""
    d = tmp_path_factory.mktemp("report-lines")
    scen = d / "lines.toml"
    scen.write_text(
        PAIR
        + """[sweep]
seeds = 1
[sweep.grid]
bandwidth = { keys = ["topology.bottleneck.rate"], values = ["1Mbps", "2Mbps"] }
sources = { keys = ["flows.0.count", "flows.1.count"], values = [1, 2, 3, 4] }
[sweep.grid.protocol.cases]
tfwc = { "flows.1.protocol" = "tfwc" }
tfrc = { "flows.1.protocol" = "tfrc" }
ttfwc = { "flows.1.protocol" = "ttfwc" }
"""
    )
    out = d / "out"
    outcome = sw.run(sw.load(scen), out, plots=False)
    assert (outcome.ran, outcome.failed) == (2 * 4 * 3, 0)
    return out


def _drawn_figures(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """Render the report of ``root`` and return, per figure, its lines' styles and whether its
    legend overlaps its axes (looked at just before the figure is saved and closed)."""
    seen: list[dict[str, object]] = []
    png = report._png

    def spy(fig: Any) -> str:
        fig.canvas.draw()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            styles = [(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in ax.lines]
            box = ax.get_window_extent()
            seen.append(
                {
                    "title": ax.get_title(),
                    "styles": styles,
                    "legend_over_axes": legend.get_window_extent().overlaps(box),
                }
            )
        return png(fig)

    monkeypatch.setattr(report, "_png", spy)
    report.render(root)
    return seen


def test_every_line_of_a_ci_figure_has_its_own_style(
    many_lines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With 12 lines the fairness map's θ and Jain figures drew "sources=8, protocol=tfwc" and
    # "sources=8, protocol=ttfwc(0.9)" in the colour and marker of the first two lines.
    figures = [f for f in _drawn_figures(many_lines, monkeypatch) if "confidence" in f["title"]]
    assert len(figures) == 2, figures
    for f in figures:
        styles = f["styles"]
        assert len(styles) == 12 and len(set(styles)) == 12, f


def test_a_point_of_one_seed_is_ringed_not_given_a_zero_width_band(
    many_lines: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # many_lines runs one seed a point: a band would collapse onto each mean and read as
    # certainty, so each of the 24 points (12 lines x 2 bandwidths) is ringed (a hollow scatter
    # marker) and the title says what a ring means.
    from matplotlib.collections import PathCollection

    rings: list[int] = []
    png = report._png

    def spy(fig: Any) -> str:
        for ax in fig.axes:
            if "confidence" in ax.get_title():
                assert ax.get_title().endswith("; ringed: one seed, no interval"), ax.get_title()
                hollow = [
                    c
                    for c in ax.collections
                    if isinstance(c, PathCollection) and c.get_facecolor().size == 0
                ]
                rings.append(sum(len(c.get_offsets()) for c in hollow))
        return png(fig)

    monkeypatch.setattr(report, "_png", spy)
    report.render(many_lines)
    assert rings == [24, 24], rings


def test_legends_stay_off_the_data(many_lines: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Inside the axes, the CI figures' two-column legend covered the points below θ = 0.37.
    figures = _drawn_figures(many_lines, monkeypatch)
    assert any("confidence" in f["title"] for f in figures)
    assert any(str(f["title"]).startswith("run ") for f in figures)
    assert not [f["title"] for f in figures if f["legend_over_axes"]]


def test_time_series_are_window_means_of_at_most_max_bins_points() -> None:
    # 300 s sampled every 100 ms, value = t: 1 s windows, 300 of them, each the mean of its
    # ten samples (0.1 ... 1.0 s in the first: 0.55). 0.3 s sits in the first window although
    # 0.3 / 0.1 is 2.9999999999999996 in floating point and 0.30000000000000004 / 0.1 is 3.0...04.
    times = [round(0.1 * k, 1) for k in range(1, 3001)] + [0.30000000000000004]
    points = {t: t for t in times}
    width, xs, ys = report.bin_means(points, 300.0)
    assert width == 1 and len(xs) == report.MAX_BINS == 300
    assert xs[:2] == [0.5, 1.5]
    assert ys[0] == pytest.approx(statistics.fmean([0.1 * k for k in range(1, 11)] + [0.3]))
    assert ys[-1] == pytest.approx(299.55)
    # a short run keeps its samples: one per 100 ms window
    width, xs, ys = report.bin_means({0.1: 1.0, 0.2: 3.0, 0.3: 2.0}, 0.3)
    assert (width, ys) == (0.1, [1.0, 3.0, 2.0])
    # samples every 1 s: windows of 1 s, each at the centre of the interval its sample covers
    width, xs, ys = report.bin_means({1.0: 1.0, 2.0: 3.0, 3.0: 2.0}, 3.0)
    assert (width, xs, ys) == (1, [0.5, 1.5, 2.5], [1.0, 3.0, 2.0])


def test_the_report_draws_a_long_run_as_window_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3 s sampled every 5 ms: 600 samples per flow, drawn as 30 means of 100 ms each
    scen = tmp_path / "fine.toml"
    scen.write_text(
        PAIR.replace('measure_from = "1s"', 'measure_from = "1s"\nsample_interval = "5ms"')
    )
    out = tmp_path / "out"
    assert sw.run(sw.load(scen), out, plots=False).ran == 1
    drawn: list[tuple[str, list[int]]] = []
    png = report._png

    def spy(fig: Any) -> str:
        for ax in fig.axes:
            drawn.append((ax.get_ylabel(), [len(ln.get_xdata()) for ln in ax.lines]))
        return png(fig)

    monkeypatch.setattr(report, "_png", spy)
    report.render(out)
    series = [(label, n) for label, n in drawn if label.startswith("throughput")]
    assert series == [("throughput per flow (Mb/s),\n0.1 s means", [30, 30])], drawn
