"""Analyse a trace of thesis 004's E10 setup 3 (a TCP joining a running TFRC at 80 s).

The trace comes from `cargo run --profile ci -p tfcc-sim --example e10_setup3_trace -- SEED
OUT.csv [KEY=VALUE ...]`; this script reads it and prints, for 75-125 s (or `--from/--to`):

- every data packet lost on the way (sent, never received), by flow, with the number of packets
  in the bottleneck (waiting or on the wire) when it arrived there, reconstructed from the send
  and receive times: at the queue's limit it is a queue overflow, below it the pipe's random
  drop;
- the TCP's loss episodes (losses within one RTT of the episode's first), each with the window
  before it, its losses, how it ended (fast retransmits, timeouts) and the window after;
- the TFRC's rate and loss event rate around each episode: how long after the TCP's first loss
  TFRC's receiver reported a higher p and TFRC's rate fell (the feedback delay), and how far.

Usage: `python scripts/e10_setup3_trace.py TRACE.csv [--limit 20] [--from 75] [--to 125]
[--summary]` (`--summary` prints one line: the counts only).
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field

# Bottleneck one-way propagation and the access links around it (scenarios/004-e10-setup3.toml):
# a packet received at t left the bottleneck's transmitter at t - PROP_BEHIND, and a packet
# sent at t reached the bottleneck at t + AHEAD.
PROP_BEHIND = 0.050 + 0.00001 + 1500 * 8 / 100e6
AHEAD = 0.00001 + 1500 * 8 / 100e6
# Half the 1.5 Mb/s link in bytes/s: the fair share of one TFRC against one TCP.
FAIR = 1.5e6 / 8 / 2
# One packet's serialisation on the 100 Mb/s access link.
SERIAL = 1500 * 8 / 100e6


@dataclass
class Flow:
    tx: dict[tuple[int, int], float] = field(default_factory=dict)  # (seq, copy) -> send time
    rx: dict[int, list[float]] = field(default_factory=dict)  # seq -> send times received
    sent: list[tuple[float, int, bool]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # receive times


def load(path: str):
    flows: dict[int, Flow] = {}
    tcp: list[tuple[float, float, float, int, int, int]] = []
    fb: list[tuple[float, float, float, float, float]] = []
    rxp: list[tuple[float, float]] = []
    with open(path) as f:
        for r in csv.DictReader(f):
            t, fl, k = float(r["t"]), int(r["flow"]), r["kind"]
            fw = flows.setdefault(fl, Flow())
            if k == "tx":
                fw.sent.append((t, int(float(r["a"])), r["b"] == "1"))
            elif k == "rx":
                fw.rx.setdefault(int(float(r["a"])), []).append(float(r["b"]))
                fw.arrivals.append(t)
            elif k == "tcp":
                tcp.append(
                    (
                        t,
                        float(r["a"]),
                        float(r["b"]),
                        int(float(r["c"])),
                        int(float(r["d"])),
                        int(float(r["e"])),
                    )
                )
            elif k == "fb":
                fb.append((t, float(r["a"]), float(r["b"]), float(r["c"]), float(r["e"])))
            elif k == "rxp":
                rxp.append((t, float(r["a"])))
    return flows, tcp, fb, rxp


def drops(flows: dict[int, Flow], t_end: float) -> list[tuple[float, int, int]]:
    """(send time, flow, seq) of every data packet sent and never received (sent early enough
    to have arrived before the trace ends)."""
    out = []
    for fl, fw in flows.items():
        for t, seq, _ in fw.sent:
            if t > t_end - 2.0:
                continue
            got = fw.rx.get(seq, [])
            if not any(abs(ts - t) < 1e-6 for ts in got):
                out.append((t, fl, seq))
    return sorted(out)


def queue_at(pairs: list[tuple[float, float]], at: float) -> int:
    """Packets in the bottleneck (waiting or on the wire) at `at`: a DropTail queue of limit L
    holds L - 1 waiting packets and the one on the wire (ns-2's `limit_`, tfcc-sim's queue)."""
    return sum(1 for a, d in pairs if a < at < d)


def rtt_at(fb: list[tuple], at: float) -> float:
    """The TFRC sender's smoothed RTT at its last report before `at` (0.2 s before any)."""
    last = [x for x in fb if x[0] <= at]
    return last[-1][4] if last and last[-1][4] > 0 else 0.2


def p_at(rxp: list[tuple[float, float]], at: float) -> float:
    last = [x for x in rxp if x[0] <= at]
    return last[-1][1] if last else 0.0


def fb_p(fb: list[tuple], at: float) -> float:
    last = [x for x in fb if x[0] <= at]
    return last[-1][1] if last else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--limit", type=int, default=20, help="the bottleneck's queue limit")
    ap.add_argument("--from", dest="t0", type=float, default=75.0)
    ap.add_argument("--to", dest="t1", type=float, default=125.0)
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    flows, tcp, fb, rxp = load(args.trace)
    t_end = max(fw.arrivals[-1] for fw in flows.values() if fw.arrivals)

    # When each data packet reached the bottleneck: its send time, the access link's delay and
    # its serialisation, behind the packets its sender sent at the same instant (a TCP burst).
    arrival: dict[tuple[int, int, float], float] = {}
    for fl, fw in flows.items():
        prev, k = None, 0
        for t, seq, _ in fw.sent:
            k = k + 1 if t == prev else 0
            prev = t
            arrival[(fl, seq, round(t, 6))] = t + AHEAD + k * SERIAL
    # Each delivered packet's stay in the bottleneck, waiting or on the wire: (arrival, end of
    # its transmission).
    pairs = []
    with open(args.trace) as f:
        for r in csv.DictReader(f):
            if r["kind"] == "rx":
                fl, seq, ts = int(r["flow"]), int(float(r["a"])), float(r["b"])
                a = arrival.get((fl, seq, round(ts, 6)), ts + AHEAD)
                pairs.append((a, float(r["t"]) - PROP_BEHIND))
    pairs.sort()

    lost = [d for d in drops(flows, t_end) if args.t0 <= d[0] <= args.t1]
    rows = []
    for t, fl, seq in lost:
        q = queue_at(pairs, arrival.get((fl, seq, round(t, 6)), t + AHEAD))
        kind = "queue" if q >= args.limit else "random"
        rows.append((t, fl, seq, q, kind))

    tcp_flow = 1
    # TCP loss episodes: TCP drops within 0.5 s (two to three RTTs here) of the episode's first.
    episodes: list[list[tuple]] = []
    for r in rows:
        if r[1] != tcp_flow:
            continue
        if episodes and r[0] - episodes[-1][0][0] < 0.5:
            episodes[-1].append(r)
        else:
            episodes.append([r])

    def tcp_state(at: float):
        last = None
        for s in tcp:
            if s[0] > at:
                break
            last = s
        return last

    def tfrc_rate(at: float) -> float:
        last = None
        for s in fb:
            if s[0] > at:
                break
            last = s
        return last[3] if last else float("nan")

    def counter_in(a: float, b: float, i: int) -> int:
        zero = (0, 0, 0, 0, 0, 0)
        return (tcp_state(b) or zero)[i] - (tcp_state(a) or zero)[i]

    def timeouts_in(a: float, b: float) -> int:
        return counter_in(a, b, 4)

    def frs_in(a: float, b: float) -> int:
        return counter_in(a, b, 5)

    n_q = {fl: sum(1 for r in rows if r[1] == fl and r[4] == "queue") for fl in flows}
    n_r = {fl: sum(1 for r in rows if r[1] == fl and r[4] == "random") for fl in flows}
    to_total = timeouts_in(args.t0, args.t1)
    fr_total = frs_in(args.t0, args.t1)
    if args.summary:
        # Where the timeouts come from: the episode that ended the first slowstart, later
        # episodes of one drop, later episodes of several.
        first, single, multi = 0, 0, 0
        for i, ep in enumerate(episodes):
            until = episodes[i + 1][0][0] if i + 1 < len(episodes) else args.t1
            n = timeouts_in(ep[0][0], until)
            if i == 0:
                first += n
            elif len(ep) == 1:
                single += n
            else:
                multi += n
        # How fast TFRC backs off: the first report after the start of the window that puts its
        # rate at or below half the link (the fair share against one TCP).
        fair = next((x[0] for x in fb if x[0] > args.t0 and x[3] <= FAIR), float("nan"))
        ss = episodes[0] if episodes else None
        ss_state = tcp_state(ss[0][0] - 1e-6) if ss else None
        print(
            f"{args.trace}: {args.t0:g}-{args.t1:g} s: TFRC drops queue {n_q.get(0, 0)} random "
            f"{n_r.get(0, 0)}; TCP drops queue {n_q.get(1, 0)} random {n_r.get(1, 0)}; TCP "
            f"episodes {len(episodes)}, fast retransmits {fr_total}, timeouts {to_total} "
            f"(first slowstart's end {first}, later 1-drop {single}, later multi-drop {multi}); "
            f"slowstart ended at cwnd {ss_state[1] if ss_state else float('nan'):.0f} by "
            f"{len(ss) if ss else 0} drops ({sum(1 for r in ss or [] if r[4] == 'queue')} queue); "
            f"TFRC at {args.t0:g} s {tfrc_rate(args.t0) / 1e3:.0f} KB/s, "
            f"p {fb_p(fb, args.t0):.4f}, "
            f"at the fair share {fair - args.t0:.1f} s later"
        )
        return 0

    print(
        f"drops {args.t0:g}-{args.t1:g} s (send time, flow, seq, packets in the bottleneck, kind)"
    )
    for t, fl, seq, q, kind in rows:
        name = "TFRC" if fl == 0 else "TCP "
        print(f"  {t:9.3f} {name} {seq:6d} {q:3d} {kind}")
    print(
        f"TFRC: {n_q.get(0, 0)} queue + {n_r.get(0, 0)} random; TCP: {n_q.get(1, 0)} queue + "
        f"{n_r.get(1, 0)} random; TCP fast retransmits {fr_total}, timeouts {to_total}"
    )
    print("TCP loss episodes: start, cwnd before, drops (queue/random), FRs, timeouts, cwnd after")
    for i, ep in enumerate(episodes):
        t = ep[0][0]
        before = tcp_state(t - 1e-6)
        # The episode's outcome: up to 3 s after its last drop or the next episode's first.
        end = ep[-1][0] + 3.0
        if i + 1 < len(episodes):
            end = min(end, episodes[i + 1][0][0] - 1e-6)
        after = tcp_state(end)
        nq = sum(1 for r in ep if r[4] == "queue")
        print(
            f"  {t:8.3f} cwnd {before[1] if before else float('nan'):6.2f} "
            f"drops {len(ep)} ({nq}q/{len(ep) - nq}r) FR {frs_in(t, end)} "
            f"TO {timeouts_in(t, end)} -> cwnd {after[1] if after else float('nan'):6.2f}; "
            f"TFRC rate {tfrc_rate(t) / 1e3:6.1f} -> {tfrc_rate(t + 1.0) / 1e3:6.1f} (1 s) -> "
            f"{tfrc_rate(t + 3.0) / 1e3:6.1f} KB/s (3 s)"
        )
    print(
        "TFRC loss events (drops within one RTT of the first): drops, kinds, when the receiver's p"
    )
    print("rose (loss detection and the report behind it), p before -> after, the sender's rate")
    events: list[list[tuple]] = []
    for r in rows:
        if r[1] != 0:
            continue
        if events and r[0] - events[-1][0][0] < rtt_at(fb, r[0]):
            events[-1].append(r)
        else:
            events.append([r])
    for ev in events:
        t = ev[0][0]
        rise = next((x for x in rxp if x[0] > t and x[1] > p_at(rxp, t) * 1.01), None)
        if rise is None:
            continue
        rep = next((x for x in fb if x[0] >= rise[0]), None)
        nq = sum(1 for r in ev if r[4] == "queue")
        print(
            f"  {t:8.3f} drops {len(ev)} ({nq}q/{len(ev) - nq}r); p rose at {rise[0]:8.3f} "
            f"(+{rise[0] - t:.3f} s) {p_at(rxp, t):.5f} -> {rise[1]:.5f}; report +"
            f"{(rep[0] - t) if rep else float('nan'):.3f} s; rate {tfrc_rate(t) / 1e3:6.1f} -> "
            f"{tfrc_rate(t + 1.0) / 1e3:6.1f} (1 s) -> {tfrc_rate(t + 3.0) / 1e3:6.1f} KB/s (3 s)"
        )
    marks = [79.9, 80.5, 81, 81.5, 82, 83, 84, 85, 87.5, 90, 95, 100, 105, 110, 115, 120]
    print(
        "TFRC rate (KB/s; the link is 187.5, the fair share 93.8) and p at the sender's last report"
    )
    print("  " + " ".join(f"{m:g}:{tfrc_rate(m) / 1e3:.0f}/{fb_p(fb, m):.4f}" for m in marks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
