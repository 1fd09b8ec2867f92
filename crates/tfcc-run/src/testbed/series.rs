//! The run's time series. tc is read once per sampling interval for both directions of the
//! bottleneck (`Directions`), each reading stamped with the sampling instant it stands for;
//! the readings become the link rows of queues.parquet and the summary's mean queue, and the
//! flows' per-interval samples the rows of timeseries.parquet, in the simulator's columns.

use std::time::Duration;

use tfcc_core::time::std_secs_f64;
use tfcc_net::testbed::{root_qdisc_samples, QdiscSample, FORWARD_DEV, REVERSE_DEV};
use tfcc_sim::recorder::WindowGoodput;

use crate::{FlowColumns, LinkColumns};

/// The testbed router's two root qdiscs read at one instant.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Directions {
    /// The bottleneck's forward direction ([`FORWARD_DEV`]).
    pub(super) forward: QdiscSample,
    /// Its reverse direction ([`REVERSE_DEV`]).
    pub(super) reverse: QdiscSample,
}

impl Directions {
    /// One `tc` process for both; `None` if the forward one is missing.
    pub(super) fn read(router: &str) -> Option<Directions> {
        Self::of(&root_qdisc_samples(router))
    }

    /// The two among a reading of the router's root qdiscs; `None` if the forward one is
    /// missing.
    pub(super) fn of(all: &[(String, QdiscSample)]) -> Option<Directions> {
        let get = |dev: &str| all.iter().find(|(d, _)| d == dev).map(|(_, q)| *q);
        Some(Directions {
            forward: get(FORWARD_DEV)?,
            reverse: get(REVERSE_DEV).unwrap_or_default(),
        })
    }
}

/// Per-flow goodput per sampling interval, from the receivers' delivered bytes, as the
/// simulator's series and summary take it (`WindowGoodput`).
pub(super) fn flow_columns(
    results: &[tfcc_net::testbed::FlowResult],
    interval: Duration,
) -> FlowColumns {
    let mut c = FlowColumns::default();
    let iv = dur(interval);
    for (i, r) in results.iter().enumerate() {
        let mut goodput = WindowGoodput::default();
        for (k, &d) in r.delivered.iter().enumerate() {
            c.flow.push(i as i64);
            c.t.push(std_secs_f64(interval * (k as u32 + 1)));
            c.throughput_bps.push(goodput.sample(d, iv, false));
            c.delivered_bytes.push(i64::try_from(d).unwrap_or(i64::MAX));
            // The sender's state: a tfcc sender's statistics (rate in bit/s as the simulator
            // records it), or kernel TCP's smoothed RTT and cwnd (segments) from TCP_INFO.
            let st = r.sender.get(k).copied().unwrap_or_default();
            c.cwnd.push(st.cwnd);
            c.rate_bps.push(st.rate.map(|x| x * 8.0));
            c.p.push(st.p);
            c.rtt_s.push(st.rtt.map(|d| d.as_secs_f64()));
            for col in [
                &mut c.ptcp_k,
                &mut c.ptcp_s,
                &mut c.ptcp_a_bps,
                &mut c.ptcp_oracle_a_bps,
            ] {
                col.push(None);
            }
        }
    }
    c
}

/// A span of the run's clock as the simulator's integer nanoseconds (`tfcc_core::Dur`).
pub(super) fn dur(d: Duration) -> tfcc_core::Dur {
    tfcc_core::Dur(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The latest multiple of `interval` at or before `elapsed` (the sampling instant a reading
/// taken at `elapsed` stands for).
pub(super) fn latest_instant(elapsed: Duration, interval: Duration) -> Duration {
    let step = interval.as_nanos().max(1);
    let k = elapsed.as_nanos() / step;
    Duration::from_nanos(u64::try_from(k * step).unwrap_or(u64::MAX))
}

/// The bottleneck's queue (read at each sample; `queue_pkts_avg` is that reading too),
/// throughput and tbf drops per interval, from tc.
/// Samples are (nominal time, time actually read, reading): throughput divides by the time
/// between actual readings, since a busy machine delays the tc process.
pub(super) fn link_columns(
    samples: &[(Duration, Duration, Directions)],
    interval: Duration,
) -> LinkColumns {
    let mut c = LinkColumns::default();
    for (name, reverse) in [("bottleneck", false), ("bottleneck-rev", true)] {
        let mut prev = QdiscSample::default();
        let mut prev_t = Duration::ZERO;
        for (t, read_at, d) in samples {
            let q = if reverse { d.reverse } else { d.forward };
            let dt = read_at
                .saturating_sub(prev_t)
                .max(interval / 10)
                .as_secs_f64();
            c.link.push(name.into());
            c.t.push(std_secs_f64(*t));
            c.queue_pkts.push(q.backlog_packets as i64);
            c.queue_pkts_avg.push(q.backlog_packets as f64);
            c.queue_bytes.push(q.backlog_bytes as i64);
            c.throughput_bps
                .push(q.sent_bytes.saturating_sub(prev.sent_bytes) as f64 * 8.0 / dt);
            c.drops.push(q.drops.saturating_sub(prev.drops) as i64);
            prev = q;
            prev_t = *read_at;
        }
    }
    c
}

/// The mean of a direction's queue readings in the window (nominal instants after
/// `measure_from`, to the end): the simulator's time-averaged queue (`mean_queue_pkts`, waiting
/// packets, the one being sent not among them, as tc's backlog) estimated from one `tc`
/// reading per sampling interval. `None` without a reading in the window.
pub(super) fn mean_backlog(
    samples: &[(Duration, Duration, Directions)],
    measure_from: Duration,
    reverse: bool,
) -> Option<f64> {
    let readings: Vec<f64> = samples
        .iter()
        .filter(|(t, _, _)| *t > measure_from)
        .map(|(_, _, d)| if reverse { d.reverse } else { d.forward }.backlog_packets as f64)
        .collect();
    (!readings.is_empty()).then(|| readings.iter().sum::<f64>() / readings.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A late reading stands for the last sampling instant it passed, so a slow machine leaves
    /// gaps in the queue series instead of shifting it: readings every 140 ms for 100 ms
    /// instants are stamped 0.1, 0.2, 0.4, 0.5, 0.7 s, and the last at 1.4 s is 1.4 s.
    #[test]
    fn queue_readings_are_stamped_with_the_last_instant_they_passed() {
        let ms = Duration::from_millis;
        let (interval, mut next, mut stamps) = (ms(100), ms(100), Vec::new());
        for k in 1..=10u64 {
            let elapsed = ms(140 * k);
            if elapsed >= next {
                let at = latest_instant(elapsed, interval);
                stamps.push(at.as_millis());
                next = at + interval;
            }
        }
        assert_eq!(
            stamps,
            [100, 200, 400, 500, 700, 800, 900, 1100, 1200, 1400]
        );
        assert_eq!(latest_instant(ms(99), interval), ms(0));
        assert_eq!(latest_instant(ms(300), interval), ms(300));
        assert_eq!(latest_instant(ms(5), Duration::ZERO), ms(5));
    }

    /// The summary's mean queue is the mean of the readings after the window's start, per
    /// direction.
    #[test]
    fn the_mean_queue_averages_the_readings_in_the_window() {
        let d = |fwd, rev| Directions {
            forward: QdiscSample {
                backlog_packets: fwd,
                ..QdiscSample::default()
            },
            reverse: QdiscSample {
                backlog_packets: rev,
                ..QdiscSample::default()
            },
        };
        let ms = Duration::from_millis;
        let samples = [
            (ms(100), ms(101), d(50, 0)),
            (ms(200), ms(203), d(10, 1)),
            (ms(300), ms(302), d(20, 3)),
        ];
        assert_eq!(mean_backlog(&samples, ms(100), false), Some(15.0));
        assert_eq!(mean_backlog(&samples, ms(100), true), Some(2.0));
        assert_eq!(mean_backlog(&samples, ms(300), false), None);
    }

    #[test]
    fn link_columns_give_each_direction_its_own_rows() {
        let q = |sent_bytes, drops, backlog_packets| QdiscSample {
            sent_bytes,
            drops,
            backlog_packets,
            ..QdiscSample::default()
        };
        let s = |k: u64, f: QdiscSample, r: QdiscSample| {
            let t = Duration::from_millis(100 * k);
            (
                t,
                t,
                Directions {
                    forward: f,
                    reverse: r,
                },
            )
        };
        let samples = [
            s(1, q(12_500, 1, 5), q(500, 0, 0)),
            s(2, q(25_000, 3, 7), q(1_000, 0, 1)),
        ];
        let c = link_columns(&samples, Duration::from_millis(100));
        assert_eq!(
            c.link,
            [
                "bottleneck",
                "bottleneck",
                "bottleneck-rev",
                "bottleneck-rev"
            ]
        );
        assert_eq!(c.queue_pkts, [5, 7, 0, 1]);
        assert_eq!(c.drops, [1, 2, 0, 0]);
        // 12.5 kB per 100 ms forward, 0.5 kB backward.
        assert_eq!(c.throughput_bps, [1e6, 1e6, 40e3, 40e3]);
    }
}
