//! Python classes `TfwcSender` and `TfwcReceiver`: tfcc-core's TFWC endpoints (thesis 002) for
//! an application that owns its UDP socket and clock.
//!
//! The same state machines the simulator and `tfcc send`/`recv --protocol tfwc` run, not a
//! second implementation. Packets cross as bytes in the wire form of `tfcc_core::tfwc::wire`
//! (a 28-byte data header with the sender's Ack of Ack; an ACK of 20 bytes plus one byte per
//! Ack Vector run), encoded as `tfcc send`/`recv` encode them; times are integer nanoseconds on
//! any monotonic clock the application chooses, clamped so that they never go backwards, as in
//! the TFRC classes (`tfrc.rs`).

use crate::endpoint::{
    decode_packet, fits_udp, not_one_of, stats_dict, Clocked, NowNs, PacketSize, Seed, StatKey,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tfcc_core::endpoint::{Receiver, Sender};
use tfcc_core::tfwc::wire::{encode_ack, encode_data, DataHeader, DATA_LEN};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver as CoreReceiver, TfwcSender as CoreSender};
use tfcc_core::{Header, Packet, Time};
use tfcc_net::wire::{Direction, Protocol};

/// The configuration of a preset name: `ns2` (or `default`) is `TfwcConfig::default()`, Choi's
/// ns-2.34 `Agent/TFWC` that ran 002's Ch. 3-4 simulations and what `tfcc send` runs; `thesis`
/// is `TfwcConfig::thesis()`, 002's text where it differs from that code (8 TFRC-weighted loss
/// intervals, Sec. 3.2.2; nearest rounding with a floor of 1, App. A.2.2; hybrid mode below 2
/// packets, Sec. 3.3.2, paced by footnote 6's interval as printed; the jitter rules of
/// Sec. 3.3.3; the doubling back-off of Sec. 3.2.5); `vic` is `TfwcConfig::vic()`, the Vic code
/// of 002 Ch. 6.
///
/// `packet_size` (the preset's when `None`: 1000 B in all three) is the payload of a datagram,
/// as in the TFRC classes: the 28-byte data header rides on top, so a datagram is
/// `packet_size + 28` bytes (the core's `packet_size`, with `header_size = 28`), `offer` and
/// `delivered_bytes` count the application's bytes, and an offered frame is carried whole.
fn config(preset: &str, packet_size: Option<u32>, seed: u64) -> PyResult<TfwcConfig> {
    let mut cfg = TfwcConfig::preset(preset)
        .ok_or_else(|| not_one_of("preset", &["ns2", "thesis", "vic"], preset))?;
    let payload = packet_size.unwrap_or(cfg.packet_size);
    let header = DATA_LEN as u32;
    if payload == 0 {
        return Err(PyValueError::new_err(
            "packet_size must be at least 1 byte of payload, got 0",
        ));
    }
    fits_udp(payload, header)?;
    cfg.packet_size = payload + header;
    cfg.seed = seed;
    cfg.header_size = header;
    cfg.validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cfg)
}

/// An Ack Vector from the receiver as the sender's packet, or why the bytes are not one.
fn ack_packet(datagram: &[u8]) -> Result<Packet, String> {
    decode_packet(Protocol::Tfwc, Direction::Feedback, datagram)
        .map_err(|e| format!("not a TFWC Ack Vector: {e}"))
}

/// A data packet from the sender as the receiver's packet, or why the bytes are not one.
fn data_packet(datagram: &[u8]) -> Result<Packet, String> {
    decode_packet(Protocol::Tfwc, Direction::Data, datagram)
        .map_err(|e| format!("not a TFWC data packet: {e}"))
}

/// The keys of both classes' `stats()`, before each class's own.
const STATS: &[StatKey] = &[
    StatKey::WindowPackets,
    StatKey::P,
    StatKey::Ali,
    StatKey::Rtt,
    StatKey::Rto,
    StatKey::PacketsSent,
    StatKey::BytesSent,
    StatKey::LossEvents,
    StatKey::Timeouts,
    StatKey::Mode,
];

/// TFWC sender (thesis 002): Ack-clocked, its window `W = 1/f(p)` (Eq. 3.4) from the loss
/// event rate it measures on the receiver's Ack Vectors.
#[pyclass(module = "tfcc._core", name = "TfwcSender")]
pub struct PyTfwcSender {
    ep: Clocked<CoreSender>,
    /// Bytes of the datagram last polled: the header and `packet_size` of payload, or less
    /// for an offered buffer's tail.
    last_size: u32,
}

#[pymethods]
impl PyTfwcSender {
    #[new]
    #[pyo3(signature = (*, packet_size = None, preset = "ns2", seed = Seed(0)))]
    fn new(packet_size: Option<PacketSize>, preset: &str, seed: Seed) -> PyResult<Self> {
        let packet_size = packet_size.map(|p| p.0);
        let seed = seed.0;
        Ok(PyTfwcSender {
            ep: Clocked::new(CoreSender::new(
                config(preset, packet_size, seed)?,
                Time::ZERO,
            )),
            last_size: 0,
        })
    }

    /// The data header (28 bytes) of the packet the window lets out at `now_ns`, or `None`.
    /// Send it with up to `packet_size` bytes of payload appended, `last_datagram_size` bytes
    /// in all.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        // The core sizes the packet: a full payload, or an offered buffer's tail.
        self.last_size = pkt.size;
        let Header::TfwcData { seq, sent_at, aoa } = pkt.header else {
            return None;
        };
        let mut buf = Vec::new();
        encode_data(&DataHeader { seq, sent_at, aoa }, &mut buf);
        Some(PyBytes::new(py, &buf))
    }

    /// Application-limited sending (002 Ch. 6: Vic's TFWC sends what the codec put in its
    /// buffer): `None` (the default) is a bulk source; `nbytes` adds that many payload bytes (a
    /// frame, say) to the send buffer, each carried once after a header. Poll right after.
    #[pyo3(signature = (nbytes))]
    fn offer(&mut self, nbytes: Option<u64>) {
        self.ep.inner.offer(nbytes);
    }

    /// Bytes offered and not yet polled (002 Sec. 6.2's `get_sbuf_len()`); `None` for a bulk
    /// source.
    #[getter]
    fn buffered(&self) -> Option<u64> {
        self.ep.inner.buffered()
    }

    /// Bytes of the datagram last returned by `poll_transmit`, header included: the payload
    /// it carries (`packet_size`, or less for an offered buffer's tail) plus 28.
    #[getter]
    fn last_datagram_size(&self) -> u32 {
        self.last_size
    }

    /// An Ack Vector from the receiver arrived at `now_ns`; bytes that are not one raise
    /// `ValueError` saying why.
    fn on_packet(&mut self, now_ns: NowNs, data: &[u8]) -> PyResult<()> {
        let pkt = ack_packet(data).map_err(PyValueError::new_err)?;
        self.ep.on_packet(now_ns, &pkt);
        Ok(())
    }

    /// As `on_packet`, but anything that is not an Ack Vector is ignored and `False` returned,
    /// as the TFRC classes do for a socket on which anything may arrive.
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> bool {
        self.ep.on_datagram(now_ns, ack_packet(datagram).ok())
    }

    /// Call when the clock reaches `next_timeout()` (early or twice is harmless).
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// The retransmission-style timer (window mode) or the next send time (rate mode), in
    /// nanoseconds.
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// The window in packets, jitter included (002 Sec. 3.2.4, 3.2.7).
    #[getter]
    fn window(&self) -> u64 {
        self.ep.inner.cwnd()
    }

    /// `1/f(p)` before rounding (002 Eq. 3.4), or the slow-start window.
    #[getter]
    fn window_exact(&self) -> f64 {
        self.ep.inner.window_exact()
    }

    /// Window, `1/f(p)`, `p`, ALI, RTT and RTO (s), counters and mode.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = stats_dict(py, &self.ep.stats(), STATS)?;
        d.set_item("window_exact", self.ep.inner.window_exact())?;
        Ok(d)
    }
}

/// TFWC receiver: keeps the Ack Vector, prunes it at the sender's Ack of Ack and answers every
/// data packet with it (002 Sec. 3.2.3).
#[pyclass(module = "tfcc._core", name = "TfwcReceiver")]
pub struct PyTfwcReceiver {
    ep: Clocked<CoreReceiver>,
}

#[pymethods]
impl PyTfwcReceiver {
    #[new]
    #[pyo3(signature = (*, packet_size = None, preset = "ns2"))]
    fn new(packet_size: Option<PacketSize>, preset: &str) -> PyResult<Self> {
        let packet_size = packet_size.map(|p| p.0);
        Ok(PyTfwcReceiver {
            ep: Clocked::new(CoreReceiver::new(&config(preset, packet_size, 0)?)),
        })
    }

    /// A data packet arrived at `now_ns`: returns the offset of the payload (28); bytes that are
    /// not one raise `ValueError` saying why.
    fn on_packet(&mut self, now_ns: NowNs, data: &[u8]) -> PyResult<usize> {
        let pkt = data_packet(data).map_err(PyValueError::new_err)?;
        self.ep.on_packet(now_ns, &pkt);
        Ok(DATA_LEN)
    }

    /// As `on_packet`, but anything that is not TFWC data is ignored and `None` returned; the
    /// clock moves to `now_ns` either way, as in the other classes.
    fn on_datagram(&mut self, now_ns: NowNs, datagram: &[u8]) -> Option<usize> {
        self.ep
            .on_datagram(now_ns, data_packet(datagram).ok())
            .then_some(DATA_LEN)
    }

    /// The Ack Vector owed at `now_ns` as bytes to send back (one per data packet), or `None`.
    fn poll_transmit<'py>(
        &mut self,
        py: Python<'py>,
        now_ns: NowNs,
    ) -> Option<Bound<'py, PyBytes>> {
        let pkt = self.ep.poll_transmit(now_ns)?;
        let Header::TfwcAck { vector, echo } = pkt.header else {
            return None;
        };
        // The whole span the vector holds, as `tfcc recv` sends it: the vector is already
        // pruned at the Ack of Ack the data packets carried.
        let mut buf = Vec::new();
        encode_ack(&vector, echo, None, &mut buf);
        Some(PyBytes::new(py, &buf))
    }

    /// Nothing is timed at a TFWC receiver; kept so that both ends run the same loop.
    fn on_timeout(&mut self, now_ns: NowNs) {
        self.ep.on_timeout(now_ns);
    }

    /// Always `None` (a TFWC receiver has no timer).
    fn next_timeout(&self) -> Option<u64> {
        self.ep.next_timeout_ns()
    }

    /// Payload bytes received, each sequence number once (the 28-byte data header and
    /// duplicates excluded, as `tfcc recv` counts them).
    #[getter]
    fn delivered_bytes(&self) -> u64 {
        self.ep.inner.delivered_bytes()
    }

    /// The sender's keys (a receiver measures none of them: `mode` is "receiver") and
    /// `delivered_bytes`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = stats_dict(py, &self.ep.stats(), STATS)?;
        d.set_item("delivered_bytes", self.ep.inner.delivered_bytes())?;
        Ok(d)
    }
}
