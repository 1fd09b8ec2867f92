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

A scenario file (docs/scenarios.md) runs in memory, or to the directory ``tfcc run`` writes::

    >>> r = tfcc.run_scenario("scenarios/dumbbell-cbr.toml", ["duration=10s"], seed=2)
    >>> sorted(r)                  # summary: summary.json's content; series: column lists
    ['flow_series', 'link_series', 'summary']
    >>> info = tfcc.check_scenario("scenarios/dumbbell-cbr.toml")   # checks, runs nothing
    >>> import tfcc.run
    >>> s = tfcc.run.run("scenarios/dumbbell-cbr.toml", "out/x", overrides=["duration=10s"])

Paths may be ``str`` or ``pathlib.Path``; a bad file raises :class:`ScenarioError` (one
message naming the file and the key), an unusable output directory :class:`OutputError`.
Sweeps are :mod:`tfcc.sweep` (``tfcc sweep``), their results :func:`tfcc.store.query`
(SQL over the store, a polars DataFrame; docs/sweeps.md). The protocols' sans-IO endpoints for
an application's own sockets are :class:`TfrcSender`, :class:`TfrcReceiver`,
:class:`TfwcSender`, :class:`TfwcReceiver`, and :class:`RateSender` and :class:`RateReceiver`
(WARC, TEAR, TFRCP); :class:`Equation` and :class:`LossHistory` are
the throughput equations and the loss-interval history. :func:`decode_datagram` reads any tfcc
UDP payload's header (a capture's, a test's) with the transport's own Rust decoder.
"""

# No `typing` import at run time (it costs more than a small native run): the checker-only
# imports sit behind a constant that type checkers treat as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from tfcc._core import (
        Equation,
        LossHistory,
        OutputError,
        RateReceiver,
        RateSender,
        ScenarioError,
        TfrcReceiver,
        TfrcSender,
        TfwcReceiver,
        TfwcSender,
        __version__,
        check_scenario,
        decode_datagram,
        run_scenario,
    )

_EQUATIONS: dict = {}


def __getattr__(name: str) -> object:
    # The names of ``__all__`` not defined below are re-exported from the compiled core. They
    # are loaded on first use (PEP 562), so that ``tfcc run``, which hands over to a native
    # executable, does not load the extension first. Python calls this only for a name the
    # module does not have, so the functions defined here never reach it.
    if name in __all__:
        from tfcc import _core

        value = getattr(_core, name)
        globals()[name] = value
        return value
    # A submodule on first use, so that ``import tfcc`` then ``tfcc.store.query(DIR, sql)``
    # works as the README and docs/sweeps.md write it (it raised AttributeError unless
    # ``tfcc.store`` had been imported), without loading polars and duckdb for every import.
    # Private and dunder names (``__wrapped__``, probed by tools) are never looked for.
    if not name.startswith("_"):
        import importlib

        try:
            return importlib.import_module(f"tfcc.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"tfcc.{name}":
                raise  # a dependency of an existing submodule is missing: say that
    raise AttributeError(f"module 'tfcc' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the lazily loaded names too, so that help(tfcc) and completion list them
    return sorted(set(globals()) | set(__all__))


def _eq(kind: str) -> "Equation":
    if kind not in _EQUATIONS:
        from tfcc._core import Equation

        _EQUATIONS[kind] = Equation(kind)
    return _EQUATIONS[kind]


__all__ = [
    "Equation",
    "LossHistory",
    "OutputError",
    "RateReceiver",
    "RateSender",
    "ScenarioError",
    "TfrcReceiver",
    "TfrcSender",
    "TfwcReceiver",
    "TfwcSender",
    "__version__",
    "check_scenario",
    "decode_datagram",
    "p_from_rate",
    "p_from_window",
    "padhye_rate",
    "run_scenario",
    "simple_rate",
    "window",
]


def padhye_rate(s: float, rtt: float, p: float, *, b: float = 1.0) -> float:
    """Padhye (PFTK) rate in bytes/s, RFC 5348 form: ``t_RTO = 4R``, ``b`` packets per ACK."""
    if b == 1.0:
        eq = _eq("pftk")
    else:
        from tfcc._core import Equation

        eq = Equation("pftk", b=b)
    return eq.rate(s, rtt, p)


def simple_rate(s: float, rtt: float, p: float) -> float:
    """The simple TCP model ``s·sqrt(3/2)/(R·sqrt(p))`` in bytes/s (004 Eq. 2.6)."""
    return _eq("simple").rate(s, rtt, p)


def window(p: float) -> float:
    """TFWC's window ``W = 1/f(p)`` in packets (002 Eq. 3.4; Padhye with ``t_RTO = 4R``)."""
    return _eq("pftk").window(p)


def p_from_rate(s: float, rtt: float, x: float) -> float:
    """The loss event rate at which the Padhye rate is ``x`` bytes/s (inverse of padhye_rate)."""
    return _eq("pftk").loss_for_rate(s, rtt, x)


def p_from_window(w: float) -> float:
    """The loss event rate at which the Padhye window is ``w`` packets (inverse of window)."""
    return _eq("pftk").loss_for_window(w)
