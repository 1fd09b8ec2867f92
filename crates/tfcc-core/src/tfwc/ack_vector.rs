//! The Ack Vector (002 Sec. 3.2.3): which of the recent sequence numbers arrived.
//!
//! TFWC carries an unreliable stream, so a cumulative ACK means nothing; instead every ACK lists
//! the packets received since the sender's last Ack of Ack (AoA). In the simulator the vector
//! travels as a `Copy` header, [`AckVector`]: the head (highest sequence number received) and a
//! bitmap of the [`AckVector::SPAN`] numbers at and below it (a `u64`, so a packet stays
//! small and 8-byte aligned). With one ACK per data packet the
//! sender judges each number long before it leaves the bitmap: the head advances by one per
//! arrival and the sender judges everything older than the 3-packet margin (002 Sec. 3.2.3) on
//! each ACK, so only a run of more than 60 consecutive lost ACKs could hide a state, and the
//! sender counts such numbers as [`Coverage::Unknown`] instead of guessing. The byte form in
//! [`crate::tfwc::wire`] carries the whole vector down to the AoA, run-length coded.

/// What an Ack Vector says about one sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    Received,
    NotReceived,
    /// Older than the vector reaches: neither received nor lost can be concluded.
    Unknown,
}

/// The receiver's Ack Vector: the head and the states of the `SPAN` numbers ending at it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckVector {
    /// Highest sequence number received; meaningless while `bits == 0` and nothing arrived.
    pub head: u64,
    /// Bit `i` set: `head − i` arrived. Bit 0 is the head itself.
    pub bits: u64,
}

impl AckVector {
    /// How many sequence numbers, the head included, the simulator's vector covers.
    pub const SPAN: u64 = 64;

    /// The vector after the first arrival.
    pub fn starting_at(seq: u64) -> AckVector {
        AckVector { head: seq, bits: 1 }
    }

    /// Record the arrival of `seq`. A number older than the span is forgotten (it could not be
    /// reported anyway); a duplicate changes nothing.
    pub fn record(&mut self, seq: u64) {
        if seq > self.head {
            let shift = seq - self.head;
            self.bits = if shift >= Self::SPAN {
                0
            } else {
                self.bits << shift
            };
            self.bits |= 1;
            self.head = seq;
        } else {
            let back = self.head - seq;
            if back < Self::SPAN {
                self.bits |= 1 << back;
            }
        }
    }

    /// Forget everything at or below the Ack of Ack: the sender has already judged it
    /// (002 Sec. 3.2.3, "prunes all sequence numbers ≤ AoA").
    pub fn prune(&mut self, aoa: u64) {
        if aoa >= self.head {
            self.bits = 0;
        } else {
            let keep = self.head - aoa; // numbers head−keep+1 ..= head survive
            if keep < Self::SPAN {
                self.bits &= (1u64 << keep) - 1;
            }
        }
    }

    /// The state of `seq` as this vector reports it.
    pub fn coverage(&self, seq: u64) -> Coverage {
        if seq > self.head {
            return Coverage::NotReceived;
        }
        let back = self.head - seq;
        if back >= Self::SPAN {
            Coverage::Unknown
        } else if self.bits & (1 << back) != 0 {
            Coverage::Received
        } else {
            Coverage::NotReceived
        }
    }

    /// Received numbers in the vector.
    pub fn received(&self) -> u32 {
        self.bits.count_ones()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 002 Sec. 3.2.3, worked example 2: AckVec (20 19 18 16 15 14 13 11 10), AoA 10.
    #[test]
    fn the_thesis_example_reports_12_and_17_missing() {
        let mut v = AckVector::starting_at(10);
        for s in [11, 13, 14, 15, 16, 18, 19, 20] {
            v.record(s);
        }
        v.prune(10);
        let missing: Vec<u64> = (11..=20)
            .filter(|&s| v.coverage(s) == Coverage::NotReceived)
            .collect();
        assert_eq!(missing, vec![12, 17]);
        assert_eq!(v.coverage(10), Coverage::NotReceived, "pruned by the AoA");
        assert_eq!(v.received(), 8);
    }

    #[test]
    fn a_jump_beyond_the_span_forgets_the_past() {
        let mut v = AckVector::starting_at(5);
        v.record(5 + AckVector::SPAN);
        assert_eq!(v.bits, 1);
        assert_eq!(v.coverage(5), Coverage::Unknown);
        v.record(5); // too old to report
        assert_eq!(v.received(), 1);
    }
}
