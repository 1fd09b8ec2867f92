//! The discrete-event core: an integer-time priority queue with deterministic tie-breaking.
//!
//! Events are ordered by `(time, seq)`, where `seq` is the order in which they were scheduled,
//! so two events due at the same nanosecond always run in the order they were created and a run
//! is reproducible bit for bit (DESIGN.md, "Simulator"; htsim's `eventlist.cpp` does the same).
//! The clock only moves forward: scheduling in the past is a bug in the caller, caught by a
//! `debug_assert!` and, in release builds, clamped to "now" so time still never goes backwards.
//!
//! The queue is generic over a small `Copy` payload; the simulator keeps few events pending
//! (one per busy link, one per non-empty propagation pipe, one per armed endpoint timer), so a
//! binary heap of 24-byte entries is the right structure: the heap stays small and hot in cache.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use tfcc_core::Time;

struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: `BinaryHeap` is a max-heap and the earliest `(time, seq)` must come out first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// A deterministic event queue over payloads of type `E`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: Time,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(64)
    }

    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
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
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let time = at.max(self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// The earliest pending event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        debug_assert!(e.time >= self.now, "time went backwards");
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// The time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
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
            while let Some((t, i)) = q.pop() {
                prop_assert!(t > last.0 || (t == last.0 && i >= last.1));
                last = (t, i);
            }
        }
    }
}
