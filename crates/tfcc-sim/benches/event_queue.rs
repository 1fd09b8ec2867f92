//! Microbenchmark of the event queue: the steady-state cost of one schedule + pop with a given
//! number of pending events (a busy link, a pipe head and a timer per flow keep the queue at a
//! few thousand entries in the 1000-flow benchmark).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tfcc_core::Time;
use tfcc_sim::engine::EventQueue;
use tfcc_sim::rng::SimRng;

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue_hold");
    for pending in [16usize, 1_000, 10_000] {
        g.throughput(Throughput::Elements(1));
        g.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, &n| {
            // The "hold" model: pop the earliest event, schedule one a random time ahead.
            let mut rng = SimRng::named(1, "bench");
            let mut q = EventQueue::with_capacity(n + 1);
            for i in 0..n {
                q.schedule(Time(rng.next_u64() % 1_000_000), i as u32);
            }
            b.iter(|| {
                let (t, e) = q.pop().expect("queue never empties");
                q.schedule(Time(t.0 + 1 + rng.next_u64() % 1_000_000), black_box(e));
            });
        });
    }
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
