"""Worked numbers for the metrics of 003 Sec. 2.4 (python/tfcc/metrics.py)."""

from __future__ import annotations

import math

import pytest

from tfcc import metrics
from tfcc.metrics import MetricError, RunResult


def _summary() -> dict:
    def flow(i, proto, tput, rtt, sent, lost):
        return {
            "id": i,
            "protocol": proto,
            "throughput_bps": tput,
            "mean_rtt_s": rtt,
            "packets_sent": sent,
            "packets_lost": lost,
        }

    return {
        "flows": [
            flow(0, "tcp-sack", 2e6, 0.05, 1000, 10),
            flow(1, "tcp-sack", 1e6, 0.02, 1000, 20),
            flow(2, "warc", 1.5e6, 0.03, 1000, 30),
            flow(3, "warc", 1.5e6, 0.01, 1000, 40),
        ]
    }


def test_normalized_throughput_and_loss_rate() -> None:
    s = _summary()
    assert metrics.normalized_throughput(s, "warc") == pytest.approx(1.0)
    # Shortest-RTT WARC flow (3: 4 %) over shortest-RTT TCP flow (1: 2 %).
    assert metrics.normalized_loss_rate(s, "warc") == pytest.approx(2.0)


def test_a_loss_rate_of_an_unknown_count_is_an_error_not_zero() -> None:
    # The testbed writes null where flows share a queue that dropped packets; this was read
    # as 0 lost, so the WARC flow's loss rate came out 0.
    s = _summary()
    s["flows"][3]["packets_lost"] = None
    with pytest.raises(MetricError, match="flow 3 reports no lost-packet count"):
        metrics.normalized_loss_rate(s, "warc")


def test_the_shortest_rtt_flow_is_named_by_propagation_rtt_and_ties_are_pooled() -> None:
    s = _summary()
    # Propagation RTTs name the shortest-RTT flow, not the measured ones: TCP flow 0 (1 %)
    # and WARC flow 2 (3 %).
    for f, base in zip(s["flows"], [0.01, 0.02, 0.02, 0.03], strict=True):
        f["base_rtt_s"] = base
    assert metrics.normalized_loss_rate(s, "warc") == pytest.approx(3.0)
    # 003 E2.2 at CV[RTT] = 0: every flow of a group is the shortest; their losses and packets
    # are pooled, (30 + 40) / 2000 over (10 + 20) / 2000.
    for f in s["flows"]:
        f["base_rtt_s"] = 0.2
    assert metrics.normalized_loss_rate(s, "warc") == pytest.approx(70 / 30)
    # A group in which a flow lacks it (a testbed summary, an older run) falls back to the
    # least measured RTT: TCP flow 1 (2 %) against the pooled WARC flows (3.5 %).
    del s["flows"][1]["base_rtt_s"]
    assert metrics.normalized_loss_rate(s, "warc") == pytest.approx(1.75)
    for f in s["flows"]:
        f.pop("base_rtt_s", None)
    assert metrics.normalized_loss_rate(s, "warc") == pytest.approx(2.0)


def test_packets_lost_is_the_mean_per_matching_flow() -> None:
    s = _summary()
    # TCP flows lost 10 and 20 packets, WARC flows 30 and 40; flow 3 alone 40.
    assert metrics.packets_lost(s, protocol="tcp") == pytest.approx(15.0)
    assert metrics.packets_lost(s, protocol="warc") == pytest.approx(35.0)
    assert metrics.packets_lost(s, flow=3) == pytest.approx(40.0)
    assert metrics.packets_lost(s) == pytest.approx(25.0)
    del s["flows"][0]["packets_lost"]
    with pytest.raises(MetricError, match="lost-packet count"):
        metrics.packets_lost(s, protocol="tcp")


def test_cv_bar_w_is_eq_3_7() -> None:
    # Epochs [1, 3] (var 1) and [4, 4] (var 0): √(0.5) / mean 3.
    assert metrics.cv_bar_w_of([[1, 3], [4, 4]]) == pytest.approx(math.sqrt(0.5) / 3)
    with pytest.raises(MetricError):
        metrics.cv_bar_w_of([])


def test_cv_k_reads_within_window_variation() -> None:
    v = [1, 3, 1, 3, 2, 2, 2, 2]
    # k = 2: windows [1,3],[1,3] have CV 0.5, [2,2],[2,2] have 0: mean 0.25.
    assert metrics.cv_k_of(v, 2) == pytest.approx(0.25)
    # k = 4: [1,3,1,3] has CV 0.5, [2,2,2,2] 0.
    assert metrics.cv_k_of(v, 4) == pytest.approx(0.25)
    # k = 8: one window, mean 2, variance 4/8.
    assert metrics.cv_k_of(v, 8) == pytest.approx(math.sqrt(0.5) / 2)
    assert metrics.cv_k_of(v, 1) == 0.0
    with pytest.raises(MetricError):
        metrics.cv_k_of(v, 9)


def test_convergence_time() -> None:
    t = [i * 1.0 for i in range(10)]
    v = [1, 1, 1, 2, 4, 6, 8, 9.5, 10, 10]
    assert metrics.convergence_time_of(t, v, at=2.0, target=10, band=0.1) == 5.0
    with pytest.raises(MetricError):
        metrics.convergence_time_of(t, v, at=2.0, target=20)
    assert metrics.moving_average([2, 4, 6], 2) == [2, 3, 5]


def test_convergence_time_bounds_at_the_boundary() -> None:
    """The band and the search window are inclusive: a rate exactly ``band·target`` away is
    within the band, and a sample at exactly ``at`` counts (already there: 0 s). Values chosen
    exact in binary, so the boundary is the boundary."""
    t = [0.0, 1.0, 2.0, 3.0]
    assert metrics.convergence_time_of(t, [1, 1, 10, 8], at=1.0, target=8, band=0.25) == 1.0
    assert metrics.convergence_time_of(t, [1, 6, 9, 8], at=1.0, target=8, band=0.25) == 0.0
    with pytest.raises(MetricError):  # just outside: 10.5 is 2.5 > 2 away
        metrics.convergence_time_of(t, [1, 1, 10.5, 5.5], at=1.0, target=8, band=0.25)
    # before `at` does not count, however close
    assert metrics.convergence_time_of(t, [8, 1, 8, 8], at=1.0, target=8, band=0.25) == 1.0


def test_convergence_time_steady_window_is_open_at_the_left() -> None:
    """The steady value is the mean over the last quarter of [at, until] of samples stamped at
    their interval's end: with at = 0 and until = 8 the quarter is (6, 8], so the sample at t = 6
    (the interval before it) is out and the one at t = 8 in. It used to be in: a burst in the
    interval ending at 6 put the target at 40 and the flow never converged."""
    t = [float(i) for i in range(9)]
    fs = {"t": t, "flow": [0] * 9, "throughput_bps": [1, 2, 3, 4, 5, 9.5, 100, 10, 10]}
    s = RunResult({"flows": [{"id": 0, "protocol": "gaimd"}]}, fs)
    assert metrics.convergence_time(s, "gaimd", at=0.0, until=8.0, band=0.1, smooth=1) == 5.0


def test_series_metrics_use_the_time_series() -> None:
    fs = {
        "t": [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4],
        "flow": [0, 0, 0, 0, 1, 1, 1, 1],
        "throughput_bps": [1, 3, 1, 3, 2, 2, 2, 2],
    }
    s = RunResult({"flows": [{"id": 0, "protocol": "warc"}, {"id": 1, "protocol": "tcp-sack"}]}, fs)
    assert metrics.cv_k(s, "warc", k=2) == pytest.approx(0.5)
    with pytest.raises(MetricError):
        metrics.normalized_cv_k(s, "warc", k=2)  # TCP's CV is zero


@pytest.mark.parametrize("name", ["taxonomy", "warc"])
def test_the_003_claim_files_load_with_known_metrics(name: str) -> None:
    from tfcc import reproduce

    title, claims = reproduce.load(name)
    assert "003" in title
    assert any(c.quick for c in claims)
    for c in claims:
        assert c.metric in metrics.METRICS
        assert c.scenario is None or c.scenario.exists(), c.scenario


def test_convergence_time_can_take_the_steady_rate_from_tcp() -> None:
    # The scheme (flow 0) climbs slowly; TCP (flow 1) is at 10 from the start. Its own tail
    # (the last quarter of [0, 10]: 8.5, 9.5, 10, mean 9.33) calls it converged at t = 8 (8.5 is
    # within 10 %); TCP's steady value (10) only at t = 9 (9.5).
    t = [float(i) for i in range(11)]
    fs = {
        "t": t + t,
        "flow": [0] * 11 + [1] * 11,
        "throughput_bps": [1, 2, 3, 4, 5, 6, 7, 8, 8.5, 9.5, 10] + [10] * 11,
    }
    s = RunResult({"flows": [{"id": 0, "protocol": "iiad"}, {"id": 1, "protocol": "tcp-sack"}]}, fs)
    own = metrics.convergence_time(s, "iiad", at=0.0, until=10.0, band=0.1, smooth=1)
    assert own == 8.0
    ref = metrics.convergence_time(
        s, "iiad", at=0.0, until=10.0, band=0.1, smooth=1, steady_from="tcp"
    )
    assert ref == 9.0
    # Only the phase counts: by t = 8 it has not reached TCP's level.
    with pytest.raises(MetricError):
        metrics.convergence_time(
            s, "iiad", at=0.0, until=8.0, band=0.1, smooth=1, steady_from="tcp"
        )


def test_a_scheme_settling_below_tcp_converges_to_its_own_level_not_tcps() -> None:
    # 003 Sec. 2.5.1 times a scheme "to increase their throughput to the new steady
    # throughput", its own: a scheme that settles at 6 while TCP settles at 10 (as GAIMD, SQRT
    # and IIAD do under ns-2.1b9's whole-segment decrease) has converged once it is at 6, and
    # against TCP's level it never would.
    t = [float(i) for i in range(11)]
    fs = {
        "t": t + t,
        "flow": [0] * 11 + [1] * 11,
        "throughput_bps": [1, 3, 5, 6, 6, 6, 6, 6, 6, 6, 6] + [10] * 11,
    }
    flows = [{"id": 0, "protocol": "gaimd"}, {"id": 1, "protocol": "tcp-sack"}]
    s = RunResult({"flows": flows}, fs)
    assert metrics.convergence_time(s, "gaimd", at=0.0, until=10.0, band=0.15, smooth=1) == 3.0
    with pytest.raises(MetricError):
        metrics.convergence_time(
            s, "gaimd", at=0.0, until=10.0, band=0.15, smooth=1, steady_from="tcp"
        )


def test_the_003_two_state_claims_time_each_scheme_to_its_own_level() -> None:
    from tfcc import reproduce

    _, claims = reproduce.load("taxonomy")
    e23 = [c for c in claims if c.id.startswith("e23-") and c.metric == "convergence_time"]
    assert len(e23) >= 18
    for c in e23:
        assert "steady_from" not in c.args, c.id


def test_the_003_bursty_loss_claims_average_over_random_start_phases() -> None:
    # tear1: with every flow starting at 0 s the CBR sources and the bottleneck's departures
    # share one integer-nanosecond lattice and a paced 1000-B flow is never dropped (TEAR lost 0
    # of 3753 packets after the fall). The Fig. 2.4(c) claims draw the test flow's start, on both
    # sides of the ratio, and average over enough seeds for the phase to wash out.
    from tfcc import reproduce

    _, claims = reproduce.load("taxonomy")
    loss = [c for c in claims if c.metric == "packets_lost" and c.id.startswith("e24-")]
    assert len(loss) == 4
    for c in loss:
        assert len(c.seeds) >= 10, c.id
        start = 'flows.0.start={ random = ["0s", "1s"] }'
        assert start in c.set, c.id
        assert c.versus is not None and start in c.versus["set"], c.id


def test_table_2_3_verdict_rules_reproduce_the_thesis_letters_for_its_numbers() -> None:
    from tfcc import verdicts

    # 003 Sec. 2.5.1: 0.8 of TCP is Δ, 0.6 is X; TFRCP above TCP is X(X) (Table 2.3).
    assert verdicts.fairness_verdict(0.8) == "Δ(O)"
    assert verdicts.fairness_verdict(0.6) == "X(O)"
    assert verdicts.fairness_verdict(1.3) == "X(X)"
    assert verdicts.fairness_verdict(1.05) == "O(O)"
    # Sec. 2.5.1: TFRC ≈ 20 s after the fall, GAIMD ≈ 40 s: twice is Δ; IIAD's 700 s rise X.
    assert verdicts.speed_verdict(20 / 20) == "O"
    assert verdicts.speed_verdict(40 / 20) == "Δ"
    assert verdicts.speed_verdict(700 / 60) == "X"
    rows = [
        {"claim": {"id": "e21-gaimd-cv1-quick"}, "measured": 0.8},
        {"claim": {"id": "e23-tfrc-fall"}, "measured": 20.0},
        {"claim": {"id": "e23-gaimd-fall"}, "measured": 41.0},
        {"claim": {"id": "e23-iiad-fall"}, "measured": None},
    ]
    got = verdicts.verdicts(rows)
    assert got["gaimd"][0] == "Δ(O)", "a quick claim answers for the full id"
    assert got["tfrc"][5] == "O", "the fastest of the column"
    assert got["gaimd"][5] == "Δ", "twice the fastest"
    assert got["iiad"][5] == "X", "never converged"
    assert got["sqrt"][0] == "—", "not measured"
    table = verdicts.to_markdown(rows)
    assert "| GAIMD | Δ(O) / Δ(O) |" in table
    assert "**" not in table.split("| GAIMD |")[1].split("\n")[0]


def test_a_protocol_name_is_not_a_prefix_of_another() -> None:
    # 003's E2.1 run holds TFRC and TFRCP flows: "tfrc" must pick TFRC only; "tcp" still names
    # every TCP variant.
    s = {
        "flows": [
            {"id": 0, "protocol": "tcp-sack", "throughput_bps": 2e6},
            {"id": 1, "protocol": "tfrc", "throughput_bps": 1e6},
            {"id": 2, "protocol": "tfrcp", "throughput_bps": 4e6},
        ]
    }
    assert metrics.throughput_bps(s, protocol="tfrc") == 1e6
    assert metrics.normalized_throughput(s, "tfrc", "tcp") == pytest.approx(0.5)
    assert metrics.normalized_throughput(s, "tfrcp", "tcp") == pytest.approx(2.0)
