//! The discrete-event core: an integer-time priority queue with deterministic tie-breaking.
//!
//! Events are ordered by `(time, seq)`, where `seq` is the order in which they were scheduled,
//! so two events due at the same nanosecond always run in the order they were created and a run
//! is reproducible bit for bit (DESIGN.md, "Simulator"; htsim's `eventlist.cpp` does the same).
//! The clock only moves forward: scheduling in the past is a bug in the caller, caught by a
//! `debug_assert!` and, in release builds, clamped to "now" so time still never goes backwards.
//!
//! An event may be ranked [`Rank::First`] among those due at its nanosecond, or placed among
//! them by a drawn key ([`Rank::Shuffled`]), instead of taking its scheduling order: the
//! simulator's `ties` setting uses this for a link's transmission ends and arrivals at the same
//! instant (see [`Ties`]). Rank and key are the top bits of `seq`, so the order stays one
//! integer comparison.
//!
//! The queue is generic over a small `Copy` payload; the simulator keeps few events pending
//! (one per busy link, one per non-empty propagation pipe, one per armed endpoint timer), so a
//! binary heap of 24-byte entries is the right structure: the heap stays small and hot in cache.
//! It is written here rather than taken from `std::collections::BinaryHeap`, whose `pop` swaps
//! the last entry into the root and reads it back at once: with 24-byte entries that read
//! cannot be forwarded from the preceding stores, and profiles of small dumbbells put about a
//! tenth of the run on that stall. Moving a hole down instead reads each entry once.

use tfcc_core::Time;

/// Where an event stands among the events due at the same nanosecond: before all of them,
/// in scheduling order (the default), or in the order of a drawn key (`Shuffled`, the low
/// [`SHUFFLE_BITS`] bits of the key count). The in-order events sit at
/// the middle key, so a shuffled event goes before or after them with equal odds (a sender
/// that puts a packet straight onto a shared link, with no access link between, is an
/// in-order event, and it must not win every tie with a shuffled transmission end).
/// Within a rank (and a key), scheduling order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    First,
    InOrder,
    Shuffled(u32),
}

/// Bits of a `Rank::Shuffled` key: a million levels, so two shuffled events at one instant
/// fall back on scheduling order once in a million ties.
pub const SHUFFLE_BITS: u32 = 20;

/// Bits of `seq` below the rank and the shuffle key: the scheduling counter's. Past 2^42
/// events (4.4e12, days of this simulator's time) the counter runs into the key's bits; the
/// order then stays deterministic, only no longer strictly first-come among equal keys (and,
/// in `Ties::Fifo` runs, which never shuffle, not at all affected below 2^61 events).
const COUNTER_BITS: u32 = 62 - SHUFFLE_BITS;

impl Rank {
    /// The rank's top bits of `seq`, above the scheduling counter.
    const fn bits(self) -> u64 {
        match self {
            Rank::First => 0,
            Rank::InOrder => (1 << 62) | (1 << (SHUFFLE_BITS - 1) << COUNTER_BITS),
            Rank::Shuffled(k) => {
                (1 << 62) | (((k as u64) & ((1 << SHUFFLE_BITS) - 1)) << COUNTER_BITS)
            }
        }
    }
}

/// Whose turn it is when a packet arrives at a link on the very nanosecond the link's current
/// transmission ends (scenario key `ties`, docs/scenarios.md).
///
/// With integer time such ties are not rare: a 10 Mb/s CBR of 1000-byte packets (one every
/// 0.8 ms) and a 16 Mb/s bottleneck (0.5 ms a packet) meet every 4 ms, and at a full queue the
/// order decides who is dropped. In scheduling order (`Fifo`) the same side wins every time:
/// in 003's E3.5 all 1084 of the CBR's drops in 450-600 s fell on such ties, and its test flow
/// got 1.205 Mb/s where ns-2.35, whose double-precision clock rarely makes times exactly
/// equal, gives 1.026 (docs/reproductions/log/warc.md, warcfall). `Random` draws, from the
/// scenario seed, a key for every transmission end and every arrival at a hop, and ties among
/// them go in key order: each pair in either order with equal odds, as a clock of infinite
/// resolution would break them (arrivals tie with each other too: a 5 Mb/s CBR of the same
/// packets reaches the queue with every second packet of the 10 Mb/s one). `DeparturesFirst`
/// ends the transmission first every time (a router whose buffer slot frees as the last bit
/// leaves); arrivals among themselves keep scheduling order. `Fifo` stays the default: it is
/// ns-3's rule too (integer time stamps, ties by a scheduling counter), and phase effects are
/// better broken where an experimenter sees it (docs/reproductions/README.md, "Exact ties").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ties {
    #[default]
    Fifo,
    DeparturesFirst,
    Random,
}

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Strictly earlier in `(time, seq)` order; `seq` is unique, so this is a total order and
    /// every correct heap pops the same sequence.
    #[inline]
    fn before(&self, o: &Self) -> bool {
        (self.time, self.seq) < (o.time, o.seq)
    }
}

/// A deterministic event queue over payloads of type `E`.
pub struct EventQueue<E> {
    /// A binary min-heap in `(time, seq)` order: `heap[i]` is not after its children
    /// `heap[2i+1]` and `heap[2i+2]`.
    heap: Vec<Entry<E>>,
    next_seq: u64,
    now: Time,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(64)
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
            next_seq: 0,
            now: Time::ZERO,
            popped: 0,
        }
    }

    /// The time of the last event popped (the simulation clock).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `event` at `at`. Events at equal times run in scheduling order.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        self.schedule_ranked(at, event, Rank::InOrder);
    }

    /// Schedule `event` at `at`, placed by `rank` among the events due at the same time.
    pub fn schedule_ranked(&mut self, at: Time, event: E, rank: Rank) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let time = at.max(self.now);
        let seq = rank.bits() | self.next_seq;
        self.next_seq += 1;
        let item = Entry { time, seq, event };
        // Sift up: move parents down into the hole until the item's place is found.
        let mut i = self.heap.len();
        self.heap.push(item);
        while i > 0 {
            let parent = (i - 1) / 2;
            if !item.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = item;
    }

    /// The earliest pending event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let top = *self.heap.first()?;
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n > 0 {
            // Sift the last entry down from the root: move the earlier child up into the hole.
            let mut i = 0;
            loop {
                let mut c = 2 * i + 1;
                if c >= n {
                    break;
                }
                if c + 1 < n && self.heap[c + 1].before(&self.heap[c]) {
                    c += 1;
                }
                if !self.heap[c].before(&last) {
                    break;
                }
                self.heap[i] = self.heap[c];
                i = c;
            }
            self.heap[i] = last;
        }
        debug_assert!(top.time >= self.now, "time went backwards");
        self.now = top.time;
        self.popped += 1;
        Some((top.time, top.event))
    }

    /// The time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| e.time)
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events popped so far (the `events` figure of `summary.json`).
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), 'a');
        q.schedule(Time(3), 'b');
        q.schedule(Time(5), 'c');
        q.schedule(Time(3), 'd');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Time(3), 'b'),
                (Time(3), 'd'),
                (Time(5), 'a'),
                (Time(5), 'c')
            ]
        );
        assert_eq!(q.events_processed(), 4);
        assert_eq!(q.now(), Time(5));
    }

    #[test]
    fn events_scheduled_while_running_at_the_current_time_run_after_earlier_ones() {
        let mut q = EventQueue::new();
        q.schedule(Time(1), 0);
        q.schedule(Time(1), 1);
        let (t, _) = q.pop().unwrap();
        q.schedule(t, 2);
        assert_eq!(q.pop(), Some((Time(1), 1)));
        assert_eq!(q.pop(), Some((Time(1), 2)));
    }

    #[test]
    fn ranked_events_go_before_or_after_the_others_at_their_time() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), 'a');
        q.schedule(Time(5), 'b');
        q.schedule_ranked(Time(5), 'f', Rank::First);
        q.schedule_ranked(Time(5), 'g', Rank::First);
        q.schedule_ranked(Time(4), 'l', Rank::Shuffled(u32::MAX));
        let half = 1 << (SHUFFLE_BITS - 1);
        q.schedule_ranked(Time(5), 'y', Rank::Shuffled(half + 9));
        q.schedule_ranked(Time(5), 'x', Rank::Shuffled(3));
        q.schedule_ranked(Time(5), 'w', Rank::Shuffled(3 | (1 << SHUFFLE_BITS)));
        q.schedule_ranked(Time(5), 'h', Rank::Shuffled(half));
        let order: String = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        // Time first; then shuffled by key, below the middle before the in-order ones, from it
        // after them (a key's bits above SHUFFLE_BITS ignored).
        assert_eq!(order, "lfgxwabhy");
        // A First event scheduled at the current time runs before the rest still due then.
        let mut q = EventQueue::new();
        q.schedule(Time(1), 'a');
        q.schedule(Time(1), 'b');
        q.pop();
        q.schedule_ranked(Time(1), 'f', Rank::First);
        assert_eq!(q.pop(), Some((Time(1), 'f')));
        assert_eq!(q.pop(), Some((Time(1), 'b')));
    }

    proptest! {
        #[test]
        fn time_never_goes_backwards(ops in proptest::collection::vec((0u64..1_000, any::<bool>()), 1..300)) {
            // Interleave schedules (relative to now) and pops; popped times must be
            // non-decreasing and ties must come out in scheduling order.
            let mut q = EventQueue::new();
            let mut id = 0u64;
            let mut last = (Time::ZERO, 0u64);
            for (dt, pop) in ops {
                if pop {
                    if let Some((t, i)) = q.pop() {
                        prop_assert!(t > last.0 || (t == last.0 && i >= last.1));
                        last = (t, i);
                    }
                } else {
                    q.schedule(Time(q.now().0 + dt), id);
                    id += 1;
                }
            }
            let mut popped_before_drain = q.events_processed();
            while let Some((t, i)) = q.pop() {
                prop_assert!(t > last.0 || (t == last.0 && i >= last.1));
                last = (t, i);
                popped_before_drain += 1;
            }
            // Nothing lost, nothing duplicated.
            prop_assert_eq!(popped_before_drain, id);
            prop_assert_eq!(q.events_processed(), id);
        }
    }
}
