"""The TFWC endpoints from Python: a pair driven over a virtual path, as a media application
would drive them over its own UDP socket."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

import tfcc
from virtual_path import drive

MS = 1_000_000


def _run(
    preset: str,
    one_way_ms: int,
    lost: Callable[[int], bool],
    *,
    seconds: float = 1e9,
    packets: int = 1 << 62,
) -> tuple[tfcc.TfwcSender, tfcc.TfwcReceiver]:
    """A 1000-byte sender and its receiver `one_way_ms` apart each way, with no rate limit;
    the data packets `lost(seq)` says are dropped. Runs for `seconds` or until `packets` were
    sent, whichever comes first."""
    tx = tfcc.TfwcSender(packet_size=1000, preset=preset)
    rx = tfcc.TfwcReceiver(packet_size=1000, preset=preset)
    drive(
        tx,
        rx,
        size=1000 + 28,  # the payload and the data header on top
        header_len=28,
        one_way_ms=one_way_ms,
        lost=lost,
        seconds=seconds,
        packets=packets,
        to_receiver=lambda r, now, d: r.on_packet(now, d),
        to_sender=lambda t, now, d: t.on_packet(now, d),
    )
    return tx, rx


def test_a_pair_settles_at_the_rust_example_window() -> None:
    # crates/tfcc-core/examples/tfwc_pair.rs: Choi's ns-2.34 agent (the default), 20 ms each
    # way, every 40th data packet lost, 20 s; it ends with "p = 0.0250, cwnd = 6, TCP equation
    # window 1/f(p) = 6.30" (002 Eq. 3.4, truncated as the ns-2.34 code does).
    tx, rx = _run("ns2", 20, lambda s: s % 40 == 39, seconds=20.0)
    st = tx.stats()
    assert st["mode"] == "window", st
    assert abs(st["p"] - 1 / 40) < 1e-9, st
    assert abs(st["rtt"] - 0.040) < 1e-9, st
    assert abs(tx.window_exact - tfcc.window(st["p"])) < 1e-9, st
    assert round(tx.window_exact, 2) == 6.30, st
    # The cwnd jitter (002 Sec. 3.3.3) may add one packet, as the Rust test allows.
    assert tx.window in (6, 7), st
    assert st["window"] == tx.window
    assert st["loss_events"] > 0 and st["timeouts"] == 0, st
    assert rx.delivered_bytes > 0
    assert rx.stats()["delivered_bytes"] == rx.delivered_bytes


@pytest.mark.parametrize(
    ("preset", "every", "ali", "cwnd"),
    [
        ("thesis", 100, 100.0, 11),
        ("thesis", 20, 20.0, 4),
        ("thesis", 10, 10.0, 2),
        ("ns2", 100, 100.0, 11),
        ("ns2", 20, 20.0, 3),
        ("ns2", 10, 10.0, 1),
        ("vic", 100, 100.0, 11),
        ("vic", 20, 20.0, 4),
        ("vic", 10, 10.0, 2),
    ],
)
def test_periodic_drops_give_the_rust_tests_window(
    preset: str, every: int, ali: float, cwnd: int
) -> None:
    # crates/tfcc-core/src/tfwc/tests.rs `periodic_drops_give_ali_100_20_10` (002 App. A.2):
    # 50 ms each way, every `every`-th packet dropped (seq % every == 0), 3000 packets sent;
    # ALI 100, 20, 10 and cwnd 11, 4, 2 (thesis and vic: rounded to nearest) or 11, 3, 1 (ns2:
    # truncated), or one more with the jitter (vic has none).
    tx, _ = _run(preset, 50, lambda s: s % every == 0, packets=3000)
    st = tx.stats()
    assert abs(st["ali"] - ali) < 1e-9, st
    assert abs(tx.window_exact - tfcc.window(1 / ali)) < 1e-9, st
    assert tx.window in (cwnd, cwnd + 1), st


def _ack(head: int, runs: bytes, echo: int = 0) -> bytes:
    """An Ack Vector in tfcc-core's wire form: type 2, reserved, run count, head, echo, runs.
    Packed by hand, as the junk below must be (no encoder writes a reserved state or a count
    the bytes do not hold); the well-formed ones are checked against the Rust decoder."""
    return struct.pack(">BBHQQ", 2, 0, len(runs), head, echo) + runs


def test_hand_packed_ack_vectors_are_what_the_rust_decoder_reads() -> None:
    # One run of 2 received (state 0, length - 1 = 1) below head 1000, then one lost.
    ack = _ack(1000, bytes([1, 3 << 6]), echo=7 * MS)
    assert tfcc.decode_datagram(ack) == {
        "protocol": "tfwc",
        "kind": "tfwc-ack",
        "header_len": 22,
        "head": 1000,
        "bits": 0b011,
        "echo": 7 * MS,
    }


def test_junk_is_refused_with_the_reason() -> None:
    tx, rx = tfcc.TfwcSender(), tfcc.TfwcReceiver()
    data = tx.poll_transmit(1)
    assert data is not None
    # (bytes, why the sender refuses them, why the receiver does)
    cases = [
        (b"", "too short: 0 bytes, need 1", "too short: 0 bytes, need 1"),
        (b"\x02\x00\x00", "too short: 3 bytes, need 20", "unknown TFWC packet type 2"),
        (b"\x01" + bytes(10), "unknown TFWC packet type 1", "too short: 11 bytes, need 28"),
        (b"\x07" + bytes(40), "unknown TFWC packet type 7", "unknown TFWC packet type 7"),
        (b"\xff" * 100, "unknown TFWC packet type 255", "unknown TFWC packet type 255"),
        (_ack(5, b"\x00\x00")[:-1], "too short: 21 bytes, need 22", "packet type 2"),
        (_ack(5, bytes([1 << 6])), "Ack Vector run with reserved state 1", "packet type 2"),
        (_ack(2, bytes([3 << 6 | 5])), "runs reach below sequence number 0", "packet type 2"),
        (bytes(65_507), "unknown TFWC packet type 0", "unknown TFWC packet type 0"),
    ]
    for junk, at_tx, at_rx in cases:
        with pytest.raises(ValueError, match=f"^not a TFWC Ack Vector: .*{at_tx}$"):
            tx.on_packet(2, junk)
        assert tx.on_datagram(2, junk) is False
        with pytest.raises(ValueError, match=f"^not a TFWC data packet: .*{at_rx}$"):
            rx.on_packet(2, junk)
        assert rx.on_datagram(2, junk) is None
    # Each end refuses the other end's packets.
    with pytest.raises(ValueError, match="not a TFWC Ack Vector: unknown TFWC packet type 1"):
        tx.on_packet(2, data)
    with pytest.raises(ValueError, match="not a TFWC data packet: unknown TFWC packet type 2"):
        rx.on_packet(2, _ack(0, b"\x00"))
    assert rx.delivered_bytes == 0 and rx.poll_transmit(3) is None
    # A well-formed Ack Vector for a number never sent is ignored, not measured.
    tx.on_packet(3, _ack(1000, b"\x00"))
    assert tx.stats()["rtt"] is None and tx.window == 1
    for bad, name in (({"preset": "nope"}, "preset"), ({"packet_size": 0}, "packet_size")):
        with pytest.raises(ValueError, match=name):
            tfcc.TfwcSender(**bad)
        with pytest.raises(ValueError, match=name):
            tfcc.TfwcReceiver(**bad)


def test_time_going_backwards_is_taken_as_the_last_time() -> None:
    tx, rx = tfcc.TfwcSender(), tfcc.TfwcReceiver()
    first = tx.poll_transmit(10 * MS)
    assert first is not None
    assert tfcc.decode_datagram(first)["sent_at"] == 10 * MS
    assert rx.on_packet(30 * MS, first + bytes(100)) == 28
    ack = rx.poll_transmit(30 * MS)
    assert ack is not None and rx.poll_transmit(30 * MS) is None
    tx.on_packet(50 * MS, ack)
    assert abs(tx.stats()["rtt"] - 0.040) < 1e-12
    # Slow start opened the window to 2; a clock reading before the last call's is taken as
    # the last one: the packets carry 50 ms, not 1 ms, and the timer is armed after 50 ms.
    for _ in range(2):
        header = tx.poll_transmit(1 * MS)
        assert header is not None
        assert tfcc.decode_datagram(header)["sent_at"] == 50 * MS
    assert tx.poll_transmit(1 * MS) is None
    timeout = tx.next_timeout()
    assert timeout is not None and timeout > 50 * MS
    tx.on_timeout(0)  # taken at 50 ms: the timer has not expired
    assert tx.stats()["timeouts"] == 0
    tx.on_timeout(timeout)
    assert tx.stats()["timeouts"] == 1
    assert tx.poll_transmit(0) is not None  # the expiry let one more packet out


def test_a_python_receiver_answers_tfcc_send_over_loopback() -> None:
    # The bytes are those `tfcc send --protocol tfwc` puts on the network: a Python receiver
    # on a UDP socket takes its data packets and its Ack Vectors are not malformed to it.
    import socket
    import subprocess
    import sys
    import time

    rx = tfcc.TfwcReceiver(packet_size=1200)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.2)
        send = subprocess.Popen(
            [sys.executable, "-m", "tfcc.entry", "send", "--protocol", "tfwc"]
            + ["--packet-size", "1200", "--duration", "1s", f"127.0.0.1:{sock.getsockname()[1]}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            data = junk = 0
            deadline = time.monotonic() + 30
            while send.poll() is None and time.monotonic() < deadline:
                try:
                    datagram, peer = sock.recvfrom(65_536)
                except TimeoutError:
                    continue
                now = time.monotonic_ns()
                if rx.on_datagram(now, datagram) is None:
                    junk += 1
                    continue
                data += 1
                while (ack := rx.poll_transmit(now)) is not None:
                    sock.sendto(ack, peer)
            out, err = send.communicate(timeout=30)
        finally:
            send.kill()
    assert send.returncode == 0, err
    assert data > 0 and junk == 0, (data, junk)
    # Goodput is payload: the 28-byte TFWC data header is not the application's.
    assert rx.delivered_bytes == (1200 - 28) * data
    assert "malformed 0, unexpected 0" in out, out
    feedback = int(out.split("feedback ")[1].split()[0])
    assert feedback > 0, out


def test_an_application_limited_sender_carries_every_offered_byte_once() -> None:
    """A codec's frames (4500 B every 40 ms, 900 kb/s) through ``offer``: each datagram is the
    28-byte header and up to ``packet_size`` (1000) bytes of the frame, a frame's tail goes in a
    shorter one, nothing is polled while the buffer is empty, and the receiver counts exactly
    the payload that reached it."""
    tx = tfcc.TfwcSender(packet_size=1000)
    rx = tfcc.TfwcReceiver(packet_size=1000)
    tx.offer(0)
    assert tx.buffered == 0 and tx.poll_transmit(0) is None
    to_rx: list[tuple[int, bytes]] = []
    to_tx: list[tuple[int, bytes]] = []
    offered = sent = 0
    sizes: set[int] = set()
    now, frame_at, end = 0, 0, 10_000 * MS
    while now < end:
        if now >= frame_at:
            tx.offer(4500)
            offered += 4500
            frame_at += 40 * MS
        while (header := tx.poll_transmit(now)) is not None:
            size = tx.last_datagram_size
            assert len(header) == 28 and 28 < size <= 1028, size
            sizes.add(size)
            sent += size - 28
            to_rx.append((now + 20 * MS, header + bytes(size - 28)))
        deadlines = [t for t in (tx.next_timeout(), frame_at) if t is not None]
        deadlines += [q[0][0] for q in (to_rx, to_tx) if q]
        now = min(deadlines)
        while to_rx and to_rx[0][0] <= now:
            assert rx.on_packet(now, to_rx.pop(0)[1]) == 28
            while (ack := rx.poll_transmit(now)) is not None:
                to_tx.append((now + 20 * MS, ack))
        while to_tx and to_tx[0][0] <= now:
            tx.on_packet(now, to_tx.pop(0)[1])
        tx.on_timeout(now)
    assert sent + tx.buffered == offered, (sent, tx.buffered, offered)
    assert tx.buffered < 4500 * 3, tx.buffered  # the window kept up with 900 kb/s
    assert sizes == {1028, 528}, sizes  # four full packets and the frame's 500-byte tail
    in_flight = sum(len(d) - 28 for _, d in to_rx)
    assert rx.delivered_bytes == sent - in_flight, (rx.delivered_bytes, sent, in_flight)
    tx.offer(None)
    assert tx.buffered is None
