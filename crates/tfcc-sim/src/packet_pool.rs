//! The packet arena: every packet in the network lives in one `Vec`, addressed by a `u32` index.
//!
//! Queues, pipes and events hold 4-byte indices instead of packets, and a freed slot is reused
//! through a free list, so once the pool has grown to the peak number of packets in flight the
//! hot path allocates nothing (DESIGN.md, "Simulator"; htsim's `PacketDB` does the same).

use tfcc_core::Packet;

/// Which way a packet travels along its flow's routes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Sender to receiver (data).
    Forward,
    /// Receiver to sender (feedback: ACKs, TFRC reports, ...).
    Reverse,
}

/// Where a packet is and whose it is: all that a hop reads, kept apart from the packet's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// Index of the flow it belongs to.
    pub flow: u32,
    /// Where its route starts in the simulator's flat array of route links, which ends each
    /// route with `LinkId::MAX`.
    pub path: u32,
    /// Bytes on the wire (the packet's `size`, which every link it enters charges).
    pub size: u32,
    /// Position on the route: the link it is on or about to enter.
    pub hop: u16,
    pub dir: Direction,
}

/// Index of a packet in the pool.
pub type PacketId = u32;

/// A [`Packet`] in a slot of its own cache line: a 64-byte packet in a plain `Vec` straddles
/// two lines whenever the allocation is not line-aligned, and each line is a miss when the
/// packet comes back out of a long queue.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Body(Packet);

/// Two arrays indexed alike: the metadata every hop reads (16 bytes, four to a cache line)
/// and the packet itself, read only where an endpoint takes it. A hop used to load an 80-byte
/// slot holding both, two cache lines, and the slots of packets leaving a long queue are cold.
#[derive(Default)]
pub struct PacketPool {
    meta: Vec<PacketMeta>,
    body: Vec<Body>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn with_capacity(n: usize) -> Self {
        PacketPool {
            meta: Vec::with_capacity(n),
            body: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    /// Store a packet and return its index, reusing a free slot when there is one.
    pub fn alloc(&mut self, meta: PacketMeta, pkt: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.meta[id as usize] = meta;
            self.body[id as usize] = Body(pkt);
            id
        } else {
            let id = self.meta.len() as PacketId;
            self.meta.push(meta);
            self.body.push(Body(pkt));
            id
        }
    }

    /// Return a slot to the free list. The caller must not use `id` afterwards.
    pub fn free(&mut self, id: PacketId) {
        debug_assert!((id as usize) < self.meta.len());
        self.free.push(id);
    }

    pub fn meta(&self, id: PacketId) -> &PacketMeta {
        &self.meta[id as usize]
    }

    pub fn meta_mut(&mut self, id: PacketId) -> &mut PacketMeta {
        &mut self.meta[id as usize]
    }

    pub fn packet(&self, id: PacketId) -> &Packet {
        &self.body[id as usize].0
    }

    /// Packets currently stored (allocated and not freed).
    pub fn live(&self) -> usize {
        self.meta.len() - self.free.len()
    }

    /// The high-water mark: slots ever allocated.
    pub fn capacity_used(&self) -> usize {
        self.meta.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfcc_core::Time;

    fn meta(flow: u32) -> PacketMeta {
        PacketMeta {
            flow,
            path: 0,
            size: 1000,
            hop: 0,
            dir: Direction::Forward,
        }
    }

    #[test]
    fn freed_slots_are_reused_so_the_pool_stops_growing() {
        let mut pool = PacketPool::with_capacity(4);
        let pkt = |seq| Packet::raw(seq, Time::ZERO, 1000);
        let a = pool.alloc(meta(1), pkt(1));
        let b = pool.alloc(meta(2), pkt(2));
        pool.free(a);
        let c = pool.alloc(meta(3), pkt(3));
        assert_eq!(c, a);
        assert_eq!(pool.capacity_used(), 2);
        assert_eq!(pool.live(), 2);
        assert_eq!((*pool.meta(b), *pool.packet(b)), (meta(2), pkt(2)));
        assert_eq!((*pool.meta(c), *pool.packet(c)), (meta(3), pkt(3)));
        for _ in 0..1000 {
            let x = pool.alloc(meta(9), pkt(9));
            pool.free(x);
        }
        assert_eq!(pool.capacity_used(), 3);
    }

    #[test]
    fn a_hop_reads_a_quarter_cache_line_and_a_packet_one_whole_line() {
        assert_eq!(std::mem::size_of::<PacketMeta>(), 16);
        assert_eq!(std::mem::size_of::<Body>(), 64);
        assert_eq!(std::mem::align_of::<Body>(), 64);
    }
}
