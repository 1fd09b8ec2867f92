"""The run output contract: atomic writes, clear errors for unusable directories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tfcc.output import OutputError, check_writable, write_run

SUMMARY = {
    "scenario": "t",
    "flows": [{"id": 0, "protocol": "cbr"}, {"id": 1, "protocol": "tcp-sack"}],
}
FLOWS = {
    "flow": [0, 1, 0, 1],
    "t": [0.1, 0.1, 0.2, 0.2],
    "throughput_bps": [1e6, 2e6, 1e6, 2e6],
    "cwnd": [None, 4.0, None, 5.0],
    "rate_bps": [1e6, None, 1e6, None],
}
LINKS = {"link": ["bottleneck", "bottleneck"], "t": [0.1, 0.2], "queue_pkts": [3.0, 4.0]}


def test_outputs_land_complete_and_replace_an_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(out, SUMMARY, FLOWS, LINKS)
    assert json.loads((out / "summary.json").read_text())["scenario"] == "t"
    table = pq.read_table(out / "timeseries.parquet")
    assert table.column("throughput_bps").to_pylist() == FLOWS["throughput_bps"]
    assert {"throughput.png", "window.png", "queue.png"} <= {p.name for p in out.iterdir()}
    write_run(out, {**SUMMARY, "scenario": "u"}, FLOWS, LINKS, plots=False)
    assert json.loads((out / "summary.json").read_text())["scenario"] == "u"
    assert not (out / "throughput.png").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporaries left behind


def test_a_failure_while_writing_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(Exception):  # noqa: B017 - any failure must clean up
        write_run(out, SUMMARY, {"flow": [0], "t": [0.1, 0.2]}, LINKS)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_directory_is_refused_before_running(tmp_path: Path) -> None:
    # /proc refuses new directories even to root; a read-only directory does so for other users.
    with pytest.raises(OutputError, match="not writable"):
        check_writable(Path("/proc/tfcc-test/run"))
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(OutputError, match="not writable"):
            check_writable(ro / "run")


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        check_writable(tmp_path / "f" / "run")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        check_writable(tmp_path / "f")
