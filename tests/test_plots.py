"""The run plots drawn in Rust (``_core.plot_panels``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfcc import _core
from tfcc.fonts import font_path

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_panel_figure_is_a_png_of_the_asked_size(tmp_path: Path) -> None:
    out = tmp_path / "p.png"
    lines = [("a", [0.0, 1.0, 2.0], [1.0, 3.0, 2.0]), ("b", [0.0, 2.0], [0.5, 0.5])]
    _core.plot_panels(
        str(out),
        [{"ylabel": "y", "lines": lines}, {"ylabel": "z", "lines": []}],
        title="t",
        xlabel="x",
        width=400,
        height=300,
        font=font_path(),
    )
    data = out.read_bytes()
    assert data.startswith(PNG)
    # IHDR: width and height, big-endian, right after the signature and chunk header.
    assert int.from_bytes(data[16:20], "big") == 400
    assert int.from_bytes(data[20:24], "big") == 300


def test_the_last_time_label_is_not_cut_at_the_right_edge(tmp_path: Path) -> None:
    # The x axis ends on a labelled tick ("100.0" for a 100 s run), centred on the axis's end:
    # with an 8 px right margin the label ran into the image's edge and was cut to "100.(".
    from PIL import Image

    out = tmp_path / "p.png"
    xs = [0.1 * k for k in range(1001)]
    _core.plot_panels(
        str(out),
        [{"ylabel": "y", "lines": [("a", xs, [1.0] * len(xs))]}],
        title="t",
        xlabel="time (s)",
        width=880,
        height=300,
        font=font_path(),
    )
    img = Image.open(out).convert("L")
    w, h = img.size
    edge = [img.getpixel((x, y)) for x in range(w - 8, w) for y in range(h)]
    assert min(edge) > 200, "something drawn within 8 px of the right edge"


def _size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    ("n", "level", "grown"),
    [
        # low lines after a peak at the start: the legend in the plot's upper right corner
        (3, lambda j, x: 10.0 if x < 10 else j, (0, 0)),
        # one flow at the link's rate, along the top: in the lower right corner
        (1, lambda j, x: 10.0, (0, 0)),
        # one flow swinging from top to bottom every second, no corner free: beside the plot
        (1, lambda j, x: 10.0 * (int(x) % 2), (1, 0)),
        # 20 flows across the plot (fig4-7a): the legend in rows below it
        (20, lambda j, x: j, (0, 1)),
    ],
)
def test_a_legend_that_would_hide_lines_grows_the_image(
    tmp_path: Path, n: int, level, grown: tuple[int, int]
) -> None:
    out = tmp_path / "p.png"
    xs = [float(k) for k in range(101)]
    lines = [(f"{j} tcp-sack", xs, [float(level(j, x)) for x in xs]) for j in range(n)]
    _core.plot_panels(
        str(out),
        [{"ylabel": "y", "lines": lines}],
        title="t",
        xlabel="time (s)",
        width=880,
        height=440,
        font=font_path(),
    )
    w, h = _size(out)
    assert (w > 880, h > 440) == (bool(grown[0]), bool(grown[1])), (w, h)
    assert w >= 880 and h >= 440


def test_the_font_is_found_without_importing_matplotlib() -> None:
    path = font_path()
    assert path is not None and path.endswith(".ttf")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"width": 10}, "width and height"),
        ({"panels": [{"ylabel": "y", "lines": [("a", [0.0, 1.0], [1.0])]}]}, 'line "a"'),
    ],
)
def test_bad_plot_arguments_are_value_errors(tmp_path: Path, kwargs: dict, message: str) -> None:
    args = {"panels": [], "width": 400}
    args.update(kwargs)
    panels = args.pop("panels")
    with pytest.raises(ValueError, match=message):
        _core.plot_panels(str(tmp_path / "p.png"), panels, title="t", xlabel="x", **args)
