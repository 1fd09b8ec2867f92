"""Thesis 000's testbed set-up (Sec. 5.2, Fig. 5.10: two groups of bulk TCP flows at different
RTTs through one DropTail bottleneck) in stock ns-2.35 and in tfcc, side by side (issue 6).

ns-2 runs `rtt_groups.tcl` with `Agent/TCP/Sack1` (`sack`) or `Agent/TCP/Linux` and one of
ns-2.35's Linux congestion modules (`cubic`, `reno`); tfcc runs `scenarios/000-testbed.toml`
with the matching protocol: `sack` and `reno` as `tcp-sack` (Reno's AIMD on SACK recovery, the
claims' RENO reading), `cubic` as `tcp-cubic` (RFC 9438). Each group's RTT is set on its
sender's links as the claims do (link delay RTT/2 − 0.2 ms, the bottleneck and the receiver's
link adding 0.1 ms each way). Per seed it prints, for each simulator, the goodput of every flow
and of each group (Mb/s over [from, duration]), Jain's index over all flows (the claims'
`jain`), the retransmitted share, the share of its packets dropped (ns-2: at the bottleneck
queue, a flow monitor; tfcc: `packets_lost`) and the timeouts per flow (all over the window).

With `--cwnd-every S` both simulators also sample flow 0's congestion window every S seconds
(ns-2: the sender's `cwnd_`, the Linux agent's integer `snd_cwnd`; tfcc: the `cwnd` column of
the flow time series, `sample_interval`), and the driver reads the sawtooth off each: per
reduction the window before it (the peak), the floor after it, their ratio (CUBIC's β), the time
from the peak back to the peak's window (CUBIC's K when W_max is the peak), the share of the
regrowth done at half that time (concave growth: above 0.5; RFC 9438's cubic from W_max·β with
no Reno-friendly region: 7/8) and the time between peaks. `--n-c 0` leaves group C out (one
flow alone: `--n 1 --n-c 0`); `--start-c S` starts group C S seconds later in both (each flow
still drawn uniformly over a second); `--no-linux-ts` runs ns-2's Linux agents without TCP
timestamps (`timestamps_`, `ts_echo_rfc1323_` off; on by default, as ns-2's Linux TCP
documentation sets them; with them ns-2 puts 10 more bytes on the wire per segment, 1510 instead
of 1500); `--packet-size B` sets both simulators' payload, `--tfcc-packet-size B` tfcc's alone
(1470 gives tfcc the 1510 wire bytes of ns-2's Linux agent with timestamps).

Usage: `python bench/ns2/rtt_groups.py [--cc CC] [--cc-a CC] [--cc-c CC] [--n N] [--n-c N]
[--rtt-a MS] [--rtt-c MS] [--rate BPS] [--duration S] [--from S] [--seeds 1-3]
[--cwnd-every S] [--start-c S] [--no-linux-ts] [--packet-size B] [--tfcc-packet-size B]
[--tfcc-cubic-params '{ beta = 0.8 }'] [--json FILE]`; `--tfcc-cubic-params` sets the `params`
of tfcc's `tcp-cubic` flows (e.g. the 2.6 kernel's β, to tell a version difference from a
defect).
Findings: docs/reproductions/log/ttfwc.md, "CUBIC in stock ns-2.35 (2026-11-26, cubicns2)".
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from tfcc import _core
from tfcc.metrics import RunResult, jain_index
from tfcc.ns2 import find_ns
from tfcc.sweep import SweepError, seeds_option

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "rtt_groups.tcl"
SCENARIO = HERE.parents[1] / "scenarios" / "000-testbed.toml"
# The TCP of a group in tfcc for each of rtt_groups.tcl's `cc` values.
TFCC_PROTOCOL = {"sack": "tcp-sack", "reno": "tcp-sack", "cubic": "tcp-cubic"}


def link_delay_s(rtt_ms: float) -> float:
    """The sender link's one-way delay for a round trip of `rtt_ms` (000-testbed.toml: the
    bottleneck and the receiver's link add 0.1 ms each way)."""
    return rtt_ms / 2e3 - 0.0002


def ns2_run(
    *,
    cc_a: str,
    cc_c: str,
    seed: int,
    n: int = 3,
    n_c: int = 3,
    rtt_a: float = 120.0,
    rtt_c: float = 120.0,
    rate: float = 10e6,
    duration: float = 200.0,
    from_s: float = 20.0,
    cwnd_every: float = 0.0,
    start_c: float = 0.0,
    linux_ts: bool = True,
    packet_size: int = 1460,
    timeout: float = 1800.0,
) -> dict:
    """One run of rtt_groups.tcl: its JSON line, goodput in payload Mb/s (`wire_bytes` per flow
    added)."""
    ns = find_ns()
    if ns is None:
        raise RuntimeError("no ns-2: make ns2")
    args = {
        "cc_a": cc_a,
        "cc_c": cc_c,
        "seed": seed,
        "n": n,
        "n_c": n_c,
        "delay_a": f"{link_delay_s(rtt_a):.7g}",
        "delay_c": f"{link_delay_s(rtt_c):.7g}",
        "rate": f"{rate:g}",
        "duration": f"{duration:g}",
        "from": f"{from_s:g}",
        "cwnd_every": f"{cwnd_every:g}",
        "start_c": f"{start_c:g}",
        "linux_ts": int(linux_ts),
        "packet_size": packet_size,
    }
    out = subprocess.run(
        [ns, str(SCRIPT), *(f"{k}={v}" for k, v in args.items())],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout
    # The Linux agent prints "cmd select_ca ..." on stdout as well: the report is the JSON line.
    line = next(x for x in reversed(out.splitlines()) if x.startswith("{"))
    r = json.loads(line)
    # TCPSink's bytes_ counts wire bytes: the payload, 40 bytes of headers and, for a Linux agent
    # with timestamps, ns-2's ts_option_size_ of 10. tfcc's goodput is payload.
    r["wire_bytes"] = [
        packet_size + 40 + (10 if linux_ts and a.startswith("Agent/TCP/Linux") else 0)
        for a in r["agents"]
    ]
    r["goodput_mbps"] = [
        g * packet_size / w for g, w in zip(r["goodput_mbps"], r["wire_bytes"], strict=True)
    ]
    # Compared over the measurement window, as tfcc's summary counts them.
    r["rexmit_share"], r["timeouts"] = r.pop("window_rexmit_share"), r.pop("window_timeouts")
    r["drop_share"] = r.pop("window_drop_share")
    return r


def tfcc_run(
    *,
    cc_a: str,
    cc_c: str,
    seed: int,
    n: int = 3,
    n_c: int = 3,
    rtt_a: float = 120.0,
    rtt_c: float = 120.0,
    rate: float = 10e6,
    duration: float = 200.0,
    from_s: float = 20.0,
    cwnd_every: float = 0.0,
    start_c: float = 0.0,
    cubic_params: str = "{}",
    packet_size: int = 1460,
) -> dict:
    """tfcc's run of 000-testbed.toml in the keys of rtt_groups.tcl's report; `cubic_params`
    is the `params` table of the `tcp-cubic` groups (e.g. `{ beta = 0.8 }`)."""

    def params(cc: str) -> str:
        return cubic_params if cc == "cubic" else "{}"

    sets = [
        f"flows.0.protocol={TFCC_PROTOCOL[cc_a]}",
        f"flows.0.params={params(cc_a)}",
        f"flows.0.count={n}",
        f"flows.0.packet_size={packet_size}B",
        f"topology.links.0.delay={link_delay_s(rtt_a) * 1e3:.6g}ms",
        f"topology.links.1.delay={link_delay_s(rtt_a) * 1e3:.6g}ms",
        f"topology.links.4.rate={rate / 1e6:g}Mbps",
        f"topology.links.5.rate={rate / 1e6:g}Mbps",
        f"duration={duration:g}s",
        f"measure_from={from_s:g}s",
    ]
    if cwnd_every > 0:
        sets.append(f"sample_interval={cwnd_every * 1e3:g}ms")
    with tempfile.TemporaryDirectory() as tmp:
        scenario = SCENARIO
        if n_c == 0:
            # A scenario's flow group needs count ≥ 1: drop group C's table instead.
            text = SCENARIO.read_text()
            scenario = Path(tmp) / SCENARIO.name
            scenario.write_text(text[: text.rindex("[[flows]]")])
        else:
            sets += [
                f"flows.1.protocol={TFCC_PROTOCOL[cc_c]}",
                f"flows.1.params={params(cc_c)}",
                f"flows.1.count={n_c}",
                f"flows.1.packet_size={packet_size}B",
                f"topology.links.2.delay={link_delay_s(rtt_c) * 1e3:.6g}ms",
                f"topology.links.3.delay={link_delay_s(rtt_c) * 1e3:.6g}ms",
            ]
            if start_c > 0:
                sets.append(f'flows.1.start={{ random = ["{start_c:g}s", "{start_c + 1:g}s"] }}')
        r = _core.run_scenario(str(scenario), sets, seed, None)
    s = RunResult(r["summary"], r["flow_series"], r["link_series"])
    flows = s["flows"]
    out: dict = {
        "goodput_mbps": [float(f["throughput_bps"]) / 1e6 for f in flows],
        "rexmit_share": [f["retransmits"] / max(1, f["packets_sent"]) for f in flows],
        "drop_share": [f["packets_lost"] / max(1, f["packets_sent"]) for f in flows],
        "timeouts": [f["timeouts"] for f in flows],
        "agents": [f["protocol"] for f in flows],
    }
    if cwnd_every > 0:
        cols = [s.flow_column(f["id"], "cwnd") for f in flows]
        out["cwnd"] = [[t, *(c[1][i] for c in cols)] for i, t in enumerate(cols[0][0])]
    return out


def sawtooth(rows: list[list[float]], col: int = 1, drop: float = 0.03) -> list[dict]:
    """The reductions of one flow's sampled window (`rows` as the reports' `cwnd`, the flow in
    column `col`): a reduction is a fall of more than `drop` (relative) from a local peak.
    Per reduction: `t` and `w_max` (the peak), `w_floor` (the lowest window before it grows
    again), `beta` = w_floor / w_max, `regain_s` (peak to the first sample at or above w_max;
    None if the next reduction comes first), `half_share` (the share of w_max − w_floor regained
    at half of regain_s after the floor) and `period_s` (to the next peak; None for the last)."""
    t = [r[0] for r in rows]
    w = [r[col] for r in rows]
    peaks = []
    i = 1
    while i < len(w):
        if w[i] < w[i - 1] * (1 - drop):
            peak = i - 1
            j = i
            while j + 1 < len(w) and w[j + 1] <= w[j]:
                j += 1
            peaks.append((peak, j))
            i = j + 1
        else:
            i += 1
    out = []
    for k, (p, f) in enumerate(peaks):
        nxt = peaks[k + 1][0] if k + 1 < len(peaks) else len(w) - 1
        regain = next((m for m in range(f, nxt + 1) if w[m] >= w[p]), None)
        half = None
        if regain is not None and regain > f:
            mid_t = t[f] + (t[regain] - t[f]) / 2
            m = min(range(f, regain + 1), key=lambda q: abs(t[q] - mid_t))
            half = (w[m] - w[f]) / max(w[p] - w[f], 1e-9)
        out.append(
            {
                "t": t[p],
                "w_max": w[p],
                "w_floor": w[f],
                "beta": w[f] / w[p],
                "regain_s": None if regain is None else t[regain] - t[p],
                "half_share": half,
                "period_s": t[peaks[k + 1][0]] - t[p] if k + 1 < len(peaks) else None,
            }
        )
    return out


def sawtooth_summary(rows: list[list[float]], after: float) -> dict:
    """Medians of the sawtooth's numbers over the reductions after `after` seconds (slow start's
    overshoot left out)."""
    cycles = [c for c in sawtooth(rows) if c["t"] >= after]

    def med(key: str) -> float | None:
        v = [c[key] for c in cycles if c[key] is not None]
        return statistics.median(v) if v else None

    return {
        "reductions": len(cycles),
        **{k: med(k) for k in ("w_max", "w_floor", "beta", "regain_s", "half_share", "period_s")},
    }


def groups(r: dict, n: int) -> dict:
    """Per-group goodput (sum over the group's flows, Mb/s), their ratio C/A and Jain's index
    over all flows."""
    g = r["goodput_mbps"]
    a, c = sum(g[:n]), sum(g[n:])
    return {
        "a_mbps": a,
        "c_mbps": c,
        "c_over_a": c / a if a > 0 and len(g) > n else None,
        "jain": jain_index(g) if any(g) else 0.0,
    }


def fmt(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", default="cubic", choices=sorted(TFCC_PROTOCOL))
    ap.add_argument("--cc-a", choices=sorted(TFCC_PROTOCOL))
    ap.add_argument("--cc-c", choices=sorted(TFCC_PROTOCOL))
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--n-c", type=int)
    ap.add_argument("--rtt-a", type=float, default=120.0, help="ms")
    ap.add_argument("--rtt-c", type=float, default=120.0, help="ms")
    ap.add_argument("--rate", type=float, default=10e6, help="bottleneck b/s")
    ap.add_argument("--duration", type=float, default=200.0)
    ap.add_argument("--from", dest="from_s", type=float)
    ap.add_argument("--seeds", default="1-3", help="N, A-B or A,B,C")
    ap.add_argument("--cwnd-every", type=float, default=0.0)
    ap.add_argument("--start-c", type=float, default=0.0, help="group C starts this much later")
    ap.add_argument(
        "--no-linux-ts", action="store_true", help="ns-2's Linux agents without timestamps"
    )
    ap.add_argument("--packet-size", type=int, default=1460, help="payload bytes, both sims")
    ap.add_argument(
        "--tfcc-packet-size", type=int, help="tfcc's payload bytes (default --packet-size)"
    )
    ap.add_argument("--tfcc-cubic-params", default="{}", help="e.g. '{ beta = 0.8 }'")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    try:
        a.seeds = seeds_option(a.seeds, first=1)
    except SweepError as e:
        ap.error(str(e))
    kw = {
        "cc_a": a.cc_a or a.cc,
        "cc_c": a.cc_c or a.cc,
        "n": a.n,
        "n_c": a.n if a.n_c is None else a.n_c,
        "rtt_a": a.rtt_a,
        "rtt_c": a.rtt_c,
        "rate": a.rate,
        "duration": a.duration,
        "from_s": a.duration / 10 if a.from_s is None else a.from_s,
        "cwnd_every": a.cwnd_every,
        "start_c": a.start_c,
    }
    print(
        f"A: {kw['n']} x {kw['cc_a']} at {a.rtt_a:g} ms, C: {kw['n_c']} x {kw['cc_c']} at "
        f"{a.rtt_c:g} ms, {a.rate / 1e6:g} Mb/s, {a.duration:g} s (from {kw['from_s']:g} s); "
        f"tfcc {TFCC_PROTOCOL[kw['cc_a']]} / {TFCC_PROTOCOL[kw['cc_c']]}"
    )
    rows = []
    for seed in a.seeds:
        for sim in ("ns-2", "tfcc"):
            if sim == "ns-2":
                r = ns2_run(seed=seed, linux_ts=not a.no_linux_ts, packet_size=a.packet_size, **kw)
            else:
                r = tfcc_run(
                    seed=seed,
                    cubic_params=a.tfcc_cubic_params,
                    packet_size=a.tfcc_packet_size or a.packet_size,
                    **kw,
                )
            g = groups(r, kw["n"])
            rows.append({"seed": seed, "sim": sim, "groups": g, **r})
            print(
                f"seed {seed} {sim:5}: A {g['a_mbps']:.3f} C {g['c_mbps']:.3f} Mb/s, C/A "
                f"{fmt(g['c_over_a'])}, Jain {g['jain']:.3f}; per flow "
                + " ".join(f"{v:.2f}" for v in r["goodput_mbps"])
                + "; rexmit % "
                + " ".join(f"{100 * v:.2f}" for v in r["rexmit_share"])
                + "; dropped % "
                + " ".join(f"{100 * v:.2f}" for v in r["drop_share"])
                + "; timeouts "
                + " ".join(str(v) for v in r["timeouts"])
            )
            if "cwnd" in r:
                st = sawtooth_summary(r["cwnd"], kw["from_s"])
                rows[-1]["sawtooth"] = st
                print(
                    f"    flow 0 sawtooth (medians of {st['reductions']} reductions): W_max "
                    f"{fmt(st['w_max'], '.1f')}, floor {fmt(st['w_floor'], '.1f')}, beta "
                    f"{fmt(st['beta'])}, regain {fmt(st['regain_s'], '.2f')} s, half-time share "
                    f"{fmt(st['half_share'])}, period {fmt(st['period_s'], '.2f')} s"
                )
                rows[-1].pop("cwnd")
    for sim in ("ns-2", "tfcc"):
        mine = [r["groups"] for r in rows if r["sim"] == sim]
        ratios = [g["c_over_a"] for g in mine if g["c_over_a"] is not None]
        print(
            f"{sim:5} mean over seeds: Jain {statistics.mean(g['jain'] for g in mine):.3f}"
            + (f", C/A {statistics.mean(ratios):.3f}" if ratios else "")
        )
    if a.json:
        a.json.write_text(json.dumps({"args": kw, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
