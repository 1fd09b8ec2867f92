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
