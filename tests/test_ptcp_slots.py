"""ptcp_slots.parquet: PTCP's evaluation and control slots out of summary.json, written only for
runs with PTCP flows, the same from ``tfcc run``, ``run_scenario`` and a sweep's remote
writer, and queryable from the results store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from pair_scenario import PAIR
from tfcc import _core, store
from tfcc import sweep as sw
from tfcc.metrics import RunResult, slot_success_pct
from tfcc.run import OutputError, run, write_run

#: A lone PTCP flow and a two-member aggregate against three Reno flows, 4 s measured from 1 s;
#: 8 Mb/s is met in some evaluation slots and missed in others.
PTCP = """\
name = "ptcp-slots"
duration = "4s"
measure_from = "1s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "20Mbps", delay = "10ms", queue = "droptail", limit = 40 }
[[flows]]
protocol = "ptcp"
params = { bw = "8Mbps", e = 8, s_init = 4 }
[[flows]]
protocol = "ptcp"
count = 2
params = { bw = "8Mbps", e = 8, s_init = 4, group = "g" }
[[flows]]
protocol = "tcp-reno"
count = 3
"""

COLUMNS = [
    "flow",
    "kind",
    "start_s",
    "end_s",
    "throughput_bps",
    "met",
    "fast_retransmits",
    "timeouts",
    "s",
    "target_bps",
    "regime",
    "bound_by",
    "k_bw_acks",
    "k_max_acks",
    "k_min_acks",
    "k_min_over_k_max",
]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("ptcp") / "ptcp.toml"
    p.write_text(PTCP)
    return p


def test_the_file_holds_every_slot_and_the_summary_its_counts(
    scenario: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = run(scenario, out, plots=False)
    table = pq.read_table(out / "ptcp_slots.parquet")
    assert table.column_names == COLUMNS
    rows = table.to_pylist()
    mixed = False
    for f in summary["flows"]:
        mine = [r for r in rows if r["flow"] == f["id"]]
        if f["protocol"] != "ptcp":
            assert "ptcp" not in f and not mine
            continue
        p = f["ptcp"]
        assert set(p) == {"bw_bps", "estimator", "measurements", "slots", "slots_met", "s_changes"}
        ev = [r for r in mine if r["kind"] == "eval"]
        ct = [r for r in mine if r["kind"] == "ctrl"]
        assert len(ev) + len(ct) == len(mine) and ev and ct
        # evaluation slots: met is throughput ≥ bw; control slots: no met, their own fields
        assert all(r["met"] == (r["throughput_bps"] >= p["bw_bps"]) for r in ev)
        assert all(r["s"] is None and r["regime"] is None for r in ev)
        assert all(r["met"] is None and r["s"] >= 1 and r["regime"] in ("eq3", "eq4") for r in ct)
        # in the order they ended, each starting where the previous one ended
        for slots in (ev, ct):
            assert all(a["end_s"] == b["start_s"] for a, b in zip(slots, slots[1:], strict=False))
        window = [r for r in ev if r["start_s"] >= summary["measure_from_s"]]
        met = sum(1 for r in window if r["met"])
        assert (p["slots"], p["slots_met"]) == (len(window), met)
        mixed |= 0 < met < len(window)
        # the claims' metric reads the file's rows: the summary's share, skip = 0
        r = RunResult(summary, ptcp_slots=table.to_pydict())
        assert slot_success_pct(r, flow=f["id"]) == pytest.approx(100 * met / len(window))
    assert mixed
    member = [[(r["start_s"], r["throughput_bps"]) for r in rows if r["flow"] == i] for i in (1, 2)]
    assert member[0] == member[1], "the aggregate's members report its slots"


def test_memory_and_file_agree_and_a_remote_write_keeps_the_slots(
    scenario: Path, tmp_path: Path
) -> None:
    res = _core.run_scenario(str(scenario))
    out = tmp_path / "out"
    run(scenario, out, plots=False)
    on_disk = pq.read_table(out / "ptcp_slots.parquet").to_pydict()
    assert res["ptcp_slots"] == on_disk
    # a sweep's driver writes a remote worker's run from these (tfcc.run.write_run)
    again = tmp_path / "again"
    write_run(
        again,
        res["summary"],
        res["flow_series"],
        res["link_series"],
        plots=False,
        ptcp_slots=res["ptcp_slots"],
    )
    assert pq.read_table(again / "ptcp_slots.parquet").to_pydict() == on_disk
    # the slots left out: refused, nothing written (the summary no longer lists them)
    lost = tmp_path / "lost"
    with pytest.raises(OutputError, match="no PTCP slots were given"):
        write_run(lost, res["summary"], res["flow_series"], res["link_series"], plots=False)
    assert not lost.exists()
    # a slot kind the simulator does not write is named with its row, and nothing written
    # (before: any string was written into the file's kind column as given)
    bogus = tmp_path / "bogus"
    slots = dict(res["ptcp_slots"])
    slots["kind"] = [*slots["kind"][:3], "evaluation", *slots["kind"][4:]]
    with pytest.raises(
        OutputError,
        match=r'ptcp_slots row 3: kind "evaluation" is not a value the simulator writes '
        r"\(eval or ctrl\)",
    ):
        write_run(
            bogus,
            res["summary"],
            res["flow_series"],
            res["link_series"],
            plots=False,
            ptcp_slots=slots,
        )
    assert not bogus.exists()


def test_a_run_without_ptcp_writes_no_slots(tmp_path: Path) -> None:
    scen = tmp_path / "pair.toml"
    scen.write_text(PAIR)
    out = tmp_path / "out"
    run(scen, out, plots=False)
    assert not (out / "ptcp_slots.parquet").exists()
    assert (out / "summary.json").exists()
    assert "ptcp_slots" not in _core.run_scenario(str(scen))


class _Remote(sw.Backend):
    """Workers that share no files with the driver (a Dask cluster's): the driver writes each
    run from the results the worker returns."""

    shares_files = False

    def run(self, tasks: Sequence[sw.Task]) -> Iterator[dict[str, Any]]:
        for t in tasks:
            yield sw.execute(t)


@pytest.mark.parametrize("remote", [False, True])
def test_the_store_queries_the_slots_of_every_run(
    scenario: Path, tmp_path: Path, remote: bool
) -> None:
    scen = tmp_path / "ptcp.toml"
    scen.write_text(PTCP + '[sweep]\ngrid = { "flows.0.params.bw" = ["4Mbps", "8Mbps"] }\n')
    out = tmp_path / "out"
    backend = _Remote() if remote else None
    assert sw.run(sw.load(scen), out, plots=False, backend=backend).ran == 2
    q = store.query(
        out,
        "SELECT flows_0_params_bw AS bw, kind, count(*) AS n, count(met) AS judged, "
        "min(seed) AS seed FROM ptcp_slots WHERE flow = 0 GROUP BY ALL ORDER BY ALL",
    )
    rows = q.rows()
    assert [(bw, kind) for bw, kind, *_ in rows] == [
        ("4Mbps", "ctrl"),
        ("4Mbps", "eval"),
        ("8Mbps", "ctrl"),
        ("8Mbps", "eval"),
    ]
    for _bw, kind, n, judged, seed in rows:
        assert n > 0 and seed is not None
        assert judged == (n if kind == "eval" else 0)
    # each run's rows are its file's
    for d in (out / "runs").iterdir():
        n = pq.read_table(d / "ptcp_slots.parquet").num_rows
        sql = f"SELECT count(*) FROM ptcp_slots WHERE run_id = '{d.name}'"
        assert store.query(out, sql).item() == n


def _schema(root: Path, view: str) -> list[tuple[str, str]]:
    return store.query(root, f"DESCRIBE {view}").select("column_name", "column_type").rows()


def test_a_sweep_without_slots_has_the_views_columns_all_the_same(tmp_path: Path) -> None:
    # Before: with no ptcp_slots.parquet in any run the view had only run_id and seed, so
    # `SELECT kind, count(*) FROM ptcp_slots GROUP BY kind` failed on it ("Referenced column
    # kind not found").
    grid = '[sweep]\ngrid = { "topology.bottleneck.rate" = ["2Mbps", "4Mbps"] }\n'
    roots = {}
    for name, text in (("ptcp", PTCP), ("pair", PAIR)):
        scen = tmp_path / f"{name}.toml"
        scen.write_text(text + grid)
        roots[name] = tmp_path / name
        assert sw.run(sw.load(scen), roots[name], plots=False).ran == 2
    assert not list(roots["pair"].glob("runs/*/ptcp_slots.parquet"))
    assert _schema(roots["pair"], "ptcp_slots") == _schema(roots["ptcp"], "ptcp_slots")
    sql = "SELECT kind, count(*) AS n FROM ptcp_slots GROUP BY kind"
    assert store.query(roots["pair"], sql).is_empty()
    # the columns a view takes when no run has the file are the files' own
    for view in ("ptcp_slots", "timeseries"):
        d = next(roots["ptcp"].glob(f"runs/*/{view}.parquet"))
        con = duckdb.connect()
        have = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{d}')").fetchall()
        assert [(c, t) for c, t, *_ in have] == list(store.PER_RUN[view].items())
