"""Where the command line prints its tables.

In a terminal rich folds a table to the terminal's width. Into a pipe or a file rich assumes
80 columns, which folded a wide `tfcc query` result's headers to 2-3 characters a line and cut
`tfcc demo`'s tables off mid-column in a log; there a table keeps its natural width instead.
"""

from __future__ import annotations

import shutil
import sys

from rich.console import Console


def table_console(min_width: int = 0) -> Console:
    """A console for stdout: the terminal's width (at least ``min_width``), or the table's own
    width when stdout is not a terminal."""
    if not sys.stdout.isatty():
        return Console(width=100_000)
    return Console(width=max(min_width, shutil.get_terminal_size().columns))
