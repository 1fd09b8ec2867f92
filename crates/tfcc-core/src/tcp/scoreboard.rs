//! The Sack1 sender's scoreboard: which segments above the cumulative ACK the receiver holds,
//! and which hole to retransmit next.
//!
//! Behaves as ns-2.35's `ScoreBoardRQ` (`tcp/scoreboard-rq.cc`, the one `Sack1TcpAgent` uses):
//! - a hole is retransmitted as soon as any SACKed segment lies above it (no RFC 6675 `IsLost`
//!   three-segment rule), lowest first, each hole once per recovery (a retransmission pointer
//!   only moves forward until the board is cleared);
//! - an update "changed" the board if it added SACKed segments, or if the cumulative ACK moved
//!   while the board held blocks; Sack1 counts a duplicate ACK only when it changed the board.
//!
//! One deliberate difference: blocks wholly below the cumulative ACK (stale blocks a sink keeps
//! reporting) are ignored here. ns-2 inserts them into its reassembly queue, which can pull its
//! `sack_min` backwards for one ACK; the effect is a quirk of that shim, not of SACK.
//!
//! Sequence numbers are ns-2's (`i64`, the cumulative ACK `highest_ack` is the last in-order
//! segment, −1 before any). Ranges are `[start, end)` and kept sorted, disjoint and non-adjacent;
//! there are at most a window's worth of them, usually one to three.

use super::wire::SackBlock;

#[derive(Clone, Debug, Default)]
pub(crate) struct ScoreBoard {
    /// SACKed ranges above `sack_min`, sorted.
    ranges: Vec<(i64, i64)>,
    /// Segments covered by `ranges`.
    total: i64,
    /// First segment not cumulatively acknowledged (ns-2 `sack_min`).
    sack_min: i64,
    /// Next candidate for retransmission (ns-2 `h_seqno_`), −1 after a clear.
    h_seqno: i64,
    changed: bool,
}

impl ScoreBoard {
    pub(crate) fn new() -> ScoreBoard {
        ScoreBoard {
            ranges: Vec::with_capacity(8),
            total: 0,
            sack_min: -1,
            h_seqno: -1,
            changed: false,
        }
    }

    /// Forget all SACK information (new ACK outside recovery, or a timeout); ns-2
    /// `ClearScoreBoard` keeps `sack_min`.
    pub(crate) fn clear(&mut self) {
        self.ranges.clear();
        self.total = 0;
        self.h_seqno = -1;
    }

    /// Fold in an ACK whose cumulative point is `highest_ack` and its SACK blocks.
    pub(crate) fn update(&mut self, highest_ack: i64, blocks: &[SackBlock]) {
        let old_total = self.total;
        self.changed = false;
        if self.sack_min <= highest_ack {
            self.sack_min = highest_ack + 1;
            if !self.ranges.is_empty() {
                self.trim_below(self.sack_min);
                self.changed = true;
            }
        }
        for b in blocks {
            // Edges beyond i64 cannot be segments we sent; the sender has already dropped them.
            let (Ok(l), Ok(r)) = (i64::try_from(b.left), i64::try_from(b.right)) else {
                continue;
            };
            let l = l.max(self.sack_min);
            if l < r {
                self.add(l, r);
            }
        }
        self.changed = self.changed || old_total != self.total;
    }

    /// Whether the last [`ScoreBoard::update`] changed anything (ns-2 `CheckUpdate`).
    pub(crate) fn changed(&self) -> bool {
        self.changed
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The next hole to retransmit: the first un-SACKed segment at or above the retransmission
    /// pointer with a SACKed segment above it (ns-2 `GetNextRetran`).
    pub(crate) fn next_retran(&mut self) -> Option<i64> {
        if self.h_seqno < self.sack_min {
            self.h_seqno = self.sack_min;
        }
        let seq = self.hole_at_or_above(self.h_seqno)?;
        if seq > self.h_seqno {
            self.h_seqno = seq;
        }
        Some(seq)
    }

    /// The first un-SACKed segment at or above `seq` that lies below some SACKed segment, if
    /// any (ns-2 `GetNextUnacked`, which returns −1 past the last block).
    pub(crate) fn next_unacked(&self, seq: i64) -> Option<i64> {
        self.hole_at_or_above(seq)
    }

    /// Record that `seq` was retransmitted (ns-2 `MarkRetran`).
    pub(crate) fn mark_retran(&mut self, seq: i64) {
        if seq >= self.h_seqno {
            self.h_seqno = seq + 1;
        }
    }

    /// Segments SACKed above the cumulative ACK.
    #[cfg(test)]
    pub(crate) fn sacked(&self) -> i64 {
        self.total
    }

    fn hole_at_or_above(&self, seq: i64) -> Option<i64> {
        // The first range ending at or after `seq` decides: if it starts above `seq`, `seq` is a
        // hole below it; if it covers `seq`, the hole is its end, provided a range lies above.
        let i = self.ranges.partition_point(|&(_, e)| e < seq);
        let &(s, e) = self.ranges.get(i)?;
        if s > seq {
            Some(seq)
        } else if i + 1 < self.ranges.len() {
            Some(e)
        } else {
            None
        }
    }

    fn trim_below(&mut self, min: i64) {
        let mut removed = 0;
        let mut drop = 0;
        for r in self.ranges.iter_mut() {
            if r.1 <= min {
                removed += r.1 - r.0;
                drop += 1;
            } else {
                if r.0 < min {
                    removed += min - r.0;
                    r.0 = min;
                }
                break;
            }
        }
        self.ranges.drain(..drop);
        self.total -= removed;
    }

    fn add(&mut self, l: i64, r: i64) {
        // Ranges touching or overlapping [l, r) merge with it.
        let first = self.ranges.partition_point(|&(_, e)| e < l);
        let mut last = first;
        let (mut nl, mut nr) = (l, r);
        while last < self.ranges.len() && self.ranges[last].0 <= r {
            let (s, e) = self.ranges[last];
            nl = nl.min(s);
            nr = nr.max(e);
            self.total -= e - s;
            last += 1;
        }
        self.total += nr - nl;
        self.ranges.splice(first..last, std::iter::once((nl, nr)));
        debug_assert!(self.ranges.windows(2).all(|w| w[0].1 < w[1].0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn b(left: u64, right: u64) -> SackBlock {
        SackBlock { left, right }
    }

    #[test]
    fn retransmits_each_hole_below_the_highest_sack_once() {
        // Segments 5 and 8 lost out of 4..=12; the cumulative ACK is 4.
        let mut sb = ScoreBoard::new();
        sb.update(4, &[b(6, 8)]);
        assert!(sb.changed());
        sb.update(4, &[b(9, 13), b(6, 8)]);
        assert_eq!(sb.sacked(), 6);
        assert_eq!(sb.next_retran(), Some(5));
        sb.mark_retran(5);
        assert_eq!(sb.next_retran(), Some(8));
        sb.mark_retran(8);
        assert_eq!(sb.next_retran(), None, "nothing SACKed above 13");
    }

    #[test]
    fn a_hole_above_the_last_sack_block_is_not_retransmitted() {
        let mut sb = ScoreBoard::new();
        sb.update(4, &[b(6, 7)]);
        assert_eq!(sb.next_retran(), Some(5));
        sb.mark_retran(5);
        assert_eq!(sb.next_retran(), None);
        assert_eq!(sb.next_unacked(7), None);
        assert_eq!(sb.next_unacked(6), None);
        assert_eq!(sb.next_unacked(3), Some(3));
    }

    #[test]
    fn cumulative_ack_trims_and_counts_as_a_change() {
        let mut sb = ScoreBoard::new();
        sb.update(4, &[b(6, 8), b(10, 11)]);
        sb.update(4, &[b(6, 8), b(10, 11)]);
        assert!(
            !sb.changed(),
            "same blocks, same ACK: not a new duplicate ACK"
        );
        sb.update(6, &[b(10, 11)]);
        assert!(sb.changed());
        assert_eq!(sb.sacked(), 2, "7 and 10 remain");
        sb.update(20, &[b(6, 8)]);
        assert!(sb.is_empty(), "stale blocks below the ACK are ignored");
    }

    #[test]
    fn clear_resets_the_retransmission_pointer() {
        let mut sb = ScoreBoard::new();
        sb.update(0, &[b(3, 4)]);
        assert_eq!(sb.next_retran(), Some(1));
        sb.mark_retran(1);
        sb.clear();
        sb.update(0, &[b(3, 4)]);
        assert_eq!(sb.next_retran(), Some(1));
    }

    proptest! {
        #[test]
        fn total_matches_the_union_of_blocks(
            acks in proptest::collection::vec((0i64..40, proptest::collection::vec((0u64..60, 1u64..6), 0..4)), 1..20)
        ) {
            let mut sb = ScoreBoard::new();
            let mut cum = -1i64;
            for (adv, blocks) in acks {
                cum = cum.max(adv - 1);
                let blocks: Vec<SackBlock> = blocks.iter().map(|&(l, n)| b(l, l + n)).collect();
                sb.update(cum, &blocks);
                let covered: i64 = sb.ranges.iter().map(|&(s, e)| e - s).sum();
                prop_assert_eq!(covered, sb.total);
                prop_assert!(sb.ranges.iter().all(|&(s, e)| s > cum && s < e));
                if let Some(h) = sb.next_retran() {
                    prop_assert!(h > cum);
                    prop_assert!(!sb.ranges.iter().any(|&(s, e)| s <= h && h < e), "a hole is not SACKed");
                }
            }
        }
    }
}
