"""The 95 % confidence interval of a mean over seeds: Student's t with ``n − 1`` degrees of
freedom, ``mean ± t(0.975, n − 1)·s/√n`` (``s`` the sample standard deviation).

One implementation for the two places that show one: ``tfcc report`` (per grid point of a
sweep) and ``tfcc reproduce`` (per claim, to say whether its seeds settle the verdict). scipy is
not a dependency, so the quantiles are a table.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

#: ``t(0.975, df)`` for ``df`` = 1..30, to the three decimals of the printed tables (e.g. the
#: NIST/SEMATECH e-Handbook of Statistical Methods, Sec. 1.3.6.7.2, "Critical values of the
#: Student's t distribution"); ``tests/test_confidence.py`` checks each against a numerical
#: integration of the t density. Beyond 30 the normal quantile 1.96 stands in: it is about 4 %
#: narrower than t's there (t(0.975, 31) = 2.040), and no sweep or claim runs 32 seeds.
T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip

#: The normal distribution's 0.975 quantile, used beyond the table.
Z975 = 1.96


def t975(df: int) -> float:
    """``t(0.975, df)``: the table up to 30 degrees of freedom, the normal value beyond."""
    if df < 1:
        raise ValueError(f"t(0.975, {df}): needs at least one degree of freedom")
    return T975[df - 1] if df <= len(T975) else Z975


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % confidence interval (Student's t; 0 for one value:
    one seed has no spread to estimate, and the callers show no interval then)."""
    n = len(values)
    m = statistics.fmean(values)
    if n < 2:
        return m, 0.0
    return m, t975(n - 1) * statistics.stdev(values) / math.sqrt(n)
