//! Deficit round robin (Shreedhar and Varghese, "Efficient Fair Queuing Using Deficit
//! Round-Robin", 1996; 003 §4.5.2 cites it as \[SV96\]): the packet scheduler that thesis 003 puts
//! at the user-side gateway in place of MSF-RS to show that packet scheduling there gives no
//! differentiation (Fig. 4.10).
//!
//! Packets are classified into queues, per flow or, with a class map, per class. The non-empty
//! queues form a round-robin list. When a queue reaches the head of the list it is credited its
//! quantum (bytes); it then sends head packets while they fit in its deficit counter, and goes
//! to the tail of the list with the remainder when the next packet does not fit. A queue that
//! empties loses its remainder (so an idle queue cannot bank credit). Over any interval in
//! which two queues stay backlogged, the bytes they send differ by at most one quantum plus one
//! maximum packet from their quanta's ratio, whatever their packet sizes.
//!
//! Buffer: one shared limit in packets over all queues, as a DropTail queue's `limit` (an
//! arrival is refused when `waiting + 1 >= limit`). Refusing the arrival rather than pushing
//! out a packet of the longest queue keeps the link's drop accounting unchanged (a push-out
//! would drop a packet that is already queued); it can let one flow fill the buffer, which the
//! thesis' use (a gateway whose queues stay empty) never exercises.

use crate::packet_pool::PacketId;
use std::collections::VecDeque;

/// A DRR queue's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct DrrConfig {
    /// Bytes credited to a queue of weight 1 per round. At least one maximum packet (1000 B in
    /// the theses' scenarios) keeps a round O(1) per packet; a smaller quantum still works but
    /// a large packet then waits several rounds. Zero is treated as 1 byte.
    pub quantum: u32,
    /// Shared buffer in packets, counted as DropTail's `limit` (ns-2 style: `limit - 1`
    /// waiting).
    pub limit: u32,
    /// Queue of each flow id (`class_of[flow]`); a flow beyond the map, or an empty map, gets
    /// a queue of its own (per-flow DRR) after the mapped classes.
    pub class_of: Vec<u32>,
    /// Weight of each class queue (its quantum is `quantum · weight`, at least 1 byte); queues
    /// without a weight here have weight 1.
    pub weights: Vec<f64>,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            // One 1000-byte packet, the theses' segment size.
            quantum: 1000,
            // ns-2's default `limit_`.
            limit: crate::queue::NS2_DEFAULT_LIMIT,
            class_of: Vec::new(),
            weights: Vec::new(),
        }
    }
}

/// One DRR queue.
#[derive(Clone, Debug, Default)]
struct Bucket {
    packets: VecDeque<(PacketId, u32)>,
    /// Bytes this queue may still send in its current turn.
    deficit: u64,
    /// Bytes credited per turn.
    quantum: u64,
    /// Whether the queue is in the round-robin list.
    listed: bool,
}

/// The DRR state: per-queue FIFOs and the round-robin list of non-empty queues.
#[derive(Clone, Debug)]
pub struct Drr {
    cfg: DrrConfig,
    buckets: Vec<Bucket>,
    /// Non-empty queues in round-robin order; the head is the one being served.
    active: VecDeque<usize>,
    /// Whether the head of `active` has already been credited its quantum in this turn.
    credited: bool,
    len: usize,
    bytes: u64,
}

impl Drr {
    pub fn new(cfg: &DrrConfig) -> Drr {
        Drr {
            cfg: cfg.clone(),
            buckets: Vec::new(),
            active: VecDeque::with_capacity(16),
            credited: false,
            len: 0,
            bytes: 0,
        }
    }

    /// The queue a packet of `flow` joins: its class when the map has it, else a per-flow
    /// queue numbered after the classes.
    fn bucket_of(&self, flow: u32) -> usize {
        let classes = self
            .cfg
            .class_of
            .iter()
            .map(|&c| c as usize + 1)
            .max()
            .unwrap_or(0);
        match self.cfg.class_of.get(flow as usize) {
            Some(&c) => c as usize,
            None => classes + flow as usize,
        }
    }

    fn quantum_of(&self, bucket: usize) -> u64 {
        let w = self
            .cfg
            .weights
            .get(bucket)
            .copied()
            .filter(|w| w.is_finite() && *w > 0.0)
            .unwrap_or(1.0);
        ((f64::from(self.cfg.quantum.max(1)) * w).round() as u64).max(1)
    }

    /// Offer a packet of `flow`; `false` when the shared buffer is full (the arrival is
    /// dropped).
    pub fn enqueue(&mut self, id: PacketId, size: u32, flow: u32) -> bool {
        if self.len as u64 + 1 >= u64::from(self.cfg.limit) {
            return false;
        }
        let b = self.bucket_of(flow);
        if self.buckets.len() <= b {
            // Grows once per new flow or class, not per packet.
            let start = self.buckets.len();
            self.buckets.resize_with(b + 1, Bucket::default);
            for i in start..=b {
                self.buckets[i].quantum = self.quantum_of(i);
            }
        }
        let bucket = &mut self.buckets[b];
        bucket.packets.push_back((id, size));
        if !bucket.listed {
            bucket.listed = true;
            bucket.deficit = 0;
            self.active.push_back(b);
        }
        self.len += 1;
        self.bytes += u64::from(size);
        true
    }

    /// The next packet in DRR order, or `None` when every queue is empty.
    pub fn dequeue(&mut self) -> Option<(PacketId, u32)> {
        loop {
            let b = *self.active.front()?;
            let bucket = &mut self.buckets[b];
            if !self.credited {
                bucket.deficit += bucket.quantum;
                self.credited = true;
            }
            let Some(&(id, size)) = bucket.packets.front() else {
                // Unreachable while `listed` tracks non-emptiness; recover rather than spin.
                bucket.listed = false;
                bucket.deficit = 0;
                self.active.pop_front();
                self.credited = false;
                continue;
            };
            if u64::from(size) <= bucket.deficit {
                bucket.packets.pop_front();
                bucket.deficit -= u64::from(size);
                if bucket.packets.is_empty() {
                    bucket.listed = false;
                    bucket.deficit = 0;
                    self.active.pop_front();
                    self.credited = false;
                }
                self.len -= 1;
                self.bytes -= u64::from(size);
                return Some((id, size));
            }
            // The head packet does not fit: the turn ends, the remainder is kept.
            self.active.rotate_left(1);
            self.credited = false;
        }
    }

    /// Waiting packets.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Waiting bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The most packets the shared buffer holds waiting.
    pub fn capacity(&self) -> u64 {
        u64::from(self.cfg.limit.saturating_sub(1))
    }

    /// The waiting packets, queue by queue.
    pub fn ids(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.buckets
            .iter()
            .flat_map(|b| b.packets.iter().map(|(id, _)| *id))
    }

    /// Waiting packets in each queue (classes first, then per-flow queues).
    pub fn queue_lengths(&self) -> impl Iterator<Item = usize> + '_ {
        self.buckets.iter().map(|b| b.packets.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn drr(quantum: u32, class_of: Vec<u32>, weights: Vec<f64>) -> Drr {
        Drr::new(&DrrConfig {
            quantum,
            limit: 100_000,
            class_of,
            weights,
        })
    }

    /// Sends `n` packets and returns the bytes each flow sent; `flow_of` maps ids back.
    fn serve(q: &mut Drr, n: usize, flow_of: impl Fn(PacketId) -> usize, flows: usize) -> Vec<u64> {
        let mut sent = vec![0u64; flows];
        for _ in 0..n {
            let (id, size) = q.dequeue().expect("backlogged");
            sent[flow_of(id)] += u64::from(size);
        }
        sent
    }

    #[test]
    fn equal_quanta_give_equal_bytes_whatever_the_packet_sizes() {
        // Flow 0 sends 1500-byte packets, flow 1 100-byte packets, both backlogged.
        let mut q = drr(1500, Vec::new(), Vec::new());
        for i in 0..200u32 {
            assert!(q.enqueue(2 * i, 1500, 0));
        }
        for i in 0..3000u32 {
            assert!(q.enqueue(2 * i + 1, 100, 1));
        }
        // 150 rounds: each round flow 0 sends one 1500 B packet, flow 1 fifteen 100 B ones.
        let sent = serve(&mut q, 150 * 16, |id| (id % 2) as usize, 2);
        assert_eq!(sent, vec![150 * 1500, 150 * 1500]);
    }

    #[test]
    fn a_round_serves_each_queue_its_quantum_in_turn() {
        let mut q = drr(1000, Vec::new(), Vec::new());
        for i in 0..4u32 {
            q.enqueue(10 + i, 500, 0);
            q.enqueue(20 + i, 1000, 1);
        }
        let order: Vec<PacketId> = std::iter::from_fn(|| q.dequeue().map(|(id, _)| id)).collect();
        assert_eq!(order, vec![10, 11, 20, 12, 13, 21, 22, 23]);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn class_weights_scale_the_quanta() {
        // Flows 0-1 in class 0 (weight 4), flows 2-3 in class 1 (weight 1).
        let mut q = drr(1000, vec![0, 0, 1, 1], vec![4.0, 1.0]);
        for i in 0..1000u32 {
            assert!(q.enqueue(4 * i + (i % 2), 1000, i % 2));
            assert!(q.enqueue(4 * i + 2 + (i % 2), 1000, 2 + i % 2));
        }
        let sent = serve(&mut q, 500, |id| (id % 4 / 2) as usize, 2);
        assert_eq!(sent, vec![400_000, 100_000]);
    }

    #[test]
    fn a_packet_larger_than_the_quantum_is_not_starved() {
        // Quantum 100 B: the 1000-byte packet needs ten turns of credit, while flow 1's small
        // packets keep coming; it must still go out.
        let mut q = drr(100, Vec::new(), Vec::new());
        q.enqueue(0, 1000, 0);
        for i in 1..=100u32 {
            q.enqueue(i, 100, 1);
        }
        let pos = std::iter::from_fn(|| q.dequeue().map(|(id, _)| id))
            .position(|id| id == 0)
            .expect("served");
        // Ten turns of flow 1 (one 100 B packet each) before flow 0 has 1000 B of credit.
        assert_eq!(pos, 9);
    }

    #[test]
    fn the_shared_buffer_counts_like_droptail() {
        let mut q = Drr::new(&DrrConfig {
            limit: 5,
            ..DrrConfig::default()
        });
        let accepted = (0..10u32).filter(|&i| q.enqueue(i, 1000, i % 3)).count();
        assert_eq!(accepted, 4);
        assert_eq!(q.len(), 4);
        assert_eq!(q.capacity(), 4);
        q.dequeue();
        assert!(q.enqueue(99, 1000, 7));
    }

    #[test]
    fn an_emptied_queue_banks_no_credit() {
        let mut q = drr(3000, Vec::new(), Vec::new());
        q.enqueue(0, 1000, 0);
        q.enqueue(1, 1000, 1);
        assert_eq!(q.dequeue(), Some((0, 1000)));
        assert_eq!(q.dequeue(), Some((1, 1000)));
        // Flow 0 left 2000 B unused; after it returns it gets one quantum, not three.
        for i in 0..6u32 {
            q.enqueue(10 + i, 1000, 0);
            q.enqueue(20 + i, 1000, 1);
        }
        let order: Vec<PacketId> = (0..6)
            .filter_map(|_| q.dequeue().map(|(id, _)| id))
            .collect();
        assert_eq!(order, vec![10, 11, 12, 20, 21, 22]);
    }

    proptest! {
        /// Over any prefix of service with both queues backlogged, the bytes sent differ by at
        /// most one quantum plus one maximum packet (Shreedhar and Varghese's fairness bound
        /// for equal quanta).
        #[test]
        fn backlogged_queues_stay_within_a_quantum_and_a_packet(
            sizes in proptest::collection::vec((1u32..1500, 1u32..1500), 50..200),
            quantum in 1500u32..4000,
        ) {
            let mut q = drr(quantum, Vec::new(), Vec::new());
            for (i, (a, b)) in sizes.iter().enumerate() {
                let i = i as u32;
                prop_assert!(q.enqueue(2 * i, *a, 0));
                prop_assert!(q.enqueue(2 * i + 1, *b, 1));
            }
            let total0: u64 = sizes.iter().map(|s| u64::from(s.0)).sum();
            let total1: u64 = sizes.iter().map(|s| u64::from(s.1)).sum();
            let mut sent = [0u64; 2];
            while let Some((id, size)) = q.dequeue() {
                sent[(id % 2) as usize] += u64::from(size);
                if sent[0] < total0 && sent[1] < total1 {
                    let diff = sent[0].abs_diff(sent[1]);
                    prop_assert!(diff <= u64::from(quantum) + 1500, "diff {diff}");
                }
            }
            prop_assert_eq!(sent, [total0, total1]);
        }
    }
}
