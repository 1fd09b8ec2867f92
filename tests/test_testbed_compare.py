"""``tfcc compare``'s rows (tfcc.testbed.compare_rows): a metric the testbed does not collect
for a flow (kernel TCP's loss event rate) is a dash, not an error."""

from __future__ import annotations

from typing import Any

from tfcc.metrics import RunResult
from tfcc.testbed import compare_rows


def summary(tcp_loss: float | None, tcp_rtt: float | None, lost: int | None = 4) -> dict[str, Any]:
    flow = {"throughput_bps": 5e6, "bytes_delivered": 1e7, "packets_lost": lost}
    return {
        "flows": [
            {"id": 0, "protocol": "tfrc", **flow, "loss_event_rate": 0.01, "mean_rtt_s": 0.05},
            {
                "id": 1,
                "protocol": "tcp-reno",
                **flow,
                "loss_event_rate": tcp_loss,
                "mean_rtt_s": tcp_rtt,
            },
        ],
        "links": [{"name": "bottleneck", "utilization": 0.99, "drops": 3}],
        "metrics": {"fairness_theta": 0.5, "jain_index": 1.0},
    }


def test_rows_carry_loss_and_rtt_and_dashes_for_what_the_testbed_lacks() -> None:
    rows = compare_rows(RunResult(summary(0.02, 0.06)), RunResult(summary(None, None)))
    by = {(flow, metric): (a, b) for flow, metric, a, b in rows}
    assert by[("0 tfrc", "loss event rate")] == (0.01, 0.01)
    assert by[("0 tfrc", "mean RTT ms")] == (50.0, 50.0)
    assert by[("1 tcp-reno", "loss event rate")] == (0.02, None)
    assert by[("1 tcp-reno", "mean RTT ms")] == (60.0, None)
    assert by[("bottleneck", "utilization")] == (0.99, 0.99)
    assert by[("all", "jain_index")] == (1.0, 1.0)
    # Lost packets side by side; the testbed's null (a shared queue's drops) is a dash.
    assert by[("0 tfrc", "packets lost")] == (4, 4)
    rows = compare_rows(RunResult(summary(0.02, 0.06)), RunResult(summary(None, None, None)))
    by = {(flow, metric): (a, b) for flow, metric, a, b in rows}
    assert by[("1 tcp-reno", "packets lost")] == (4, None)


def test_cov_base_rtt_and_mean_queue_are_side_by_side() -> None:
    # Both backends' summaries carry them since 2026-11-28; an older testbed summary's null
    # (or a missing key) is a dash.
    sim, bed = summary(0.02, 0.06), summary(None, None)
    for s, cov in ((sim, 0.25), (bed, 0.27)):
        s["flows"][0] |= {"cov": cov, "base_rtt_s": 0.04}
        s["links"][0]["mean_queue_pkts"] = 12.5
    rows = compare_rows(RunResult(sim), RunResult(bed))
    by = {(flow, metric): (a, b) for flow, metric, a, b in rows}
    assert by[("0 tfrc", "goodput CoV")] == (0.25, 0.27)
    assert by[("0 tfrc", "base RTT ms")] == (40.0, 40.0)
    assert by[("1 tcp-reno", "goodput CoV")] == (None, None)
    assert by[("bottleneck", "mean_queue_pkts")] == (12.5, 12.5)


def test_reverse_flows_and_the_reverse_direction_are_rows_of_their_own() -> None:
    def two_way(rev_drops: int) -> dict[str, Any]:
        s = summary(0.02, 0.06)
        s["flows"].append(
            {
                "id": 2,
                "protocol": "tcp-reno",
                "direction": "reverse",
                "throughput_bps": 1e6,
                "bytes_delivered": 2e6,
                "loss_event_rate": None,
                "mean_rtt_s": 0.07,
            }
        )
        s["links"].append({"name": "bottleneck-rev", "utilization": 0.5, "drops": rev_drops})
        return s

    rows = compare_rows(RunResult(two_way(4)), RunResult(two_way(9)))
    by = {(flow, metric): (a, b) for flow, metric, a, b in rows}
    assert by[("2 tcp-reno (reverse)", "throughput Mb/s")] == (1.0, 1.0)
    assert ("1 tcp-reno", "throughput Mb/s") in by
    assert by[("bottleneck-rev", "drops")] == (4, 9)
    assert by[("bottleneck", "drops")] == (3, 3)
    assert by[("forward flows", "fairness_theta")] == (0.5, 0.5)


def test_a_refused_run_is_one_error_line_naming_the_backend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # `tfcc compare` on a scenario with a [trace] printed
    # "error: s.toml [] seed None: error: ...: --backend testbed: a packet trace ...".
    import pytest

    from tfcc.testbed import TestbedError, run

    s = tmp_path / "s.toml"
    s.write_text(
        'duration = "2s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "2Mbps", delay = "10ms" }\n'
        '[[flows]]\nprotocol = "cbr"\nrate = "1Mbps"\n[trace]\n'
    )
    with pytest.raises(TestbedError) as e:
        run(s, [], None, backend="testbed")
    msg = str(e.value)
    assert msg.startswith("s.toml (testbed): ") and "error:" not in msg, msg
    assert "[trace]" in msg and "None" not in msg and "[]" not in msg, msg


def test_compare_asks_the_testbed_first(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A scenario the testbed refuses must fail before the simulation runs (it used to simulate
    # first, then print the refusal).
    from typer.testing import CliRunner

    from tfcc import testbed as tb
    from tfcc.cli import app

    calls: list[str] = []

    def fake(scenario, overrides, seed, backend="testbed"):  # type: ignore[no-untyped-def]
        calls.append(backend)
        raise tb.TestbedError(f"{scenario.name} ({backend}): refused")

    monkeypatch.setattr(tb, "run", fake)
    s = tmp_path / "s.toml"
    s.write_text("")
    res = CliRunner().invoke(app, ["compare", str(s)])
    assert res.exit_code != 0
    assert calls == ["testbed"]


def test_a_run_carries_its_frames_for_the_frame_metrics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # tfcc.testbed.run read no frames.parquet, so a claim's frame metric (R3's
    # send_buffer_empty_share, packets_per_frame) had no rows on `tfcc reproduce --backend
    # testbed` ("frame metrics need the run's frame records"); the testbed writes the file now.
    # Run here on the sim backend (no root): the same reader behind both.
    from tfcc.metrics import packets_per_frame, send_buffer_empty_share
    from tfcc.testbed import run

    s = tmp_path / "v.toml"
    s.write_text(
        'duration = "3s"\nmeasure_from = "1s"\n[topology]\nkind = "dumbbell"\n'
        'bottleneck = { rate = "4Mbps", delay = "10ms", limit = 30 }\n'
        '[[flows]]\nprotocol = "tfwc"\nparams = { preset = "vic" }\npacket_size = "1000B"\n'
        'source = { kind = "video", fps = 30, rate = "1Mbps", gop = 1 }\n'
    )
    r = run(s, [], 1, backend="sim")
    rows = r.frame_rows(0)
    assert len(rows) == 90 and all(row["grabbed"] for row in rows)
    assert 0.0 <= send_buffer_empty_share(r) <= 1.0
    assert packets_per_frame(r) >= 1.0
