//! The TCP receiver: ns-2's `Agent/TCPSink` (cumulative ACK per segment), `TCPSink/Sack1`
//! (up to three SACK blocks, most recent first) and their `/DelAck` forms.
//!
//! Behaviour follows ns-2.35's `tcp/tcp-sink.cc`:
//! - `Acker::update`: segments are recorded in a window from the first missing one (`next`) to
//!   the highest seen (`maxseen`); in-order payload is delivered to the application;
//! - the timestamp echoed is the one of the segment that last advanced or repeated the ACK point
//!   (`ts_echo_bugfix_ true`, `Acker::update_ts` without RFC 1323 mode);
//! - `Sacker::append_ack`: the first block is the one holding the segment that just arrived; then
//!   earlier blocks from a small stack of recently reported ones, skipping those the first block
//!   covers; the stack is emptied once the cumulative ACK reaches the highest segment seen; each
//!   block adds 8 bytes to the 40-byte ACK;
//! - delivered bytes ([`Receiver::delivered_bytes`]) count payload, the goodput DESIGN.md asks
//!   for; ns-2's `TCPSink bytes_` counts the whole 1040-byte packet, so ns-2 throughputs are
//!   1040/1000 of ours for the same deliveries;
//! - `DelAckSink`: an in-order segment with no ACK pending is held for `interval`; a second
//!   segment, an out-of-order one, one that fills a gap (`RFC2581_immediate_ack_ true`) or the
//!   SYN (`SYN_immediate_ack_ true`) is ACKed at once. With
//!   [`TcpConfig::delayed_ack_tick`] the held ACK leaves at the next boundary of a global grid
//!   of `interval`s instead (BSD's 200 ms `tcp_fasttimo`).

use std::collections::VecDeque;

use super::config::{TcpConfig, Variant};
use super::wire::{SackBlock, TcpAck, TcpData, MAX_SACK_BLOCKS};
use crate::endpoint::{Endpoint, Receiver, Stats};
use crate::packet::{Header, Packet};
use crate::time::{Dur, Time};

/// The receiving end of a TCP flow.
#[derive(Clone, Debug)]
pub struct TcpSink {
    ack_size: u32,
    sack_block_size: u32,
    /// SACK blocks per ACK; 0 for a plain (non-SACK) sink.
    nblocks: usize,
    delack: Option<Dur>,
    /// Held ACKs leave on a global grid of `delack` intervals ([`TcpConfig::delayed_ack_tick`]).
    delack_tick: bool,

    /// First segment not yet received (ns-2 `next_`); the cumulative ACK sent is this.
    next: u64,
    /// Highest segment received, `None` before any (ns-2 `maxseen_`, which starts at 0).
    maxseen: Option<u64>,
    /// Payload of each segment from `next` on: `None` not received, `Some(bytes)` received.
    window: VecDeque<Option<u32>>,
    /// Recently reported SACK blocks, most recent first (ns-2 `SackStack`).
    history: [(u64, u64); MAX_SACK_BLOCKS],
    history_len: usize,
    /// Timestamp to echo (ns-2 `ts_to_echo_`) and the last cumulative ACK sent (`last_ack_sent_`,
    /// as next-expected; ns-2's starts at 0 in its own numbering, i.e. 1 here).
    ts_to_echo: Time,
    last_ack_sent: u64,
    /// Delayed-ACK state: the held segment's number and the timer deadline.
    held: Option<u64>,
    delack_deadline: Option<Time>,

    out: VecDeque<Packet>,
    delivered: u64,
    acks_sent: u64,
    segments_received: u64,
    duplicates: u64,
    malformed: u64,
}

impl TcpSink {
    /// Bytes of the largest ACK the sink sends, with every SACK block it may carry: a
    /// byte-limited queue on the way back that admits plain ACKs but not these stalls the
    /// sender at its first loss for good (every ACK after it carries blocks), which a scenario
    /// check refuses.
    pub fn max_ack_size(&self) -> u32 {
        let blocks = u32::try_from(self.nblocks).unwrap_or(u32::MAX);
        self.ack_size
            .saturating_add(blocks.saturating_mul(self.sack_block_size))
    }

    /// A sink matching the sender built from the same `cfg`.
    pub fn new(cfg: &TcpConfig) -> TcpSink {
        let nblocks = if cfg.variant == Variant::Sack {
            (cfg.max_sack_blocks as usize).min(MAX_SACK_BLOCKS)
        } else {
            0
        };
        TcpSink {
            ack_size: cfg.ack_size,
            sack_block_size: cfg.sack_block_size,
            nblocks,
            delack: cfg.delayed_ack,
            delack_tick: cfg.delayed_ack_tick,
            next: 0,
            maxseen: None,
            window: VecDeque::with_capacity(64),
            history: [(0, 0); MAX_SACK_BLOCKS],
            history_len: 0,
            ts_to_echo: Time::ZERO,
            last_ack_sent: 1,
            held: None,
            delack_deadline: None,
            out: VecDeque::with_capacity(4),
            delivered: 0,
            acks_sent: 0,
            segments_received: 0,
            duplicates: 0,
            malformed: 0,
        }
    }

    /// ACKs sent so far.
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
    /// Data segments received, duplicates included.
    pub fn segments_received(&self) -> u64 {
        self.segments_received
    }
    /// Segments received that had already arrived.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }
    /// Packets ignored because they were not TCP data segments.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }
    /// The next segment expected (the cumulative ACK).
    pub fn next_expected(&self) -> u64 {
        self.next
    }

    fn seen(&self, seq: u64) -> bool {
        if seq < self.next {
            return true;
        }
        let off = seq - self.next;
        usize::try_from(off)
            .ok()
            .and_then(|i| self.window.get(i).copied())
            .flatten()
            .is_some()
    }

    /// Record a segment; returns whether it had been seen before (ns-2 `Acker::update`).
    fn record(&mut self, d: &TcpData) -> bool {
        if d.seq < self.next {
            return true;
        }
        // A segment implausibly far ahead would need an absurd buffer; a real sender never
        // exceeds its window, so refuse to grow past 2^20 segments and treat it as lost.
        let Ok(off) = usize::try_from(d.seq - self.next) else {
            return false;
        };
        if off >= 1 << 20 {
            return false;
        }
        if self.window.len() <= off {
            self.window.resize(off + 1, None);
        }
        let dup = self.window[off].is_some();
        self.window[off] = Some(d.payload);
        self.maxseen = Some(self.maxseen.map_or(d.seq, |m| m.max(d.seq)));
        while let Some(Some(bytes)) = self.window.front().copied() {
            self.delivered += bytes as u64;
            crate::ring::pop_front_rewind(&mut self.window);
            self.next += 1;
        }
        dup
    }

    fn on_data(&mut self, now: Time, d: &TcpData) {
        self.segments_received += 1;
        // ns-2 `update_ts` (non-RFC 1323 path) runs before the window update and compares with
        // the last ACK sent in ns-2 numbering, which is next-expected − 1 here.
        if d.ts >= self.ts_to_echo && d.seq < self.last_ack_sent.saturating_add(1) {
            self.ts_to_echo = d.ts;
        }
        let maxseen_before = self.maxseen;
        let dup = self.record(d);
        if dup {
            self.duplicates += 1;
        }
        let Some(interval) = self.delack else {
            self.send_ack(d.seq, dup);
            return;
        };
        let in_order = self.next == d.seq + 1 && !dup;
        if self.delack_deadline.is_none() && in_order {
            let fills_gap = self.maxseen.is_some_and(|m| d.seq < m)
                || maxseen_before.is_some_and(|m| d.seq < m);
            let is_syn = d.seq == 0;
            if !fills_gap && !is_syn {
                self.held = Some(d.seq);
                self.delack_deadline = Some(if self.delack_tick {
                    // The first grid boundary strictly after now (BSD's fast timer runs
                    // after the input processing that set TF_DELACK).
                    let i = interval.as_nanos().max(1);
                    Time::from_nanos((now.as_nanos() / i).saturating_add(1).saturating_mul(i))
                } else {
                    now.saturating_add(interval)
                });
                return;
            }
        }
        self.delack_deadline = None;
        self.held = None;
        self.send_ack(d.seq, dup);
    }

    fn send_ack(&mut self, arrived: u64, dup: bool) {
        let mut ack = TcpAck::new(self.next, self.ts_to_echo);
        if self.nblocks > 0 {
            self.append_sack(&mut ack, arrived, dup);
        }
        let n = ack.sack_blocks().len() as u32;
        self.last_ack_sent = self.next;
        self.acks_sent += 1;
        self.out.push_back(Packet {
            size: self.ack_size + n * self.sack_block_size,
            header: Header::TcpAck(ack),
        });
    }

    /// ns-2 `Sacker::append_ack`, in next-expected numbering: its `seqno` (last in-order) is
    /// `next − 1`, its right edges are exclusive as ours.
    fn append_sack(&mut self, ack: &mut TcpAck, arrived: u64, dup: bool) {
        let Some(maxseen) = self.maxseen else {
            return;
        };
        if self.next > maxseen {
            // Everything seen is in order: no blocks, and the history is obsolete.
            self.history_len = 0;
            return;
        }
        let _ = dup; // D-SACK is off in ns-2 (generateDSacks_ false); the first block covers it.
                     // First block: the run of received segments holding the one that just arrived.
        let mut right = arrived.max(self.next);
        while right <= maxseen && self.seen(right) {
            right += 1;
        }
        let recent = if arrived >= self.next {
            let mut left = arrived;
            while left > self.next && self.seen(left - 1) {
                left -= 1;
            }
            ack.push_sack(SackBlock { left, right });
            (left, right)
        } else {
            // An old duplicate: no block of its own, but it still hides history blocks below
            // `right` (ns-2 sets sack_left to 0 here).
            (0, right)
        };
        let mut k = 0;
        while ack.sack_blocks().len() < self.nblocks && k < self.history_len {
            let (l, r) = self.history[k];
            if r > maxseen + 1 {
                break;
            }
            if recent.0 <= l && recent.1 >= r {
                self.history.copy_within(k + 1..self.history_len, k);
                self.history_len -= 1;
                continue;
            }
            ack.push_sack(SackBlock { left: l, right: r });
            k += 1;
        }
        if arrived >= self.next {
            let keep = self.history_len.min(self.nblocks.saturating_sub(1));
            self.history.copy_within(0..keep, 1);
            self.history[0] = recent;
            self.history_len = keep + 1;
        }
    }
}

impl Endpoint for TcpSink {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        match pkt.header {
            Header::TcpData(d) => self.on_data(now, &d),
            _ => self.malformed += 1,
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if let Some(t) = self.delack_deadline {
            if now >= t {
                self.delack_deadline = None;
                if let Some(seq) = self.held.take() {
                    self.send_ack(seq, false);
                }
            }
        }
    }

    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        crate::ring::pop_front_rewind(&mut self.out)
    }

    fn next_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    fn stats(&self) -> Stats {
        Stats {
            mode: "sink",
            ..Stats::default()
        }
    }
}

impl Receiver for TcpSink {
    fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::wire::test_segment;

    fn seg(seq: u64) -> Packet {
        test_segment(seq, Time::from_millis(seq))
    }

    fn feed(sink: &mut TcpSink, seqs: &[u64]) -> Vec<TcpAck> {
        let mut acks = Vec::new();
        for &s in seqs {
            sink.on_packet(Time::from_millis(100 + s), &seg(s));
            while let Some(p) = sink.poll_transmit(Time::ZERO) {
                match p.header {
                    Header::TcpAck(a) => {
                        assert_eq!(p.size, 40 + 8 * a.sack_blocks().len() as u32);
                        acks.push(a)
                    }
                    _ => panic!("sink sent a non-ACK"),
                }
            }
        }
        acks
    }

    fn blocks(a: &TcpAck) -> Vec<(u64, u64)> {
        a.sack_blocks().iter().map(|b| (b.left, b.right)).collect()
    }

    #[test]
    fn plain_sink_acks_every_segment_cumulatively() {
        let mut s = TcpSink::new(&TcpConfig::with_variant(Variant::Reno));
        let acks = feed(&mut s, &[0, 1, 3, 4, 2]);
        let cum: Vec<u64> = acks.iter().map(|a| a.ack).collect();
        assert_eq!(cum, vec![1, 2, 2, 2, 5]);
        assert!(acks.iter().all(|a| a.sack_blocks().is_empty()));
        assert_eq!(s.delivered_bytes(), 5000);
    }

    #[test]
    fn sack_sink_reports_the_newest_block_first_and_at_most_three() {
        let mut s = TcpSink::new(&TcpConfig::with_variant(Variant::Sack));
        // Holes at 2, 4, 6, 8.
        let acks = feed(&mut s, &[0, 1, 3, 5, 7, 9, 10]);
        assert_eq!(blocks(&acks[2]), vec![(3, 4)]);
        assert_eq!(blocks(&acks[3]), vec![(5, 6), (3, 4)]);
        assert_eq!(blocks(&acks[4]), vec![(7, 8), (5, 6), (3, 4)]);
        assert_eq!(blocks(&acks[5]), vec![(9, 10), (7, 8), (5, 6)]);
        assert_eq!(blocks(&acks[6]), vec![(9, 11), (7, 8), (5, 6)]);
        // Filling hole 4 merges 3..6; the ACK stays at 2.
        let a = feed(&mut s, &[4]);
        assert_eq!(a[0].ack, 2);
        assert_eq!(blocks(&a[0]), vec![(3, 6), (9, 11), (7, 8)]);
        // Filling 2 moves the ACK to 6. ns-2's `Acker::update` never clears `seen_` below the
        // ACK point, so the "first block" search from segment 2 runs right up to the hole at 6:
        // it is not sent (2 is in order) but it covers the history block 3..6, which is dropped.
        let a = feed(&mut s, &[2]);
        assert_eq!(a[0].ack, 6);
        assert_eq!(blocks(&a[0]), vec![(9, 11), (7, 8)]);
        let a = feed(&mut s, &[6, 8]);
        assert_eq!(a[1].ack, 11);
        assert!(a[1].sack_blocks().is_empty(), "all caught up");
        assert_eq!(s.delivered_bytes(), 11_000);
    }

    #[test]
    fn delayed_ack_acks_every_second_segment_or_after_the_interval() {
        let mut cfg = TcpConfig::with_variant(Variant::Sack);
        cfg.delayed_ack = Some(TcpConfig::NS2_DELACK_INTERVAL);
        let mut s = TcpSink::new(&cfg);
        let acks = feed(&mut s, &[0, 1, 2, 3]);
        // The SYN (0) is ACKed at once; 1 is held, 2 releases it; 3 is held.
        assert_eq!(acks.iter().map(|a| a.ack).collect::<Vec<_>>(), vec![1, 3]);
        let t = s.next_timeout().expect("delayed-ACK timer");
        assert_eq!(t, Time::from_millis(103) + Dur::from_millis(100));
        s.on_timeout(t - Dur(1));
        assert!(s.poll_transmit(t).is_none(), "early timeout is a no-op");
        s.on_timeout(t);
        match s.poll_transmit(t).map(|p| p.header) {
            Some(Header::TcpAck(a)) => assert_eq!(a.ack, 4),
            other => panic!("expected the held ACK, got {other:?}"),
        }
        // Out of order: immediate.
        let acks = feed(&mut s, &[5]);
        assert_eq!(acks.len(), 1);
        assert_eq!(blocks(&acks[0]), vec![(5, 6)]);
    }

    #[test]
    fn a_tick_delayed_ack_leaves_at_the_next_fast_timer_boundary() {
        let mut cfg = TcpConfig::with_variant(Variant::Reno);
        cfg.delayed_ack = Some(Dur::from_millis(200));
        cfg.delayed_ack_tick = true;
        let mut s = TcpSink::new(&cfg);
        // Segment 1 arrives at 101 ms and is held; BSD's fast timer fires at 200 ms, 99 ms later
        // (a per-segment timer would wait until 301 ms).
        let acks = feed(&mut s, &[0, 1]);
        assert_eq!(acks.iter().map(|a| a.ack).collect::<Vec<_>>(), vec![1]);
        assert_eq!(s.next_timeout(), Some(Time::from_millis(200)));
        s.on_timeout(Time::from_millis(200));
        match s.poll_transmit(Time::from_millis(200)).map(|p| p.header) {
            Some(Header::TcpAck(a)) => assert_eq!(a.ack, 2),
            other => panic!("expected the held ACK, got {other:?}"),
        }
        // A segment held exactly on a boundary waits for the next one, a whole interval.
        s.on_packet(Time::from_millis(400), &seg(2));
        assert_eq!(s.next_timeout(), Some(Time::from_millis(600)));
        let c: TcpConfig =
            toml::from_str("delayed_ack = \"200ms\"\ndelayed_ack_tick = true").unwrap();
        assert!(c.delayed_ack_tick && !TcpConfig::default().delayed_ack_tick);
    }

    #[test]
    fn echoes_the_timestamp_of_the_segment_that_advanced_the_ack() {
        let mut s = TcpSink::new(&TcpConfig::with_variant(Variant::Reno));
        let acks = feed(&mut s, &[0, 1, 3]);
        assert_eq!(acks[1].ts_echo, Time::from_millis(1));
        // Segment 3 is out of order: the echo stays that of segment 1 (ts_echo_bugfix_).
        assert_eq!(acks[2].ts_echo, Time::from_millis(1));
    }
}
