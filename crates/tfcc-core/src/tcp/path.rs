//! Sources of the path's available bandwidth `A` and capacity `P` for PTCP (001 Sec. 2.2.2),
//! behind one trait, so the controller never knows which one it is reading (spec 001 §2.9).
//!
//! - [`PathOracle`]: values pushed in by the driver. In the simulator they are the bottleneck's
//!   rate and that rate minus the cross traffic arriving at it over the last few RTTs (the
//!   controlled flows excluded), which is what the thesis assumes for its multi-connection runs
//!   (001 Sec. 3.2, "the sender knows A and P exactly").
//! - [`super::imtcp::Imtcp`]: inline measurement from the flow's own paced data and ACK timing.

use super::imtcp::Imtcp;
use super::ptcp::PathEstimate;
use crate::time::Time;

/// Anything that can answer "how much room is there on the path" in packets per second.
pub trait PathEstimator {
    /// The latest `A` and `P`, `None` until the source has one.
    fn estimate(&self) -> Option<PathEstimate>;
}

/// `A` and `P` as the driver last set them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathOracle {
    est: Option<PathEstimate>,
    updated: Option<Time>,
}

impl PathOracle {
    pub fn new() -> PathOracle {
        PathOracle::default()
    }

    /// The driver's measurement at `now`, in packets per second. Non-finite or negative values
    /// are clamped (an oracle fed with bad numbers must not poison the controller); `A` never
    /// exceeds `P`.
    pub fn set(&mut self, now: Time, available: f64, capacity: f64) {
        let clean = |x: f64| if x.is_finite() { x.max(0.0) } else { 0.0 };
        let capacity = clean(capacity);
        self.est = Some(PathEstimate {
            available: clean(available).min(capacity),
            capacity,
        });
        self.updated = Some(now);
    }

    /// When the driver last set it.
    pub fn updated(&self) -> Option<Time> {
        self.updated
    }
}

impl PathEstimator for PathOracle {
    fn estimate(&self) -> Option<PathEstimate> {
        self.est
    }
}

/// The source a PTCP sender runs, chosen by [`super::ptcp::PtcpConfig::estimator`].
#[derive(Clone, Debug)]
pub enum PathSource {
    Oracle(PathOracle),
    Inline(Box<Imtcp>),
}

impl PathEstimator for PathSource {
    fn estimate(&self) -> Option<PathEstimate> {
        match self {
            PathSource::Oracle(o) => o.estimate(),
            PathSource::Inline(i) => i.estimate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracle_clamps_bad_values_and_caps_a_at_p() {
        let mut o = PathOracle::new();
        assert_eq!(o.estimate(), None);
        o.set(Time::ZERO, 15_000.0, 12_000.0);
        assert_eq!(o.estimate().unwrap().available, 12_000.0);
        o.set(Time(5), -3.0, f64::NAN);
        let e = o.estimate().unwrap();
        assert_eq!((e.available, e.capacity), (0.0, 0.0));
        assert_eq!(o.updated(), Some(Time(5)));
    }
}
