//! Python classes `TfrcSender` and `TfrcReceiver`: tfcc-core's TFRC endpoints for an application
//! that owns its UDP socket and clock.
//!
//! The same state machines the simulator and `tfcc send`/`recv` run, not a second
//! implementation. Packets cross as bytes in the wire form of `tfcc_core::tfrc::wire` (what
//! `tfcc send`/`recv` put on the network), times are integer nanoseconds on any monotonic clock
//! the application chooses (`time.monotonic_ns()`), so the Python side only moves bytes.

use crate::endpoint::{
    decode_packet, fits_udp, not_one_of, stats_dict, Clocked, NowNs, PacketSize, StatKey,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tfcc_core::endpoint::{Receiver, Sender};
use tfcc_core::tfrc::wire::{DATA_LEN, FEEDBACK_LEN};
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver as CoreReceiver, TfrcSender as CoreSender};
use tfcc_core::Header;
use tfcc_net::wire::{Direction, Protocol};

/// The configuration of a preset name, with `packet_size` the payload of a full datagram: the
/// 44-byte data header rides on top (`header_size`, as `tfcc send --source video` sends), so
/// that `X`, `X_recv`, the equation's `s` (RFC 5348 §3.1: "excluding IP and transport protocol
/// headers"), `offer` and `delivered_bytes` all count the application's bytes, and a frame
/// offered is carried whole. (Until 2026-11-28 a datagram here was `packet_size` bytes with
/// the header inside, so an application-limited sender carried 44 bytes less of every offered
/// packet's worth, and `delivered_bytes` counted the headers its doc said it left out.)
fn config(preset: &str, packet_size: Option<u32>) -> PyResult<TfrcConfig> {
    let mut cfg = TfrcConfig::preset(preset)
        .ok_or_else(|| not_one_of("preset", &["thesis", "ns2", "rfc5348"], preset))?;
    if let Some(s) = packet_size {
        cfg.packet_size = s;
    }
    cfg.header_size = DATA_LEN as u32;
    fits_udp(cfg.packet_size, cfg.header_size)?;
    cfg.validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cfg)
}

/// The keys of both classes' `stats()`. Rates carry their unit: `rate` in bytes/s (RFC 5348's
/// unit for `X` and `X_recv`, as `TfrcSender.rate` and `tfcc.padhye_rate`), `rate_bps` the
/// same in bits/s (the unit of `rate_bps` in timeseries.parquet).
const STATS: &[StatKey] = &[
    StatKey::Rate,
    StatKey::RateBps,
    StatKey::P,
    StatKey::Rtt,
    StatKey::PacketsSent,
    StatKey::LossEvents,
    StatKey::PacketsJudged,
    StatKey::Timeouts,
    StatKey::Mode,
];

/// TFRC sender (thesis 004, RFC 5348): tells the application when it may send and at what rate.
#[pyclass(module = "tfcc._core", name = "TfrcSender")]
pub struct PyTfrcSender {
    ep: Clocked<CoreSender>,
    /// Bytes of the datagram last polled (`packet_size`, or less for an offered buffer's tail).
    last_size: u32,
}

#[pymethods]
impl PyTfrcSender {
    #[new]
    #[pyo3(signature = (*, packet_size = None, preset = "thesis"))]
    fn new(packet_size: Option<PacketSize>, preset: &str) -> PyResult<Self> {
        let packet_size = packet_size.map(|p| p.0);
        Ok(PyTfrcSender {
            ep: Clocked::new(CoreSender::new(config(preset, packet_size)?)),
            last_size: 0,
        })
    }

    /// The data header (44 bytes) of the packet due at `now_ns`, or `None` if none is due (or
    /// the offered bytes are all sent). Send it with up to `packet_size` bytes of payload
    /// appended, `last_datagram_size` bytes in all.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        self.last_size = pkt.size;
        let Header::TfrcData(h) = pkt.header else {
            return None;
        };
        let mut buf = [0u8; DATA_LEN];
        h.encode(&mut buf)?;
        Some(PyBytes::new(py, &buf))
    }

    /// A datagram from the receiver arrived at `now_ns`. Returns whether it was a TFRC report;
    /// anything else is ignored.
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> bool {
        let report = decode_packet(Protocol::Tfrc, Direction::Feedback, datagram).ok();
        self.ep.on_datagram(now_ns, report)
    }

    /// Application-limited sending (RFC 5348 §4.3, §8.2): `None` (the default) is a bulk
    /// source; `nbytes` adds that many payload bytes (a frame, say) to the send buffer, each
    /// carried once after a header. Poll right after.
    #[pyo3(signature = (nbytes))]
    fn offer(&mut self, nbytes: Option<u64>) {
        self.ep.inner.offer(nbytes);
    }

    /// Bytes offered and not yet polled; `None` for a bulk source.
    #[getter]
    fn buffered(&self) -> Option<u64> {
        self.ep.inner.buffered()
    }

    /// Bytes of the datagram last returned by `poll_transmit`, header included: the payload
    /// it carries (`packet_size`, or less for an offered buffer's tail) plus 44.
    #[getter]
    fn last_datagram_size(&self) -> u32 {
        self.last_size
    }

    /// The socket refused the packet just polled (a full buffer): TFRC treats it as a loss.
    fn on_send_error(&mut self, now_ns: NowNs) {
        let now = self.ep.now(now_ns);
        self.ep.inner.on_send_error(now);
    }

    /// Call when the clock reaches `next_timeout()` (early or twice is harmless).
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// The next send time or protocol timer, in nanoseconds.
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// The allowed sending rate `X` in bytes/s (RFC 5348's unit).
    #[getter]
    fn rate(&self) -> f64 {
        self.ep.inner.rate()
    }

    /// The allowed sending rate `X` in bits/s: `8 · rate`.
    #[getter]
    fn rate_bps(&self) -> f64 {
        self.ep.inner.rate() * 8.0
    }

    /// `rate` (X, bytes/s), `rate_bps` (X, bits/s), `p`, `rtt` (s), `packets_sent`,
    /// `loss_events`, `packets_judged` (0: the receiver judges), `timeouts` and `mode`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.ep.stats(), STATS)
    }
}

/// TFRC receiver: detects losses, keeps the loss history and writes the reports.
#[pyclass(module = "tfcc._core", name = "TfrcReceiver")]
pub struct PyTfrcReceiver {
    ep: Clocked<CoreReceiver>,
}

#[pymethods]
impl PyTfrcReceiver {
    #[new]
    #[pyo3(signature = (*, packet_size = None, preset = "thesis"))]
    fn new(packet_size: Option<PacketSize>, preset: &str) -> PyResult<Self> {
        let packet_size = packet_size.map(|p| p.0);
        Ok(PyTfrcReceiver {
            ep: Clocked::new(CoreReceiver::new(config(preset, packet_size)?)),
        })
    }

    /// A datagram from the sender arrived at `now_ns`. Returns the offset of the payload, or
    /// `None` if it was not a TFRC data packet (ignored).
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> Option<usize> {
        let data = decode_packet(Protocol::Tfrc, Direction::Data, datagram).ok();
        self.ep.on_datagram(now_ns, data).then_some(DATA_LEN)
    }

    /// The report due at `now_ns` as bytes to send back, or `None`.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        let Header::TfrcFeedback(f) = pkt.header else {
            return None;
        };
        let mut buf = [0u8; FEEDBACK_LEN];
        f.encode(&mut buf)?;
        Some(PyBytes::new(py, &buf))
    }

    /// Call when the clock reaches `next_timeout()` (early or twice is harmless).
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// The report timer, in nanoseconds, if one is armed.
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// The loss event rate as reported (0 before the first loss).
    #[getter]
    fn p(&self) -> f64 {
        self.ep.inner.loss_event_rate()
    }

    /// Payload bytes received (headers excluded), each sequence number once.
    #[getter]
    fn delivered_bytes(&self) -> u64 {
        self.ep.inner.delivered_bytes()
    }

    /// `rate` (the receive rate `X_recv`, bytes/s), `rate_bps` (the same in bits/s), `p`, `rtt`
    /// (the sender's, s), `packets_sent`, `loss_events`, `packets_judged` (data packets the loss
    /// detector has judged, received or lost: `loss_events` are counted among them), `timeouts`
    /// and `mode`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict(py, &self.ep.stats(), STATS)
    }
}
