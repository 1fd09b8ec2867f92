//! What a run records: per-interval time series, the end-of-run summary, and the metrics
//! computed from them, as plain Rust data (the Python layer writes `timeseries.parquet` and
//! `summary.json` from these; DESIGN.md, "Outputs").
//!
//! Sampling happens in one event per interval for all flows and links, so its cost is
//! `flows × intervals`, independent of packets; the default interval is 100 ms, the rate sampling
//! period of 003's smoothness metric (§3.5.2, "sample the flow rate R every 0.1 s"), which also
//! resolves the RTT-scale dynamics of the theses' 20–200 ms paths.
//!
//! Summary quantities are measured in the window `[measure_from, duration]` by differencing
//! monotone counters read at both ends, so warm-up is excluded exactly (DESIGN.md,
//! `measure_from`).

use tfcc_core::{Dur, Time};

/// One flow over one sampling interval `(time − interval, time]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSample {
    pub time: Time,
    pub flow: u32,
    /// Goodput over the interval: payload bytes delivered to the receiving application · 8 /
    /// interval.
    pub throughput_bps: f64,
    /// Payload bytes delivered since the start of the run.
    pub delivered_bytes: u64,
    /// The sender's state at `time` (from its `Stats`): window in packets, rate in bit/s,
    /// loss event rate, smoothed RTT in seconds.
    pub cwnd: Option<f64>,
    pub rate_bps: Option<f64>,
    pub p: Option<f64>,
    pub rtt_s: Option<f64>,
    /// PTCP (001) only: the `k` of Eq. 1 last applied and the control slot length `s` in RTTs.
    pub ptcp_k: Option<f64>,
    pub ptcp_s: Option<f64>,
    /// PTCP only: the available bandwidth `A` its controller uses, and the simulation oracle's
    /// value (the same with `estimator = "oracle"`), bit/s on the wire.
    pub ptcp_a_bps: Option<f64>,
    pub ptcp_oracle_a_bps: Option<f64>,
}

/// One PTCP evaluation slot (001 Sec. 3: the unit of "slots achieving bw").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PtcpEvalSlot {
    pub start: Time,
    pub end: Time,
    /// Payload goodput acknowledged in the slot, bit/s.
    pub throughput_bps: f64,
    /// `throughput_bps ≥ bw`.
    pub met: bool,
    /// Window cuts in the slot: fast retransmits and timeouts.
    pub cuts: [u64; 2],
}

/// One PTCP control slot (001 Sec. 2.1), for diagnosing why an evaluation slot missed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PtcpCtrlSlot {
    pub start: Time,
    pub end: Time,
    /// Its length `s` in sRTTs.
    pub s: u32,
    /// Its target `g_i` and its throughput (acknowledged payload), bit/s.
    pub target_bps: f64,
    pub throughput_bps: f64,
    /// The `k_max` equation in force: `"eq3"` or `"eq4"`.
    pub regime: &'static str,
    /// Which of `k_bw`, `k_max`, `k_min` set `k` on most of its congestion-avoidance ACKs
    /// (`None`: none of its ACKs was in congestion avoidance).
    pub bound_by: Option<&'static str>,
    /// ACKs on which `k_bw`, `k_max` and `k_min` set `k`, in that order.
    pub bound_counts: [u64; 3],
    /// Of the `k_min` ACKs, those on which `k_max` was below `k_bw` (`k_min` overrode the cap).
    pub k_min_over_k_max: u64,
    /// Window cuts in the slot: fast retransmits and timeouts.
    pub cuts: [u64; 2],
}

/// What a PTCP sender (or aggregate) recorded over the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct PtcpRecord {
    /// The required throughput, payload bit/s.
    pub bw_bps: f64,
    pub eval_slots: Vec<PtcpEvalSlot>,
    /// Every control slot.
    pub ctrl_slots: Vec<PtcpCtrlSlot>,
    /// `(time, s)` at the start and at every change of the control slot length.
    pub s_changes: Vec<(Time, u32)>,
    /// Which source gave `A` and `P` ("oracle" or "inline").
    pub estimator: &'static str,
    /// Inline estimator only: completed measurements of `A`.
    pub measurements: u64,
    /// Inline estimator only: probe streams given up (not formed in time, a retransmission
    /// inside them, or their ACKs overdue).
    pub streams_abandoned: u64,
    /// Inline estimator only: the capacity `P` it holds at the end of the run, bit/s on the wire.
    pub capacity_bps: Option<f64>,
}

/// One link over one sampling interval.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSample {
    pub time: Time,
    pub link: u32,
    /// Time-averaged waiting packets over the interval.
    pub queue_pkts_avg: f64,
    /// Waiting packets and bytes at `time`.
    pub queue_pkts: u32,
    pub queue_bytes: u64,
    /// Bits transmitted over the interval / interval.
    pub throughput_bps: f64,
    /// Packets dropped in the interval (queue, artificial and down together).
    pub drops: u64,
}

/// Whole-run packet accounting of one flow (not windowed), for conservation checks:
/// `sent = delivered + dropped + in_flight` in each direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowTotals {
    pub data_sent: u64,
    pub data_delivered: u64,
    pub data_dropped: u64,
    pub data_in_flight: u64,
    pub feedback_sent: u64,
    pub feedback_delivered: u64,
    pub feedback_dropped: u64,
    pub feedback_in_flight: u64,
}

/// A flow's results in the measurement window.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub protocol: String,
    /// Goodput: payload bytes delivered in the window · 8 / window length.
    pub throughput_bps: f64,
    pub bytes_delivered: u64,
    /// Data packets the sender put on its first link in the window.
    pub packets_sent: u64,
    /// Data packets dropped anywhere on the forward route in the window (queues, artificial
    /// loss, down links).
    pub packets_lost: u64,
    /// Loss events per data packet in the window, counted on the side that counts the loss
    /// events: the events the sender counts (`Stats::loss_events`: TCP's window reductions
    /// caused by a detected loss, i.e. fast retransmits and the retransmission timeouts
    /// resolved as losses, not those found spurious, which reduce the window with nothing
    /// lost, nor those still unresolved at the end of the run, whose retransmission's fate is
    /// unknown; TFWC's loss events) per data packet sent or, if the sender counts none, those
    /// the receiver counts (TFRC's and the other equation-based receivers' loss histories) per
    /// data packet the receiver judged (received or detected lost, `Stats::packets_judged`),
    /// both over the window, so at most 1. Only for flows that count none on either side (CBR)
    /// is it the receiver's `p` (the sink's loss ratio).
    pub loss_event_rate: f64,
    /// Mean of the sender's smoothed RTT over the samples in the window.
    pub mean_rtt_s: Option<f64>,
    /// The flow's propagation RTT: the propagation delays of the links on its forward and
    /// reverse routes as configured at the start, without queueing or transmission time (the
    /// RTT a set-up assigns a flow, by which 003 E2.2 names the "shortest-RTT flow").
    pub base_rtt_s: f64,
    /// Coefficient of variation (population standard deviation / mean) of the per-interval
    /// throughput samples lying wholly in the window, at the sampling timescale
    /// ([`WindowGoodput`], which the testbed's summary uses too).
    pub cov: Option<f64>,
    pub retransmits: u64,
    /// The sender's timeouts in the window (TCP's retransmission timeouts; a rate sender's
    /// no-feedback timer expiries): every expiry, whatever its outcome, so TCP's include those
    /// unresolved at the end of the run (neither loss events nor spurious).
    pub timeouts: u64,
    /// Of `timeouts`, those found spurious (TCP only, `Stats::spurious_timeouts`): the
    /// original segment arrived, nothing was lost, and they are not loss events. Counted when
    /// found, as loss events are: a timeout that fired before the window and is found spurious
    /// in it counts here and not in `timeouts`, so only a window from the start of the run
    /// keeps `spurious_timeouts ≤ timeouts`.
    pub spurious_timeouts: u64,
    /// The receiver's timeouts in the window: the fluid-based timeout phases WARC's receiver
    /// enters (003 Sec. 3.2.2.3), zero for receivers that emulate none.
    pub receiver_timeouts: u64,
    pub totals: FlowTotals,
    /// PTCP flows only: their evaluation slots and `s` over the run.
    pub ptcp: Option<PtcpRecord>,
    /// Flows fed by a video source only: its frames in the window.
    pub video: Option<VideoRecord>,
}

/// A video source's frames in the measurement window (`crate::video`).
#[derive(Clone, Debug, PartialEq)]
pub struct VideoRecord {
    /// The source's nominal frame rate (`fps`).
    pub fps: f64,
    /// Frames that came due in the window (frames in a pause are not due).
    pub frames_due: u64,
    /// Of those, frames grabbed and offered to the sender; the rest the send-buffer coupling
    /// skipped (002 Algorithm 4).
    pub frames_grabbed: u64,
    /// Mean quantizer of the frames grabbed in the window; `None` for an uncoupled source or
    /// a window without a grabbed frame.
    pub mean_q: Option<f64>,
}

impl VideoRecord {
    /// The window's frames of a source configured as `cfg`, from its counts at the window's
    /// start (`mark`) and now: the one reading of a source's counts, for the simulator's
    /// summary and the testbed's.
    pub fn of_window(
        cfg: &crate::video::VideoConfig,
        mark: crate::video::VideoCounts,
        now: crate::video::VideoCounts,
    ) -> VideoRecord {
        let grabbed = now.frames_grabbed - mark.frames_grabbed;
        VideoRecord {
            fps: cfg.fps,
            frames_due: now.frames_due - mark.frames_due,
            frames_grabbed: grabbed,
            mean_q: (cfg.adapt.is_some() && grabbed > 0)
                .then(|| (now.q_sum - mark.q_sum) as f64 / grabbed as f64),
        }
    }
}

/// A link's results in the measurement window.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    /// Fraction of the window the transmitter was busy.
    pub utilization: f64,
    /// All drops: `queue_drops + artificial_drops + down_drops`.
    pub drops: u64,
    pub queue_drops: u64,
    /// Of the queue drops, RED's early (probabilistic) ones.
    pub early_drops: u64,
    pub artificial_drops: u64,
    pub down_drops: u64,
    /// Time-averaged number of waiting packets (excluding the one on the wire).
    pub mean_queue_pkts: f64,
    pub arrivals: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub totals: LinkTotals,
}

/// Whole-run accounting of one link (not windowed), for invariant checks beside
/// [`FlowTotals`]: `arrivals = dropped + waiting + started`, where `started` counts every
/// transmission begun (the one still on the wire at the end included), and the queue's
/// high-water marks against the limits its discipline promises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkTotals {
    pub arrivals: u64,
    /// Queue, artificial and down drops together.
    pub dropped: u64,
    /// Packets waiting in the queue at the end of the run.
    pub waiting: u64,
    /// Transmissions started, including one in progress at the end.
    pub started: u64,
    /// Of those, packets not yet at the far end: the one on the wire and those propagating.
    pub propagating: u64,
    /// Most packets and bytes ever waiting at once (the packet on the wire excluded).
    pub peak_queue_pkts: u64,
    pub peak_queue_bytes: u64,
    /// The largest packet that arrived, bytes on the wire.
    pub max_packet_bytes: u32,
    /// What the queue discipline promises never to exceed: waiting packets for a limit in
    /// packets (`Queue::packet_capacity`), waiting bytes for one in bytes
    /// (`Queue::byte_capacity`; RED in byte mode admits while below it, so it may hold one
    /// packet more).
    pub packet_capacity: Option<u64>,
    pub byte_capacity: Option<u64>,
}

/// The end-of-run summary.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub seed: u64,
    pub sim_seconds: f64,
    pub measure_from_s: f64,
    /// Events processed.
    pub events: u64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Jain's fairness index over all flows' window throughputs.
    pub jain_index: Option<f64>,
    /// Most packets simultaneously in the network (the pool's high-water mark).
    pub peak_packets: u64,
}

/// Everything a run produces.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub summary: RunSummary,
    pub flow_series: Vec<FlowSample>,
    pub link_series: Vec<LinkSample>,
    /// The access gateway's record of web transactions, when the run had one
    /// ([`crate::sim::Simulation::set_web`]).
    pub web: Option<crate::web::WebReport>,
    /// The per-packet trace, when the run recorded one (`SimConfig::trace`).
    pub trace: Option<crate::trace::PacketTrace>,
    /// Every frame slot of every video flow, by flow then slot ([`crate::frames`]); empty
    /// when the run has no video source.
    pub frames: Vec<crate::frames::FrameRecord>,
}

/// Jain's fairness index `(Σx)² / (n·Σx²)` (Jain, Chiu and Hawe, DEC-TR-301, 1984): 1 when all
/// equal, `1/n` when one takes everything. `None` for no flows or all-zero throughput.
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    (!x.is_empty() && s2 > 0.0).then(|| s * s / (x.len() as f64 * s2))
}

/// θ, TCP's share of the throughput of TCP and the TCP-friendly flows it competes with, from
/// per-flow means so that unequal flow counts compare per flow:
/// `θ = T̄_tcp / (T̄_tcp + T̄_other)` (002 Sec. 5.2; 0.5 is a fair share). `None` when either
/// side has no flows or nothing was delivered.
pub fn fairness_theta(tcp: &[f64], other: &[f64]) -> Option<f64> {
    if tcp.is_empty() || other.is_empty() {
        return None;
    }
    let mt = tcp.iter().sum::<f64>() / tcp.len() as f64;
    let mo = other.iter().sum::<f64>() / other.len() as f64;
    (mt + mo > 0.0).then(|| mt / (mt + mo))
}

/// Whether the sampling interval that ends at `now` counts towards a flow's summary figures
/// taken from its samples (`FlowSummary::cov`, `mean_rtt_s`): it lies wholly in the
/// measurement window (`now ≥ measure_from + interval`) and ends after the flow's `start`. The
/// one rule for the simulator's sampling events and the testbed's readings at the same
/// instants, so both backends' figures cover the same intervals.
pub fn counts_in_window(now: Time, interval: Dur, measure_from: Dur, start: Time) -> bool {
    now.saturating_since(Time::ZERO) >= measure_from + interval && now > start
}

/// A flow's goodput per sampling interval, from the payload bytes its receiver has delivered
/// by each sampling instant, and the CoV of the intervals that count ([`counts_in_window`]):
/// `FlowSummary::cov`. Both backends feed it (the simulator at its sampling events, the
/// testbed from its receivers' readings at the same instants), so the summary's CoV has one
/// definition: goodput at the receiver, at the sampling timescale, population standard
/// deviation over mean.
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowGoodput {
    last: u64,
    moments: Moments,
}

impl WindowGoodput {
    /// Takes the bytes delivered by the end of an interval of length `interval` and returns the
    /// interval's goodput in bit/s (the time series' `throughput_bps`); `counts` adds it to
    /// the CoV. Bytes are cumulative; a reading below the previous one (none on either
    /// backend) reads as an interval with nothing delivered.
    pub fn sample(&mut self, delivered: u64, interval: Dur, counts: bool) -> f64 {
        let thr = delivered.saturating_sub(self.last) as f64 * 8.0 / interval.as_secs_f64();
        self.last = delivered;
        if counts {
            self.moments.push(thr);
        }
        thr
    }

    /// Population standard deviation / mean of the counted intervals' goodput; `None` without
    /// one, or when nothing was delivered in them.
    pub fn cov(&self) -> Option<f64> {
        self.moments.cov()
    }
}

/// Running mean and variance (population), for per-flow CoV without storing samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Welford's update, stable for long runs.
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then_some(self.mean)
    }
    /// Standard deviation / mean; `None` without samples or with a zero mean.
    pub fn cov(&self) -> Option<f64> {
        (self.n > 0 && self.mean != 0.0).then(|| (self.m2 / self.n as f64).sqrt() / self.mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_ranges_from_one_over_n_to_one() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1+2+3)² / (3·14) = 36/42.
        assert!((jain_index(&[1.0, 2.0, 3.0]).unwrap() - 36.0 / 42.0).abs() < 1e-15);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn theta_compares_per_flow_means() {
        // Two TCP flows at 1 and 3 (mean 2) against one flow at 6: 2 / 8.
        assert_eq!(fairness_theta(&[1.0, 3.0], &[6.0]), Some(0.25));
        assert_eq!(fairness_theta(&[4.0], &[4.0, 4.0, 4.0]), Some(0.5));
        assert_eq!(fairness_theta(&[], &[1.0]), None);
        assert_eq!(fairness_theta(&[0.0], &[0.0]), None);
    }

    /// An interval counts once it lies wholly in the window and ends after the flow's start;
    /// its goodput is the bytes delivered in it, and the CoV is over the counted ones only.
    #[test]
    fn window_goodput_counts_the_intervals_wholly_in_the_window() {
        let (iv, from) = (Dur::from_millis(100), Dur::from_millis(250));
        let at = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        // The interval (200, 300] ms starts before the window; (300, 400] lies in it.
        assert!(!counts_in_window(at(300), iv, from, Time::ZERO));
        assert!(counts_in_window(at(400), iv, from, Time::ZERO));
        // A flow starting at 450 ms: (400, 500] ends after its start and counts, (300, 400]
        // does not.
        assert!(!counts_in_window(at(400), iv, from, at(450)));
        assert!(counts_in_window(at(500), iv, from, at(450)));
        let near = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let mut g = WindowGoodput::default();
        // 1000 B in (0, 100] ms: 80 kb/s, not counted; then 2500 B and 1500 B counted.
        assert!(near(g.sample(1_000, iv, false), 80e3));
        assert_eq!(g.cov(), None);
        assert!(near(g.sample(3_500, iv, true), 200e3));
        assert!(near(g.sample(5_000, iv, true), 120e3));
        // Mean 160 kb/s, population sd 40 kb/s.
        assert!((g.cov().unwrap() - 0.25).abs() < 1e-12);
        // Nothing delivered in the counted intervals: no CoV.
        let mut idle = WindowGoodput::default();
        idle.sample(0, iv, true);
        assert_eq!(idle.cov(), None);
    }

    #[test]
    fn moments_give_population_cov() {
        let mut m = Moments::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            m.push(x);
        }
        // Mean 5, population sd 2.
        assert!((m.mean().unwrap() - 5.0).abs() < 1e-12);
        assert!((m.cov().unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(Moments::default().cov(), None);
    }
}
