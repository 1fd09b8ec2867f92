"""The run output contract of DESIGN.md: ``summary.json``, ``timeseries.parquet``, PNG plots.

Results are written to a temporary directory beside the target and renamed into place at the
end, so an interrupted or failed run never leaves half-written results under the target name.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class OutputError(Exception):
    """The output directory cannot be used; the message names it and says why."""


def check_writable(out: Path) -> None:
    """Fail before a run starts if ``out`` cannot be created or replaced."""
    parent = out.resolve().parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"{out}: {probe} is not a directory")
    # Try it rather than ask os.access: root passes access checks on read-only filesystems.
    try:
        Path(tempfile.mkdtemp(prefix=".tfcc-probe.", dir=probe)).rmdir()
    except OSError as e:
        raise OutputError(f"{out}: the directory {probe} is not writable ({e.strerror})") from None
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory")


def write_run(
    out: Path,
    summary: Mapping[str, Any],
    flow_series: Mapping[str, Sequence[Any]],
    link_series: Mapping[str, Sequence[Any]],
    plots: bool = True,
) -> Path:
    """Write one run's outputs atomically into ``out`` (replacing an earlier run there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_writable(out)
    out.resolve().parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.resolve().parent))
    # mkdtemp makes the directory private (0700); the results are ordinary files.
    mask = os.umask(0)
    os.umask(mask)
    tmp.chmod(0o777 & ~mask)
    try:
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n")
        flows = pa.table(dict(flow_series))
        links = pa.table(dict(link_series))
        pq.write_table(flows, tmp / "timeseries.parquet")
        pq.write_table(links, tmp / "queues.parquet")
        if plots:
            from tfcc.plots import plot_run

            plot_run(tmp, summary, flows.to_pydict(), links.to_pydict())
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _replace_dir(new: Path, out: Path) -> None:
    """Rename ``new`` to ``out``; an existing ``out`` is moved aside first and removed after."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    new.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
