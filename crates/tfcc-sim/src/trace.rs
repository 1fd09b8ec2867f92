//! A per-packet event trace of chosen links, what ns-2's `trace-queue` gives an ns-2 user:
//! every packet that arrives at a traced link (`+`, it joined the queue or went straight on
//! the wire), every one whose transmission starts (`-`), every one the link discards (`d`,
//! with why) and every one that reaches the link's far end (`r`), with the flow, direction,
//! protocol message, sequence number and wire size. Time series answer "how much"; a question
//! such as "which retransmission was lost, and was the queue full then" needs the packets
//! themselves.
//!
//! Opt-in per scenario (`[trace]`): a run without it pays one test per packet per hop (1.2 %
//! more instructions on the bench dumbbell, with `EventQueue::pop` kept inline). Records live in
//! memory until the run ends, 32 bytes each (a traced 1 Gb/s bottleneck makes about a quarter
//! of a million a second), so a long run should narrow `links` or the `from` / `until` window.

use crate::link::{LinkDrop, LinkId};
use crate::packet_pool::Direction;
use crate::queue::QueueDrop;
use tfcc_core::packet::{Header, Packet};
use tfcc_core::{Dur, Time};

/// Which links to trace and when (`[trace]` in a scenario, resolved to link ids).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceConfig {
    /// The traced links with their names, as the trace file names them.
    pub links: Vec<(LinkId, String)>,
    /// Events at `from ≤ t < until` are kept; an `until` at the end of the run keeps the
    /// events at the end too (see [`PacketTrace::new`]).
    pub from: Time,
    pub until: Time,
    /// Keep the whole packet of every `-` event too, for the pcap files `tfcc run` writes
    /// (`[trace] pcap = true`): the records alone name a packet but not its header fields.
    pub pcap: bool,
}

/// What happened to a packet at a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Arrived and was accepted: queued, or put on the wire at once (ns-2 `+`).
    Enqueue,
    /// Its transmission started (ns-2 `-`): at once after its `+` on an idle link, else when
    /// the packet ahead of it has been serialised (or the link comes back up).
    Dequeue,
    /// Arrived and was discarded (ns-2 `d`).
    Drop(LinkDrop),
    /// Reached the far end of the link (ns-2 `r`).
    Receive,
}

impl TraceEvent {
    /// ns-2's event letter.
    pub fn letter(self) -> &'static str {
        match self {
            TraceEvent::Enqueue => "+",
            TraceEvent::Dequeue => "-",
            TraceEvent::Drop(_) => "d",
            TraceEvent::Receive => "r",
        }
    }

    /// Why a packet was discarded: `overflow` (a full queue, or RED's forced drop), `early`
    /// (RED's probabilistic drop), `artificial` (the link's loss model) or `down` (a dropout);
    /// `None` for the other events.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            TraceEvent::Drop(LinkDrop::Queue(QueueDrop::Overflow)) => Some("overflow"),
            TraceEvent::Drop(LinkDrop::Queue(QueueDrop::Early)) => Some("early"),
            TraceEvent::Drop(LinkDrop::Artificial) => Some("artificial"),
            TraceEvent::Drop(LinkDrop::Down) => Some("down"),
            TraceEvent::Enqueue | TraceEvent::Dequeue | TraceEvent::Receive => None,
        }
    }
}

/// One traced event. Kept to 32 bytes: a trace of a long run holds millions of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    pub time: Time,
    /// The message's sequence number; meaningful only where [`Message::has_seq`] (see
    /// [`TraceRecord::seq`]).
    seq: u64,
    pub flow: u32,
    /// Bytes on the wire.
    pub size: u32,
    pub link: LinkId,
    pub event: TraceEvent,
    pub dir: Direction,
    /// The protocol message, see [`message`].
    pub kind: Message,
}

impl TraceRecord {
    /// A record of `kind` with sequence number `seq` (ignored, and read back as `None`, for a
    /// message that carries none).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        time: Time,
        event: TraceEvent,
        link: LinkId,
        flow: u32,
        dir: Direction,
        kind: Message,
        seq: Option<u64>,
        size: u32,
    ) -> TraceRecord {
        TraceRecord {
            time,
            seq: if kind.has_seq() { seq.unwrap_or(0) } else { 0 },
            flow,
            size,
            link,
            event,
            dir,
            kind,
        }
    }

    /// The sequence number that identifies the message, where its kind has one.
    pub fn seq(&self) -> Option<u64> {
        self.kind.has_seq().then_some(self.seq)
    }
}

/// The protocol message a traced packet carries, as the trace names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Message {
    Raw,
    TcpData,
    TcpAck,
    TfrcData,
    TfrcFeedback,
    TfwcData,
    TfwcAck,
    RateData,
    RateFeedback,
    /// A header added to `tfcc_core` after this list (the enum is non-exhaustive).
    Other,
}

impl Message {
    /// Every message, in the order of their names' codes.
    pub const ALL: [Message; 10] = [
        Message::Raw,
        Message::TcpData,
        Message::TcpAck,
        Message::TfrcData,
        Message::TfrcFeedback,
        Message::TfwcData,
        Message::TfwcAck,
        Message::RateData,
        Message::RateFeedback,
        Message::Other,
    ];

    /// The name in the trace's `kind` column.
    pub fn name(self) -> &'static str {
        match self {
            Message::Raw => "raw",
            Message::TcpData => "tcp-data",
            Message::TcpAck => "tcp-ack",
            Message::TfrcData => "tfrc-data",
            Message::TfrcFeedback => "tfrc-feedback",
            Message::TfwcData => "tfwc-data",
            Message::TfwcAck => "tfwc-ack",
            Message::RateData => "rate-data",
            Message::RateFeedback => "rate-feedback",
            Message::Other => "other",
        }
    }

    /// The message named `name` in a trace's `kind` column.
    pub fn from_name(name: &str) -> Option<Message> {
        Message::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the message carries a single sequence number: TFWC's Ack Vector and the rate
    /// schemes' reports do not.
    pub fn has_seq(self) -> bool {
        !matches!(
            self,
            Message::TfwcAck | Message::RateFeedback | Message::Other
        )
    }
}

/// A packet's protocol message and the sequence number that identifies it: the data packet's
/// own number (TCP's segment number, TFRC's, TFWC's, WARC's, a raw datagram's), TCP's
/// cumulative ACK (the next segment expected) and, for TFRC's report, the data packet it
/// echoes. TFWC's Ack Vector and the rate schemes' reports carry no single number.
pub fn message(h: &Header) -> (Message, Option<u64>) {
    match h {
        Header::Raw { seq, .. } => (Message::Raw, Some(*seq)),
        Header::TcpData(d) => (Message::TcpData, Some(d.seq)),
        Header::TcpAck(a) => (Message::TcpAck, Some(a.ack)),
        Header::TfrcData(d) => (Message::TfrcData, Some(d.seq)),
        Header::TfrcFeedback(f) => (Message::TfrcFeedback, Some(f.seq_echo)),
        Header::TfwcData { seq, .. } => (Message::TfwcData, Some(*seq)),
        Header::TfwcAck { .. } => (Message::TfwcAck, None),
        Header::WarcData(d) => (Message::RateData, Some(d.seq)),
        Header::WarcFeedback(_) => (Message::RateFeedback, None),
        _ => (Message::Other, None),
    }
}

/// A packet key at a traced link, as `trace.parquet` names a packet: (link, flow, direction,
/// message, sequence number where the message has one).
pub type PacketKey = (LinkId, u32, bool, Message, Option<u64>);

/// Packets of one key a traced link held when the trace's window opened: `queued` had their
/// `+` and not their `-`, `wire` their `-` and not their `r`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub queued: u32,
    pub wire: u32,
}

/// The trace being recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketTrace {
    /// Per link id: its name when traced.
    names: Vec<Option<String>>,
    from: Time,
    until: Time,
    records: Vec<TraceRecord>,
    /// What the traced links held at `from`, kept up to it. A row names a packet by its key
    /// only, and a link is first in, first out per key, so `tfcc ns2-trace` pairs the k-th `-`
    /// of a key with its k-th `+`; a `-` in the window whose `+` came before it would take the
    /// `+` of a later packet of the key (a duplicate ACK, a retransmission, TFWC's Ack
    /// Vectors, which all share one key) unless it knows how many were waiting.
    pending: std::collections::HashMap<PacketKey, Pending>,
    /// With `pcap`: the packet of each `-` record, in record order (the k-th is the k-th `-`).
    /// Kept apart from the records so that a trace without pcap stays 32 bytes an event.
    sent: Option<Vec<Packet>>,
}

impl PacketTrace {
    /// A trace of `cfg` over a topology of `n_links` links, in a run that ends at `end`.
    ///
    /// The run processes the events at `t = end` (the last sample, a packet that arrives just
    /// then) and the summary's counters count them: its window is `[measure_from, end]`. A
    /// trace whose `until` is the end of the run (the default) keeps them too, so that its rows
    /// add up to those counters; an earlier `until` stays exclusive.
    pub fn new(cfg: &TraceConfig, n_links: usize, end: Time) -> PacketTrace {
        let mut names = vec![None; n_links];
        for (id, name) in &cfg.links {
            if let Some(n) = names.get_mut(*id as usize) {
                *n = Some(name.clone());
            }
        }
        PacketTrace {
            names,
            from: cfg.from,
            until: if cfg.until >= end {
                end.saturating_add(Dur(1))
            } else {
                cfg.until
            },
            records: Vec::new(),
            pending: std::collections::HashMap::new(),
            sent: cfg.pcap.then(Vec::new),
        }
    }

    /// Whether an event on `link` at `now` comes before the window on a traced link, so that
    /// it moves [`Self::pending_at_from`].
    #[inline]
    pub fn before_window(&self, now: Time, link: LinkId) -> bool {
        now < self.from && self.names.get(link as usize).is_some_and(Option::is_some)
    }

    /// Follow a packet of `key` through `event` before the window.
    pub fn track(&mut self, key: PacketKey, event: TraceEvent) {
        let p = self.pending.entry(key).or_default();
        match event {
            TraceEvent::Enqueue => p.queued += 1,
            TraceEvent::Dequeue => {
                p.queued = p.queued.saturating_sub(1);
                p.wire += 1;
            }
            TraceEvent::Receive => p.wire = p.wire.saturating_sub(1),
            TraceEvent::Drop(_) => {}
        }
        if *p == Pending::default() {
            self.pending.remove(&key);
        }
    }

    /// The packets the traced links held when the window opened, by key in key order (empty
    /// for a window from the start of the run).
    pub fn pending_at_from(&self) -> Vec<(PacketKey, Pending)> {
        let mut v: Vec<_> = self.pending.iter().map(|(k, p)| (*k, *p)).collect();
        v.sort_unstable_by_key(|(k, _)| *k);
        v
    }

    /// Whether an event on `link` at `now` is kept.
    #[inline]
    pub fn wants(&self, now: Time, link: LinkId) -> bool {
        now >= self.from
            && now < self.until
            && self.names.get(link as usize).is_some_and(Option::is_some)
    }

    /// Add a record; `pkt` is the packet it is about, kept for a `-` when the trace keeps
    /// packets.
    pub fn push(&mut self, r: TraceRecord, pkt: &Packet) {
        if r.event == TraceEvent::Dequeue {
            if let Some(sent) = &mut self.sent {
                sent.push(*pkt);
            }
        }
        self.records.push(r);
    }

    /// Whether the trace keeps the packets of its `-` events (`[trace] pcap = true`).
    pub fn keeps_packets(&self) -> bool {
        self.sent.is_some()
    }

    /// The packets of the `-` records, in their order, leaving none in the trace (empty when
    /// the trace keeps no packets).
    pub fn take_sent(&mut self) -> Vec<Packet> {
        self.sent.as_mut().map(std::mem::take).unwrap_or_default()
    }

    pub fn records(&self) -> &[TraceRecord] {
        &self.records
    }

    /// The records, leaving the trace empty.
    pub fn take_records(&mut self) -> Vec<TraceRecord> {
        std::mem::take(&mut self.records)
    }

    /// Every link's name when traced, by link id.
    pub fn names(&self) -> &[Option<String>] {
        &self.names
    }

    /// The name of a traced link.
    pub fn link_name(&self, link: LinkId) -> &str {
        self.names
            .get(link as usize)
            .and_then(Option::as_deref)
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_chosen_links_in_the_window_are_wanted() {
        let cfg = TraceConfig {
            links: vec![(1, "bottleneck".into())],
            from: Time::ZERO + Dur::from_secs(1),
            until: Time::ZERO + Dur::from_secs(2),
            pcap: false,
        };
        let t = PacketTrace::new(&cfg, 3, Time::ZERO + Dur::from_secs(10));
        let at = |ms| Time::ZERO + Dur::from_millis(ms);
        assert!(t.wants(at(1000), 1));
        assert!(t.wants(at(1999), 1));
        assert!(!t.wants(at(999), 1));
        assert!(!t.wants(at(2000), 1));
        assert!(!t.wants(at(1500), 0));
        assert!(!t.wants(at(1500), 7));
        assert_eq!(t.link_name(1), "bottleneck");
        assert_eq!(t.link_name(0), "");
    }

    /// Before the window the trace keeps, per key, what the link holds: two Ack Vectors (one
    /// key) queued, one of them sent on; a dropped packet leaves nothing.
    #[test]
    fn before_the_window_the_packets_a_link_holds_are_counted_per_key() {
        let cfg = TraceConfig {
            links: vec![(1, "bottleneck".into())],
            from: Time::ZERO + Dur::from_secs(1),
            until: Time::ZERO + Dur::from_secs(2),
            pcap: false,
        };
        let mut t = PacketTrace::new(&cfg, 3, Time::ZERO + Dur::from_secs(10));
        assert!(t.before_window(Time::ZERO, 1));
        assert!(!t.before_window(Time::ZERO, 0));
        assert!(!t.before_window(Time::ZERO + Dur::from_secs(1), 1));
        let ack = (1, 0, true, Message::TfwcAck, None);
        let data = (1, 1, false, Message::TcpData, Some(7));
        t.track(ack, TraceEvent::Enqueue);
        t.track(ack, TraceEvent::Enqueue);
        t.track(ack, TraceEvent::Dequeue);
        t.track(data, TraceEvent::Enqueue);
        t.track(data, TraceEvent::Dequeue);
        t.track(data, TraceEvent::Receive);
        t.track(data, TraceEvent::Drop(LinkDrop::Down));
        assert_eq!(
            t.pending_at_from(),
            vec![(ack, Pending { queued: 1, wire: 1 })]
        );
    }

    #[test]
    fn an_until_at_the_end_of_the_run_keeps_the_events_at_the_end() {
        // The run processes and counts events at t = end; a trace to the end keeps them too.
        let end = Time::ZERO + Dur::from_secs(2);
        let cfg = TraceConfig {
            links: vec![(0, "bottleneck".into())],
            from: Time::ZERO,
            until: end,
            pcap: false,
        };
        let t = PacketTrace::new(&cfg, 1, end);
        assert!(t.wants(end, 0));
        assert!(!t.wants(end + Dur(1), 0));
    }

    #[test]
    fn a_record_stays_small() {
        // The module doc's figure; a trace of a long run holds millions of these.
        assert!(std::mem::size_of::<TraceRecord>() <= 32);
    }

    #[test]
    fn drop_reasons_are_named() {
        let d = |x| TraceEvent::Drop(x).reason();
        assert_eq!(d(LinkDrop::Queue(QueueDrop::Overflow)), Some("overflow"));
        assert_eq!(d(LinkDrop::Queue(QueueDrop::Early)), Some("early"));
        assert_eq!(d(LinkDrop::Artificial), Some("artificial"));
        assert_eq!(d(LinkDrop::Down), Some("down"));
        assert_eq!(TraceEvent::Receive.reason(), None);
        assert_eq!(TraceEvent::Enqueue.letter(), "+");
        assert_eq!(TraceEvent::Dequeue.letter(), "-");
    }

    #[test]
    fn messages_round_trip_by_name_and_keep_their_numbers() {
        for m in Message::ALL {
            assert_eq!(Message::from_name(m.name()), Some(m));
            let r = TraceRecord::new(
                Time::ZERO,
                TraceEvent::Receive,
                0,
                1,
                Direction::Forward,
                m,
                Some(42),
                100,
            );
            assert_eq!(r.seq(), m.has_seq().then_some(42));
        }
        assert_eq!(Message::from_name("tcp"), None);
    }
}
