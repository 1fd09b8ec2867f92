"""``tfcc sweep`` and ``tfcc query``: the grid, the results store, failures, resuming after a
real SIGKILL, and the same sweep on a real dask.distributed LocalCluster."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interrupt import interrupt_when
from pair_scenario import PAIR
from tfcc import store
from tfcc import sweep as sw

SCENARIO = (
    PAIR
    + """[sweep]
seeds = 2
[sweep.grid]
"topology.bottleneck.rate" = ["1Mbps", "2Mbps"]
n = { keys = ["flows.0.count", "flows.1.count"], values = [1, 2] }
"""
)


#: The grid with points long enough (4000 simulated s, about 0.36 s of wall time each, 24 points
#: in about 4 s on two cores) that a SIGKILL after the first few finished lands mid-sweep; at
#: 20 s a point took about 25 ms and a fast machine finished all 24 before the signal.
LONG = SCENARIO.replace('duration = "3s"', 'duration = "4000s"')


def tfcc_cli(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("scen") / "pair.toml"
    p.write_text(SCENARIO)
    return p


@pytest.fixture(scope="module")
def swept(scenario: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file's [sweep] table run through the CLI: 2 rates × 2 sizes × 2 seeds."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    r = tfcc_cli("sweep", scenario, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "8 points (2 seeds): 8 ran, 0 failed, 0 were done before" in r.stdout
    return out


# --- the grid -----------------------------------------------------------------------------


def test_a_sweep_past_a_million_points_or_the_largest_seed_is_refused(scenario: Path) -> None:
    # Before: --seeds 1000000000 built a list of a billion seeds (killed for its memory) and
    # --seeds 2**64 was a Python OverflowError traceback.
    with pytest.raises(sw.SweepError, match=r"^--seeds: at most 1000000 seeds, got 1000000000$"):
        sw.load(scenario, seeds=1_000_000_000)
    with pytest.raises(sw.SweepError, match="at most 1000000 seeds"):
        sw.load(scenario, seeds=2**64)
    with pytest.raises(
        sw.SweepError,
        match=r"sweep: 2 × 2 × 2 × 1000000 seeds is 8000000 points, more than 1000000$",
    ):
        sw.load(scenario, grid=["topology.bottleneck.limit=10,20"], seeds=1_000_000)
    # The largest seed is a TOML integer's, 2^63 - 1: seeds counting past it ran every point
    # and then failed writing the store (pyarrow's OverflowError traceback, exit 1).
    with pytest.raises(sw.SweepError, match=r"pass the largest seed, 9223372036854775807$"):
        sw._seeds(3, "--seeds", 2**63 - 2)
    for bad in (2**63, -1):
        with pytest.raises(
            sw.SweepError,
            match=rf"^sweep.seeds: a seed is a whole number from 0 to 9223372036854775807 "
            rf"\(a scenario file's seed is a TOML integer\), got {bad}$",
        ):
            sw._seeds([1, bad], "sweep.seeds", 1)
    assert sw._seeds(2, "--seeds", 2**63 - 2) == [2**63 - 2, 2**63 - 1]


def test_the_seeds_option_reads_a_count_a_range_and_a_list() -> None:
    """One parser for ``tfcc sweep --seeds`` and ``tfcc reproduce --seeds``: a count as the
    file's ``seeds = N``, a range and a list (ranges in it) as ``seeds = [...]``."""
    assert sw.parse_seeds("3") == 3
    assert sw.seeds_option("3", first=5) == [5, 6, 7]
    assert sw.seeds_option("1-10", first=5) == list(range(1, 11))
    assert sw.seeds_option(" 1-3, 7 ", first=1) == [1, 2, 3, 7]
    assert sw.seeds_option("7-7", first=1) == [7]
    for seeds in ([1, 2, 3, 7], [7], [2, 4], list(range(1, 11)), [0, 9, 10]):
        assert sw.seeds_option(sw.format_seeds(seeds), first=1) == seeds
    assert sw.format_seeds(list(range(1, 11))) == "1-10"
    largest = 2**63 - 1
    for spec, message in [
        ("0", "at least one seed"),
        ("x", "expected a count N, a range A-B or a list A,B,C of seeds"),
        ("1-", "expected a count N"),
        ("1,,2", "expected a count N"),
        ("3-1", "the range 3-1 runs down; write 1-3"),
        ("1-3,2", "a seed is listed twice"),
        ("-1", f"a seed is a whole number from 0 to {largest} (a scenario file's seed"),
        (f"1-{2**63}", f"TOML integer), got {2**63}"),
        ("1-1000001", "at most 1000000 seeds"),
    ]:
        with pytest.raises(sw.SweepError) as e:
            sw.seeds_option(spec, first=1)
        assert str(e.value).startswith("--seeds: ") and message in str(e.value), spec


def test_the_sweep_command_takes_a_seed_range_and_refuses_a_bad_one(
    scenario: Path, tmp_path: Path
) -> None:
    spec = sw.load(scenario, seeds=sw.parse_seeds("4-5"))
    assert spec.seeds == [4, 5] and len(spec.points()) == 8
    r = tfcc_cli("sweep", scenario, "--out", tmp_path / "out", "--seeds", "5-4")
    assert r.returncode == 2
    assert r.stderr == "error: --seeds: the range 5-4 runs down; write 4-5\n"
    assert not (tmp_path / "out").exists()


def test_grid_options_parse_keys_linked_keys_and_values() -> None:
    a = sw.parse_grid_option("topology.bottleneck.rate=1Mbps, 2Mbps")
    assert a.name == "topology.bottleneck.rate"
    assert a.column == "topology_bottleneck_rate"
    assert a.cases == (
        ("1Mbps", ("topology.bottleneck.rate=1Mbps",)),
        ("2Mbps", ("topology.bottleneck.rate=2Mbps",)),
    )
    b = sw.parse_grid_option("n:flows.0.count+flows.1.count=2,4")
    assert b.name == "n"
    assert b.cases[1] == ("4", ("flows.0.count=4", "flows.1.count=4"))
    for bad in ("rate", "=1,2", "rate=", "rate=1,,2", "rate=1,1", "n:a+=1"):
        with pytest.raises(sw.SweepError, match="--grid"):
            sw.parse_grid_option(bad)


def test_grid_tables_take_lists_linked_keys_and_named_cases() -> None:
    axes = sw.axes_from_table(
        {
            "topology.bottleneck.limit": [15, 30],
            "proto": {
                "cases": {
                    "tfrc": {"flows.1.protocol": "tfrc", "flows.1.params.preset": "ns2"},
                    "ttfwc(0.9)": {"flows.1.protocol": "ttfwc", "flows.1.params.tp": 0.9},
                }
            },
        },
        "sweep.grid",
    )
    assert axes[0].cases[1] == ("30", ("topology.bottleneck.limit=30",))
    assert axes[1].column == "proto"
    assert axes[1].cases[0] == ("tfrc", ('flows.1.protocol="tfrc"', 'flows.1.params.preset="ns2"'))
    assert axes[1].cases[1][1][1] == "flows.1.params.tp=0.9"
    with pytest.raises(sw.SweepError, match=r"sweep\.grid\.x\.values"):
        sw.axes_from_table({"x": {"keys": ["a"], "values": []}}, "sweep.grid")
    with pytest.raises(sw.SweepError, match="unknown key 'value'"):
        sw.axes_from_table({"x": {"keys": ["a"], "value": [1]}}, "sweep.grid")


def test_points_are_the_product_times_seeds_with_stable_ids(scenario: Path) -> None:
    s = sw.load(scenario)
    pts = s.points()
    assert len(pts) == 2 * 2 * 2
    assert len({p.id for p in pts}) == len(pts)
    assert [p.id for p in sw.load(scenario).points()] == [p.id for p in pts]
    # a command-line axis replaces the file's axis of that name; --seeds replaces its count
    s2 = sw.load(scenario, ["n:flows.0.count+flows.1.count=1,2,3"], seeds=1)
    assert len(s2.points()) == 2 * 3
    # the points both sweeps share keep their ids, so a grown grid reuses them
    assert {p.id for p in s2.points()} < {p.id for p in pts} | {p.id for p in s2.points()}
    assert {p.id for p in s2.points()} & {p.id for p in pts}
    # the same values from the command line (unquoted, reordered) name the same points
    s3 = sw.load(scenario, ["topology.bottleneck.rate=2Mbps,1Mbps"])
    assert {p.id for p in s3.points()} == {p.id for p in pts}
    with pytest.raises(sw.SweepError, match="both set flows.0.count"):
        sw.load(scenario, ["x:flows.0.count=1,2"])


def test_a_byte_order_mark_is_accepted_and_binary_is_one_message(tmp_path: Path) -> None:
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + SCENARIO.encode())
    assert len(sw.load(bom).points()) == 2 * 2 * 2  # `tfcc check` accepts it too
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\x7fELF\x02\x01\xd0\xff")
    r = tfcc_cli("sweep", binary, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"error: {binary}: cannot read the scenario: not UTF-8 text\n"
    # A missing file and a directory in the words of tfcc run and tfcc check.
    for path, why in ((tmp_path / "nosuch.toml", "no such file"), (tmp_path, "is a directory")):
        r = tfcc_cli("sweep", path, "--out", tmp_path / "out")
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith(f"error: {path}: cannot read the scenario: {why}"), r.stderr


def test_a_file_tfcc_run_accepts_is_read_by_the_sweep_and_a_bad_one_in_its_words(
    tmp_path: Path,
) -> None:
    # An inline table over two lines is TOML 1.1, which the simulator's parser reads (12 of the
    # committed 004 scenarios write `params` so) and Python 3.11's tomllib (TOML 1.0) did not:
    # `tfcc sweep scenarios/004-e11-halving.toml` was "invalid TOML" while `tfcc run` ran it.
    wide = tmp_path / "wide.toml"
    wide.write_text(
        SCENARIO.replace(
            'bottleneck = { rate = "2Mbps", delay = "10ms", queue = "droptail", limit = 20 }',
            'bottleneck = { rate = "2Mbps", delay = "10ms",\n  queue = "droptail", limit = 20 }',
        )
    )
    assert '10ms",\n  queue' in wide.read_text()
    assert len(sw.load(wide).points()) == 2 * 2 * 2
    r = tfcc_cli("check", wide)
    assert r.returncode == 0 and "[sweep]: 8 points (2 seeds)" in r.stdout, r.stderr
    # A file neither reads: the simulator's message, with the file's name, exit 2.
    bad = tmp_path / "bad.toml"
    bad.write_text("a = \n")
    r = tfcc_cli("sweep", bad, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {bad}: invalid TOML at line 1, column 5: "), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


def test_an_axis_given_twice_on_the_command_line_is_refused(scenario: Path) -> None:
    grid = ["flows.0.count=1,2", "flows.0.count=3"]
    with pytest.raises(sw.SweepError, match="axis flows.0.count is given twice"):
        sw.load(scenario, grid)
    # naming an axis of the file's [sweep.grid] once still replaces it
    s = sw.load(scenario, ["topology.bottleneck.rate=5Mbps"])
    assert len(s.points()) == 1 * 2 * 2


def test_a_key_set_twice_counts_with_its_last_value() -> None:
    # A claim's versus set overrides a key of its base set (flows.1.params with a table value,
    # which has no order): the id is that of the last value, and differs from the first's.
    both = sw.point_id(["flows.1.params={ tp = 0.9 }", "flows.1.params={ tp = 0.0 }"], 1)
    assert both == sw.point_id(["flows.1.params={ tp = 0.0 }"], 1)
    assert both != sw.point_id(["flows.1.params={ tp = 0.9 }"], 1)
    assert sw.point_id(["a=1", "b={ x = 1 }"], 2) == sw.point_id(["b={ x = 1 }", "a=1"], 2)


def test_a_bad_grid_value_is_refused_before_anything_runs(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = tfcc_cli("sweep", scenario, "--grid", "topology.bottleneck.rate=1Mbps,fast", "--out", out)
    assert r.returncode == 2, r.stderr
    assert "topology.bottleneck.rate = fast" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


# --- the store ----------------------------------------------------------------------------


def test_every_point_writes_its_run_and_one_store_row(swept: Path) -> None:
    runs = store.runs(swept)
    assert runs.height == 8
    assert runs["run_id"].n_unique() == 8
    assert set(runs["status"]) == {"ok"}
    assert set(runs["topology_bottleneck_rate"]) == {"1Mbps", "2Mbps"}
    assert set(runs["n"]) == {"1", "2"}
    for rid in runs["run_id"]:
        summary = json.loads((swept / "runs" / rid / "summary.json").read_text())
        assert (swept / "runs" / rid / "timeseries.parquet").exists()
        assert (swept / "runs" / rid / "throughput.png").exists()
        row = runs.filter(runs["run_id"] == rid).row(0, named=True)
        assert row["fairness_theta"] == pytest.approx(summary["metrics"]["fairness_theta"])
        assert row["seed"] == summary["seed"]
    flows = store.flows(swept)
    # 1 + 1 flows at n = 1, 2 + 2 at n = 2, over 2 rates × 2 seeds
    assert flows.height == 2 * 2 * (2 + 4)
    # the flow counts really changed with the axis
    per_run = store.query(
        swept, "SELECT n, count(*) / count(DISTINCT run_id) AS k FROM flows GROUP BY n"
    )
    assert dict(per_run.iter_rows()) == {"1": 2, "2": 4}


def test_query_prints_a_table_csv_and_json(swept: Path) -> None:
    sql = (
        "SELECT topology_bottleneck_rate AS rate, n, count(*) AS runs, "
        "avg(fairness_theta) AS theta "
        "FROM runs GROUP BY ALL ORDER BY rate, n"
    )
    r = tfcc_cli("query", swept, sql, "--csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "rate,n,runs,theta"
    assert [ln.split(",")[:3] for ln in lines[1:]] == [
        ["1Mbps", "1", "2"],
        ["1Mbps", "2", "2"],
        ["2Mbps", "1", "2"],
        ["2Mbps", "2", "2"],
    ]
    r = tfcc_cli("query", swept, sql, "--json")
    rows = json.loads(r.stdout)
    assert len(rows) == 4 and all(0.0 < row["theta"] < 1.0 for row in rows)
    # Into a pipe, a wide table keeps its width: every column's name whole, on one line.
    r = tfcc_cli("query", swept, "SELECT * FROM runs LIMIT 2")
    names = json.loads(tfcc_cli("query", swept, "SELECT * FROM runs LIMIT 1", "--json").stdout)
    assert len(names[0]) > 10, names
    header = next(ln for ln in r.stdout.splitlines() if "fairness_theta" in ln)
    assert all(f" {c} " in header for c in names[0]), header
    r = tfcc_cli("query", swept, "SELECT count(*) AS n FROM timeseries")
    assert r.returncode == 0 and "n" in r.stdout
    r = tfcc_cli("query", swept, "SELECT nope FROM runs")
    assert r.returncode == 2 and r.stderr.startswith("error: SQL:")
    r = tfcc_cli("query", swept.parent, "SELECT 1")
    assert r.returncode == 2 and "not a sweep directory" in r.stderr


def test_an_empty_query_is_an_error(swept: Path) -> None:
    r = tfcc_cli("query", swept, "  ")
    assert r.returncode == 2
    assert r.stderr == 'error: SQL: empty query (e.g. "SELECT * FROM runs")\n'


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("garbage", "Expecting value"),
        ("[]", "expected a JSON object"),
        ('{"axes": 5}', "axes: expected a list of named axes"),
        ('{"axes": [{"name": "n"}]}', "axes: expected a list of named axes"),
        ('{"seeds": ["x"]}', "seeds: expected a list of seeds"),
    ],
)
def test_a_sweep_record_of_another_shape_is_one_message(
    scenario: Path, tmp_path: Path, text: str, why: str
) -> None:
    # Each was a Python traceback in report and query (json.loads, then a KeyError or a
    # TypeError on the axes), and in a sweep resumed into the directory.
    (tmp_path / "sweep.json").write_text(text)
    for args in (
        ("report", tmp_path),
        ("query", tmp_path, "SELECT 1"),
        ("sweep", scenario, "--out", tmp_path),
    ):
        r = tfcc_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith(
            f"error: {tmp_path / 'sweep.json'}: not a tfcc sweep record ("
        ), (
            args,
            r.stderr,
        )
        assert why in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)


def test_rerunning_a_finished_sweep_runs_nothing(swept: Path, scenario: Path) -> None:
    r = tfcc_cli("sweep", scenario, "--out", swept)
    assert r.returncode == 0, r.stderr
    assert "0 ran, 0 failed, 8 were done before" in r.stdout
    assert store.runs(swept).height == 8


def test_another_sweep_is_refused_in_the_same_directory(
    swept: Path, scenario: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.replace('duration = "3s"', 'duration = "4s"'))
    r = tfcc_cli("sweep", other, "--out", swept)
    assert r.returncode == 2
    assert "holds a sweep of another scenario" in r.stderr
    # ux3: the message said "another scenario or other --set overrides" whichever it was
    r = tfcc_cli("sweep", scenario, "--out", swept, "--set", "duration=2s")
    assert r.returncode == 2
    assert "--set duration=2s" in r.stderr and "now" in r.stderr, r.stderr
    edited = tmp_path / scenario.name
    edited.write_text(scenario.read_text().replace('duration = "3s"', 'duration = "4s"'))
    r = tfcc_cli("sweep", edited, "--out", swept)
    assert r.returncode == 2
    assert "its settings have changed since" in r.stderr, r.stderr


def test_a_sweep_resumes_after_its_file_gains_a_comment_cases_or_seeds(tmp_path: Path) -> None:
    # Before: the fingerprint was the file's text, so each of these edits refused the
    # directory ("the file has changed since"), although a grid grown with --grid resumed.
    one = SCENARIO.replace('["1Mbps", "2Mbps"]', '["1Mbps"]').replace(
        "values = [1, 2]", "values = [1]"
    )
    one = one.replace("seeds = 2", "seeds = 1")
    f, out = tmp_path / "pair.toml", tmp_path / "out"
    f.write_text(one)

    def sweep_says(expected: str) -> None:
        r = tfcc_cli("sweep", f, "--out", out)
        assert r.returncode == 0, r.stderr
        assert expected in r.stdout, r.stdout

    sweep_says("1 point (1 seed): 1 ran, 0 failed, 0 were done before")
    f.write_text("# a comment the first run did not have\n" + one.replace("\n[", "\n\n["))
    sweep_says("1 point (1 seed): 0 ran, 0 failed, 1 was done before")
    f.write_text(one.replace('["1Mbps"]', '["1Mbps", "2Mbps"]'))
    sweep_says("2 points (1 seed): 1 ran, 0 failed, 1 was done before")
    f.write_text(one.replace('["1Mbps"]', '["1Mbps", "2Mbps"]').replace("seeds = 1", "seeds = 2"))
    sweep_says("4 points (2 seeds): 2 ran, 0 failed, 2 were done before")
    assert store.runs(out).height == 4
    # A directory written under the old text fingerprint resumes while the file is the same,
    # and takes the new fingerprint.
    meta = json.loads((out / "sweep.json").read_text())
    swp = sw.load(f)
    assert meta["fingerprint"] == swp.fingerprint() != swp.text_fingerprint()
    (out / "sweep.json").write_text(json.dumps({**meta, "fingerprint": swp.text_fingerprint()}))
    sweep_says("4 points (2 seeds): 0 ran, 0 failed, 4 were done before")
    assert json.loads((out / "sweep.json").read_text())["fingerprint"] == swp.fingerprint()


def test_a_seed_axis_points_to_seeds(scenario: Path) -> None:
    with pytest.raises(sw.SweepError, match="'seed' is reserved.*--seeds N"):
        sw.load(scenario, grid=["seed=1,2,3"])


def test_cases_beside_keys_name_the_mix_up() -> None:
    # ux3: said "cases: expected a table of label = { key = value }" of a good cases table
    grid = {"x": {"cases": {"a": {"flows.0.count": 1}}, "keys": ["flows.0.count"]}}
    with pytest.raises(sw.SweepError, match="x: give either cases or keys and values, not both"):
        sw.axes_from_table(grid, "s.toml: sweep.grid")


def test_a_set_of_a_key_that_an_axis_sets_is_refused(scenario: Path) -> None:
    # ux3: `--set flows.0.count=3 --grid flows.0.count=1,2` ran the grid and dropped the --set
    # without a word
    with pytest.raises(sw.SweepError, match="--set flows.0.count=3: the grid axis n sets"):
        sw.load(scenario, overrides=["flows.0.count=3"])
    with pytest.raises(sw.SweepError, match="grid axis topology.bottleneck.rate sets"):
        sw.load(scenario, overrides=["topology.bottleneck.rate=3Mbps"])
    # a --set of another key, or of a whole table an axis sets one key of, is fine
    sw.load(scenario, overrides=["flows.0.params={ max_window = 20 }", "duration=2s"])


def test_a_malformed_scheduler_address_is_one_message(scenario: Path, tmp_path: Path) -> None:
    # ux3: --scheduler foo ended in dask's ValueError traceback
    r = tfcc_cli("sweep", scenario, "--out", tmp_path / "out", "--scheduler", "foo")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: --scheduler foo: not a scheduler address"), r.stderr
    assert not (tmp_path / "out").exists()


def test_the_python_api_takes_str_paths(scenario: Path, tmp_path: Path) -> None:
    # ux3: sweep.load("s.toml") and sweep.run(spec, "out") were AttributeErrors ('str' object
    # has no attribute 'read_text'), and a grid given as one string was one axis per letter
    from tfcc import report

    spec = sw.load(str(scenario), seeds=1, overrides=["duration=2s"])
    out = tmp_path / "out"
    outcome = sw.run(spec, str(out), plots=False)
    assert outcome.ran == 4 and outcome.failed == 0
    assert report.write(str(out), str(tmp_path / "r.html")).is_file()
    with pytest.raises(TypeError, match="grid: a list of strings, not one string"):
        sw.load(str(scenario), grid="topology.bottleneck.rate=1Mbps,2Mbps")


def test_a_finished_sweep_leaves_no_pool_thread_behind(scenario: Path, tmp_path: Path) -> None:
    # The pool's manager thread, left running after a finished sweep, raced the interpreter's
    # exit hook for its wake-up pipe: "Exception ignored ... OSError: [Errno 9] Bad file
    # descriptor" after about one flagship sweep in six.
    import threading
    from concurrent.futures.process import _ExecutorManagerThread

    spec = sw.load(scenario, seeds=1, overrides=["duration=2s"])
    pool = sw.LocalPool(workers=2)
    try:
        outcome = sw.run(spec, tmp_path / "out", backend=pool, plots=False)
    finally:
        pool.close()
    assert outcome.ran == 4 and outcome.failed == 0
    left = [t for t in threading.enumerate() if isinstance(t, _ExecutorManagerThread)]
    assert left == []


def test_an_axis_named_like_a_flow_field_survives_in_the_flows_view(tmp_path: Path) -> None:
    # ux3: the flagship's axis `protocol` was overwritten in every flows row by the flow's own
    # protocol, so "TCP's throughput against ttfwc(0.9)" could not be asked of `flows`
    scen = tmp_path / "p.toml"
    scen.write_text(
        PAIR
        + '[sweep.grid.protocol.cases]\ntfrc = { "flows.1.protocol" = "tfrc" }\n'
        + 'tfwc = { "flows.1.protocol" = "tfwc" }\n'
    )
    out = tmp_path / "out"
    assert sw.run(sw.load(scen), out, plots=False).ran == 2
    rows = store.query(
        out, "SELECT axis_protocol, protocol, count(*) AS k FROM flows GROUP BY ALL ORDER BY ALL"
    )
    assert rows.rows() == [
        ("tfrc", "tcp-sack", 1),
        ("tfrc", "tfrc", 1),
        ("tfwc", "tcp-sack", 1),
        ("tfwc", "tfwc", 1),
    ]
    assert set(store.runs(out)["protocol"]) == {"tfrc", "tfwc"}
    # the time series carry the run's seed and axes too (the view had run_id only)
    ts = store.query(
        out,
        "SELECT protocol, count(DISTINCT flow) AS flows, min(seed) AS seed FROM timeseries "
        "GROUP BY ALL ORDER BY ALL",
    )
    assert ts.rows() == [("tfrc", 2, 1), ("tfwc", 2, 1)]
    # a crash that left flows parts and run directories but no runs part: the views still open
    for part in (out / "store" / "runs").glob("part-*.parquet"):
        part.unlink()
    assert store.query(out, "SELECT count(*) FROM flows").item() == 4
    assert store.query(out, "SELECT count(*) FROM timeseries").item() > 0
    assert store.runs(out).height == 0


#: Rate units and their bits per second, a spelling per scale (docs/scenarios.md).
_RATE_UNITS = [("bps", 1), ("kbps", 1_000), ("Mbps", 1_000_000), ("Gb/s", 1_000_000_000)]
_DUR_UNITS = [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)]


@st.composite
def _quantities(draw: st.DrawFn) -> tuple[list[str], list[float]]:
    """Distinct quantities of one kind, each spelled in a unit of its own, and their values."""
    rate = draw(st.booleans())
    units = _RATE_UNITS if rate else _DUR_UNITS
    mantissas = draw(st.lists(st.integers(1, 999), min_size=1, max_size=8))
    labels, values = [], []
    for m in mantissas:
        unit, scale = draw(st.sampled_from(units))
        value = m * scale
        if any(abs(value - v) <= 1e-12 * max(value, v) for v in values):
            continue  # equal quantities keep their given order; this test wants a strict order
        labels.append(f"{m}{unit}")
        values.append(value)
    return labels, values


# No per-example deadline: `make test` runs this beside a second pytest worker and the real-time
# testbed tests, where one example took 379 ms against Hypothesis' default 200 ms; what is
# checked is the order, not the speed.
@settings(deadline=None)
@given(_quantities(), st.randoms(use_true_random=False))
def test_any_permutation_of_quantities_sorts_to_numeric_order(
    qv: tuple[list[str], list[float]], rng
) -> None:
    # defect: axis values were text, so "10Mbps" sorted before "5Mbps" in tables and heat maps
    labels, values = qv
    by_value = [lab for _, lab in sorted(zip(values, labels, strict=True))]
    shuffled = labels[:]
    rng.shuffle(shuffled)
    assert sw.numeric_order(shuffled) == by_value
    assert sw.ordered_cases(shuffled) == by_value


def test_axis_order_keeps_named_cases_and_mixed_kinds_as_given() -> None:
    assert sw.numeric_order(["10Mbps", "5Mbps", "500kbps"]) == ["500kbps", "5Mbps", "10Mbps"]
    assert sw.numeric_order(["16", "2", "1"]) == ["1", "2", "16"]
    # plain numbers are SI base units, so they sort with any one kind
    assert sw.numeric_order(["2Mbps", "1500000", '"1Mbps"']) == ['"1Mbps"', "1500000", "2Mbps"]
    assert sw.numeric_order(["tfwc", "tfrc"]) is None
    assert sw.ordered_cases(["tfwc", "tfrc"]) == ["tfwc", "tfrc"]
    assert sw.numeric_order(["20ms", "1Mbps"]) is None  # a duration and a rate: no order
    assert sw.quantity_of("1000B") == ("size", 1000.0)


def test_quantity_axes_order_numerically_in_sql_csv_polars_and_the_report(
    scenario: Path, tmp_path: Path
) -> None:
    from tfcc import report

    out = tmp_path / "out"
    grid = ["topology.bottleneck.rate=10Mbps,500kbps,2Mbps", "n:flows.0.count+flows.1.count=16,2"]
    spec = sw.load(scenario, grid, seeds=1, overrides=["duration=2s"])
    assert sw.run(spec, out, plots=False).ran == 6
    rates = ["500kbps", "2Mbps", "10Mbps"]
    axes = {a["name"]: a["cases"] for a in store.meta(out)["axes"]}
    assert axes == {"topology.bottleneck.rate": rates, "n": ["2", "16"]}
    q = "SELECT DISTINCT topology_bottleneck_rate AS r, topology_bottleneck_rate_value AS v, n "
    rows = store.query(out, q + "FROM runs ORDER BY r, n").rows()
    assert rows == [
        (r, v, n) for r, v in zip(rates, [5e5, 2e6, 1e7], strict=True) for n in ["2", "16"]
    ]
    assert store.query(out, "SELECT max(topology_bottleneck_rate) FROM flows").item() == "10Mbps"
    # polars sorts the same way, and the text is as written
    df = store.runs(out).sort("topology_bottleneck_rate", "n")
    assert df["topology_bottleneck_rate"].to_list() == [r for r in rates for _ in (1, 2)]
    r = tfcc_cli(
        "query", out, "SELECT DISTINCT topology_bottleneck_rate FROM runs ORDER BY 1", "--csv"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["topology_bottleneck_rate", *rates]
    # the report's heat maps and tables take the same order, and the _value column is no metric
    d = report._Data(out, None)
    assert [a["cases"] for a in d.axes] == [rates, ["2", "16"]]
    assert "topology_bottleneck_rate_value" not in d.metrics
    # a sweep.json of an earlier version (cases as given) is reordered when read
    meta = json.loads((out / "sweep.json").read_text())
    meta["axes"][0]["cases"] = ["10Mbps", "2Mbps", "500kbps"]
    (out / "sweep.json").write_text(json.dumps(meta))
    assert report._Data(out, None).axes[0]["cases"] == rates


def test_the_runs_view_always_has_the_documented_columns(swept: Path) -> None:
    # ux3: `error` came only from failed points, so "SELECT error FROM runs" was a Binder
    # Error in a sweep where nothing failed
    rows = store.query(swept, "SELECT status, error, fairness_theta, jain_index FROM runs")
    assert rows.height == 8
    assert set(rows["status"]) == {"ok"} and rows["error"].null_count() == 8


def test_the_summary_line_counts_one_point_in_the_singular(tmp_path: Path) -> None:
    # "1 points (1 seed): ..." and "..., 1 were done before"
    scen = tmp_path / "pair.toml"
    scen.write_text(PAIR)
    out = tmp_path / "out"
    r = tfcc_cli("sweep", scen, "--out", out, "--grid", "flows.0.count=1", "--no-plots", "-q")
    assert "1 point (1 seed): 1 ran, 0 failed, 0 were done before;" in r.stdout, r.stdout
    r = tfcc_cli("sweep", scen, "--out", out, "--grid", "flows.0.count=1,2", "--no-plots", "-q")
    assert "2 points (1 seed): 1 ran, 0 failed, 1 was done before;" in r.stdout, r.stdout


def test_a_failing_point_is_recorded_and_the_others_finish(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = tfcc_cli("sweep", scenario, "--out", out, "--no-plots", "-q", "--seeds", "1")
    assert r.returncode == 0, r.stderr
    assert "4 points (1 seed): 4 ran" in r.stdout, r.stdout
    victim = [p for p in sw.load(scenario).points() if p.seed == 2][1]
    # a file where the point's run directory goes: its outputs cannot be written
    (out / "runs" / victim.id).write_text("in the way")
    r = tfcc_cli("sweep", scenario, "--out", out, "--no-plots", "-q")
    assert r.returncode == 1
    assert "3 ran, 1 failed, 4 were done before" in r.stdout
    assert f"failed {victim.id}" in r.stderr
    runs = store.runs(out)
    assert runs.height == 8
    failed = runs.filter(runs["status"] == "failed").row(0, named=True)
    assert failed["run_id"] == victim.id
    assert "not a directory" in failed["error"]
    # recorded failures are not retried by default; --retry-failed runs them again
    r = tfcc_cli("sweep", scenario, "--out", out, "--no-plots", "-q")
    assert "0 ran, 0 failed, 8 were done before" in r.stdout
    (out / "runs" / victim.id).unlink()
    r = tfcc_cli("sweep", scenario, "--out", out, "--no-plots", "-q", "--retry-failed")
    assert r.returncode == 0, r.stderr
    assert "1 ran, 0 failed, 7 were done before" in r.stdout
    runs = store.runs(out)
    assert runs.height == 8 and set(runs["status"]) == {"ok"}


# --- crash safety -------------------------------------------------------------------------


def finished(out: Path) -> int:
    """Run directories in place (not the hidden ones a run is written into before renaming)."""
    return sum(not p.parent.name.startswith(".") for p in (out / "runs").glob("*/summary.json"))


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def test_a_sigkilled_sweep_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    scen = tmp_path / "long.toml"
    scen.write_text(LONG)
    out = tmp_path / "out"
    args = ["sweep", scen, "--out", out, "--seeds", "6", "--no-plots", "-q"]
    total = 2 * 2 * 6
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcc.cli", *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = finished(out) if out.exists() else 0
            if done >= 4:
                break
            assert proc.poll() is None, "the sweep ended before it could be killed"
            time.sleep(0.05)
        helpers = descendants(proc.pid)
        assert helpers, "the sweep runs its points in other processes"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # the pool's processes die with the driver: no orphan keeps writing into the directory
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{p}").exists() for p in helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in helpers if Path(f"/proc/{p}").exists()]
    done_before = finished(out)
    assert 4 <= done_before < total, "the kill landed mid-sweep"
    r = tfcc_cli("sweep", *args[1:])
    assert r.returncode == 0, r.stderr
    # what was finished before the kill (in the store or only on disk) is kept, not re-run
    ran = int(r.stdout.split(" ran,")[0].rsplit(" ", 1)[1])
    assert ran <= total - done_before
    q = store.query(out, "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs")
    assert q.row(0) == (total, total)
    q = store.query(out, "SELECT count(*) AS n FROM flows")
    assert q.item() == 2 * 6 * (2 + 4)
    assert {p.id for p in sw.load(scen, seeds=6).points()} == set(store.runs(out)["run_id"])
    assert not [p for p in (out / "runs").iterdir() if p.name.startswith(".")]


def test_an_out_directory_that_cannot_be_created_is_one_message(
    scenario: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    r = tfcc_cli("sweep", scenario, "--out", blocker / "out", "--seeds", "1")
    assert r.returncode == 2, r.stderr
    assert (
        r.stderr
        == f"error: {blocker / 'out'}: cannot create the sweep directory (Not a directory)\n"
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_a_sweep_with_one_message_and_it_resumes(
    tmp_path: Path, sig: int
) -> None:
    # LONG points (about 0.36 s each): at 20 s a point took about 25 ms, and on an idle machine
    # 14-24 of the 24 were done by the time the 50 ms poll saw the first two.
    scen = tmp_path / "long.toml"
    scen.write_text(LONG)
    out = tmp_path / "out"
    args = ["sweep", scen, "--out", out, "--seeds", "6", "--no-plots", "-q"]
    total = 2 * 2 * 6
    seen: list[int] = []

    def ready() -> bool:
        seen.append(finished(out) if out.exists() else 0)
        return seen[-1] >= 2

    code, err = interrupt_when(args, ready, sig)
    assert code == 128 + sig, err
    word = "terminated" if sig == signal.SIGTERM else "interrupted"
    assert err.endswith(
        f"{word}: the finished runs are stored in {out}; "
        "run the same command again to run the rest\n"
    ), err
    assert "Traceback" not in err
    done_before = finished(out)
    assert done_before < total, f"all {total} done; {seen[-1]} were when the signal was sent"
    r = tfcc_cli("sweep", *args[1:])
    assert r.returncode == 0, r.stderr
    q = store.query(out, "SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM runs")
    assert q.row(0) == (total, total)


# --- Dask ---------------------------------------------------------------------------------


def test_the_same_sweep_runs_on_a_dask_cluster(scenario: Path, swept: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        out = tmp_path / "dask"
        r = tfcc_cli(
            "sweep", scenario, "--out", out, "--scheduler", cluster.scheduler_address, "-q"
        )
        assert r.returncode == 0, r.stderr
        assert "8 ran, 0 failed" in r.stdout
    # remote workers hand the outputs back; the driver wrote the same run directories
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(
        p.name for p in (swept / "runs").iterdir() if not p.name.startswith(".")
    )
    a = store.query(out, "SELECT run_id, fairness_theta FROM runs ORDER BY run_id")
    b = store.query(swept, "SELECT run_id, fairness_theta FROM runs ORDER BY run_id")
    # the simulator is deterministic: the cluster computed the same numbers
    assert a.rows() == b.rows()
    assert (out / "runs" / a["run_id"][0] / "throughput.png").exists()


# --- reproductions ------------------------------------------------------------------------


def _load_claims(tmp_path: Path, tables: str) -> tuple[str, list]:
    """Writes a claims file titled "t" with the `[[claims]]` tables `tables` and loads it:
    its path and its claims."""
    from tfcc import reproduce

    claims = tmp_path / "claims.toml"
    claims.write_text('title = "t"\n' + tables)
    _, cs = reproduce.load(str(claims))
    return str(claims), cs


def _prerun(cs: list, tmp_path: Path) -> tuple[list[tuple[int, int]], Callable]:
    """Pre-runs the claims `cs` into `tmp_path / "runs"`: the (to run, already stored) counts
    it announced, and the runner that serves their runs."""
    seen: list[tuple[int, int]] = []
    runner = sw.prerun_claims(cs, tmp_path / "runs", on_start=lambda t, s: seen.append((t, s)))
    return seen, runner


def test_reproductions_run_through_the_sweep_machinery(scenario: Path, tmp_path: Path) -> None:
    from tfcc import reproduce

    claims, cs = _load_claims(
        tmp_path,
        f"""
[[claims]]
id = "a"
thesis = "002"
section = "x"
claim = "θ at 1 Mb/s"
scenario = "{scenario}"
set = ["topology.bottleneck.rate=1Mbps"]
seeds = [1, 2]
metric = "fairness_theta"
min = 0.0
[[claims]]
id = "b"
thesis = "002"
section = "x"
claim = "CoV of TFWC at 2 Mb/s"
scenario = "{scenario}"
set = ["topology.bottleneck.rate=2Mbps"]
seeds = [2, 3]
metric = "cov"
args = {{ protocol = "tfwc" }}
max = 10.0
""",
    )
    seen, runner = _prerun(cs, tmp_path)
    assert seen == [(4, 0)]
    _, parallel = reproduce.run(claims, runner=runner)
    _, serial = reproduce.run(claims)
    assert [o.per_seed for o in parallel] == [o.per_seed for o in serial]
    assert all(o.passed for o in parallel), [o.error for o in parallel]
    # the runner hands metrics the recorded time series too
    r = runner(cs[0].scenario, list(cs[0].set), 1)
    assert len(r.flow_column(0, "throughput_bps")[0]) > 10
    # a second time nothing runs
    seen, _ = _prerun(cs, tmp_path)
    assert seen == [(0, 4)]


def test_prerun_claims_skips_trace_claims(scenario: Path, tmp_path: Path) -> None:
    """A trace claim (no scenario) needs no run; it once made the pre-run crash."""
    from tfcc import reproduce

    claims, cs = _load_claims(
        tmp_path,
        f"""
[[claims]]
id = "trace"
thesis = "004"
section = "x"
claim = "a history of 8-16 intervals predicts best"
metric = "loss_prediction_best_n"
seeds = [1]
min = 1
max = 64
[[claims]]
id = "sim"
thesis = "002"
section = "x"
claim = "θ is defined"
scenario = "{scenario}"
seeds = [1]
metric = "fairness_theta"
min = 0.0
""",
    )
    seen, runner = _prerun(cs, tmp_path)
    assert seen == [(1, 0)]
    _, outcomes = reproduce.run(claims, runner=runner)
    assert [o.error for o in outcomes] == ["", ""]


def test_prerun_claims_plans_every_variant_and_versus_run(scenario: Path, tmp_path: Path) -> None:
    from tfcc import reproduce

    claims, cs = _load_claims(
        tmp_path,
        f"""
[[claims]]
id = "v"
thesis = "002"
section = "x"
claim = "θ at 1 and 2 Mb/s over θ with a longer queue"
scenario = "{scenario}"
variants = [["topology.bottleneck.rate=1Mbps"], ["topology.bottleneck.rate=2Mbps"]]
versus = {{ set = ["topology.bottleneck.limit=40"] }}
seeds = [1]
metric = "fairness_theta"
min = 0.0
""",
    )
    seen, runner = _prerun(cs, tmp_path)
    # two variants, each also under the versus set
    assert seen == [(4, 0)]
    _, parallel = reproduce.run(claims, runner=runner)
    _, serial = reproduce.run(claims)
    assert not parallel[0].error and parallel[0].passed, parallel[0].error
    assert [o.per_seed for o in parallel] == [o.per_seed for o in serial]
