"""ns-2's wired packet trace (the ``out.tr`` of ``$ns trace-all`` / ``trace-queue``) from a tfcc
run's ``trace.parquet``, so that an ns-2 user's awk, perl or Python analysis reads a tfcc run
unchanged (``tfcc ns2-trace``).

One line per event, as ns-2.35's ``Trace::format`` (trace/trace.cc) prints it without
``show_tcphdr_``::

    <ev> <time> <from> <to> <type> <size> <flags> <fid> <src>.<sport> <dst>.<dport> <seq> <uid>

- ``time``: ns-2 rounds the clock to the microsecond (``floor(t * 1e6 + 0.5) / 1e6``) and prints
  it with ``%.15g``: ``0``, ``0.001003``, ``12.5``.
- ``from-node``, ``to-node``: the link's ends; ``src``, ``dst``: the packet's sender and
  receiver as ``node.port``. Nodes are numbered as the ns-2 script building the same network
  would number them (``Topology::node_numbers`` in crates/tfcc-sim/src/topology.rs: a
  dumbbell's routers 0 and 1, flow ``i``'s hosts ``2 + 2i`` and ``3 + 2i``, the order of
  ``bench/ns2/dumbbell.tcl``; a custom topology's in the order of its ``nodes``); the run
  records them in ``summary.json`` (``trace``).
- ``type``: ns-2's packet type name (common/packet.h) where ns-2 has the protocol: ``tcp`` and
  ``ack``, ``cbr`` for a raw (CBR) datagram, ``tcpFriend`` and ``tcpFriendCtl`` for TFRC's data
  and report. ns-2.35 has no TFWC, WARC, TEAR or TFRCP: TFWC's (and TTFWC's) data and Ack
  Vector are ``tfwc`` and ``tfwcAck`` (Choi's ns-2 agent sends ``PT_TFWC`` and
  ``PT_TFWC_ACK``), the rate schemes' ``rateData`` and ``rateCtl``; PTCP sends TCP segments.
- ``flags``: ``-------``. ns-2 sets seven flag letters (ECN echo ``C``, priority ``P``,
  congestion action ``A``, ECN ``E``, fast start ``F``, ECN-capable ``N``); tfcc models no ECN,
  priority or fast start, and its trace does not record the one ns-2's plain TCP sets: ``A`` on
  the first segment sent after a window cut (tcp.cc's ``cong_action_``), so a script that
  counts ``A`` flags finds none.
- ``fid``: the tfcc flow id, on the flow's data and feedback alike (ns-2's TFRC sink leaves
  its reports at fid 0; tfcc's flow id is more use to a script).
- ``seq``: ns-2's sequence number of the type: the data packet's; for ``ack`` the cumulative
  ACK as ns-2 prints it (the last segment received in order, one less than tfcc's ``seq``, the
  next segment expected); the data packet a TFRC report echoes; -1 where tfcc's ``seq`` is
  null (TFWC's Ack Vector, the rate schemes' reports), as ns-2 prints it for a type without
  one.
- ``uid``: ns-2 numbers every packet an agent creates and keeps the number across all hops.
  tfcc's 32-byte trace records carry no such id (``trace.rs``: 8 bytes of time, 8 of sequence
  number, 4 each of flow, size and link, and three one-byte fields: no room for a fourth
  word), so it is rebuilt here: a link is first in, first out per packet key (flow, direction,
  kind, seq), so the k-th ``-`` and ``r`` of a key on a link belong to its k-th ``+``; and a
  packet that reaches a link's end enters the next link of its route in the same instant,
  the ``+`` (or ``d``) row right after its ``r``. Each packet thus keeps one uid across the
  traced links it crosses in a row; a packet gets a new uid on a traced link whose previous
  hop is not traced. Uids count from 0 in the order packets first appear in the trace, not in
  ns-2's order of creation, so only equality between them means anything (what scripts use
  them for: matching a packet's ``+``, ``-`` and ``r``). A trace whose ``from`` is after the
  start has, in ``summary.json``'s ``trace.pending``, how many packets of each key every traced
  link held then (queued, and on the wire): they take the first uids, so a ``-`` or ``r`` in
  the window whose ``+`` came before it gets a uid of its own and a later packet of the same
  key (a duplicate ACK, a retransmission, TFWC's Ack Vectors, which share one key) keeps its
  own. Without them (a summary of a tfcc before 2026-11-27) such a ``-`` took the uid of the
  next ``+`` of its key: 284 of 38 456 rows grouped wrongly in a dumbbell of TFWC, TCP and
  reverse TCP flows traced from 5.01 s.

The trace is read one row group at a time and written line by line into a temporary file
beside the target, renamed into place at the end: a trace of millions of rows needs a few
megabytes, and an interrupted or failed conversion leaves no half-written file.
"""

from __future__ import annotations

import math
import os
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["NS2_TYPE", "Ns2TraceError", "ConversionStats", "ns2_time", "write_ns2_trace"]

#: ns-2's packet type name for each of trace.parquet's ``kind`` values (see the module doc).
NS2_TYPE = {
    "tcp-data": "tcp",
    "tcp-ack": "ack",
    "raw": "cbr",
    "tfrc-data": "tcpFriend",
    "tfrc-feedback": "tcpFriendCtl",
    "tfwc-data": "tfwc",
    "tfwc-ack": "tfwcAck",
    "rate-data": "rateData",
    "rate-feedback": "rateCtl",
    "other": "undefined",
}

#: ns-2's seven flag characters with none set (ECN echo, priority, -, congestion action,
#: ECN congestion experienced, fast start, ECN capable).
FLAGS = "-------"

_COLUMNS = ["t", "event", "link", "flow", "direction", "kind", "seq", "size"]
_EVENTS = frozenset(("+", "-", "d", "r"))

#: Rows converted at a time: their columns as Python objects and their lines are what the
#: conversion holds beside pyarrow's row group. Measured peak RSS of `tfcc ns2-trace`: 102 MB
#: on a 4 000-row trace, 142 MB on the flagship's 555 000 rows (246 MB converting whole row
#: groups of 131 072 rows); it does not grow with the trace's length.
_BATCH_ROWS = 16384


class Ns2TraceError(Exception):
    """The run directory cannot be converted, or the output cannot be written; the message
    names the file and what is wrong."""


@dataclass(frozen=True)
class ConversionStats:
    """What a conversion wrote."""

    rows: int
    packets: int
    seconds: float


def ns2_time(t: float) -> str:
    """A time in seconds as ns-2's trace prints it: rounded to the microsecond, ``%.15g``."""
    return "%.15g" % (math.floor(t * 1e6 + 0.5) / 1e6)


def _load(run_dir: Path) -> tuple[Path, dict[str, Any]]:
    if not run_dir.is_dir():
        what = "no such directory" if not run_dir.exists() else "not a directory"
        raise Ns2TraceError(f"{run_dir}: {what} (give a run's output directory, tfcc run --out)")
    path = run_dir / "trace.parquet"
    if not path.is_file() and any(run_dir.glob("trace-*.pcap")):
        # A testbed run's trace is its captures alone: the kernel's queues show no events.
        raise Ns2TraceError(
            f"{run_dir}: no trace.parquet: a testbed run's trace is its pcap files only "
            "(trace-<link>.pcap); run the scenario in the simulator for an ns-2 trace"
        )
    if not path.is_file():
        raise Ns2TraceError(
            f"{run_dir}: no trace.parquet: the run recorded no packet trace; run the scenario "
            "with a [trace] table (docs/scenarios.md), e.g. --set 'trace.links=[\"bottleneck\"]'"
        )
    from tfcc.run import read_summary

    summary_path = run_dir / "summary.json"
    if not summary_path.exists():
        raise Ns2TraceError(f"{summary_path}: no such file (the trace's node numbers are there)")
    summary = read_summary(run_dir, Ns2TraceError)
    section = summary.get("trace")
    if not isinstance(section, dict):
        raise Ns2TraceError(
            f'{summary_path}: no "trace" section with the node numbers of the traced links '
            "(a run of a tfcc older than ns2-trace, or a summary not written by tfcc run); "
            "run the scenario again"
        )
    return path, section


def _addressing(
    section: dict[str, Any], where: Path
) -> tuple[dict[str, tuple[int, int]], dict[int, tuple[str, str]]]:
    """Per link name its (from, to) nodes; per flow id its sender and receiver ``node.port``."""
    try:
        links = {
            str(link["name"]): (int(link["from_node"]), int(link["to_node"]))
            for link in section["links"]
        }
        flows = {
            int(f["id"]): (
                f"{int(f['src_node'])}.{int(f['src_port'])}",
                f"{int(f['dst_node'])}.{int(f['dst_port'])}",
            )
            for f in section["flows"]
        }
    except (KeyError, TypeError, ValueError) as e:
        raise Ns2TraceError(f'{where}: the "trace" section is malformed ({e!r})') from None
    return links, flows


class _Uids:
    """ns-2's per-packet uid rebuilt from the events' order (see the module doc)."""

    def __init__(self, pending: Iterable[tuple[tuple[Any, ...], int, int]] = ()) -> None:
        self.next = 0
        # (link, key) -> uids of the packets that had their + there and not yet their -,
        # and of those that had their - and not yet their r.
        self.queued: dict[tuple[Any, ...], deque[int]] = {}
        self.wire: dict[tuple[Any, ...], deque[int]] = {}
        # The last row if it was an r: (time, node it reached, key, uid).
        self.last_r: tuple[float, int, tuple[Any, ...], int] | None = None
        # What the links held when the window opened: ahead of every later packet of a key.
        for k, queued, wire in pending:
            if queued:
                self.queued[k] = deque(self.fresh() for _ in range(queued))
            if wire:
                self.wire[k] = deque(self.fresh() for _ in range(wire))

    def fresh(self) -> int:
        self.next += 1
        return self.next - 1

    @staticmethod
    def _pop(table: dict[tuple[Any, ...], deque[int]], k: tuple[Any, ...]) -> int | None:
        q = table.get(k)
        if not q:
            return None
        uid = q.popleft()
        if not q:
            del table[k]
        return uid

    def uid(self, ev: str, t: float, link: str, ends: tuple[int, int], key: tuple[Any, ...]) -> int:
        last, self.last_r = self.last_r, None
        k = (link, *key)
        if ev == "+" or ev == "d":
            if last is not None and last[0] == t and last[1] == ends[0] and last[2] == key:
                uid = last[3]
            else:
                uid = self.fresh()
            if ev == "+":
                self.queued.setdefault(k, deque()).append(uid)
            return uid
        if ev == "-":
            uid = self._pop(self.queued, k)
            uid = self.fresh() if uid is None else uid
            self.wire.setdefault(k, deque()).append(uid)
            return uid
        # r
        uid = self._pop(self.wire, k)
        uid = self.fresh() if uid is None else uid
        self.last_r = (t, ends[1], key, uid)
        return uid


def _pending(section: dict[str, Any], where: Path) -> list[tuple[tuple[Any, ...], int, int]]:
    """``trace.pending`` as ((link, flow, direction, kind, seq), queued, wire)."""
    try:
        out = []
        for p in section.get("pending", []):
            seq = p["seq"]
            k = (str(p["link"]), int(p["flow"]), str(p["direction"]), str(p["kind"]))
            k += (None if seq is None else int(seq),)
            queued, wire = int(p["queued"]), int(p["wire"])
            if queued < 0 or wire < 0:
                raise ValueError(f"negative count in {p!r}")
            out.append((k, queued, wire))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise Ns2TraceError(f'{where}: the "trace" section is malformed ({e!r})') from None
    return out


def _middle(
    mk: tuple[Any, ...],
    links: dict[str, tuple[int, int]],
    flows: dict[int, tuple[str, str]],
    where: str,
    summary_path: Path,
) -> tuple[str, tuple[int, int]]:
    """The columns from-node to dst.port of a row of `mk` (link, flow, direction, kind, size),
    and the link's ends."""
    link, flow, direction, kind, size = mk
    ends = links.get(link)
    if ends is None:
        raise Ns2TraceError(
            f"{where}: link {link!r} is not among the traced links of {summary_path} "
            f"({', '.join(links) or 'none'}): files of two runs?"
        )
    addr = flows.get(flow)
    if addr is None:
        raise Ns2TraceError(f"{where}: flow {flow!r} is not in {summary_path}: files of two runs?")
    name = NS2_TYPE.get(kind)
    if name is None or direction not in ("forward", "reverse"):
        raise Ns2TraceError(
            f"{where}: kind {kind!r}, direction {direction!r}: not values tfcc writes"
        )
    src, dst = addr if direction == "forward" else (addr[1], addr[0])
    return f"{ends[0]} {ends[1]} {name} {size} {FLAGS} {flow} {src} {dst}", ends


def _convert(
    path: Path, section: dict[str, Any], summary_path: Path, out: IO[str]
) -> tuple[int, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    links, flows = _addressing(section, summary_path)
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise Ns2TraceError(f"{path}: not a readable Parquet file ({e})") from None
    names = set(pf.schema_arrow.names)
    missing = [c for c in _COLUMNS if c not in names]
    if missing:
        raise Ns2TraceError(f"{path}: no column {', '.join(missing)} (not a tfcc trace)")
    uids = _Uids(_pending(section, summary_path))
    uid_of = uids.uid
    floor = math.floor
    middle: dict[tuple[Any, ...], tuple[str, tuple[int, int]]] = {}
    rows = 0
    batches = pf.iter_batches(batch_size=_BATCH_ROWS, columns=_COLUMNS)
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as e:
            raise Ns2TraceError(f"{path}: rows from {rows} cannot be read ({e})") from None
        if batch is None:
            break
        cols = batch.to_pydict()
        lines = []
        for t, ev, link, flow, direction, kind, seq, size in zip(
            *(cols[c] for c in _COLUMNS), strict=True
        ):
            # Rows repeat a few (link, flow, direction, kind, size): their columns between the
            # time and the seq are checked and formatted once.
            mk = (link, flow, direction, kind, size)
            mid = middle.get(mk)
            if mid is None:
                mid = middle[mk] = _middle(mk, links, flows, f"{path}: row {rows}", summary_path)
            if ev not in _EVENTS:
                raise Ns2TraceError(f"{path}: row {rows}: event {ev!r} is not one tfcc writes")
            uid = uid_of(ev, t, link, mid[1], (flow, direction, kind, seq))
            if seq is None:
                seq = -1
            elif kind == "tcp-ack":
                seq -= 1
            lines.append(f"{ev} {'%.15g' % (floor(t * 1e6 + 0.5) / 1e6)} {mid[0]} {seq} {uid}\n")
            rows += 1
        out.writelines(lines)
    return rows, uids.next


def write_ns2_trace(run_dir: Path, out: Path | None = None) -> ConversionStats:
    """Write the ns-2 trace of the run in ``run_dir`` to ``out`` (default
    ``run_dir/out.tr``; ``Path("-")`` for stdout). :class:`Ns2TraceError` when the run has no
    trace or ``out`` cannot be written, with nothing written."""
    import time

    started = time.perf_counter()
    run_dir = Path(run_dir)
    path, section = _load(run_dir)
    summary_path = run_dir / "summary.json"
    if out is not None and str(out) == "-":
        rows, packets = _convert(path, section, summary_path, sys.stdout)
        sys.stdout.flush()
        return ConversionStats(rows, packets, time.perf_counter() - started)
    target = Path(out) if out is not None else run_dir / "out.tr"
    if target.is_dir():
        raise Ns2TraceError(f"--out {target}: is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise Ns2TraceError(f"--out {target}: the directory {parent} does not exist")
    part = parent / f".{target.name}.{os.getpid()}.part"
    try:
        try:
            f = open(part, "w", encoding="ascii", buffering=1 << 20)  # noqa: SIM115
        except OSError as e:
            raise Ns2TraceError(f"--out {target}: cannot write ({e.strerror or e})") from None
        with f:
            rows, packets = _convert(path, section, summary_path, f)
        part.replace(target)
    except OSError as e:
        raise Ns2TraceError(f"--out {target}: cannot write ({e.strerror or e})") from None
    finally:
        part.unlink(missing_ok=True)
    return ConversionStats(rows, packets, time.perf_counter() - started)
