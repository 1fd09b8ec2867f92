//! Per-frame records of a video flow (issue 6, `frames.parquet`): for every frame slot of the
//! clip, whether Vic's send-buffer coupling grabbed it (002 Algorithm 4), its quantizer
//! (Algorithm 5), its bytes, the packets that carried them, how many of those reached the
//! receiver, and when the receiver held the whole frame. 002 Sec. 6.3 computes PSNR "on each
//! frame the Vic receiver renders"; these records say which frames those are.
//!
//! The sender sees the frames as one byte stream: frame `n` is the bytes
//! `[O_n, O_n + bytes_n)` of everything offered so far. Each data packet takes the bytes its
//! sender's send buffer shrank by when it left (TFWC takes a whole packet's worth or what is
//! left, TFRC `min(buffer, s)`), so a packet carries the tail of one frame and the head of the
//! next when the buffer held both. A packet counts for every frame it carries bytes of. A frame
//! is complete at the receiver when its last byte has been sent and every packet that carried
//! its bytes has arrived (the first copy; TFWC and TFRC never retransmit).
//!
//! Only senders that report their send buffer ([`crate::flow::SenderImpl::buffered`]: TFWC,
//! TFRC and a CBR sender fed by the source, 002 R7's Vic without congestion control) can be
//! followed byte by byte; for other senders the frames are recorded with their grab, q and bytes
//! and no packets (a reading: a TCP flow's video would need its segments' byte ranges, which no
//! 002 experiment uses).
//!
//! The testbed keeps its video flows' records with this same log (tfcc-net's `VideoFeed` and
//! `testbed::FlowResult::frames`): its sender's session lists each data packet with the bytes
//! the send buffer shrank by, its receiver's each data packet accepted with the kernel's receive
//! stamp, so both backends' `frames.parquet` mean the same.

use std::collections::BTreeMap;

use tfcc_core::Time;

use crate::video::FrameSlot;

/// One frame slot of a video flow (a row of `frames.parquet`).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    /// The flow the video source feeds.
    pub flow: u32,
    /// The frame's index on the source's frame grid, from 0 at the flow's start: the clip's
    /// frame `index mod` its length, as a file grabber that loops the clip reads it.
    pub index: u64,
    /// When the frame came due at the sender.
    pub t: Time,
    /// Grabbed and offered to the sender; `false`: Algorithm 4 suspended grabbing.
    pub grabbed: bool,
    /// The quantizer Algorithm 5 coded it at; `None` when suspended or the source is not
    /// coupled (it has no q).
    pub q: Option<u8>,
    /// Coded bytes (0 when suspended).
    pub bytes: u64,
    /// Data packets sent that carry some of its bytes.
    pub packets: u64,
    /// Of those, the packets that reached the receiver.
    pub delivered: u64,
    /// When the receiver held every byte of it; `None` if it never did in the run.
    pub complete_at: Option<Time>,
    /// The bytes the sender's send buffer still held when the frame came due, before this
    /// frame was offered: the `sbuf` Algorithms 4 and 5 read (002 Sec. 6.2), and the send
    /// buffer length Figs. 6.6 and 6.9 plot, sampled where it is lowest (it only grows when a
    /// frame is offered). `None` for a sender that does not report its send buffer.
    pub sbuf_bytes: Option<u64>,
}

/// Follows one video flow's frames through its sender and receiver.
#[derive(Clone, Debug)]
pub struct FrameLog {
    flow: u32,
    /// Whether the sender reports its send buffer, so packets can be matched to bytes.
    tracked: bool,
    records: Vec<FrameRecord>,
    /// The grabbed frames in stream order: `(first byte, end byte, record)`.
    spans: Vec<(u64, u64, usize)>,
    /// Bytes offered to the sender so far (the stream's end).
    offered: u64,
    /// Bytes sent so far (the stream's cursor).
    sent: u64,
    /// The first span the cursor has not passed the end of.
    head: usize,
    /// Packets in flight, by sequence number: the spans `[first, last]` they carry bytes of.
    in_flight: BTreeMap<u64, (usize, usize)>,
}

impl FrameLog {
    /// The log of flow `flow`; `tracked` if its sender reports its send buffer.
    pub fn new(flow: u32, tracked: bool) -> FrameLog {
        FrameLog {
            flow,
            tracked,
            records: Vec::new(),
            spans: Vec::new(),
            offered: 0,
            sent: 0,
            head: 0,
            in_flight: BTreeMap::new(),
        }
    }

    /// The source produced `slot` while the sender held `sbuf_bytes` not yet sent (`None`: the
    /// sender does not tell).
    pub fn on_slot(&mut self, slot: &FrameSlot, sbuf_bytes: Option<u64>) {
        let (bytes, q) = slot.grabbed.unwrap_or((0, None));
        let rec = self.records.len();
        self.records.push(FrameRecord {
            flow: self.flow,
            index: slot.index,
            t: slot.time,
            grabbed: slot.grabbed.is_some(),
            q,
            bytes,
            packets: 0,
            delivered: 0,
            complete_at: None,
            sbuf_bytes,
        });
        if slot.grabbed.is_some() && bytes > 0 {
            self.spans.push((self.offered, self.offered + bytes, rec));
            self.offered += bytes;
        }
    }

    /// The sender sent data packet `seq`, which took `bytes` from its send buffer.
    pub fn on_sent(&mut self, seq: u64, bytes: u64) {
        if !self.tracked || bytes == 0 {
            return;
        }
        let (a, b) = (self.sent, (self.sent + bytes).min(self.offered));
        if a == b {
            return;
        }
        self.sent = b;
        // The spans are contiguous and the head's end is past `a`: it holds byte `a`.
        let first = self.head;
        let mut last = first;
        let mut k = first;
        while k < self.spans.len() && self.spans[k].0 < b {
            let (_, end, rec) = self.spans[k];
            self.records[rec].packets += 1;
            last = k;
            if end <= b {
                self.head = k + 1;
            }
            k += 1;
        }
        self.in_flight.insert(seq, (first, last));
    }

    /// Data packet `seq` reached the receiver at `now`; a packet not in flight (a duplicate, or
    /// one sent before tracking) is ignored.
    pub fn on_delivered(&mut self, now: Time, seq: u64) {
        let Some((first, last)) = self.in_flight.remove(&seq) else {
            return;
        };
        for k in first..=last {
            let (_, end, rec) = self.spans[k];
            let r = &mut self.records[rec];
            r.delivered += 1;
            // Whole once its last byte has left and every packet with its bytes has arrived.
            if self.sent >= end && r.delivered == r.packets && r.complete_at.is_none() {
                r.complete_at = Some(now);
            }
        }
    }

    /// Whether packets are matched to frames for this flow.
    pub fn tracked(&self) -> bool {
        self.tracked
    }

    /// The records so far, in slot order.
    pub fn records(&self) -> &[FrameRecord] {
        &self.records
    }

    /// The records, consumed.
    pub fn into_records(self) -> Vec<FrameRecord> {
        self.records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(index: u64, bytes: Option<u64>) -> FrameSlot {
        FrameSlot {
            index,
            time: Time::from_millis(index * 40),
            grabbed: bytes.map(|b| (b, Some(10))),
        }
    }

    #[test]
    fn a_packet_across_two_frames_counts_for_both() {
        let mut log = FrameLog::new(0, true);
        log.on_slot(&slot(0, Some(1500)), Some(0));
        log.on_sent(0, 1000);
        log.on_sent(1, 500); // the short tail of frame 0
        log.on_slot(&slot(1, None), Some(0)); // suspended
        log.on_slot(&slot(2, Some(1200)), Some(0));
        log.on_sent(2, 1000);
        log.on_sent(3, 200);
        let r = log.records();
        assert_eq!((r[0].packets, r[1].packets, r[2].packets), (2, 0, 2));
        assert!(!r[1].grabbed && r[1].q.is_none() && r[1].bytes == 0);
        for s in 0..4 {
            log.on_delivered(Time::from_millis(100 + s), s);
        }
        let r = log.records();
        assert_eq!(r[0].complete_at, Some(Time::from_millis(101)));
        assert_eq!(r[2].complete_at, Some(Time::from_millis(103)));
        assert_eq!(r[1].complete_at, None);
    }

    #[test]
    fn frames_sharing_a_packet_and_a_loss_in_the_middle() {
        let mut log = FrameLog::new(3, true);
        log.on_slot(&slot(0, Some(1500)), Some(0));
        // Frame 1 comes while all of frame 0 is still in the send buffer.
        log.on_slot(&slot(1, Some(1500)), Some(1500));
        assert_eq!(
            (log.records()[0].sbuf_bytes, log.records()[1].sbuf_bytes),
            (Some(0), Some(1500))
        );
        // The buffer holds both frames: the second packet carries both.
        log.on_sent(10, 1000);
        log.on_sent(11, 1000);
        log.on_sent(12, 1000);
        let r = log.records();
        assert_eq!((r[0].packets, r[1].packets), (2, 2));
        log.on_delivered(Time::from_millis(50), 10);
        log.on_delivered(Time::from_millis(52), 12);
        log.on_delivered(Time::from_millis(52), 12); // a duplicate counts once
        let r = log.records();
        assert_eq!((r[0].delivered, r[1].delivered), (1, 1));
        assert_eq!((r[0].complete_at, r[1].complete_at), (None, None));
    }

    #[test]
    fn a_frame_is_not_complete_before_its_last_byte_is_sent() {
        let mut log = FrameLog::new(0, true);
        log.on_slot(&slot(0, Some(3000)), None);
        log.on_sent(0, 1000);
        log.on_delivered(Time::from_millis(10), 0);
        assert_eq!(log.records()[0].complete_at, None);
        log.on_sent(1, 1000);
        log.on_sent(2, 1000);
        log.on_delivered(Time::from_millis(20), 2);
        log.on_delivered(Time::from_millis(21), 1); // reordered
        assert_eq!(log.records()[0].complete_at, Some(Time::from_millis(21)));
        assert_eq!(log.records()[0].delivered, 3);
    }

    #[test]
    fn an_untracked_flow_records_slots_but_no_packets() {
        let mut log = FrameLog::new(0, false);
        log.on_slot(&slot(0, Some(3000)), None);
        log.on_sent(0, 1000);
        log.on_delivered(Time::from_millis(10), 0);
        let r = &log.records()[0];
        assert!(r.grabbed && r.bytes == 3000 && r.packets == 0 && r.complete_at.is_none());
        assert!(!log.tracked());
    }
}
