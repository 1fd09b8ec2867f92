"""``tfcc ns2-trace``: a run's trace.parquet as ns-2's trace-all file (python/tfcc/ns2trace.py).

Three kinds of check: hand-written events against the lines worked out by hand from ns-2.35's
``Trace::format``; the same small dumbbell run in ns-2 (``bench/ns2/dumbbell.tcl trace=FILE``)
and in tfcc, both files read by one awk-style parser; and bad input (one line, exit 2, no file).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tfcc.ns2 import have_ns2, run_ns2
from tfcc.ns2trace import ns2_time

TFCC = [sys.executable, "-m", "tfcc.cli"]

LINKS = {
    "bottleneck": (0, 1),
    "bottleneck-rev": (1, 0),
    "access-src-0": (2, 0),
    "access-dst-0": (1, 3),
}


def tfcc(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TFCC, *map(str, args)], capture_output=True, text=True, timeout=300)


def refused(r: subprocess.CompletedProcess[str], message: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr == f"error: {message}\n", r.stderr


def fake_run(run_dir: Path, groups: list[list[tuple]]) -> Path:
    """A run directory holding `groups` of rows (t, event, reason, link, flow, direction, kind,
    seq, size) as trace.parquet row groups, and the summary's trace section of a two-flow
    dumbbell (flow 0 from host 2 to 3, flow 1 from 4 to 5)."""
    run_dir.mkdir()
    summary = {
        "scenario": "hand",
        "trace": {
            "links": [{"name": n, "from_node": a, "to_node": b} for n, (a, b) in LINKS.items()],
            "flows": [
                {"id": 0, "src_node": 2, "src_port": 0, "dst_node": 3, "dst_port": 0},
                {"id": 1, "src_node": 4, "src_port": 0, "dst_node": 5, "dst_port": 0},
            ],
        },
    }
    (run_dir / "summary.json").write_text(json.dumps(summary))
    schema = pa.schema(
        [
            ("t", pa.float64()),
            ("event", pa.string()),
            ("reason", pa.string()),
            ("link", pa.string()),
            ("flow", pa.int64()),
            ("direction", pa.string()),
            ("kind", pa.string()),
            ("seq", pa.int64()),
            ("size", pa.int64()),
        ]
    )
    with pq.ParquetWriter(run_dir / "trace.parquet", schema) as w:
        for rows in groups:
            cols = list(zip(*rows, strict=True))
            w.write_table(pa.table(dict(zip(schema.names, cols, strict=True)), schema=schema))
    return run_dir


# Each row and the line ns-2 would print for it, worked out by hand.
HAND = [
    # TCP's first segment (ns-2's syn_, 40 bytes) over the sender's access link and on: one
    # packet, one uid, its + on the bottleneck in the instant of its r at node 0.
    (
        (0.0, "+", None, "access-src-0", 0, "forward", "tcp-data", 0, 40),
        "+ 0 2 0 tcp 40 ------- 0 2.0 3.0 0 0",
    ),
    (
        (0.0, "-", None, "access-src-0", 0, "forward", "tcp-data", 0, 40),
        "- 0 2 0 tcp 40 ------- 0 2.0 3.0 0 0",
    ),
    (
        (0.0010032, "r", None, "access-src-0", 0, "forward", "tcp-data", 0, 40),
        "r 0.001003 2 0 tcp 40 ------- 0 2.0 3.0 0 0",
    ),
    (
        (0.0010032, "+", None, "bottleneck", 0, "forward", "tcp-data", 0, 40),
        "+ 0.001003 0 1 tcp 40 ------- 0 2.0 3.0 0 0",
    ),
    # Rounded to the microsecond, half up; %.15g drops trailing zeros.
    (
        (0.0010036, "-", None, "bottleneck", 0, "forward", "tcp-data", 0, 40),
        "- 0.001004 0 1 tcp 40 ------- 0 2.0 3.0 0 0",
    ),
    # An r whose - came before the trace's window: a uid of its own.
    (
        (0.5, "r", None, "bottleneck", 1, "forward", "tfwc-data", 6, 1000),
        "r 0.5 0 1 tfwc 1000 ------- 1 4.0 5.0 6 1",
    ),
    # The ACK of segment 0: tfcc's seq is the next segment expected (1), ns-2 prints the
    # last one received in order (0); feedback goes from the receiver to the sender.
    (
        (1.25, "+", None, "bottleneck-rev", 0, "reverse", "tcp-ack", 1, 40),
        "+ 1.25 1 0 ack 40 ------- 0 3.0 2.0 0 2",
    ),
    # A duplicate ACK queued behind it: same key, its own uid, first in first out.
    (
        (1.25, "+", None, "bottleneck-rev", 0, "reverse", "tcp-ack", 1, 40),
        "+ 1.25 1 0 ack 40 ------- 0 3.0 2.0 0 3",
    ),
    (
        (1.2500001, "-", None, "bottleneck-rev", 0, "reverse", "tcp-ack", 1, 40),
        "- 1.25 1 0 ack 40 ------- 0 3.0 2.0 0 2",
    ),
    (
        (1.2503201, "-", None, "bottleneck-rev", 0, "reverse", "tcp-ack", 1, 40),
        "- 1.25032 1 0 ack 40 ------- 0 3.0 2.0 0 3",
    ),
    (
        (1.2703201, "r", None, "bottleneck-rev", 0, "reverse", "tcp-ack", 1, 40),
        "r 1.27032 1 0 ack 40 ------- 0 3.0 2.0 0 2",
    ),
    # TFWC's Ack Vector carries no single number: -1, as ns-2 prints for such a type.
    (
        (2.0, "+", None, "bottleneck-rev", 1, "reverse", "tfwc-ack", None, 40),
        "+ 2 1 0 tfwcAck 40 ------- 1 5.0 4.0 -1 4",
    ),
    # A drop on arrival: no +, a new uid; then TFRC's data, its report and a CBR datagram.
    (
        (3.000004, "d", "overflow", "bottleneck", 1, "forward", "tfwc-data", 7, 1000),
        "d 3.000004 0 1 tfwc 1000 ------- 1 4.0 5.0 7 5",
    ),
    (
        (12.5, "r", None, "access-dst-0", 0, "forward", "tfrc-data", 41, 1000),
        "r 12.5 1 3 tcpFriend 1000 ------- 0 2.0 3.0 41 6",
    ),
    (
        (100.0, "+", None, "bottleneck-rev", 0, "reverse", "tfrc-feedback", 41, 40),
        "+ 100 1 0 tcpFriendCtl 40 ------- 0 3.0 2.0 41 7",
    ),
    (
        (100.0, "+", None, "bottleneck", 1, "forward", "raw", 3, 210),
        "+ 100 0 1 cbr 210 ------- 1 4.0 5.0 3 8",
    ),
]


def test_hand_checked_events_give_ns2s_lines(tmp_path: Path) -> None:
    rows = [r for r, _ in HAND]
    # Three row groups: the uid bookkeeping carries over from one to the next.
    run = fake_run(tmp_path / "run", [rows[:4], rows[4:9], rows[9:]])
    r = tfcc("ns2-trace", run)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith(f"{run / 'out.tr'}: {len(HAND)} events of 9 packets ("), r
    assert (run / "out.tr").read_text() == "".join(line + "\n" for _, line in HAND)
    out = tfcc("ns2-trace", run, "--out", "-")
    assert out.returncode == 0 and out.stdout == (run / "out.tr").read_text()
    assert sorted(p.name for p in run.iterdir()) == ["out.tr", "summary.json", "trace.parquet"]


def test_times_print_as_ns2_prints_them() -> None:
    # floor(t * 1e6 + 0.5) / 1e6 with %.15g (ns-2.35 trace/basetrace.h).
    assert ns2_time(0.0) == "0"
    assert ns2_time(0.000001) == "1e-06"
    assert ns2_time(0.0000004) == "0"
    assert ns2_time(0.0223264) == "0.022326"
    assert ns2_time(299.9999996) == "300"
    assert ns2_time(123456.1234567) == "123456.123457"


def parse(path: Path) -> list[list]:
    """An awk-style reader of an ns-2 wired trace: split on blanks, fields by position."""
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        assert len(f) == 12, line
        ev, t, a, b, ptype, size, flags, fid, src, dst, seq, uid = f
        assert ev in "+-rd" and len(ev) == 1, line
        # ns-2's TCP marks the first segment after a window cut A (congestion action); tfcc's
        # trace has no flag set (python/tfcc/ns2trace.py).
        assert re.fullmatch("[-C][-P]-[-A][-E][-F][-N]", flags), line
        sn, sp = src.split(".")
        dn, dp = dst.split(".")
        rows.append(
            [
                ev,
                float(t),
                int(a),
                int(b),
                ptype,
                int(size),
                flags,
                int(fid),
                (int(sn), int(sp)),
                (int(dn), int(dp)),
                int(seq),
                int(uid),
            ]
        )
    return rows


def per_flow(rows: list[list], t0: float, t1: float) -> dict[int, dict]:
    """What an ns-2 user's script computes: per fid, the bytes of its data packets received at
    the bottleneck's far end (node 1) in [t0, t1) and their rate, and by uid each data
    packet's one-way delay from its + at the sender's host to its r at the receiver's host."""
    sent: dict[int, float] = {}
    by_fid: dict[int, dict] = defaultdict(lambda: {"bytes": 0, "delays": [], "types": set()})
    for ev, t, a, b, ptype, size, _, fid, src, dst, _, uid in rows:
        if ptype not in ("tcp", "tcpFriend", "cbr"):
            continue
        f = by_fid[fid]
        f["types"].add(ptype)
        if ev == "r" and (a, b) == (0, 1) and t0 <= t < t1:
            f["bytes"] += size
        if ev == "+" and a == src[0]:
            sent[uid] = t
        if ev == "r" and b == dst[0] and uid in sent and t0 <= t < t1:
            f["delays"].append(t - sent.pop(uid))
    return {
        fid: {
            "bytes": f["bytes"],
            "mbps": 8 * f["bytes"] / (t1 - t0) / 1e6,
            "delay_ms": 1e3 * sum(f["delays"]) / len(f["delays"]),
            "types": sorted(f["types"]),
        }
        for fid, f in by_fid.items()
    }


DUMBBELL = """
name = "ns2trace"
duration = "{duration}s"
measure_from = "{measure_from}s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "2Mbps", delay = "20ms", queue = "droptail", limit = 20 }}
access = {{ rate = "100Mbps", delay = "1ms", limit = 10000 }}
[[flows]]
protocol = "tcp-sack"
start = "0s"
packet_size = "1000B"
[[flows]]
protocol = "tfrc"
start = "0.5s"
params = {{ preset = "ns2" }}
[[flows]]
protocol = "cbr"
rate = "400kbps"
packet_size = "1000B"
start = "0s"
[trace]
links = [{links}]
"""


@pytest.mark.skipif(not have_ns2(), reason="ns-2 missing: make ns2")
def test_ns2_and_tfcc_traces_of_one_dumbbell_read_alike(tmp_path: Path) -> None:
    """A TCP-SACK, a TFRC (ns-2's defaults) and a 400 kb/s CBR on a 2 Mb/s, 20 ms DropTail
    dumbbell for 100 s, every link traced in both simulators."""
    duration, measure_from = 100.0, 20.0
    names = ["bottleneck", "bottleneck-rev"] + [
        f"access-{side}-{i}{rev}"
        for i in (0, 1, 2)
        for side in ("src", "dst")
        for rev in ("", "-rev")
    ]
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        DUMBBELL.format(
            duration=duration,
            measure_from=measure_from,
            links=", ".join(f'"{n}"' for n in names),
        )
    )
    run = tmp_path / "run"
    r = tfcc("run", scenario, "--out", run, "-q", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert tfcc("ns2-trace", run).returncode == 0
    ns_tr = tmp_path / "ns.tr"
    run_ns2(
        {
            "tcp": 1,
            "tfrc": 1,
            "cbr_rate": 400e3,
            "cbr_packet_size": 1000,
            "duration": duration,
            "measure_from": measure_from,
            "bottleneck_rate": 2e6,
            "bottleneck_delay": 0.02,
            "limit": 20,
            "start_mode": "even",
            "start_max": 1.0,
            "trace": ns_tr,
        }
    )
    ns, tf = parse(ns_tr), parse(run / "out.tr")
    # The same columns of the same types, the same nodes, addresses and packet types.
    assert {tuple(map(type, r)) for r in ns} == {tuple(map(type, r)) for r in tf}
    hosts = {(h, r) for i in (0, 1, 2) for h, r in ((2 + 2 * i, 0), (3 + 2 * i, 1))}
    # The CBR (hosts 6 and 7) sends nothing back: its reverse access links carry nothing.
    expected_links = ({(0, 1), (1, 0)} | hosts | {(b, a) for a, b in hosts}) - {(7, 1), (0, 6)}
    assert {(r[2], r[3]) for r in ns} == {(r[2], r[3]) for r in tf} == expected_links
    data = ("tcp", "tcpFriend", "cbr")
    ends = {(r[4], r[7], r[8], r[9]) for r in ns if r[4] in data}
    assert ends == {(r[4], r[7], r[8], r[9]) for r in tf if r[4] in data}
    # Both sides number each packet once: a uid's events are one packet's, hop after hop.
    for rows in (ns, tf):
        first: dict[int, tuple] = {}
        for r in rows:
            assert first.setdefault(r[11], (r[4], r[7], r[10])) == (r[4], r[7], r[10]), r
    n, t = per_flow(ns, measure_from, duration), per_flow(tf, measure_from, duration)
    assert n.keys() == t.keys() == {0, 1, 2}, (n, t)
    # The converter loses nothing: the parser's bytes are trace.parquet's own.
    tp = pq.read_table(run / "trace.parquet").to_pylist()
    for fid in t:
        got = sum(
            x["size"]
            for x in tp
            if x["flow"] == fid
            and x["event"] == "r"
            and x["link"] == "bottleneck"
            and measure_from <= round(x["t"], 6) < duration
        )
        assert t[fid]["bytes"] == got, (fid, t, got)
    # Against ns-2, per flow: the CBR's rate within 3 %, the TCP's share of what TCP and TFRC
    # got within 0.05 (the two simulators' TCP and TFRC are different code; tests/
    # test_ns2_tfrc.py holds them to the same), the total within 3 %, and the mean one-way
    # delay by uid (22 ms of propagation, the serialisations and the queue's wait) within 10 %.
    for fid in n:
        assert t[fid]["types"] == n[fid]["types"], (n, t)
        assert t[fid]["delay_ms"] == pytest.approx(n[fid]["delay_ms"], rel=0.10), (n, t)
    assert t[2]["mbps"] == pytest.approx(n[2]["mbps"], rel=0.03), (n, t)
    share = {s: x[0]["bytes"] / (x[0]["bytes"] + x[1]["bytes"]) for s, x in (("ns", n), ("tf", t))}
    assert share["tf"] == pytest.approx(share["ns"], abs=0.05), (share, n, t)
    total = {s: sum(f["mbps"] for f in x.values()) for s, x in (("ns", n), ("tf", t))}
    assert total["tf"] == pytest.approx(total["ns"], rel=0.03), (total, n, t)


def test_a_run_without_a_trace_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}")
    refused(
        tfcc("ns2-trace", run),
        f"{run}: no trace.parquet: the run recorded no packet trace; run the scenario with a "
        "[trace] table (docs/scenarios.md), e.g. --set 'trace.links=[\"bottleneck\"]'",
    )
    # A testbed run with [trace] pcap = true has its captures and no trace.parquet.
    (run / "trace-bottleneck.pcap").write_bytes(b"")
    refused(
        tfcc("ns2-trace", run),
        f"{run}: no trace.parquet: a testbed run's trace is its pcap files only "
        "(trace-<link>.pcap); run the scenario in the simulator for an ns-2 trace",
    )
    refused(
        tfcc("ns2-trace", tmp_path / "nope"),
        f"{tmp_path / 'nope'}: no such directory (give a run's output directory, tfcc run --out)",
    )
    assert sorted(p.name for p in run.iterdir()) == ["summary.json", "trace-bottleneck.pcap"]


def test_an_unwritable_out_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    run = fake_run(tmp_path / "run", [[r for r, _ in HAND]])
    blocker = tmp_path / "file"
    blocker.write_text("")
    refused(
        tfcc("ns2-trace", run, "--out", blocker / "out.tr"),
        f"--out {blocker / 'out.tr'}: the directory {blocker} does not exist",
    )
    refused(tfcc("ns2-trace", run, "--out", tmp_path), f"--out {tmp_path}: is a directory")
    # /proc refuses new files even to root, where permission bits do not.
    refused(
        tfcc("ns2-trace", run, "--out", "/proc/out.tr"),
        "--out /proc/out.tr: cannot write (No such file or directory)",
    )


def test_a_failure_halfway_leaves_no_half_written_file(tmp_path: Path) -> None:
    good = [r for r, _ in HAND]
    bad = [(101.0, "+", None, "bottleneck", 9, "forward", "raw", 4, 210)]
    run = fake_run(tmp_path / "run", [good, bad])
    out = tmp_path / "o" / "out.tr"
    out.parent.mkdir()
    out.write_text("an earlier trace\n")
    refused(
        tfcc("ns2-trace", run, "--out", out),
        f"{run / 'trace.parquet'}: row {len(good)}: flow 9 is not in {run / 'summary.json'}: "
        "files of two runs?",
    )
    assert out.read_text() == "an earlier trace\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.tr"]


def test_a_summary_without_the_trace_section_is_named(tmp_path: Path) -> None:
    run = fake_run(tmp_path / "run", [[r for r, _ in HAND]])
    (run / "summary.json").write_text(json.dumps({"scenario": "old"}))
    refused(
        tfcc("ns2-trace", run),
        f'{run / "summary.json"}: no "trace" section with the node numbers of the traced '
        "links (a run of a tfcc older than ns2-trace, or a summary not written by tfcc run); "
        "run the scenario again",
    )
    (run / "trace.parquet").write_text("not parquet")
    (run / "summary.json").write_text(json.dumps({"trace": {"links": [], "flows": []}}))
    r = tfcc("ns2-trace", run)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: {run / 'trace.parquet'}: not a readable Parquet file ("), r
    assert r.stderr.count("\n") == 1, r.stderr
    assert not (run / "out.tr").exists()


def test_a_run_written_from_python_keeps_what_the_converter_needs(tmp_path: Path) -> None:
    """run_scenario's summary carries the trace section back into write_run, so a run
    simulated in Python and written with tfcc.write_run converts as one tfcc run wrote."""
    import tfcc as api
    from tfcc.run import write_run

    scenario = tmp_path / "s.toml"
    scenario.write_text(
        DUMBBELL.format(duration=3, measure_from=1, links='"bottleneck", "access-dst-2"')
    )
    r = api.run_scenario(scenario)
    assert r["summary"]["trace"]["links"] == [
        {"name": "bottleneck", "from_node": 0, "to_node": 1},
        {"name": "access-dst-2", "from_node": 1, "to_node": 7},
    ]
    assert [(f["src_node"], f["dst_node"]) for f in r["summary"]["trace"]["flows"]] == [
        (2, 3),
        (4, 5),
        (6, 7),
    ]
    write_run(
        tmp_path / "py",
        r["summary"],
        r["flow_series"],
        r["link_series"],
        plots=False,
        trace=r["trace"],
    )
    assert tfcc("run", scenario, "--out", tmp_path / "cli", "-q", "--no-plots").returncode == 0
    for d in ("py", "cli"):
        assert tfcc("ns2-trace", tmp_path / d).returncode == 0
    text = (tmp_path / "cli" / "out.tr").read_text()
    assert text == (tmp_path / "py" / "out.tr").read_text()
    # The CBR's packets cross the bottleneck and then its receiver's access link, one uid each.
    cbr = [line.split() for line in text.splitlines() if " cbr " in line]
    hops = defaultdict(list)
    for f in cbr:
        hops[f[11]].append((f[0], f[2], f[3]))
    assert hops[cbr[0][11]] == [
        ("+", "0", "1"),
        ("-", "0", "1"),
        ("r", "0", "1"),
        ("+", "1", "7"),
        ("-", "1", "7"),
        ("r", "1", "7"),
    ], hops


BOUNDARY = """
duration = "7s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "2Mbps", delay = "20ms", limit = 40 }}
[[flows]]
protocol = "tfwc"
count = 2
[[flows]]
protocol = "tcp-sack"
count = 2
[[flows]]
protocol = "tcp-sack"
direction = "reverse"
count = 2
[trace]
links = ["bottleneck", "bottleneck-rev"]
from = {start}
"""


def packets(rows: list[list[str]]) -> list[int]:
    """Each row's packet, numbered in order of first appearance: which rows share a uid."""
    first: dict[str, int] = {}
    return [first.setdefault(r[-1], len(first)) for r in rows]


def test_a_window_after_the_start_groups_rows_into_packets_as_the_whole_trace_does(
    tmp_path: Path,
) -> None:
    """A `-` in the window whose `+` came before it is paired with the packets the links held
    when the window opened (summary.json's trace.pending), so a later packet of the same key
    (TFWC's Ack Vectors share one, duplicate ACKs another) keeps its own uid: the window's rows
    fall into the same packets as the same rows of a trace from 0 s. Without the pending
    packets (a summary of an older tfcc) the `-` took the next `+`'s uid: 284 of 38 456 rows
    in a 20 s run from 5.01 s."""
    start = 5.01
    out = {}
    for name, frm in (("whole", 0), ("window", start)):
        scenario = tmp_path / f"{name}.toml"
        scenario.write_text(BOUNDARY.format(start=frm))
        r = tfcc("run", scenario, "--out", tmp_path / name, "-q", "--no-plots")
        assert r.returncode == 0, r.stderr
        assert tfcc("ns2-trace", tmp_path / name).returncode == 0
        out[name] = [ln.split() for ln in (tmp_path / name / "out.tr").read_text().splitlines()]
    whole = [r for r in out["whole"] if float(r[1]) >= start]
    window = out["window"]
    assert [r[:-1] for r in whole] == [r[:-1] for r in window]
    assert packets(whole) == packets(window)
    summary = json.loads((tmp_path / "window" / "summary.json").read_text())
    pending = summary["trace"]["pending"]
    assert {p["kind"] for p in pending} >= {"tfwc-ack", "tcp-ack"}, pending
    whole_summary = json.loads((tmp_path / "whole" / "summary.json").read_text())
    assert "pending" not in whole_summary["trace"]
    # The same window converted without them groups some rows wrongly.
    del summary["trace"]["pending"]
    (tmp_path / "window" / "summary.json").write_text(json.dumps(summary))
    assert tfcc("ns2-trace", tmp_path / "window").returncode == 0
    legacy = [ln.split() for ln in (tmp_path / "window" / "out.tr").read_text().splitlines()]
    wrong = sum(a != b for a, b in zip(packets(whole), packets(legacy), strict=True))
    assert wrong > 0
