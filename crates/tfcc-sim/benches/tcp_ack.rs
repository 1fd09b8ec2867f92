//! Microbenchmark of the per-ACK cost of each TCP variant: one data segment delivered to the
//! sink, its ACK processed by the sender and the segments it releases drained, in a loop with
//! one segment in 100 lost (so fast recovery and, for SACK, the scoreboard are exercised).

use std::collections::VecDeque;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tfcc_core::endpoint::Endpoint;
use tfcc_core::tcp::{TcpConfig, TcpSender, TcpSink, Variant};
use tfcc_core::{Dur, Header, Packet, Time};

struct Loop {
    s: TcpSender,
    k: TcpSink,
    flight: VecDeque<Packet>,
    now: Time,
    n: u64,
}

impl Loop {
    fn new(v: Variant) -> Loop {
        let cfg = TcpConfig {
            max_window: 64,
            ..TcpConfig::with_variant(v)
        };
        let mut l = Loop {
            s: TcpSender::new(cfg.clone()),
            k: TcpSink::new(&cfg),
            flight: VecDeque::with_capacity(256),
            now: Time::ZERO,
            n: 0,
        };
        l.drain();
        l
    }

    fn drain(&mut self) {
        while let Some(p) = self.s.poll_transmit(self.now) {
            self.flight.push_back(p);
        }
    }

    /// Deliver one segment (or lose it) and feed back its ACK.
    fn step(&mut self) {
        self.now += Dur::from_micros(10);
        let Some(p) = self.flight.pop_front() else {
            // Everything in flight was lost: let the retransmission timer fire.
            if let Some(t) = self.s.next_timeout() {
                self.now = self.now.max(t);
                self.s.on_timeout(self.now);
            }
            self.drain();
            return;
        };
        self.n += 1;
        let retransmit = matches!(p.header, Header::TcpData(d) if d.retransmit);
        if self.n % 100 == 0 && !retransmit {
            return;
        }
        self.k.on_packet(self.now, &p);
        while let Some(a) = self.k.poll_transmit(self.now) {
            self.s.on_packet(self.now, black_box(&a));
        }
        self.drain();
    }
}

fn per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp_per_ack");
    g.throughput(Throughput::Elements(1));
    for v in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        g.bench_with_input(BenchmarkId::from_parameter(v.name()), &v, |b, &v| {
            let mut l = Loop::new(v);
            for _ in 0..10_000 {
                l.step();
            }
            // Still ACK-clocked, not stalled in timeouts.
            assert!(l.k.next_expected() > 9_000, "{v:?} stalled");
            assert_eq!(l.s.stats().timeouts, 0, "{v:?}");
            b.iter(|| l.step());
        });
    }
    g.finish();
}

criterion_group!(benches, per_ack);
criterion_main!(benches);
