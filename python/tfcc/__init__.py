"""tfcc: TCP-friendly congestion control for real-time media.

The protocols, the equations and the simulator are Rust (``tfcc._core``); this package adds the
command line, sweeps, analysis and plots on top.

The throughput equations (thesis 004 Sec. 2.3, RFC 5348 §3.1) work in bytes per second, seconds
and packets::

    >>> import tfcc
    >>> round(tfcc.window(0.01), 1)           # TFWC's W = 1/f(p), 002 Eq. 3.4
    11.2
    >>> round(tfcc.p_from_window(tfcc.window(0.05)), 6)
    0.05
"""

from tfcc._core import (
    Equation,
    LossHistory,
    OutputError,
    ScenarioError,
    __version__,
    check_scenario,
    run_scenario,
)

_PFTK = Equation("pftk")
_SIMPLE = Equation("simple")

__all__ = [
    "Equation",
    "LossHistory",
    "OutputError",
    "ScenarioError",
    "__version__",
    "check_scenario",
    "p_from_rate",
    "p_from_window",
    "padhye_rate",
    "run_scenario",
    "simple_rate",
    "window",
]


def padhye_rate(s: float, rtt: float, p: float, *, b: float = 1.0) -> float:
    """Padhye (PFTK) rate in bytes/s, RFC 5348 form: ``t_RTO = 4R``, ``b`` packets per ACK."""
    eq = _PFTK if b == 1.0 else Equation("pftk", b=b)
    return eq.rate(s, rtt, p)


def simple_rate(s: float, rtt: float, p: float) -> float:
    """The simple TCP model ``s·sqrt(3/2)/(R·sqrt(p))`` in bytes/s (004 Eq. 2.6)."""
    return _SIMPLE.rate(s, rtt, p)


def window(p: float) -> float:
    """TFWC's window ``W = 1/f(p)`` in packets (002 Eq. 3.4; Padhye with ``t_RTO = 4R``)."""
    return _PFTK.window(p)


def p_from_rate(s: float, rtt: float, x: float) -> float:
    """The loss event rate at which the Padhye rate is ``x`` bytes/s (inverse of padhye_rate)."""
    return _PFTK.loss_for_rate(s, rtt, x)


def p_from_window(w: float) -> float:
    """The loss event rate at which the Padhye window is ``w`` packets (inverse of window)."""
    return _PFTK.loss_for_window(w)
