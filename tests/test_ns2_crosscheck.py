"""tfcc's simulator against ns-2.35, run live on the same dumbbell (issue 4).

Tolerances are the issue's: link utilisation within 2 %, aggregate throughput within 3 %,
drop/loss counts within 15 %, Jain's index within 0.05. They are not to be widened to pass:
where the two disagree, the reason belongs in bench/ns2/README.md and the case stays failing.
"""

from __future__ import annotations

import pytest

from bench_module import bench_module
from tfcc.ns2 import have_ns2

compare = bench_module("compare.py", "bench_compare")

pytestmark = pytest.mark.skipif(not have_ns2(), reason="ns-2 missing: make ns2")

Case = compare.Case

CASES = [
    Case("1 flow, 2 Mb/s, 10 ms, limit 20", 1, 2e6, 0.010, 20, 60.0),
    Case("4 flows, 10 Mb/s, 30 ms, limit 50", 4, 10e6, 0.030, 50, 60.0),
    Case("16 flows, 15 Mb/s, 50 ms, limit 100", 16, 15e6, 0.050, 100, 60.0),
    Case("8 flows, 15 Mb/s, 20 ms, limit 100", 8, 15e6, 0.020, 100, 60.0),
    Case("2 flows, 5 Mb/s, 20 ms, limit 100, 1 % loss", 2, 5e6, 0.020, 100, 60.0, loss=0.01),
]


@pytest.fixture(scope="module", params=CASES, ids=[c.name for c in CASES])
def result(request: pytest.FixtureRequest) -> dict:
    return compare.crosscheck(request.param)


def test_utilisation_within_2_percent(result: dict) -> None:
    n, t = result["ns2"]["utilization"], result["tfcc"]["utilization"]
    assert t == pytest.approx(n, rel=0.02), result


def test_aggregate_throughput_within_3_percent(result: dict) -> None:
    n, t = result["ns2"]["throughput_bps"], result["tfcc"]["throughput_bps"]
    assert t == pytest.approx(n, rel=0.03), result


def test_drops_within_15_percent(result: dict) -> None:
    n, t = result["ns2"]["drops"], result["tfcc"]["drops"]
    if n == 0:
        assert t <= 5, result
    else:
        assert t == pytest.approx(n, rel=0.15), result


def test_jain_within_0_05(result: dict) -> None:
    n, t = result["ns2"]["jain"], result["tfcc"]["jain"]
    assert t == pytest.approx(n, abs=0.05), result
