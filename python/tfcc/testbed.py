"""The testbed backend seen from Python: ``tfcc compare`` and ``tfcc reproduce --backend testbed``.

A testbed run is the native ``tfcc-run SCENARIO --backend testbed`` (crate tfcc-run, which builds
the network namespaces, the tbf bottleneck and the delay/loss relay, and needs root); this module
starts it as a process and reads its ``summary.json`` and time series back as a
:class:`tfcc.metrics.RunResult`, the shape every metric takes. Testbed runs take their scenario's
duration in real time, so a reproduction runs them side by side (they use a few percent of a
core each at the theses' rates; each run has its own namespaces) and, with ``--quick``, with each
claim's first seed only.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfcc.metrics import RunResult


class TestbedError(RuntimeError):
    """A testbed run failed; the message carries the native command's error."""


def native() -> str:
    """The ``tfcc-run`` executable: ``$TFCC_RUN``, else the one ``make install`` put beside the
    package, else ``tfcc-run`` on the PATH."""
    from tfcc.entry import NATIVE

    env = os.environ.get("TFCC_RUN")
    if env:
        return env
    if os.path.exists(NATIVE):
        return NATIVE
    found = shutil.which("tfcc-run")
    if found is None:
        raise TestbedError("the native tfcc-run executable is missing: run `make install`")
    return found


def run(
    scenario: Path, overrides: Sequence[str], seed: int | None, backend: str = "testbed"
) -> RunResult:
    """One run of ``scenario`` on ``backend`` (``sim`` or ``testbed``) through ``tfcc-run``: its
    outputs, ``frames.parquet`` included (a video flow's frame metrics read it on either
    backend)."""
    from tfcc.run import read_run_result

    with tempfile.TemporaryDirectory(prefix="tfcc-tb.") as tmp:
        out = Path(tmp) / "out"
        cmd = [native(), str(scenario), "--out", str(out), "--backend", backend]
        cmd += ["--no-plots", "-q"]
        for o in overrides:
            cmd += ["--set", o]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        code, stderr = _run_child(cmd, Path(tmp) / "stderr")
        if code != 0:
            msg = (stderr.strip().splitlines() or ["no message"])[-1]
            # The native command's line starts with its own "error: ", which the caller adds.
            msg = msg.removeprefix("error: ")
            what = " ".join(
                [scenario.name, f"({backend})"]
                + ([f"--set {' '.join(overrides)}"] if overrides else [])
                + ([f"seed {seed}"] if seed is not None else [])
            )
            raise TestbedError(f"{what}: {msg}")
        return read_run_result(out)


#: How long an interrupted testbed run may take to remove its namespaces before it is killed
#: (measured: about 30 ms).
STOP_GRACE_S = 10.0


#: Testbed runs in progress, so that an interrupt of a reproduction, which only its main thread
#: sees, can stop the runs that its worker threads wait for; and whether it is stopping (no new
#: run starts then). Both under the lock.
_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = [False]


def _stop_live() -> None:
    """Sends SIGINT to every testbed run in progress and lets no new one start."""
    with _LIVE_LOCK:
        _STOPPING[0] = True
        for proc in _LIVE:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)


def _run_child(cmd: list[str], stderr_path: Path) -> tuple[int, str]:
    """Runs ``cmd`` to its end and returns (exit code, stderr), stderr going through a file in
    the run's temporary directory. If this process is interrupted meanwhile (Ctrl-C, or SIGTERM
    turned into KeyboardInterrupt by the caller), the child is sent SIGINT, which makes a
    testbed run stop and delete its namespaces, and is waited for before the interrupt goes on:
    ``subprocess.run`` would SIGKILL it and leave them behind."""
    with open(stderr_path, "w") as err:
        with _LIVE_LOCK:
            if _STOPPING[0]:
                raise TestbedError("interrupted before it started")
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            _LIVE.add(proc)
        try:
            # os.waitpid, not Popen.wait: on KeyboardInterrupt the latter first waits 0.25 s
            # for the child to react to a terminal's Ctrl-C by itself.
            _, status = os.waitpid(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        except BaseException:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(proc)
    return proc.returncode, stderr_path.read_text(errors="replace")


#: A testbed run in which the relay released more than 1 % of its packets later than this
#: after their due time is named in the reproduction's timing line: 1 ms is an eighth of the
#: shortest propagation RTT the theses' testbed scenarios use (000 Sec. 5.1.1's 8.4 ms), and
#: quiet runs stay within 0.2 ms (0.018-0.152 ms measured at load 1.8-4.0, 2026-11-28).
LATE_P99_MS = 1.0

#: How many testbed runs a reproduction makes at a time unless ``--jobs`` says otherwise: the
#: theses' rates cost a few percent of a core per run, so they run side by side; the timing
#: line (:class:`Timing`) says how closely each kept its delays.
DEFAULT_JOBS = 20


@dataclass
class Timing:
    """How closely a reproduction's testbed runs kept their scenarios' delays, from each run's
    ``summary.json`` (``testbed.relay``, ``testbed.load_average``): ``runs`` with a relay
    report, the largest p99 and maximum release lateness among them (ms), the highest load
    average seen at a run's start or end, and the runs whose p99 exceeded
    :data:`LATE_P99_MS` (``"scenario.toml seed N"``). Written into ``run.json`` and the line
    naming the run."""

    runs: int = 0
    p99_ms: float | None = None
    max_ms: float | None = None
    load: float | None = None
    late: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, runs: Mapping[str, Mapping[str, Any]]) -> Timing:
        """From each run's summary, keyed by how the run is named."""
        t = cls()
        for name, summary in runs.items():
            section = summary.get("testbed") or {}
            relay = section.get("relay")
            if relay is not None:
                t.runs += 1
                p99, late_max = relay["lateness_p99_ms"], relay["lateness_max_ms"]
                t.p99_ms = p99 if t.p99_ms is None else max(t.p99_ms, p99)
                t.max_ms = late_max if t.max_ms is None else max(t.max_ms, late_max)
                if p99 > LATE_P99_MS:
                    t.late.append(name)
            for load in section.get("load_average") or []:
                t.load = load if t.load is None else max(t.load, load)
        return t

    def describe(self) -> str:
        """``relay lateness p99 ≤ 0.15 ms in 69 runs (max 24.1 ms), load average ≤ 4.0``, and
        the late runs named."""
        if self.runs == 0 or self.p99_ms is None or self.max_ms is None:
            text = "no relay timing (no run reported one)"
        else:
            text = (
                f"relay lateness p99 ≤ {self.p99_ms:.3g} ms in {self.runs} "
                f"run{'s' if self.runs != 1 else ''} "
                f"(max {self.max_ms:.3g} ms)"
            )
        if self.load is not None:
            text += f", load average ≤ {self.load:.2f}"
        if self.late:
            text += f"; p99 over {LATE_P99_MS:g} ms in {', '.join(sorted(self.late))}"
        return text


class ClaimRuns:
    """The testbed runs of a reproduction's claims, made by :func:`prerun_claims`: called as a
    runner for :func:`tfcc.reproduce.run`, it hands each run out (a failed one raises
    ``ValueError`` with its error, which the claim reports); :attr:`timing` says how closely
    the runs kept their delays."""

    def __init__(self, results: Mapping[RunKey, RunResult | Exception]) -> None:
        self._results = results
        self.timing = Timing.of(
            {
                f"{Path(k[0]).name}{' --set ' + ' '.join(k[1]) if k[1] else ''} seed {k[2]}": (
                    r.summary
                )
                for k, r in results.items()
                if isinstance(r, RunResult)
            }
        )

    def __call__(self, scenario: Path, overrides: list[str], seed: int) -> RunResult:
        r = self._results.get((str(scenario), tuple(overrides), seed))
        if r is None:
            raise ValueError(f"seed {seed}: no testbed run")
        if isinstance(r, Exception):
            raise ValueError(f"seed {seed}: the testbed run failed: {r}")
        return r


#: A testbed run of a reproduction: (scenario path, its overrides, seed).
RunKey = tuple[str, tuple[str, ...], int]


def prerun_claims(
    claims: Sequence[Any],
    workers: int = DEFAULT_JOBS,
    on_done: Callable[[int, int], object] | None = None,
) -> ClaimRuns:
    """Runs every (scenario, overrides, seed) the claims need on the testbed, ``workers`` at a
    time, and returns them as a runner for :func:`tfcc.reproduce.run` (:class:`ClaimRuns`)."""
    keys: dict[RunKey, None] = {}
    for c in claims:
        for overrides, seed in c.runs():
            keys[(str(c.scenario), tuple(overrides), seed)] = None
    results: dict[RunKey, RunResult | Exception] = {}

    def one(key: RunKey) -> None:
        try:
            results[key] = run(Path(key[0]), list(key[1]), key[2])
        except (TestbedError, OSError) as e:
            results[key] = e
        if on_done is not None:
            on_done(len(results), len(keys))

    with _LIVE_LOCK:
        _STOPPING[0] = False
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        try:
            list(pool.map(one, keys))
        except BaseException:
            # Ctrl-C or SIGTERM: the main thread alone sees it. No queued run starts, the
            # running ones are told to stop (they remove their namespaces) and are waited for.
            pool.shutdown(wait=False, cancel_futures=True)
            _stop_live()
            raise
    return ClaimRuns(results)


#: The per-flow quantities ``tfcc compare`` puts side by side, as (summary key, label, scale).
FLOW_METRICS = (
    ("throughput_bps", "throughput Mb/s", 1e-6),
    ("bytes_delivered", "delivered MB", 1e-6),
    # On the testbed from the tfcc endpoints' own statistics, and for kernel TCP the RTT from
    # TCP_INFO; kernel TCP has no loss event rate there (null, printed as a dash).
    ("loss_event_rate", "loss event rate", 1.0),
    # Data packets dropped on the forward route in the window; on the testbed measured per
    # flow (kernel TCP by the window's DSCP marks), null where a kernel TCP flow's share of its
    # queue's drops is unknown (README, "Drops and losses on the testbed").
    ("packets_lost", "packets lost", 1.0),
    ("mean_rtt_s", "mean RTT ms", 1e3),
    # Goodput's CoV per sampling interval, one definition on both backends
    # (tfcc_sim::recorder::WindowGoodput; null in testbed summaries before 2026-11-28).
    ("cov", "goodput CoV", 1.0),
    ("base_rtt_s", "base RTT ms", 1e3),
)


def compare_rows(
    sim: RunResult, testbed: RunResult
) -> list[tuple[str, str, float | None, float | None]]:
    """(flow label, metric, simulator value, testbed value) rows: every flow's figures of
    :data:`FLOW_METRICS` (a reverse flow, ``direction = "reverse"``, marked so), then the
    bottleneck's utilisation, drops and mean queue in each direction the summaries have, then
    the run's fairness metrics (over the forward flows, as both backends compute them); a
    figure a summary lacks is ``None``."""
    rows: list[tuple[str, str, float | None, float | None]] = []
    sf, tf = sim.summary["flows"], testbed.summary["flows"]
    for a, b in zip(sf, tf, strict=False):
        name = f"{a['id']} {a.get('label') or a['protocol']}"
        if b["protocol"] != a["protocol"]:
            name += f" / {b['protocol']}"
        if a.get("direction") == "reverse":
            name += " (reverse)"
        for key, label, scale in FLOW_METRICS:
            va, vb = a.get(key), b.get(key)
            rows.append(
                (
                    name,
                    label,
                    None if va is None else va * scale,
                    None if vb is None else vb * scale,
                )
            )
    sl = {x["name"]: x for x in sim.summary["links"]}
    tl = {x["name"]: x for x in testbed.summary["links"]}
    for link in ("bottleneck", "bottleneck-rev"):
        if link in sl and link in tl:
            for key in ("utilization", "drops", "mean_queue_pkts"):
                rows.append((link, key, sl[link].get(key), tl[link].get(key)))
    # Both backends leave reverse flows out of θ and Jain.
    scope = "forward flows" if any(f.get("direction") == "reverse" for f in sf) else "all"
    for key in ("fairness_theta", "jain_index"):
        rows.append(
            (
                scope,
                key,
                sim.summary["metrics"].get(key),
                testbed.summary["metrics"].get(key),
            )
        )
    return rows
