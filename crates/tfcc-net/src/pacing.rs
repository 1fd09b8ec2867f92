//! How late packets leave against the time their endpoint asked for, and how far the gaps
//! between them are from the gaps the endpoint scheduled.
//!
//! A rate-paced endpoint reports its next send time through `next_timeout` and computes the
//! following one from the time it is polled (TFRC: `next = now + s/X`). The session polls it
//! at the requested time when the send is at most `SessionConfig::catch_up` late, so lateness
//! and gap error differ: a late packet followed by one on time gives one long gap and one
//! short one. Both are kept: [`Lateness`] (send time minus requested time) and [`GapError`]
//! (actual minus scheduled gap, issue 11's measure). One histogram (1 µs buckets up to 20 ms,
//! allocated once) gives the percentiles without storing per-packet samples.

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

/// The error of inter-packet gaps: actual gap minus scheduled gap, per paced packet. The
/// magnitude goes into a [`Lateness`] histogram (percentiles); the signed mean shows whether
/// the gaps are longer on average (a rate below the endpoint's) or just jittered.
#[derive(Clone, Debug, Default)]
pub struct GapError {
    abs: Lateness,
    signed_sum_ns: i128,
    longer: u64,
}

impl GapError {
    /// One gap: `actual` between the two sends, `scheduled` by the endpoint.
    pub fn record(&mut self, actual: Dur, scheduled: Dur) {
        let err = i128::from(actual.0) - i128::from(scheduled.0);
        self.signed_sum_ns += err;
        if err > 0 {
            self.longer += 1;
        }
        self.abs
            .record(Dur(u64::try_from(err.unsigned_abs()).unwrap_or(u64::MAX)));
    }

    /// Percentiles and maximum of `|actual - scheduled|`.
    pub fn magnitude(&self) -> &Lateness {
        &self.abs
    }

    /// Mean of `actual - scheduled`, nanoseconds (negative: gaps shorter than scheduled).
    pub fn mean_signed_ns(&self) -> f64 {
        if self.abs.count() == 0 {
            return 0.0;
        }
        self.signed_sum_ns as f64 / self.abs.count() as f64
    }

    /// Gaps longer than scheduled.
    pub fn longer(&self) -> u64 {
        self.longer
    }

    /// `|error|` percentiles and the signed mean, for reports.
    pub fn summary(&self) -> String {
        format!(
            "|err| {}; signed mean {:.2} us, {} of {} longer",
            self.abs.summary(),
            self.mean_signed_ns() / 1e3,
            self.longer,
            self.abs.count()
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

    #[test]
    fn gap_error_keeps_the_sign_in_its_mean_and_the_magnitude_in_its_histogram() {
        let mut g = GapError::default();
        g.record(Dur::from_micros(110), Dur::from_micros(100));
        g.record(Dur::from_micros(90), Dur::from_micros(100));
        g.record(Dur::from_micros(130), Dur::from_micros(100));
        assert_eq!(g.magnitude().count(), 3);
        assert_eq!(g.magnitude().max(), Dur::from_micros(30));
        assert_eq!(g.longer(), 2);
        assert!((g.mean_signed_ns() - 10_000.0).abs() < 1e-9);
    }
}
