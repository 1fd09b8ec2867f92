//! The CPU cost of TTFWC (000 Sec. 5.2.3, Tables 5.1–5.2): its per-ACK hook (`cong_avoid`) and
//! its loss-event hook (`ssthresh`) at tp 0.0 / 0.4 / 0.9, with the approximate and the exact
//! ALI, beside Reno's rules; and the whole TCP sender's per-ACK cost with each congestion
//! control (one segment in 100 lost, as `tcp_ack`), and TFWC's per Ack Vector in the same loop.
//!
//! The hooks run on a controller that has seen 40 loss events at irregular intervals (so the
//! 16- or 8-interval history is full) and sits at a window of 20.

use std::hint::black_box;

mod common;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use tfcc_core::endpoint::Endpoint;
use tfcc_core::tcp::ttfwc::Increase;
use tfcc_core::tcp::{
    AliUpdate, Congestion, TcpConfig, TcpSender, TcpSink, Ttfwc, TtfwcConfig, Variant,
};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::Time;

use common::LossyLoop;

const CASES: [(&str, f64, AliUpdate); 5] = [
    ("ttfwc-0.0", 0.0, AliUpdate::Approximate),
    ("ttfwc-0.4", 0.4, AliUpdate::Approximate),
    ("ttfwc-0.9", 0.9, AliUpdate::Approximate),
    ("ttfwc-0.4-exact", 0.4, AliUpdate::Exact),
    ("ttfwc-0.9-exact", 0.9, AliUpdate::Exact),
];

/// A controller with a full, irregular history, just after a loss event.
fn warmed(tp: f64, ali: AliUpdate) -> Ttfwc {
    let mut t = Ttfwc::new(TtfwcConfig {
        ali,
        ..TtfwcConfig::with_tp(tp)
    });
    t.ssthresh(40.0);
    let mut x: u64 = 7;
    for _ in 0..40 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let gap = 100 + (x >> 33) % 300;
        for _ in 0..gap {
            black_box(t.cong_avoid(1, 20.0, 20.0));
        }
        t.ssthresh(20.0);
    }
    t
}

/// ns-2's Reno increase (`TcpAgent::opencwnd`), the baseline of Table 5.1.
fn reno_open(cwnd: f64, ssthresh: f64) -> f64 {
    if cwnd < ssthresh {
        cwnd + 1.0
    } else {
        cwnd + 1.0 / cwnd
    }
}

/// One `cong_avoid` per iteration. The controller runs through 400-ACK epochs after a loss
/// (flat period, then the increasing one with the boost) and is then reset from a copy, so no
/// loss event falls inside the timing; its cost is measured separately in [`ssthresh`].
fn cong_avoid(c: &mut Criterion) {
    let mut g = c.benchmark_group("ttfwc_cong_avoid");
    g.throughput(Throughput::Elements(1));
    g.bench_function("reno", |b| {
        let mut w = 20.0;
        b.iter(|| {
            w = reno_open(black_box(w), 20.0);
            if w > 40.0 {
                w = 20.0;
            }
        })
    });
    for (name, tp, ali) in CASES {
        g.bench_with_input(
            BenchmarkId::from_parameter(name),
            &(tp, ali),
            |b, &(tp, ali)| {
                let base = warmed(tp, ali);
                let mut t = base.clone();
                let mut w = 20.0;
                let mut n = 0u32;
                b.iter(|| {
                    if let Increase::Set(x) = t.cong_avoid(1, black_box(w), 20.0) {
                        w = x;
                    }
                    n += 1;
                    if n == 400 {
                        // Start the epoch again without a loss event (one clone per 400 ACKs).
                        t.clone_from(&base);
                        w = 20.0;
                        n = 0;
                    }
                })
            },
        );
    }
    g.finish();
}

fn ssthresh(c: &mut Criterion) {
    let mut g = c.benchmark_group("ttfwc_ssthresh");
    g.throughput(Throughput::Elements(1));
    g.bench_function("reno", |b| b.iter(|| (black_box(20.0_f64) / 2.0).max(2.0)));
    for (name, tp, ali) in CASES {
        g.bench_with_input(
            BenchmarkId::from_parameter(name),
            &(tp, ali),
            |b, &(tp, ali)| {
                let mut base = warmed(tp, ali);
                for _ in 0..250 {
                    base.cong_avoid(1, 20.0, 20.0);
                }
                b.iter_batched_ref(
                    || base.clone(),
                    |t| black_box(t.ssthresh(black_box(20.0))),
                    BatchSize::SmallInput,
                )
            },
        );
    }
    g.finish();
}

fn sender_per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp_sack_per_ack_by_cc");
    g.throughput(Throughput::Elements(1));
    let mut cases = vec![("reno".to_string(), Congestion::Reno)];
    for (name, tp, ali) in CASES {
        cases.push((
            name.to_string(),
            Congestion::Ttfwc(TtfwcConfig {
                ali,
                ..TtfwcConfig::with_tp(tp)
            }),
        ));
    }
    cases.push((
        "ttfwc-0.9-no-jitter".to_string(),
        Congestion::Ttfwc(TtfwcConfig {
            jitter: false,
            ..TtfwcConfig::with_tp(0.9)
        }),
    ));
    for (name, cc) in cases {
        g.bench_with_input(BenchmarkId::from_parameter(&name), &cc, |b, cc| {
            let cfg = TcpConfig {
                max_window: 64,
                congestion: cc.clone(),
                ..TcpConfig::with_variant(Variant::Sack)
            };
            let mut l =
                LossyLoop::new(TcpSender::new(cfg.clone()), TcpSink::new(&cfg)).warm(10_000);
            assert!(l.k.next_expected() > 9_000, "{name} stalled");
            b.iter(|| l.step());
        });
    }
    g.finish();
}

fn tfwc_per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("tfwc_per_ack");
    g.throughput(Throughput::Elements(1));
    g.bench_function("tfwc", |b| {
        let cfg = TfwcConfig {
            max_window: 64,
            seed: 1,
            ..TfwcConfig::default()
        };
        let mut l = LossyLoop::new(
            TfwcSender::new(cfg.clone(), Time::ZERO),
            TfwcReceiver::new(&cfg),
        )
        .warm(10_000);
        assert!(l.s.stats().packets_sent > 9_000, "tfwc stalled");
        b.iter(|| l.step());
    });
    g.finish();
}

criterion_group!(benches, cong_avoid, ssthresh, sender_per_ack, tfwc_per_ack);
criterion_main!(benches);
