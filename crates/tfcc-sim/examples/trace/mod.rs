//! What the per-event trace examples (`e10_setup3_trace`, `lowrate_tfrc_trace`) share: the CSV
//! log and an endpoint wrapper that hands every event to a [`Tap`] and otherwise stays out of
//! the way, so each example writes only what it records.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tfcc_core::endpoint::{Endpoint, Receiver, Sender, Stats};
use tfcc_core::{Packet, Time};

/// The CSV the wrapped endpoints of one run append to, header included.
pub type Log = Arc<Mutex<String>>;

/// A log holding the header `t,flow,kind,a,b,c,d,e`.
pub fn new_log() -> Log {
    Arc::new(Mutex::new(String::from("t,flow,kind,a,b,c,d,e\n")))
}

/// One row `t,flow,kind,a,b,c,d,e`: up to five values, the missing ones empty.
pub fn row(log: &Log, now: Time, flow: usize, kind: &str, vals: &[f64]) {
    let mut s = log.lock().expect("log");
    let _ = write!(s, "{:.6},{flow},{kind}", now.as_secs_f64());
    for i in 0..5 {
        match vals.get(i) {
            Some(v) => {
                let _ = write!(s, ",{v}");
            }
            None => s.push(','),
        }
    }
    s.push('\n');
}

/// What a trace records around the wrapped endpoint `E`'s events; every hook defaults to
/// nothing.
pub trait Tap<E> {
    /// Before `E` sees an arriving packet.
    fn before_packet(&mut self, _inner: &E, _now: Time, _pkt: &Packet) {}
    /// After `E` has handled an arriving packet.
    fn after_packet(&mut self, _inner: &E, _now: Time, _pkt: &Packet) {}
    /// Before `E`'s timer fires.
    fn before_timeout(&mut self, _inner: &E, _now: Time) {}
    /// After `E`'s timer has fired.
    fn after_timeout(&mut self, _inner: &E, _now: Time) {}
    /// A packet `E` sent.
    fn sent(&mut self, _inner: &E, _now: Time, _pkt: &Packet) {}
}

/// `inner` with `tap` told of its events.
pub struct Traced<E, T> {
    pub inner: E,
    pub tap: T,
}

impl<E: Endpoint, T: Tap<E>> Endpoint for Traced<E, T> {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        self.tap.before_packet(&self.inner, now, pkt);
        self.inner.on_packet(now, pkt);
        self.tap.after_packet(&self.inner, now, pkt);
    }
    fn on_timeout(&mut self, now: Time) {
        self.tap.before_timeout(&self.inner, now);
        self.inner.on_timeout(now);
        self.tap.after_timeout(&self.inner, now);
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let p = self.inner.poll_transmit(now)?;
        self.tap.sent(&self.inner, now, &p);
        Some(p)
    }
    fn next_timeout(&self) -> Option<Time> {
        self.inner.next_timeout()
    }
    fn stats(&self) -> Stats {
        self.inner.stats()
    }
}

impl<E: Sender, T: Tap<E>> Sender for Traced<E, T> {
    fn on_send_error(&mut self, now: Time) {
        self.inner.on_send_error(now);
    }
    fn offer(&mut self, bytes: Option<u64>) {
        self.inner.offer(bytes);
    }
}

impl<E: Receiver, T: Tap<E>> Receiver for Traced<E, T> {
    fn delivered_bytes(&self) -> u64 {
        self.inner.delivered_bytes()
    }
}
