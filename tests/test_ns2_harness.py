"""The live ns-2 harness: bench/ns2/dumbbell.tcl run through tfcc.ns2 gives physical numbers.

These run ns-2 itself (a few tenths of a second each). ns-2 is installed by
scripts/install-ns2.sh, which the test command runs; a missing ns-2 fails these tests unless
TFCC_SKIP_NS2=1 says the machine deliberately has none.
"""

from __future__ import annotations

import copy
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tfcc.ns2 import (
    Ns2Error,
    Ns2NotFoundError,
    have_ns2,
    jain_index,
    physical_problems,
    run_ns2,
)

if not have_ns2():
    if os.environ.get("TFCC_SKIP_NS2") == "1":
        pytest.skip("ns-2 not installed and TFCC_SKIP_NS2=1", allow_module_level=True)
    pytest.fail(
        "ns-2 is not installed: run scripts/install-ns2.sh (or set TFCC_SKIP_NS2=1)",
        pytrace=False,
    )

# ns-2 puts a 40-byte TCP/IP header on every 1000-byte TCP segment (useHeaders_ true) and a
# 32-byte header (headersize_) on every 1000-byte TFRC packet; all byte counters see these sizes.
TCP_WIRE = 1040
TFRC_WIRE = 1032

TINY: dict[str, object] = {
    "tcp": 2,
    "bottleneck_rate": 2e6,
    "bottleneck_delay": 0.02,
    "limit": 20,
    "duration": 5.0,
    "measure_from": 1.0,
}


def _run(**overrides: object) -> dict[str, Any]:
    return run_ns2({**TINY, **overrides}, timeout=60)


def _outstanding_bound_pkts(report: dict[str, Any]) -> float:
    """Packets a TCP aggregate can hold in the queue and on the path at one instant, twice over:
    what can be in flight or parked out of order at the receiver when a window edge falls."""
    b = report["bottleneck"]
    p = report["params"]
    rtt = 2 * (b["delay_s"] + 2 * p["access_delay"])
    bdp = b["rate_bps"] * rtt / (8 * TCP_WIRE)
    return 2 * (b["limit_pkts"] + math.ceil(bdp))


@pytest.fixture(scope="module")
def tiny() -> dict[str, Any]:
    return _run()


def test_tiny_run_reports_resources_and_its_parameters(tiny: dict[str, Any]) -> None:
    assert tiny["tool"] == "ns-2" and tiny["ns_version"] == "2.35"
    assert tiny["params"]["tcp"] == 2 and tiny["params"]["bottleneck_rate"] == 2e6
    assert tiny["tcp_agent"] == "Agent/TCP/Sack1"
    assert tiny["sim_seconds"] == pytest.approx(5.0)
    assert tiny["window_seconds"] == pytest.approx(4.0)
    assert tiny["wall_seconds"] > 0 and tiny["cpu_seconds"] > 0
    # ns-2 with its Tcl interpreter and OTcl class library is never below a few MiB.
    assert tiny["peak_rss_kib"] > 2048
    assert len(tiny["flows"]) == 2
    assert all(0.0 <= f["start_s"] <= 1.0 for f in tiny["flows"])


def test_bottleneck_is_saturated_but_never_above_capacity(tiny: dict[str, Any]) -> None:
    b = tiny["bottleneck"]
    # Departures are counted when a packet leaves the queue; one extra packet can fall in the
    # window because the one in service at its start is counted when it left, before.
    one_pkt = 8 * TCP_WIRE / (b["rate_bps"] * tiny["window_seconds"])
    assert b["utilization"] <= 1.0 + one_pkt
    # Two bulk TCPs with a 20-packet buffer keep a 2 Mb/s link busy.
    assert b["utilization"] > 0.95
    assert b["utilization"] == pytest.approx(
        8 * b["departures_bytes"] / (b["rate_bps"] * tiny["window_seconds"])
    )
    assert 0.0 <= b["mean_queue_pkts"] <= b["limit_pkts"]


def test_queue_counters_balance_in_the_window(tiny: dict[str, Any]) -> None:
    b = tiny["bottleneck"]
    backlog_change = b["queue_pkts_at_end"] - b["queue_pkts_at_start"]
    assert b["arrivals_pkts"] == b["departures_pkts"] + b["drops_pkts"] + backlog_change
    assert b["departures_bytes"] == b["departures_pkts"] * TCP_WIRE


def test_every_packet_sent_reaches_the_bottleneck(tiny: dict[str, Any]) -> None:
    # Access buffers are large, so nothing is lost before the bottleneck queue; what is missing
    # at the end is on an access link (1 ms at 100 Mb/s holds 12 packets per flow).
    totals = tiny["bottleneck_totals"]
    sent = sum(f["total_packets_sent"] for f in tiny["flows"])
    reached = totals["arrivals_pkts"] + totals["loss_model_drops_pkts"]
    assert 0 <= sent - reached <= 2 * 13


def test_physical_checks_pass_on_a_real_run_and_catch_a_broken_one(
    tiny: dict[str, Any],
) -> None:
    assert physical_problems(tiny) == []
    broken = copy.deepcopy(tiny)
    broken["bottleneck"]["utilization"] = 1.05
    broken["flows"][0]["bytes_delivered"] *= 3
    broken["flows"][1]["total_packets_sent"] += 1000
    problems = physical_problems(broken)
    assert len(problems) == 3, problems


def test_droptail_limit_counts_the_packet_in_service() -> None:
    # ns-2's DropTail refuses a packet when (waiting + 1) >= limit_, so limit 10 means 9
    # waiting plus the one being serialised. A 20 Mb/s CBR into 15 Mb/s keeps it full.
    report = run_ns2(
        {"tcp": 0, "cbr_rate": 20e6, "limit": 10, "duration": 20.0, "measure_from": 4.0},
        timeout=60,
    )
    b = report["bottleneck"]
    (cbr,) = report["flows"]
    assert b["queue_pkts_at_end"] == 9
    assert 8.5 < b["mean_queue_pkts"] <= 9
    # UDP adds no header: CBR packets are exactly their packetSize_ on the wire.
    assert b["departures_bytes"] == b["departures_pkts"] * 1000
    # 16 s at 15 Mb/s of 1000-byte packets is 30 000 departures; a quarter of 40 000 offered
    # packets is dropped.
    assert b["departures_pkts"] == pytest.approx(30000, abs=1)
    assert b["drops_pkts"] == pytest.approx(10000, abs=2)
    assert cbr["packets_sent"] == pytest.approx(40000, abs=1)
    assert physical_problems(report) == []


def test_receivers_get_what_left_the_bottleneck(tiny: dict[str, Any]) -> None:
    delivered = sum(f["bytes_delivered"] for f in tiny["flows"])
    departed = tiny["bottleneck"]["departures_bytes"]
    rexmit = sum(f["packets_retransmitted"] for f in tiny["flows"])
    edge = _outstanding_bound_pkts(tiny) * TCP_WIRE
    # Departed but not (yet) delivered: duplicates of retransmissions, or data in flight or
    # parked out of order at the window's end. Delivered but departed earlier: the same at its
    # start.
    assert departed - delivered <= rexmit * TCP_WIRE + edge
    assert delivered - departed <= edge
    assert all(f["bytes_delivered"] % TCP_WIRE == 0 for f in tiny["flows"])


def test_long_run_throughputs_sum_to_the_link_rate() -> None:
    report = _run(duration=40.0, measure_from=5.0)
    b = report["bottleneck"]
    d = report["derived"]
    # With 35 s of data, edge effects are < 1 % of the bytes.
    assert d["delivered_over_departed"] == pytest.approx(1.0, abs=0.01)
    assert d["total_throughput_bps"] == pytest.approx(b["rate_bps"] * b["utilization"], rel=0.01)
    assert d["total_throughput_bps"] <= b["rate_bps"] * (1 + 1e-3)


def test_same_seed_gives_the_same_result() -> None:
    first = _run(loss=0.01, seed=7)
    second = _run(loss=0.01, seed=7)
    for volatile in ("wall_seconds", "cpu_seconds", "peak_rss_kib", "sim_wall_seconds", "derived"):
        first.pop(volatile)
        second.pop(volatile)
    assert first == second


def test_different_seed_changes_a_lossy_run() -> None:
    a = _run(loss=0.01, seed=1)
    b = _run(loss=0.01, seed=2)
    assert [f["start_s"] for f in a["flows"]] != [f["start_s"] for f in b["flows"]]
    assert [f["bytes_delivered"] for f in a["flows"]] != [f["bytes_delivered"] for f in b["flows"]]


def test_bernoulli_loss_drops_about_its_rate_and_is_counted_apart() -> None:
    # A 1 % loss in front of an uncongested queue: 10 Mb/s link, one TCP capped at 30 packets.
    report = _run(
        tcp=1, loss=0.01, bottleneck_rate=10e6, duration=30.0, measure_from=0.0, window=30
    )
    totals = report["bottleneck_totals"]
    offered = totals["arrivals_pkts"] + totals["loss_model_drops_pkts"]
    rate = totals["loss_model_drops_pkts"] / offered
    # Binomial: n ≈ 20 000, sd of the rate ≈ 0.0007; 0.006..0.014 is over 5 sd either side.
    assert 0.006 < rate < 0.014
    assert totals["drops_pkts"] == 0


def test_tfrc_flow_is_measured_at_its_sink() -> None:
    report = _run(tcp=0, tfrc=1, duration=20.0, measure_from=5.0)
    (flow,) = report["flows"]
    b = report["bottleneck"]
    assert flow["kind"] == "tfrc"
    assert b["departures_bytes"] == b["departures_pkts"] * TFRC_WIRE
    # TFRCSink counts every arriving data packet: equal to departures up to what is in flight.
    assert abs(flow["bytes_delivered"] - b["departures_bytes"]) <= 3 * TFRC_WIRE
    assert report["derived"]["theta"] is None


def test_tcp_and_tfrc_share_gives_theta() -> None:
    report = _run(tcp=1, tfrc=1, duration=20.0, measure_from=5.0)
    d = report["derived"]
    tcp_bytes = sum(f["bytes_delivered"] for f in report["flows"] if f["kind"] == "tcp")
    all_bytes = sum(f["bytes_delivered"] for f in report["flows"])
    assert d["theta"] == pytest.approx(tcp_bytes / all_bytes)
    assert 0.0 < d["theta"] < 1.0


def test_red_queue_reports_its_automatic_parameters() -> None:
    report = _run(queue="red", limit=50)
    red = report["bottleneck"]["red"]
    # ns-2's automatic configuration: min_th = max(5, (targetdelay 5 ms * C / mean_pktsize_)/2)
    # is 5 at 2 Mb/s (2.5 packets of 500 B), max_th = 3 * min_th.
    assert red["thresh_"] == pytest.approx(5.0)
    assert red["maxthresh_"] == pytest.approx(15.0)
    assert red["gentle_"] == 1 and red["queue_in_bytes_"] == 0
    assert report["bottleneck"]["mean_queue_pkts"] < 50


def test_unknown_parameter_is_a_clear_error() -> None:
    with pytest.raises(Ns2Error, match="unknown parameter 'bogus'") as info:
        run_ns2({"bogus": 1}, timeout=30)
    assert info.value.returncode == 2


def test_measure_from_past_duration_is_rejected() -> None:
    with pytest.raises(Ns2Error, match="measure_from=6 must be < duration=5"):
        run_ns2({"duration": 5, "measure_from": 6}, timeout=30)


def test_missing_binary_is_its_own_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCC_NS2", "/nonexistent/ns")
    assert not have_ns2()
    with pytest.raises(Ns2NotFoundError, match="install-ns2.sh"):
        run_ns2(TINY)


def test_timeout_kills_ns2() -> None:
    def running() -> set[int]:
        pids = set()
        for d in Path("/proc").iterdir():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"tcp=64" in cmd and any(a.endswith(b"ns") for a in cmd[:1]):
                pids.add(int(d.name))
        return pids

    before = running()
    with pytest.raises(Ns2Error, match="timed out"):
        run_ns2({"tcp": 64, "bottleneck_rate": 1e9, "duration": 1000.0}, timeout=0.5)
    # ns-2 itself is gone, not only the GNU time wrapper in front of it.
    deadline = time.monotonic() + 5
    while running() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running() - before


def test_jain_index_of_equal_and_of_one_hog() -> None:
    assert jain_index([3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain_index([]) is None


def test_reverse_tcp_flows_load_the_reverse_direction_and_stay_out_of_the_checks() -> None:
    # 002 Secs. 4.2/4.4's reverse-path TCP: senders behind r2, data over r2 -> r1 beside the
    # forward ACKs, into a reverse queue of its own limit.
    r = _run(tcp=1, tfrc=1, reverse_tcp=2, reverse_limit=50, duration=10.0, measure_from=2.0)
    kinds = [f["kind"] for f in r["flows"]]
    assert kinds == ["tcp", "tfrc", "tcp-reverse", "tcp-reverse"]
    rev = r["bottleneck_reverse"]
    assert rev["limit_pkts"] == 50
    assert rev["utilization"] > 0.8 and rev["mean_queue_pkts"] > 1.0, rev
    assert all(f["throughput_bps"] > 0 for f in r["flows"])
    # θ and the forward bottleneck's accounting see the forward flows only.
    d = r["derived"]
    fwd = {f["kind"]: f["bytes_delivered"] for f in r["flows"] if f["kind"] != "tcp-reverse"}
    assert d["theta"] == pytest.approx(fwd["tcp"] / (fwd["tcp"] + fwd["tfrc"]))
    assert d["delivered_over_departed"] == pytest.approx(
        sum(fwd.values()) / r["bottleneck"]["departures_bytes"]
    )
    assert physical_problems(r) == []
    # Without reverse_limit the reverse queue keeps the forward limit, as before.
    assert _run()["bottleneck_reverse"]["limit_pkts"] == TINY["limit"]
