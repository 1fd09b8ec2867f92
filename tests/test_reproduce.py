"""The reproduction framework and the metrics, with a stand-in runner (no simulation)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tfcc
from tfcc import metrics, reproduce


def summary(*flows: tuple[str, float], util: float = 0.9) -> dict:
    return {
        "flows": [
            {
                "id": i,
                "protocol": proto,
                "throughput_bps": thr,
                "loss_event_rate": 0.01,
                "mean_rtt_s": 0.1,
                "cov": 0.1 * (i + 1),
            }
            for i, (proto, thr) in enumerate(flows)
        ],
        "links": [{"name": "bottleneck", "utilization": util}],
    }


def test_metrics_follow_their_formulas() -> None:
    s = summary(("tcp-sack", 3e6), ("tcp-sack", 1e6), ("tfrc", 2e6))
    assert metrics.throughput_bps(s, protocol="tcp") == 2e6
    assert metrics.throughput_kbyte_s(s, flow=2) == 250.0
    assert metrics.fairness_theta(s) == pytest.approx(0.5)
    assert metrics.jain(s) == pytest.approx(36e12 / (3 * 14e12))
    assert metrics.utilization(s) == 0.9
    assert metrics.cov(s, protocol="tcp") == pytest.approx(0.15)
    assert metrics.cov(s, flow=2) == pytest.approx(0.3)
    assert metrics.throughput_ratio(s, protocol="tcp", other="tfrc") == pytest.approx(1.0)
    assert metrics.throughput_ratio(s, protocol="tfrc", other="tcp") == pytest.approx(1.0)
    with pytest.raises(metrics.MetricError, match="delivered nothing"):
        metrics.throughput_ratio(
            summary(("tcp-sack", 1.0), ("tfrc", 0.0)), protocol="tcp", other="tfrc"
        )
    model = tfcc.padhye_rate(1000, 0.1, 0.01) * 8
    assert metrics.tcp_model_ratio(s, flow=0) == pytest.approx(3e6 / model)
    with pytest.raises(metrics.MetricError, match="needs TCP flows"):
        metrics.fairness_theta(summary(("tfrc", 1.0)), tcp="tcp")
    with pytest.raises(metrics.MetricError, match="no link"):
        metrics.utilization(s, link="access")


def test_reverse_flows_are_left_out_of_the_metrics_over_flows() -> None:
    # 002 Secs. 4.2/4.4's reverse-path TCP: θ, Jain, CoV and the per-protocol means are over
    # the forward flows; a reverse flow still answers when picked by id.
    s = summary(("tcp-sack", 3e6), ("tcp-sack", 1e6), ("tfrc", 2e6), ("tcp-sack", 9e6))
    s["flows"][3]["direction"] = "reverse"
    for f in s["flows"][:3]:
        f["direction"] = "forward"
    assert metrics.fairness_theta(s) == pytest.approx(0.5)
    assert metrics.jain(s) == pytest.approx(36e12 / (3 * 14e12))
    assert metrics.throughput_bps(s, protocol="tcp") == 2e6
    assert metrics.cov(s, protocol="tcp") == pytest.approx(0.15)
    assert metrics.throughput_bps(s, flow=3) == 9e6
    r = series_run({0: [1.0, 3.0] * 10, 1: [2.0] * 20})
    r.summary["flows"][1]["direction"] = "reverse"
    assert metrics.cov_at(r, 0.1) == pytest.approx(0.5)  # flow 0 alone
    s["flows"][0]["direction"] = s["flows"][1]["direction"] = "reverse"
    with pytest.raises(metrics.MetricError, match="needs TCP flows"):
        metrics.fairness_theta(s)


CLAIMS = """
title = "test"
[[claims]]
id = "a"
thesis = "004"
section = "Sec. 4.3.2"
claim = "within 30 %"
scenario = "x.toml"
metric = "throughput_kbyte_s"
args = { protocol = "tcp" }
seeds = [1, 2]
target = 100.0
tolerance = { rel = 0.3 }
quick = true

[[claims]]
id = "b"
thesis = "002"
section = "Sec. 5"
claim = "at least 0.95"
scenario = "x.toml"
metric = "jain"
min = 0.95
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "r.toml"
    p.write_text(text)
    return p


def test_claims_pass_and_fail_on_the_seed_average(tmp_path: Path) -> None:
    path = write(tmp_path, CLAIMS)
    seen = []

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        seen.append((scenario.name, seed))
        # 60 and 80 KByte/s: a mean of 70 is inside 100 ± 30 %; the 3:1 split fails Jain ≥ 0.95.
        return summary(("tcp", 480e3 if seed == 1 else 640e3), ("tfrc", 160e3))

    title, out = reproduce.run(str(path), runner=runner)
    assert title == "test"
    assert seen == [("x.toml", 1), ("x.toml", 2), ("x.toml", 1)]
    assert out[0].measured == pytest.approx(70.0)
    assert out[0].passed
    assert not out[1].passed
    assert out[0].claim.describe_target() == "100 ±30 %"
    assert out[1].claim.describe_target() == "≥ 0.95"
    _, quick = reproduce.run(str(path), quick=True, runner=runner)
    assert [o.claim.id for o in quick] == ["a"]


def test_a_metric_that_cannot_be_computed_fails_the_claim(tmp_path: Path) -> None:
    path = write(tmp_path, CLAIMS)
    _, out = reproduce.run(str(path), runner=lambda *_: summary(("tfrc", 1.0)))
    assert not out[0].passed
    assert "no flow of protocol 'tcp'" in out[0].error


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('metric = "jain"', 'metric = "speed"'), "unknown metric 'speed'"),
        (lambda t: t.replace("min = 0.95", ""), "needs a target"),
        (lambda t: t.replace('section = "Sec. 5"\n', ""), "missing section"),
        (lambda t: t.replace("{ rel = 0.3 }", "{ pct = 3 }"), r"claims\[0\]\.tolerance"),
        (lambda t: t.replace("[[claims]]", "[[claims]", 1), "invalid TOML"),
        (lambda t: t + 'colour = "red"\n', "unexpected keyword"),
        # Values of the wrong kind: each was a Python traceback in the run or the table
        # (a fuzz of the committed claim files, 2026-11-28, found 16 in 60 mutations).
        (lambda t: t.replace('id = "a"', "id = [1]"), r"claims\[0\]\.id: expected a string"),
        (lambda t: t.replace('id = "a"', "id = -1"), r"claims\[0\]\.id: expected a string"),
        (lambda t: t.replace('metric = "jain"', "metric = [0]"), r"\.metric: expected a string"),
        (lambda t: t.replace('scenario = "x.toml"', "scenario = true", 1), r"\.scenario: expected"),
        (lambda t: t.replace("min = 0.95", 'min = ["x"]'), r"claims\[1\]\.min: expected a number"),
        (lambda t: t.replace("target = 100.0", "target = nan"), r"\.target: expected a number"),
        (
            lambda t: t.replace("{ rel = 0.3 }", "{ rel = -1 }"),
            r"tolerance\.rel: must not be negative",
        ),
        (
            lambda t: t.replace("seeds = [1, 2]", "seeds = []"),
            r"\.seeds: expected a non-empty list",
        ),
        (
            lambda t: t.replace("seeds = [1, 2]", "seeds = [-1]"),
            r"\.seeds: a seed is a whole number",
        ),
        (lambda t: t.replace("quick = true", 'quick = "yes"'), r"\.quick: expected true or false"),
        (
            lambda t: t.replace('id = "b"', 'id = "a"'),
            r"claims\[1\]\.id: 'a' is also claims\[0\]'s",
        ),
        (
            lambda t: 'title = "t"\nclaims = 5\n',
            "expected \\[\\[claims\\]\\]",
        ),
    ],
)
def test_bad_claim_files_name_the_file_and_key(tmp_path: Path, edit, message: str) -> None:
    path = write(tmp_path, edit(CLAIMS))
    with pytest.raises(reproduce.ClaimFileError, match=message) as e:
        reproduce.load(str(path))
    assert str(path) in str(e.value)


def test_check_finds_a_set_the_scenario_refuses_without_running(tmp_path: Path) -> None:
    import subprocess
    import sys

    scen = tmp_path / "x.toml"
    scen.write_text(
        'duration = "2s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "1Mbps", delay = "10ms", queue = "droptail", limit = 20 }\n'
        '[[flows]]\nprotocol = "tcp-sack"\n[[flows]]\nprotocol = "tfrc"\n'
    )
    path = write(tmp_path, CLAIMS)
    _, claims, figures = reproduce.load_all(str(path))
    # a: 2 seeds, b: 1 seed, one scenario and no set: one distinct run
    assert reproduce.check_runs(claims, figures) == 1
    bad = write(
        tmp_path, CLAIMS.replace('metric = "jain"', 'metric = "jain"\nset = ["flows.5.count=1"]')
    )
    _, claims, figures = reproduce.load_all(str(bad))
    with pytest.raises(reproduce.ClaimFileError, match=r"^claim b: .*x\.toml: --set flows\.5"):
        reproduce.check_runs(claims, figures)
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", str(bad), "--check"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "there is no 5" in r.stderr and not list(tmp_path.glob("*results*"))
    # `tfcc check` given a claim file checks it the same way (it said "title: unknown field")
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "check", str(bad)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "claim b: " in r.stderr and "there is no 5" in r.stderr, r.stderr
    good = tmp_path / "good.toml"  # `bad` was written over `path` (write() has one name)
    good.write_text(CLAIMS)
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "check", str(good)], capture_output=True, text=True
    )
    assert (r.returncode, r.stdout) == (
        0,
        f"{good}: ok: 2 claims, 0 figures, 1 distinct run checked\n",
    )
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", "tfrc", "--check", "--quick"],
        capture_output=True,
        text=True,
    )
    quick = sum(c.quick for c in reproduce.load("tfrc")[1])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"tfrc: ok: {quick} claims, "), r.stdout


def test_check_with_the_testbed_backend_uses_the_testbeds_refusals(tmp_path: Path) -> None:
    # `--check --backend testbed` used to check the simulator only (and took any backend), so a
    # claim marked `testbed = true` that the testbed refuses passed the check and failed only
    # in the real-time run. A video source on a TCP flow runs in the simulator, not there.
    (tmp_path / "v.toml").write_text(
        'duration = "2s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms", queue = "droptail", limit = 20 }\n'
        '[[flows]]\nprotocol = "tfwc"\nsource = { kind = "video", fps = 30, rate = "1Mbps" }\n'
    )
    claim = (
        '[[claims]]\nid = "{id}"\nthesis = "002"\nsection = "s"\nclaim = "c"\n'
        'scenario = "v.toml"\nmetric = "frame_rate"\nmin = 1.0\n{extra}\n'
    )
    path = tmp_path / "r.toml"
    path.write_text(
        'title = "t"\n'
        + claim.format(id="video-tfwc", extra="testbed = true")
        + claim.format(
            id="video-tcp",
            extra='set = ["flows.0.protocol=tcp-sack", "flows.0.params={}"]',
        )
    )

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "tfcc.cli", "reproduce", str(path), "--check", *args]
        return subprocess.run(cmd, capture_output=True, text=True)

    r = check()
    assert (r.returncode, r.stdout) == (
        0,
        f"{path}: ok: 2 claims, 0 figures, 2 distinct runs checked\n",
    )
    # the unmarked TCP claim is not the testbed's to run, so it is not checked there
    r = check("--backend", "testbed")
    assert (r.returncode, r.stdout) == (
        0,
        f"{path}: ok on the testbed: 1 claim, 0 figures, 1 distinct run checked\n",
    ), r.stderr
    path.write_text(path.read_text().replace('params={}"]', 'params={}"]\ntestbed = true'))
    r = check()
    assert r.returncode == 0, r.stderr
    r = check("--backend", "testbed")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "claim video-tcp: " in r.stderr, r.stderr
    assert "TFRC, TFWC and CBR flows only, not on tcp-sack" in r.stderr, r.stderr
    # `tfcc check` on a claim file takes the backend too
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "check", str(path), "--backend", "testbed"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "claim video-tcp: " in r.stderr, r.stderr
    r = check("--backend", "tested")
    assert r.returncode == 2 and "--backend tested: unknown backend" in r.stderr, r.stderr


def test_every_claim_marked_for_the_testbed_passes_its_check() -> None:
    # What `tfcc reproduce NAME --backend testbed` would run, checked as the testbed checks it
    # (no root, nothing run): a mark on a claim whose runs the testbed refuses fails here.
    marked = 0
    for f in sorted((Path(__file__).parents[1] / "scenarios" / "reproduce").glob("*.toml")):
        _, claims, _ = reproduce.load_all(str(f))
        chosen = [c for c in claims if c.testbed]
        marked += len(chosen)
        reproduce.check_runs(chosen, [], backend="testbed")
    assert marked > 0


def test_an_unknown_reproduction_lists_the_available_ones() -> None:
    with pytest.raises(reproduce.ClaimFileError, match="no such reproduction"):
        reproduce.load("no-such-thesis")


def test_results_are_written_whole_with_every_claim(tmp_path: Path) -> None:
    path = write(tmp_path, CLAIMS)
    title, out = reproduce.run(
        str(path), runner=lambda *_: summary(("tcp", 560e3), ("tfrc", 560e3))
    )
    dest = tmp_path / "res"
    reproduce.write_results(dest, title, out)
    table = (dest / "results.md").read_text()
    assert (
        "| a | 004 Sec. 4.3.2 | within 30 % | 100 ±30 % | 70 | 70, 70 | [70, 70] | pass |" in table
    )
    assert "| b | 002 Sec. 5 | at least 0.95 | ≥ 0.95 | 1 | 1 | — | pass |" in table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.toml", "res"]


def test_an_out_of_the_users_own_files_is_refused_before_any_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    mine = tmp_path / "papers"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep")
    assert "not a reproduction's results" in (reproduce.check_out(mine) or "")
    path = write(tmp_path, CLAIMS)
    _, out = reproduce.run(str(path), runner=lambda *_: summary(("tcp", 560e3), ("tfrc", 560e3)))
    with pytest.raises(OSError, match="not a reproduction's results"):
        reproduce.write_results(mine, "t", out)
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    # an earlier reproduction's results are replaced; a file or /proc is refused
    reproduce.write_results(tmp_path / "res", "t", out)
    assert reproduce.check_out(tmp_path / "res") is None
    assert "not a directory" in (reproduce.check_out(path) or "")
    assert "cannot write there" in (reproduce.check_out(Path("/proc/tfcc-test/res")) or "")
    # the CLI says so at once (exit 2), without running the claims first
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", "tfrc", "--quick", "--out", str(mine)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: --out {mine}: exists and holds files"), r.stderr
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]


def test_ctrl_c_stops_a_reproduction_with_one_message(tmp_path: Path) -> None:
    from interrupt import interrupt_when
    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR.replace('duration = "3s"', 'duration = "3000s"'))
    path = write(tmp_path, CLAIMS.replace("seeds = [1, 2]", f"seeds = {list(range(1, 41))}"))
    runs = tmp_path / "runs"
    code, err = interrupt_when(
        ["reproduce", path, "--runs", runs],
        lambda: bool(list(runs.glob("*/runs/*/summary.json"))),
    )
    assert code == 130, err
    assert err.endswith(
        f"interrupted; the finished runs are kept in {runs}: the same command reuses them\n"
    ), err
    assert "Traceback" not in err


def test_the_cli_rejects_an_unknown_reproduction_with_exit_2() -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", "no-such-thesis"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "no such reproduction" in r.stderr
    assert "Traceback" not in r.stderr
    # ux3: the name as typed, not the claim file it was looked up as
    assert r.stderr.startswith("error: no-such-thesis: no such reproduction"), r.stderr


def test_the_tcp_claims_of_issue_4_reproduce_in_the_simulator(tmp_path: Path) -> None:
    """004 E1b's TCP rows and the TCP-model claims, run for real (five claims, three seeds each)."""
    text = (reproduce.CLAIMS_DIR / "tfrc.toml").read_text()
    scen = reproduce.CLAIMS_DIR.parent
    text = text.replace('scenario = "../', f'scenario = "{scen}/')
    path = write(tmp_path, text)
    # Only these claims run (the whole file took 54 s of the suite for five claims).
    _, claims = reproduce.load(str(path))
    chosen = [c for c in claims if c.id.startswith(("e1b-tcp", "tcp-model"))]
    _, tcp = reproduce.run(str(path), chosen=chosen)
    assert len(tcp) == 5
    for o in tcp:
        assert o.passed, (o.claim.id, o.measured, o.claim.describe_target(), o.error)


def test_max_min_and_model_ratio_follow_004_eqs() -> None:
    s = summary(("tfrc", 3e6), ("tfrc", 1e6), ("tcp-sack", 2e6))
    # Eq. 4.7: min/max over the TFRC flows only.
    assert metrics.max_min(s, protocol="tfrc") == pytest.approx(1 / 3)
    assert metrics.max_min(s) == pytest.approx(1 / 3)
    with pytest.raises(metrics.MetricError, match="delivered data"):
        metrics.max_min(summary(("tfrc", 0.0), ("tfrc", 0.0)))
    # E14: B_f over Eq. 2.7 at the flow's p = 0.01 and RTT = 0.1 s with 1460-byte packets.
    model = tfcc.padhye_rate(1460, 0.1, 0.01) * 8
    assert metrics.model_ratio(s, flow=2) == pytest.approx(2e6 / model)
    # b = 2 (delayed ACKs) and the RTT of the other protocol's flows: the TCP's own SRTT of 0.5 s
    # (a coarse clock) is replaced by the TFRC flows' mean RTT, (0.1 + 0.2)/2.
    s["flows"][2]["mean_rtt_s"] = 0.5
    s["flows"][1]["mean_rtt_s"] = 0.2
    model2 = tfcc.padhye_rate(1460, 0.15, 0.01, b=2) * 8
    assert model2 < tfcc.padhye_rate(1460, 0.15, 0.01) * 8
    assert metrics.model_ratio(s, flow=2, b=2, rtt_of="tfrc") == pytest.approx(2e6 / model2)
    own = tfcc.padhye_rate(1460, 0.5, 0.01, b=2) * 8
    assert metrics.model_ratio(s, protocol="tcp", b=2) == pytest.approx(2e6 / own)
    s["flows"][0]["mean_rtt_s"] = None
    with pytest.raises(metrics.MetricError, match="no RTT to lend"):
        metrics.model_ratio(s, flow=2, rtt_of="tfrc")


def test_model_ratio_per_run_is_one_point_per_run() -> None:
    # 004 Sec. 4.11: a point is a run's mean throughput at its mean RTT and loss event rate,
    # not the mean of per-flow ratios.
    s = summary(("tfrc", 3e6), ("tfrc", 1e6), ("tcp-sack", 2e6))
    s["flows"][0]["loss_event_rate"] = 0.02
    s["flows"][1]["mean_rtt_s"] = 0.3
    model = tfcc.padhye_rate(1460, 0.2, 0.015, b=2) * 8
    got = metrics.model_ratio(s, protocol="tfrc", b=2, per_run=True)
    assert got == pytest.approx(2e6 / model)
    per_flow = metrics.model_ratio(s, protocol="tfrc", b=2)
    assert per_flow != pytest.approx(got)
    # rtt_of lends the other protocol's mean RTT, as in the per-flow form.
    model_tcp = tfcc.padhye_rate(1460, 0.2, 0.01, b=2) * 8
    assert metrics.model_ratio(
        s, protocol="tcp", b=2, rtt_of="tfrc", per_run=True
    ) == pytest.approx(2e6 / model_tcp)
    s["flows"][2]["loss_event_rate"] = None
    with pytest.raises(metrics.MetricError, match="no loss event rate"):
        metrics.model_ratio(s, protocol="tcp", per_run=True)


def test_send_rate_ratio_counts_packets_sent_per_flow() -> None:
    # 004 Sec. 4.8.2 (E11) compares sending rates: packets sent per flow, drops included.
    s = summary(("tcp-reno", 9e5), ("tcp-reno", 1e6), ("tfrc", 1e5))
    for f, sent in zip(s["flows"], (900, 1100, 250), strict=True):
        f["packets_sent"] = sent
    assert metrics.send_rate_ratio(s, protocol="tfrc", other="tcp") == pytest.approx(0.25)
    assert metrics.send_rate_ratio(s, protocol="tcp", other="tfrc") == pytest.approx(4.0)
    for f in s["flows"][:2]:
        f["packets_sent"] = 0
    with pytest.raises(metrics.MetricError, match="no packets sent"):
        metrics.send_rate_ratio(s, protocol="tfrc", other="tcp")


def test_loss_response_measures_the_time_to_within_ten_percent() -> None:
    # A step to the rate the history already holds is met at once: R = 0 (Eq. 4.12). At p = 1
    # every interval is exactly one packet, so the history holds exactly that rate.
    assert metrics.loss_response_s(None, seed=1, p_from=1.0, p_to=1.0, runs=3) == 0.0
    # 10 % → 0.1 % with no deweighting: the open interval alone must carry the average from
    # about 10 packets to 909 (within 10 % of 1000): cur ≈ 6·909 − 5·10 ≈ 5400 packets, sent at
    # Eq. 2.7's rate for the falling estimate; at 38 packets/RTT (0.1 %) that alone takes 7 s.
    off = metrics.loss_response_s(None, seed=1, discounting="off", runs=5)
    remodel = metrics.loss_response_s(None, seed=1, discounting="remodel", runs=5)
    assert 7.0 < off < 60.0
    assert remodel < off
    # The weights reach the history: equal weights give a different (here slower) response.
    equal = metrics.loss_response_s(None, seed=1, discounting="remodel", runs=5, weights="equal")
    assert equal != remodel
    # Never within the band: the cap.
    capped = metrics.loss_response_s(None, seed=1, p_to=1e-7, runs=1, cap_s=5.0)
    assert capped == 5.0


def test_loss_prediction_error_is_zero_when_the_future_is_the_past() -> None:
    # Every packet lost (p = 1 throughout): l_est = 1 and the next 10 s lose 1.0 of the packets.
    err = metrics.loss_prediction_error(None, seed=1, p_range=(1.0, 1.0), duration_s=60)
    assert err == 0.0
    # A constant 1 % (Bernoulli): the error is the future window's own sampling noise, about
    # sqrt(p/500) = 0.0045 for 500 packets, so well below p itself.
    err = metrics.loss_prediction_error(
        None, seed=1, p_range=(0.01, 0.01), duration_s=400, hold_s=1e9
    )
    assert 0.001 < err < 0.008
    best = metrics.loss_prediction_best_n(None, seed=1, sizes=(8,), duration_s=200)
    assert best == 8.0
    with pytest.raises(metrics.MetricError, match="too short"):
        metrics.loss_prediction_error(None, seed=1, duration_s=5)


def test_variants_versus_and_trace_claims(tmp_path: Path) -> None:
    text = """
[[claims]]
id = "v"
thesis = "004"
section = "Sec. 4.5"
claim = "variants average, versus divides"
scenario = "x.toml"
metric = "throughput_kbyte_s"
variants = [["n=1"], ["n=3"]]
versus = { set = ["slow"] }
seeds = [1]
target = 2.0
tolerance = { abs = 0.01 }

[[claims]]
id = "t"
thesis = "004"
section = "Sec. 4.8.1"
claim = "a trace claim runs no scenario"
metric = "loss_response_s"
args = { p_from = 1.0, p_to = 1.0, runs = 2 }
seeds = [1, 2]
max = 0.0
"""
    seen = []

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        seen.append(overrides)
        n = int(overrides[0].split("=")[1])
        kbyte = 100.0 * n * (0.5 if "slow" in overrides else 1.0)
        return summary(("tcp", kbyte * 8000))

    _, out = reproduce.run(str(write(tmp_path, text)), runner=runner)
    # (100 + 300)/2 = 200 over (50 + 150)/2 = 100.
    assert out[0].measured == pytest.approx(2.0), out[0].error
    assert seen == [["n=1"], ["n=3"], ["n=1", "slow"], ["n=3", "slow"]]
    assert out[1].passed and out[1].per_seed == [0.0, 0.0]
    assert json_ok(reproduce.to_json(out))


def json_ok(text: str) -> bool:
    import json

    rows = json.loads(text)
    return rows[1]["claim"]["scenario"] is None


FIGURES = """
[[claims]]
id = "a"
thesis = "004"
section = "Sec. 4.3.1"
claim = "utilisation"
scenario = "SCEN"
metric = "utilization"
min = 0.0

[[figures]]
id = "fig"
title = "a figure"
scenario = "SCEN"
set = ["duration=20s", "measure_from=5s"]
plot = ["throughput", "rate"]
smooth = "1s"
"""


def test_figures_are_drawn_as_png_beside_the_table(tmp_path: Path) -> None:
    scen = reproduce.CLAIMS_DIR.parent / "004-e1c-delay.toml"
    path = write(tmp_path, FIGURES.replace("SCEN", str(scen)))
    _, claims, figures = reproduce.load_all(str(path))
    assert [f.id for f in figures] == ["fig"]
    assert figures[0].smooth_s() == 1.0
    assert figures[0].after_s() == 0.0
    short = claims[0]
    short.set = ["duration=20s", "measure_from=5s"]
    title, out = reproduce.run(str(path))
    dest = tmp_path / "res"
    reproduce.write_results(dest, title, out, figures)
    png = dest / "figures" / "fig.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 1000
    # The IHDR chunk: a nonzero width and height.
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 0 and height > 0


def test_a_figure_draws_from_its_after_time() -> None:
    # Samples every 0.5 s from 0.5 to 5 s; after = "2s" keeps those at 2 s and later.
    t = [0.5 * (i + 1) for i in range(10)]
    run = metrics.RunResult(
        {"flows": [{"id": 0, "protocol": "tfrc"}]},
        {"t": t, "flow": [0] * 10, "throughput_bps": [8000.0] * 10},
    )
    fig = reproduce.Figure(id="f", title="t", scenario=Path("x"), after="2s")
    (panel,) = reproduce.figure_panels(fig, run)
    (_, xs, _) = panel["lines"][0]
    assert xs == t[3:]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('plot = ["throughput", "rate"]', 'plot = ["speed"]'), "unknown panel"),
        (lambda t: t.replace('smooth = "1s"', 'smooth = "fast"'), "smooth must be"),
        (lambda t: t.replace('smooth = "1s"', 'after = "-2s"'), "after must be"),
        (lambda t: t.replace('title = "a figure"\n', ""), "missing title"),
    ],
)
def test_bad_figures_name_the_file_and_key(tmp_path: Path, edit, message: str) -> None:
    path = write(tmp_path, edit(FIGURES.replace("SCEN", "x.toml")))
    with pytest.raises(reproduce.ClaimFileError, match=message) as e:
        reproduce.load_all(str(path))
    assert "figures[0]" in str(e.value)


def series_run(values: dict[int, list[float]], dt: float = 0.1, start: float = 0.0):
    """A RunResult whose flows have the given throughput samples, one every ``dt`` s."""
    t, fl, v = [], [], []
    for fid, xs in values.items():
        for i, x in enumerate(xs):
            t.append(round((i + 1) * dt, 9))
            fl.append(fid)
            v.append(x)
    s = summary(*[("tfwc", 1.0) for _ in values])
    s["measure_from_s"] = start
    return metrics.RunResult(s, {"t": t, "flow": fl, "throughput_bps": v})


def test_cov_at_a_timescale_bins_the_series_as_eq_4_4() -> None:
    # Flow 0 alternates 1 and 3 every 0.5 s (5 samples of 0.1 s each): bins 1, 3, 1, 3 give
    # a mean of 2 and a population deviation of 1, so CoV(0.5 s) = 0.5. At 1 s each bin holds
    # one 1 and one 3, so CoV(1 s) = 0. Flow 1 is constant: CoV 0 at both.
    flow0 = ([1.0] * 5 + [3.0] * 5) * 2
    r = series_run({0: flow0, 1: [2.0] * 20})
    assert metrics.cov_at(r, 0.5, flow=0) == pytest.approx(0.5)
    assert metrics.cov_at(r, 1.0, flow=0) == pytest.approx(0.0)
    assert metrics.cov_at(r, 0.5, flow=1) == pytest.approx(0.0)
    assert metrics.cov_at(r, 0.5) == pytest.approx(0.25)  # the mean CoV over both flows
    # The measurement window drops the first second: bins 1, 3 remain, CoV still 0.5; from
    # 1.5 s on only the 3 and the 1 of the second period: one bin each, CoV 0.5 again.
    assert metrics.cov_at(series_run({0: flow0}, start=1.0), 0.5) == pytest.approx(0.5)
    # A partial trailing bin is left out: 7 samples at 0.5 s is one bin, too few for a CoV.
    with pytest.raises(metrics.MetricError, match="fewer than two"):
        metrics.cov_at(series_run({0: [1.0] * 7}), 0.5)
    with pytest.raises(metrics.MetricError, match="not a multiple"):
        metrics.cov_at(r, 0.25)
    with pytest.raises(metrics.MetricError, match="RunResult"):
        metrics.cov_at(summary(("tfwc", 1.0)), 0.5)


def test_variability_is_eq_4_9_averaged_as_eq_4_10() -> None:
    # 1 s samples 1, 3, 1, 3 from t0 = 0, δ1 = 1 s, δ2 = 2 s: at 1 s the 2 s window is clipped
    # to (0, 1] (Eq. 4.1), B1 = B2 = 1, G = 0; at 2, 3 and 4 s B1 is 3, 1, 3 against B2 = 2:
    # G = 0.5 each. The mean over the four terms is 0.375.
    t, v = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 1.0, 3.0]
    assert metrics.variability_of(t, v, 0.0, 4.0, 1.0, 2.0) == pytest.approx(0.375)
    # Scale-free: the same series in other units gives the same G.
    assert metrics.variability_of(t, [x * 1e6 for x in v], 0.0, 4.0, 1.0, 2.0) == pytest.approx(
        0.375
    )
    # A constant rate has variability 0 (Sec. 4.1.4).
    assert metrics.variability_of(t, [5.0] * 4, 0.0, 4.0, 1.0, 2.0) == 0.0
    # Perfect oscillation between 0 and 2·B_f has variability 1 once δ2 spans whole cycles:
    # a 64 s square wave (Fig. 4.1's 1/64 Hz) against δ2 = 128 s, over 40 000 s (the first
    # 128 s, where the δ2 window is clipped, pull the mean a little under 1).
    tt = [0.1 * (i + 1) for i in range(400_000)]
    sq = [2.0 if (x % 64.0) < 32.0 else 0.0 for x in tt]
    assert metrics.variability_of(tt, sq, 0.0, 40_000.0, 1.0, 128.0) == pytest.approx(1.0, abs=0.01)
    with pytest.raises(metrics.MetricError, match="δ1 < δ2"):
        metrics.variability_of(t, v, 0.0, 4.0, 2.0, 2.0)
    with pytest.raises(metrics.MetricError, match="not a multiple"):
        metrics.variability_of(t, v, 0.0, 4.0, 1.5, 3.0)


def test_variability_ratio_takes_the_worst_pair_of_table_4_7() -> None:
    # Flow 0 (TFRC) constant, flow 1 (TCP) alternating 1 and 3 every 10 s: TFRC's G is 0 at
    # every pair, so the largest ratio is 0. Swapped, TFRC varies where TCP does not: inf.
    steady, swinging = [2.0] * 600, [1.0] * 100 + [3.0] * 100
    r = series_run({0: steady, 1: swinging * 3})
    r.summary["flows"][0]["protocol"] = "tfrc"
    r.summary["flows"][1]["protocol"] = "tcp-reno"
    # A 60 s window: the pairs with δ1 = 128 s and 512 s have no term and are left out
    # (without sim_seconds the window is unbounded and δ1 = 128 s would find no interval).
    r.summary["sim_seconds"] = 60.0
    assert metrics.variability_ratio(r, "tfrc", "tcp") == 0.0
    assert metrics.variability_ratio(r, "tcp", "tfrc") == math.inf
    with pytest.raises(metrics.MetricError, match="neither"):
        metrics.variability_ratio(r, "tfrc", "tfrc")
    del r.summary["sim_seconds"]
    with pytest.raises(metrics.MetricError, match="no 128 s interval"):
        metrics.variability_ratio(r, "tfrc", "tcp")
    assert len(metrics.VARIABILITY_GRID) == 15


def test_stall_fraction_counts_the_empty_bins() -> None:
    # Flow 0 delivers nothing in the second and fourth of four 0.5 s bins (one non-zero sample
    # in a bin is enough not to stall): 2/4. Flow 1 never stalls; the mean is 0.25.
    flow0 = [1.0] * 5 + [0.0] * 5 + [0.0] * 4 + [1.0] + [0.0] * 5
    r = series_run({0: flow0, 1: [2.0] * 20})
    assert metrics.stall_fraction(r, 0.5, flow=0) == pytest.approx(0.5)
    assert metrics.stall_fraction(r, 0.5) == pytest.approx(0.25)


def test_refill_time_waits_from_the_cbr_stop_to_the_refilled_pipe() -> None:
    # 0.1 s samples. The CBR (flow 1) sends in the first 4 intervals: its last busy interval
    # ends at 0.4 s. Flow 0 reaches 9 of a 10 bit/s link (level 0.9) at the interval ending
    # 0.7 s: a refill time of 0.3 s.
    r = series_run({0: [5, 5, 5, 5, 6, 8, 9, 10], 1: [5, 5, 5, 5, 0, 0, 0, 0]})
    r.summary["flows"][1]["protocol"] = "cbr"
    assert metrics.refill_time(r, capacity_bps=10.0) == pytest.approx(0.3)
    assert metrics.refill_time(r, capacity_bps=10.0, level=1.0) == pytest.approx(0.4)
    with pytest.raises(metrics.MetricError, match="not refilled"):
        metrics.refill_time(r, capacity_bps=20.0)
    with pytest.raises(metrics.MetricError, match="no CBR source stops"):
        metrics.refill_time(series_run({0: [1.0] * 8, 1: [1.0] * 8}), capacity_bps=1.0)


def test_backoff_time_waits_from_the_cbr_start_to_the_cut_rate() -> None:
    # 0.1 s samples, a 10 bit/s link. CBR A (flow 1) at 6 bit/s is busy from the interval
    # (0.2, 0.3]: it starts at 0.2 s; the share it leaves is 4, within 10 % 4.4. Flow 0 is at
    # or below 4.4 from the interval ending 0.6 s: 0.4 s. CBR B (flow 2) starts at 1.0 s and
    # flow 0 is cut at the interval ending 1.2 s: 0.2 s. The mean is 0.3 s; index picks one.
    f0 = [9, 9, 9, 8, 6, 4, 4, 9, 9, 9, 8, 4, 4, 9]
    ca = [0, 0, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0, 0, 0]
    cb = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 6, 0]
    r = series_run({0: f0, 1: ca, 2: cb})
    r.summary["flows"][1]["protocol"] = "cbr"
    r.summary["flows"][2]["protocol"] = "cbr"
    assert metrics.backoff_time(r, capacity_bps=10.0, cbr_bps=6.0) == pytest.approx(0.3)
    assert metrics.backoff_time(r, 10.0, 6.0, index=0) == pytest.approx(0.4)
    assert metrics.backoff_time(r, 10.0, 6.0, index=1) == pytest.approx(0.2)
    # Exactly the share (level 1.0): 4 is reached at the same samples.
    assert metrics.backoff_time(r, 10.0, 6.0, level=1.0, index=0) == pytest.approx(0.4)
    # A CBR that starts before the measurement window is left out.
    r.summary["measure_from_s"] = 0.5
    assert metrics.backoff_time(r, 10.0, 6.0) == pytest.approx(0.2)
    with pytest.raises(metrics.MetricError, match="no CBR start number 1"):
        metrics.backoff_time(r, 10.0, 6.0, index=1)
    r.summary["measure_from_s"] = 0.0
    with pytest.raises(metrics.MetricError, match="not cut"):
        metrics.backoff_time(r, 10.0, 7.0)
    with pytest.raises(metrics.MetricError, match="no share"):
        metrics.backoff_time(r, 10.0, 10.0)
    with pytest.raises(metrics.MetricError, match="no CBR source starts"):
        metrics.backoff_time(series_run({0: [1.0] * 4, 1: [1.0] * 4}), 10.0, 6.0)


def test_flow_throughput_ratio_compares_groups_by_id() -> None:
    # Flows 0-1 (one path) at 1 and 3, flows 2-3 (another) at 4 and 4: 2 / 4 = 0.5.
    s = summary(("ttfwc", 1.0), ("ttfwc", 3.0), ("ttfwc", 4.0), ("ttfwc", 4.0))
    assert metrics.flow_throughput_ratio(s, flows=[0, 1], others=[2, 3]) == pytest.approx(0.5)
    assert metrics.flow_throughput_ratio(s, flows=[2, 3], others=[0]) == pytest.approx(4.0)
    with pytest.raises(metrics.MetricError, match="no flow with id 7"):
        metrics.flow_throughput_ratio(s, flows=[7], others=[0])
    with pytest.raises(metrics.MetricError, match="at least one"):
        metrics.flow_throughput_ratio(s, flows=[], others=[0])


def test_mean_cwnd_averages_the_window_samples() -> None:
    # cwnd samples every 0.1 s; the window from 0.2 s keeps the samples ending at 0.3 s and
    # later: flow 0 (4, 6) → 5, flow 1 (10, 10) → 10; the mean over both is 7.5.
    r = series_run({0: [1.0] * 4, 1: [1.0] * 4}, start=0.2)
    r.flow_series["cwnd"] = [2.0, 2.0, 4.0, 6.0, 1.0, 1.0, 10.0, 10.0]
    assert metrics.mean_cwnd(r, flow=0) == pytest.approx(5.0)
    assert metrics.mean_cwnd(r) == pytest.approx(7.5)
    with pytest.raises(metrics.MetricError, match="RunResult"):
        metrics.mean_cwnd(summary(("tfwc", 1.0)))


def test_idle_bandwidth_use_and_link_loss_follow_their_formulas() -> None:
    # 15 Mb/s link, 80 % busy; the CBR delivered 5 Mb/s: the others carried 12 − 5 = 7 Mb/s of
    # the 10 Mb/s the CBR left idle, a use of 0.7.
    s = summary(("cbr", 5e6), ("tcp-sack", 3e6), ("tcp-sack", 3e6), util=0.8)
    assert metrics.idle_bandwidth_use(s, capacity_bps=15e6) == pytest.approx(0.7)
    s["flows"][1]["timeouts"], s["flows"][2]["timeouts"] = 3, 6
    assert metrics.timeouts(s, protocol="tcp") == pytest.approx(4.5)
    with pytest.raises(metrics.MetricError, match="no timeout count"):
        metrics.timeouts(s)
    s["links"][0].update(drops=30, arrivals=1200)
    assert metrics.link_loss_rate(s) == pytest.approx(0.025)
    # The queue held 12.5 packets on average; a link without the field, or no such link, errs.
    s["links"][0]["mean_queue_pkts"] = 12.5
    assert metrics.mean_queue_pkts(s) == 12.5
    with pytest.raises(metrics.MetricError, match="no link named"):
        metrics.mean_queue_pkts(s, link="access-down")
    del s["links"][0]["mean_queue_pkts"]
    with pytest.raises(metrics.MetricError, match="no mean queue"):
        metrics.mean_queue_pkts(s)
    with pytest.raises(metrics.MetricError, match="no idle"):
        metrics.idle_bandwidth_use(s, capacity_bps=4e6)


def test_a_versus_claim_measures_the_ratio_of_two_runs_per_seed(tmp_path: Path) -> None:
    versus = 'versus = { set = ["flows.0.protocol=tcp-sack"], args = { protocol = "tfrc" } }'
    path = write(tmp_path, CLAIMS.replace("quick = true", f"quick = true\n{versus}"))
    seen = []

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        seen.append((overrides, seed))
        return summary(("tcp", 80e3 * seed), ("tfrc", 100e3))

    _, out = reproduce.run(str(path), quick=True, runner=runner)
    # Per seed: TCP's 80e3·seed bit/s over TFRC's 100e3 in the versus run: 0.8 and 1.6.
    assert seen[:2] == [([], 1), (["flows.0.protocol=tcp-sack"], 1)]
    assert out[0].per_seed == pytest.approx([0.8, 1.6])
    assert out[0].measured == pytest.approx(1.2)
    # Without `set`, the versus side is another metric of the same run: no second run.
    seen.clear()
    versus = 'versus = { args = { protocol = "tfrc" } }'
    path = write(tmp_path, CLAIMS.replace("quick = true", f"quick = true\n{versus}"))
    _, out = reproduce.run(str(path), quick=True, runner=runner)
    assert seen == [([], 1), ([], 2)]
    assert out[0].per_seed == pytest.approx([0.8, 1.6])


def test_the_s3_heat_map_runs_every_grid_point_and_draws_it(tmp_path: Path) -> None:
    from tfcc import heatmap

    seen = []

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        seen.append(overrides)
        n = int(overrides[2].split("=")[1])
        return summary(("tcp-sack", 1.0), ("tfwc", float(n)))  # θ = 1/(1+n)

    grid = heatmap.theta_grid([1, 5], [1, 3], "tfwc", [1, 2], runner)
    assert grid == [[0.5, 0.5], [0.25, 0.25]]
    assert len(seen) == 8
    # 5 Mb/s at 44 ms is 27.5 packets: 28; 1 Mb/s is below the floor of 15.
    assert "topology.bottleneck.limit=28" in seen[2] and "topology.bottleneck.limit=15" in seen[0]
    # n reverse-path TCP flows beside the n + n forward ones.
    assert "flows.2.count=1" in seen[0] and "flows.2.count=3" in seen[4]
    heatmap.plot(grid, [1, 5], [1, 3], "t", tmp_path / "m.png")
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("name", ["tfwc", "ttfwc", "ptcp", "msfrs"])
def test_the_tfwc_and_ttfwc_claim_files_load_with_known_scenarios(name: str) -> None:
    _, claims = reproduce.load(name)
    assert any(c.quick for c in claims)
    assert len({c.id for c in claims}) == len(claims)
    for c in claims:
        if c.scenario is None:  # a trace claim (msfrs' Fig. 4.5 analysis): no run
            assert c.metric in metrics.METRICS, c.id
            continue
        assert c.scenario.is_file(), (c.id, c.scenario)


def web_summary() -> dict:
    """An access-gateway summary with worked numbers: class 0 gets 4000 B/s in seconds 0-1 and
    0 after, class 2 1000 B/s throughout; 8 users in class 0 and 4 in class 2."""
    return {
        "sim_seconds": 4.0,
        "web": {
            "mean_latency_s": 2.5,
            "classes": [
                {
                    "throughput_bps": 16000.0,
                    "per_user_bps": 2000.0,
                    "mean_latency_s": 1.5,
                    "bytes_per_second": [4000, 4000, 0, 0],
                },
                {
                    "throughput_bps": 0.0,
                    "per_user_bps": 0.0,
                    "mean_latency_s": None,
                    "bytes_per_second": [],
                },
                {
                    "throughput_bps": 8000.0,
                    "per_user_bps": 2000.0 / 4,
                    "mean_latency_s": 4.0,
                    "bytes_per_second": [1000, 1000, 1000, 1000],
                },
            ],
            "windows": [
                {"t": 5.0, "window_max": 10.0, "utilization": 0.96},
                {"t": 10.0, "window_max": 12.0, "utilization": 1.0},
                {"t": 15.0, "window_max": 14.0, "utilization": 0.98},
            ],
        },
    }


def test_web_service_s_weights_the_classes_by_their_transactions() -> None:
    classes = [
        {"transactions": 3, "mean_service_s": 1.0},
        {"transactions": 0, "mean_service_s": None},
        {"transactions": 1, "mean_service_s": 5.0},
    ]
    assert metrics.web_service_s({"web": {"classes": classes}}) == pytest.approx(2.0)
    with pytest.raises(metrics.MetricError):
        metrics.web_service_s({"web": {"classes": [classes[1]]}})


def test_web_metrics_follow_their_formulas() -> None:
    s = web_summary()
    # 8 · (4000 + 4000) / 2 s = 32 kb/s in seconds [0, 2); 8 · 1000 = 8 kb/s for class 2.
    assert metrics.web_class_rate_bps(s, 0, 0, 2) == 32000.0
    assert metrics.web_class_rate_bps(s, 0) == 16000.0
    assert metrics.web_share_ratio(s, 0, 2, 0, 2) == 4.0
    assert metrics.web_share_ratio(s, 0, 2, 2, 4) == 0.0
    assert metrics.web_share_ratio(s, 0, 2) == 2.0
    # Per user: 2000 / 500.
    assert metrics.web_per_user_ratio(s, 0, 2) == 4.0
    assert metrics.web_per_user_rate_bps(s, 0) == 2000.0
    assert metrics.web_latency_s(s) == 2.5 and metrics.web_latency_s(s, 2) == 4.0
    # W+ 12 and 14 in (5, 15]: mean 13, spread (14 − 12)/13.
    assert metrics.web_window_mean(s, 5, 15) == 13.0
    assert metrics.web_window_change(s, 5, 15) == pytest.approx(2 / 13)
    assert metrics.web_window_change(s, 10, 15) == 0.0
    assert metrics.web_utilization(s, 0, 15) == pytest.approx(0.98)
    for bad in (
        lambda: metrics.web_share_ratio(s, 0, 1),
        lambda: metrics.web_latency_s(s, 1),
        lambda: metrics.web_class_rate_bps(s, 3),
        lambda: metrics.web_window_mean(s, 15, 20),
        lambda: metrics.web_class_rate_bps(s, 0, 2, 2),
        lambda: metrics.web_latency_s({"flows": []}),
    ):
        with pytest.raises(metrics.MetricError):
            bad()


# --- the generated blocks of docs/reproductions/ (--update-doc, scripts/reproduction_counts.py) ---

PAGE = """# A reproduction

Some prose that names the marker `<!-- results:begin -->` in passing.

## Status

<!-- results:begin -->
| stale | table |
|---|---|
<!-- results:end -->

- a failing claim, with its reason

## History

Older text, kept byte for byte.\r
"""


def _outcomes(tmp_path: Path) -> tuple[str, list[reproduce.Outcome]]:
    path = write(tmp_path, CLAIMS)
    return reproduce.run(str(path), runner=lambda *_: summary(("tcp", 560e3), ("tfrc", 160e3)))


def _info(name: str = "tfrc", quick: bool = False) -> reproduce.RunInfo:
    return reproduce.RunInfo(name, quick, "2026-11-26 14:50 UTC", "abc1234", 83.4)


def test_update_page_replaces_only_the_marked_block(tmp_path: Path) -> None:
    _, out = _outcomes(tmp_path)
    page = tmp_path / "page.md"
    page.write_bytes(PAGE.encode())
    block = reproduce.results_block(_info(), out)
    reproduce.update_page(page, block)
    text = page.read_bytes().decode()
    # everything outside the block, the markers included, is unchanged
    assert text == PAGE.replace("| stale | table |\n|---|---|\n", block.strip("\n") + "\n")
    body = block
    assert body.splitlines()[0] == (
        "Generated by `tfcc reproduce tfrc --update-doc` (run 2026-11-26 14:50 UTC, commit "
        "abc1234, full set, wall time 1 min 23 s): 1 of 2 claims pass; verdicts settled by "
        "their seeds: 1, not settled: 0, no interval (one seed or no value): 1."
    )
    assert body.strip("\n").endswith(reproduce.results_table(out).strip("\n"))
    assert reproduce.results_table(out) in reproduce.to_markdown("t", out)
    # a second update of the same run gives the same page
    reproduce.update_page(page, block)
    assert page.read_bytes().decode() == text
    quick = reproduce.results_block(_info(quick=True), out)
    assert "`tfcc reproduce tfrc --quick --update-doc`" in quick
    assert "`--quick` set" in quick


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("<!-- results:end -->\n", ""), "results:end --> is missing"),
        (lambda t: t.replace("<!-- results:begin -->\n", ""), "results:begin --> is missing"),
        (
            lambda t: t + "<!-- results:begin -->\n",
            "results:begin --> is found 2 times",
        ),
        (
            lambda t: t.replace("<!-- results:end -->\n", "<!-- results:end -->\n" * 2),
            "results:end --> is found 2 times",
        ),
        (
            lambda t: (
                t.replace("<!-- results:begin -->", "<!-- X -->")
                .replace("<!-- results:end -->", "<!-- results:begin -->")
                .replace("<!-- X -->", "<!-- results:end -->")
            ),
            "comes before",
        ),
    ],
)
def test_update_page_refuses_missing_or_duplicated_markers(
    tmp_path: Path, edit, message: str
) -> None:
    _, out = _outcomes(tmp_path)
    page = tmp_path / "page.md"
    original = edit(PAGE).encode()
    page.write_bytes(original)
    assert message in (reproduce.check_page(page) or "")
    with pytest.raises(reproduce.PageError, match=message):
        reproduce.update_page(page, reproduce.results_block(_info(), out))
    assert page.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md", "r.toml"]


def test_the_cli_updates_a_page_and_refuses_one_without_markers(tmp_path: Path) -> None:
    import subprocess
    import sys

    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    path = write(tmp_path, CLAIMS)
    page = tmp_path / "page.md"
    bare = PAGE.replace("<!-- results:end -->\n", "")
    page.write_bytes(bare.encode())

    def cli(*args: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tfcc.cli", "reproduce", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
        )

    # refused at once, before any run: no --out written, page untouched
    r = cli(path, "--out", tmp_path / "res", "--update-doc", page)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {page}: the line <!-- results:end --> is missing")
    assert page.read_bytes() == bare.encode()
    assert not (tmp_path / "res").exists()
    page.write_bytes(PAGE.encode())
    r = cli(path, "--out", tmp_path / "res", "--update-doc", page)
    assert r.returncode in (0, 1), r.stderr
    text = page.read_bytes().decode()
    assert "stale" not in text and "Generated by `tfcc reproduce " in text
    assert text.count("| a | 004 Sec. 4.3.2 |") == 1
    # the console: the interval beside each claim, in the table, and the settled counts
    assert "95 % CI" in r.stdout and "verdicts settled by their seeds:" in r.stdout
    info, rows = reproduce.read_run(tmp_path / "res")
    assert (info.name, info.quick, len(rows)) == (str(path), False, 2)
    assert info.commit  # a short hash, or "unknown" outside a checkout
    # the same table again from the finished run, without running it
    page.write_bytes(PAGE.encode())
    reproduce.update_page_from(tmp_path / "res", page)
    assert page.read_bytes().decode() == text


def test_a_run_that_reuses_runs_says_so_and_keeps_their_original_wall_time(
    tmp_path: Path,
) -> None:
    """With ``--runs DIR`` a second command reads the first one's runs back in a fraction of
    their time: its run.json and page line say the runs were reused and how long they took when
    they were made, beside the command's own wall time."""
    import json
    import subprocess
    import sys

    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    path = write(tmp_path, CLAIMS)

    def cli(out: str) -> dict:
        r = subprocess.run(
            [sys.executable, "-m", "tfcc.cli", "reproduce", str(path), "--runs",
             str(tmp_path / "runs"), "--out", str(tmp_path / out)],
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
        return json.loads((tmp_path / out / "run.json").read_text())

    first, second = cli("first"), cli("second")
    # claims a and b need seeds 1 and 2 of x.toml: 2 runs
    assert (first["runs_total"], first["runs_reused"]) == (2, 0)
    assert first["runs_wall_s"] > 0
    assert (second["runs_total"], second["runs_reused"]) == (2, 2)
    assert second["runs_wall_s"] == pytest.approx(first["runs_wall_s"])
    assert second["wall_s"] > 0
    info, _ = reproduce.read_run(tmp_path / "second")
    assert "(2 of 2 runs reused, made in " in info.describe()
    fresh, _ = reproduce.read_run(tmp_path / "first")
    assert "reused" not in fresh.describe()
    # A comment in the scenario changes no run, so the runs are reused; so are runs kept under
    # the text fingerprint of the runs directories made before 2026-11-28.
    from tfcc import sweep as sw

    (kept,) = (tmp_path / "runs").iterdir()
    old = sw.Sweep(tmp_path / "x.toml", PAIR, [], []).text_fingerprint()
    kept.rename(tmp_path / "runs" / f"x-{old}")
    third = cli("third")
    assert (third["runs_total"], third["runs_reused"]) == (2, 2)
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [kept.name]
    (tmp_path / "x.toml").write_text("# a new comment\n" + PAIR)
    fourth = cli("fourth")
    assert (fourth["runs_total"], fourth["runs_reused"]) == (2, 2)


def test_the_counts_table_comes_from_full_runs_and_the_quick_flags(tmp_path: Path) -> None:
    import subprocess
    import sys

    title, out = _outcomes(tmp_path)  # claim a (quick) passes, b fails
    path = str(tmp_path / "r.toml")
    run = tmp_path / "run-r"
    reproduce.write_results(run, title, out, info=_info(path))
    rows = (("tfrc", "004 TFRC"), (path, "a test"))
    with pytest.raises(reproduce.PageError, match="no run of tfrc"):
        reproduce.counts_table([run], rows)
    table = reproduce.counts_table([run], rows[1:])
    # claim a's two seeds measure the same (settled), b has one seed (no interval)
    assert (
        f"| a test | `tfcc reproduce {path}` | 1 of 1 | 1 of 2 | 1 of 1 | [r.md](r.md) |" in table
    )
    assert "2026-11-26 14:50 UTC, abc1234, 1 min 23 s |" in table
    # a --quick run, or one older than the claim file, cannot give the counts
    reproduce.write_results(tmp_path / "q", title, out[:1], info=_info(path, quick=True))
    with pytest.raises(reproduce.PageError, match="a --quick run"):
        reproduce.counts_table([tmp_path / "q"], rows[1:])
    reproduce.write_results(tmp_path / "old", title, out[:1], info=_info(path))
    with pytest.raises(reproduce.PageError, match="older than the claim file"):
        reproduce.counts_table([tmp_path / "old"], rows[1:])
    # the script: the README's marked table is replaced, nothing else; no markers → refused
    readme = tmp_path / "README.md"
    script = Path(__file__).resolve().parents[1] / "scripts" / "reproduction_counts.py"
    readme.write_text("# Where each thesis stands\n\n| old |\n\nmore\n")
    r = subprocess.run(
        [sys.executable, script, "--readme", readme, run],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "counts:begin --> is missing" in r.stderr, r.stderr
    assert readme.read_text() == "# Where each thesis stands\n\n| old |\n\nmore\n"
    text = "# Where\n\n<!-- counts:begin -->\n| old |\n<!-- counts:end -->\n\nmore\n"
    readme.write_text(text)
    # the seven reproductions' table needs all seven runs
    r = subprocess.run(
        [sys.executable, script, "--readme", readme, run], capture_output=True, text=True
    )
    assert r.returncode == 2 and "not in the table" in r.stderr, r.stderr
    assert readme.read_text() == text
    reproduce.update_page(readme, table, reproduce.COUNTS_MARKERS)
    assert readme.read_text() == text.replace("| old |\n", table)


def test_status_mismatches_name_the_lines_a_new_run_contradicts(tmp_path: Path) -> None:
    _, out = _outcomes(tmp_path)  # a passes, b fails
    assert reproduce.status_mismatches(PAGE, out) == [
        "b fails but the Status section does not name it"
    ]
    named = PAGE.replace("- a failing claim", "- **b** (0.76) and **a**: a failing claim")
    assert reproduce.status_mismatches(named, out) == [
        "a passes but the Status section names it as failing"
    ]
    # the generated block and the other sections do not count; no Status section, no check
    assert reproduce.status_mismatches(PAGE + "**b**\n", out)
    assert reproduce.status_mismatches(PAGE.replace("| stale |", "| **b** |"), out)
    assert reproduce.status_mismatches(PAGE.replace("## Status", "## Results"), out) == []


def test_status_mismatches_read_the_list_not_the_prose_around_it(tmp_path: Path) -> None:
    # tfrc.md's Status says in a paragraph which claims pass since a change, in bold, and quotes
    # their old bullets: `--update-doc` warned that those two passing claims were named as
    # failing (e11-halving-fair-share, e11-dropout10-recovered). The Status list is its bullets.
    _, out = _outcomes(tmp_path)  # a passes, b fails
    prose = PAGE.replace(
        "- a failing claim, with its reason\n",
        "- a failing claim, with its reason,\n  continued: **b** (0.76)\n\n"
        "Passing since the fix: **a** 0.98. Its bullet read:\n\n> - **a**: 0.5 against 1\n",
    )
    assert reproduce.status_mismatches(prose, out) == []
    assert reproduce.status_mismatches(prose.replace("**b** (0.76)", "b (0.76)"), out) == [
        "b fails but the Status section does not name it"
    ]


# ---- Loss of precision of --quick: stand-ins measured beside their full claims ----------------

STAND_IN = """
title = "stand-in"
[[claims]]
id = "full"
thesis = "003"
section = "Sec. 3.5.1.3"
claim = "about 100 KByte/s"
scenario = "x.toml"
metric = "throughput_kbyte_s"
args = { protocol = "tcp" }
seeds = [1, 2, 3]
target = 100.0
tolerance = { abs = 30.0 }

[[claims]]
id = "full-quick"
stands_for = "full"
thesis = "003"
section = "Sec. 3.5.1.3"
claim = "about 100 KByte/s (600 s)"
scenario = "x.toml"
set = ["duration=600s", "measure_from=100s"]
metric = "throughput_kbyte_s"
args = { protocol = "tcp" }
seeds = [1]
target = 100.0
tolerance = { abs = 30.0 }
quick = true
"""

#: x.toml's window: [200 s, 2200 s], the quick claim's [100 s, 600 s].
SCENARIO = 'name = "x"\nduration = "2200s"\nmeasure_from = "200s"\n'


def stand_in_run(tmp_path: Path, quick_value: float, text: str = STAND_IN, quick: bool = False):
    (tmp_path / "x.toml").write_text(SCENARIO)
    path = write(tmp_path, text)
    full = {1: 90.0, 2: 100.0, 3: 110.0}  # KByte/s: mean 100, per-seed sd 10

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        kbyte_s = quick_value if "duration=600s" in overrides else full[seed]
        return summary(("tcp", kbyte_s * 8000))

    return reproduce.run(str(path), quick=quick, runner=runner)[1]


def test_a_stand_in_pairs_with_its_full_claim_only_in_a_full_run(tmp_path: Path) -> None:
    out = stand_in_run(tmp_path, 130.0)
    assert out[1].claim.stands_for == "full"
    (pair,) = reproduce.quick_pairs(out)
    assert (pair.quick, pair.full) == ("full-quick", "full")
    assert (pair.quick_window_s, pair.full_window_s) == (500.0, 2000.0)
    assert (pair.quick_seeds, pair.full_seeds) == (1, 3)
    # stated: sd(Q)/sd(F) = √(3·2000 / (1·500)) = √12
    assert pair.spread == pytest.approx(math.sqrt(12))
    assert reproduce.precision_factor(out[1].claim, out[0].claim) == pytest.approx(math.sqrt(12))
    # a --quick run has no full claim to measure against
    assert reproduce.quick_pairs(stand_in_run(tmp_path, 130.0, quick=True)) == []


def test_z_follows_the_stated_model_on_a_constructed_example(tmp_path: Path) -> None:
    (pair,) = reproduce.quick_pairs(stand_in_run(tmp_path, 130.0))
    # s = 10, c = s²·2000 = 2e5; Var(Q) = c/500 = 400, Var(F) = c/(3·2000) = 33.3; seed 1 runs
    # in both, sharing [200, 600]: Cov = c·400/(500·2000)/3 = 26.7; Var(Q − F) = 380.
    assert pair.full_mean == pytest.approx(100.0)
    assert pair.full_sd == pytest.approx(10.0)
    assert pair.sd_diff == pytest.approx(math.sqrt(380.0))
    assert pair.z == pytest.approx(30.0 / math.sqrt(380.0))  # 1.54
    assert pair.ok is True and pair.bound == reproduce.QUICK_Z_BOUND == 3.0
    assert pair.note == ""


def test_a_stand_in_outside_the_bound_fails_the_quick_design(tmp_path: Path) -> None:
    out = stand_in_run(tmp_path, 170.0)
    assert out[1].passed is False  # 170 is outside 100 ± 30 too; the flag is separate
    (pair,) = reproduce.quick_pairs(out)
    assert pair.z == pytest.approx(70.0 / math.sqrt(380.0))  # 3.59
    assert pair.ok is False
    assert "quick design fails" in pair.note and "not a verdict on the thesis" in pair.note
    dest = tmp_path / "res"
    reproduce.write_results(dest, "t", out)
    md = (dest / "results.md").read_text()
    assert "## Loss of precision of --quick" in md
    assert "| full-quick | full | 170 | 100 | 10 | 1/3 | 500 s/2000 s | 3.464× | +3.59 |" in md
    assert "**QUICK DESIGN FAILS**" in md
    assert "0 of 1 tested stand-ins within the bound; the quick design fails for full-quick" in md
    rows_md = [line for line in md.split("## Loss of precision")[1].splitlines() if "|" in line]
    assert {line.count("|") for line in rows_md} == {11}  # no stray "|" breaks the table
    rows = json.loads((dest / "results.json").read_text())
    assert "quick_precision" not in rows[0]
    assert rows[1]["claim"]["stands_for"] == "full"
    assert rows[1]["quick_precision"]["ok"] is False
    assert rows[1]["quick_precision"]["z"] == pytest.approx(70.0 / math.sqrt(380.0))
    # the page tables read back from results.json keep the key
    back = reproduce.outcomes_from_json(rows)
    assert back[1].claim.stands_for == "full"


def test_the_results_table_keeps_whole_claim_ids_at_80_columns(tmp_path: Path) -> None:
    # `tfcc reproduce tfrc --quick | less` showed "e12-tfrc-halves-on…" and
    # "e5-lowmux-nokia-tf…" (47 of the 75 ids): the table cut the ids it is read by
    import os
    import subprocess
    import sys

    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    long_id = "521b-250m-tp09-less-fair-than-cubic-rtt320"  # ttfwc's longest
    text = CLAIMS.replace('id = "a"', f'id = "{long_id}"').replace("seeds = [1, 2]", "seeds = [1]")
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", str(write(tmp_path, text))],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert r.returncode in (0, 1), r.stderr
    table = r.stdout[r.stdout.index("┏") :]
    assert "…" not in table, table
    claim_column = "".join(line.split("│")[1].strip() for line in table.splitlines() if "│" in line)
    assert long_id in claim_column, table


def test_the_quick_precision_lines_are_readable_at_80_columns(tmp_path: Path) -> None:
    """The CLI's loss-of-precision lines (a full run holds the stand-ins beside their full
    claims) at 80 columns: each stand-in's id, its full claim's id, z and the verdict on one
    line, nothing wider than the terminal, the note indented under its row. With the
    longest ids of the claim files (taxonomy's e21-tfrcp-cov-cv1) they wrapped mid-line."""
    import os
    import subprocess
    import sys

    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    text = STAND_IN.replace('"full', '"e21-tfrcp-cov-cv1').replace(
        'set = ["duration=600s", "measure_from=100s"]', 'set = ["duration=2s"]'
    )
    path = write(tmp_path, text)
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", str(path), "--runs", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert r.returncode in (0, 1), r.stderr
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, r.stdout
    (head,) = [i for i, line in enumerate(lines) if "loss of precision of --quick" in line]
    (row,) = [line for line in lines[head:] if "e21-tfrcp-cov-cv1-quick " in line]
    assert "e21-tfrcp-cov-cv1 " in row.replace("e21-tfrcp-cov-cv1-quick", "")
    assert re.search(r" [+-]\d+\.\d\d +\d", row), r.stdout  # z, then the stated spread
    assert any(v in row for v in ("within", "QUICK DESIGN FAILS", "untested")), r.stdout
    # a failing stand-in's row, and its long note wrapped under it, indented
    from io import StringIO

    from rich.console import Console

    from tfcc.cli import show_quick_pairs

    long_ids = STAND_IN.replace('"full', '"e21-tfrcp-cov-cv1')
    (pair,) = reproduce.quick_pairs(stand_in_run(tmp_path, 170.0, text=long_ids))
    buf = StringIO()
    show_quick_pairs(Console(file=buf, width=80, color_system=None), [pair])
    shown = buf.getvalue().splitlines()
    assert max(len(line) for line in shown) <= 80, buf.getvalue()
    assert "+3.59" in shown[2] and "QUICK DESIGN FAILS" in shown[2], buf.getvalue()
    assert shown[3].startswith("    e21-tfrcp-cov-cv1-quick: quick design fails"), buf.getvalue()
    assert len(shown) > 4 and all(line.startswith("    ") for line in shown[3:]), buf.getvalue()


def test_a_full_claim_of_one_seed_leaves_the_pair_untested(tmp_path: Path) -> None:
    text = STAND_IN.replace("seeds = [1, 2, 3]", "seeds = [1]")
    (pair,) = reproduce.quick_pairs(stand_in_run(tmp_path, 170.0, text))
    assert pair.ok is None and pair.z is None and pair.full_sd is None
    assert "one seed" in pair.note and "+80" in pair.note
    assert pair.spread == pytest.approx(2.0)  # √(1·2000 / 500)
    md = reproduce.precision_table([pair])
    assert "not tested: the full claim has one seed" in md


def test_a_stand_in_that_is_one_of_the_full_runs_must_measure_its_value(tmp_path: Path) -> None:
    # same window and seed 1: the quick run is the full claim's seed-1 run
    text = STAND_IN.replace('set = ["duration=600s", "measure_from=100s"]', "set = []")
    (pair,) = reproduce.quick_pairs(stand_in_run(tmp_path, 0.0, text))
    assert pair.quick_value == 90.0 and pair.ok is True
    # Var(Q − F) = s²(1 + 1/3 − 2/3): |z| = 10 / (10·√(2/3))
    assert pair.z == pytest.approx(-1 / math.sqrt(2 / 3))
    out = stand_in_run(tmp_path, 0.0, text)
    out[1].measured = 95.0  # not what seed 1 measured
    (pair,) = reproduce.quick_pairs(out)
    assert pair.ok is False and "not repeatable" in pair.note


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('stands_for = "full"', 'stands_for = "nope"'), "no other claim"),
        (lambda t: t.replace("abs = 30.0 }\nquick", "abs = 20.0 }\nquick"), "differs .* abs"),
        (lambda t: t.replace("quick = true", "quick = false"), "needs quick = true"),
        (lambda t: t.replace('"measure_from=100s"', '"topology.x=1"'), r"differs .* set"),
        (lambda t: t.replace("seeds = [1]\n", "seeds = [1]\nmin = 1.0\n"), "differs .* min"),
    ],
)
def test_a_bad_stand_in_is_refused_with_its_reason(tmp_path: Path, edit, message: str) -> None:
    with pytest.raises(reproduce.ClaimFileError, match=message):
        reproduce.load(str(write(tmp_path, edit(STAND_IN))))


#: The loss of precision each claim file's header states: stand-in id → sd(quick)/sd(full mean).
STATED_SPREAD = {
    **{
        f"e21-{s}-cv1-quick": math.sqrt(5)
        for s in ("gaimd", "tfrc", "tear", "iiad", "sqrt", "aiadh", "tfrcp-cov")
    },
    **{f"e32-warc-cv{cv}-quick": math.sqrt(12) for cv in ("0.0", "0.5", "1.0")},
    "e34-warc-cv512-quick": 2.0,
    # taxonomy.toml's header: every E2.1 stand-in is one 5200-s seed of five (cover3's App. 1)
    "a1-smoother-than-tcp-cv1-quick": math.sqrt(5),
}


def test_every_stand_in_of_the_claim_files_resolves_to_its_full_claim() -> None:
    found = {}
    for name in reproduce.available():
        _, claims = reproduce.load(name)
        by_id = {c.id: c for c in claims}
        for c in claims:
            if c.id.endswith("-quick") or c.stands_for is not None:
                # named as the key says, with the full claim's target and tolerance
                assert c.stands_for == c.id.removesuffix("-quick"), c.id
                full = by_id[c.stands_for]
                assert c.quick and not full.quick, c.id
                assert (c.target, c.rel, c.abs, c.min, c.max) == (
                    full.target,
                    full.rel,
                    full.abs,
                    full.min,
                    full.max,
                ), c.id
                assert c.metric == full.metric and c.args == full.args, c.id
                found[c.id] = reproduce.precision_factor(c, full)
    assert found == pytest.approx(STATED_SPREAD)


def test_the_measurement_window_reads_the_set_the_scenario_and_after(tmp_path: Path) -> None:
    (tmp_path / "x.toml").write_text(SCENARIO)
    claim = reproduce.load(str(write(tmp_path, STAND_IN)))[1][0]
    assert reproduce.measurement_window(claim) == (200.0, 2200.0)  # the scenario's
    claim.set = ["duration=2min", "measure_from=500ms"]
    assert reproduce.measurement_window(claim) == (0.5, 120.0)
    claim.args = {"after": 30.0}  # the time-series metrics' own start
    assert reproduce.measurement_window(claim) == (30.0, 120.0)
    claim.set = ["measure_from=5x"]
    with pytest.raises(ValueError, match="measure_from: not a duration"):
        reproduce.measurement_window(claim)


# --- do the seeds settle the verdict? (the 95 % CI column) ---


def _settle(values: list[float], **bounds: float) -> reproduce.Outcome:
    """A claim measuring a link's utilisation, one value per seed, through :func:`evaluate`."""
    seeds = list(range(1, len(values) + 1))
    claim = reproduce.Claim(
        "c", "004", "Sec. 1", "a claim", Path("x.toml"), "utilization", seeds=seeds, **bounds
    )
    return reproduce.evaluate(claim, lambda _s, _o, seed: summary(util=values[seed - 1]))


#: t(0.975, 2)/√3: the half-width of three seeds' interval per unit of sample sd.
K3 = 4.303 / math.sqrt(3)


@pytest.mark.parametrize(
    ("values", "bounds", "passed", "sd", "settled"),
    [
        # the sample sd worked by hand; the interval is the mean ± sd · 4.303/√3
        # ±rel: 100 ±30 % accepts [70, 130]; sd 1 → half-width 2.484, sd 5 → 12.42
        ([99, 100, 101], {"target": 100, "rel": 0.3}, True, 1, True),
        ([75, 80, 85], {"target": 100, "rel": 0.3}, True, 5, False),
        ([60, 61, 62], {"target": 100, "rel": 0.3}, False, 1, True),
        ([60, 65, 70], {"target": 100, "rel": 0.3}, False, 5, False),
        # ±abs: 0.1 ±0.1 accepts [0, 0.2]
        ([0.09, 0.1, 0.11], {"target": 0.1, "abs": 0.1}, True, 0.01, True),
        ([0.15, 0.19, 0.17], {"target": 0.1, "abs": 0.1}, True, 0.02, False),
        ([0.5, 0.53, 0.56], {"target": 0.1, "abs": 0.1}, False, 0.03, True),
        ([0.21, 0.25, 0.29], {"target": 0.1, "abs": 0.1}, False, 0.04, False),
        # ≤ 0.7; tfrc's e11-halving-not-restored-earlier (seeds as its page rounds them):
        # 0.792 ± 1.5045 reaches the bound, so its failure is not settled
        ([0.5, 0.55, 0.6], {"max": 0.7}, True, 0.05, True),
        ([0.6, 0.65, 0.7], {"max": 0.7}, True, 0.05, False),
        ([0.9, 0.95, 1.0], {"max": 0.7}, False, 0.05, True),
        ([0.551, 0.344, 1.481], {"max": 0.7}, False, 0.60560, False),
        # ≥ 0.95
        ([0.98, 0.99, 1.0], {"min": 0.95}, True, 0.01, True),
        ([0.94, 0.96, 0.98], {"min": 0.95}, True, 0.02, False),
        ([0.8, 0.82, 0.84], {"min": 0.95}, False, 0.02, True),
        ([0.9, 0.94, 0.98], {"min": 0.95}, False, 0.04, False),
        # [0.75, 1.05]; the ttfwc idle-bandwidth claims' seeds: 1.202 ± 0.0025, settled
        ([0.9, 0.92, 0.94], {"min": 0.75, "max": 1.05}, True, 0.02, True),
        ([0.76, 0.8, 0.84], {"min": 0.75, "max": 1.05}, True, 0.04, False),
        ([1.201, 1.202, 1.203], {"min": 0.75, "max": 1.05}, False, 0.001, True),
        ([0.6, 0.7, 0.8], {"min": 0.75, "max": 1.05}, False, 0.1, False),
    ],
)  # fmt: skip
def test_the_seeds_settle_a_verdict_when_the_interval_stays_on_its_side_of_the_bounds(
    values: list[float],
    bounds: dict[str, float],
    passed: bool,
    sd: float,
    settled: bool,
) -> None:
    o = _settle(values, **bounds)
    assert o.passed is passed
    mean = sum(values) / len(values)
    assert o.measured == pytest.approx(mean)
    got = o.ci95()
    assert got is not None
    assert got == pytest.approx((mean - sd * K3, mean + sd * K3), abs=1e-4)
    assert o.settled() is settled
    row = reproduce.results_table([o]).splitlines()[2]
    assert f"| [{got[0]:.4g}, {got[1]:.4g}] |" in row
    verdict = "pass" if passed else "**FAIL**"
    assert row.endswith(f"| {verdict} |" if settled else f"| {verdict} (seeds do not settle) |")


def test_the_worked_example_row_of_the_table() -> None:
    o = _settle([0.551, 0.344, 1.481], max=0.7)
    assert reproduce.results_table([o]).splitlines()[:3] == [
        "| claim | source | statement | target | measured | per seed | 95 % CI | result |",
        "|---|---|---|---|---|---|---|---|",
        "| c | 004 Sec. 1 | a claim | ≤ 0.7 | 0.792 | 0.551, 0.344, 1.481 | [-0.7125, 2.297] "
        "| **FAIL** (seeds do not settle) |",
    ]


def test_the_accepted_band_includes_its_bounds_for_both_verdicts() -> None:
    # 1, 2, 3: mean 2, half-width 4.303/√3 = 2.484. A measured value on a bound passes, so an
    # interval ending on it stays within the band (a pass settled) and reaches it (a failure
    # not settled).
    lo, hi = 2 - K3, 2 + K3
    assert _settle([1.0, 2.0, 3.0], max=hi).settled() is True
    assert _settle([1.0, 2.0, 3.0], max=hi - 1e-9).settled() is False
    assert _settle([1.0, 2.0, 3.0], min=hi).settled() is False
    assert _settle([1.0, 2.0, 3.0], min=hi + 1e-9).settled() is True
    assert _settle([1.0, 2.0, 3.0], max=lo).settled() is False
    assert _settle([1.0, 2.0, 3.0], max=lo - 1e-9).settled() is True


def test_no_interval_for_one_seed_or_no_value_and_width_zero_for_equal_seeds() -> None:
    one = _settle([0.5], max=0.7)
    assert (one.ci95(), one.settled()) == (None, None)
    assert reproduce.results_table([one]).splitlines()[2].endswith("| 0.5 | — | pass |")
    # a metric that fails on the second seed: no value, no interval
    claim = reproduce.Claim(
        "c", "004", "Sec. 1", "a claim", Path("x.toml"), "jain", seeds=[1, 2], min=0.9
    )
    gone = reproduce.evaluate(
        claim, lambda _s, _o, seed: summary(("tcp", 1e6)) if seed == 1 else {"flows": []}
    )
    assert gone.measured is None and gone.per_seed == [1.0]
    assert (gone.ci95(), gone.settled()) == (None, None)
    # seeds that all measure the same: the seed does not move the value, the verdict stands
    same = _settle([0.8, 0.8, 0.8], min=0.75, max=1.05)
    assert same.ci95() == (pytest.approx(0.8), pytest.approx(0.8))
    assert same.settled() is True


def test_a_versus_claims_interval_is_of_its_mean_of_per_seed_ratios() -> None:
    # seed 1: 1/1, seed 2: 4/2: measured is the mean of the ratios, 1.5 (the ratio of the
    # means would be 5/3), and the interval is that mean's: s = √0.5, t(0.975, 1) = 12.706
    claim = reproduce.Claim(
        "v", "004", "Sec. 1", "a ratio", Path("x.toml"), "utilization", seeds=[1, 2],
        min=1.0, versus={"set": ["other=1"]},
    )  # fmt: skip
    mine = {1: 1.0, 2: 4.0}
    theirs = {1: 1.0, 2: 2.0}

    def runner(_s: Path, overrides: list[str], seed: int) -> dict:
        return summary(util=(theirs if "other=1" in overrides else mine)[seed])

    o = reproduce.evaluate(claim, runner)
    assert o.per_seed == [1.0, 2.0]
    assert o.measured == pytest.approx(1.5)
    half = 12.706 * math.sqrt(0.5) / math.sqrt(2)
    assert o.ci95() == (pytest.approx(1.5 - half), pytest.approx(1.5 + half))
    assert o.passed and o.settled() is False


def test_the_interval_and_the_settled_counts_reach_json_the_run_line_and_the_counts(
    tmp_path: Path,
) -> None:
    outcomes = [
        _settle([0.551, 0.344, 1.481], max=0.7),  # fails, not settled
        _settle([0.5, 0.55, 0.6], max=0.7),  # passes, settled
        _settle([0.5], max=0.7),  # passes, no interval
    ]
    assert reproduce.settle_counts(outcomes) == (1, 1, 1)
    assert reproduce.describe_verdicts(outcomes) == (
        "2 of 3 claims pass; verdicts settled by their seeds: 1, not settled: 1, "
        "no interval (one seed or no value): 1"
    )
    rows = json.loads(reproduce.to_json(outcomes))
    assert rows[0]["ci95"] == pytest.approx([0.792 - 1.50452, 0.792 + 1.50452], abs=1e-4)
    assert [r["settled"] for r in rows] == [False, True, None]
    assert rows[2]["ci95"] is None
    # read back from results.json, a page's table is the same
    back = reproduce.outcomes_from_json(rows)
    assert reproduce.results_table(back) == reproduce.results_table(outcomes)
    reproduce.write_results(tmp_path / "out", "t", outcomes, info=_info())
    meta = json.loads((tmp_path / "out" / "run.json").read_text())
    assert (meta["passed"], meta["settled"], meta["unsettled"]) == (2, 1, 1)


# --- --seeds: every claim at other seeds, for one run ------------------------------------------


def test_with_seeds_replaces_every_claims_seeds_on_both_sides_of_a_versus(tmp_path: Path) -> None:
    versus = 'versus = { set = ["flows.0.protocol=tcp-sack"], args = { protocol = "tfrc" } }'
    path = write(tmp_path, CLAIMS.replace("quick = true", f"quick = true\n{versus}"))
    _, claims = reproduce.load(str(path))
    seen = []

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        seen.append((overrides, seed))
        return summary(("tcp", 80e3 * seed), ("tfrc", 100e3))

    chosen = reproduce.with_seeds(claims, [3, 5])
    _, out = reproduce.run(str(path), runner=runner, chosen=chosen)
    # claim a: per seed the ratio of its run to the versus run of the same seed, 2.4 and 4.0
    assert seen[:4] == [
        ([], 3), (["flows.0.protocol=tcp-sack"], 3), ([], 5), (["flows.0.protocol=tcp-sack"], 5)
    ]  # fmt: skip
    assert out[0].per_seed == pytest.approx([2.4, 4.0])
    # claim b, of one seed in its file, measures both too and so has an interval
    assert seen[4:] == [([], 3), ([], 5)]
    assert [o.claim.seeds for o in out] == [[3, 5], [3, 5]]
    assert out[1].ci95() is not None
    # the claims as loaded keep their file's seeds
    assert [c.seeds for c in claims] == [[1, 2], [1]]


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "reproduce", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_runs_every_claim_at_the_seeds_given_and_records_them(tmp_path: Path) -> None:
    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    path = write(tmp_path, CLAIMS)
    runs = tmp_path / "runs"
    r = _cli(path, "--seeds", "2-3", "--runs", runs, "--out", tmp_path / "res")
    assert r.returncode in (0, 1), r.stderr
    info, rows = reproduce.read_run(tmp_path / "res")
    assert info.seeds == [2, 3]
    assert json.loads((tmp_path / "res" / "run.json").read_text())["seeds"] == [2, 3]
    assert [row["claim"]["seeds"] for row in rows] == [[2, 3], [2, 3]]
    assert all(row["ci95"] is not None for row in rows)
    md = (tmp_path / "res" / "results.md").read_text()
    assert f"`tfcc reproduce {path} --seeds 2-3` (run " in md
    assert "full set at seeds 2-3 for every claim (not the claim files')" in md
    # at the claim file's seeds, the same --runs directory: seed 2 is reused, seed 1 is run
    r = _cli(path, "--runs", runs, "--out", tmp_path / "own")
    assert r.returncode in (0, 1), r.stderr
    own, rows = reproduce.read_run(tmp_path / "own")
    assert own.seeds is None and (own.runs_total, own.runs_reused) == (2, 1)
    assert [row["claim"]["seeds"] for row in rows] == [[1, 2], [1]]
    assert f"`tfcc reproduce {path}` (run " in (tmp_path / "own" / "results.md").read_text()
    # a --seeds run gives neither the counts table nor a page
    with pytest.raises(reproduce.PageError, match=r"--seeds 2-3`; the counts are those at"):
        reproduce.counts_table([tmp_path / "res"], ((str(path), "a test"),))
    page = tmp_path / "page.md"
    page.write_bytes(PAGE.encode())
    with pytest.raises(reproduce.PageError, match="a --seeds run fills no page"):
        reproduce.update_page_from(tmp_path / "res", page)
    assert page.read_bytes() == PAGE.encode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seeds", "1-x"], "--seeds: expected a count N, a range A-B or a list A,B,C of seeds"),
        (["--seeds", "0"], "--seeds: at least one seed"),
        (["--seeds", "4-2"], "--seeds: the range 4-2 runs down; write 2-4"),
        (["--seeds", "1,-2"], "--seeds: a seed is a whole number from 0 to 9223372036854775807"),
        (["--seeds", "1-3", "--update-doc", "PAGE"], "--seeds with --update-doc: a --seeds run"),
        (["--seeds", "1-3", "--backend", "testbed"], "--seeds with --backend testbed: the"),
        (["--seeds", "1-3,3", "--check"], "--seeds: a seed is listed twice"),
    ],
)
def test_a_bad_seeds_option_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    from pair_scenario import PAIR

    (tmp_path / "x.toml").write_text(PAIR)
    path = write(tmp_path, CLAIMS)
    page = tmp_path / "page.md"
    page.write_bytes(PAGE.encode())
    args = [str(page) if a == "PAGE" else a for a in args]
    r = _cli(path, "--out", tmp_path / "res", "--runs", tmp_path / "runs", *args)
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {message}") and len(r.stderr.splitlines()) == 1, r.stderr
    assert not (tmp_path / "res").exists() and not (tmp_path / "runs").exists()
    assert page.read_bytes() == PAGE.encode()
    # --check takes the option and checks as without it
    r = _cli(path, "--check", "--seeds", "1-10")
    assert r.returncode == 0 and r.stdout.startswith(f"{path}: ok: 2 claims"), r.stderr


def test_the_seeds_table_sets_the_verdicts_at_seeds_beside_the_claim_files(
    tmp_path: Path,
) -> None:
    path = str(write(tmp_path, CLAIMS))
    _, claims = reproduce.load(path)
    # claim a (100 ± 30 % KByte/s): 60 at seed 1, 64 at seed 2, 80 at every other seed, so it
    # fails at its file's seeds 1 and 2 (mean 62) and passes at 1-10 (mean 76.4); claim b
    # (Jain's index of TCP against TFRC's 20 KByte/s ≥ 0.95) fails at any seed
    tcp = {1: 480e3, 2: 512e3}

    def runner(scenario: Path, overrides: list[str], seed: int) -> dict:
        return summary(("tcp", tcp.get(seed, 640e3)), ("tfrc", 160e3))

    title, own = reproduce.run(path, runner=runner)
    ten = reproduce.with_seeds(claims, list(range(1, 11)))
    title, wide = reproduce.run(path, runner=runner, chosen=ten)
    assert [o.passed for o in own] == [False, False] and [o.passed for o in wide] == [True, False]
    assert wide[0].measured == pytest.approx(76.4)
    reproduce.write_results(tmp_path / "own", title, own, info=_info(path))
    info = _info(path)
    info.seeds = list(range(1, 11))
    reproduce.write_results(tmp_path / "wide", title, wide, info=info)
    rows = ((path, "a test"),)
    table = reproduce.seeds_table([tmp_path / "wide", tmp_path / "own"], rows)
    assert table.startswith(
        "| thesis | passes at the claim files' seeds | passes at seeds 1-10 | settled at seeds "
        "1-10 | of its failures, settled | verdicts that differ | runs (claim seeds; seeds 1-10) |"
    )
    # both verdicts at 1-10 settled: a's mean 76.4 ± 5.47 lies inside [70, 130], b's failure
    run = "2026-11-26 14:50 UTC, abc1234, 1 min 23 s"
    assert f"| a test | 0 of 2 | 1 of 2 | 2 of 2 | 1 of 1 | 1 | {run}; {run} |\n" in table
    assert f"(`tfcc reproduce {path}`): 1 verdict differs." in table
    # only a differs; its two means with their t intervals (1 and 9 degrees of freedom)
    assert table.endswith(
        "| a | 100 ±30 % | 62, 95 % CI [36.59, 87.41], seeds 1-2: FAIL (not settled) "
        "| 76.4, 95 % CI [70.93, 81.87], seeds 1-10: pass |\n"
    )
    # a claim of one seed reads "seed 1", not the option's "1-1"
    assert reproduce._value(own[1]).endswith(", seed 1: FAIL")
    # a README without the markers is left as it is; with them, only the block is replaced
    script = Path(__file__).resolve().parents[1] / "scripts" / "reproduction_counts.py"
    readme = tmp_path / "README.md"
    text = "# Where\n\n<!-- counts:begin -->\n| old |\n<!-- counts:end -->\n\nmore\n"
    readme.write_text(text)
    dirs = [tmp_path / "own", tmp_path / "wide"]
    r = subprocess.run(
        [sys.executable, script, "--seeds", "--readme", readme, *dirs],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "seeds:begin --> is missing" in r.stderr, r.stderr
    assert readme.read_text() == text
    readme.write_text(text + "<!-- seeds:begin -->\n| old |\n<!-- seeds:end -->\n")
    reproduce.update_page(readme, table, reproduce.SEEDS_MARKERS)
    assert readme.read_text() == text + f"<!-- seeds:begin -->\n{table}<!-- seeds:end -->\n"
    # the counts table refuses the --seeds run
    r = subprocess.run(
        [sys.executable, script, "--readme", readme, *dirs], capture_output=True, text=True
    )
    assert r.returncode == 2 and "the counts are those at the claim files'" in r.stderr
    with pytest.raises(reproduce.PageError, match=r"no run of .* at --seeds"):
        reproduce.seeds_table([tmp_path / "own"], rows)
    with pytest.raises(reproduce.PageError, match="a second run of"):
        reproduce.seeds_table([tmp_path / "own", tmp_path / "own", tmp_path / "wide"], rows)


@pytest.mark.parametrize(
    ("values", "bounds", "shown"),
    [
        # 4 digits would show 0.9995 or 0.999, inside the band the value fails
        ([0.999504, 0.999504], {"max": 0.9995}, "0.999504"),
        ([0.9990004, 0.9990004], {"max": 0.999}, "0.9990004"),
        ([1.000003, 1.000003], {"max": 0.999}, "1"),  # failing, and "1" says so
        ([0.98004, 0.98004], {"target": 0.98, "abs": 0.01}, "0.98"),  # inside: 4 digits do
        ([1.23456, 1.23456], {"min": 1.0}, "1.235"),
    ],
)
def test_a_measured_value_is_shown_on_its_own_side_of_the_band(
    values: list[float], bounds: dict[str, float], shown: str
) -> None:
    o = _settle(values, **bounds)
    assert reproduce.show_measured(o) == shown
    assert f"| {shown} |" in reproduce.results_table([o])


def test_a_testbed_run_with_tfcc_run_from_the_environment_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """run.json's commit describes the package's checkout; a testbed run whose tfcc-run is
    $TFCC_RUN's (another build, perhaps of another commit) says so, a simulator run (which does
    not use it) does not."""
    monkeypatch.delenv("TFCC_RUN", raising=False)
    plain = reproduce.run_commit("testbed")
    assert plain == reproduce.git_commit() and "TFCC_RUN" not in plain
    monkeypatch.setenv("TFCC_RUN", "/tmp/other/tfcc-run")
    assert (
        reproduce.run_commit("testbed") == f"{plain} (tfcc-run from TFCC_RUN=/tmp/other/tfcc-run)"
    )
    assert reproduce.run_commit("sim") == plain
