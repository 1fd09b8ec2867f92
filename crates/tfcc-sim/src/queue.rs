//! Queue disciplines: DropTail (packets or bytes) and RED with gentle mode, both behaving as
//! ns-2.35's `Queue/DropTail` and `Queue/RED` do, so that cross-checks against ns-2 compare like
//! with like; and deficit round robin over per-flow or per-class queues ([`crate::drr`]).
//!
//! A [`Queue`] holds the packets *waiting* for a link; the packet being serialised has already
//! left it (as in ns-2, where the link pulls the head packet when it starts transmitting). Its
//! length and the limit therefore exclude the packet on the wire.
//!
//! ns-2 facts this module reproduces (ns-2.35 `queue/drop-tail.cc`, `queue/red.cc`,
//! `tcl/lib/ns-default.tcl`):
//! - DropTail refuses an arrival when `length + 1 >= limit_` (packets) or
//!   `bytes + size >= limit_ * mean_pktsize_` (bytes): a queue of limit `L` holds at most `L - 1`
//!   waiting packets, plus one on the wire, `L` in the system.
//! - RED defaults: `bytes_ true`, `queue_in_bytes_ true`, `thresh_ 0` and `maxthresh_ 0`
//!   (automatic), `mean_pktsize_ 500`, `q_weight_ -1` (automatic), `wait_ true`, `linterm_ 10`
//!   (max_p 0.1), `use_mark_p_ true`, `gentle_ true`, `targetdelay_ 5 ms`, drop from the tail.
//!   `Queue set limit_ 50`.

use crate::drr::{Drr, DrrConfig};
use crate::packet_pool::PacketId;
use crate::rng::SimRng;
use std::collections::VecDeque;
use tfcc_core::{Dur, Rate, Time};

/// How a DropTail queue's capacity is counted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    /// At most `n - 1` waiting packets (ns-2's `limit_`; `n` counts the one on the wire).
    Packets(u32),
    /// An arrival is refused when waiting bytes plus its size would reach `b` (ns-2's
    /// `queue_in_bytes_` test, `limit_ * mean_pktsize_` there).
    Bytes(u64),
}

/// ns-2's default `Queue set limit_` in packets.
pub const NS2_DEFAULT_LIMIT: u32 = 50;

/// RED parameters. Every `None` means "ns-2.35's automatic configuration" (its `0` or `-1`
/// sentinel); every default is ns-2.35's `ns-default.tcl` value. The defaults suit ns-2
/// cross-checks; the theses' RED scenarios set `min_th`, `max_th`, `w_q` and `limit` explicitly.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard limit in packets (ns-2 `limit_`, default 50). With `queue_in_bytes` the limit is
    /// `limit * mean_pktsize` bytes, as in ns-2: 100 × 500 B holds only 50 packets of 1000 B.
    pub limit: u32,
    /// Minimum threshold in (mean-sized) packets (`thresh_`). `None`: ns-2's automatic
    /// `max(5, targetdelay · C / 2)` with C the link rate in mean-sized packets per second.
    pub min_th: Option<f64>,
    /// Maximum threshold in packets (`maxthresh_`). `None`: `3 · min_th` (ns-2).
    pub max_th: Option<f64>,
    /// Drop probability at `max_th` (`1 / linterm_`, ns-2 default 0.1).
    pub max_p: f64,
    /// EWMA weight of the average queue (`q_weight_`). `None`: ns-2's `-1` rule,
    /// `1 - exp(-1 / (10 · RTT · C))` with `RTT = max(0.1 s, 3 · (delay + 1/C))`.
    pub w_q: Option<f64>,
    /// Gentle RED (`gentle_`, default true): between `max_th` and `2 · max_th` the drop
    /// probability rises linearly from `max_p` to 1 instead of jumping to 1.
    pub gentle: bool,
    /// Uniform rather than geometric inter-drop spacing with a pause of `1/p` arrivals after a
    /// drop (`wait_`, default true).
    pub wait: bool,
    /// Scale the drop probability by packet size and count arrivals in mean-sized packets
    /// (`bytes_`, ns-2.35 default true).
    pub bytes: bool,
    /// Measure the queue, the thresholds and the limit in bytes (`queue_in_bytes_`, ns-2.35
    /// default true).
    pub queue_in_bytes: bool,
    /// The "mean packet size" in bytes that converts between packets and bytes and sets the
    /// link's packet rate C (`mean_pktsize_`, default 500).
    pub mean_pktsize: u32,
    /// Target queueing delay for the automatic `min_th` (`targetdelay_`, default 5 ms).
    pub target_delay: Dur,
    /// `use_mark_p_` (default true). In ns-2.35 it disables the "forced" drop of every arrival
    /// once the average passes `max_th` (`2 · max_th` with gentle): those arrivals go through the
    /// probabilistic test instead, where the probability is then 1 anyway (except in byte mode
    /// right after a drop, where `count_bytes / mean_pktsize` rounds down to 0). Without ECN it
    /// has no other effect.
    pub use_mark_p: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: NS2_DEFAULT_LIMIT,
            min_th: None,
            max_th: None,
            max_p: 0.1,
            w_q: None,
            gentle: true,
            wait: true,
            bytes: true,
            queue_in_bytes: true,
            mean_pktsize: 500,
            target_delay: Dur::from_millis(5),
            use_mark_p: true,
        }
    }
}

/// Which queue discipline a link uses.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    DropTail(QueueLimit),
    Red(RedConfig),
    /// Deficit round robin (003 §4.5.2's DRR baseline).
    Drr(DrrConfig),
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::DropTail(QueueLimit::Packets(NS2_DEFAULT_LIMIT))
    }
}

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueDrop {
    /// The hard limit (buffer overflow), or RED's forced drop.
    Overflow,
    /// A RED early (probabilistic) drop.
    Early,
}

/// RED's parameters after ns-2's automatic configuration, in the queue's units (bytes when
/// `queue_in_bytes`, packets otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub th_min: f64,
    pub th_max: f64,
    pub max_p: f64,
    pub w_q: f64,
    /// Link rate in mean-sized packets per second (ns-2's `ptc`), fixed at configuration: like
    /// ns-2, a later rate change does not retune RED.
    pub ptc: f64,
    /// Hard limit in queue units.
    pub limit: u64,
}

impl RedParams {
    /// ns-2.35's `REDQueue::initialize_params` and `reset` for a link of `rate` and one-way
    /// propagation `delay`.
    pub fn configure(cfg: &RedConfig, rate: Rate, delay: Dur) -> RedParams {
        let mps = f64::from(cfg.mean_pktsize.max(1));
        let ptc = rate.bps() as f64 / (8.0 * mps);
        let w_q = cfg.w_q.unwrap_or_else(|| {
            let rtt = (3.0 * (delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        });
        let min_pkts = cfg
            .min_th
            .unwrap_or_else(|| (cfg.target_delay.as_secs_f64() * ptc / 2.0).max(5.0));
        let max_pkts = cfg.max_th.unwrap_or(3.0 * min_pkts);
        let unit = if cfg.queue_in_bytes { mps } else { 1.0 };
        RedParams {
            th_min: min_pkts * unit,
            th_max: max_pkts * unit,
            max_p: cfg.max_p,
            w_q,
            ptc,
            limit: if cfg.queue_in_bytes {
                u64::from(cfg.limit) * u64::from(cfg.mean_pktsize)
            } else {
                u64::from(cfg.limit)
            },
        }
    }

    /// The drop probability before the count correction, for average queue `avg` (ns-2's
    /// `calculate_p_new`): linear from 0 at `th_min` to `max_p` at `th_max`; above, linear to 1
    /// at `2 · th_max` with gentle, 1 without.
    pub fn base_probability(&self, avg: f64, gentle: bool) -> f64 {
        let p = if avg >= self.th_max {
            if gentle {
                // From max_p at th_max to 1 at 2·th_max.
                (1.0 - self.max_p) * avg / self.th_max + 2.0 * self.max_p - 1.0
            } else {
                1.0
            }
        } else {
            // ns-2 guards equal thresholds by using a span of 1 unit.
            let span = if self.th_max == self.th_min {
                1.0
            } else {
                self.th_max - self.th_min
            };
            self.max_p * (avg - self.th_min) / span
        };
        p.min(1.0)
    }
}

/// RED state (ns-2's `edv_`).
#[derive(Clone, Debug)]
struct RedState {
    cfg: RedConfig,
    params: RedParams,
    avg: f64,
    /// Arrivals (and their bytes) since the last drop.
    count: u64,
    count_bytes: u64,
    /// Whether the average was already above `th_min` at the previous arrival.
    old: bool,
    /// The link went idle (the queue was found empty by the transmitter) at `idle_since`.
    idle: bool,
    idle_since: Time,
    rng: SimRng,
}

impl RedState {
    /// ns-2's `modify_p`: spread drops uniformly given the arrivals since the last drop.
    fn count_corrected(&self, p: f64, size: u32) -> f64 {
        let cfg = &self.cfg;
        let mps = u64::from(cfg.mean_pktsize.max(1));
        // ns-2 divides two ints here: the byte count is floored to whole mean-sized packets.
        let count = if cfg.bytes {
            (self.count_bytes / mps) as f64
        } else {
            self.count as f64
        };
        let mut p = if cfg.wait {
            if count * p < 1.0 {
                0.0
            } else if count * p < 2.0 {
                p / (2.0 - count * p)
            } else {
                1.0
            }
        } else if count * p < 1.0 {
            p / (1.0 - count * p)
        } else {
            1.0
        };
        if cfg.bytes && p < 1.0 {
            p = p * f64::from(size) / mps as f64;
        }
        p.min(1.0)
    }

    /// ns-2's `REDQueue::enque` decision for an arrival of `size` bytes while the queue holds
    /// `qlen` units (packets or bytes).
    fn admit(&mut self, now: Time, size: u32, qlen: u64) -> Result<(), QueueDrop> {
        let mut m = 0.0f64;
        if self.idle {
            // Pretend that the link sent `ptc · idle time` packets while the queue was empty.
            self.idle = false;
            m = (self.params.ptc * now.saturating_since(self.idle_since).as_secs_f64()).floor();
        }
        let keep = 1.0 - self.params.w_q;
        if m >= 1.0 {
            self.avg *= keep.powf(m);
        }
        self.avg = keep * self.avg + self.params.w_q * qlen as f64;

        self.count += 1;
        self.count_bytes += u64::from(size);

        let mut verdict = Ok(());
        let avg = self.avg;
        if avg >= self.params.th_min && qlen > 1 {
            let beyond = if self.cfg.gentle {
                avg >= 2.0 * self.params.th_max
            } else {
                avg >= self.params.th_max
            };
            if !self.cfg.use_mark_p && beyond {
                verdict = Err(QueueDrop::Overflow);
            } else if !self.old {
                // The average just crossed th_min: start counting, never drop this one.
                self.count = 1;
                self.count_bytes = u64::from(size);
                self.old = true;
            } else {
                let pb = self.params.base_probability(avg, self.cfg.gentle);
                let pa = self.count_corrected(pb, size);
                if self.rng.uniform() <= pa {
                    self.count = 0;
                    self.count_bytes = 0;
                    verdict = Err(QueueDrop::Early);
                }
            }
        } else {
            self.old = false;
        }
        if qlen >= self.params.limit {
            verdict = Err(QueueDrop::Overflow);
        }
        if verdict == Err(QueueDrop::Overflow) {
            self.count = 0;
            self.count_bytes = 0;
        }
        verdict
    }
}

#[derive(Clone, Debug)]
enum Discipline {
    DropTail(QueueLimit),
    Red(Box<RedState>),
    /// DRR keeps its own per-queue FIFOs; the shared `fifo` stays empty.
    Drr(Box<Drr>),
}

/// A FIFO of waiting packets with its admission discipline.
#[derive(Clone, Debug)]
pub struct Queue {
    fifo: VecDeque<(PacketId, u32)>,
    bytes: u64,
    disc: Discipline,
}

impl Queue {
    /// A queue for a link of `rate` and `delay` (RED sizes itself from them). `rng` is the
    /// queue's own random stream (RED's drop test).
    pub fn new(spec: &QueueSpec, rate: Rate, delay: Dur, rng: SimRng) -> Queue {
        let disc = match spec {
            QueueSpec::DropTail(l) => Discipline::DropTail(*l),
            QueueSpec::Red(cfg) => Discipline::Red(Box::new(RedState {
                params: RedParams::configure(cfg, rate, delay),
                cfg: cfg.clone(),
                avg: 0.0,
                count: 0,
                count_bytes: 0,
                old: false,
                idle: true,
                idle_since: Time::ZERO,
                rng,
            })),
            QueueSpec::Drr(cfg) => Discipline::Drr(Box::new(Drr::new(cfg))),
        };
        Queue {
            fifo: VecDeque::with_capacity(64),
            bytes: 0,
            disc,
        }
    }

    /// Offer a packet; on success it joins the tail.
    pub fn enqueue(&mut self, now: Time, id: PacketId, size: u32) -> Result<(), QueueDrop> {
        self.enqueue_from(now, id, size, 0)
    }

    /// Offer a packet of `flow` (DRR classifies by it; the other disciplines ignore it).
    pub fn enqueue_from(
        &mut self,
        now: Time,
        id: PacketId,
        size: u32,
        flow: u32,
    ) -> Result<(), QueueDrop> {
        let len = self.fifo.len() as u64;
        match &mut self.disc {
            Discipline::Drr(drr) => {
                return if drr.enqueue(id, size, flow) {
                    Ok(())
                } else {
                    Err(QueueDrop::Overflow)
                };
            }
            Discipline::DropTail(QueueLimit::Packets(n)) => {
                if len + 1 >= u64::from(*n) {
                    return Err(QueueDrop::Overflow);
                }
            }
            Discipline::DropTail(QueueLimit::Bytes(b)) => {
                if self.bytes + u64::from(size) >= *b {
                    return Err(QueueDrop::Overflow);
                }
            }
            Discipline::Red(red) => {
                let qlen = if red.cfg.queue_in_bytes {
                    self.bytes
                } else {
                    len
                };
                red.admit(now, size, qlen)?;
            }
        }
        self.fifo.push_back((id, size));
        self.bytes += u64::from(size);
        Ok(())
    }

    /// Whether a packet of `size` bytes that finds this queue empty and its transmitter idle
    /// may go straight to the wire without being stored: a DropTail queue that admits it.
    /// Enqueueing and at once dequeueing it would leave such a queue as it was (RED and DRR
    /// keep state an arrival changes). The link then skips the FIFO's ring, one cache line
    /// less per packet on every uncongested hop.
    pub fn passes_through_empty(&self, size: u32) -> bool {
        debug_assert!(self.is_empty());
        match self.disc {
            Discipline::DropTail(QueueLimit::Packets(n)) => n > 1,
            Discipline::DropTail(QueueLimit::Bytes(b)) => u64::from(size) < b,
            Discipline::Red(_) | Discipline::Drr(_) => false,
        }
    }

    /// The head packet, for the transmitter. An empty queue marks the start of an idle period
    /// (RED ages its average over it).
    pub fn dequeue(&mut self, now: Time) -> Option<(PacketId, u32)> {
        if let Discipline::Drr(drr) = &mut self.disc {
            return drr.dequeue();
        }
        match tfcc_core::ring::pop_front_rewind(&mut self.fifo) {
            Some((id, size)) => {
                self.bytes -= u64::from(size);
                Some((id, size))
            }
            None => {
                if let Discipline::Red(red) = &mut self.disc {
                    red.idle = true;
                    red.idle_since = now;
                }
                None
            }
        }
    }

    /// The transmitter found the queue empty at `since` (a link that skips the event of that
    /// moment reports it on the next arrival): RED ages its average over the idle time.
    pub fn mark_idle(&mut self, since: Time) {
        if let Discipline::Red(red) = &mut self.disc {
            red.idle = true;
            red.idle_since = since;
        }
    }

    /// The waiting packets, head first.
    pub fn ids(&self) -> impl Iterator<Item = PacketId> + '_ {
        let drr = match &self.disc {
            Discipline::Drr(d) => Some(d.ids()),
            _ => None,
        };
        self.fifo
            .iter()
            .map(|(id, _)| *id)
            .chain(drr.into_iter().flatten())
    }

    /// Waiting packets.
    pub fn len(&self) -> usize {
        match &self.disc {
            Discipline::Drr(d) => d.len(),
            _ => self.fifo.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waiting bytes.
    pub fn bytes(&self) -> u64 {
        match &self.disc {
            Discipline::Drr(d) => d.bytes(),
            _ => self.bytes,
        }
    }

    /// The DRR state, if this is a DRR queue.
    pub fn drr(&self) -> Option<&Drr> {
        match &self.disc {
            Discipline::Drr(d) => Some(d),
            _ => None,
        }
    }

    /// RED's average queue (in its units), if this is a RED queue.
    pub fn red_average(&self) -> Option<f64> {
        match &self.disc {
            Discipline::Red(r) => Some(r.avg),
            Discipline::DropTail(_) | Discipline::Drr(_) => None,
        }
    }

    /// RED's configured parameters, if this is a RED queue.
    pub fn red_params(&self) -> Option<&RedParams> {
        match &self.disc {
            Discipline::Red(r) => Some(&r.params),
            Discipline::DropTail(_) | Discipline::Drr(_) => None,
        }
    }

    /// The most packets this queue can ever hold waiting, for invariant checks: `None` when
    /// the limit is in bytes.
    pub fn packet_capacity(&self) -> Option<u64> {
        match &self.disc {
            Discipline::DropTail(QueueLimit::Packets(n)) => Some(u64::from(n.saturating_sub(1))),
            Discipline::Red(r) if !r.cfg.queue_in_bytes => Some(r.params.limit),
            Discipline::Drr(d) => Some(d.capacity()),
            _ => None,
        }
    }

    /// The most bytes this queue can hold waiting, when the limit is in bytes.
    pub fn byte_capacity(&self) -> Option<u64> {
        match &self.disc {
            Discipline::DropTail(QueueLimit::Bytes(b)) => Some(b.saturating_sub(1)),
            // RED admits while the queue is below the limit, so it can overshoot by one packet.
            Discipline::Red(r) if r.cfg.queue_in_bytes => Some(r.params.limit),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rng() -> SimRng {
        SimRng::named(1, "queue/test")
    }

    fn droptail(n: u32) -> Queue {
        Queue::new(
            &QueueSpec::DropTail(QueueLimit::Packets(n)),
            Rate::from_mbps(10),
            Dur::from_millis(10),
            rng(),
        )
    }

    #[test]
    fn droptail_holds_limit_minus_one_waiting_packets_like_ns2() {
        let mut q = droptail(20);
        let mut drops = 0;
        for i in 0..30 {
            if q.enqueue(Time::ZERO, i, 1000).is_err() {
                drops += 1;
            }
        }
        assert_eq!(q.len(), 19);
        assert_eq!(drops, 11);
        assert_eq!(q.bytes(), 19_000);
        // FIFO order and room again after a departure.
        assert_eq!(q.dequeue(Time::ZERO), Some((0, 1000)));
        assert!(q.enqueue(Time::ZERO, 99, 1000).is_ok());
        assert!(q.enqueue(Time::ZERO, 100, 1000).is_err());
    }

    #[test]
    fn droptail_in_bytes_refuses_the_packet_that_would_reach_the_limit() {
        let spec = QueueSpec::DropTail(QueueLimit::Bytes(5_000));
        let mut q = Queue::new(&spec, Rate::from_mbps(1), Dur::ZERO, rng());
        assert!(q.enqueue(Time::ZERO, 0, 1500).is_ok());
        assert!(q.enqueue(Time::ZERO, 1, 1500).is_ok());
        assert!(q.enqueue(Time::ZERO, 2, 1500).is_ok()); // 4500 < 5000
        assert_eq!(q.enqueue(Time::ZERO, 3, 500), Err(QueueDrop::Overflow)); // 5000 >= 5000
        assert!(q.enqueue(Time::ZERO, 4, 499).is_ok());
        assert_eq!(q.bytes(), 4_999);
    }

    #[test]
    fn red_automatic_parameters_match_ns2_235() {
        // 15 Mb/s, 20 ms, mean_pktsize 500: C = 3750 pkt/s; targetqueue = 0.005 · 3750 =
        // 18.75, so min_th = 9.375 packets = 4687.5 bytes, max_th = 3 · min_th; RTT =
        // max(0.1, 3 · (0.02 + 1/3750)) = 0.1 s, w_q = 1 - exp(-1/(10 · 0.1 · 3750)).
        let p = RedParams::configure(
            &RedConfig::default(),
            Rate::from_mbps(15),
            Dur::from_millis(20),
        );
        assert!((p.ptc - 3750.0).abs() < 1e-9);
        assert!((p.th_min - 4687.5).abs() < 1e-9);
        assert!((p.th_max - 14062.5).abs() < 1e-9);
        assert!((p.w_q - (1.0 - (-1.0f64 / 3750.0).exp())).abs() < 1e-15);
        assert_eq!(p.limit, 50 * 500);
        // A slow link falls back to the 5-packet floor; a long link raises the RTT above 0.1 s.
        let p = RedParams::configure(
            &RedConfig::default(),
            Rate::from_kbps(1500),
            Dur::from_millis(100),
        );
        assert!((p.th_min - 5.0 * 500.0).abs() < 1e-9);
        let c: f64 = 375.0;
        let rtt = 3.0 * (0.1 + 1.0 / c);
        assert!((p.w_q - (1.0 - (-1.0 / (10.0 * rtt * c)).exp())).abs() < 1e-15);
    }

    #[test]
    fn red_probability_is_linear_then_gentle() {
        let p = RedParams {
            th_min: 5.0,
            th_max: 15.0,
            max_p: 0.1,
            w_q: 1.0,
            ptc: 1000.0,
            limit: 100,
        };
        assert_eq!(p.base_probability(5.0, true), 0.0);
        assert!((p.base_probability(10.0, true) - 0.05).abs() < 1e-12);
        assert!((p.base_probability(15.0, true) - 0.1).abs() < 1e-12);
        assert!((p.base_probability(22.5, true) - 0.55).abs() < 1e-12);
        assert!((p.base_probability(30.0, true) - 1.0).abs() < 1e-12);
        assert_eq!(p.base_probability(40.0, true), 1.0);
        assert_eq!(p.base_probability(15.0, false), 1.0);
    }

    /// Packet-mode RED with `w_q = 1`, so the average is the queue length seen by each arrival.
    fn red_packets(gentle: bool) -> Queue {
        let cfg = RedConfig {
            limit: 1000,
            min_th: Some(5.0),
            max_th: Some(15.0),
            max_p: 0.1,
            w_q: Some(1.0),
            gentle,
            bytes: false,
            queue_in_bytes: false,
            ..RedConfig::default()
        };
        Queue::new(
            &QueueSpec::Red(cfg),
            Rate::from_mbps(10),
            Dur::from_millis(10),
            rng(),
        )
    }

    /// Hold the queue at `level` waiting packets (one departure per accepted arrival) and
    /// return the fraction of `n` arrivals dropped early.
    fn drop_fraction_at(q: &mut Queue, level: usize, n: u32) -> f64 {
        let mut id = 0;
        while q.len() < level {
            let _ = q.enqueue(Time::ZERO, id, 1000);
            id += 1;
        }
        let mut drops = 0;
        for _ in 0..n {
            match q.enqueue(Time::ZERO, id, 1000) {
                Ok(()) => {
                    q.dequeue(Time::ZERO);
                }
                Err(QueueDrop::Early) => drops += 1,
                Err(QueueDrop::Overflow) => panic!("no overflow expected below the limit"),
            }
            id += 1;
        }
        drops as f64 / f64::from(n)
    }

    /// The exact long-run drop fraction of ns-2's "wait" spacing for base probability `pb`:
    /// the n-th arrival after a drop is dropped with p_n = pb / (2 - n·pb) (0 while n·pb < 1,
    /// 1 from n·pb >= 2), so the fraction is 1 / E[X], E[X] = Σ P(X > n).
    fn wait_rule_fraction(pb: f64) -> f64 {
        let mut survive = 1.0;
        let mut mean = 0.0;
        let mut n = 0u32;
        while survive > 1e-15 {
            mean += survive;
            n += 1;
            let c = f64::from(n) * pb;
            let pn = if c < 1.0 {
                0.0
            } else if c < 2.0 {
                pb / (2.0 - c)
            } else {
                1.0
            };
            survive *= 1.0 - pn;
        }
        1.0 / mean
    }

    #[test]
    fn red_does_not_drop_below_min_th() {
        let mut q = red_packets(true);
        assert_eq!(drop_fraction_at(&mut q, 4, 20_000), 0.0);
    }

    #[test]
    fn red_drop_rate_between_thresholds_follows_the_uniform_spacing_rule() {
        for (level, pb) in [(10usize, 0.05), (14, 0.09)] {
            let mut q = red_packets(true);
            let n = 100_000;
            let got = drop_fraction_at(&mut q, level, n);
            let want = wait_rule_fraction(pb);
            // Regenerative process with bounded cycles: relative error well under 5 % at 1e5.
            assert!(
                (got - want).abs() / want < 0.05,
                "level {level}: got {got}, want {want}"
            );
            // Uniform spacing on [1/p, 2/p] drops about 2p/3 of arrivals, not p.
            assert!((want - 2.0 * pb / 3.0).abs() / want < 0.05);
        }
    }

    #[test]
    fn gentle_region_drops_a_fraction_while_plain_red_drops_everything() {
        // avg = 22 = 1.47 · max_th: gentle gives pb = 0.9 · 22/15 - 0.8 = 0.52.
        let mut q = red_packets(true);
        let got = drop_fraction_at(&mut q, 22, 50_000);
        let want = wait_rule_fraction(0.9 * 22.0 / 15.0 - 0.8);
        assert!((got - want).abs() / want < 0.05, "got {got}, want {want}");
        assert!(got > 0.3 && got < 0.8);
        // At max_th itself gentle RED still drops with max_p; plain RED drops every arrival.
        let mut q = red_packets(true);
        let got = drop_fraction_at(&mut q, 15, 50_000);
        let want = wait_rule_fraction(0.1);
        assert!((got - want).abs() / want < 0.05, "got {got}, want {want}");
        let mut q = red_packets(false);
        assert_eq!(drop_fraction_at(&mut q, 15, 10_000), 1.0);
    }

    #[test]
    fn red_hard_limit_in_bytes_uses_mean_pktsize() {
        // ns-2.35 default: queue_in_bytes with limit 10 × 500 B; 1000 B packets fit 5.
        let cfg = RedConfig {
            limit: 10,
            min_th: Some(100.0),
            max_th: Some(300.0),
            ..RedConfig::default()
        };
        let mut q = Queue::new(&QueueSpec::Red(cfg), Rate::from_mbps(10), Dur::ZERO, rng());
        let accepted = (0..10)
            .filter(|&i| q.enqueue(Time::ZERO, i, 1000).is_ok())
            .count();
        assert_eq!(accepted, 5);
        assert_eq!(q.bytes(), 5000);
    }

    #[test]
    fn red_average_decays_over_an_idle_period() {
        let cfg = RedConfig {
            w_q: Some(0.5),
            bytes: false,
            queue_in_bytes: false,
            min_th: Some(100.0),
            limit: 1000,
            ..RedConfig::default()
        };
        // 4 Mb/s with 500-byte mean packets: C = 1000 packets/s.
        let mut q = Queue::new(&QueueSpec::Red(cfg), Rate::from_mbps(4), Dur::ZERO, rng());
        for i in 0..4 {
            q.enqueue(Time::ZERO, i, 500).unwrap();
        }
        // Averages after arrivals seeing 0, 1, 2, 3 waiting: 0, .5, 1.25, 2.125.
        assert!((q.red_average().unwrap() - 2.125).abs() < 1e-12);
        while q.dequeue(Time::ZERO).is_some() {}
        assert!(q.dequeue(Time::from_millis(1)).is_none()); // idle from 1 ms
                                                            // Idle 3.5 ms = 3.5 packet times, floored to 3: avg · 0.5^3, then one step with the
                                                            // empty queue.
        q.enqueue(Time::from_micros(4_500), 9, 500).unwrap();
        assert!((q.red_average().unwrap() - 2.125 * 0.125 * 0.5).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn queue_never_exceeds_its_limit(
            ops in proptest::collection::vec((any::<bool>(), 40u32..1500), 1..400),
            limit in 2u32..40,
            red in any::<bool>(),
        ) {
            let spec = if red {
                QueueSpec::Red(RedConfig { limit, ..RedConfig::default() })
            } else {
                QueueSpec::DropTail(QueueLimit::Packets(limit))
            };
            let mut q = Queue::new(&spec, Rate::from_mbps(10), Dur::from_millis(5), rng());
            let mut t = 0;
            for (i, (arrive, size)) in ops.into_iter().enumerate() {
                t += 100_000;
                if arrive {
                    let _ = q.enqueue(Time(t), i as u32, size);
                } else {
                    q.dequeue(Time(t));
                }
                if let Some(cap) = q.packet_capacity() {
                    prop_assert!(q.len() as u64 <= cap);
                }
                if let Some(cap) = q.byte_capacity() {
                    // RED admits while below the byte limit: at most one packet over.
                    prop_assert!(q.bytes() <= cap + 1500);
                }
            }
        }
    }
}
