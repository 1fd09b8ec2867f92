"""Issue 7, E2.1 and E2.3 (thesis 003 Sec. 2.5.1, Figs. 2.1 and 2.3): the time-based artificial
loss set-ups against stock ns-2.35, run live.

``bench/ns2/e2_artloss.tcl`` builds ``scenarios/003-e21-nonperiodic.toml`` and
``003-e23-twostate.toml`` in ns-2.35 (ns-2's Agent/TCP/Sack1 as TCP-SACK, GAIMD through
decrease_num_/increase_num_, IIAD and SQRT through windowOption_ 6, Agent/TFRC) and drops each
flow's packets at tfcc's own drop instants for the seed and link, which it draws in Tcl
(``bench/ns2/tfcc_rng.tcl``). Without congestion nothing else is random, and the flows meet only
at the 1 Gb/s bottleneck, where their synchronised bursts interleave; tfcc's flows of the
protocols ns-2.35 lacks are started at the end here, so both bottlenecks carry the same flows.
The two simulators then run the same packets up to exact-time ties: on E2.1 at CV[T] = 1,
seed 1, 300 s (all eleven flows in tfcc), GAIMD and IIAD delivered the same bytes to the byte
and TCP-SACK, SQRT and TFRC within 0.04 %; the claims' full runs agree as closely
(docs/reproductions/log/taxonomy.md, "E2.1 and E2.3 in stock ns-2.35"). Every flow must meet the
same number of losses. The window-based flows
(one TcpAgent in ns-2, the same rules in tfcc) must agree within 1 % on throughput, which
leaves room for the near-ties that ns-2 orders by floating-point rounding and tfcc by integer
nanoseconds. TFRC keeps issue 5's tolerance (10 %, tests/test_ns2_tfrc.py): tfcc's `ns2`
preset differs from Agent/TFRC in documented rules (bench/ns2/README.md), and on the compressed
E2.3 run below the two differ by 1.7 %. Seed 1 because at seeds 2 and 3 the TFRC flow's first
drop instant comes after 5 s, its slow start reaches the 1 Gb/s link, and ns-2.35 dies of a
floating-point exception (SIGFPE) at 4.9 s. The two runs take about 15 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_module import bench_module
from tfcc import reproduce
from tfcc.ns2 import have_ns2

pytestmark = pytest.mark.skipif(not have_ns2(), reason="ns-2 missing: make ns2")

ROOT = Path(__file__).resolve().parents[1]
e2 = bench_module("ns2/e2_artloss.py", "e2_artloss")

E21 = ROOT / "scenarios" / "003-e21-nonperiodic.toml"
E23 = ROOT / "scenarios" / "003-e23-twostate.toml"
PROTOCOLS = ["tcp-sack", "gaimd", "iiad", "sqrt", "tfrc"]


def _compare(scenario: Path, overrides: list[str], seed: int) -> None:
    n = e2.ns2_run(scenario, overrides, seed, PROTOCOLS)
    # tfcc's flows of the protocols ns-2.35 lacks start at the end, so both bottlenecks carry
    # the same flows.
    same = e2.tfcc_overrides(scenario, overrides, precise=False, same_flows=True)
    t = reproduce.default_runner(scenario, [*overrides, *same], seed)
    tfcc_flows = {f["id"]: f for f in t["flows"]}
    assert {f["protocol"] for f in n.result["flows"]} == set(PROTOCOLS)
    for f in n.result["flows"]:
        mine = tfcc_flows[f["id"]]
        assert mine["protocol"] == f["protocol"]
        # No congestion: every loss is the loss model's.
        assert mine["packets_lost"] == f["artificial_drops"], (f, mine)
        rel = 0.10 if f["protocol"] == "tfrc" else 0.01
        assert f["throughput_bps"] == pytest.approx(mine["throughput_bps"], rel=rel), (f, mine)


def test_e21_random_instants_give_the_same_runs() -> None:
    """E2.1 at CV[T] = 1: exponential spacing, so the drop instants are the Tcl draws of tfcc's
    streams (a wrong stream would change the losses of every flow)."""
    cv = [f"events.{i}.loss.cv=1.0" for i in range(11)]
    _compare(E21, [*cv, "duration=120s", "measure_from=0s"], seed=1)


def test_e23_loss_changes_give_the_same_runs() -> None:
    """E2.3's two-state schedule, compressed: 1-s losses, 5-s from 40 s, 1-s again from 80 s."""
    moved = [f"events.{3 * i + k}.at={at}s" for i in range(11) for k, at in ((1, 40), (2, 80))]
    _compare(E23, [*moved, "duration=110s", "measure_from=0s"], seed=1)
