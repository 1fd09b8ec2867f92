"""Where a video frame's delay goes: each whole frame's time from coming due to being whole at
the receiver (``tfcc video-quality``'s frame delay), split into the sender's send buffer and the
path, from a packet trace of the run.

    python scripts/frame_delay_components.py [--seeds 1] [--senders tfwc,tfrc] OUTDIR

Runs scenarios/002-r7-vic-psnr.toml's case (d) (5 Mb/s, 80 ms, 1 % Bernoulli loss) with each
sender and seed, tracing the flow's access links and the bottleneck, and prints a Markdown table
per sender (medians, means and 95th percentiles over the whole frames due in the window that
``tfcc video-quality`` scores, and the medians of the per-seed medians when several seeds run).
Written for the play-out section of docs/reproductions/log/tfwc.md (issue 6). The components of a
frame, which add up to its delay:

- ``behind``: due until the sender sent the packet carrying its first byte: the time the bytes
  offered before it (``sbuf_bytes``) took to leave, as the window or the rate let them;
- ``spread``: that packet until the one carrying its last byte left (its own packets);
- ``access``: the last packet on the sender's access link (serialisation and delay);
- ``queue``: the last packet's wait in the bottleneck queue;
- ``path``: the last packet from the bottleneck's transmission to the receiver.

A frame is whole when every packet carrying its bytes has arrived (no sender retransmits), so
the last of them to arrive makes it whole; links are first in, first out, so that is the last
one sent. A loss does not delay a whole frame; it loses the frame. Packets are matched to frames
as ``tfcc_sim::frames`` does (a data packet takes ``min(packet size, buffered bytes)`` of the
frames' byte stream, in sequence order), and the match is checked: the packets of every frame
and the time it was whole must equal ``frames.parquet``'s, or the script stops.

For TFWC it also checks the window rule at each 100 ms sample of the measurement window where
the send buffer held data:
the packets beyond the highest number the receiver reported must equal the sampled ``cwnd``
(002 Eq. 3.6), or exceed it where the last Ack Vector shrank the window; fewer would be a
packet held while the window allowed it. ``head`` is read from the Ack Vectors' arrivals at the
sender (one per data packet delivered, in order).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl

from tfcc.sweep import SweepError, seeds_option

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "002-r7-vic-psnr.toml"
CASE_D = 'topology.bottleneck.loss={ model = "bernoulli", p = 0.01 }'
SENDERS = {
    # Choi's ns-2.34 agent, TfwcConfig::default() (the scenario itself runs the vic preset).
    "tfwc": ["flows.0.params={}"],
    "tfwc-vic": [],
    "tfwc-thesis": ['flows.0.params={ preset = "thesis" }'],
    "tfwc-nearest": ['flows.0.params={ rounding = "nearest" }'],
    "tfrc": ["flows.0.protocol=tfrc", "flows.0.params={}"],
    "tfrc-rfc5348": ["flows.0.protocol=tfrc", 'flows.0.params={ preset = "rfc5348" }'],
}
LINKS = ["access-src-0", "bottleneck", "access-dst-0", "access-src-0-rev"]
PARTS = ["behind", "spread", "access", "queue", "path"]
#: Times in the trace and frames.parquet are whole nanoseconds as f64 seconds.
EPS = 1e-10


class TraceError(Exception):
    """The run's outputs cannot be decomposed (no trace of the links, or a mismatch)."""


def _events(trace: pl.DataFrame, link: str, event: str, direction: str) -> pl.DataFrame:
    return trace.filter(
        (pl.col("link") == link) & (pl.col("event") == event) & (pl.col("direction") == direction)
    ).sort("t", maintain_order=True)


def _by_seq(ev: pl.DataFrame) -> dict[int, float]:
    return dict(zip(ev["seq"].to_list(), ev["t"].to_list(), strict=True))


def components(run: Path) -> tuple[pl.DataFrame, dict]:
    """Per whole frame of flow 0 due in the scored window: its delay and components (s), and the
    run's facts (throughput, frames lost, the TFWC window check)."""
    summary = json.loads((run / "summary.json").read_text())
    trace_path = run / "trace.parquet"
    if not trace_path.exists():
        raise TraceError(f"{run}: no trace.parquet (trace the links {', '.join(LINKS)})")
    trace = pl.read_parquet(trace_path).filter(pl.col("flow") == 0)
    missing = [ln for ln in LINKS if trace.filter(pl.col("link") == ln).is_empty()]
    if missing:
        raise TraceError(f"{run}: the trace has no events of {', '.join(missing)}")
    frames = pl.read_parquet(run / "frames.parquet").filter(pl.col("flow") == 0).sort("frame")
    flow = summary["flows"][0]

    sent = _events(trace, "access-src-0", "+", "forward")
    send_t = sent["t"].to_numpy()
    wire = sent["size"].to_numpy()
    seqs = sent["seq"].to_numpy()
    if np.any(np.diff(seqs) != 1) or (len(seqs) and seqs[0] != 0):
        raise TraceError(f"{run}: data packets did not leave in sequence order from 0")
    q_in = _by_seq(_events(trace, "bottleneck", "+", "forward"))
    q_out = _by_seq(_events(trace, "bottleneck", "-", "forward"))
    arrive = _by_seq(_events(trace, "access-dst-0", "r", "forward"))

    due = frames["t"].to_numpy()
    size = frames["bytes"].to_numpy()
    end = np.cumsum(size)
    start = end - size
    # Bytes offered at each send: the frames due at or before it (a frame is offered, then
    # the sender polled, at its due instant).
    offered = end[np.searchsorted(due, send_t + EPS, side="right") - 1]
    first_byte = np.empty(len(seqs), dtype=np.int64)
    last_byte = np.empty(len(seqs), dtype=np.int64)
    cursor = 0
    # A packet takes at most the packet size the scenario gives (every data packet's size).
    size_cap = int(wire.max()) if len(wire) else 0
    for i in range(len(seqs)):
        take = min(size_cap, int(offered[i]) - cursor)
        if take <= 0:
            raise TraceError(f"{run}: packet {seqs[i]} left with nothing buffered")
        first_byte[i], last_byte[i] = cursor, cursor + take - 1
        cursor += take
    # The packets carrying frame k's bytes: those whose byte range meets [start_k, end_k).
    lo = np.searchsorted(last_byte, start, side="left")
    hi = np.searchsorted(first_byte, end, side="left") - 1
    n_packets = np.where((size > 0) & (lo <= hi) & (lo < len(seqs)), hi - lo + 1, 0)
    recorded = frames["packets"].to_numpy()
    if not np.array_equal(n_packets, recorded):
        k = int(np.flatnonzero(n_packets != recorded)[0])
        raise TraceError(
            f"{run}: frame {k}: {n_packets[k]} packets matched, frames.parquet has {recorded[k]}"
        )

    t0 = float(summary["measure_from_s"])
    t1 = float(summary["sim_seconds"]) - 1.0  # tfcc video-quality's 1 s grace
    complete = frames["complete_s"].to_numpy()
    rows = []
    lost = 0
    for k in range(len(due)):
        if size[k] == 0 or not (t0 <= due[k] < t1):
            continue
        if np.isnan(complete[k]):
            lost += 1
            continue
        last = seqs[hi[k]]
        whole = max(arrive.get(int(s), np.inf) for s in seqs[lo[k] : hi[k] + 1])
        if abs(whole - complete[k]) > EPS or abs(arrive[int(last)] - whole) > EPS:
            raise TraceError(
                f"{run}: frame {k} whole at {complete[k]} s, its packets arrived by {whole} s"
            )
        rows.append(
            {
                "frame": k,
                "t": due[k],
                "sbuf_bytes": frames["sbuf_bytes"][k],
                "packets": int(n_packets[k]),
                "last_packet_bytes": int(wire[hi[k]]),
                "delay": complete[k] - due[k],
                "behind": send_t[lo[k]] - due[k],
                "spread": send_t[hi[k]] - send_t[lo[k]],
                "access": q_in[int(last)] - send_t[hi[k]],
                "queue": q_out[int(last)] - q_in[int(last)],
                "path": arrive[int(last)] - q_out[int(last)],
            }
        )
    table = pl.DataFrame(rows)
    # How the sender spaces packets while it has more to send (the window's Ack clock or the
    # rate's pacing), and the mean wait from a random instant to the next departure,
    # E[gap²]/(2·E[gap]): 1/(2·rate) for even pacing, more when the packets leave in trains.
    in_window = (due >= t0) & (due < t1)
    backlogged = (offered[:-1] > last_byte[:-1] + 1) & (send_t[:-1] >= t0) & (send_t[:-1] < t1)
    gaps = np.diff(send_t)[backlogged]
    delay = table["delay"].to_numpy() if len(table) else np.array([np.nan])
    facts = {
        "throughput_mbps": flow["throughput_bps"] / 1e6,
        "whole_frames": len(table),
        "within_150ms": int((delay <= 0.15).sum()),
        "delay_p50_ms": float(np.median(delay) * 1e3),
        "retransmits": flow.get("retransmits"),
        "frames_lost": lost,
        "loss_event_rate": flow.get("loss_event_rate"),
        "backlogged_gap_ms": float(gaps.mean() * 1e3) if len(gaps) else None,
        "backlogged_gap_cv": float(gaps.std() / gaps.mean()) if len(gaps) else None,
        "backlogged_gaps_under_2ms": float((gaps < 0.002).mean()) if len(gaps) else None,
        "wait_for_next_departure_ms": (
            float((gaps**2).mean() / (2 * gaps.mean()) * 1e3) if len(gaps) else None
        ),
        "slot_sbuf_bytes_median": float(np.median(frames["sbuf_bytes"].to_numpy()[in_window])),
        # Algorithm 5's ceiling: the source's smallest frames, H.261's largest quantizer
        "slots_at_q31": float((frames["q"].to_numpy()[in_window] == 31).mean()),
    }
    facts.update(_rate_facts(run, t0, size_cap))
    if flow["protocol"] == "tfwc":
        facts.update(_window_check(run, trace, send_t, last_byte, (due, end)))
    return table, facts


def _rate_facts(run: Path, t0: float, packet_bytes: int) -> dict[str, float]:
    """The rate the controller allowed, averaged over the 100 ms samples from ``t0`` (TFWC:
    ``cwnd·s/RTT``; TFRC: ``X``), and how far it sat from the equation at the sampled ``p``
    (TFWC: ``cwnd/W(p)``, TFRC: ``X·R/(s·W(p))``, W(p) = 1/f(p) of 002 Eq. 3.5 / RFC 5348)."""
    from tfcc import Equation

    eq = Equation()
    ts = pl.read_parquet(run / "timeseries.parquet").filter(
        (pl.col("flow") == 0) & (pl.col("t") >= t0) & pl.col("p").is_not_null()
    )
    if ts.is_empty():
        return {}
    w = np.array([eq.window(p) for p in ts["p"].to_numpy()])
    rtt = ts["rtt_s"].to_numpy()
    if ts["cwnd"].is_not_null().all():
        cwnd = ts["cwnd"].to_numpy()
        allowed, ratio = cwnd * packet_bytes * 8 / rtt, cwnd / w
    else:
        x = ts["rate_bps"].to_numpy()
        allowed, ratio = x, x * rtt / (packet_bytes * 8 * w)
    return {
        "allowed_rate_mbps": float(np.mean(allowed) / 1e6),
        "rate_over_equation": float(np.mean(ratio)),
    }


def _window_check(
    run: Path,
    trace: pl.DataFrame,
    send_t: np.ndarray,
    last_byte: np.ndarray,
    stream: tuple[np.ndarray, np.ndarray],
) -> dict[str, int]:
    """At each sample with bytes in the send buffer, the packets beyond the reported head against
    the sampled cwnd. ``stream`` is the frames' due times and cumulative bytes."""
    acks = _events(trace, "access-src-0-rev", "r", "reverse")["t"].to_numpy()
    delivered = _events(trace, "access-dst-0", "r", "forward")["seq"].to_numpy()
    due, end = stream
    # From the measurement window on: before it, after slow start's first loss, the window can
    # fall below the hybrid's threshold, where the rate timer, not the window, lets packets out.
    t0 = json.loads((run / "summary.json").read_text())["measure_from_s"]
    ts = pl.read_parquet(run / "timeseries.parquet").filter(
        (pl.col("flow") == 0) & (pl.col("t") >= t0)
    )
    checked = held = over = 0
    for t, cwnd in zip(ts["t"].to_numpy(), ts["cwnd"].to_numpy(), strict=True):
        n_sent = int(np.searchsorted(send_t, t + EPS, side="right"))
        n_acks = int(np.searchsorted(acks, t + EPS, side="right"))
        n_due = int(np.searchsorted(due, t + EPS, side="right"))
        if n_sent == 0 or n_acks == 0 or n_due == 0 or np.isnan(cwnd):
            continue
        if int(end[n_due - 1]) <= int(last_byte[n_sent - 1]) + 1:
            continue  # the send buffer was empty: the window need not be full
        head = int(np.max(delivered[:n_acks]))
        checked += 1
        out = n_sent - (head + 1)
        held += int(out < int(cwnd))
        over += int(out > int(cwnd))
    return {
        "window_samples_checked": checked,
        "window_open_with_data_waiting": held,
        "window_shrunk_below_outstanding": over,
    }


def describe(tables: list[pl.DataFrame]) -> dict[str, dict[str, float]]:
    """Median, mean, p95 (ms) of the delay and each part over all frames, and the median of the
    per-run medians."""
    allf = pl.concat(tables)
    out = {}
    for c in ["delay", *PARTS]:
        x = allf[c].to_numpy() * 1e3
        out[c] = {
            "p50": float(np.median(x)),
            "mean": float(np.mean(x)),
            "p95": float(np.quantile(x, 0.95)),
            "p50_of_runs": float(np.median([np.median(t[c].to_numpy()) * 1e3 for t in tables])),
        }
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--seeds", default="1", help="N (1 to N), A-B or A,B,C (default 1)")
    ap.add_argument("--senders", default="tfwc,tfrc", help=f"of {', '.join(SENDERS)}")
    a = ap.parse_args(argv)
    try:
        seeds = seeds_option(a.seeds, first=1)
    except SweepError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    senders = a.senders.split(",")
    unknown = [s for s in senders if s not in SENDERS]
    if unknown:
        print(
            f"error: unknown sender {unknown[0]!r} (one of {', '.join(SENDERS)})", file=sys.stderr
        )
        return 2
    from tfcc.run import run

    trace = "trace.links=[" + ", ".join(f'"{ln}"' for ln in LINKS) + "]"
    results = {}
    try:
        for name in senders:
            tables, facts = [], []
            for seed in seeds:
                out = a.outdir / f"{name}-s{seed}"
                run(
                    SCENARIO, out, seed=seed, overrides=[CASE_D, trace, *SENDERS[name]], plots=False
                )
                t, f = components(out)
                t.write_csv(out / "frame_delays.csv")
                tables.append(t)
                facts.append(f | {"seed": seed})
            results[name] = {"parts_ms": describe(tables), "runs": facts}
    except TraceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    (a.outdir / "frame-delays.json").write_text(json.dumps(results, indent=1))
    multi = len(seeds) > 1
    print(f"Case (d), seeds {a.seeds}: ms over every whole frame, median / mean / p95", end="")
    print(" (median of the per-seed medians).\n" if multi else ".\n")
    print("| sender | whole frames | Mb/s | " + " | ".join(["delay", *PARTS]) + " |")
    print("|---|---|---|" + "---|" * (1 + len(PARTS)))
    for name, r in results.items():
        p = r["parts_ms"]
        mbps = np.mean([f["throughput_mbps"] for f in r["runs"]])
        cells = [
            f"{p[c]['p50']:.0f} / {p[c]['mean']:.0f} / {p[c]['p95']:.0f}"
            + (f" ({p[c]['p50_of_runs']:.0f})" if multi else "")
            for c in ["delay", *PARTS]
        ]
        whole = sum(f["whole_frames"] for f in r["runs"])
        print(f"| {name} | {whole} | {mbps:.3f} | " + " | ".join(cells) + " |")
    print(
        "\n| sender | seed | Mb/s | allowed Mb/s (over equation) | whole within 150 ms "
        "| delay p50 ms | sbuf p50 bytes at due "
        "| gap between packets while backlogged ms (CV) | wait for next departure ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        for f in r["runs"]:
            print(
                f"| {name} | {f['seed']} | {f['throughput_mbps']:.3f} | "
                f"{f['allowed_rate_mbps']:.3f} ({f['rate_over_equation']:.3f}) | "
                f"{f['within_150ms']} | "
                f"{f['delay_p50_ms']:.0f} | {f['slot_sbuf_bytes_median']:.0f} | "
                f"{f['backlogged_gap_ms']:.2f} ({f['backlogged_gap_cv']:.2f}) | "
                f"{f['wait_for_next_departure_ms']:.1f} |"
            )
    for name, r in results.items():
        checks = [f for f in r["runs"] if "window_samples_checked" in f]
        if checks:
            print(
                f"\n{name}: window rule at {sum(f['window_samples_checked'] for f in checks)} "
                "backlogged samples: open with data waiting at "
                f"{sum(f['window_open_with_data_waiting'] for f in checks)}, shrunk below the "
                f"packets out at {sum(f['window_shrunk_below_outstanding'] for f in checks)}"
            )
    runs = [f | {"tfwc": name.startswith("tfwc")} for name, r in results.items() for f in r["runs"]]
    kinds = {f["tfwc"] for f in runs}
    if len(runs) >= 4 and all("allowed_rate_mbps" in f for f in runs):
        y = np.array([f["delay_p50_ms"] for f in runs])
        x = np.array([f["allowed_rate_mbps"] for f in runs])
        print(
            f"\nPer-run median delay against the allowed rate, {len(runs)} runs: "
            f"correlation {np.corrcoef(x, y)[0, 1]:.2f}",
            end="",
        )
        if kinds == {True, False}:
            # Least squares: delay = a + b·rate + c·[TFWC]; c is TFWC's delay at equal rate.
            design = np.c_[np.ones_like(x), x, [float(f["tfwc"]) for f in runs]]
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            resid = y - design @ coef
            cov = resid @ resid / (len(y) - 3) * np.linalg.inv(design.T @ design)
            se = np.sqrt(np.diag(cov))
            print(
                f"; fit {coef[1] / 100:.1f} ms per 0.01 Mb/s, TFWC at equal rate "
                f"{coef[2]:+.1f} ± {se[2]:.1f} ms"
            )
        else:
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
