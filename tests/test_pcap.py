"""`[trace] pcap = true`: the traced links' departures as pcap files, read back with tshark and
tfcc's Wireshark dissector (tools/wireshark/tfcc.lua), checked against the run's own
trace.parquet and time series (crates/tfcc-run/src/pcap.rs, docs/scenarios.md "As pcap files").
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tfcc import decode_datagram

ROOT = Path(__file__).resolve().parent.parent
LUA = ROOT / "tools" / "wireshark" / "tfcc.lua"
TFCC = [sys.executable, "-m", "tfcc.cli"]
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark missing: make tshark")

# TFRC, TCP-SACK and TFWC with a CBR and a TEAR flow (every UDP wire format) over a 2 Mb/s
# DropTail bottleneck short enough to drop; flow 0's sender's access link traced too.
SCENARIO = """
name = "pcap"
duration = "{duration}s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "2Mbps", delay = "20ms", queue = "droptail", limit = 20 }}
access = {{ rate = "100Mbps", delay = "1ms", limit = 10000 }}
[[flows]]
protocol = "tcp-sack"
[[flows]]
protocol = "tfrc"
start = "0.5s"
[[flows]]
protocol = "tfwc"
start = "1s"
[[flows]]
protocol = "cbr"
rate = "200kbps"
[[flows]]
protocol = "tear"
start = "1.5s"
[trace]
links = ["bottleneck", "bottleneck-rev", "access-src-0"]
{pcap}
"""
LINKS = ["bottleneck", "bottleneck-rev", "access-src-0"]
SENDER = "10.1.0.2"  # flow 0's host: node 2 of the dumbbell
# Bytes of each UDP message's tfcc header (the wire.rs definitions); a TFWC ACK adds its runs.
UDP_HEADER = {
    "raw": 20,
    "tfrc-data": 44,
    "tfrc-feedback": 40,
    "tfwc-data": 28,
    "tfwc-ack": 20,
    "rate-data": 36,
    "rate-feedback": 28,
}
FIELDS = [
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "ip.src",
    "ip.dst",
    "udp.srcport",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.len",
    "tcp.hdr_len",
    "tcp.flags.syn",
    "tcp.options.sack_le",
    "tfcc.kind",
    "tfcc.seq",
    "tfcc.tfrc.seq_echo",
    "tfcc.tfrc.x_recv",
    "tfcc.tfrc.p",
    "tfcc.tfwc.runs",
    "_ws.malformed",
    "_ws.expert.severity",
]
ERROR = 0x00800000  # Wireshark's PI_ERROR: a malformed packet, a bad checksum, tfcc.lua's own
RESENT = [
    "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission",
    "tcp.analysis.spurious_retransmission",
    "tcp.analysis.out_of_order",
]


def tfcc(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TFCC, *map(str, args)], capture_output=True, text=True, timeout=120)


def run(tmp: Path, name: str, duration: float = 20, pcap: str = "pcap = true") -> Path:
    scenario = tmp / f"{name}.toml"
    scenario.write_text(SCENARIO.format(duration=duration, pcap=pcap))
    out = tmp / name
    r = tfcc("run", scenario, "--out", out, "-q", "--no-plots")
    assert r.returncode == 0, r.stderr
    return out


def tshark(pcap: Path, fields: list[str], *opts: str) -> list[dict[str, str]]:
    cmd = [TSHARK, "-n", "-X", f"lua_script:{LUA}", "-r", str(pcap), *opts, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    r = subprocess.run(cmd + ["-E", "occurrence=a"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Lua" not in r.stderr and "error" not in r.stderr.lower(), r.stderr
    return [dict(zip(fields, line.split("\t"), strict=True)) for line in r.stdout.splitlines()]


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict[str, list]]:
    """One 20 s run, its trace, and each link's packets as tshark and tfcc.lua read them."""
    out = run(tmp_path_factory.mktemp("pcap"), "run")
    trace = pq.read_table(out / "trace.parquet").to_pydict()
    read = {link: tshark(out / f"trace-{link}.pcap", FIELDS + RESENT) for link in LINKS}
    return out, trace, read


def padded(src: Path, dst: Path) -> None:
    """`src` with every record's capture padded with zeros to its original length: the packets
    as the network would carry them (the payload tfcc sends is zeros), so that checksums verify."""
    b = src.read_bytes()
    out = bytearray(b[:24])
    at = 24
    while at < len(b):
        sec, frac, incl, orig = struct.unpack_from("<IIII", b, at)
        out += struct.pack("<IIII", sec, frac, orig, orig)
        out += b[at + 16 : at + 16 + incl] + bytes(orig - incl)
        at += 16 + incl
    dst.write_bytes(bytes(out))


def node_address(n: int) -> str:
    a = 0x0A010000 + n
    return ".".join(str((a >> s) & 0xFF) for s in (24, 16, 8, 0))


def departures(trace: dict[str, list], link: str) -> list[dict]:
    cols = list(trace)
    rows = [dict(zip(cols, v, strict=True)) for v in zip(*trace.values(), strict=True)]
    return [r for r in rows if r["link"] == link and r["event"] == "-"]


def expected_len(r: dict, p: dict[str, str]) -> int:
    """The packet's length: the simulator's size, or what its real headers need."""
    kind, size = r["kind"], r["size"]
    if kind == "tcp-data" or kind == "tcp-ack":
        if p["tcp.flags.syn"] == "1":
            return 52  # MSS, window scale, SACK-permitted and padding on the handshake
        # NOP, NOP, kind and length of the SACK option, beyond ns-2's 8 bytes a block
        return size + 4 if kind == "tcp-ack" and size > 40 else size
    header = UDP_HEADER[kind] + (int(p["tfcc.tfwc.runs"]) if kind == "tfwc-ack" else 0)
    return max(size, 28 + header)


@needs_tshark
def test_a_runs_pcap_files_hold_its_traced_departures_as_real_packets(traced) -> None:
    out, trace, read = traced
    summary = json.loads((out / "summary.json").read_text())
    ends = {f["id"]: f for f in summary["trace"]["flows"]}
    protocol = {f["id"]: f["protocol"] for f in summary["flows"]}
    assert sorted(p.name for p in out.glob("*.pcap")) == sorted(f"trace-{n}.pcap" for n in LINKS)
    kinds_seen: Counter[str] = Counter()
    for link in LINKS:
        rows = departures(trace, link)
        pkts = read[link]
        # One record per `-` row, in order: timestamps to the nanosecond, flows by address and
        # port, the message and its number as the dissector or TCP reads them, the length.
        assert len(pkts) == len(rows) > 100, (link, len(pkts), len(rows))
        # Nothing malformed, no error-level expert info (tfcc.lua's own included).
        severities = [int(x) for p in pkts for x in p["_ws.expert.severity"].split(",") if x]
        assert not any(p["_ws.malformed"] for p in pkts) and max(severities) < ERROR, link
        for i, (r, p) in enumerate(zip(rows, pkts, strict=True)):
            where = (link, i + 1, r, p)
            assert int(Decimal(p["frame.time_epoch"]) * 10**9) == round(r["t"] * 1e9), where
            e = ends[r["flow"]]
            src, dst = e["src_node"], e["dst_node"]
            if r["direction"] == "reverse":
                src, dst = dst, src
            assert (p["ip.src"], p["ip.dst"]) == (node_address(src), node_address(dst)), where
            port = p["udp.srcport"] or p["tcp.srcport"]
            assert int(port) == 5001 + r["flow"], where
            assert int(p["frame.len"]) == expected_len(r, p), where
            kinds_seen[r["kind"]] += 1
            if r["kind"] == "tcp-data":
                assert p["tfcc.kind"] == "", where
                if r["seq"] == 0:
                    assert p["tcp.flags.syn"] == "1" and p["tcp.seq_raw"] == "0", where
                else:
                    assert int(p["tcp.seq_raw"]) == 1 + (r["seq"] - 1) * 1000, where
                    assert int(p["tcp.len"]) == 1000, where
                assert int(p["frame.cap_len"]) == 20 + int(p["tcp.hdr_len"]), where
            elif r["kind"] == "tcp-ack":
                assert int(p["tcp.ack_raw"]) == 1 + (r["seq"] - 1) * 1000, where
                if r["size"] > 40:
                    assert p["tcp.options.sack_le"] != "", where
            else:
                assert p["tfcc.kind"] == r["kind"], where
                runs = int(p["tfcc.tfwc.runs"] or 0)
                assert int(p["frame.cap_len"]) == 28 + UDP_HEADER[r["kind"]] + runs, where
                if r["kind"] == "tfrc-feedback":
                    assert int(p["tfcc.tfrc.seq_echo"]) == r["seq"], where
                elif r["seq"] is not None:
                    assert int(p["tfcc.seq"]) == r["seq"], where
    assert set(kinds_seen) == set(UDP_HEADER) | {"tcp-data", "tcp-ack"}, kinds_seen
    assert {protocol[f] for f in ends} == {"tcp-sack", "tfrc", "tfwc", "cbr", "tear"}


@needs_tshark
def test_checksums_verify_and_tcp_retransmissions_are_the_segments_sent_again(
    traced, tmp_path: Path
) -> None:
    out, trace, read = traced
    for link in LINKS:
        full = tmp_path / f"{link}-full.pcap"
        padded(out / f"trace-{link}.pcap", full)
        checks = [f"{p}.check_checksum:TRUE" for p in ("ip", "udp", "tcp")]
        opts = [x for c in checks for x in ("-o", c)]
        fields = ["ip.checksum.status", "udp.checksum.status", "tcp.checksum.status"]
        status = tshark(full, fields, *opts)
        # 1 is Wireshark's "Good" (0 bad, 2 unverified): every header checked and good.
        assert status and all(s["ip.checksum.status"] == "1" for s in status), link
        assert all((s["udp.checksum.status"] or s["tcp.checksum.status"]) == "1" for s in status)
        assert sum(s["tcp.checksum.status"] == "1" for s in status) > 10
    # At the bottleneck, the copy of a segment that arrived there a second time (its first
    # was dropped there or went on before) is what Wireshark flags as sent again: a
    # retransmission, or, within an RTT of the highest segment, out of order.
    rows = [
        dict(zip(trace, v, strict=True))
        for v in zip(*trace.values(), strict=True)
        if v[3] == "bottleneck"
    ]
    arrived: Counter[int] = Counter()
    queued: defaultdict[int, list[int]] = defaultdict(list)
    again = []
    for r in rows:
        if r["kind"] != "tcp-data":
            continue
        if r["event"] in "+d":
            arrived[r["seq"]] += 1
            if r["event"] == "+":
                queued[r["seq"]].append(arrived[r["seq"]])
        elif r["event"] == "-":
            again.append(queued[r["seq"]].pop(0) >= 2)
    tcp = [p for p in read["bottleneck"] if p["tcp.srcport"] and p["ip.src"] == SENDER]
    flagged = [any(p[f] for f in RESENT) for p in tcp]
    assert len(flagged) == len(again)
    assert sum(again) >= 10, sum(again)
    mismatched = [i for i, (a, b) in enumerate(zip(again, flagged, strict=True)) if a != b]
    assert not mismatched, [(tcp[i], again[i]) for i in mismatched[:5]]


@needs_tshark
def test_the_dissector_reads_tfrc_feedback_as_the_receiver_sent_it(traced, tmp_path: Path) -> None:
    out, _, read = traced
    fb = [p for p in read["bottleneck-rev"] if p["tfcc.kind"] == "tfrc-feedback"]
    assert len(fb) > 50
    assert {p["udp.srcport"] for p in fb} == {"5002"}
    # The same bytes, from the padded file, read by the Rust decoder the transport uses
    # (decode_datagram, crates/tfcc-net/src/wire.rs): every record is the message the
    # dissector names, with the header length it reads, and the feedback's fields agree, so the
    # dissector's offsets are wire.rs's.
    full = tmp_path / "rev.pcap"
    padded(out / "trace-bottleneck-rev.pcap", full)
    b = full.read_bytes()
    decoded = []
    at = 24
    while at < len(b):
        incl = struct.unpack_from("<I", b, at + 8)[0]
        pkt = b[at + 16 : at + 16 + incl]
        # UDP after a 20-byte IPv4 header: a tfcc datagram, or the decoder raises ValueError
        decoded.append(decode_datagram(pkt[28:]) if pkt[9] == 17 else None)
        at += 16 + incl
    rev = read["bottleneck-rev"]
    assert len(decoded) == len(rev)
    for d, p in zip(decoded, rev, strict=True):
        assert (d["kind"] if d else "") == p["tfcc.kind"], (d, p)
        if d:
            runs = int(p["tfcc.tfwc.runs"] or 0)
            assert d["header_len"] == UDP_HEADER[d["kind"]] + runs, (d, p)
    assert {d["kind"] for d in decoded if d} == {"tfrc-feedback", "tfwc-ack", "rate-feedback"}
    mine = [
        (d["seq_echo"], d["x_recv"], d["p"]) for d in decoded if d and d["kind"] == "tfrc-feedback"
    ]
    got = [
        (int(p["tfcc.tfrc.seq_echo"]), int(p["tfcc.tfrc.x_recv"]), float(p["tfcc.tfrc.p"]))
        for p in fb
    ]
    assert [(s, x) for s, x, _ in got] == [(s, x) for s, x, _ in mine]
    assert all(
        abs(a[2] - b[2]) <= 1e-12 * max(b[2], 1e-300) for a, b in zip(got, mine, strict=True)
    )
    # The loss event rates the sender took from the reports (the time series' p, flow 1) are
    # the reports' p: every value it held is one the dissector read.
    ts = pq.read_table(out / "timeseries.parquet").to_pydict()
    held = {p for f, p in zip(ts["flow"], ts["p"], strict=True) if f == 1 and p}
    assert len(held) >= 5, held
    read = [p for _, _, p in got]
    for p in held:
        assert any(abs(p - q) <= 1e-12 * p for q in read), (p, sorted(read)[:10])
    # X_recv is the receiver's rate in bytes/s: at most the 2 Mb/s bottleneck's 250 000 B/s
    # over an RTT, and more than nothing once data flows.
    assert max(x for _, x, _ in got) <= 250_000 * 1.5
    assert sum(x > 0 for _, x, _ in got) > len(got) // 2


def test_the_same_run_gives_the_same_bytes_and_pcap_changes_no_other_output(
    tmp_path: Path,
) -> None:
    a, b = run(tmp_path, "a", 5), run(tmp_path, "b", 5)
    off = run(tmp_path, "off", 5, pcap="")
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    for link in LINKS:
        name = f"trace-{link}.pcap"
        assert digest(a / name) == digest(b / name)
    assert not list(off.glob("*.pcap"))
    for name in ("timeseries.parquet", "queues.parquet", "trace.parquet"):
        assert digest(a / name) == digest(off / name), name
    sa, so = (json.loads((d / "summary.json").read_text()) for d in (a, off))
    sa.pop("wall_seconds")
    so.pop("wall_seconds")
    assert sa == so


def test_a_bad_pcap_key_is_one_message(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(duration=2, pcap='pcap = "yes"'))
    r = tfcc("run", scenario, "--out", tmp_path / "x", "-q", "--no-plots")
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "trace.pcap" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()


def test_the_python_api_hands_the_pcaps_over_and_writes_them_as_tfcc_run_does(
    tmp_path: Path,
) -> None:
    """A sweep on workers that share no files runs `run_scenario` there and `write_run` here:
    the pcap files travel with the results, byte for byte."""
    import tfcc
    from tfcc import OutputError
    from tfcc.run import write_run

    direct = run(tmp_path, "direct", 3)
    scenario = tmp_path / "direct.toml"
    r = tfcc.run_scenario(str(scenario))
    assert sorted(r["pcaps"]) == sorted(f"trace-{n}.pcap" for n in LINKS)
    args = (r["summary"], r["flow_series"], r["link_series"])
    write_run(tmp_path / "w", *args, plots=False, trace=r["trace"], pcaps=r["pcaps"])
    for name in r["pcaps"]:
        assert (tmp_path / "w" / name).read_bytes() == (direct / name).read_bytes()
    with pytest.raises(OutputError, match="not a traced link's file"):
        write_run(tmp_path / "x", *args, plots=False, trace=r["trace"], pcaps={"../x.pcap": b""})
    with pytest.raises(OutputError, match="without a trace"):
        write_run(tmp_path / "y", *args, plots=False, pcaps=r["pcaps"])
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_check_says_the_run_will_write_pcap_files(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(duration=2, pcap="pcap = true"))
    r = tfcc("check", scenario)
    assert r.returncode == 0, r.stderr
    assert "access-src-0 from 0 s to 2 s, with pcap files" in r.stdout, r.stdout
    r = tfcc("check", scenario, "--set", "trace.pcap=false")
    assert r.returncode == 0 and "pcap files" not in r.stdout, r.stdout
