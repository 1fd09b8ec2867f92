//! What the Python endpoint classes (`tfrc.rs`, `tfwc.rs`, `rate.rs`) share: the application's
//! clock, a datagram as a packet, the wording of a bad name and the keys of `stats()`.
//!
//! Each class holds a [`Clocked`] core endpoint and forwards to it; `#[pymethods]` cannot be
//! generic, so the methods themselves stand once per class, but what they do (clamp the clock,
//! call the core, convert the time back to nanoseconds) is written here once.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tfcc_core::endpoint::Endpoint;
use tfcc_core::{Dur, Packet, Stats, Time};
use tfcc_net::wire::{self, Direction, Protocol, WireError, MAX_UDP_PAYLOAD};

/// The latest `now_ns` an endpoint takes: `i64::MAX` nanoseconds, 292 years, the range of
/// `time.monotonic_ns()`. The endpoints add their timers (an RTO, a no-feedback interval, a
/// packet gap) to `now` on the `u64` clock; `now_ns = 2**64 - 1` overflowed it, a Rust panic
/// that poisoned the sender for every later call.
pub(crate) const MAX_NOW_NS: u64 = i64::MAX as u64;

/// An application's `now_ns` argument, checked on the way in: a whole number of nanoseconds in
/// `0..=MAX_NOW_NS`, else `ValueError` naming the range.
#[derive(Clone, Copy)]
pub(crate) struct NowNs(pub(crate) u64);

impl<'py> FromPyObject<'py> for NowNs {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let v: i128 = ob.extract()?;
        match u64::try_from(v) {
            Ok(ns) if ns <= MAX_NOW_NS => Ok(NowNs(ns)),
            _ => Err(PyValueError::new_err(format!(
                "now_ns must be nanoseconds of a monotonic clock in [0, {MAX_NOW_NS}] (292 years), got {v}"
            ))),
        }
    }
}

/// A `packet_size` argument: whole bytes that fit the core's `u32`, else `ValueError` naming
/// the range (a negative or 2**32 was an `OverflowError` without the argument's name). Zero
/// passes here and is refused by the protocol's own check.
#[derive(Clone, Copy)]
pub(crate) struct PacketSize(pub(crate) u32);

/// `Ok` if a datagram of `payload` bytes after a `header`-byte data header fits a UDP payload
/// over IPv4, else the `ValueError` naming `packet_size` and its largest value: the TFRC and
/// TFWC classes carry their header on top of `packet_size`.
pub(crate) fn fits_udp(payload: u32, header: u32) -> PyResult<()> {
    let most = MAX_UDP_PAYLOAD - header;
    if payload > most {
        return Err(PyValueError::new_err(format!(
            "packet_size {payload}: with the {header}-byte header a datagram would be larger \
             than the largest UDP payload ({MAX_UDP_PAYLOAD} B); at most {most}"
        )));
    }
    Ok(())
}

impl<'py> FromPyObject<'py> for PacketSize {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let v: i128 = ob.extract()?;
        u32::try_from(v).map(PacketSize).map_err(|_| {
            PyValueError::new_err(format!(
                "packet_size must be whole bytes from 1 to {}, got {v}",
                u32::MAX
            ))
        })
    }
}

/// A `seed` argument of an endpoint (TFWC's jitter draws): 0 to 2^63 − 1, the range of
/// the same seed as a scenario's `params.seed` and of every seed
/// ([`tfcc_sim::scenario::MAX_SEED`]), else `ValueError` naming it (-1 was pyo3's
/// `OverflowError` "can't convert negative int to unsigned", with no name).
#[derive(Clone, Copy)]
pub(crate) struct Seed(pub(crate) u64);

impl<'py> FromPyObject<'py> for Seed {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let v: i128 = ob.extract()?;
        match u64::try_from(v) {
            Ok(s) if s <= tfcc_sim::scenario::MAX_SEED => Ok(Seed(s)),
            _ => Err(PyValueError::new_err(format!(
                "seed must be a whole number from 0 to {}, got {v}",
                tfcc_sim::scenario::MAX_SEED
            ))),
        }
    }
}

/// A core endpoint driven by the application's clock, integer nanoseconds on any monotonic
/// clock. Time moves forward only: a call with an earlier `now` than the last is taken at the
/// last.
pub(crate) struct Clocked<E> {
    pub(crate) inner: E,
    last: Time,
}

impl<E: Endpoint> Clocked<E> {
    pub(crate) fn new(inner: E) -> Self {
        Clocked {
            inner,
            last: Time::ZERO,
        }
    }

    /// `now_ns` as the endpoint's time, never before the last call's.
    pub(crate) fn now(&mut self, now_ns: NowNs) -> Time {
        self.last = self.last.max(Time(now_ns.0));
        self.last
    }

    /// A packet arrived at `now_ns`.
    pub(crate) fn on_packet(&mut self, now_ns: NowNs, pkt: &Packet) {
        let now = self.now(now_ns);
        self.inner.on_packet(now, pkt);
    }

    /// A datagram arrived at `now_ns`, `packet` if it decoded as one of the class's: the clock
    /// moves to `now_ns` either way (a socket on which anything may arrive still drives it).
    /// Returns whether it was one.
    pub(crate) fn on_datagram(&mut self, now_ns: NowNs, packet: Option<Packet>) -> bool {
        let now = self.now(now_ns);
        match packet {
            Some(pkt) => {
                self.inner.on_packet(now, &pkt);
                true
            }
            None => false,
        }
    }

    /// The clock reached `now_ns` (early or twice is harmless).
    pub(crate) fn on_timeout(&mut self, now_ns: NowNs) {
        let now = self.now(now_ns);
        self.inner.on_timeout(now);
    }

    /// The packet due at `now_ns`, if any.
    pub(crate) fn poll_transmit(&mut self, now_ns: NowNs) -> Option<Packet> {
        let now = self.now(now_ns);
        self.inner.poll_transmit(now)
    }

    /// The endpoint's next timer, in nanoseconds.
    pub(crate) fn next_timeout_ns(&self) -> Option<u64> {
        self.inner.next_timeout().map(|t| t.0)
    }

    pub(crate) fn stats(&self) -> Stats {
        self.inner.stats()
    }
}

/// The packet a datagram of `proto` travelling in `dir` is, or why the bytes are not one. The
/// header is read by tfcc-net's `wire::decode`, the transport's decoder, so a class accepts the
/// bytes `tfcc send`/`recv` accept and makes the same `Header` of them. The size is the whole
/// datagram, as the simulator counts a packet on the wire (saturating: a UDP datagram is far
/// below `u32::MAX`).
pub(crate) fn decode_packet(
    proto: Protocol,
    dir: Direction,
    datagram: &[u8],
) -> Result<Packet, WireError> {
    let (header, _) = wire::decode(proto, dir, datagram)?;
    Ok(Packet {
        size: u32::try_from(datagram.len()).unwrap_or(u32::MAX),
        header,
    })
}

/// The message of a name argument that is none of `names`, e.g. `preset must be "thesis",
/// "ns2" or "rfc5348", got "x"`: every class words it alike, whatever it chooses among.
pub(crate) fn not_one_of(what: &str, names: &[&str], got: &str) -> PyErr {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    let choices = match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    };
    PyValueError::new_err(format!("{what} must be {choices}, got {got:?}"))
}

/// A key of an endpoint class's `stats()` dict. Each class lists the keys its docstring
/// promises, in the dict's order, and [`stats_dict`] reads every key from [`Stats`] in one
/// way: a rate in bytes/s and bits/s, times in seconds, whichever class reports it.
#[derive(Clone, Copy)]
pub(crate) enum StatKey {
    /// `rate`: bytes/s, RFC 5348's unit for `X` and `X_recv`.
    Rate,
    /// `rate_bps`: the same in bits/s, the unit of DESIGN.md and of every file output.
    RateBps,
    /// `window` in whole packets (TFWC's window counts packets).
    WindowPackets,
    /// `window` as the core reports it (a rate scheme's packets per RTT are fractional).
    Window,
    P,
    Ali,
    /// `rtt` in seconds.
    Rtt,
    /// `rto` in seconds.
    Rto,
    PacketsSent,
    BytesSent,
    LossEvents,
    PacketsJudged,
    Timeouts,
    Mode,
}

/// The stats as a dict of `keys`, in their order.
pub(crate) fn stats_dict<'py>(
    py: Python<'py>,
    st: &Stats,
    keys: &[StatKey],
) -> PyResult<Bound<'py, PyDict>> {
    let secs = |d: Option<Dur>| d.map(|d| d.as_secs_f64());
    let d = PyDict::new(py);
    for key in keys {
        match key {
            StatKey::Rate => d.set_item("rate", st.rate)?,
            StatKey::RateBps => d.set_item("rate_bps", st.rate.map(|r| r * 8.0))?,
            StatKey::WindowPackets => d.set_item("window", st.cwnd.map(|w| w as u64))?,
            StatKey::Window => d.set_item("window", st.cwnd)?,
            StatKey::P => d.set_item("p", st.p)?,
            StatKey::Ali => d.set_item("ali", st.ali)?,
            StatKey::Rtt => d.set_item("rtt", secs(st.rtt))?,
            StatKey::Rto => d.set_item("rto", secs(st.rto))?,
            StatKey::PacketsSent => d.set_item("packets_sent", st.packets_sent)?,
            StatKey::BytesSent => d.set_item("bytes_sent", st.bytes_sent)?,
            StatKey::LossEvents => d.set_item("loss_events", st.loss_events)?,
            StatKey::PacketsJudged => d.set_item("packets_judged", st.packets_judged)?,
            StatKey::Timeouts => d.set_item("timeouts", st.timeouts)?,
            StatKey::Mode => d.set_item("mode", st.mode)?,
        }
    }
    Ok(d)
}
