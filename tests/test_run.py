"""``tfcc run`` and ``tfcc check``: the output contract, determinism, and one test per kind of
bad input (one message naming the file and the key, exit code 2, no traceback, no output)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import tfcc

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "dumbbell-cbr.toml"
# The example shortened to keep the suite quick: 4 s, window from 1 s, rate change at 3 s.
SHORT = ["--set", "duration=4s", "--set", "measure_from=1s", "--set", "events.0.at=3s"]

GOOD = """\
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "20ms" }
[[flows]]
protocol = "cbr"
rate = "1Mbps"
"""


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def assert_refused(r: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def refused_run(tmp_path: Path, text: str, *needles: str, sets: tuple[str, ...] = ()) -> str:
    scen = write(tmp_path, text)
    out = tmp_path / "out"
    args: list[str] = []
    for s in sets:
        args += ["--set", s]
    msg = assert_refused(run_cli("run", scen, "--out", out, *args), str(scen), *needles)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"], "no output, no temporaries"
    return msg


# ---- bad input ----


def test_an_unknown_key(tmp_path: Path) -> None:
    refused_run(
        tmp_path,
        GOOD.replace("delay =", "dealy ="),
        "topology.bottleneck.dealy",
        "unknown field `dealy`",
    )


def test_a_wrong_unit(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD.replace('"10Mbps"', '"20ms"'), "topology.bottleneck.rate", "rate")


def test_a_negative_rate(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD.replace('"10Mbps"', "-10"), "topology.bottleneck.rate")


def test_a_zero_rate(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD.replace('"1Mbps"', '"0Mbps"'), "flows[0].rate", "must be positive")


def test_an_unknown_protocol(tmp_path: Path) -> None:
    refused_run(
        tmp_path,
        GOOD.replace('"cbr"', '"tcp-vegas"'),
        "flows[0].protocol",
        "unknown protocol `tcp-vegas` (known: cbr",
    )


def test_tcp_cubic_runs_in_the_simulator(tmp_path: Path) -> None:
    # tcp-cubic was planned (testbed only) until RFC 9438's CUBIC came to the simulator.
    scen = write(tmp_path, GOOD.replace('rate = "1Mbps"', ""))
    r = run_cli("check", scen, "--set", "flows.0.protocol=tcp-cubic")
    assert r.returncode == 0, r.stderr


def test_a_missing_field(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD.replace('duration = "2s"', ""), ": duration: missing")


def test_measure_from_past_the_duration(tmp_path: Path) -> None:
    refused_run(
        tmp_path,
        'measure_from = "5s"\n' + GOOD,
        "measure_from: must be before the end of the run (2s), got 5s",
    )


def test_invalid_toml(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD.replace("[topology]", "[topology"), "invalid TOML at line 2")


def test_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert_refused(run_cli("run", missing, "--out", tmp_path / "out"), str(missing), "no such file")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_of_the_users_own_files_is_not_replaced(tmp_path: Path) -> None:
    scen = write(tmp_path, GOOD)
    mine = tmp_path / "papers"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep")
    assert_refused(run_cli("run", scen, "--out", mine), str(mine), "not a run's outputs")
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papers", "s.toml"], "no temporaries"


def test_a_directory_given_as_the_scenario(tmp_path: Path) -> None:
    assert_refused(
        run_cli("run", tmp_path, "--out", tmp_path / "out"), "is a directory, not a scenario file"
    )


def test_a_negative_delay(tmp_path: Path) -> None:
    refused_run(
        tmp_path,
        GOOD.replace('delay = "20ms"', 'delay = "-5ms"'),
        "topology.bottleneck.delay",
        'a duration cannot be negative, got "-5ms"',
    )


def test_an_unwritable_output_directory(tmp_path: Path) -> None:
    scen = write(tmp_path, GOOD)
    # /proc refuses new directories even to root.
    assert_refused(run_cli("run", scen, "--out", "/proc/tfcc-test/out"), "not writable")


def test_a_bad_override(tmp_path: Path) -> None:
    refused_run(tmp_path, GOOD, "--set flows.4.count=2", "has 1 entries", sets=("flows.4.count=2",))


def test_check_reports_the_same_errors_and_accepts_good_files(tmp_path: Path) -> None:
    scen = write(tmp_path, GOOD)
    r = run_cli("check", scen)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout and "1 flow (1 × cbr)" in r.stdout and "0 events" in r.stdout
    # the dumbbell's 4 access links per flow are links too, but the outputs report 2
    assert "6 links (2 in the outputs)" in r.stdout, r.stdout
    assert_refused(run_cli("check", scen, "--set", "flows.0.count=0"), "flows[0].count")


def test_check_also_checks_the_sweep_table(tmp_path: Path) -> None:
    # ux3: `tfcc check` passed a [sweep] table with a typo (`seed`) or a bad grid value, which
    # only `tfcc sweep` then refused
    table = '[sweep]\nseeds = 2\n[sweep.grid]\n"flows.0.rate" = ["1Mbps", "2Mbps"]\n'
    scen = write(tmp_path, GOOD + table)
    r = run_cli("check", scen)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("; [sweep]: 4 points (2 seeds)"), r.stdout
    scen = write(tmp_path, GOOD + table.replace("seeds", "seed"))
    assert_refused(run_cli("check", scen), "sweep.seed: unknown key")
    scen = write(tmp_path, GOOD + table.replace('"2Mbps"', '"2Mbs"'))
    assert_refused(run_cli("check", scen), "grid axis flows.0.rate = 2Mbs", "flows[0].rate")
    # a --set is for the single run (`tfcc run` ignores [sweep]), even of a key the grid sets
    scen = write(tmp_path, GOOD + table)
    r = run_cli("check", scen, "--set", "flows.0.rate=3Mbps")
    assert r.returncode == 0 and "4 points" in r.stdout, r.stderr


# ---- the output contract ----


@pytest.fixture(scope="module")
def example_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("run") / "out"
    r = run_cli("run", EXAMPLE, "--out", out, *SHORT)
    assert r.returncode == 0, r.stderr
    return out, r


def test_a_run_writes_summary_series_and_plots(example_run) -> None:
    out, r = example_run
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "timeseries.parquet", "queues.parquet"} <= names
    assert {"throughput.png", "window.png", "queue.png"} <= names
    s = json.loads((out / "summary.json").read_text())
    for key in ("scenario", "seed", "sim_seconds", "wall_seconds", "events", "flows", "links"):
        assert key in s
    assert s["scenario"] == "dumbbell-cbr" and s["seed"] == 1 and s["sim_seconds"] == 4.0
    assert [f["id"] for f in s["flows"]] == [0, 1, 2]
    for f in s["flows"]:
        for key in (
            "protocol",
            "throughput_bps",
            "bytes_delivered",
            "packets_sent",
            "packets_lost",
            "loss_event_rate",
            "mean_rtt_s",
            "cov",
        ):
            assert key in f
    assert [f["label"] for f in s["flows"]] == ["cbr", "cbr", "cbr-onoff"]
    assert {link["name"] for link in s["links"]} == {"bottleneck", "bottleneck-rev"}
    bn = next(link for link in s["links"] if link["name"] == "bottleneck")
    for key in ("utilization", "drops", "mean_queue_pkts"):
        assert key in bn
    assert {"jain_index", "fairness_theta"} <= set(s["metrics"])
    assert s["metrics"]["fairness_theta"] is None  # no TCP in this run
    # Window [1 s, 4 s]: the steady 4 Mb/s flows fit (8 of 10 Mb/s) until the on/off flow comes
    # on at 3 s, then 12 Mb/s meet 6 Mb/s: they cannot all get their rate.
    total = sum(f["throughput_bps"] for f in s["flows"])
    assert 0 < total <= 10e6
    ts = pq.read_table(out / "timeseries.parquet").to_pydict()
    for col in ("flow", "t", "throughput_bps", "cwnd", "rate_bps", "p", "rtt_s"):
        assert col in ts
    assert len(ts["t"]) == 3 * 40  # three flows, 40 samples of 100 ms
    # tsclean: each sample instant is the double nearest its nanosecond count, as written
    # (0.3, not the 0.30000000000000004 of ns × 1e-9)
    assert sorted(set(ts["t"])) == [k / 10 for k in range(1, 41)]
    q = pq.read_table(out / "queues.parquet").to_pydict()
    assert set(q["link"]) == {"bottleneck", "bottleneck-rev"}
    assert sorted(set(q["t"])) == [k / 10 for k in range(1, 41)]
    assert max(q["queue_pkts"]) > 0
    assert "dumbbell-cbr" in r.stdout and "bottleneck" in r.stdout


def test_the_same_seed_gives_identical_outputs(tmp_path: Path, example_run) -> None:
    first, _ = example_run
    again = tmp_path / "again"
    r = run_cli("run", EXAMPLE, "--out", again, "--no-plots", "-q", *SHORT)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert not (again / "throughput.png").exists()

    def summary(d: Path) -> dict:
        s = json.loads((d / "summary.json").read_text())
        del s["wall_seconds"]
        return s

    assert summary(first) == summary(again)
    for name in ("timeseries.parquet", "queues.parquet"):
        assert pq.read_table(first / name).equals(pq.read_table(again / name))


def test_seed_and_overrides_reach_the_simulator(tmp_path: Path) -> None:
    lossy = [*SHORT, "--set", 'topology.bottleneck.loss={ model = "bernoulli", p = 0.05 }']
    runs = {}
    for seed in (1, 2):
        out = tmp_path / f"s{seed}"
        r = run_cli("run", EXAMPLE, "--out", out, "--no-plots", "-q", "--seed", seed, *lossy)
        assert r.returncode == 0, r.stderr
        runs[seed] = json.loads((out / "summary.json").read_text())
    assert runs[2]["seed"] == 2
    lost = [[f["packets_lost"] for f in runs[s]["flows"]] for s in (1, 2)]
    assert lost[0] != lost[1]
    bn = next(link for link in runs[1]["links"] if link["name"] == "bottleneck")
    assert bn["artificial_drops"] > 0


def test_the_python_api_returns_columnar_series() -> None:
    res = tfcc.run_scenario(
        str(EXAMPLE), ["duration=2s", "measure_from=0", "events.0.at=1s"], None, None
    )
    fs, ls = res["flow_series"], res["link_series"]
    assert len(fs["flow"]) == len(fs["t"]) == len(fs["throughput_bps"]) == 3 * 20
    assert len(ls["link"]) == len(ls["queue_pkts"]) == 2 * 20
    calls: list[tuple[float, float]] = []
    tfcc.run_scenario(
        str(EXAMPLE),
        ["duration=2s", "measure_from=0", "events.0.at=1s"],
        3,
        lambda n, e: calls.append((n, e)),
    )
    assert calls[-1] == (2.0, 2.0) and len(calls) >= 100
    with pytest.raises(tfcc.ScenarioError, match="flows\\[0\\].count"):
        tfcc.check_scenario(str(EXAMPLE), ["flows.0.count=0"])


def test_the_python_api_takes_pathlib_paths_and_reports_exact_seconds() -> None:
    # ux3: a pathlib.Path was a TypeError ("cannot be converted to 'PyString'"), and
    # check_scenario said duration_s 60.00000000000001 for "60s"
    info = tfcc.check_scenario(EXAMPLE, ["duration=60s", "measure_from=0.3"])
    assert info["duration_s"] == 60.0 and info["measure_from_s"] == 0.3
    res = tfcc.run_scenario(EXAMPLE, ["duration=2s", "measure_from=0", "events.0.at=1s"])
    assert res["summary"]["sim_seconds"] == 2.0
    # tsclean: the series' instants too (0.3 s was 0.30000000000000004)
    for series in (res["flow_series"], res["link_series"]):
        assert sorted(set(series["t"])) == [k / 10 for k in range(1, 21)]


def test_one_string_as_overrides_is_named_as_the_mistake(tmp_path: Path) -> None:
    # ux3: run_scenario said "Can't extract `str` to `Vec`", tfcc.run.run took each letter
    # of the string as an override
    import tfcc.run

    for call in (
        lambda: tfcc.run_scenario(EXAMPLE, "duration=2s"),
        lambda: tfcc.check_scenario(EXAMPLE, "duration=2s"),
        lambda: tfcc.run.run(EXAMPLE, tmp_path / "out", overrides="duration=2s"),
    ):
        with pytest.raises(TypeError, match="overrides: a list of KEY=VALUE strings"):
            call()
    with pytest.raises(TypeError, match="overrides: a list of KEY=VALUE strings"):
        tfcc.run_scenario(EXAMPLE, [3])
    # and a bad seed names the argument (was "can't convert negative int to unsigned")
    for seed in (-1, 2**63, 2**64, 1.5, "2"):
        with pytest.raises(ValueError, match="seed: a whole number from 0 to"):
            tfcc.run_scenario(EXAMPLE, ["duration=2s", "events.0.at=1s"], seed)
        with pytest.raises(ValueError, match="seed: a whole number from 0 to"):
            tfcc.run.run(EXAMPLE, tmp_path / "out", seed=seed)
    assert not (tmp_path / "out").exists()
    assert tfcc.check_scenario(EXAMPLE, ("duration=20s",))["duration_s"] == 20.0


def test_help_lists_the_scenario_api_and_the_endpoints() -> None:
    # ux3: help(tfcc) showed the equations only; the lazily loaded names were missing
    import pydoc

    text = pydoc.render_doc(tfcc, renderer=pydoc.plaintext)
    for name in ("run_scenario", "check_scenario", "ScenarioError", "TfrcSender", "LossHistory"):
        assert name in dir(tfcc)
        assert f"{name}(" in text or f"class {name}" in text, name
    assert "tfcc.store.query" in (tfcc.__doc__ or "")


def test_an_unknown_backend_is_refused(tmp_path: Path) -> None:
    scen = write(tmp_path, GOOD)
    assert_refused(
        run_cli("run", scen, "--out", tmp_path / "out", "--backend", "ns3"),
        "--backend ns3: unknown backend",
    )
    assert not (tmp_path / "out").exists()


def test_the_testbed_refuses_what_it_cannot_emulate(tmp_path: Path) -> None:
    # The bottleneck's loss model maps onto the relay and CBR flows run there, but a RED queue
    # has no tc counterpart here: one message, no output, before any namespace is built.
    red = GOOD.replace(
        'delay = "20ms" }',
        'delay = "20ms", queue = "red", loss = { model = "bernoulli", p = 0.01 } }',
    )
    scen = write(tmp_path, red)
    r = run_cli("run", scen, "--out", tmp_path / "out", "--backend", "testbed")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_an_exception_in_progress_abandons_the_run() -> None:
    calls: list[float] = []

    def stop(now: float, end: float) -> None:
        calls.append(now)
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tfcc.run_scenario(str(EXAMPLE), [], None, stop)
    assert len(calls) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_a_long_run_without_output(tmp_path: Path, sig: int) -> None:
    """Exit status 128 + signal, as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM."""
    out = tmp_path / "out"
    long = ["--set", "duration=20000s", "--set", "flows.0.count=20", "-q", "--no-plots"]
    # Through the console script's module, as a user's `tfcc run` goes: `-m tfcc.cli` would
    # import the whole typer app first, and under load a signal could land in those imports.
    p = subprocess.Popen(
        [sys.executable, "-m", "tfcc.entry", "run", str(EXAMPLE), "--out", str(out), *long],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Past start-up, into the simulation: once the process has become the native tfcc-run, which
    # installs its handlers first thing. A fixed wait alone can end inside Python's start-up when
    # parallel test workers load the machine.
    end = time.monotonic() + 30
    while time.monotonic() < end and p.poll() is None:
        try:
            if Path(f"/proc/{p.pid}/exe").resolve().name == "tfcc-run":
                break
        except OSError:
            pass
        time.sleep(0.02)
    time.sleep(1.0)
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + sig, err
    assert err == ("terminated\n" if sig == signal.SIGTERM else "interrupted\n")
    assert list(tmp_path.iterdir()) == []


TINY_TCP = """\
name = "tiny-tcp"
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "16kbps", delay = "10ms", limit = 1000 }
[[flows]]
protocol = "tcp-reno"
"""


def test_a_spurious_tcp_timeout_is_no_loss_event(tmp_path: Path) -> None:
    """A TCP flow on a 16 kb/s link loses nothing, but slow start stretches its RTT past the RTO:
    its timeouts are spurious. They used to count as loss events (a loss event rate with no packet
    lost); a loss event is a window reduction caused by a detected loss, and the summary says how
    many timeouts were spurious."""
    out = tmp_path / "out"
    r = run_cli("run", write(tmp_path, TINY_TCP), "--out", out)
    assert r.returncode == 0, r.stderr
    f = json.loads((out / "summary.json").read_text())["flows"][0]
    assert f["packets_lost"] == 0
    assert f["timeouts"] > 0, f
    assert f["spurious_timeouts"] == f["timeouts"]
    assert f["loss_event_rate"] == 0.0
