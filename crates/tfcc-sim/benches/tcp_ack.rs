//! Microbenchmark of the per-ACK cost of each TCP variant: one data segment delivered to the
//! sink, its ACK processed by the sender and the segments it releases drained, in a loop with
//! one segment in 100 lost (so fast recovery and, for SACK, the scoreboard are exercised).

mod common;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tfcc_core::endpoint::Endpoint;
use tfcc_core::tcp::{TcpConfig, TcpSender, TcpSink, Variant};

use common::LossyLoop;

fn per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp_per_ack");
    g.throughput(Throughput::Elements(1));
    for v in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        g.bench_with_input(BenchmarkId::from_parameter(v.name()), &v, |b, &v| {
            let cfg = TcpConfig {
                max_window: 64,
                ..TcpConfig::with_variant(v)
            };
            let mut l =
                LossyLoop::new(TcpSender::new(cfg.clone()), TcpSink::new(&cfg)).warm(10_000);
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
