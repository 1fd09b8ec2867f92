"""The TFRC endpoints from Python: a pair driven over a virtual path, as a media application
would drive them over its own UDP socket."""

from __future__ import annotations

import tfcc
from virtual_path import drive

MS = 1_000_000


def _run(seconds: float, loss_every: int) -> tuple[tfcc.TfrcSender, tfcc.TfrcReceiver]:
    """A sender and a receiver 25 ms apart each way; every `loss_every`-th data packet lost."""
    tx, rx = tfcc.TfrcSender(packet_size=1200), tfcc.TfrcReceiver(packet_size=1200)
    drive(
        tx,
        rx,
        size=1200 + 44,  # the payload and the data header on top
        header_len=44,
        lost=lambda seq: seq % loss_every == loss_every - 1,
        seconds=seconds,
    )
    return tx, rx


def test_a_pair_settles_at_the_equation_rate() -> None:
    tx, rx = _run(10.0, loss_every=50)
    st = tx.stats()
    assert st["mode"] == "congestion-control"
    assert abs(rx.p - 0.02) < 1e-9, rx.p
    assert abs(st["rtt"] - 0.05) < 1e-6, st
    # Every 50th packet lost, each its own loss event, among the packets the receiver judged.
    r = rx.stats()
    assert r["packets_judged"] > 0 and st["packets_judged"] == 0
    assert abs(r["loss_events"] / r["packets_judged"] - 0.02) < 1e-3, r
    # X = f(s, R, p) (004 Eq. 2.7), the Rust example's 175798 B/s.
    expected = tfcc.padhye_rate(s=1200, rtt=st["rtt"], p=rx.p)
    assert abs(tx.rate - expected) <= 1e-6 * expected, (tx.rate, expected)
    assert rx.delivered_bytes > 0


def test_junk_is_refused_not_raised() -> None:
    tx, rx = tfcc.TfrcSender(), tfcc.TfrcReceiver()
    for junk in (b"", b"\x00" * 3, b"TF\x01\x01", b"\xff" * 100, bytes(65_507)):
        assert tx.on_datagram(1, junk) is False
        assert rx.on_datagram(1, junk) is None
    assert rx.delivered_bytes == 0
    try:
        tfcc.TfrcSender(preset="nope")
    except ValueError as e:
        assert "preset" in str(e)
    else:
        raise AssertionError("an unknown preset was accepted")


def test_an_application_limited_sender_sends_what_it_is_offered() -> None:
    """A codec's frames (5000 B every 40 ms, 1 Mb/s) through ``offer``, with 3 s of silence:
    every offered byte leaves once, nothing is polled while the buffer is empty, and with RFC
    5348's rules the allowed rate after the silence stays at or above W_init/R (§4.4)."""
    tx = tfcc.TfrcSender(packet_size=1200, preset="rfc5348")
    rx = tfcc.TfrcReceiver(packet_size=1200, preset="rfc5348")
    tx.offer(0)
    assert tx.buffered == 0 and tx.poll_transmit(0) is None
    to_rx: list[tuple[int, bytes]] = []
    to_tx: list[tuple[int, bytes]] = []
    offered = sent = 0
    frame_at, end = 0, 10_000 * MS
    now, rate_at_resume = 0, None
    while now < end:
        if now >= frame_at:
            if not 4_000 * MS <= frame_at < 7_000 * MS:  # silent from 4 s to 7 s
                if rate_at_resume is None and frame_at >= 7_000 * MS:
                    rate_at_resume = tx.rate
                tx.offer(5000)
                offered += 5000
            frame_at += 40 * MS
        while (header := tx.poll_transmit(now)) is not None:
            size = tx.last_datagram_size
            assert len(header) == 44 and 44 < size <= 1200 + 44, size
            sent += size - len(header)  # the frame's bytes, the header on top
            to_rx.append((now + 25 * MS, header + bytes(size - len(header))))
        while (report := rx.poll_transmit(now)) is not None:
            to_tx.append((now + 25 * MS, report))
        deadlines = [t for t in (tx.next_timeout(), rx.next_timeout()) if t is not None]
        deadlines += [q[0][0] for q in (to_rx, to_tx) if q] + [frame_at]
        now = min(deadlines)
        while to_rx and to_rx[0][0] <= now:
            rx.on_datagram(now, to_rx.pop(0)[1])
        while to_tx and to_tx[0][0] <= now:
            assert tx.on_datagram(now, to_tx.pop(0)[1])
        tx.on_timeout(now)
        rx.on_timeout(now)
    assert sent + tx.buffered == offered
    assert tx.buffered < 5000 * 3, tx.buffered  # it kept up with 1 Mb/s
    # ... and the receiver counts exactly the payload that reached it, headers left out.
    in_flight = sum(len(d) - 44 for _, d in to_rx)
    assert rx.delivered_bytes == sent - in_flight, (rx.delivered_bytes, sent, in_flight)
    rtt = tx.stats()["rtt"]
    assert abs(rtt - 0.05) < 1e-3, rtt
    # RFC 5348 §4.2: W_init = min(4s, max(2s, 4380 B)) = 4380 B at s = 1200.
    recover = 4380 / rtt
    assert rate_at_resume is not None and rate_at_resume >= recover * 0.999, (
        rate_at_resume,
        recover,
    )
    tx.offer(None)
    assert tx.buffered is None


def test_the_header_rides_on_top_of_packet_size() -> None:
    """``packet_size`` is a full datagram's payload (RFC 5348's s, headers excluded): the
    datagram is 44 bytes more, and so at most the largest UDP payload, 65 507 bytes."""
    tx = tfcc.TfrcSender(packet_size=1200)
    header = tx.poll_transmit(0)
    assert header is not None and len(header) == 44 and tx.last_datagram_size == 1244
    tfcc.TfrcReceiver(packet_size=65_463)
    for cls in (tfcc.TfrcSender, tfcc.TfrcReceiver):
        try:
            cls(packet_size=65_464)
        except ValueError as e:
            assert "largest UDP payload (65507 B); at most 65463" in str(e), e
        else:
            raise AssertionError("a datagram above 65 507 bytes was accepted")


def test_every_rate_says_its_unit() -> None:
    """``rate`` is RFC 5348's X in bytes/s, ``rate_bps`` the same in bits/s (DESIGN.md's unit,
    and timeseries.parquet's ``rate_bps``): a stats() key ``rate`` without a unit was ambiguous
    beside the bits/s of every file output."""
    tx = tfcc.TfrcSender(packet_size=1200)
    # before the first report: one packet per second (RFC 5348 §4.2), 1200 B/s = 9600 bit/s
    assert tx.rate == 1200.0 and tx.rate_bps == 9600.0
    st = tx.stats()
    assert (st["rate"], st["rate_bps"]) == (1200.0, 9600.0)
    tx, rx = _run(5.0, loss_every=50)
    st = tx.stats()
    assert st["rate_bps"] == 8 * st["rate"] == tx.rate_bps == 8 * tx.rate
    r = rx.stats()
    assert r["rate"] > 0 and r["rate_bps"] == 8 * r["rate"]
