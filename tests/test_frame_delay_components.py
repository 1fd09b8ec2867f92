"""scripts/frame_delay_components.py: a frame's delay split into send buffer and path from a
packet trace, its match against frames.parquet, and its refusals."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "frame_delay_components.py"


def _module():
    spec = importlib.util.spec_from_file_location("frame_delay_components", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fdc")
    r = subprocess.run(
        [sys.executable, SCRIPT, out, "--senders", "tfwc,tfrc"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert "| tfwc | 1 |" in r.stdout and "| tfrc | 1 |" in r.stdout
    return out


@pytest.mark.parametrize("name", ["tfwc-s1", "tfrc-s1"])
def test_the_parts_add_up_to_the_delay_frames_parquet_records(runs: Path, name: str) -> None:
    run = runs / name
    parts = pl.read_csv(run / "frame_delays.csv")
    total = sum(parts[c].to_numpy() for c in _module().PARTS)
    assert np.allclose(total, parts["delay"].to_numpy(), atol=1e-9)
    # every whole frame video-quality scores (due in [5, 59) s), with its own delay
    frames = pl.read_parquet(run / "frames.parquet").filter(
        (pl.col("t") >= 5) & (pl.col("t") < 59) & pl.col("complete_s").is_not_null()
    )
    assert parts["frame"].to_list() == frames["frame"].to_list()
    want = (frames["complete_s"] - frames["t"]).to_numpy()
    assert np.allclose(parts["delay"].to_numpy(), want, atol=1e-12)
    # the path is the same for both senders: 39 + 0.5 ms of links and the last packet's
    # serialisation at 5 and 100 Mb/s (a TFRC packet with a frame's short tail is smaller)
    size = parts["last_packet_bytes"].to_numpy()
    want = 0.0395 + size * 8 * (1 / 5e6 + 1 / 100e6)
    assert np.allclose(parts["path"].to_numpy(), want, rtol=0, atol=1e-9)
    assert (parts["behind"] >= 0).all() and (parts["queue"] >= 0).all()


def test_facts_of_the_case_d_runs(runs: Path) -> None:
    res = json.loads((runs / "frame-delays.json").read_text())
    (tfwc,) = res["tfwc"]["runs"]
    (tfrc,) = res["tfrc"]["runs"]
    assert tfwc["retransmits"] == 0 and tfrc["retransmits"] == 0
    # Eq. 3.6 holds whenever data waits: no packet is held with the window open
    assert tfwc["window_samples_checked"] > 500
    assert tfwc["window_open_with_data_waiting"] == 0
    assert "window_samples_checked" not in tfrc
    # TFRC paces; TFWC's Ack clock sends trains at the bottleneck's 1.6 ms spacing
    assert tfrc["backlogged_gap_cv"] < 0.5 < 1.0 < tfwc["backlogged_gap_cv"]
    assert tfwc["backlogged_gaps_under_2ms"] > 0.5 and tfrc["backlogged_gaps_under_2ms"] == 0
    # TFRC's X is the equation's rate at its own p and R; the default TFWC floors W = 1/f(p)
    assert abs(tfrc["rate_over_equation"] - 1) < 1e-3
    assert 0.9 < tfwc["rate_over_equation"] < 0.99


def test_a_run_that_cannot_be_decomposed_is_refused(runs: Path, tmp_path: Path) -> None:
    mod = _module()
    bare = tmp_path / "bare"
    shutil.copytree(runs / "tfwc-s1", bare)
    (bare / "trace.parquet").unlink()
    with pytest.raises(mod.TraceError, match="no trace.parquet"):
        mod.components(bare)
    # a frames.parquet that does not match the packets the trace shows
    bad = tmp_path / "bad"
    shutil.copytree(runs / "tfwc-s1", bad)
    f = pl.read_parquet(bad / "frames.parquet")
    k = int(f.filter(pl.col("t") > 10)["frame"][0])
    f = f.with_columns(
        pl.when(pl.col("frame") == k).then(pl.col("packets") + 1).otherwise(pl.col("packets"))
    )
    f.write_parquet(bad / "frames.parquet")
    with pytest.raises(mod.TraceError, match=f"frame {k}: .* packets matched"):
        mod.components(bad)
    # the trace without the sender's reverse access link
    part = tmp_path / "part"
    shutil.copytree(runs / "tfwc-s1", part)
    t = pl.read_parquet(part / "trace.parquet")
    t.filter(pl.col("link") != "access-src-0-rev").write_parquet(part / "trace.parquet")
    with pytest.raises(mod.TraceError, match="no events of access-src-0-rev"):
        mod.components(part)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--senders", "tfwc,nope"], "unknown sender 'nope'"),
        (["--seeds", "1,x"], "--seeds: expected a count N, a range A-B or a list"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    r = subprocess.run(
        [sys.executable, SCRIPT, tmp_path / "o", *args], capture_output=True, text=True
    )
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o").exists()
