"""Runs the ns-2.35 reference scenario (``bench/ns2/dumbbell.tcl``) and parses its JSON report.

ns-2 is the yardstick tfcc's simulator and TFRC are checked against (issues 4 and 5), and the
benchmark compares run time and memory with it, so besides the scenario's own measurements every
result carries the wall time, CPU time and peak RSS of the ns-2 process itself.

Only the standard library is used here: the harness must work before (and without) the compiled
extension, e.g. to record baselines.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_SCRIPT",
    "Ns2Error",
    "Ns2NotFoundError",
    "bernoulli_loss",
    "cpu_model",
    "derive_metrics",
    "physical_problems",
    "find_ns",
    "have_ns2",
    "jain_index",
    "run_ns2",
]

#: The scenario shipped in the repository: ``<repo>/bench/ns2/dumbbell.tcl``.
DEFAULT_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "ns2" / "dumbbell.tcl"

#: How much of ns-2's stderr an error message carries: enough for a Tcl traceback.
_STDERR_TAIL_CHARS = 4000


class Ns2Error(RuntimeError):
    """ns-2 failed, timed out, or printed no parseable report.

    ``stderr_tail`` holds the end of ns-2's stderr (a Tcl traceback, or the scenario's own
    one-line complaint about a parameter), ``returncode`` the exit status (``None`` on timeout).
    """

    def __init__(
        self,
        message: str,
        *,
        returncode: int | None = None,
        stderr_tail: str = "",
        command: list[str] | None = None,
    ) -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.command = command or []
        full = message
        if stderr_tail.strip():
            full += "\n--- ns-2 stderr (tail) ---\n" + stderr_tail.rstrip()
        super().__init__(full)


class Ns2NotFoundError(Ns2Error):
    """No ``ns`` binary: install it with ``scripts/install-ns2.sh`` (Debian package ``ns2``)."""


def bernoulli_loss(p: float) -> str:
    """The tfcc bottleneck ``loss`` (TOML) for ns-2's ``loss=p`` of ``dumbbell.tcl``: each
    packet dropped independently with probability ``p`` (a Bernoulli ``ErrorModel``), none at
    ``p = 0``."""
    return f'{{ model = "bernoulli", p = {p} }}' if p > 0 else '{ model = "none" }'


def cpu_model(default: str = "unknown") -> str:
    """The first ``model name`` of ``/proc/cpuinfo``, for the machine line of a benchmark;
    ``default`` where there is none (or no such file)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return default


def find_ns() -> str | None:
    """The ``ns`` binary to run: ``$TFCC_NS2`` if set, else ``ns`` on ``PATH``."""
    override = os.environ.get("TFCC_NS2")
    if override:
        return override if os.access(override, os.X_OK) else None
    return shutil.which("ns")


def have_ns2() -> bool:
    """Whether an ``ns`` binary is available (it is not run; see ``scripts/install-ns2.sh``)."""
    return find_ns() is not None


def _format_value(key: str, value: object) -> str:
    # bool first: it is an int subclass, and the Tcl side wants 0/1.
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"ns-2 parameter {key}={value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str | os.PathLike):
        text = os.fspath(value)
        if any(c.isspace() for c in text) or not text:
            raise ValueError(f"ns-2 parameter {key}={text!r} must be non-empty without whitespace")
        return text
    raise TypeError(f"ns-2 parameter {key} has unsupported type {type(value).__name__}")


def _command(ns: str, script: Path, params: Mapping[str, object]) -> list[str]:
    args = [ns, str(script)]
    for key, value in params.items():
        if not key or not key.replace("_", "a").isalnum():
            raise ValueError(f"ns-2 parameter name {key!r} is not an identifier")
        args.append(f"{key}={_format_value(key, value)}")
    return args


def _tail(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-_STDERR_TAIL_CHARS:].decode("utf-8", errors="replace")


#: GNU time, when installed (Debian package ``time``; ``make bench`` installs it).
GNU_TIME = "/usr/bin/time"


def peak_rss_prefix(out: Path) -> list[str]:
    """A command prefix that writes the child's peak RSS (KiB) to ``out``: GNU time, if present.

    ``ru_maxrss`` of a child started from Python is at least the *parent's* resident set at the
    fork (Linux copies the high-water mark into the child and keeps it across ``exec``), so a
    16 MiB driver would hide any child smaller than that. GNU time is a small C program: the
    children it starts inherit its ~2 MiB, the same for every program measured this way.
    """
    if os.access(GNU_TIME, os.X_OK):
        return [GNU_TIME, "-f", "%M", "-o", str(out)]
    return []


def read_peak_rss(out: Path, fallback_kib: int) -> int:
    """The peak RSS GNU time wrote to ``out``, else ``fallback_kib`` (``ru_maxrss``)."""
    try:
        return int(out.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return fallback_kib


def run_ns2(
    params: Mapping[str, object],
    timeout: float = 900.0,
    *,
    script: str | os.PathLike[str] | None = None,
    ns: str | None = None,
) -> dict[str, Any]:
    """Runs one ns-2 scenario and returns its JSON report plus resource use.

    ``params`` are the scenario's ``key=value`` parameters (see ``bench/ns2/README.md``): numbers
    in SI units, booleans as 0/1. The report gains

    - ``wall_seconds``: from spawning ns-2 to its exit, so start-up and set-up are included, as
      the benchmark requires of tfcc too;
    - ``cpu_seconds``: user + system time of the ns-2 process;
    - ``peak_rss_kib``: its maximum resident set size, measured by GNU time when it is installed
      (see :func:`peak_rss_prefix`), else ``ru_maxrss`` from ``wait4`` on this very process;
    - ``derived``: see :func:`derive_metrics`.

    Raises :class:`Ns2NotFoundError` without an ``ns`` binary and :class:`Ns2Error` when ns-2 exits
    non-zero (e.g. the scenario rejects a parameter), times out, or prints no JSON report.
    """
    ns_bin = ns or find_ns()
    if ns_bin is None:
        raise Ns2NotFoundError(
            "ns-2 is not installed (no 'ns' on PATH and TFCC_NS2 unset); "
            "run scripts/install-ns2.sh (Debian package 'ns2')"
        )
    script_path = Path(script) if script is not None else DEFAULT_SCRIPT
    if not script_path.is_file():
        raise Ns2Error(f"ns-2 scenario {script_path} does not exist")
    cmd = _command(ns_bin, script_path, params)

    with tempfile.TemporaryDirectory(prefix="tfcc-ns2-") as tmp:
        rss_file = Path(tmp) / "rss"
        run_cmd = [*peak_rss_prefix(rss_file), *cmd]
        out_path = Path(tmp) / "stdout"
        err_path = Path(tmp) / "stderr"
        with out_path.open("wb") as out_f, err_path.open("wb") as err_f:
            start = time.perf_counter()
            try:
                # A process group of its own: with GNU time in front, ns-2 is a grandchild, and
                # killing only the direct child on a timeout left ns-2 running for hours.
                proc = subprocess.Popen(
                    run_cmd,
                    stdout=out_f,
                    stderr=err_f,
                    stdin=subprocess.DEVNULL,
                    cwd=tmp,
                    start_new_session=True,
                )
            except OSError as exc:
                raise Ns2NotFoundError(f"cannot start {ns_bin}: {exc}", command=cmd) from exc
            timed_out = threading.Event()

            def _kill() -> None:
                timed_out.set()
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            timer = threading.Timer(timeout, _kill)
            timer.start()
            try:
                # wait4 reports the resource use of this child alone.
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                timer.cancel()
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)

        if timed_out.is_set():
            raise Ns2Error(
                f"ns-2 timed out after {timeout:g} s",
                stderr_tail=_tail(err_path),
                command=cmd,
            )
        if proc.returncode != 0:
            raise Ns2Error(
                f"ns-2 exited with status {proc.returncode}: {' '.join(cmd)}",
                returncode=proc.returncode,
                stderr_tail=_tail(err_path),
                command=cmd,
            )
        stdout = out_path.read_text(encoding="utf-8", errors="replace")
        stderr_tail = _tail(err_path)
        peak_rss = read_peak_rss(rss_file, usage.ru_maxrss)

    report = _parse_report(stdout)
    if report is None:
        raise Ns2Error(
            f"ns-2 printed no JSON report on stdout (last output: {stdout.strip()[-300:]!r})",
            returncode=proc.returncode,
            stderr_tail=stderr_tail,
            command=cmd,
        )
    report["wall_seconds"] = wall
    report["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    # Linux reports ru_maxrss in KiB.
    report["peak_rss_kib"] = peak_rss
    report["command"] = cmd
    report["derived"] = derive_metrics(report)
    return report


def _parse_report(stdout: str) -> dict[str, Any] | None:
    # ns-2 agents occasionally print diagnostics on stdout; the report is the last JSON line.
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except json.JSONDecodeError:
                return None
            return parsed if isinstance(parsed, dict) else None
    return None


def jain_index(values: list[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2); ``None`` for no flows or all zero."""
    if not values:
        return None
    square_sum = sum(v * v for v in values)
    if square_sum == 0.0:
        return None
    return sum(values) ** 2 / (len(values) * square_sum)


#: The kind ``dumbbell.tcl`` gives its ``reverse_tcp`` flows (data from the receivers' side).
REVERSE_KIND = "tcp-reverse"


def derive_metrics(report: Mapping[str, Any]) -> dict[str, Any]:
    """Scenario-level numbers computed from a report's flows and bottleneck counters.

    - ``throughput_bps`` per kind and in total (receiver bytes in the measurement window; ns-2
      counts on-wire sizes: 1040 B per 1000-byte TCP segment, 1032 B per TFRC packet);
    - ``theta``: TCP bytes / (TCP + TFRC bytes), the TCP share of issue 5, when both are present;
    - ``jain_index`` over all TCP and TFRC flows, and per kind;
    - ``delivered_over_departed``: receiver bytes / bottleneck departures in the window (≈ 1;
      below 1 by retransmitted duplicates and by out-of-order data TCP has not yet handed up,
      and with ``reverse_tcp`` flows by their ACKs, which cross the bottleneck too);
    - ``bottleneck_pkts_per_wall_second``: packets across the bottleneck over the whole run per
      second of ns-2 wall time (when the report carries ``wall_seconds``).
    """
    flows = report.get("flows", [])
    by_kind: dict[str, list[float]] = {}
    bytes_by_kind: dict[str, int] = {}
    for flow in flows:
        kind = str(flow["kind"])
        by_kind.setdefault(kind, []).append(float(flow["throughput_bps"]))
        bytes_by_kind[kind] = bytes_by_kind.get(kind, 0) + int(flow["bytes_delivered"])
    derived: dict[str, Any] = {
        "throughput_bps": {k: sum(v) for k, v in by_kind.items()},
        "total_throughput_bps": sum(sum(v) for v in by_kind.values()),
        "jain_index": jain_index(by_kind.get("tcp", []) + by_kind.get("tfrc", [])),
        "jain_index_by_kind": {k: jain_index(v) for k, v in by_kind.items()},
        "min_throughput_bps": {k: min(v) for k, v in by_kind.items()},
        "max_throughput_bps": {k: max(v) for k, v in by_kind.items()},
    }
    tcp_bytes = bytes_by_kind.get("tcp", 0)
    tfrc_bytes = bytes_by_kind.get("tfrc", 0)
    derived["theta"] = tcp_bytes / (tcp_bytes + tfrc_bytes) if tcp_bytes and tfrc_bytes else None
    bottleneck = report.get("bottleneck", {})
    departed = bottleneck.get("departures_bytes", 0)
    # Reverse-path flows' data crosses r2 -> r1, not the monitored bottleneck.
    delivered = sum(v for k, v in bytes_by_kind.items() if k != REVERSE_KIND)
    derived["delivered_over_departed"] = delivered / departed if departed else None
    wall = report.get("wall_seconds")
    totals = report.get("bottleneck_totals", {})
    if wall and "departures_pkts" in totals:
        derived["bottleneck_pkts_per_wall_second"] = totals["departures_pkts"] / wall
    return derived


def physical_problems(report: Mapping[str, Any]) -> list[str]:
    """What in a report would be impossible in a real network; empty when all is well.

    The bounds are the edge effects of counting over a window, not tolerances:

    - departures can exceed capacity × window by the one packet in service at the window start;
    - receiver bytes and bottleneck departures differ by duplicates (retransmissions) plus what
      can sit in the queue, on the path, or out of order at the receivers at either window edge
      (at most twice the buffer plus the bandwidth-delay product);
    - packets sent = packets arriving at the bottleneck + loss-model drops + those still on an
      access link at the end (at most one access bandwidth-delay product plus one per flow).

    With reverse-path flows (``reverse_tcp``) the bottleneck also carries their ACKs, which no
    flow counts: the two balances are then checked one way only (the bottleneck carried at
    least what the forward flows account for).
    """
    problems: list[str] = []
    b = report["bottleneck"]
    p = report["params"]
    # The checks are of the forward bottleneck, which reverse-path flows' data does not cross;
    # their ACKs do, uncounted by any flow, so with reverse flows the bottleneck may carry more
    # than the forward flows account for, never less.
    flows = [f for f in report["flows"] if f.get("kind") != REVERSE_KIND]
    two_way = len(flows) < len(report["flows"])
    win = float(report["window_seconds"])
    pkt = b["departures_bytes"] / b["departures_pkts"] if b["departures_pkts"] else 1040.0
    one_pkt = 8 * pkt / (b["rate_bps"] * win)
    if b["utilization"] > 1 + one_pkt:
        problems.append(f"utilisation {b['utilization']:.4f} > 1")
    rtt = 2 * (b["delay_s"] + 2 * p["access_delay"])
    bdp_pkts = b["rate_bps"] * rtt / (8 * pkt)
    edge = 2 * (b["limit_pkts"] + bdp_pkts + len(flows)) * pkt
    delivered = sum(f["bytes_delivered"] for f in flows)
    departed = b["departures_bytes"]
    rexmit = sum(f["packets_retransmitted"] for f in flows) * pkt
    if (departed - delivered > rexmit + edge and not two_way) or delivered - departed > edge:
        problems.append(f"receivers got {delivered} B but {departed} B left the bottleneck")
    totals = report["bottleneck_totals"]
    sent = sum(f["total_packets_sent"] for f in flows)
    reached = totals["arrivals_pkts"] + totals["loss_model_drops_pkts"]
    access_pkts = p["access_rate"] * p["access_delay"] / (8 * pkt)
    in_access = len(flows) * (access_pkts + 1)
    if not (0 <= sent - reached or two_way) or sent - reached > in_access:
        problems.append(f"{sent} packets sent but {reached} reached the bottleneck")
    if b["mean_queue_pkts"] > b["limit_pkts"]:
        problems.append(f"mean queue {b['mean_queue_pkts']:.1f} above the limit")
    return problems
