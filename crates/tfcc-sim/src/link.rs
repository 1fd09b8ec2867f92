//! A unidirectional link: artificial loss, a queue, a transmitter and a propagation pipe.
//!
//! A packet arriving at a link meets, in order: the up/down state (a down link drops what
//! arrives, like an ns-2 link dropout), the optional artificial loss model (its drops are counted
//! apart from queue drops), and the queue discipline. The transmitter serialises the head packet
//! in exactly `Rate::tx_time(size)` integer nanoseconds; the packet then enters the propagation
//! pipe and reaches the next hop `delay` later, so it arrives `tx_time + delay` after it started
//! to go out, as in ns-2's `LinkDelay`.
//!
//! Events stay few (htsim's pattern): the pipe, a FIFO because the delay is constant, has one
//! pending event for its head packet, and a "transmission done" event is pending only while
//! packets wait behind the one on the wire. A packet enters the pipe when its transmission
//! starts, stamped with the time it will reach the next hop, because its fate is sealed then;
//! the end of a transmission with nothing waiting therefore needs no event at all, which on an
//! uncongested hop (every access link, the whole ACK path) halves the events per packet. Counters
//! read mid-transmission leave the packet on the wire out, so they match a link that counts at
//! the end of each transmission.
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
///
/// In a fixed order: the counts every packet moves fill the first 64 bytes, the drop counts
/// follow (see [`Link`]'s layout).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct LinkCounters {
    pub arrivals: u64,
    /// Bytes of the arrivals (dropped ones included): the offered load, for the PTCP oracle.
    pub arrival_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Nanoseconds spent transmitting (up to the time of reading).
    pub busy_ns: u128,
    /// Integral of the waiting-packet count over time, packet·nanoseconds.
    pub queue_area: u128,
    /// Queue overflows and RED forced drops.
    pub overflow_drops: u64,
    /// RED early drops.
    pub early_drops: u64,
    pub artificial_drops: u64,
    pub down_drops: u64,
}

impl LinkCounters {
    pub fn queue_drops(&self) -> u64 {
        self.overflow_drops + self.early_drops
    }
}

/// A link's high-water marks over the whole run: what its queue held at most (waiting packets
/// and bytes, the packet on the wire excluded, as the limit counts them) and the largest packet
/// that arrived. They bound what [`crate::queue::Queue::packet_capacity`] and
/// [`crate::queue::Queue::byte_capacity`] promise, which the simulator-wide invariant test
/// (`crates/tfcc-sim/tests/invariants.rs`) checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkPeaks {
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    pub packet_bytes: u32,
}

enum LossState {
    Aggregate(LossProcess),
    PerFlow {
        model: LossModel,
        since: Time,
        procs: Vec<Option<LossProcess>>,
    },
}

/// What the simulator must schedule after a link changed state: the arrival of the pipe's new
/// head at the next hop, and the end of the transmission that packets wait behind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Wake {
    pub pipe: Option<Time>,
    pub tx_done: Option<Time>,
}

/// A link's run-time state.
///
/// The layout is fixed (`repr(C)`) and starts on a cache line: a dumbbell has four access links
/// per flow, each packet crosses three links each way, and with thousands of flows taking turns
/// every line of a link that a packet touches is a cache miss. So the fields a packet's
/// arrival, transmission and delivery read or write come first and fill the first five lines;
/// the drop counters, the name and the loss-stream keys, which a packet that is not dropped
/// never reads, come last.
#[repr(C, align(64))]
pub struct Link {
    queue: Queue,
    pipe: VecDeque<(Time, PacketId)>,
    /// Boxed: a loss process (model, state, random stream) is most of the size of a link that
    /// has none, and every arrival reads the fields around it.
    loss: Option<Box<LossState>>,
    rate: Rate,
    delay: Dur,
    /// The last transmission: when it ends (the wire is free from then) and its size. The
    /// packet itself is already in `pipe`.
    tx_end: Time,
    queue_changed_at: Time,
    /// The current busy period: when it began, the bits started in it, and when the last of
    /// them ends. Back-to-back transmissions end at `origin + ceil(bits / rate)`, so rounding
    /// each one to whole nanoseconds never accumulates: with per-packet rounding a 15 Mb/s link
    /// (554 666.7 ns per 1040 B) drifts 1.5 µs late every 4500 packets, enough to flip the
    /// near-ties between a departure and an ACK-clocked arrival and, over a run, to change
    /// DropTail's drop count by 15 % against ns-2 (whose double-precision times do not drift).
    ///
    /// The elapsed part is kept as the exact quotient and remainder of `bits · 10⁹ / rate`,
    /// advanced per packet by a quotient and remainder cached for the last packet size, so the
    /// hot path divides only when the size or rate changes (a hardware 64-bit division per
    /// packet per hop was a visible share of small runs).
    busy_end: Option<Time>,
    busy_origin: Time,
    busy_ns: u64,
    busy_rem: u64,
    tx_dur: Dur,
    tx_size: u32,
    up: bool,
    /// A stalled link (see [`Link::set_stalled`]): down, but arrivals still join its queue.
    stalled: bool,
    /// A `TxDone` event is pending (packets wait behind the one on the wire).
    tx_done_armed: bool,
    /// The wire went idle at `tx_end` and the queue has not been told yet (it is told once,
    /// on the next arrival, as a transmitter finding its queue empty would have told it then).
    idle_unreported: bool,
    /// High-water marks over the whole run, for invariant checks (not windowed).
    peaks: LinkPeaks,
    /// `size · 8 · 10⁹` divided by `rate` for the last size seen: (rate, size, quotient, remainder).
    step: (u64, u32, u64, u64),
    /// Its per-packet counts first, its drop counts last (`LinkCounters` is laid out so).
    counters: LinkCounters,
    // Not read per packet.
    pub name: String,
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
            stalled: false,
            queue: Queue::new(&spec.queue, spec.rate, spec.delay, qrng),
            loss: None,
            tx_end: Time::ZERO,
            tx_dur: Dur::ZERO,
            tx_size: 0,
            tx_done_armed: false,
            idle_unreported: false,
            busy_origin: Time::ZERO,
            busy_ns: 0,
            busy_rem: 0,
            busy_end: None,
            step: (0, 0, 0, 0),
            pipe: VecDeque::with_capacity(16),
            counters: LinkCounters::default(),
            peaks: LinkPeaks::default(),
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
        self.loss = loss.map(|spec| {
            Box::new(match spec.scope {
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
            })
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

    /// A transmission is in progress at `now`.
    pub fn is_busy(&self, now: Time) -> bool {
        self.tx_end > now
    }

    /// Packets on the wire or propagating.
    pub fn in_transit(&self) -> usize {
        self.pipe.len()
    }

    /// Every packet the link holds: waiting, on the wire, propagating.
    pub fn packets(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.queue.ids().chain(self.pipe.iter().map(|(_, id)| *id))
    }

    /// A rate change at run time (applies from the next transmission).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.busy_end = None; // the next transmission starts a new exact-timing period
    }

    /// Take the link down or bring it up; what to schedule if bringing it up restarted the
    /// transmitter.
    ///
    /// A down link is a link whose bandwidth is zero: it drops every arrival and *keeps* the
    /// packets waiting in its queue, which go out, late, when it comes back. This is what the
    /// dropouts of thesis 004 (Sec. 4.8.2, E11 setup 2, Table 4.8: "0 KBit/s" for 10 and 30 s)
    /// were in Dummynet: reconfiguring a pipe's bandwidth leaves its queue in place (Dummynet's
    /// pipe configuration only resets the queues' transmission credit), while `bw 0` itself
    /// would mean an unlimited pipe, and a 100 % `plr` would drain the queue at once at the old
    /// rate. It is also the one reading under which TCP comes back "immediately after the
    /// conditions change", as the thesis reports: its held segments are delivered and their
    /// ACKs restart it before its backed-off retransmission timer fires. A link that loses
    /// carrier (its queue discarded) is not modelled; a scheduled 100 % loss (`loss` event)
    /// gives the drain reading.
    pub fn set_up(&mut self, up: bool, now: Time) -> Wake {
        self.up = up;
        if !up || self.queue.is_empty() || self.tx_done_armed {
            return Wake::default();
        }
        if self.is_busy(now) {
            self.tx_done_armed = true;
            Wake {
                pipe: None,
                tx_done: Some(self.tx_end),
            }
        } else {
            self.start_next(now)
        }
    }

    /// Stall the link or release it: what to schedule if releasing it restarted the
    /// transmitter.
    ///
    /// A stalled link stops transmitting but, unlike a down one ([`Link::set_up`]), keeps
    /// taking arrivals into its queue (dropping only what overflows it), and what waits goes out
    /// back to back when it is released. This is a path that holds packets rather than losing
    /// them: thesis 004's UCL dropouts (Sec. 4.9, E12: "packets were merely delayed and only few
    /// were lost", followed by "a short burst of packets, caused by the simultaneous delivery of
    /// the delayed packets").
    pub fn set_stalled(&mut self, stalled: bool, now: Time) -> Wake {
        self.stalled = stalled;
        self.set_up(!stalled, now)
    }

    fn account_queue(&mut self, now: Time) {
        let dt = now.saturating_since(self.queue_changed_at).as_nanos();
        self.counters.queue_area += u128::from(dt) * self.queue.len() as u128;
        self.queue_changed_at = now;
    }

    fn artificial_loss(&mut self, now: Time, flow: u32) -> bool {
        let (seed, key, epoch) = (self.seed, self.loss_key, self.loss_epoch);
        match self.loss.as_deref_mut() {
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

    /// A packet of `size` bytes from `flow` arrives at `now`. On success returns the events the
    /// caller must schedule (the pipe's head arrival if the pipe was empty, a transmission-done
    /// if the packet is the first to wait).
    pub fn arrive(
        &mut self,
        now: Time,
        id: PacketId,
        size: u32,
        flow: u32,
    ) -> Result<Wake, LinkDrop> {
        self.counters.arrivals += 1;
        self.counters.arrival_bytes += u64::from(size);
        self.peaks.packet_bytes = self.peaks.packet_bytes.max(size);
        if !self.up && !self.stalled {
            self.counters.down_drops += 1;
            return Err(LinkDrop::Down);
        }
        if self.artificial_loss(now, flow) {
            self.counters.artificial_drops += 1;
            return Err(LinkDrop::Artificial);
        }
        self.account_queue(now);
        let idle = !self.is_busy(now) && self.queue.is_empty();
        if idle && self.idle_unreported {
            // The wire went idle when the last transmission ended; no event marked it.
            self.idle_unreported = false;
            self.queue.mark_idle(self.tx_end);
        }
        if idle && self.up && self.queue.passes_through_empty(size) {
            // What enqueueing and dequeueing it would leave, without touching the FIFO.
            self.peaks.queue_pkts = self.peaks.queue_pkts.max(1);
            self.peaks.queue_bytes = self.peaks.queue_bytes.max(u64::from(size));
            return Ok(self.transmit(now, id, size));
        }
        if let Err(d) = self.queue.enqueue_from(now, id, size, flow) {
            match d {
                QueueDrop::Overflow => self.counters.overflow_drops += 1,
                QueueDrop::Early => self.counters.early_drops += 1,
            }
            return Err(LinkDrop::Queue(d));
        }
        self.peaks.queue_pkts = self.peaks.queue_pkts.max(self.queue.len() as u64);
        self.peaks.queue_bytes = self.peaks.queue_bytes.max(self.queue.bytes());
        if idle {
            Ok(self.start_next(now))
        } else if !self.tx_done_armed && self.up && self.is_busy(now) {
            self.tx_done_armed = true;
            Ok(Wake {
                pipe: None,
                tx_done: Some(self.tx_end),
            })
        } else {
            Ok(Wake::default())
        }
    }

    /// Put the head packet on the wire if the link is up: it enters the pipe at once, due at
    /// the next hop `delay` after its transmission ends.
    fn start_next(&mut self, now: Time) -> Wake {
        debug_assert!(!self.is_busy(now));
        if !self.up {
            return Wake::default();
        }
        self.account_queue(now);
        let Some((id, size)) = self.queue.dequeue(now) else {
            return Wake::default();
        };
        self.transmit(now, id, size)
    }

    /// Put packet `id` on the wire at `now` (the link is up and idle).
    fn transmit(&mut self, now: Time, id: PacketId, size: u32) -> Wake {
        let dur = self.serialisation(now, size);
        let end = now.saturating_add(dur);
        self.tx_end = end;
        self.tx_dur = dur;
        self.tx_size = size;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += u64::from(size);
        self.counters.busy_ns += u128::from(dur.as_nanos());
        let pipe_was_empty = self.pipe.is_empty();
        let due = end.saturating_add(self.delay);
        self.pipe.push_back((due, id));
        let more = !self.queue.is_empty();
        self.tx_done_armed = more;
        self.idle_unreported = !more;
        Wake {
            pipe: pipe_was_empty.then_some(due),
            tx_done: more.then_some(end),
        }
    }

    /// How long `size` bytes starting at `now` occupy the wire, measured from the start of the
    /// busy period (see `busy_origin`).
    fn serialisation(&mut self, now: Time, size: u32) -> Dur {
        let bps = self.rate.bps();
        if bps == 0 {
            self.busy_end = None;
            return self.rate.tx_time(size);
        }
        if self.busy_end != Some(now) {
            self.busy_origin = now;
            self.busy_ns = 0;
            self.busy_rem = 0;
        }
        if self.step.0 != bps || self.step.1 != size {
            let ns_bits = u128::from(size) * 8 * 1_000_000_000;
            let q = ns_bits / u128::from(bps);
            let r = ns_bits % u128::from(bps);
            self.step = (bps, size, q.min(u128::from(u64::MAX)) as u64, r as u64);
        }
        let (_, _, q, r) = self.step;
        self.busy_ns = self.busy_ns.saturating_add(q);
        self.busy_rem += r; // both below `bps`, so no overflow
        if self.busy_rem >= bps {
            self.busy_rem -= bps;
            self.busy_ns = self.busy_ns.saturating_add(1);
        }
        let since_origin = self.busy_ns.saturating_add(u64::from(self.busy_rem > 0));
        let end = self.busy_origin.saturating_add(Dur(since_origin));
        self.busy_end = Some(end);
        end.saturating_since(now)
    }

    /// The transmission ended at `now` with packets waiting: start the next one (unless the
    /// link is down; bringing it up restarts the transmitter).
    pub fn tx_done(&mut self, now: Time) -> Wake {
        debug_assert!(self.tx_done_armed && !self.is_busy(now));
        self.tx_done_armed = false;
        self.start_next(now)
    }

    /// How many transmissions have started; a call that starts one moves it by one.
    pub fn tx_started(&self) -> u64 {
        self.counters.tx_packets
    }

    /// The packet whose transmission started last, while it is still in the pipe.
    pub fn pipe_tail(&self) -> Option<PacketId> {
        self.pipe.back().map(|(_, id)| *id)
    }

    /// The arrival time of the packet at the head of the pipe.
    pub fn pipe_head(&self) -> Option<Time> {
        self.pipe.front().map(|(t, _)| *t)
    }

    /// Remove the head of the pipe (it reached the next hop at `now`).
    pub fn pipe_pop(&mut self) -> Option<PacketId> {
        tfcc_core::ring::pop_front_rewind(&mut self.pipe).map(|(_, id)| id)
    }

    /// The high-water marks of the whole run so far.
    pub fn peaks(&self) -> LinkPeaks {
        self.peaks
    }

    /// The counters as of `now` (busy time and queue area include the partial current period).
    pub fn counters(&self, now: Time) -> LinkCounters {
        let mut c = self.counters;
        if self.is_busy(now) {
            // Count the packet on the wire when it is done, and only its elapsed part as busy.
            c.tx_packets -= 1;
            c.tx_bytes -= u64::from(self.tx_size);
            c.busy_ns -= u128::from(self.tx_end.saturating_since(now).as_nanos());
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

    fn ms(n: u64) -> Time {
        Time::from_millis(n)
    }

    /// The layout `Link`'s documentation describes: what a packet touches ends within the
    /// first five cache lines of a line-aligned link.
    #[test]
    fn the_per_packet_fields_fill_the_first_five_cache_lines() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<Link>(), 64);
        let hot_end = offset_of!(Link, counters) + offset_of!(LinkCounters, overflow_drops);
        assert!(hot_end <= 5 * 64, "per-packet fields end at byte {hot_end}");
        assert!(offset_of!(Link, name) >= hot_end);
    }

    #[test]
    fn an_idle_link_starts_transmitting_at_once_and_queues_the_rest() {
        let mut l = link(10);
        // 1000 B at 8 Mb/s: 1 ms on the wire, then 10 ms of propagation. The first packet needs
        // no transmission-done event; the second, which waits, does.
        let w = Wake {
            pipe: Some(ms(11)),
            tx_done: None,
        };
        assert_eq!(l.arrive(Time::ZERO, 0, 1000, 0), Ok(w));
        let w = Wake {
            pipe: None,
            tx_done: Some(ms(1)),
        };
        assert_eq!(l.arrive(Time::ZERO, 1, 1000, 0), Ok(w));
        assert_eq!(l.arrive(Time::ZERO, 2, 1000, 0), Ok(Wake::default()));
        assert_eq!(l.queue().len(), 2);
        let w = Wake {
            pipe: None,
            tx_done: Some(ms(2)),
        };
        assert_eq!(l.tx_done(ms(1)), w);
        assert_eq!(l.pipe_head(), Some(ms(11)));
        assert_eq!(l.in_transit(), 2);
        // The last one goes out with nothing behind it: no further event.
        assert_eq!(l.tx_done(ms(2)), Wake::default());
        assert_eq!(l.in_transit(), 3);
        assert_eq!(l.pipe_pop(), Some(0));
        assert_eq!(l.pipe_head(), Some(ms(12)));
    }

    #[test]
    fn back_to_back_transmissions_end_at_the_exact_rounded_up_total() {
        // 15 Mb/s, 1040 B: 554 666.67 ns each; the n-th of a busy period ends at
        // ceil(n · 8320 · 10⁹ / 15·10⁶) ns, with no accumulated rounding.
        let mut l = Link::new(
            &LinkSpec::new(
                "l",
                Rate::from_mbps(15),
                Dur::ZERO,
                QueueSpec::DropTail(QueueLimit::Packets(100_000)),
            ),
            1,
        );
        let n = 10_000u64;
        for i in 0..n {
            let _ = l.arrive(Time::ZERO, i as PacketId, 1040, 0).unwrap();
        }
        let mut now = l.tx_end;
        for k in 2..=n {
            let _ = l.tx_done(now);
            let exact = (u128::from(k) * 8320 * 1_000_000_000).div_ceil(15_000_000);
            assert_eq!(u128::from(l.tx_end.as_nanos()), exact, "packet {k}");
            now = l.tx_end;
        }
        // A 40 B packet after the period ended starts a new one: its own rounded-up time.
        let _ = l.arrive(now + Dur::from_millis(1), 0, 40, 0).unwrap();
        assert_eq!(l.tx_end, now + Dur::from_millis(1) + Dur(21_334));
    }

    #[test]
    fn counters_leave_the_packet_on_the_wire_out_until_it_is_done() {
        let mut l = link(10);
        let _ = l.arrive(Time::ZERO, 0, 1000, 0).unwrap();
        let c = l.counters(Time::from_micros(400));
        assert_eq!((c.tx_packets, c.tx_bytes, c.busy_ns), (0, 0, 400_000));
        let c = l.counters(ms(1));
        assert_eq!((c.tx_packets, c.tx_bytes, c.busy_ns), (1, 1000, 1_000_000));
        let c = l.counters(ms(7));
        assert_eq!((c.tx_packets, c.tx_bytes, c.busy_ns), (1, 1000, 1_000_000));
    }

    #[test]
    fn a_down_link_drops_arrivals_and_pauses_until_it_comes_back() {
        let mut l = link(10);
        let _ = l.arrive(Time::ZERO, 0, 1000, 0).unwrap();
        let _ = l.arrive(Time::ZERO, 1, 1000, 0).unwrap();
        assert_eq!(l.set_up(false, Time::from_micros(500)), Wake::default());
        assert_eq!(
            l.arrive(Time::from_micros(600), 2, 1000, 0),
            Err(LinkDrop::Down)
        );
        // The packet on the wire finishes; the queued one waits.
        assert_eq!(l.tx_done(ms(1)), Wake::default());
        assert_eq!(l.queue().len(), 1);
        let w = l.set_up(true, ms(5));
        assert_eq!(w.tx_done, None);
        assert_eq!(l.pipe_head(), Some(ms(11)));
        let c = l.counters(ms(6));
        assert_eq!(c.down_drops, 1);
        assert_eq!(c.arrivals, 3);
        assert_eq!(c.busy_ns, 2_000_000);
        assert_eq!(c.tx_packets, 2);
    }

    #[test]
    fn a_link_brought_back_mid_transmission_waits_for_the_wire() {
        let mut l = link(10);
        let _ = l.arrive(Time::ZERO, 0, 1000, 0).unwrap();
        assert_eq!(l.set_up(false, Time::from_micros(100)), Wake::default());
        assert_eq!(
            l.arrive(Time::from_micros(200), 1, 1000, 0),
            Err(LinkDrop::Down)
        );
        assert_eq!(l.set_up(true, Time::from_micros(300)), Wake::default());
        let w = l.arrive(Time::from_micros(400), 1, 1000, 0).unwrap();
        assert_eq!(w.tx_done, Some(ms(1)));
        assert_eq!(l.tx_done(ms(1)).tx_done, None);
        assert_eq!(l.in_transit(), 2);
    }

    #[test]
    fn queue_area_integrates_waiting_packets_over_time() {
        let mut l = link(10);
        let _ = l.arrive(Time::ZERO, 0, 1000, 0).unwrap(); // on the wire
        let _ = l.arrive(Time::ZERO, 1, 1000, 0).unwrap(); // waits 1 ms
        let _ = l.arrive(Time::ZERO, 2, 1000, 0).unwrap(); // waits 2 ms
        let _ = l.tx_done(ms(1));
        let _ = l.tx_done(ms(2));
        assert_eq!(l.counters(ms(3)).queue_area, 3_000_000);
    }

    /// Artificial losses per flow when flow 0 sends three packets for each of flow 1's, 400
    /// packets through a fast, unqueued link with `loss`.
    fn losses_of_a_three_to_one_pattern(loss: LossSpec) -> [u32; 2] {
        let spec = LinkSpec::new(
            "lossy",
            Rate::from_mbps(100),
            Dur::ZERO,
            QueueSpec::DropTail(QueueLimit::Packets(1_000_000)),
        )
        .with_loss(loss);
        let mut l = Link::new(&spec, 1);
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
        lost
    }

    #[test]
    fn per_flow_loss_gives_each_flow_its_own_process() {
        // Both lose exactly one in ten of their own packets.
        let lost = losses_of_a_three_to_one_pattern(LossSpec {
            model: LossModel::Periodic { every: 10 },
            scope: LossScope::PerFlow,
        });
        assert_eq!(lost, [30, 10]);
    }

    /// 003 E3.1 (Sec. 3.5.1): "the link drops a packet each time P packets have been received"
    /// is one counter over all flows' arrivals, so where the drops land depends on the
    /// interleaving, not on each flow's own count.
    #[test]
    fn aggregate_count_loss_counts_every_flows_packets_together() {
        // Packets 10, 20, 30, ... of the aggregate are lost: in the pattern 0, 0, 0, 1 they fall
        // on flow 0 and flow 1 in turn, 20 each, though flow 1 sends a quarter of the packets.
        let lost = losses_of_a_three_to_one_pattern(LossSpec {
            model: LossModel::CountInterval {
                mean: 10.0,
                cv: 0.0,
            },
            scope: LossScope::Aggregate,
        });
        assert_eq!(lost, [20, 20]);
    }
}
