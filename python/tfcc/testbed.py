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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
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


def prerun_claims(
    claims: Sequence[Any], workers: int = 20, on_done: Callable[[int, int], object] | None = None
) -> Callable[[Path, list[str], int], RunResult]:
    """Runs every (scenario, overrides, seed) the claims need on the testbed, ``workers`` at a
    time, and returns a runner for :func:`tfcc.reproduce.run` that hands them out; a failed run
    raises ``ValueError`` with its error, which the claim reports."""
    keys: dict[tuple[str, tuple[str, ...], int], None] = {}
    for c in claims:
        for overrides, seed in c.runs():
            keys[(str(c.scenario), tuple(overrides), seed)] = None
    results: dict[tuple[str, tuple[str, ...], int], RunResult | Exception] = {}

    def one(key: tuple[str, tuple[str, ...], int]) -> None:
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

    def runner(scenario: Path, overrides: list[str], seed: int) -> RunResult:
        r = results.get((str(scenario), tuple(overrides), seed))
        if r is None:
            raise ValueError(f"seed {seed}: no testbed run")
        if isinstance(r, Exception):
            raise ValueError(f"seed {seed}: the testbed run failed: {r}")
        return r

    return runner


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
)


def compare_rows(
    sim: RunResult, testbed: RunResult
) -> list[tuple[str, str, float | None, float | None]]:
    """(flow label, metric, simulator value, testbed value) rows: every flow's throughput (a
    reverse flow, ``direction = "reverse"``, marked so), then the bottleneck's utilisation and
    drops in each direction the summaries have, then the run's fairness metrics (over the
    forward flows, as both backends compute them)."""
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
            for key in ("utilization", "drops"):
                rows.append((link, key, sl[link][key], tl[link][key]))
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
