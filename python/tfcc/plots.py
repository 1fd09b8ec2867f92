"""Plot support: the font for the charts drawn in Rust.

The run plots (throughput, window or rate, queue over time) and the stacked-panel charts of
``tfcc._core.plot_panels`` are drawn with plotters in Rust, because matplotlib's import alone
costs several times what a small simulation takes and issue 4 counts outputs in the speed
comparison with ns-2. Their text needs a TrueType font file, found here.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path


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
