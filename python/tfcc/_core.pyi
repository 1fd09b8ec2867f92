"""Type stubs for the Rust extension ``tfcc._core`` (see crates/tfcc-py)."""

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any

__version__: str

class Equation:
    """A TCP throughput model: ``"pftk"`` (Padhye, RFC 5348 form) or ``"simple"``.

    ``s``, ``rtt``, ``x`` and ``w`` must be finite and above 0, ``p`` finite and above 0 (above
    1 counts as 1); anything else raises ``ValueError`` naming the argument."""

    def __init__(
        self,
        model: str = "pftk",
        *,
        b: float = 1.0,
        rto_factor: float = 4.0,
        rto_floor: float = 0.0,
        c: float | None = None,
        timeout_term: str = "rfc5348",
    ) -> None: ...
    def rate(self, s: float, rtt: float, p: float) -> float:
        """Rate in bytes/s for packet size ``s`` (B), RTT ``rtt`` (s), loss event rate ``p``."""
    def window(self, p: float) -> float:
        """Window in packets per RTT, ``W = 1/f(p)``."""
    def loss_for_rate(self, s: float, rtt: float, x: float) -> float:
        """The loss event rate whose rate is ``x`` bytes/s."""
    def loss_for_window(self, w: float) -> float:
        """The loss event rate whose window is ``w`` packets."""

class TfrcSender:
    """TFRC sender (004, RFC 5348) for an application that owns its UDP socket and clock.

    The Rust state machine the simulator and ``tfcc send`` run. Times are integer nanoseconds of
    any monotonic clock (``time.monotonic_ns()``), from 0 to ``2**63 - 1`` (else ``ValueError``;
    an earlier time than the last call's is taken as the last); packets are bytes in ``tfcc
    send``'s wire form. ``packet_size`` is the payload of a full datagram, 1 to 65 463 bytes
    (RFC 5348's ``s``, headers excluded; 1460 in the thesis preset): the 44-byte data header
    rides on top, so ``rate``, ``offer`` and the receiver's ``delivered_bytes`` all count the
    application's bytes. Loop: send what ``poll_transmit(now)`` returns (the header; append up
    to ``packet_size`` bytes of payload) until it returns ``None``, hand every datagram from the
    receiver to ``on_datagram``, and call ``on_timeout`` when the clock reaches
    ``next_timeout()``. Poll only when a packet is ready to go: a polled header that is not sent
    counts as a loss at the receiver (report a refused send with ``on_send_error``).
    ``preset`` is ``"thesis"``, ``"ns2"`` or ``"rfc5348"`` (the RFC's rules for an
    application-limited sender, e.g. a codec).
    """

    def __init__(self, *, packet_size: int | None = None, preset: str = "thesis") -> None: ...
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The data header due at ``now_ns`` (44 bytes), or ``None``; the datagram is
        ``last_datagram_size`` bytes in all (the header and up to ``packet_size`` of payload)."""
    def offer(self, nbytes: int | None) -> None:
        """``None`` (the default state): a bulk source. ``nbytes``: add that many payload bytes
        (a frame, say) to the send buffer; ``poll_transmit`` returns nothing while it is empty,
        and each datagram carries ``packet_size`` of them or the buffer's rest after its
        header. Poll right after offering."""
    @property
    def buffered(self) -> int | None:
        """Offered bytes not yet polled; ``None`` for a bulk source."""
    @property
    def last_datagram_size(self) -> int:
        """Bytes of the datagram the last ``poll_transmit`` returned, header included (its
        payload plus 44)."""
    def on_datagram(self, now_ns: int, datagram: bytes) -> bool:
        """A report arrived; ``False`` (and ignored) if the bytes are not a TFRC report."""
    def on_send_error(self, now_ns: int) -> None: ...
    def on_timeout(self, now_ns: int) -> None: ...
    def next_timeout(self) -> int | None:
        """The next send time or protocol timer, in nanoseconds."""
    @property
    def rate(self) -> float:
        """The allowed sending rate ``X`` in bytes/s (RFC 5348's unit)."""
    @property
    def rate_bps(self) -> float:
        """The allowed sending rate ``X`` in bits/s (``8 * rate``)."""
    def stats(self) -> dict[str, object]:
        """Keys ``rate`` (``X`` in bytes/s), ``rate_bps`` (``X`` in bits/s), ``p``, ``rtt`` (s),
        ``packets_sent``, ``loss_events``, ``timeouts``, ``mode``."""

class TfrcReceiver:
    """TFRC receiver: loss events, the loss history and one report per RTT, as bytes."""

    def __init__(self, *, packet_size: int | None = None, preset: str = "thesis") -> None: ...
    def on_datagram(self, now_ns: int, datagram: bytes) -> int | None:
        """A data packet arrived: the payload's offset, or ``None`` (ignored) if not TFRC data."""
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The report due at ``now_ns`` (40 bytes) to send back, or ``None``."""
    def on_timeout(self, now_ns: int) -> None: ...
    def next_timeout(self) -> int | None: ...
    @property
    def p(self) -> float:
        """The loss event rate as reported (0 before the first loss)."""
    @property
    def delivered_bytes(self) -> int:
        """Payload bytes received (the 44-byte data header and duplicates excluded)."""
    def stats(self) -> dict[str, object]:
        """Keys ``rate`` (the receive rate ``X_recv`` in bytes/s of payload), ``rate_bps`` (the
        same in bits/s), ``p``, ``rtt`` (the sender's, s), ``packets_sent``, ``loss_events``,
        ``timeouts``, ``mode``."""

class TfwcSender:
    """TFWC sender (002) for an application that owns its UDP socket and clock.

    The Rust state machine the simulator and ``tfcc send --protocol tfwc`` run: Ack-clocked,
    window ``W = 1/f(p)`` (002 Eq. 3.4), timer-paced below ``rate_threshold`` packets (the
    hybrid mode, Sec. 3.3.2), no retransmissions. ``preset`` is ``"ns2"`` (Choi's ns-2.34 agent,
    the default, as in Rust and ``tfcc send``), ``"thesis"`` (002's text) or ``"vic"`` (the TFWC
    inside Vic of 002 Ch. 6, ``TfwcConfig::vic``); ``seed`` seeds the
    cwnd jitter's draws (Sec. 3.3.3). Times are integer nanoseconds of any monotonic clock; an
    earlier time than the last call's is taken as the last. ``packet_size`` (1000 when not
    given) is the payload of a full datagram, as for :class:`TfrcSender`: the 28-byte data
    header rides on top. Loop: send what ``poll_transmit(now)`` returns (the header; append up
    to ``packet_size`` bytes of payload, ``last_datagram_size`` in all) until it returns
    ``None``, hand every Ack Vector from the receiver to ``on_packet``,
    and call ``on_timeout`` when the clock reaches ``next_timeout()``. Poll only when a packet
    is ready to go: a polled header that is not sent is a loss at the receiver.
    """

    def __init__(
        self, *, packet_size: int | None = None, preset: str = "ns2", seed: int = 0
    ) -> None: ...
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The data header the window lets out at ``now_ns`` (28 bytes), or ``None``."""
    def offer(self, nbytes: int | None) -> None:
        """``None`` (the default state): a bulk source. ``nbytes``: add that many payload bytes
        (a frame, say) to the send buffer; ``poll_transmit`` returns nothing while it is empty,
        and each datagram carries ``packet_size`` of them or the buffer's rest after its
        header."""
    @property
    def buffered(self) -> int | None:
        """Offered bytes not yet polled (002 Sec. 6.2's ``get_sbuf_len()``); ``None`` for a
        bulk source."""
    @property
    def last_datagram_size(self) -> int:
        """Bytes of the datagram the last ``poll_transmit`` returned, header included (its
        payload plus 28)."""
    def on_packet(self, now_ns: int, data: bytes) -> None:
        """An Ack Vector arrived; raises ``ValueError`` saying why if ``data`` is not one."""
    def on_datagram(self, now_ns: int, datagram: bytes) -> bool:
        """As ``on_packet``, but ``False`` (and ignored) if the bytes are not an Ack Vector."""
    def on_timeout(self, now_ns: int) -> None: ...
    def next_timeout(self) -> int | None:
        """The window-mode timer or the rate-mode send time, in nanoseconds."""
    @property
    def window(self) -> int:
        """The window in packets, jitter included."""
    @property
    def window_exact(self) -> float:
        """``1/f(p)`` before rounding (the slow-start window before the first loss)."""
    def stats(self) -> dict[str, object]:
        """Keys ``window``, ``window_exact``, ``p``, ``ali`` (packets), ``rtt`` and ``rto`` (s),
        ``packets_sent``, ``bytes_sent`` (datagram bytes, the 28-byte headers included: the
        payload sent is ``bytes_sent - 28 * packets_sent``), ``loss_events``, ``timeouts``, ``mode``
        (``"slowstart"``, ``"window"`` or ``"rate"``); ``p``, ``ali``, ``rtt`` are ``None``
        until measured."""

class TfwcReceiver:
    """TFWC receiver: the Ack Vector, one ACK per data packet, as bytes (002 Sec. 3.2.3)."""

    def __init__(self, *, packet_size: int | None = None, preset: str = "ns2") -> None: ...
    def on_packet(self, now_ns: int, data: bytes) -> int:
        """A data packet arrived: the payload's offset (28); ``ValueError`` if not TFWC data."""
    def on_datagram(self, now_ns: int, datagram: bytes) -> int | None:
        """As ``on_packet``, but ``None`` (and ignored) if the bytes are not TFWC data."""
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The Ack Vector owed (20 bytes plus one per run) to send back, or ``None``."""
    def on_timeout(self, now_ns: int) -> None:
        """A TFWC receiver has no timer; kept so both ends run the same loop."""
    def next_timeout(self) -> int | None:
        """Always ``None``."""
    @property
    def delivered_bytes(self) -> int:
        """Payload bytes received, each sequence number once (the 28-byte data header and
        duplicates excluded)."""
    def stats(self) -> dict[str, object]:
        """The sender's keys (unmeasured at a receiver; ``mode`` is ``"receiver"``) and
        ``delivered_bytes``."""

class RateSender:
    """The paced sender of 003's receiver-driven rate schemes (WARC, TEAR, TFRCP).

    The Rust state machine the simulator and the testbed run: one packet every ``SRTT / R``,
    where ``R`` packets per RTT is the receiver's latest report (003 Sec. 3.2.1); the rate halves
    when reports stop for 4 SRTTs (RFC 5348's no-feedback timer). ``scheme`` and ``params`` are a
    scenario flow's ``protocol`` and ``params`` (one flat table: the sender takes its keys,
    ``packet_size``, ``feedback_size``, ``initial_interval``, ``nofeedback_rtts``,
    ``max_interval``, ``rtt``, and checks the scheme's); give both ends the same. ``packet_size``
    is the datagram's size, header included (default 1000). Loop as for :class:`TfrcSender`.
    """

    def __init__(
        self,
        *,
        scheme: str = "warc",
        packet_size: int | None = None,
        params: dict[str, object] | None = None,
    ) -> None: ...
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The data header due at ``now_ns`` (36 bytes; append the payload up to
        ``packet_size``), or ``None``."""
    def on_datagram(self, now_ns: int, datagram: bytes) -> bool:
        """A report arrived; ``False`` (and ignored) if the bytes are not one."""
    def on_timeout(self, now_ns: int) -> None: ...
    def next_timeout(self) -> int | None:
        """The next send time or no-feedback timer, in nanoseconds."""
    @property
    def packet_size(self) -> int: ...
    @property
    def rate_packets_per_rtt(self) -> float | None:
        """The reported rate; ``None`` before the first report."""
    def stats(self) -> dict[str, object]:
        """Keys ``rate`` (bytes/s), ``rate_bps``, ``window`` (packets per RTT), ``rtt``, ``rto``
        (s), ``packets_sent``, ``bytes_sent``, ``timeouts`` (no-feedback expiries), ``mode``;
        ``p``, ``loss_events`` and ``packets_judged`` are the receiver's."""

class RateReceiver:
    """The receiver of WARC (003 Ch. 3), TEAR or TFRCP: detects losses, runs the scheme once
    per RTT and writes the reports (28 bytes). ``scheme``, ``packet_size`` and ``params`` as for
    :class:`RateSender` (the receiver takes the scheme's keys, e.g. WARC's ``s``, ``k``, ``n``;
    an unknown key is a ``ValueError`` naming it)."""

    def __init__(
        self,
        *,
        scheme: str = "warc",
        packet_size: int | None = None,
        params: dict[str, object] | None = None,
    ) -> None: ...
    def on_datagram(self, now_ns: int, datagram: bytes) -> int | None:
        """A data packet arrived: the payload's offset (36); ``None`` (ignored) if not one."""
    def poll_transmit(self, now_ns: int) -> bytes | None:
        """The report owed, as bytes to send back, or ``None``."""
    def on_timeout(self, now_ns: int) -> None: ...
    def next_timeout(self) -> int | None:
        """The end of the current round (one RTT), in nanoseconds."""
    @property
    def scheme(self) -> str: ...
    @property
    def delivered_bytes(self) -> int:
        """Payload bytes received (the 36-byte header excluded)."""
    def stats(self) -> dict[str, object]:
        """Keys ``window`` (WARC's and TEAR's emulated window, TFRCP's rate, packets per RTT),
        ``p`` (the measured loss ratio), ``rtt`` (the sender's SRTT, s), ``loss_events``,
        ``packets_judged``, ``timeouts`` (WARC's fluid-based timeouts), ``mode``."""

class LossHistory:
    """The weighted average loss interval (004 Eq. 3.6, Sec. 3.4.3, Sec. 3.7)."""

    def __init__(
        self,
        n: int | None = None,
        *,
        preset: str = "tfrc",
        weights: str | Sequence[float] | None = None,
        current_interval: str | None = None,
        discounting: str | None = None,
        discount_floor: float | None = None,
        discount_threshold: float | None = None,
        partial: str | None = None,
        first_run: str | None = None,
    ) -> None: ...
    def packet(self, lost: bool = False, *, same_event: bool = False) -> None: ...
    def packets(self, count: int) -> None: ...
    def loss_event(self) -> None: ...
    def seed(self, interval: float) -> None: ...
    def reset(self) -> None: ...
    @property
    def ali(self) -> float | None: ...
    @property
    def p(self) -> float | None: ...
    @property
    def loss_events(self) -> int: ...
    @property
    def open_interval(self) -> int: ...
    @property
    def weights(self) -> list[float]: ...
    @property
    def intervals(self) -> list[float]: ...
    @property
    def discount_factor(self) -> float: ...

class ScenarioError(ValueError):
    """A scenario file that cannot run; the message names the file and the key."""

class OutputError(ValueError):
    """The output directory cannot be used or written; the message names it and says why."""

def check_scenario(
    path: PathLike[str] | str,
    overrides: Sequence[str] | None = None,
    backend: str = "sim",
) -> dict[str, Any]:
    """Parse, override (``key.path=value``) and check a scenario without running it.

    Returns ``scenario``, ``duration_s``, ``measure_from_s``, ``seed``, ``flows``, ``links``,
    ``reported_links`` (those the outputs report: all but the per-flow access links),
    ``events``, ``groups`` (``[(label, count), ...]``), ``trace`` (``None``, or with a
    ``[trace]`` its ``links`` by name, ``from_s`` and ``until_s``) and ``notes``. Raises
    :class:`ScenarioError`. ``backend="testbed"`` checks what ``tfcc run --backend testbed``
    refuses (no root needed) instead of the simulator's checks; its ``notes`` say what the
    testbed runs otherwise than the file says without refusing it (empty for ``"sim"``).
    """

def parse_toml(text: str) -> dict[str, Any]:
    """A TOML document as the scenario loader reads it (TOML 1.1: an inline table may span
    lines), as dicts, lists, str, int, float and bool; a date-time as its TOML text. Raises
    ``ValueError``: ``invalid TOML at line L, column C: why``. Read scenario, sweep and claim
    files with this, not ``tomllib`` (TOML 1.0), so Python and ``tfcc run`` accept the same."""

def run_scenario(
    path: PathLike[str] | str,
    overrides: Sequence[str] | None = None,
    seed: int | None = None,
    progress: Callable[[float, float], object] | None = None,
) -> dict[str, Any]:
    """Run a scenario in the simulator.

    ``seed`` replaces the file's seed; ``progress(now_s, end_s)`` is called about a hundred
    times a run (the GIL is released in between). Returns ``{"summary": dict, "flow_series":
    dict of lists, "link_series": dict of lists}``: the summary is ``summary.json``'s content
    (``metrics`` holds ``fairness_theta`` and ``jain_index``), the series are columnar, one row
    per flow (or reported link) per sampling interval; a run with a video flow adds
    ``"frame_series"``, the columns of ``frames.parquet``, one with a PTCP flow
    ``"ptcp_slots"``, the columns of ``ptcp_slots.parquet`` (one row per evaluation or control
    slot), and one with a ``[trace]`` in the scenario ``"trace"``, the packet trace's columns
    (one row per event, as ``trace.parquet``).
    Raises :class:`ScenarioError` before running on a bad file.
    """

def run_to_dir(
    path: str,
    out: PathLike[str] | str,
    overrides: Sequence[str] = (),
    seed: int | None = None,
    plots: bool = True,
    progress: Callable[[float, float], object] | None = None,
    font: PathLike[str] | str | None = None,
) -> dict[str, Any]:
    """Run a scenario and write ``summary.json``, ``timeseries.parquet``, ``queues.parquet``,
    ``frames.parquet`` (a run with a video flow), ``ptcp_slots.parquet`` (a run with a PTCP
    flow), ``trace.parquet`` (with a ``[trace]``) and
    (``plots``) the PNG charts into ``out``
    atomically, as ``tfcc run`` does; returns the summary. Raises :class:`ScenarioError` or
    :class:`OutputError` before anything runs."""

def check_writable(out: PathLike[str] | str) -> None:
    """Raise :class:`OutputError` if ``out`` cannot be created or replaced."""

def cli_run(argv: Sequence[str], font: str | None = None) -> int:
    """The ``tfcc run`` command with ``argv`` (the arguments after ``run``); returns the exit
    code. Ctrl-C raises KeyboardInterrupt after abandoning the run (nothing is written)."""

def cli_net(command: str, argv: Sequence[str]) -> int:
    """The ``tfcc send`` / ``tfcc recv`` commands (``command`` is ``"send"`` or ``"recv"``) with
    ``argv``: one UDP flow with a rate report; returns the exit code."""

def decode_datagram(payload: bytes) -> dict[str, Any]:
    """The tfcc header at the front of a UDP payload, read by the Rust decoder the transport
    uses (crates/tfcc-net/src/wire.rs): ``protocol`` (``raw``, ``tfrc``, ``tfwc``, ``warc``,
    ``tear``, ``tfrcp``), ``kind`` (the trace's name, e.g. ``tfrc-feedback``), ``header_len``
    and the header's fields by their Rust names, times in integer nanoseconds (a TFWC ACK:
    ``head``, ``bits``, ``echo``). Raises ValueError on anything else."""

def parse_quantity(text: str) -> tuple[str, float] | None:
    """``(kind, value)`` of a scenario quantity string in SI base units: ``("duration",
    seconds)``, ``("rate", bits/s)`` or ``("size", bytes)``; None if it is none of them."""

def fairness_theta(tcp: Sequence[float], other: Sequence[float]) -> float | None:
    """θ = T̄_tcp / (T̄_tcp + T̄_other) from per-flow goodputs; ``None`` when undefined."""

def plot_panels(
    path: str,
    panels: Sequence[Mapping[str, Any]],
    *,
    title: str,
    xlabel: str,
    width: int = 880,
    height: int = 440,
    font: str | None = None,
) -> None:
    """Draw line-chart panels (``{"ylabel": str, "lines": [(label, xs, ys), ...]}``), stacked,
    into one PNG of ``width`` by ``height`` pixels, wider (a legend beside each plot) or taller
    (below each, past 8 entries) where a legend inside a plot would hide its lines. ``font`` is a
    TrueType file for the text (none: no text, no legends). Raises ValueError on bad sizes or
    mismatched series, OSError when the file cannot be written."""

def warc_hr_false_positive(k: float, n: int) -> float:
    """003 Eqs. 3.10–3.11: History-Reset's false-positive probability per loss for (K, N) under
    i.i.d. exponential inter-loss times, ``F_Gamma(N,1)(N/K)``."""

def warc_equal_smoothness_aggressiveness(
    m: float, cv: float, w: float
) -> tuple[float, float, float]:
    """003 Fig. 3.5(b): RTTs that WARC, GAIMD and IIAD need to raise their window by ``m`` from a
    steady mean ``w`` when each is tuned to the same ``CV̄[w] = cv`` (Eq. 3.7)."""

def warc_span_of_1000_losses(w_lo: float, w_hi: float, rtt_lo: float, rtt_hi: float) -> float:
    """003 Sec. 3.4.4: mean seconds spanned by 1000 loss events, W and RTT uniform in the ranges."""
