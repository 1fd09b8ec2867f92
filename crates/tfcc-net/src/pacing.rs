//! How late packets leave against the time their endpoint asked for.
//!
//! A rate-paced endpoint reports its next send time through `next_timeout` and computes the
//! following one from the time it is actually polled (TFRC: `next = now + s/X`), so a late send
//! does not shorten the next gap: the error of each inter-packet gap equals the lateness of the
//! packet that ends it. One histogram (1 µs buckets up to 20 ms, allocated once) gives the
//! percentiles without storing per-packet samples.

use tfcc_core::time::Dur;

const BUCKET_NS: u64 = 1_000;
const BUCKETS: usize = 20_000;

/// Lateness of paced sends: `actual send time - requested send time`.
#[derive(Clone, Debug)]
pub struct Lateness {
    counts: Box<[u32]>,
    /// Samples at or beyond the last bucket (also counted there).
    over: u64,
    n: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            counts: vec![0u32; BUCKETS].into_boxed_slice(),
            over: 0,
            n: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    pub fn record(&mut self, late: Dur) {
        let ns = late.0;
        let i = usize::try_from(ns / BUCKET_NS).unwrap_or(usize::MAX);
        if i >= BUCKETS - 1 {
            self.over += 1;
        }
        let b = &mut self.counts[i.min(BUCKETS - 1)];
        *b = b.saturating_add(1);
        self.n += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Dur {
        if self.n == 0 {
            return Dur::ZERO;
        }
        Dur((self.sum_ns / u128::from(self.n)) as u64)
    }

    pub fn max(&self) -> Dur {
        Dur(self.max_ns)
    }

    /// Samples of 20 ms or more (stalls of the machine rather than timer error).
    pub fn overflows(&self) -> u64 {
        self.over
    }

    /// The `q` quantile (0..=1) to the upper edge of its 1 µs bucket (the max for the top
    /// bucket).
    pub fn quantile(&self, q: f64) -> Dur {
        if self.n == 0 {
            return Dur::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                if i == BUCKETS - 1 {
                    return self.max();
                }
                return Dur(((i as u64 + 1) * BUCKET_NS).min(self.max_ns));
            }
        }
        self.max()
    }

    /// `p50 / p99 / max` for reports.
    pub fn summary(&self) -> String {
        format!(
            "n={} mean={} p50={} p99={} max={}",
            self.n,
            self.mean(),
            self.quantile(0.5),
            self.quantile(0.99),
            self.max()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_microsecond_buckets() {
        let mut l = Lateness::default();
        for us in 1..=100u64 {
            l.record(Dur::from_nanos(us * 1000 - 500));
        }
        assert_eq!(l.count(), 100);
        assert_eq!(l.quantile(0.5), Dur::from_micros(50));
        assert_eq!(l.quantile(0.99), Dur::from_micros(99));
        assert_eq!(l.max(), Dur::from_nanos(99_500));
        assert_eq!(l.mean(), Dur::from_nanos(50_000));
        l.record(Dur::from_millis(500));
        assert_eq!(l.overflows(), 1);
        assert_eq!(l.quantile(1.0), Dur::from_millis(500));
    }
}
