//! The packet arena: every packet in the network lives in one `Vec`, addressed by a `u32` index.
//!
//! Queues, pipes and events hold 4-byte indices instead of packets, and a freed slot is reused
//! through a free list, so once the pool has grown to the peak number of packets in flight the
//! hot path allocates nothing (DESIGN.md, "Simulator"; htsim's `PacketDB` does the same).

use tfcc_core::{Packet, Time};

/// Which way a packet travels along its flow's routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Sender to receiver (data).
    Forward,
    /// Receiver to sender (feedback: ACKs, TFRC reports, ...).
    Reverse,
}

/// A packet plus what the simulator needs to move it.
#[derive(Clone, Copy, Debug)]
pub struct SimPacket {
    pub pkt: Packet,
    /// Index of the flow it belongs to.
    pub flow: u32,
    pub dir: Direction,
    /// Position on the route: the link it is on or about to enter.
    pub hop: u16,
    /// When it entered its current link's queue (for queueing-delay accounting).
    pub enqueued_at: Time,
}

/// Index of a packet in the pool.
pub type PacketId = u32;

#[derive(Default)]
pub struct PacketPool {
    slots: Vec<SimPacket>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    /// Store `p` and return its index, reusing a free slot when there is one.
    pub fn alloc(&mut self, p: SimPacket) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            let id = self.slots.len() as PacketId;
            self.slots.push(p);
            id
        }
    }

    /// Return a slot to the free list. The caller must not use `id` afterwards.
    pub fn free(&mut self, id: PacketId) {
        debug_assert!((id as usize) < self.slots.len());
        self.free.push(id);
    }

    pub fn get(&self, id: PacketId) -> &SimPacket {
        &self.slots[id as usize]
    }

    pub fn get_mut(&mut self, id: PacketId) -> &mut SimPacket {
        &mut self.slots[id as usize]
    }

    /// Packets currently stored (allocated and not freed).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The high-water mark: slots ever allocated.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u64) -> SimPacket {
        SimPacket {
            pkt: Packet::raw(seq, Time::ZERO, 1000),
            flow: 0,
            dir: Direction::Forward,
            hop: 0,
            enqueued_at: Time::ZERO,
        }
    }

    #[test]
    fn freed_slots_are_reused_so_the_pool_stops_growing() {
        let mut pool = PacketPool::with_capacity(4);
        let a = pool.alloc(pkt(1));
        let b = pool.alloc(pkt(2));
        pool.free(a);
        let c = pool.alloc(pkt(3));
        assert_eq!(c, a);
        assert_eq!(pool.capacity_used(), 2);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.get(b).pkt, Packet::raw(2, Time::ZERO, 1000));
        assert_eq!(pool.get(c).pkt, Packet::raw(3, Time::ZERO, 1000));
        for _ in 0..1000 {
            let x = pool.alloc(pkt(9));
            pool.free(x);
        }
        assert_eq!(pool.capacity_used(), 3);
    }
}
