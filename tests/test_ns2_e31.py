"""Issue 7, E3.1: TCP-SACK's timeouts under count-based loss against ns-2.35, run live.

Thesis 003's E3.1 drops every P-th packet of the link's aggregate (Sec. 3.5.1). Against a
smooth competitor, which TCP segment the counter lands on depends on how the flows interleave,
and TCP times out often: with ns-2.35's 200 ms minimum RTO, 60 ms above the 140 ms RTT, the
timer usually expires before the third duplicate ACK of a small window arrives. These tests
check that this is ns-2's behaviour and not the model's: one `Agent/TCP/Sack1` flow and a CBR
flow at 255 kb/s (WARC's rate in E3.1) share an every-20th-packet drop
(bench/ns2/e31_countloss.tcl), and the same in tfcc. Measured (2200 s): 1305 timeouts in
ns-2, 1307 in tfcc at 200 ms; 2 and 2 with the 1 s minimum of ns-2.1b9, which the thesis used;
with ns-2.1b9's whole-segment decrease as well (`precisionReduce_ false`) ns-2 sends 52516
packets (2541 retransmitted, no timeout), tfcc 52485 (2541, none). GAIMD (Sack1 with
decrease_num_ 0.875, increase_num_ 0.2) likewise: 34905 and 34933 packets sent. IIAD (Sack1
with windowOption_ 6, k_parameter_ 1, l_parameter_ 0, increase_num_ 1, decrease_num_ 0.33,
i.e. a decrease of 0.67·w^0 per loss) against the CBR over 600 s: 10718 and 10764 packets sent
(609 and 605 retransmitted, 1 timeout each). And E3.1 proper, one TCP and one IIAD behind the
same every-20th-packet counter over 2200 s: ns-2 sends 47266 (TCP) and 41951 (IIAD) packets
with 73 and 173 timeouts, tfcc 47122 and 41521 with 78 and 172; IIAD/TCP 0.888 in ns-2 (packets
sent) and 0.881 in tfcc, against the thesis' 0.4-0.6 (claim e31-iiad-heavy).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tfcc.ns2 import find_ns, have_ns2
from tfcc.run import run

pytestmark = pytest.mark.skipif(not have_ns2(), reason="ns-2 missing: make ns2")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "ns2" / "e31_countloss.tcl"
SCENARIO = ROOT / "scenarios" / "003-e31-countloss.toml"
DURATION = 600
CBR_BPS = 255_000
NS235_RTO = 'initial_rto = "3s", max_rto = "60s"'
# IIAD as ns-2's binomial agent (tcp.cc, windowOption_ 6): decrease_num_ increase_num_
# windowOption_ k_parameter_ l_parameter_; the decrease is (1 - decrease_num_)·w^l = 0.67.
IIAD_NS2 = ["0.33", "1.0", "6", "1", "0"]


def ns2_tcp(min_rto: float, precise: bool, protocol: str) -> dict[str, int]:
    ns = find_ns()
    assert ns is not None
    args = ["1", "20", str(DURATION), str(min_rto), "0.01", str(CBR_BPS), str(int(precise))]
    if protocol == "gaimd":
        args += ["0.875", "0.2"]
    elif protocol == "iiad":
        args += IIAD_NS2
    out = subprocess.run(
        [ns, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    m = re.search(r"flow 0 sent (\d+) rexmit (\d+) timeouts (\d+) acked (\d+)", out)
    assert m, out
    sent, rexmit, timeouts, _ = (int(x) for x in m.groups())
    return {"sent": sent, "rexmit": rexmit, "timeouts": timeouts}


def tfcc_tcp(min_rto: float, precise: bool, protocol: str, out: Path) -> dict[str, int]:
    tcp = f"max_window = 200, precision_reduce = {str(precise).lower()}"
    summary = run(
        SCENARIO,
        out,
        seed=1,
        plots=False,
        overrides=[
            f"duration={DURATION}s",
            "measure_from=0s",
            f"flows.0.protocol={protocol}",
            'topology.bottleneck.loss={ model = "periodic", every = 20, scope = "aggregate" }',
            # The scenario's ns-2.1b9 preset would add rtxcur_init_ 6 and maxrto_ 100000; the
            # ns-2 here is 2.35, so its 3 s and 60 s are stated.
            f'flows.0.params={{ {tcp}, rtt = {{ min_rto = "{min_rto}s", {NS235_RTO} }} }}',
            "flows.1.protocol=cbr",
            f'flows.1.params={{ rate = "{CBR_BPS}bps" }}',
        ],
    )
    f = summary["flows"][0]
    return {"sent": f["packets_sent"], "rexmit": f["retransmits"], "timeouts": f["timeouts"]}


@pytest.mark.parametrize(
    ("min_rto", "precise", "protocol"),
    [
        (0.2, True, "tcp-sack"),
        (1.0, True, "tcp-sack"),
        (1.0, False, "tcp-sack"),
        (1.0, False, "gaimd"),
        (1.0, False, "iiad"),
    ],
)
def test_tcp_times_out_as_ns2_sack1_under_aggregate_count_loss(
    min_rto: float, precise: bool, protocol: str, tmp_path: Path
) -> None:
    n = ns2_tcp(min_rto, precise, protocol)
    t = tfcc_tcp(min_rto, precise, protocol, tmp_path / "run")
    assert t["sent"] == pytest.approx(n["sent"], rel=0.01), (n, t)
    assert t["rexmit"] == pytest.approx(n["rexmit"], rel=0.03), (n, t)
    assert abs(t["timeouts"] - n["timeouts"]) <= max(3, 0.05 * n["timeouts"]), (n, t)
    if min_rto < 0.5:
        # The 200 ms floor: TCP times out on a large share of its losses.
        assert n["timeouts"] > 0.3 * n["rexmit"], n
    else:
        assert n["timeouts"] < 0.02 * n["rexmit"], n


def test_iiad_against_tcp_matches_ns2_binomial_agent(tmp_path: Path) -> None:
    """E3.1 with ns-2.1b9's 1 s floor and whole-segment decrease: one TCP-SACK and one IIAD
    behind the same every-20th-packet counter, in ns-2.35 (flow 1 with the binomial keys) and
    in tfcc. Both simulators give IIAD ≈ 0.88 of TCP, so the thesis' 0.4-0.6 is not what ns-2's
    binomial agent does here."""
    ns = find_ns()
    assert ns is not None
    duration = 2200
    args = ["2", "20", str(duration), "1.0", "0.01", "0", "0", *IIAD_NS2, "1"]
    out = subprocess.run(
        [ns, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    n = {
        int(m[0]): (int(m[1]), int(m[2]))
        for m in re.findall(r"flow (\d+) sent (\d+) rexmit \d+ timeouts (\d+)", out)
    }
    assert set(n) == {0, 1}, out
    tcp = "max_window = 200, precision_reduce = false"
    rto = f'rtt = {{ min_rto = "1s", {NS235_RTO} }}'
    summary = run(
        SCENARIO,
        tmp_path / "run",
        seed=1,
        plots=False,
        overrides=[
            f"duration={duration}s",
            "measure_from=0s",
            "flows.1.protocol=iiad",
            'topology.bottleneck.loss={ model = "periodic", every = 20, scope = "aggregate" }',
            f"flows.0.params={{ {tcp}, {rto} }}",
            f"flows.1.params={{ {tcp}, {rto} }}",
        ],
    )
    t = {i: (f["packets_sent"], f["timeouts"]) for i, f in enumerate(summary["flows"])}
    for i in (0, 1):
        assert t[i][0] == pytest.approx(n[i][0], rel=0.02), (n, t)
        assert abs(t[i][1] - n[i][1]) <= max(5, 0.1 * n[i][1]), (n, t)
    assert t[1][0] / t[0][0] == pytest.approx(n[1][0] / n[0][0], abs=0.02), (n, t)
