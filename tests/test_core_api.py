"""The equations and the loss history from Python, against the theses' numbers (spec 002, 004)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfcc


def rfc5348_rate(s: float, r: float, p: float, b: float = 1.0) -> float:
    """RFC 5348 §3.1 written out independently of the Rust code, t_RTO = 4R."""
    t_rto = 4 * r
    return s / (
        r * math.sqrt(2 * b * p / 3) + t_rto * (3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p)
    )


@pytest.mark.parametrize(("p", "w"), [(0.01, 11.2), (0.05, 3.7), (0.1, 1.8)])
def test_window_matches_002(p: float, w: float) -> None:
    assert tfcc.window(p) == pytest.approx(w, abs=0.05)


@pytest.mark.parametrize("s", [100, 576, 1000, 1460])
@pytest.mark.parametrize("r", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("p", [1e-5, 1e-3, 0.01, 0.1, 0.5])
def test_padhye_rate_is_rfc5348s_formula(s: int, r: float, p: float) -> None:
    assert tfcc.padhye_rate(s, r, p) == pytest.approx(rfc5348_rate(s, r, p), rel=1e-9)


def test_b_is_configurable() -> None:
    assert tfcc.padhye_rate(1000, 0.1, 0.01, b=2) == pytest.approx(
        rfc5348_rate(1000, 0.1, 0.01, b=2), rel=1e-9
    )


def test_simple_model() -> None:
    # s·sqrt(3/2)/(R·sqrt(p)): 1000 B, 100 ms, 1 % gives 12.247 packets per RTT.
    assert tfcc.simple_rate(1000, 0.1, 0.01) == pytest.approx(
        1000 * math.sqrt(1.5) / (0.1 * 0.1), rel=1e-12
    )


@settings(max_examples=300, deadline=None)
@given(p=st.floats(min_value=1e-6, max_value=0.5))
def test_inverses_recover_p(p: float) -> None:
    assert tfcc.p_from_window(tfcc.window(p)) == pytest.approx(p, rel=1e-6)
    x = tfcc.padhye_rate(1000, 0.1, p)
    assert tfcc.p_from_rate(1000, 0.1, x) == pytest.approx(p, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    p1=st.floats(min_value=1e-6, max_value=1.0),
    p2=st.floats(min_value=1e-6, max_value=1.0),
    r1=st.floats(min_value=1e-4, max_value=10.0),
    r2=st.floats(min_value=1e-4, max_value=10.0),
)
def test_rate_is_monotone_in_p_and_r(p1: float, p2: float, r1: float, r2: float) -> None:
    lo_p, hi_p = sorted((p1, p2))
    lo_r, hi_r = sorted((r1, r2))
    assert tfcc.padhye_rate(1000, lo_r, lo_p) >= tfcc.padhye_rate(1000, lo_r, hi_p)
    assert tfcc.padhye_rate(1000, lo_r, lo_p) >= tfcc.padhye_rate(1000, hi_r, lo_p)
    assert tfcc.window(lo_p) >= tfcc.window(hi_p)


@pytest.mark.parametrize(("every", "ali"), [(100, 100.0), (20, 20.0), (10, 10.0)])
def test_periodic_loss_gives_the_period(every: int, ali: float) -> None:
    """002 App. A: 1 %, 5 %, 10 % periodic loss give ALI 100, 20, 10 and p = 1/ALI."""
    h = tfcc.LossHistory(8)
    for i in range(50 * every):
        h.packet(lost=i % every == 0)
    assert h.ali == pytest.approx(ali)
    assert h.p == pytest.approx(1 / ali)


def test_back_to_back_losses_in_one_event_give_100() -> None:
    h = tfcc.LossHistory(8)
    for i in range(5000):
        k = i % 100
        h.packet(lost=k in (0, 1), same_event=k == 1)
    assert h.ali == pytest.approx(100.0)


def test_alternate_loss_gives_2() -> None:
    h = tfcc.LossHistory(8)
    for i in range(1000):
        h.packet(lost=i % 2 == 0)
    assert h.ali == pytest.approx(2.0)


def test_the_worked_check_of_004_sec_3_4_3() -> None:
    """hist = [100]*8: cur = 50 keeps ALI 100 (INC); cur = 150 gives (150 + 500)/6 (DEC)."""
    h = tfcc.LossHistory(8, discounting="off")
    h.loss_event()
    for _ in range(8):
        h.packets(99)
        h.loss_event()
    assert h.intervals == [100.0] * 8
    h.packets(49)
    assert h.ali == pytest.approx(100.0)
    h.packets(100)
    assert h.open_interval == 150
    assert h.ali == pytest.approx(650 / 6)
    assert h.p == pytest.approx(0.00923, abs=1e-5)


def test_weights() -> None:
    assert tfcc.LossHistory(8).weights == pytest.approx([1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2])
    w16 = tfcc.LossHistory(preset="ttfwc-smooth").weights
    assert len(w16) == 16
    assert sum(w16) == pytest.approx(7.503, abs=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "loss history size n"),
        ({"preset": "nope"}, "preset must be one of"),
        ({"weights": [1.0, 2.0]}, "expected 8, got 2"),
        ({"weights": "heavy"}, "weights must be"),
        ({"discounting": "sometimes"}, "discounting must be"),
        ({"discount_threshold": 0.5}, "discount_threshold"),
        ({"discount_floor": 0.3}, "discount_floor needs"),
    ],
)
def test_bad_configuration_raises_value_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tfcc.LossHistory(**kwargs)


def test_bad_equation_configuration_raises_value_error() -> None:
    with pytest.raises(ValueError, match="model"):
        tfcc.Equation("cubic")
    with pytest.raises(ValueError):
        tfcc.Equation(b=-1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=500), min_size=2, max_size=40))
def test_ali_is_positive_and_bounded_by_the_longest_interval(gaps: list[int]) -> None:
    h = tfcc.LossHistory(8, discounting="off")
    h.loss_event()
    for g in gaps:
        h.packets(g - 1)
        h.loss_event()
    assert h.ali is not None
    longest = max(max(h.intervals), h.open_interval)
    assert 0 < h.ali <= longest + 1e-9


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=500), min_size=1, max_size=20),
    st.integers(min_value=0, max_value=2000),
)
def test_the_current_interval_rule_never_lowers_the_ali(gaps: list[int], extra: int) -> None:
    ruled = tfcc.LossHistory(8, discounting="off")
    closed = tfcc.LossHistory(8, discounting="off", current_interval="never")
    for h in (ruled, closed):
        h.loss_event()
        for g in gaps:
            h.packets(g - 1)
            h.loss_event()
        h.packets(extra)
    assert ruled.ali >= closed.ali - 1e-9


def test_demo_prints_the_table_and_the_worked_example() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "demo"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert "11.23" in r.stdout  # W(0.01)
    assert "108.33" in r.stdout  # the DEC-mode worked check


def test_submodules_are_attributes_after_a_plain_import() -> None:
    # The README's "from Python, `tfcc.store.query(DIR, sql)`" after `import tfcc` raised
    # AttributeError: module 'tfcc' has no attribute 'store'
    code = (
        "import tfcc\n"
        "assert callable(tfcc.store.query) and callable(tfcc.sweep.run)\n"
        "assert callable(tfcc.report.write)\n"
        "try:\n"
        "    tfcc.no_such_module\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "module 'tfcc' has no attribute 'no_such_module'"
