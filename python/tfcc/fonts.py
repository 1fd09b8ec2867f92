"""The TrueType font for the text of the charts drawn in Rust (``tfcc run``'s plots and
``tfcc._core.plot_panels``): matplotlib's DejaVu Sans, found without importing matplotlib, else
Debian's copy. Kept free of heavy imports: ``tfcc run`` looks it up before starting."""

from __future__ import annotations

import os
import sys

_FOUND: list[str | None] = []


def font_path() -> str | None:
    """The font file's path; ``None`` draws the charts without text."""
    if not _FOUND:
        _FOUND.append(_find())
    return _FOUND[0]


def _find() -> str | None:
    # A walk over sys.path rather than importlib.util.find_spec, whose imports alone cost more
    # than the rest of `tfcc run`'s Python start-up.
    candidates = [
        os.path.join(p or ".", "matplotlib", "mpl-data", "fonts", "ttf", "DejaVuSans.ttf")
        for p in sys.path
    ]
    candidates.append("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None
