//! Loss detection from sequence numbers with reordering tolerance, and grouping of losses into
//! loss events (004 Sec. 3.4; RFC 5348 §5.1–5.2).
//!
//! Three pieces, usable apart:
//! - [`LossDetector`] (receiver side): turns arrivals, in any order, into a stream of judged
//!   sequence numbers in increasing order, each received or lost;
//! - [`LossEventGrouper`]: decides whether a lost packet starts a new loss event (more than one
//!   RTT after the packet that started the current one) or belongs to it. TFWC runs it alone at
//!   the sender on its Ack Vector, where every send time is known exactly;
//! - [`LossPipeline`]: detector → grouper → any [`LossEstimator`].

use std::collections::VecDeque;

use crate::loss_history::{LossEstimator, PacketOutcome};
use crate::time::{Dur, Time};

/// Configuration of the [`LossDetector`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetectorConfig {
    /// Packets with higher sequence numbers that may overtake a missing one before it is
    /// declared lost: a gap is judged lost when `reorder_tolerance + 1` higher-numbered packets
    /// have arrived. 004 Sec. 3.4: "waits for three more packets after receiving an out of
    /// order sequence number" — the out-of-order packet plus three more — so "out of order
    /// reception of up to three data packets is handled correctly": default 3. RFC 5348 §5.1
    /// declares the loss on the NDUPACK = 3rd higher arrival, i.e. `reorder_tolerance = 2`.
    pub reorder_tolerance: u32,
    /// Largest run of missing sequence numbers judged one by one. A larger jump (a sender
    /// restart, a long outage, a corrupt number) is judged as one [`Judgement::LostRun`]: one
    /// loss event that counts as one packet. Counting 10^9 packets into the open interval
    /// would drive `p` to zero on the strength of a single glitch, and judging them one by one
    /// would cost 10^9 steps. Default 10 000: above any burst a congested queue drops (a
    /// second of 100 Mbit/s at 1000-byte packets is 12 500).
    pub max_gap: u64,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            reorder_tolerance: 3, // 004 Sec. 3.4
            max_gap: 10_000,
        }
    }
}

/// A sequence number whose fate is now decided, in increasing sequence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    Received {
        seq: u64,
        sent_at: Time,
    },
    /// Lost. `sent_at` is interpolated between the send times of the nearest received packets
    /// below and above (RFC 5348 §5.2 interpolates the same way).
    Lost {
        seq: u64,
        sent_at: Time,
    },
    /// More than `max_gap` consecutive numbers, `first..=last`, all missing: one loss event,
    /// one packet (see [`DetectorConfig::max_gap`]). `sent_at` is interpolated for `first`.
    LostRun {
        first: u64,
        last: u64,
        sent_at: Time,
    },
}

impl Judgement {
    /// Sequence numbers this judgement covers.
    pub fn count(&self) -> u64 {
        match *self {
            Judgement::LostRun { first, last, .. } => last - first + 1,
            _ => 1,
        }
    }
}

/// What became of one arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arrival {
    /// New: recorded (and judged received once everything below it is judged).
    Accepted,
    /// Already received: ignored (004 Sec. 3.4).
    Duplicate,
    /// Arrived after it had been declared lost: counted, but the loss stands (004 Sec. 3.4,
    /// footnote 4: "the loss event is not revised").
    Late,
    /// Numbered below the first packet seen: the detector cannot know its neighbours.
    BeforeStart,
}

/// Counters for reporting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectorStats {
    pub received: u64,
    pub lost: u64,
    pub duplicates: u64,
    pub late: u64,
    pub before_start: u64,
    /// Jumps collapsed into one [`Judgement::LostRun`].
    pub lost_runs: u64,
    /// Packets judged, received or lost: the sequence numbers the detector has passed over,
    /// each [`Judgement::LostRun`] counted as one packet as the loss history counts it
    /// ([`DetectorConfig::max_gap`]), so `received + lost` less each run's length plus one.
    /// The denominator of a receiver's loss event rate over a window (tfcc-sim's summary,
    /// docs/scenarios.md `loss_event_rate`): every loss event a receiver counts starts at a
    /// judged lost packet, so its events never exceed its judged packets. Packets not judged
    /// yet (in flight, or waiting above a gap for `reorder_tolerance + 1` higher arrivals)
    /// are not counted; late arrivals and duplicates are not judged again.
    pub judged: u64,
}

/// How many recently declared lost ranges are remembered to tell a late packet from a
/// duplicate. Older arrivals below the judged frontier count as duplicates.
const LOST_MEMORY: usize = 64;

#[derive(Clone, Copy, Debug)]
enum Pending {
    Received(u64, Time),
    /// Missing `first..=last`, between the received `lo` (below) and `hi` (above).
    Lost {
        first: u64,
        last: u64,
        lo: (u64, Time),
        hi: (u64, Time),
    },
    Run(u64, u64, Time),
}

/// Receiver-side loss detection (004 Sec. 3.4; RFC 5348 §5.1).
///
/// Sequence numbers are plain `u64` and never wrap. The first packet to arrive fixes the start;
/// it need not be 0. After each [`Self::on_arrival`], drain [`Self::poll`] until `None`.
/// Memory is bounded: at most `reorder_tolerance + 1` packets wait above a gap, and a judged
/// run of missing numbers is held as one range, not one entry per packet.
#[derive(Clone, Debug)]
pub struct LossDetector {
    cfg: DetectorConfig,
    /// First sequence number seen.
    base: Option<u64>,
    /// Lowest sequence number not yet judged. `u128` so that judging `u64::MAX` is no overflow.
    next: u128,
    /// Received, not yet judged (all above `next`), sorted.
    waiting: Vec<(u64, Time)>,
    /// The highest received packet judged so far: the lower neighbour for interpolation.
    last_received: Option<(u64, Time)>,
    out: VecDeque<Pending>,
    recent_lost: VecDeque<(u64, u64)>,
    stats: DetectorStats,
}

impl LossDetector {
    pub fn new(cfg: DetectorConfig) -> Self {
        LossDetector {
            cfg,
            base: None,
            next: 0,
            waiting: Vec::new(),
            last_received: None,
            out: VecDeque::new(),
            recent_lost: VecDeque::new(),
            stats: DetectorStats::default(),
        }
    }

    pub fn stats(&self) -> DetectorStats {
        self.stats
    }

    /// The lowest sequence number not yet judged (`None` before the first packet).
    pub fn frontier(&self) -> Option<u128> {
        self.base.map(|_| self.next)
    }

    /// A data packet numbered `seq`, sent at `sent_at` (from its header), has arrived.
    pub fn on_arrival(&mut self, seq: u64, sent_at: Time) -> Arrival {
        let base = *self.base.get_or_insert_with(|| {
            self.next = seq as u128;
            seq
        });
        if seq < base {
            self.stats.before_start += 1;
            return Arrival::BeforeStart;
        }
        if (seq as u128) < self.next {
            if self
                .recent_lost
                .iter()
                .any(|&(a, b)| (a..=b).contains(&seq))
            {
                self.stats.late += 1;
                return Arrival::Late;
            }
            self.stats.duplicates += 1;
            return Arrival::Duplicate;
        }
        match self.waiting.binary_search_by_key(&seq, |&(s, _)| s) {
            Ok(_) => {
                self.stats.duplicates += 1;
                return Arrival::Duplicate;
            }
            Err(i) => self.waiting.insert(i, (seq, sent_at)),
        }
        self.judge();
        Arrival::Accepted
    }

    fn judge(&mut self) {
        while let Some(&(seq, sent_at)) = self.waiting.first() {
            if seq as u128 == self.next {
                self.waiting.remove(0);
                self.out.push_back(Pending::Received(seq, sent_at));
                self.stats.received += 1;
                self.stats.judged += 1;
                self.last_received = Some((seq, sent_at));
                self.next += 1;
                continue;
            }
            if self.waiting.len() <= self.cfg.reorder_tolerance as usize {
                break;
            }
            // Everything from `next` up to the lowest waiting packet is missing and has
            // `reorder_tolerance + 1` higher arrivals: lost.
            let first = self.next as u64;
            let last = seq - 1;
            let lo = self.last_received.unwrap_or((seq, sent_at));
            if last - first >= self.cfg.max_gap {
                let at = interpolate(lo, (seq, sent_at), first);
                self.out.push_back(Pending::Run(first, last, at));
                self.stats.lost_runs += 1;
                self.stats.judged += 1;
            } else {
                self.out.push_back(Pending::Lost {
                    first,
                    last,
                    lo,
                    hi: (seq, sent_at),
                });
                self.stats.judged += last - first + 1;
            }
            self.stats.lost += last - first + 1;
            if self.recent_lost.len() == LOST_MEMORY {
                self.recent_lost.pop_front();
            }
            self.recent_lost.push_back((first, last));
            self.next = seq as u128;
        }
    }

    /// The next judged sequence number, in increasing order; `None` when nothing more is
    /// decided yet.
    pub fn poll(&mut self) -> Option<Judgement> {
        let front = self.out.front_mut()?;
        let j = match *front {
            Pending::Received(seq, sent_at) => {
                self.out.pop_front();
                Judgement::Received { seq, sent_at }
            }
            Pending::Run(first, last, sent_at) => {
                self.out.pop_front();
                Judgement::LostRun {
                    first,
                    last,
                    sent_at,
                }
            }
            Pending::Lost {
                ref mut first,
                last,
                lo,
                hi,
            } => {
                let seq = *first;
                if seq == last {
                    self.out.pop_front();
                } else {
                    *first += 1;
                }
                Judgement::Lost {
                    seq,
                    sent_at: interpolate(lo, hi, seq),
                }
            }
        };
        Some(j)
    }

    /// Forget everything, as if newly built.
    pub fn reset(&mut self) {
        *self = LossDetector::new(self.cfg.clone());
    }
}

/// The send time of `seq` by linear interpolation between the received packets `lo` and `hi`
/// around it (RFC 5348 §5.2). Send times that run backwards give `lo`'s time.
fn interpolate(lo: (u64, Time), hi: (u64, Time), seq: u64) -> Time {
    let (s0, t0) = (lo.0 as u128, lo.1 .0 as u128);
    let (s1, t1) = (hi.0 as u128, hi.1 .0 as u128);
    if s1 <= s0 || t1 <= t0 {
        return lo.1;
    }
    let frac_num = (seq as u128).clamp(s0, s1) - s0;
    let t = t0 + (t1 - t0) * frac_num / (s1 - s0);
    Time(t as u64)
}

/// Groups lost packets into loss events (004 Sec. 3.4; RFC 5348 §5.2): a lost packet starts a
/// new event iff it was sent more than one RTT after the packet that started the current
/// event; otherwise it belongs to that event.
///
/// The RTT is passed per call: TFRC's receiver passes the sender's latest RTT sample from the
/// data header under the thesis preset (004 Sec. 3.4: "the current RTT `t_RTT_cur` and not
/// the smoothed RTT") and its smoothed RTT under `ns2` and `rfc5348` (RFC 5348 §5.2), see
/// `tfrc::config::LossEventRtt`; TFWC uses its SRTT (spec 002 §2.2). Times are send times as 004 and TFWC use them; RFC 5348 §5.2 applies the same rule
/// to (interpolated) arrival times, which the grouper accepts just as well.
///
/// Optionally ([`Self::set_round`]) a lost packet also needs a later sender round than the one
/// the current event started in, as ns-2.35's `Agent/TFRCSink` with `PreciseLoss_ 1` (its
/// default) requires in `new_loss`: the round is the sender's count of reports taken and
/// no-feedback expiries, carried in the data header of the packet whose arrival judges the
/// loss. Consecutive losses judged by the same arrival then form one event however far apart
/// they were sent, which at a packet or two per RTT and 20-30 % loss lowers `p` well below the
/// packet loss rate (docs/reproductions/log/tfrc.md, "TFRC at high loss against ns-2.35").
#[derive(Clone, Debug, Default)]
pub struct LossEventGrouper {
    event_start: Option<Time>,
    events: u64,
    /// The sender round of the latest arrival, once [`Self::set_round`] is used.
    round: Option<u32>,
    /// The round in force when the current event started.
    event_round: Option<u32>,
}

/// Sender rounds travel in 24 bits (`tfrc::wire`); a round is later than another if it is
/// ahead by less than half that space (serial-number arithmetic, as TCP's sequence numbers).
const ROUND_MASK: u32 = 0x00FF_FFFF;

impl LossEventGrouper {
    pub fn new() -> Self {
        Self::default()
    }

    /// Classify one packet, in sequence order. A received packet is always
    /// [`PacketOutcome::Received`]. A lost packet sent *before* the current event's start
    /// (interpolation across reordered send times) belongs to it.
    pub fn classify(&mut self, sent_at: Time, lost: bool, rtt: Dur) -> PacketOutcome {
        if !lost {
            return PacketOutcome::Received;
        }
        match self.event_start {
            Some(start) if sent_at.saturating_since(start) <= rtt || !self.in_new_round() => {
                PacketOutcome::Lost
            }
            _ => self.force_new_event(sent_at),
        }
    }

    /// Start a new loss event at `sent_at` regardless of the RTT and the round (a collapsed
    /// [`Judgement::LostRun`]).
    pub fn force_new_event(&mut self, sent_at: Time) -> PacketOutcome {
        self.event_start = Some(sent_at);
        self.event_round = self.round;
        self.events += 1;
        PacketOutcome::NewLossEvent
    }

    /// The sender round (24 bits) carried by the arrival whose judgements come next; from the
    /// first call on, a new loss event also needs a round later than its predecessor's (ns-2's
    /// `PreciseLoss_`, see the type's documentation).
    pub fn set_round(&mut self, round: u32) {
        self.round = Some(round & ROUND_MASK);
    }

    /// Whether the current round is later than the current event's (always, without rounds).
    fn in_new_round(&self) -> bool {
        match (self.round, self.event_round) {
            (Some(now), Some(then)) => {
                let ahead = now.wrapping_sub(then) & ROUND_MASK;
                ahead != 0 && ahead <= ROUND_MASK / 2
            }
            _ => true,
        }
    }

    /// Send time of the packet that started the current loss event.
    pub fn event_start(&self) -> Option<Time> {
        self.event_start
    }

    /// Loss events started so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// Detector → grouper → estimator: everything a TFRC-style receiver needs to turn arrivals
/// into `p`.
#[derive(Clone, Debug)]
pub struct LossPipeline<E> {
    pub detector: LossDetector,
    pub grouper: LossEventGrouper,
    pub estimator: E,
}

impl<E: LossEstimator> LossPipeline<E> {
    pub fn new(detector: DetectorConfig, estimator: E) -> Self {
        LossPipeline {
            detector: LossDetector::new(detector),
            grouper: LossEventGrouper::new(),
            estimator,
        }
    }

    /// A data packet arrived; `rtt` is the RTT the grouper uses for the packets this arrival
    /// lets it judge.
    pub fn on_arrival(&mut self, seq: u64, sent_at: Time, rtt: Dur) -> Arrival {
        self.on_arrival_with(seq, sent_at, rtt, |_, _| {})
    }

    /// As [`Self::on_arrival`], and calls `observe` with each judgement and its outcome after
    /// the estimator has taken it (TFRC counts lost packets in slowstart, 004 Sec. 3.6.1).
    pub fn on_arrival_with(
        &mut self,
        seq: u64,
        sent_at: Time,
        rtt: Dur,
        mut observe: impl FnMut(&Judgement, PacketOutcome),
    ) -> Arrival {
        let arrival = self.detector.on_arrival(seq, sent_at);
        while let Some(j) = self.detector.poll() {
            let outcome = match j {
                Judgement::Received { sent_at, .. } => self.grouper.classify(sent_at, false, rtt),
                Judgement::Lost { sent_at, .. } => self.grouper.classify(sent_at, true, rtt),
                Judgement::LostRun { sent_at, .. } => self.grouper.force_new_event(sent_at),
            };
            self.estimator.on_packet(outcome);
            observe(&j, outcome);
        }
        arrival
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_history::{AliConfig, LossHistory};
    use proptest::prelude::*;

    fn drain(d: &mut LossDetector) -> Vec<Judgement> {
        std::iter::from_fn(|| d.poll()).collect()
    }

    fn lost_seqs(js: &[Judgement]) -> Vec<u64> {
        js.iter()
            .filter_map(|j| match j {
                Judgement::Lost { seq, .. } => Some(*seq),
                _ => None,
            })
            .collect()
    }

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    /// Deliver `0..len` with packet `late` delayed behind `by` later packets.
    fn reordered(late: u64, by: u64, len: u64) -> Vec<Judgement> {
        let mut order: Vec<u64> = (0..len).filter(|&s| s != late).collect();
        let pos = order.iter().position(|&s| s > late).unwrap() + by as usize;
        order.insert(pos, late);
        let mut d = LossDetector::new(DetectorConfig::default());
        let mut js = Vec::new();
        for s in order {
            d.on_arrival(s, t(s));
            js.extend(drain(&mut d));
        }
        js
    }

    #[test]
    fn reordering_by_up_to_three_is_absorbed_and_by_four_is_a_loss() {
        for by in 1..=3 {
            let js = reordered(5, by, 20);
            assert!(lost_seqs(&js).is_empty(), "by {by}: {js:?}");
            assert_eq!(js.len(), 20);
        }
        let js = reordered(5, 4, 20);
        assert_eq!(lost_seqs(&js), [5]);
    }

    #[test]
    fn rfc_ndupack_is_tolerance_two() {
        let mut d = LossDetector::new(DetectorConfig {
            reorder_tolerance: 2,
            ..DetectorConfig::default()
        });
        for s in [0, 2, 3] {
            d.on_arrival(s, t(s));
        }
        assert!(lost_seqs(&drain(&mut d)).is_empty());
        d.on_arrival(4, t(4)); // third higher packet
        assert_eq!(lost_seqs(&drain(&mut d)), [1]);
    }

    #[test]
    fn duplicates_are_ignored_and_late_packets_do_not_revise() {
        let mut d = LossDetector::new(DetectorConfig::default());
        assert_eq!(d.on_arrival(10, t(0)), Arrival::Accepted);
        assert_eq!(d.on_arrival(10, t(0)), Arrival::Duplicate);
        for s in 12..16 {
            d.on_arrival(s, t(s));
        }
        assert_eq!(d.on_arrival(13, t(13)), Arrival::Duplicate);
        let js = drain(&mut d);
        assert_eq!(lost_seqs(&js), [11]);
        assert_eq!(d.on_arrival(11, t(11)), Arrival::Late);
        assert!(drain(&mut d).is_empty());
        let s = d.stats();
        assert_eq!((s.duplicates, s.late, s.lost, s.received), (2, 1, 1, 5));
        // Numbers below the first packet seen cannot be judged.
        assert_eq!(d.on_arrival(3, t(3)), Arrival::BeforeStart);
    }

    #[test]
    fn lost_send_times_are_interpolated() {
        let mut d = LossDetector::new(DetectorConfig::default());
        d.on_arrival(100, t(1000));
        for (s, ms) in [(104, 1040), (105, 1050), (106, 1060), (107, 1070)] {
            d.on_arrival(s, t(ms));
        }
        let js = drain(&mut d);
        assert_eq!(
            js[1..4],
            [
                Judgement::Lost {
                    seq: 101,
                    sent_at: t(1010)
                },
                Judgement::Lost {
                    seq: 102,
                    sent_at: t(1020)
                },
                Judgement::Lost {
                    seq: 103,
                    sent_at: t(1030)
                },
            ]
        );
    }

    #[test]
    fn a_huge_jump_is_one_bounded_lost_run() {
        let mut d = LossDetector::new(DetectorConfig::default());
        d.on_arrival(7, t(0));
        let jump = 1_000_000_007u64;
        for k in 0..4 {
            d.on_arrival(jump + k, t(10 + k));
        }
        let js = drain(&mut d);
        assert_eq!(js.len(), 1 + 1 + 4);
        assert_eq!(
            js[1],
            Judgement::LostRun {
                first: 8,
                last: jump - 1,
                sent_at: t(0)
            }
        );
        assert_eq!(js.iter().map(Judgement::count).sum::<u64>(), jump + 4 - 7);
        // Judged: 7, the run as one packet, and the four above it.
        assert_eq!(d.stats().judged, 6);
        // Through the pipeline the run is one loss event and one packet.
        let mut p = LossPipeline::new(
            DetectorConfig::default(),
            LossHistory::new(AliConfig::default()).unwrap(),
        );
        p.on_arrival(0, t(0), Dur::from_millis(50));
        for k in 0..4 {
            p.on_arrival(jump + k, t(10 + k), Dur::from_millis(50));
        }
        assert_eq!(p.grouper.events(), 1);
        assert_eq!(p.estimator.open_interval(), 5);
    }

    #[test]
    fn the_top_of_the_sequence_space_does_not_overflow() {
        let mut d = LossDetector::new(DetectorConfig::default());
        let top = u64::MAX;
        for s in [top - 5, top - 3, top - 2, top - 1, top] {
            d.on_arrival(s, t(s - (top - 5)));
        }
        let js = drain(&mut d);
        assert_eq!(lost_seqs(&js), [top - 4]);
        assert_eq!(js.len(), 6);
        assert_eq!(d.frontier(), Some(top as u128 + 1));
        assert_eq!(d.on_arrival(top, t(9)), Arrival::Duplicate);
    }

    /// Send `0..packets` every `spacing`, dropping those `drop` picks, through the pipeline.
    fn run(
        packets: u64,
        spacing: Dur,
        rtt: Dur,
        drop: impl Fn(u64) -> bool,
    ) -> LossPipeline<LossHistory> {
        let mut p = LossPipeline::new(
            DetectorConfig::default(),
            LossHistory::new(AliConfig::default()).unwrap(),
        );
        for s in 0..packets {
            if !drop(s) {
                p.on_arrival(s, Time(spacing.0 * s), rtt);
            }
        }
        p
    }

    fn ali(p: &LossPipeline<LossHistory>) -> f64 {
        p.estimator.average_loss_interval().unwrap()
    }

    #[test]
    fn periodic_loss_end_to_end_gives_the_period() {
        // 002 App. A: drop the first of every 100 / 20 / 10 packets (1 ms apart, RTT 5 ms so
        // every drop is its own event even at 10 packets).
        for every in [100u64, 20, 10] {
            let p = run(
                every * 30 + 1,
                Dur::from_millis(1),
                Dur::from_millis(5),
                |s| s % every == 1,
            );
            assert!(
                (ali(&p) - every as f64).abs() < 1e-9,
                "{every}: {}",
                ali(&p)
            );
            assert_eq!(p.grouper.events(), 30);
        }
    }

    #[test]
    fn two_back_to_back_losses_within_an_rtt_are_one_event() {
        // 002 App. A: two consecutive drops per 100, packets 1 ms apart, RTT 50 ms.
        let p = run(3001, Dur::from_millis(1), Dur::from_millis(50), |s| {
            s % 100 == 1 || s % 100 == 2
        });
        assert_eq!(p.grouper.events(), 30);
        assert_eq!(p.detector.stats().lost, 60);
        assert!((ali(&p) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn alternate_loss_spaced_beyond_the_rtt_gives_two() {
        // O X O X …, packets 60 ms apart, RTT 50 ms: every loss is a new event.
        let p = run(401, Dur::from_millis(60), Dur::from_millis(50), |s| {
            s % 2 == 1
        });
        // 200 drops, but the last three (395, 397, 399) still wait for their fourth
        // higher-numbered arrival.
        assert_eq!(p.detector.stats().lost, 197);
        assert_eq!(p.grouper.events(), 197);
        assert_eq!(p.estimator.open_interval(), 2);
        assert!((ali(&p) - 2.0).abs() < 1e-9);
        // The same pattern 1 ms apart: the losses at 1, 3, …, 51 are within 50 ms of the one at
        // 1, the one at 53 is not, so each event spans 52 packets.
        let q = run(4001, Dur::from_millis(1), Dur::from_millis(50), |s| {
            s % 2 == 1 && s < 4000
        });
        assert!((q.estimator.closed_average().unwrap() - 52.0).abs() < 1e-9);
    }

    #[test]
    fn several_losses_within_one_rtt_are_one_event() {
        let p = run(200, Dur::from_millis(1), Dur::from_millis(50), |s| {
            [20, 25, 31, 40, 69].contains(&s)
        });
        assert_eq!(p.detector.stats().lost, 5);
        assert_eq!(p.grouper.events(), 1);
        // 70 is sent 50 ms after 20: exactly one RTT is still the same event; 71 is not.
        let q = run(200, Dur::from_millis(1), Dur::from_millis(50), |s| {
            [20, 70, 71].contains(&s)
        });
        assert_eq!(q.grouper.events(), 2);
    }

    #[test]
    fn with_rounds_a_loss_in_the_same_sender_round_joins_the_event_however_late() {
        let rtt = Dur::from_millis(50);
        let mut g = LossEventGrouper::new();
        g.set_round(7);
        assert_eq!(g.classify(t(0), true, rtt), PacketOutcome::NewLossEvent);
        // Sent 200 ms (four RTTs) later, but judged by an arrival of the same round: ns-2's
        // `PreciseLoss_ 1` keeps it in the event, the RTT rule alone would not.
        assert_eq!(g.classify(t(200), true, rtt), PacketOutcome::Lost);
        g.set_round(8);
        assert_eq!(g.classify(t(230), true, rtt), PacketOutcome::NewLossEvent);
        // A later round within one RTT of the start is still the same event.
        g.set_round(9);
        assert_eq!(g.classify(t(260), true, rtt), PacketOutcome::Lost);
        assert_eq!(g.events(), 2);
        // Serial arithmetic across the 24-bit wrap: 0 is later than 2^24 − 1, which is not
        // later than 0.
        let mut w = LossEventGrouper::new();
        w.set_round(ROUND_MASK);
        assert_eq!(w.classify(t(0), true, rtt), PacketOutcome::NewLossEvent);
        w.set_round(0);
        assert_eq!(w.classify(t(200), true, rtt), PacketOutcome::NewLossEvent);
        w.set_round(ROUND_MASK);
        assert_eq!(w.classify(t(400), true, rtt), PacketOutcome::Lost);
        // Without rounds the RTT alone decides.
        let mut h = LossEventGrouper::new();
        assert_eq!(h.classify(t(0), true, rtt), PacketOutcome::NewLossEvent);
        assert_eq!(h.classify(t(200), true, rtt), PacketOutcome::NewLossEvent);
    }

    #[test]
    fn the_grouper_works_alone_with_exact_send_times() {
        let mut g = LossEventGrouper::new();
        let rtt = Dur::from_millis(100);
        assert_eq!(g.classify(t(0), false, rtt), PacketOutcome::Received);
        assert_eq!(g.classify(t(10), true, rtt), PacketOutcome::NewLossEvent);
        assert_eq!(g.classify(t(110), true, rtt), PacketOutcome::Lost);
        assert_eq!(g.classify(t(111), true, rtt), PacketOutcome::NewLossEvent);
        // A shorter RTT in this call splits sooner.
        assert_eq!(
            g.classify(t(122), true, Dur::from_millis(10)),
            PacketOutcome::NewLossEvent
        );
        assert_eq!(g.event_start(), Some(t(122)));
        assert_eq!(g.events(), 3);
    }

    #[test]
    fn observer_sees_every_judgement_in_order() {
        let mut p = LossPipeline::new(
            DetectorConfig::default(),
            LossHistory::new(AliConfig::default()).unwrap(),
        );
        let mut seen = Vec::new();
        for s in [0u64, 1, 3, 4, 5, 6] {
            p.on_arrival_with(s, t(s), Dur::from_millis(50), |j, o| seen.push((*j, o)));
        }
        let outcomes: Vec<_> = seen.iter().map(|(_, o)| *o).collect();
        use PacketOutcome::*;
        assert_eq!(
            outcomes,
            [
                Received,
                Received,
                NewLossEvent,
                Received,
                Received,
                Received,
                Received
            ]
        );
        assert_eq!(
            seen[2].0,
            Judgement::Lost {
                seq: 2,
                sent_at: t(2)
            }
        );
    }

    proptest! {
        #[test]
        fn judgements_are_increasing_unique_and_complete(
            start in 0u64..1_000,
            ops in prop::collection::vec((0u64..60, any::<bool>()), 1..200),
            tol in 0u32..5,
            max_gap in 1u64..20,
        ) {
            let mut d = LossDetector::new(DetectorConfig { reorder_tolerance: tol, max_gap });
            let mut judged = Vec::new();
            // Arrivals wander around an advancing point, with duplicates and big skips.
            let mut cursor = start;
            for (jitter, dup) in ops {
                let seq = cursor + jitter % 8;
                d.on_arrival(seq, Time(seq));
                if dup {
                    d.on_arrival(seq, Time(seq));
                }
                cursor += jitter / 6;
                judged.extend(std::iter::from_fn(|| d.poll()));
            }
            let mut last: Option<u64> = None;
            let (mut rec, mut lost) = (0u64, 0u64);
            for j in &judged {
                let (lo, hi) = match *j {
                    Judgement::Received { seq, .. } => { rec += 1; (seq, seq) }
                    Judgement::Lost { seq, .. } => { lost += 1; (seq, seq) }
                    Judgement::LostRun { first, last, .. } => {
                        prop_assert!(last - first >= max_gap);
                        lost += last - first + 1;
                        (first, last)
                    }
                };
                if let Some(prev) = last {
                    prop_assert_eq!(lo, prev + 1, "judged in order, each once, none skipped");
                }
                last = Some(hi);
            }
            let s = d.stats();
            prop_assert_eq!((s.received, s.lost), (rec, lost));
            let covered: u64 = judged.iter().map(Judgement::count).sum();
            prop_assert_eq!(rec + lost, covered);
            // `judged` counts one per judgement: a collapsed run is one packet.
            prop_assert_eq!(s.judged, judged.len() as u64);
        }
    }
}
