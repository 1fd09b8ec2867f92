"""The t table behind every 95 % interval (``tfcc report``'s and ``tfcc reproduce``'s)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tfcc import confidence


def _t_cdf(x: float, df: int) -> float:
    """P(T ≤ x) for x ≥ 0: 1/2 plus Simpson's rule over the t density on [0, x]."""
    n = 20_000  # even
    grid = np.linspace(0.0, x, n + 1)
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    f = np.exp(log_c) * (1 + grid**2 / df) ** (-(df + 1) / 2)
    h = x / n
    return 0.5 + h / 3 * float(f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())


def test_the_integration_is_exact_enough_to_check_the_table() -> None:
    # df 1 is Cauchy: P(T ≤ x) = 1/2 + atan(x)/π
    assert _t_cdf(12.706, 1) == pytest.approx(0.5 + math.atan(12.706) / math.pi, abs=1e-12)


@pytest.mark.parametrize("df", range(1, 31))
def test_each_tabled_quantile_is_t_0975_to_three_decimals(df: int) -> None:
    # the exact quantile lies within half a unit of the table's last decimal
    t = confidence.t975(df)
    assert _t_cdf(t - 0.0005, df) < 0.975 < _t_cdf(t + 0.0005, df)


def test_beyond_the_table_the_normal_quantile_stands_in() -> None:
    assert confidence.t975(31) == confidence.t975(1000) == 1.96
    with pytest.raises(ValueError, match="degree of freedom"):
        confidence.t975(0)


def test_the_interval_of_three_seeds_worked_by_hand() -> None:
    # tfrc's e11-halving-not-restored-earlier as its page rounds its seeds: mean 0.792,
    # s = √(0.733506 / 2) = 0.60560, t(0.975, 2) = 4.303, half-width 4.303 · s / √3 = 1.5045
    m, half = confidence.mean_ci([0.551, 0.344, 1.481])
    assert m == pytest.approx(0.792)
    assert half == pytest.approx(4.303 * math.sqrt(0.733506 / 2) / math.sqrt(3))
    assert half == pytest.approx(1.5045, abs=1e-4)
    assert confidence.mean_ci([5.0]) == (5.0, 0.0)
    assert confidence.mean_ci([2.0, 2.0, 2.0]) == (2.0, 0.0)
