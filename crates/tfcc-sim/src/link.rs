//! A unidirectional link: artificial loss, a queue, a transmitter and a propagation pipe.
//!
//! A packet arriving at a link meets, in order: the up/down state (a down link drops what
//! arrives, like an ns-2 link dropout), the optional artificial loss model (its drops are counted
//! apart from queue drops), and the queue discipline. The transmitter serialises the head packet
//! in exactly `Rate::tx_time(size)` integer nanoseconds; the packet then enters the propagation
//! pipe and reaches the next hop `delay` later, so it arrives `tx_time + delay` after it started
//! to go out, as in ns-2's `LinkDelay`.
//!
//! Events stay few (htsim's pattern): a busy link has one pending "transmission done" event, and
//! the pipe, a FIFO because the delay is constant, has one pending event for its head packet.
//!
//! Choices where ns-2 and the brief leave room:
//! - A rate change applies from the next packet to start transmission; the packet on the wire
//!   keeps the time it started with (ns-2 computes the transmission time at the start too).
//! - While down, the link refuses arrivals and pauses its transmitter; packets already queued
//!   wait and go out when it comes back up, and packets already propagating are delivered.

use crate::loss_model::{LossModel, LossProcess, LossScope, LossSpec};
use crate::packet_pool::PacketId;
use crate::queue::{Queue, QueueDrop, QueueSpec};
use crate::rng::{component_key, splitmix64, SimRng};
use std::collections::VecDeque;
use tfcc_core::{Dur, Rate, Time};

/// Index of a link in its topology.
pub type LinkId = u32;

/// A link's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Unique name; also the key of the link's random streams.
    pub name: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Dur,
    pub queue: QueueSpec,
    pub loss: Option<LossSpec>,
}

impl LinkSpec {
    /// A DropTail link with no artificial loss.
    pub fn new(name: impl Into<String>, rate: Rate, delay: Dur, queue: QueueSpec) -> LinkSpec {
        LinkSpec {
            name: name.into(),
            rate,
            delay,
            queue,
            loss: None,
        }
    }

    pub fn with_loss(mut self, loss: impl Into<LossSpec>) -> LinkSpec {
        self.loss = Some(loss.into());
        self
    }
}

/// Why a link discarded a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkDrop {
    Queue(QueueDrop),
    /// The artificial loss model.
    Artificial,
    /// The link was down.
    Down,
}

/// Monotone counters of a link, read at the start and end of the measurement window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Bytes of the arrivals (dropped ones included): the offered load, for the PTCP oracle.
    pub arrival_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Queue overflows and RED forced drops.
    pub overflow_drops: u64,
    /// RED early drops.
    pub early_drops: u64,
    pub artificial_drops: u64,
    pub down_drops: u64,
    /// Nanoseconds spent transmitting (up to the time of reading).
    pub busy_ns: u128,
    /// Integral of the waiting-packet count over time, packet·nanoseconds.
    pub queue_area: u128,
}

impl LinkCounters {
    pub fn queue_drops(&self) -> u64 {
        self.overflow_drops + self.early_drops
    }
}

enum LossState {
    Aggregate(LossProcess),
    PerFlow {
        model: LossModel,
        since: Time,
        procs: Vec<Option<LossProcess>>,
    },
}

/// A link's run-time state.
pub struct Link {
    pub name: String,
    rate: Rate,
    delay: Dur,
    up: bool,
    queue: Queue,
    loss: Option<LossState>,
    /// The packet on the wire, when it started and how long it takes.
    tx: Option<(PacketId, Time, Dur)>,
    /// The current busy period: when it began, the bits started in it, and when the last of
    /// them ends. Back-to-back transmissions end at `origin + ceil(bits / rate)`, so rounding
    /// each one to whole nanoseconds never accumulates: with per-packet rounding a 15 Mb/s link
    /// (554 666.7 ns per 1040 B) drifts 1.5 µs late every 4500 packets, enough to flip the
    /// near-ties between a departure and an ACK-clocked arrival and, over a run, to change
    /// DropTail's drop count by 15 % against ns-2 (whose double-precision times do not drift).
    busy_origin: Time,
    busy_bits: u128,
    busy_end: Option<Time>,
    pipe: VecDeque<(Time, PacketId)>,
    counters: LinkCounters,
    queue_changed_at: Time,
    seed: u64,
    loss_key: u64,
    loss_epoch: u64,
}

impl Link {
    /// Build from a validated spec; `seed` is the run's seed.
    pub fn new(spec: &LinkSpec, seed: u64) -> Link {
        let qrng = SimRng::named(seed, &format!("queue/{}", spec.name));
        let mut link = Link {
            name: spec.name.clone(),
            rate: spec.rate,
            delay: spec.delay,
            up: true,
            queue: Queue::new(&spec.queue, spec.rate, spec.delay, qrng),
            loss: None,
            tx: None,
            busy_origin: Time::ZERO,
            busy_bits: 0,
            busy_end: None,
            pipe: VecDeque::with_capacity(16),
            counters: LinkCounters::default(),
            queue_changed_at: Time::ZERO,
            seed,
            loss_key: component_key(&format!("loss/{}", spec.name)),
            loss_epoch: 0,
        };
        if let Some(l) = &spec.loss {
            link.set_loss(Some(l.clone()), Time::ZERO);
        }
        link
    }

    /// The stream of the current loss model: keyed by the link's name, the number of loss
    /// changes so far (so a changed model does not replay the old draws) and, per flow, the
    /// flow index.
    fn loss_rng(seed: u64, key: u64, epoch: u64, flow: Option<u32>) -> SimRng {
        let k = splitmix64(key ^ splitmix64(epoch));
        match flow {
            None => SimRng::stream(seed, k),
            Some(f) => SimRng::stream(seed, splitmix64(k ^ u64::from(f))),
        }
    }

    /// Install, replace (a scheduled loss change) or remove the artificial loss model at `now`.
    pub fn set_loss(&mut self, loss: Option<LossSpec>, now: Time) {
        self.loss_epoch += 1;
        let (seed, key, epoch) = (self.seed, self.loss_key, self.loss_epoch);
        self.loss = loss.map(|spec| match spec.scope {
            LossScope::Aggregate => LossState::Aggregate(LossProcess::new(
                spec.model,
                now,
                Self::loss_rng(seed, key, epoch, None),
            )),
            LossScope::PerFlow => LossState::PerFlow {
                model: spec.model,
                since: now,
                procs: Vec::new(),
            },
        });
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    pub fn delay(&self) -> Dur {
        self.delay
    }

    pub fn is_up(&self) -> bool {
        self.up
    }

    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    pub fn is_busy(&self) -> bool {
        self.tx.is_some()
    }

    /// Packets on the wire or propagating.
    pub fn in_transit(&self) -> usize {
        self.pipe.len() + usize::from(self.tx.is_some())
    }

    /// Every packet the link holds: waiting, on the wire, propagating.
    pub fn packets(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.queue
            .ids()
            .chain(self.tx.map(|(id, _, _)| id))
            .chain(self.pipe.iter().map(|(_, id)| *id))
    }

    /// A rate change at run time (applies from the next transmission).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.busy_end = None; // the next transmission starts a new exact-timing period
    }

    /// Take the link down or bring it up. Returns the transmission-done time if bringing it up
    /// restarted the transmitter.
    pub fn set_up(&mut self, up: bool, now: Time) -> Option<Time> {
        self.up = up;
        if up && self.tx.is_none() {
            self.start_next(now)
        } else {
            None
        }
    }

    fn account_queue(&mut self, now: Time) {
        let dt = now.saturating_since(self.queue_changed_at).as_nanos();
        self.counters.queue_area += u128::from(dt) * self.queue.len() as u128;
        self.queue_changed_at = now;
    }

    fn artificial_loss(&mut self, now: Time, flow: u32) -> bool {
        let (seed, key, epoch) = (self.seed, self.loss_key, self.loss_epoch);
        match &mut self.loss {
            None => false,
            Some(LossState::Aggregate(p)) => p.drops(now),
            Some(LossState::PerFlow {
                model,
                since,
                procs,
            }) => {
                let i = flow as usize;
                if procs.len() <= i {
                    procs.resize_with(i + 1, || None);
                }
                // Each flow's process starts when the model did, with its own stream.
                let p = procs[i].get_or_insert_with(|| {
                    LossProcess::new(
                        model.clone(),
                        *since,
                        Self::loss_rng(seed, key, epoch, Some(flow)),
                    )
                });
                p.drops(now)
            }
        }
    }

    /// A packet of `size` bytes from `flow` arrives at `now`. On success returns the time its
    /// transmission ends if it went straight onto an idle wire (the caller schedules that).
    pub fn arrive(
        &mut self,
        now: Time,
        id: PacketId,
        size: u32,
        flow: u32,
    ) -> Result<Option<Time>, LinkDrop> {
        self.counters.arrivals += 1;
        self.counters.arrival_bytes += u64::from(size);
        if !self.up {
            self.counters.down_drops += 1;
            return Err(LinkDrop::Down);
        }
        if self.artificial_loss(now, flow) {
            self.counters.artificial_drops += 1;
            return Err(LinkDrop::Artificial);
        }
        self.account_queue(now);
        if let Err(d) = self.queue.enqueue_from(now, id, size, flow) {
            match d {
                QueueDrop::Overflow => self.counters.overflow_drops += 1,
                QueueDrop::Early => self.counters.early_drops += 1,
            }
            return Err(LinkDrop::Queue(d));
        }
        if self.tx.is_none() {
            Ok(self.start_next(now))
        } else {
            Ok(None)
        }
    }

    /// Put the head packet on the wire if the link is up; returns when it will be done.
    fn start_next(&mut self, now: Time) -> Option<Time> {
        debug_assert!(self.tx.is_none());
        if !self.up {
            return None;
        }
        self.account_queue(now);
        let (id, size) = self.queue.dequeue(now)?;
        let dur = self.serialisation(now, size);
        self.tx = Some((id, now, dur));
        Some(now.saturating_add(dur))
    }

    /// How long `size` bytes starting at `now` occupy the wire, measured from the start of the
    /// busy period (see `busy_origin`).
    fn serialisation(&mut self, now: Time, size: u32) -> Dur {
        let bps = u128::from(self.rate.bps());
        if bps == 0 {
            self.busy_end = None;
            return self.rate.tx_time(size);
        }
        if self.busy_end != Some(now) {
            self.busy_origin = now;
            self.busy_bits = 0;
        }
        self.busy_bits += u128::from(size) * 8;
        // The u128 division is a library call and showed in profiles; busy periods under about
        // 18 Gbit (every one at the theses' rates) fit u64, which divides in hardware.
        let since_origin = match u64::try_from(self.busy_bits)
            .ok()
            .and_then(|b| b.checked_mul(1_000_000_000))
        {
            Some(ns_bits) => u128::from(ns_bits.div_ceil(self.rate.bps())),
            None => (self.busy_bits * 1_000_000_000).div_ceil(bps),
        };
        let end = self
            .busy_origin
            .saturating_add(Dur(since_origin.min(u128::from(u64::MAX)) as u64));
        self.busy_end = Some(end);
        end.saturating_since(now)
    }

    /// The transmission in progress ended at `now`: the packet enters the pipe. Returns the
    /// packet, whether the pipe was empty (the caller then schedules its head event), and the
    /// end time of the next transmission if one started.
    pub fn tx_done(&mut self, now: Time) -> (PacketId, bool, Option<Time>) {
        let (id, _start, dur) = self.tx.take().expect("tx_done without a transmission");
        self.counters.tx_packets += 1;
        self.counters.busy_ns += u128::from(dur.as_nanos());
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((now + self.delay, id));
        let next = self.start_next(now);
        (id, was_empty, next)
    }

    /// Count the bytes of a packet that finished transmission (kept apart from `tx_done` so the
    /// link does not need the packet pool).
    pub fn count_tx_bytes(&mut self, bytes: u32) {
        self.counters.tx_bytes += u64::from(bytes);
    }

    /// The arrival time of the packet at the head of the pipe.
    pub fn pipe_head(&self) -> Option<Time> {
        self.pipe.front().map(|(t, _)| *t)
    }

    /// Remove the head of the pipe (it reached the next hop at `now`).
    pub fn pipe_pop(&mut self) -> Option<PacketId> {
        self.pipe.pop_front().map(|(_, id)| id)
    }

    /// The counters as of `now` (busy time and queue area include the partial current period).
    pub fn counters(&self, now: Time) -> LinkCounters {
        let mut c = self.counters;
        if let Some((_, start, _)) = self.tx {
            c.busy_ns += u128::from(now.saturating_since(start).as_nanos());
        }
        c.queue_area += u128::from(now.saturating_since(self.queue_changed_at).as_nanos())
            * self.queue.len() as u128;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::QueueLimit;

    fn link(limit: u32) -> Link {
        Link::new(
            &LinkSpec::new(
                "l",
                Rate::from_mbps(8),
                Dur::from_millis(10),
                QueueSpec::DropTail(QueueLimit::Packets(limit)),
            ),
            1,
        )
    }

    #[test]
    fn an_idle_link_starts_transmitting_at_once_and_queues_the_rest() {
        let mut l = link(10);
        // 1000 B at 8 Mb/s: 1 ms on the wire.
        assert_eq!(
            l.arrive(Time::ZERO, 0, 1000, 0),
            Ok(Some(Time::from_millis(1)))
        );
        assert_eq!(l.arrive(Time::ZERO, 1, 1000, 0), Ok(None));
        assert_eq!(l.queue().len(), 1);
        let (id, was_empty, next) = l.tx_done(Time::from_millis(1));
        assert_eq!((id, was_empty, next), (0, true, Some(Time::from_millis(2))));
        assert_eq!(l.pipe_head(), Some(Time::from_millis(11)));
        assert_eq!(l.in_transit(), 2);
    }

    #[test]
    fn a_down_link_drops_arrivals_and_pauses_until_it_comes_back() {
        let mut l = link(10);
        l.arrive(Time::ZERO, 0, 1000, 0).unwrap();
        l.arrive(Time::ZERO, 1, 1000, 0).unwrap();
        l.set_up(false, Time::from_micros(500));
        assert_eq!(
            l.arrive(Time::from_micros(600), 2, 1000, 0),
            Err(LinkDrop::Down)
        );
        // The packet on the wire finishes; the queued one waits.
        let (_, _, next) = l.tx_done(Time::from_millis(1));
        assert_eq!(next, None);
        assert_eq!(l.queue().len(), 1);
        assert_eq!(
            l.set_up(true, Time::from_millis(5)),
            Some(Time::from_millis(6))
        );
        let c = l.counters(Time::from_millis(6));
        assert_eq!(c.down_drops, 1);
        assert_eq!(c.arrivals, 3);
        assert_eq!(c.busy_ns, 2_000_000);
    }

    #[test]
    fn queue_area_integrates_waiting_packets_over_time() {
        let mut l = link(10);
        l.arrive(Time::ZERO, 0, 1000, 0).unwrap(); // on the wire
        l.arrive(Time::ZERO, 1, 1000, 0).unwrap(); // waits 1 ms
        l.arrive(Time::ZERO, 2, 1000, 0).unwrap(); // waits 2 ms
        l.tx_done(Time::from_millis(1));
        l.tx_done(Time::from_millis(2));
        l.tx_done(Time::from_millis(3));
        assert_eq!(l.counters(Time::from_millis(3)).queue_area, 3_000_000);
    }

    #[test]
    fn per_flow_loss_gives_each_flow_its_own_process() {
        let spec = LinkSpec::new(
            "lossy",
            Rate::from_mbps(100),
            Dur::ZERO,
            QueueSpec::DropTail(QueueLimit::Packets(1_000_000)),
        )
        .with_loss(LossSpec {
            model: LossModel::Periodic { every: 10 },
            scope: LossScope::PerFlow,
        });
        let mut l = Link::new(&spec, 1);
        // Flow 0 sends 3 packets for each of flow 1's; both lose exactly one in ten.
        let mut lost = [0u32; 2];
        let mut id = 0;
        for _ in 0..100 {
            for flow in [0u32, 0, 0, 1] {
                if l.arrive(Time::ZERO, id, 100, flow) == Err(LinkDrop::Artificial) {
                    lost[flow as usize] += 1;
                }
                id += 1;
            }
        }
        assert_eq!(lost, [30, 10]);
    }
}
