"""Bad input at the command line: one line on stderr naming the flag or key, its value and
what is valid, exit code 2, no traceback and no output directory (docs/scenarios.md,
"Errors"). Each test names what the command did before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SEED_RANGE = (
    "a seed is a whole number from 0 to 9223372036854775807 (a scenario file's seed is a TOML "
    "integer), got "
)

TINY = """
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "1Mbps", delay = "10ms", loss = { model = "bernoulli", p = 0.02 } }
[[flows]]
protocol = "tfrc"
"""


def tfcc(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused(r: subprocess.CompletedProcess[str], message: str) -> None:
    """`r` exited 2 with exactly one line on stderr, `error: ` and `message`."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr == f"error: {message}\n", r.stderr


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


@pytest.mark.parametrize("seed", ["-1", "18446744073709551615", "9223372036854775808", "x"])
def test_a_seed_off_its_range_is_one_line_in_run_compare_and_send(
    tiny: Path, tmp_path: Path, seed: str
) -> None:
    # Before: `tfcc run --seed -1` was clap's "unexpected argument '-1' found" with a tip to
    # write `-- -1`, and 2^63 ran, with a seed no scenario file can hold; `tfcc send` the same.
    out = tmp_path / "out"
    refused(tfcc("run", tiny, "--out", out, "--seed", seed), f"--seed: {SEED_RANGE}{seed}")
    assert not out.exists()
    refused(tfcc("send", "127.0.0.1:9", "--seed", seed), f"--seed: {SEED_RANGE}{seed}")
    if seed != "x":  # typer's own int check answers first, in its words
        refused(tfcc("compare", tiny, "--seed", seed), f"--seed: {SEED_RANGE}{seed}")


@pytest.mark.parametrize("seed", ["-1", "9223372036854775808"])
def test_a_seed_off_its_range_in_the_file_or_a_set_names_the_key(tiny: Path, seed: str) -> None:
    # Before: 2^63 via --set was "invalid type: string \"9223372036854775808\", expected a
    # whole number from 0 up" (not a TOML integer, so read as a string).
    for cmd in ("check", "sweep"):
        extra = ["--out", str(tiny.parent / "sw")] if cmd == "sweep" else []
        refused(
            tfcc(cmd, tiny, "--set", f"seed={seed}", *extra), f"{tiny}: seed: {SEED_RANGE}{seed}"
        )
    assert not (tiny.parent / "sw").exists()


def test_a_sweep_counting_past_the_largest_seed_is_refused_before_it_runs(
    tiny: Path, tmp_path: Path
) -> None:
    # Before: seeds 2^63 - 1 and 2^63 both ran, then writing the store failed with pyarrow's
    # OverflowError traceback (exit 1) and a half-written sweep directory.
    out = tmp_path / "sw"
    r = tfcc("sweep", tiny, "--out", out, "--seeds", "2", "--set", "seed=9223372036854775807")
    refused(
        r,
        "--seeds: 2 seeds counting up from the scenario's seed 9223372036854775807 pass the "
        "largest seed, 9223372036854775807",
    )
    assert not out.exists()


def test_the_largest_seed_runs_the_same_from_the_file_and_from_the_flag(
    tiny: Path, tmp_path: Path
) -> None:
    big = 2**63 - 1
    in_file = tmp_path / "in-file.toml"
    in_file.write_text(f"seed = {big}\n{TINY}")
    a, b = tmp_path / "a", tmp_path / "b"
    assert tfcc("run", in_file, "--out", a, "--no-plots", "-q").returncode == 0
    assert tfcc("run", tiny, "--out", b, "--seed", str(big), "--no-plots", "-q").returncode == 0
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for s in (sa, sb):
        s.pop("wall_seconds")
        s.pop("scenario")
    assert sa["seed"] == big
    assert sa == sb
    assert (a / "timeseries.parquet").read_bytes() == (b / "timeseries.parquet").read_bytes()


def test_a_byte_limit_below_a_packet_is_refused_before_the_run(tmp_path: Path) -> None:
    # Before: both flows ran 10 s at 0 b/s (TCP's 1040-byte segments and TFWC's 1000-byte
    # packets never fit a 1000-byte queue), exit 0.
    s = tmp_path / "s.toml"
    s.write_text(
        'duration = "10s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms", limit_bytes = 1000 }\n'
        '[[flows]]\nprotocol = "tfwc"\n[[flows]]\nprotocol = "tcp-sack"\n'
    )
    out = tmp_path / "out"
    refused(
        tfcc("run", s, "--out", out),
        f"{s}: topology.bottleneck.limit_bytes: 1000 B cannot admit the largest data packet of "
        "flow 0 (flows[0], `tfwc`) on link `bottleneck`, 1000 B on the wire: an arrival is "
        "refused once the bytes waiting plus its size reach the limit; give more than 1000 B",
    )
    assert not out.exists()


@pytest.mark.parametrize("override", ["sweep.seeds=3", "sweep={ seeds = 0 }", "sweep=3"])
def test_sweep_refuses_a_set_of_its_own_table(tiny: Path, tmp_path: Path, override: str) -> None:
    # Before: the override reached only the runs (the simulator ignores [sweep]) and the sweep
    # ran the file's single seed, exit 0.
    out = tmp_path / "sw"
    refused(
        tfcc("sweep", tiny, "--out", out, "--set", override),
        f"--set {override}: the [sweep] table is read from the file, not changed by --set "
        "(use --seeds N and --grid KEY=V1,V2 instead)",
    )
    assert not out.exists()


def test_a_sweep_grid_that_is_not_a_table_is_one_line_in_check_and_sweep(
    tmp_path: Path,
) -> None:
    # Before: `grid = 3` was an AttributeError traceback, exit 1, from both commands.
    s = tmp_path / "s.toml"
    s.write_text(TINY + "[sweep]\ngrid = 3\n")
    message = (
        f"{s}: sweep.grid: expected a table of axes, e.g. "
        '[sweep.grid] "topology.bottleneck.rate" = ["1Mbps", "2Mbps"]'
    )
    refused(tfcc("check", s), message)
    refused(tfcc("sweep", s, "--out", tmp_path / "sw"), message)
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize(
    ("cmd", "flag", "value", "what"),
    [
        (["send", "127.0.0.1:9"], "--duration", "-1s", 'a duration cannot be negative, got "-1s"'),
        (["send", "127.0.0.1:9"], "--report", "-1s", 'a duration cannot be negative, got "-1s"'),
        (
            ["send", "127.0.0.1:9", "--protocol", "cbr"],
            "--rate",
            "-5Mbps",
            'a rate cannot be negative, got "-5Mbps"',
        ),
        (["recv"], "--duration", "-1s", 'a duration cannot be negative, got "-1s"'),
        (["recv"], "--report", "-2ms", 'a duration cannot be negative, got "-2ms"'),
    ],
)
def test_a_negative_duration_or_rate_in_send_and_recv_is_named(
    cmd: list[str], flag: str, value: str, what: str
) -> None:
    # Before: clap's "unexpected argument '-1s' found" with a tip to write `-- -1s`, as for
    # `--seed -1`; the value is now read, and refused in the flag's own words.
    refused(tfcc(*cmd, flag, value), f"{flag} {value}: {what}")
