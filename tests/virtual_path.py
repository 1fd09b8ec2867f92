"""A sender and its receiver joined by a virtual path, driven as a media application drives the
sans-IO endpoints over its own UDP socket: poll what is due, deliver each datagram after the
one-way delay, sleep to the earliest deadline. Shared by the TFRC, TFWC and rate-scheme API
tests; each passes how its endpoints take a datagram."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MS = 1_000_000


def drive(
    tx: Any,
    rx: Any,
    *,
    size: int,
    header_len: int,
    one_way_ms: int = 25,
    lost: Callable[[int], bool] = lambda seq: False,
    seconds: float = 1e9,
    packets: int = 1 << 62,
    to_receiver: Callable[[Any, int, bytes], object] | None = None,
    to_sender: Callable[[Any, int, bytes], object] | None = None,
) -> None:
    """Runs until `seconds` of virtual time or `packets` sent, whichever comes first. Each data
    packet is its header padded to `size` bytes; those `lost(seq)` picks are dropped.
    `to_receiver(rx, now, datagram)` (default `rx.on_datagram`) must return the payload's
    offset, `header_len`; `to_sender(tx, now, datagram)` (default `tx.on_datagram`) must not
    return False."""
    give_rx = to_receiver or (lambda r, now, d: r.on_datagram(now, d))
    give_tx = to_sender or (lambda t, now, d: t.on_datagram(now, d))
    delay = one_way_ms * MS
    to_rx: list[tuple[int, bytes]] = []
    to_tx: list[tuple[int, bytes]] = []
    now, end, seq = 0, int(seconds * 1e9), 0
    while now < end and seq < packets:
        while (header := tx.poll_transmit(now)) is not None:
            assert len(header) == header_len
            if not lost(seq):
                to_rx.append((now + delay, header + bytes(size - len(header))))
            seq += 1
        while (report := rx.poll_transmit(now)) is not None:
            to_tx.append((now + delay, report))
        deadlines = [t for t in (tx.next_timeout(), rx.next_timeout()) if t is not None]
        deadlines += [q[0][0] for q in (to_rx, to_tx) if q]
        now = min(deadlines)
        while to_rx and to_rx[0][0] <= now:
            assert give_rx(rx, now, to_rx.pop(0)[1]) == header_len
        while to_tx and to_tx[0][0] <= now:
            assert give_tx(tx, now, to_tx.pop(0)[1]) is not False
        tx.on_timeout(now)
        rx.on_timeout(now)
