"""The run output contract through the Python API (``tfcc.run.run``, the same Rust code as
``tfcc run``): complete outputs, atomic replacement, the schema readers see, clear errors for
unusable directories. Write failures half-way are tested in Rust (tfcc-run ``output``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tfcc import OutputError, _core
from tfcc.run import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "dumbbell-cbr.toml"
SHORT = ["duration=2s", "measure_from=0.5s", "events.0.at=1s"]


def test_outputs_land_complete_and_replace_an_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = run(EXAMPLE, out, overrides=SHORT)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == {**summary, "wall_seconds": on_disk["wall_seconds"]}
    assert {"throughput.png", "window.png", "queue.png"} <= {p.name for p in out.iterdir()}
    run(EXAMPLE, out, overrides=[*SHORT, "seed=7"], plots=False)
    assert json.loads((out / "summary.json").read_text())["seed"] == 7
    assert not (out / "throughput.png").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporaries left behind


def test_parquet_columns_have_the_documented_types(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(EXAMPLE, out, overrides=SHORT, plots=False)
    flows = pq.read_table(out / "timeseries.parquet")
    assert flows.schema.field("flow").type == pa.int64()
    assert flows.schema.field("throughput_bps").type == pa.float64()
    assert flows.schema.field("cwnd").nullable
    # CBR flows have a rate and no window: the column holds nulls, not NaN.
    assert set(flows.column("cwnd").to_pylist()) == {None}
    links = pq.read_table(out / "queues.parquet")
    assert links.schema.field("link").type == pa.string()
    assert set(links.column("link").to_pylist()) == {"bottleneck", "bottleneck-rev"}
    series = _core.run_scenario(str(EXAMPLE), SHORT)["flow_series"]
    assert flows.column("throughput_bps").to_pylist() == series["throughput_bps"]


def test_a_video_flow_writes_frames_parquet_and_other_runs_do_not(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(EXAMPLE, out, overrides=SHORT, plots=False)
    assert not (out / "frames.parquet").exists()
    vic = ROOT / "scenarios" / "002-r2-vic-cwnd.toml"
    run(vic, out, overrides=["duration=3s", "measure_from=1s"], plots=False)
    frames = pq.read_table(out / "frames.parquet")
    names = ["flow", "frame", "t", "grabbed", "q", "bytes", "packets", "delivered", "complete_s"]
    assert frames.schema.names == [*names, "sbuf_bytes"]
    assert frames.schema.field("q").type == pa.int64() and frames.schema.field("q").nullable
    assert frames.schema.field("complete_s").type == pa.float64()
    rows = frames.to_pylist()
    assert len(rows) == 90  # 3 s at 30 fps
    assert [r["frame"] for r in rows] == list(range(90))
    assert all(r["delivered"] <= r["packets"] for r in rows)
    # Algorithm 5 is off in R2: every grabbed frame is at q = 10, a suspended one has none.
    assert {r["q"] for r in rows if r["grabbed"]} == {10}
    assert all(r["q"] is None and r["bytes"] == 0 for r in rows if not r["grabbed"])
    assert any(r["complete_s"] is not None for r in rows)
    # TFWC reports its send buffer: what Algorithm 4 read when each frame came due.
    assert frames.schema.field("sbuf_bytes").type == pa.int64()
    assert all(r["sbuf_bytes"] is not None and r["sbuf_bytes"] >= 0 for r in rows)


def test_frames_written_from_python_series_match_tfcc_run(tmp_path: Path) -> None:
    # A sweep on a remote cluster writes each run from run_scenario's series (tfcc.run.write_run).
    from tfcc.run import write_run

    vic = ROOT / "scenarios" / "002-r2-vic-cwnd.toml"
    sets = ["duration=3s", "measure_from=1s"]
    run(vic, tmp_path / "direct", overrides=sets, plots=False)
    res = _core.run_scenario(str(vic), sets)
    write_run(
        tmp_path / "remote",
        res["summary"],
        res["flow_series"],
        res["link_series"],
        plots=False,
        frame_series=res["frame_series"],
    )
    a = pq.read_table(tmp_path / "direct" / "frames.parquet")
    b = pq.read_table(tmp_path / "remote" / "frames.parquet")
    assert a.equals(b)
    assert "frame_series" not in _core.run_scenario(str(EXAMPLE), SHORT)


def test_an_unwritable_directory_is_refused_before_running(tmp_path: Path) -> None:
    # /proc refuses new directories even to root; a read-only directory does so for other users.
    with pytest.raises(OutputError, match="not writable"):
        _core.check_writable(Path("/proc/tfcc-test/run"))
    with pytest.raises(OutputError, match="/proc/tfcc-test/run"):
        run(EXAMPLE, Path("/proc/tfcc-test/run"))
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(OutputError, match="not writable"):
            _core.check_writable(ro / "run")


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        _core.check_writable(tmp_path / "f" / "run")
    with pytest.raises(OutputError, match="exists and is not a directory"):
        _core.check_writable(tmp_path / "f")


def test_a_trace_is_written_as_documented_and_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run(EXAMPLE, out, overrides=SHORT, plots=False)
    assert not (out / "trace.parquet").exists()
    traced = [*SHORT, 'trace.links=["bottleneck"]', "trace.from=1.5s"]
    run(EXAMPLE, out, overrides=traced, plots=False)
    t = pq.read_table(out / "trace.parquet")
    assert t.schema.names == [
        "t",
        "event",
        "reason",
        "link",
        "flow",
        "direction",
        "kind",
        "seq",
        "size",
    ]
    assert t.schema.field("seq").type == pa.int64() and t.schema.field("seq").nullable
    assert t.schema.field("reason").nullable
    rows = t.to_pylist()
    assert rows and all(r["link"] == "bottleneck" and 1.5 <= r["t"] < 2.0 for r in rows)
    assert {r["event"] for r in rows} == {"+", "-", "d", "r"}
    assert all((r["reason"] is None) == (r["event"] != "d") for r in rows)
    # The in-memory API returns the same columns, and a sweep's writer takes them back.
    mem = _core.run_scenario(str(EXAMPLE), traced)
    assert mem["trace"]["seq"] == t.column("seq").to_pylist()
    assert "trace" not in _core.run_scenario(str(EXAMPLE), SHORT)
    from tfcc.run import write_run

    again = tmp_path / "again"
    write_run(
        again,
        mem["summary"],
        mem["flow_series"],
        mem["link_series"],
        plots=False,
        trace=mem["trace"],
    )
    assert pq.read_table(again / "trace.parquet").equals(t)
    # A value the simulator never writes is named, and nothing is written.
    bad = dict(mem["trace"], kind=["tcp"] + mem["trace"]["kind"][1:])
    with pytest.raises(OutputError, match=r"trace row 0: kind \"tcp\""):
        write_run(
            tmp_path / "bad",
            mem["summary"],
            mem["flow_series"],
            mem["link_series"],
            plots=False,
            trace=bad,
        )
    assert not (tmp_path / "bad").exists()


def test_the_trace_recipe_of_the_docs_runs_and_pairs_every_packet(tmp_path: Path) -> None:
    """docs/scenarios.md's polars recipe (queueing delay from `+`/`r` pairs, TCP segments
    dropped more than once) on TCP and TFRC through a RED bottleneck that goes down for 1 s."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "20s"\nmeasure_from = "5s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "4Mbps", delay = "20ms", queue = "red", limit = 40 }\n'
        '[[flows]]\nprotocol = "tcp-sack"\ncount = 2\n[[flows]]\nprotocol = "tfrc"\n'
        '[[events]]\nat = "10s"\nlink = "bottleneck"\nup = false\n'
        '[[events]]\nat = "11s"\nlink = "bottleneck"\nup = true\n'
        '[trace]\nlinks = ["bottleneck"]\n'
    )
    out = tmp_path / "out" / "t"
    summary = run(scenario, out, plots=False)
    text = (ROOT / "docs" / "scenarios.md").read_text()
    start = text.index("```python\nimport polars as pl\nt = pl.read_parquet(") + len("```python\n")
    code = text[start : text.index("```", start)].replace("out/t/", f"{out}/")
    ns: dict = {}
    exec(code, ns)
    q, twice, t = ns["q"], ns["twice"], ns["t"]
    plus = t.filter(event="+").height
    assert (
        plus - q.height <= 40 + 5
    )  # unpaired: what is still in the 40-packet queue or on the wire
    assert q["qdelay"].min() > -1e-9
    # The 1 s outage: a packet queued through it waited about that long.
    assert 0.9 < q["qdelay"].max() < 1.2
    assert twice.height > 0 and all(len(r) >= 2 for r in twice["reason"])
    # The summary counts the window: the rows at t >= measure_from add up to it.
    (b,) = [x for x in summary["links"] if x["name"] == "bottleneck"]
    w = t.filter(t["t"] >= 5.0)
    assert w.filter(event="+").height + w.filter(event="d").height == b["arrivals"]
    assert w.filter(event="d", reason="early").height == b["early_drops"] > 0
    assert w.filter(event="d", reason="down").height == b["down_drops"] > 0
