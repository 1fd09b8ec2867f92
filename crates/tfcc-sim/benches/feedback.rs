//! Microbenchmark of the per-packet cost of the equation- and receiver-based protocols: one
//! data packet from the sender to the receiver and whatever feedback that releases back to the
//! sender, in a closed loop over an ideal path (fixed 1 ms per packet, 50 ms of delay for the
//! feedback), with one data packet in 100 lost so that loss events, the loss history and the
//! rate or window computation all run. Set beside `tcp_per_ack` (one ACK of TCP).

use std::collections::VecDeque;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tfcc_core::endpoint::Endpoint;
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::warc::{AnyRateEstimator, RateReceiver, RateSender, RateSenderConfig, Warc};
use tfcc_core::{Dur, Packet, Time};

/// A sender and a receiver joined by a path that delivers each data packet at once (or drops
/// one in 100) and each feedback packet 50 ms later.
struct Loop<S, R> {
    s: S,
    r: R,
    back: VecDeque<(Time, Packet)>,
    now: Time,
    n: u64,
}

impl<S: Endpoint, R: Endpoint> Loop<S, R> {
    fn new(s: S, r: R) -> Self {
        Loop {
            s,
            r,
            back: VecDeque::with_capacity(1024),
            now: Time::ZERO,
            n: 0,
        }
    }

    /// Advance 1 ms: deliver due feedback, fire due timers, and move what the sender releases.
    fn step(&mut self) {
        self.now += Dur::from_millis(1);
        let now = self.now;
        while self.back.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((_, p)) = self.back.pop_front() {
                self.s.on_packet(now, &p);
            }
        }
        if self.s.next_timeout().is_some_and(|t| t <= now) {
            self.s.on_timeout(now);
        }
        if self.r.next_timeout().is_some_and(|t| t <= now) {
            self.r.on_timeout(now);
        }
        while let Some(p) = self.s.poll_transmit(now) {
            self.n += 1;
            if self.n % 100 != 0 {
                self.r.on_packet(now, &p);
            }
        }
        while let Some(p) = self.r.poll_transmit(now) {
            self.back.push_back((now + Dur::from_millis(50), p));
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("per_packet_with_feedback");
    g.throughput(Throughput::Elements(1));
    let tfrc = TfrcConfig::default();
    let mut l = Loop::new(TfrcSender::new(tfrc.clone()), TfrcReceiver::new(tfrc));
    g.bench_function("tfrc", |b| b.iter(|| black_box(&mut l).step()));
    let tfwc = TfwcConfig::default();
    let mut l = Loop::new(
        TfwcSender::new(tfwc.clone(), Time::ZERO),
        TfwcReceiver::new(&tfwc),
    );
    g.bench_function("tfwc", |b| b.iter(|| black_box(&mut l).step()));
    let rate = RateSenderConfig::default();
    let est = AnyRateEstimator::Warc(Warc::new(Default::default()));
    let r = RateReceiver::for_sender(est, &rate);
    let mut l = Loop::new(RateSender::new(rate), r);
    g.bench_function("warc", |b| b.iter(|| black_box(&mut l).step()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
