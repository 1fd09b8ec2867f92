"""The TFRC endpoints from Python: a pair driven over a virtual path, as a media application
would drive them over its own UDP socket."""

from __future__ import annotations

import tfcc

MS = 1_000_000


def _run(seconds: float, loss_every: int) -> tuple[tfcc.TfrcSender, tfcc.TfrcReceiver]:
    """A sender and a receiver 25 ms apart each way; every `loss_every`-th data packet lost."""
    tx, rx = tfcc.TfrcSender(packet_size=1200), tfcc.TfrcReceiver(packet_size=1200)
    to_rx: list[tuple[int, bytes]] = []
    to_tx: list[tuple[int, bytes]] = []
    now, end, seq = 0, int(seconds * 1e9), 0
    while now < end:
        while (header := tx.poll_transmit(now)) is not None:
            if seq % loss_every != loss_every - 1:
                to_rx.append((now + 25 * MS, header + bytes(1200 - len(header))))
            seq += 1
        while (report := rx.poll_transmit(now)) is not None:
            to_tx.append((now + 25 * MS, report))
        deadlines = [t for t in (tx.next_timeout(), rx.next_timeout()) if t is not None]
        deadlines += [q[0][0] for q in (to_rx, to_tx) if q]
        now = min(deadlines)
        while to_rx and to_rx[0][0] <= now:
            assert rx.on_datagram(now, to_rx.pop(0)[1]) == 36
        while to_tx and to_tx[0][0] <= now:
            assert tx.on_datagram(now, to_tx.pop(0)[1])
        tx.on_timeout(now)
        rx.on_timeout(now)
    return tx, rx


def test_a_pair_settles_at_the_equation_rate() -> None:
    tx, rx = _run(10.0, loss_every=50)
    st = tx.stats()
    assert st["mode"] == "congestion-control"
    assert abs(rx.p - 0.02) < 1e-9, rx.p
    assert abs(st["rtt"] - 0.05) < 1e-6, st
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
