"""tfcc's TFRC (preset ``ns2``) against ns-2.35's own Agent/TFRC + Agent/TFRCSink, live (issue 5).

Two checks, with the issue's tolerances (not to be widened to pass; where the two disagree the
reason belongs in bench/ns2/README.md and the case stays failing, marked xfail(strict=True)):

- the dumbbell of ``bench/ns2/dumbbell.tcl`` (15 Mb/s, 20 ms, DropTail 100, access 100 Mb/s /
  1 ms) with N TCP-SACK and N TFRC flows, N = 1, 8, 32, 64, 100 s: the TCP share
  θ = TCP bytes / all bytes within ±0.05 of ns-2's;
- one TFRC flow alone over 1 % Bernoulli loss on the same link: goodput within 10 % of ns-2's.

Both sides count payload: ns-2's sinks count wire bytes (1040 per TCP segment, 1032 per TFRC
packet: ``packetSize_`` 1000 plus ``tcpip_base_hdr_size_`` 40 or ``headersize_`` 32), tfcc's
summary counts what reaches the application. Every case runs the full 100 s; together they take
about 20 s of ns-2 and 10 s of tfcc on the project machine, so no slow marker is needed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tfcc.ns2 import bernoulli_loss, have_ns2, run_ns2

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "bench" / "scenarios" / "dumbbell-tfrc.toml"
PAYLOAD = 1000
WIRE = {"tcp": 1040, "tfrc": 1032}
DURATION = 100.0

pytestmark = pytest.mark.skipif(not have_ns2(), reason="ns-2 missing: make ns2")


@dataclass(frozen=True)
class Case:
    n_tcp: int
    n_tfrc: int
    loss: float = 0.0

    @property
    def name(self) -> str:
        loss = f", {self.loss:.0%} loss" if self.loss else ""
        return f"{self.n_tcp} TCP + {self.n_tfrc} TFRC{loss}"

    def ns2_params(self) -> dict[str, Any]:
        return {
            "tcp": self.n_tcp,
            "tfrc": self.n_tfrc,
            "loss": self.loss,
            "duration": DURATION,
            "start_mode": "even",
            "start_max": 1.0,
        }

    def tfcc_overrides(self) -> list[str]:
        """ns-2's even start: flow i of n (TCP first) at i/n seconds."""
        n = self.n_tcp + self.n_tfrc

        def group(protocol: str, count: int, first: int, extra: str) -> str:
            lo, hi = first / n, (first + count - 1) / n
            start = f'"{lo}s"' if count == 1 else f'["{lo}s", "{hi}s"]'
            return f'{{ protocol = "{protocol}", count = {count}, start = {start}{extra} }}'

        groups = []
        if self.n_tcp:
            groups.append(group("tcp-sack", self.n_tcp, 0, ', packet_size = "1000B"'))
        if self.n_tfrc:
            groups.append(group("tfrc", self.n_tfrc, self.n_tcp, ', params = { preset = "ns2" }'))
        loss = bernoulli_loss(self.loss)
        return [
            f"duration={DURATION}",
            f"measure_from={DURATION / 5}",
            f"topology.bottleneck.loss={loss}",
            f"flows=[{', '.join(groups)}]",
        ]


def run_tfcc(case: Case) -> dict[str, Any]:
    tfcc = Path(sys.executable).with_name("tfcc")
    with tempfile.TemporaryDirectory(prefix="tfcc-ns2-tfrc-") as tmp:
        out = Path(tmp) / "out"
        cmd = [str(tfcc), "run", str(SCENARIO), "--out", str(out), "--quiet"]
        for o in case.tfcc_overrides():
            cmd += ["--set", o]
        subprocess.run(cmd, check=True, cwd=tmp, capture_output=True, timeout=600)
        return json.loads((out / "summary.json").read_text())


def kind(protocol: str) -> str:
    return "tcp" if protocol.startswith("tcp") else "tfrc"


def crosscheck(case: Case) -> dict[str, Any]:
    """Per kind, payload bytes delivered in the window and packets sent, in both simulators."""
    ns = run_ns2(case.ns2_params(), timeout=600)
    tf = run_tfcc(case)
    sides: dict[str, dict[str, Any]] = {}
    for side, flows in (("ns2", ns["flows"]), ("tfcc", tf["flows"])):
        agg: dict[str, Any] = {"bytes": {"tcp": 0.0, "tfrc": 0.0}, "sent": {"tcp": 0, "tfrc": 0}}
        for f in flows:
            k = f["kind"] if side == "ns2" else kind(f["protocol"])
            scale = PAYLOAD / WIRE[k] if side == "ns2" else 1.0
            agg["bytes"][k] += f["bytes_delivered"] * scale
            agg["sent"][k] += f["packets_sent"]
        total = agg["bytes"]["tcp"] + agg["bytes"]["tfrc"]
        agg["theta"] = agg["bytes"]["tcp"] / total if total else None
        agg["tfrc_goodput_bps"] = 8 * agg["bytes"]["tfrc"] / (DURATION * 4 / 5)
        sides[side] = agg
    return {"case": case.name, **sides}


THETA_CASES = [Case(n, n) for n in (1, 8, 32, 64)]


@pytest.mark.parametrize("case", THETA_CASES, ids=[c.name for c in THETA_CASES])
def test_tcp_share_within_0_05_of_ns2(case: Case) -> None:
    r = crosscheck(case)
    assert r["tfcc"]["theta"] == pytest.approx(r["ns2"]["theta"], abs=0.05), r


def test_tfrc_alone_over_1_percent_loss_within_10_percent_of_ns2() -> None:
    r = crosscheck(Case(0, 1, loss=0.01))
    n, t = r["ns2"]["tfrc_goodput_bps"], r["tfcc"]["tfrc_goodput_bps"]
    assert t == pytest.approx(n, rel=0.10), r
