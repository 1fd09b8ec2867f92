"""scripts/warc_rounds.py: replaying a run's captured WARC arrivals through tfcc's receiver
reproduces the reports the run sent, the drops it counts from sequence gaps are the run's, and
bad input gets one line and exit 2."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "warc_rounds.py"

SCENARIO = """
name = "warc-rounds"
duration = "30s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "4Mbps", delay = "18ms", queue = "droptail", limit = 30 }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
protocol = "warc"
packet_size = "1000B"
params = { s = 40 }
[[flows]]
protocol = "cbr"
rate = "3Mbps"
[trace]
links = ["bottleneck", "bottleneck-rev"]
pcap = true
"""


def _module():
    spec = importlib.util.spec_from_file_location("warc_rounds", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = mod  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("warc-rounds")
    (d / "s.toml").write_text(SCENARIO)
    r = subprocess.run(
        [sys.executable, "-m", "tfcc", "run", d / "s.toml", "--out", d / "out", "--no-plots", "-q"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return d / "out"


def _script(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True, text=True)


def test_the_replay_reproduces_every_report_after_the_first(run: Path) -> None:
    # The first report answers the first packet before the sender has an RTT sample; the
    # replay's receiver sends it too but outside a round, so it is not in the table's rounds.
    r = _script(run, "--params", '{"s": 40}', "--shift", "19.25", "--step", "10")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    reproduced, total = (int(x) for x in lines[-2].split(": ")[1].split(",")[0].split(" of "))
    assert total > 300 and reproduced == total - 1, lines[-2]
    assert lines[-1].endswith(": 0 packets per RTT"), lines[-1]


def test_a_different_estimator_does_not_reproduce_the_reports(run: Path) -> None:
    # The check can fail: Table 3.1's s = 160 is not the run's s = 40.
    r = _script(run, "--shift", "19.25", "--step", "10")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    reproduced, total = (int(x) for x in lines[-2].split(": ")[1].split(",")[0].split(" of "))
    assert reproduced < total / 2, lines[-2]
    assert float(lines[-1].split(": ")[1].split()[0]) > 1, lines[-1]


def test_the_gaps_are_the_runs_drops(run: Path) -> None:
    # The simulator's own record of every drop at the bottleneck, up to each flow's last
    # packet through it (a drop after that leaves no gap).
    mod = _module()
    packets = mod.read_pcap(run / "trace-bottleneck.pcap")
    trace = pl.read_parquet(run / "trace.parquet").filter(pl.col("link") == "bottleneck")
    for flow in (0, 1):
        sent = trace.filter((pl.col("flow") == flow) & (pl.col("event") == "-"))["seq"].max()
        dropped = trace.filter(
            (pl.col("flow") == flow) & (pl.col("event") == "d") & (pl.col("seq") < sent)
        )
        gaps = mod.drops(packets, mod.FIRST_PORT + flow)
        assert len(dropped) > 20
        assert sum(n for _, n in gaps) == len(dropped)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{run}", "--params", "{x"], "--params: not JSON"),
        (["{run}", "--params", "[1]"], "--params: not a JSON object"),
        (["{run}", "--params", '{"bogus": 1}'], "unknown field `bogus`"),
        (["{run}", "--step", "0"], "--step: 0.0 is not a positive number"),
        (["{run}", "--packet-size", "20"], "--packet-size: 20 B is below the 36-byte header"),
        (["{run}/missing", "--to", "5"], "trace-bottleneck.pcap: No such file or directory"),
        (["{run}/missing"], "summary.json: no run's duration; give --to"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(run: Path, args: list[str], message: str) -> None:
    r = _script(*(a.replace("{run}", str(run)) for a in args))
    assert r.returncode == 2
    assert r.stdout == ""
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_file_that_is_not_a_pcap_is_refused(run: Path, tmp_path: Path) -> None:
    (tmp_path / "trace-bottleneck.pcap").write_bytes(b"\0" * 40)
    r = _script(tmp_path, "--to", "5")
    assert r.returncode == 2
    assert "not a little-endian pcap file (magic 0x00000000)" in r.stderr
