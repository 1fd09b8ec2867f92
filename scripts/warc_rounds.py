"""What a WARC receiver saw, round by round, in a run with ``[trace] pcap = true`` on either
backend: the flow's data packets as the bottleneck sent them (``trace-bottleneck.pcap``) are
replayed through tfcc's own receiver (``tfcc._core.RateReceiver``, the sans-IO code both
backends run), and each interval's rounds, emulated window, reported rate, loss events, fluid
timeouts and carried SRTT are printed beside every flow's drops (sequence gaps at the
bottleneck). The simulator and the testbed can then be compared on what reached the receiver.

    tfcc run scenarios/003-e35-onoff.toml --out /tmp/sim --no-plots \\
        --set 'flows.0.params={ max_window = 200, history_reset = false }' \\
        --set 'trace.links=["bottleneck", "bottleneck-rev"]' --set trace.pcap=true
    tfcc run ... --backend testbed --out /tmp/tb  (the same settings)
    .venv/bin/python scripts/warc_rounds.py /tmp/tb --params '{"max_window": 200,
        "history_reset": false}' --from 540 --to 620 --step 3

The replay is checked against the reports the run itself sent (``trace-bottleneck-rev.pcap``):
a captured report counts as reproduced when a replayed round within 0.5 s reported the same
rate (to 1e-9 of it), and the largest difference between a captured report and the replayed
round before it is printed. The capture's times are where the bottleneck sent the packets: on
the testbed that is about when they reach the receiver (up to the receiver's own scheduling
delay, so a round's boundary can fall on the other side of an arrival and the rates differ a
little), in the simulator 31.5 ms earlier on E3.5's path (``--shift``).
Flows are told apart by their receiver's port (5001 + flow index on both backends); tfcc's
headers are read by the transport's own decoder (``tfcc._core.decode_datagram``). Used for
the section "E3.5's untraced differences, traced" of docs/reproductions/log/warc.md.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from tfcc import _core

PCAP_MICRO = 0xA1B2C3D4
PCAP_NANO = 0xA1B23C4D
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
FIRST_PORT = 5001


class InputError(Exception):
    """Bad input: one message for the user, no traceback."""


@dataclass
class Datagram:
    t_ns: int
    sport: int
    dport: int
    payload: bytes
    # tfcc's header at the front of the payload as decode() reads it, or None.
    header: dict | None


def decode(payload: bytes) -> dict | None:
    """The tfcc header a UDP payload starts with, as the transport reads it; None for anything
    else (another program's datagram, a header cut short by the capture)."""
    try:
        return _core.decode_datagram(payload)
    except ValueError:
        return None


def read_pcap(path: Path) -> list[Datagram]:
    """The UDP/IPv4 datagrams of a classic pcap file (raw IP or Ethernet), payload as captured."""
    try:
        buf = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}") from None
    if len(buf) < 24:
        raise InputError(f"{path}: not a pcap file ({len(buf)} bytes)")
    magic, linktype = struct.unpack_from("<I", buf, 0)[0], struct.unpack_from("<I", buf, 20)[0]
    if magic not in (PCAP_MICRO, PCAP_NANO):
        raise InputError(f"{path}: not a little-endian pcap file (magic {magic:#010x})")
    if linktype not in (LINKTYPE_RAW, LINKTYPE_ETHERNET):
        raise InputError(f"{path}: link type {linktype}, expected raw IP (101) or Ethernet (1)")
    frac_ns = 1 if magic == PCAP_NANO else 1000
    out: list[Datagram] = []
    off = 24
    while off + 16 <= len(buf):
        sec, frac, incl, _ = struct.unpack_from("<IIII", buf, off)
        off += 16
        pkt = buf[off : off + incl]
        off += incl
        if len(pkt) < incl:
            raise InputError(f"{path}: truncated record at byte {off - incl - 16}")
        if linktype == LINKTYPE_ETHERNET:
            pkt = pkt[14:]
        if len(pkt) < 28 or pkt[0] >> 4 != 4 or pkt[9] != 17:
            continue
        ihl = (pkt[0] & 0xF) * 4
        if len(pkt) < ihl + 8:
            continue
        sport, dport = struct.unpack_from(">HH", pkt, ihl)
        payload = pkt[ihl + 8 :]
        out.append(Datagram(sec * 10**9 + frac * frac_ns, sport, dport, payload, decode(payload)))
    return out


def is_rate(d: Datagram, kind: str) -> bool:
    """A WARC/TEAR/TFRCP header of ``kind`` (``rate-data`` or ``rate-feedback``), any scheme."""
    return d.header is not None and d.header["kind"] == kind


def sequence(d: Datagram) -> int | None:
    """The sequence number of a WARC data packet or a CBR packet, else ``None``."""
    if d.header is not None and d.header["kind"] in ("rate-data", "raw"):
        return d.header["seq"]
    return None


def sent_at(d: Datagram) -> float:
    """A WARC data or CBR packet's send time in seconds."""
    assert d.header is not None
    return d.header["sent_at"] * 1e-9


def data_header_len() -> int:
    """Bytes of the rate schemes' data header, as tfcc's sender writes it."""
    header = _core.RateSender(scheme="warc").poll_transmit(0)
    assert header is not None
    return len(header)


def replay(data: list[Datagram], params: dict, packet_size: int, shift_ns: int) -> list[tuple]:
    """Feed the data packets to a fresh receiver at their capture time + ``shift_ns``; one row
    per round: (end s, emulated window, reported rate, loss events so far, timeouts so far,
    carried SRTT s)."""
    try:
        rx = _core.RateReceiver(scheme="warc", packet_size=packet_size, params=params)
    except ValueError as e:
        raise InputError(f"--params: {e}") from None
    rounds: list[tuple] = []

    def until(t_ns: int) -> None:
        while (nt := rx.next_timeout()) is not None and nt <= t_ns:
            rx.on_timeout(nt)
            rep = rx.poll_transmit(nt)
            st = rx.stats()
            rate = _core.decode_datagram(rep)["rate"] if rep else math.nan
            rounds.append(
                (nt * 1e-9, st["window"], rate, st["loss_events"], st["timeouts"], st["rtt"] or 0.0)
            )

    for d in data:
        t = d.t_ns + shift_ns
        until(t)
        assert d.header is not None
        n = d.header["header_len"]
        rx.on_datagram(t, d.payload[:n] + bytes(max(0, packet_size - n)))
        rx.poll_transmit(t)
    return rounds


def drops(datagrams: list[Datagram], port: int) -> list[tuple[float, int]]:
    """(sent_at of the packet after the gap, packets missing) for each sequence gap of a flow."""
    seqs = sorted(
        (s, sent_at(d)) for d in datagrams if d.dport == port and (s := sequence(d)) is not None
    )
    return [(t, s - p - 1) for (p, _), (s, t) in zip(seqs, seqs[1:], strict=False) if s - p > 1]


def matched_reports(rounds: list[tuple], reports: list[tuple[float, float]]) -> int:
    """Captured reports whose rate a replayed round within 0.5 s reported, to 1e-9 of it: the
    estimator's running sum of windows is rebuilt every 4096 rounds, so a replay whose round
    count is off by one from the receiver's carries rounding differences of about 1e-14."""
    times = [r[0] for r in rounds]
    matched = 0
    for tc, rate in reports:
        i = bisect.bisect_left(times, tc - 0.5)
        j = bisect.bisect_right(times, tc + 0.5)
        matched += any(abs(r[2] - rate) <= 1e-9 * max(1.0, abs(rate)) for r in rounds[i:j])
    return matched


def largest_difference(rounds: list[tuple], reports: list[tuple[float, float]]) -> float:
    """The largest |captured − replayed| rate, each captured report against the last replayed
    round that ended before it (a report leaves as its round ends and is captured after the
    way back's delay)."""
    times = [r[0] for r in rounds]
    worst = 0.0
    for tc, rate in reports:
        i = bisect.bisect_right(times, tc) - 1
        if i >= 0:
            worst = max(worst, abs(rounds[i][2] - rate))
    return worst


def table(
    run: Path, params: dict, packet_size: int, shift_ns: int, lo: float, hi: float, step: float
) -> str:
    fwd = read_pcap(run / "trace-bottleneck.pcap")
    rev_path = run / "trace-bottleneck-rev.pcap"
    data = [d for d in fwd if d.dport == FIRST_PORT and is_rate(d, "rate-data")]
    if not data:
        raise InputError(
            f"{run}: no WARC data packets to port {FIRST_PORT} in trace-bottleneck.pcap"
        )
    rounds = replay(data, params, packet_size, shift_ns)
    ports = sorted({d.dport for d in fwd if sequence(d) is not None})
    gaps = {p: drops(fwd, p) for p in ports}
    lines = [
        f"{run}: {len(data)} data packets of flow 0, {len(rounds)} replayed rounds",
        "   from  rounds  window min..max  rate  events  timeouts  srtt_ms  drops "
        + " ".join(f"f{p - FIRST_PORT}" for p in ports),
    ]
    t = lo
    while t < hi - 1e-9:
        inside = [r for r in rounds if t <= r[0] < t + step]
        before = [r for r in rounds if r[0] < t]
        if inside:
            base = before[-1] if before else (0, 0, 0, 0, 0, 0)
            w = [r[1] for r in inside]
            srtt = sum(r[5] for r in inside) / len(inside)
            dropped = [sum(n for s, n in gaps[p] if t <= s < t + step) for p in ports]
            lines.append(
                f"{t:7.1f}  {len(inside):6d}  {min(w):6.1f}..{max(w):6.1f}  {inside[-1][2]:5.1f}  "
                f"{inside[-1][3] - base[3]:6d}  {inside[-1][4] - base[4]:8d}  {srtt * 1e3:7.1f}  "
                + " ".join(f"{n:5d}" for n in dropped)
            )
        t += step
    if rev_path.is_file():
        reports = [
            (d.t_ns * 1e-9, d.header["rate"])
            for d in read_pcap(rev_path)
            if d.sport == FIRST_PORT and is_rate(d, "rate-feedback")
        ]
        window = [r for r in reports if lo <= r[0] < hi]
        every, inside = matched_reports(rounds, reports), matched_reports(rounds, window)
        lines.append(
            f"captured reports reproduced by the replay: {every} of {len(reports)}, "
            f"{inside} of {len(window)} in {lo:g}-{hi:g} s"
        )
        if window:
            gap = largest_difference(rounds, window)
            lines.append(
                f"largest difference in {lo:g}-{hi:g} s between a captured report and the "
                f"replayed round before it: {gap:.4g} packets per RTT"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a run directory with trace-bottleneck.pcap")
    ap.add_argument(
        "--params", default="{}", help="flow 0's params as JSON (the scenario's, e.g. max_window)"
    )
    ap.add_argument("--packet-size", type=int, default=1000)
    ap.add_argument("--shift", type=float, default=0.0, help="ms added to the capture times")
    ap.add_argument("--from", dest="lo", type=float, default=0.0)
    ap.add_argument("--to", dest="hi", type=float, default=math.inf)
    ap.add_argument("--step", type=float, default=1.0, help="seconds per row")
    a = ap.parse_args(argv)
    try:
        try:
            params = json.loads(a.params)
        except json.JSONDecodeError as e:
            raise InputError(f"--params: not JSON: {e}") from None
        if not isinstance(params, dict):
            raise InputError("--params: not a JSON object")
        if not (a.step > 0 and math.isfinite(a.step)):
            raise InputError(f"--step: {a.step} is not a positive number of seconds")
        if a.packet_size < (header := data_header_len()):
            raise InputError(f"--packet-size: {a.packet_size} B is below the {header}-byte header")
        hi = a.hi
        if math.isinf(hi):
            summary = a.run / "summary.json"
            try:
                hi = float(json.loads(summary.read_text())["sim_seconds"])
            except (OSError, ValueError, KeyError, TypeError):
                raise InputError(f"{summary}: no run's duration; give --to") from None
        print(table(a.run, params, a.packet_size, round(a.shift * 1e6), a.lo, hi, a.step))
    except InputError as e:
        print(f"warc_rounds: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
