//! The sequence numbers a receiving session accepted, kept as runs.
//!
//! The testbed counts a tfcc flow's data lost at or after the bottleneck queue as the packets
//! the relay handed to the queue minus those of them that arrived (tfcc-run's
//! `flow_losses`); "those of them" is a range of sequence numbers, so the receiver has to be
//! able to say how many of a range it got, after the run. Runs of consecutive numbers cost
//! memory per gap, not per packet: a 10-minute flow at 100 Mb/s is about 5 million packets but,
//! at a 1 % loss rate, some 50 000 runs.

use std::ops::RangeInclusive;

/// Accepted sequence numbers as sorted, disjoint, non-adjacent inclusive runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeqLedger {
    runs: Vec<(u64, u64)>,
    /// Numbers offered again after they were recorded (a duplicated datagram).
    duplicates: u64,
}

impl SeqLedger {
    /// Records `seq`. In-order arrival, the case on a FIFO path, extends or starts the last run;
    /// an earlier number (reordering) is inserted where it belongs, so the counts do not
    /// depend on arrival order. A number already recorded only counts as a duplicate.
    pub fn record(&mut self, seq: u64) {
        if let Some(last) = self.runs.last_mut() {
            if last.1.checked_add(1) == Some(seq) {
                last.1 = seq;
                return;
            }
            if seq > last.1 {
                self.runs.push((seq, seq));
                return;
            }
        } else {
            self.runs.push((seq, seq));
            return;
        }
        // The first run starting after `seq`; the one before it may hold or touch it.
        let k = self.runs.partition_point(|r| r.0 <= seq);
        if k > 0 && self.runs[k - 1].1 >= seq {
            self.duplicates += 1;
            return;
        }
        let joins_prev = k > 0 && self.runs[k - 1].1 + 1 == seq;
        let joins_next = k < self.runs.len() && self.runs[k].0 == seq + 1;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.runs[k - 1].1 = self.runs[k].1;
                self.runs.remove(k);
            }
            (true, false) => self.runs[k - 1].1 = seq,
            (false, true) => self.runs[k].0 = seq,
            (false, false) => self.runs.insert(k, (seq, seq)),
        }
    }

    /// How many recorded numbers lie in `range`.
    pub fn count_in(&self, range: RangeInclusive<u64>) -> u64 {
        let (lo, hi) = (*range.start(), *range.end());
        if lo > hi {
            return 0;
        }
        let first = self.runs.partition_point(|r| r.1 < lo);
        self.runs[first..]
            .iter()
            .take_while(|r| r.0 <= hi)
            .map(|r| r.1.min(hi) - r.0.max(lo) + 1)
            .sum()
    }

    /// Numbers recorded.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.1 - r.0 + 1).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Runs held (one more than the gaps between the lowest and highest number).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Numbers offered again after they had been recorded.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn in_order_arrival_with_gaps_keeps_one_run_per_gap() {
        let mut l = SeqLedger::default();
        for s in (0..100).filter(|s| s % 10 != 3) {
            l.record(s);
        }
        assert_eq!(l.runs(), 11);
        assert_eq!(l.len(), 90);
        // 10..=29 lost 13 and 23.
        assert_eq!(l.count_in(10..=29), 18);
        assert_eq!(l.count_in(13..=13), 0);
        assert_eq!(l.count_in(95..=1000), 5);
        #[allow(clippy::reversed_empty_ranges)]
        let empty = l.count_in(5..=4);
        assert_eq!(empty, 0);
        assert_eq!(l.count_in(0..=u64::MAX), 90);
    }

    #[test]
    fn late_numbers_fill_gaps_and_duplicates_are_counted_once() {
        let mut l = SeqLedger::default();
        for s in [1, 2, 5, 9, 3, 4, 7, 2, 0, u64::MAX, 8, 6] {
            l.record(s);
        }
        assert_eq!(l.runs(), 2);
        assert_eq!(l.len(), 11);
        assert_eq!(l.duplicates(), 1);
        assert_eq!(l.count_in(u64::MAX..=u64::MAX), 1);
    }

    proptest! {
        /// Whatever the order, the ledger counts what a set of the same numbers counts.
        #[test]
        fn counts_match_a_set(seqs in proptest::collection::vec(0u64..300, 0..400),
                              lo in 0u64..320, width in 0u64..320) {
            let mut l = SeqLedger::default();
            let mut set = std::collections::BTreeSet::new();
            for &s in &seqs {
                l.record(s);
                set.insert(s);
            }
            let hi = lo + width;
            prop_assert_eq!(l.count_in(lo..=hi), set.range(lo..=hi).count() as u64);
            prop_assert_eq!(l.len(), set.len() as u64);
            prop_assert_eq!(l.duplicates(), (seqs.len() - set.len()) as u64);
        }
    }
}
