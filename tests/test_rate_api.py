"""The receiver-driven rate schemes of 003 (WARC, TEAR, TFRCP) from Python: a pair driven over
a virtual path, as a media application would drive them over its own UDP socket."""

from __future__ import annotations

import math

import pytest

import tfcc
from virtual_path import drive


def _run(
    scheme: str, seconds: float, loss_every: int, params: dict[str, object] | None = None
) -> tuple[tfcc.RateSender, tfcc.RateReceiver]:
    """A sender and a receiver 25 ms apart each way; every `loss_every`-th data packet lost."""
    tx = tfcc.RateSender(scheme=scheme, packet_size=1000, params=params)
    rx = tfcc.RateReceiver(scheme=scheme, packet_size=1000, params=params)
    drive(
        tx,
        rx,
        size=1000,
        header_len=36,
        lost=lambda seq: seq % loss_every == loss_every - 1,
        seconds=seconds,
    )
    return tx, rx


def test_tfrcp_settles_at_the_pftk_rate_of_its_loss_ratio() -> None:
    # TFRCP (003 Table 2.1.2) sets the rate from PFTK on the last period's loss ratio: every 50th
    # packet lost is p = 0.02, and with R = 50 ms the sender's RTO is its 200 ms floor, 4R, the
    # RTO padhye_rate assumes.
    tx, rx = _run("tfrcp", 60.0, loss_every=50)
    st, r = tx.stats(), rx.stats()
    assert abs(st["rtt"] - 0.05) < 1e-6 and abs(st["rto"] - 0.2) < 1e-6, st
    assert abs(r["p"] - 0.02) < 2e-4, r
    expected = tfcc.padhye_rate(s=1000, rtt=0.05, p=0.02)
    assert abs(st["rate"] - expected) <= 0.02 * expected, (st["rate"], expected)


@pytest.mark.parametrize("scheme", ["warc", "tear"])
def test_a_window_emulating_scheme_runs_near_tcps_periodic_loss_window(scheme: str) -> None:
    # One loss every 50 packets, each its own loss event: a Reno sawtooth whose cycle carries
    # 50 packets averages sqrt(3 / 2p) = 8.66 packets per RTT (the simple model, 004 Eq. 2.6).
    # WARC's mean of the last 160 emulated windows and TEAR's weighted epochs emulate that
    # window; the emulation detects each loss a few packets late, as TCP does.
    tx, rx = _run(scheme, 300.0, loss_every=50)
    r = rx.stats()
    assert abs(r["loss_events"] / r["packets_judged"] - 0.02) < 1e-3, r
    model = math.sqrt(1.5 / 0.02)
    rate = tx.rate_packets_per_rtt
    assert rate is not None and 0.85 * model <= rate <= 1.15 * model, (rate, model)
    assert rx.scheme == scheme


def test_the_receiver_counts_payload_bytes_once_per_arrival() -> None:
    tx, rx = _run("warc", 5.0, loss_every=10**9)
    assert rx.delivered_bytes == rx.stats()["packets_judged"] * 964 > 0
    assert tx.stats()["mode"] == "rate"


def test_params_are_a_scenario_flows_params() -> None:
    # WARC with s = 8 averages over 8 rounds instead of 160: it follows the window faster.
    slow, _ = _run("warc", 3.0, loss_every=10**9)
    fast, _ = _run("warc", 3.0, loss_every=10**9, params={"s": 8})
    assert fast.rate_packets_per_rtt > slow.rate_packets_per_rtt, (
        fast.rate_packets_per_rtt,
        slow.rate_packets_per_rtt,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scheme": "gaimd"}, 'scheme must be "warc", "tear" or "tfrcp"'),
        ({"params": {"nope": 1}}, "params.nope: unknown field `nope`"),
        ({"params": {"s": 0}}, "params.s: must be in 1..=1000000"),
        ({"packet_size": 20}, "must hold the 36-byte header, got 20"),
        ({"packet_size": 1000, "params": {"packet_size": 1000}}, "packet_size is given twice"),
        ({"params": {"s": float("nan")}}, "params: not a table of settings"),
        ({"params": {"s": None}}, "params: not a table of settings"),
        ({"params": {"s": object()}}, "params: not a table of settings"),
        ({"packet_size": -1}, "packet_size must be whole bytes"),
    ],
)
def test_bad_arguments_are_one_value_error(kwargs: dict[str, object], message: str) -> None:
    for cls in (tfcc.RateSender, tfcc.RateReceiver):
        with pytest.raises(ValueError) as e:
            cls(**kwargs)
        assert message in str(e.value), str(e.value)
        assert "line 1" not in str(e.value)


def test_ends_of_different_schemes_ignore_each_others_packets() -> None:
    # The scheme rides in each header's type word, as `tfcc send`/`recv` write it.
    warc_tx, tear_rx = tfcc.RateSender(scheme="warc"), tfcc.RateReceiver(scheme="tear")
    header = warc_tx.poll_transmit(0)
    assert header is not None
    assert tear_rx.on_datagram(1, header + bytes(1000 - len(header))) is None
    tear_tx = tfcc.RateSender(scheme="tear")
    header = tear_tx.poll_transmit(0)
    assert tear_rx.on_datagram(1, header + bytes(1000 - len(header))) == 36


def test_junk_is_ignored_not_raised() -> None:
    tx, rx = tfcc.RateSender(), tfcc.RateReceiver()
    for junk in (b"", b"\x00" * 3, b"WR\x00\x01", b"\xff" * 100, bytes(65_507)):
        assert tx.on_datagram(1, junk) is False
        assert rx.on_datagram(1, junk) is None
    assert rx.delivered_bytes == 0
