//! Python classes `RateSender` and `RateReceiver`: tfcc-core's receiver-driven rate schemes of
//! thesis 003 (WARC, TEAR, TFRCP) for an application that owns its UDP socket and clock.
//!
//! The same state machines the simulator and the testbed run: the receiver emulates the
//! congestion control once per RTT and reports a rate in packets per RTT, the sender paces at
//! it. The two halves are built from one flat `params` table by
//! `tfcc_sim::scenario::protocols::rate_endpoints`, as a scenario's flow is, so a key means the
//! same here as in a scenario file. Packets cross as bytes in the wire form of
//! `tfcc_core::warc::wire` (a 36-byte data header, a 28-byte report, each naming its scheme, as
//! `tfcc send`/`recv --protocol warc|tear|tfrcp` write them, so either end may be one of those);
//! times are integer nanoseconds on any monotonic clock, clamped so they never go backwards
//! (`endpoint.rs`).

use crate::endpoint::{decode_packet, not_one_of, stats_dict, Clocked, NowNs, PacketSize, StatKey};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tfcc_core::endpoint::Receiver;
use tfcc_core::warc::wire::{RateScheme, DATA_LEN, FEEDBACK_LEN};
use tfcc_core::warc::{AnyRateEstimator, RateSender, RateSenderConfig, RoundReceiver};
use tfcc_core::{Header, Packet};
use tfcc_net::wire::{Direction, Protocol};
use tfcc_sim::scenario::protocols::rate_endpoints;

/// A `params` dict as the TOML table a scenario's `params` is, through JSON: numbers, strings
/// (durations such as `"200ms"`), booleans and nested dicts, as a scenario file writes them.
fn params_table(py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> PyResult<toml::Table> {
    let Some(params) = params else {
        return Ok(toml::Table::new());
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    let json: String = py
        .import("json")?
        .call_method("dumps", (params,), Some(&kwargs))
        .and_then(|s| s.extract())
        .map_err(|e| PyValueError::new_err(format!("params: not a table of settings: {e}")))?;
    serde_json::from_str(&json).map_err(|e| {
        // The position is in the JSON text made above, which the caller never saw.
        let e = e.to_string();
        let e = e.split(" at line ").next().unwrap_or(&e);
        PyValueError::new_err(format!("params: not a table of settings: {e}"))
    })
}

/// Both halves of `scheme` from `params`, `packet_size` (datagram bytes, header included)
/// overriding `params.packet_size`, and reports of [`FEEDBACK_LEN`] bytes.
fn endpoints(
    py: Python<'_>,
    scheme: &str,
    packet_size: Option<PacketSize>,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<(RateSenderConfig, AnyRateEstimator)> {
    if RateScheme::from_name(scheme).is_none() {
        let names: Vec<&str> = RateScheme::ALL.iter().map(|s| s.name()).collect();
        return Err(not_one_of("scheme", &names, scheme));
    }
    let mut table = params_table(py, params)?;
    if let Some(PacketSize(s)) = packet_size {
        if table.contains_key("packet_size") {
            return Err(PyValueError::new_err(
                "packet_size is given twice, as an argument and in params",
            ));
        }
        table.insert("packet_size".into(), toml::Value::Integer(i64::from(s)));
    }
    // A report here is exactly its header; a scenario's 40 B is a TCP ACK on the wire.
    table
        .entry("feedback_size")
        .or_insert(toml::Value::Integer(FEEDBACK_LEN as i64));
    rate_endpoints(scheme, &table).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The keys of both classes' `stats()`: each end fills its own, the rest stay `None` or 0.
const STATS: &[StatKey] = &[
    StatKey::Rate,
    StatKey::RateBps,
    StatKey::Window,
    StatKey::P,
    StatKey::Rtt,
    StatKey::Rto,
    StatKey::PacketsSent,
    StatKey::BytesSent,
    StatKey::LossEvents,
    StatKey::PacketsJudged,
    StatKey::Timeouts,
    StatKey::Mode,
];

/// The paced sender of WARC, TEAR and TFRCP (003 Sec. 3.2.1).
#[pyclass(module = "tfcc._core", name = "RateSender")]
pub struct PyRateSender {
    ep: Clocked<RateSender>,
    scheme: RateScheme,
}

#[pymethods]
impl PyRateSender {
    #[new]
    #[pyo3(signature = (*, scheme = "warc", packet_size = None, params = None))]
    fn new(
        py: Python<'_>,
        scheme: &str,
        packet_size: Option<PacketSize>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (cfg, est) = endpoints(py, scheme, packet_size, params)?;
        Ok(PyRateSender {
            ep: Clocked::new(RateSender::new(cfg)),
            scheme: est.scheme(),
        })
    }

    /// The data header of the packet due at `now_ns`, or `None`. Send it with the payload
    /// appended, `packet_size` bytes in all.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        let Header::WarcData(h) = pkt.header else {
            return None;
        };
        let mut buf = [0u8; DATA_LEN];
        h.encode_as(self.scheme, &mut buf)?;
        Some(PyBytes::new(py, &buf))
    }

    /// A datagram from the receiver arrived at `now_ns`. Returns whether it was a report of
    /// this scheme; anything else is ignored.
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> bool {
        let report = decode_packet(Protocol::Rate(self.scheme), Direction::Feedback, datagram).ok();
        self.ep.on_datagram(now_ns, report)
    }

    /// Call when the clock reaches `next_timeout()` (early or twice is harmless).
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// The next send time or no-feedback timer, in nanoseconds.
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// Datagram bytes of every data packet, header included.
    #[getter]
    fn packet_size(&self) -> u32 {
        self.ep.inner.config().packet_size
    }

    /// The receiver's latest rate in packets per RTT (halved by each no-feedback expiry);
    /// `None` before the first report.
    #[getter]
    fn rate_packets_per_rtt(&self) -> Option<f64> {
        self.ep.inner.rate_packets_per_rtt()
    }

    /// `rate` (bytes/s: `packet_size` times the reported packets per SRTT) and `rate_bps`,
    /// `window` (the reported packets per RTT), `rtt`, `rto` (s), `packets_sent`,
    /// `bytes_sent`, `timeouts` (no-feedback expiries), `mode` (`"initial"` before the first
    /// report, then `"rate"`); the rest is the receiver's.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.ep.stats(), STATS)
    }
}

/// The receiver of WARC, TEAR or TFRCP: detects losses, runs the scheme once per RTT and writes
/// the reports.
#[pyclass(module = "tfcc._core", name = "RateReceiver")]
pub struct PyRateReceiver {
    ep: Clocked<RoundReceiver<AnyRateEstimator>>,
}

#[pymethods]
impl PyRateReceiver {
    #[new]
    #[pyo3(signature = (*, scheme = "warc", packet_size = None, params = None))]
    fn new(
        py: Python<'_>,
        scheme: &str,
        packet_size: Option<PacketSize>,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let (cfg, est) = endpoints(py, scheme, packet_size, params)?;
        Ok(PyRateReceiver {
            ep: Clocked::new(RoundReceiver::for_sender(est, &cfg)),
        })
    }

    /// A datagram from the sender arrived at `now_ns`. Returns the payload's offset, or `None`
    /// if it was not a data packet (ignored).
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> Option<usize> {
        let scheme = self.ep.inner.estimator().scheme();
        let data = decode_packet(Protocol::Rate(scheme), Direction::Data, datagram)
            .ok()
            .map(|pkt| Packet {
                // The core counts a packet's size as delivered: the payload's here.
                size: pkt.size.saturating_sub(DATA_LEN as u32),
                ..pkt
            });
        self.ep.on_datagram(now_ns, data).then_some(DATA_LEN)
    }

    /// The report due at `now_ns` as bytes to send back, or `None`.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        let Header::WarcFeedback(f) = pkt.header else {
            return None;
        };
        let mut buf = [0u8; FEEDBACK_LEN];
        f.encode_as(self.ep.inner.estimator().scheme(), &mut buf)?;
        Some(PyBytes::new(py, &buf))
    }

    /// Call when the clock reaches `next_timeout()` (early or twice is harmless).
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// The end of the current round, in nanoseconds, if one is running.
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// The scheme's name.
    #[getter]
    fn scheme(&self) -> &'static str {
        self.ep.inner.estimator().scheme().name()
    }

    /// Payload bytes received (headers excluded).
    #[getter]
    fn delivered_bytes(&self) -> u64 {
        self.ep.inner.delivered_bytes()
    }

    /// `window` (the emulated window or the scheme's rate in packets per RTT), `p` (the
    /// measured loss ratio), `rtt` (the sender's SRTT as carried, s), `loss_events`,
    /// `packets_judged`, `timeouts` (WARC's fluid-based timeouts), `mode`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.ep.stats(), STATS)
    }
}
