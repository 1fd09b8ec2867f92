//! The recorded time series in columns, the shape of `timeseries.parquet` and
//! `queues.parquet` and of the dict of lists the Python API returns, the packet trace in
//! the shape of `trace.parquet`, and PTCP's slots in the shape of `ptcp_slots.parquet`.

use tfcc_sim::frames::FrameRecord;
use tfcc_sim::link::LinkDrop;
use tfcc_sim::packet_pool::Direction;
use tfcc_sim::queue::QueueDrop;
use tfcc_sim::recorder::{FlowSummary, PtcpRecord};
use tfcc_sim::trace::{Message, PacketTrace, TraceEvent, TraceRecord};
use tfcc_sim::{FlowSample, LinkId, LinkSample, LinkSummary};

/// The packet trace ([`tfcc_sim::trace`]), one row per event: the simulator's records (32
/// bytes each) and the names of the traced links. The columns of `trace.parquet` are built from
/// them a row group at a time when the file is written ([`crate::tables::write_trace`]), so a
/// trace is held once, compactly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceColumns {
    /// By link id: the link's name where it is traced.
    pub links: Vec<Option<String>>,
    pub records: Vec<TraceRecord>,
    /// The traced links' departures as pcap files, when the trace asked for them
    /// (`[trace] pcap = true`; [`crate::pcap`]).
    pub pcaps: Vec<crate::pcap::PcapFile>,
    /// The testbed's trace: its pcap files alone, captured on the router's interfaces, and no
    /// `trace.parquet` (the kernel's queues do not show their events one by one).
    pub pcap_only: bool,
}

/// A count or sequence number (`u64` in the simulator) as a value of an `int64` column (the
/// integer of Parquet and polars): one past `i64::MAX`, which no run comes near, stays the
/// largest value rather than turning negative.
pub fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The `direction` column's name of a packet's direction.
pub fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
    }
}

impl TraceColumns {
    /// The trace's records, taken out of it.
    pub fn from_trace(mut trace: PacketTrace) -> Self {
        TraceColumns {
            links: trace.names().to_vec(),
            records: trace.take_records(),
            pcaps: Vec::new(),
            pcap_only: false,
        }
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The name of a traced link.
    pub fn link_name(&self, link: LinkId) -> &str {
        self.links
            .get(link as usize)
            .and_then(Option::as_deref)
            .unwrap_or("")
    }

    /// The trace from the columns of `trace.parquet` (what the Python API hands back to be
    /// written): every value is checked, and the first that is not one the simulator writes is
    /// named with its row.
    #[allow(clippy::too_many_arguments)]
    pub fn from_columns(
        t: &[f64],
        event: &[String],
        reason: &[Option<String>],
        link: &[String],
        flow: &[i64],
        direction: &[String],
        kind: &[String],
        seq: &[Option<i64>],
        size: &[i64],
    ) -> Result<Self, String> {
        let n = t.len();
        let lens = [
            ("event", event.len()),
            ("reason", reason.len()),
            ("link", link.len()),
            ("flow", flow.len()),
            ("direction", direction.len()),
            ("kind", kind.len()),
            ("seq", seq.len()),
            ("size", size.len()),
        ];
        if let Some((name, len)) = lens.iter().find(|(_, len)| *len != n) {
            return Err(format!(
                "trace column {name} has {len} rows where t has {n}"
            ));
        }
        let mut out = TraceColumns::default();
        let mut ids: std::collections::HashMap<&str, LinkId> = std::collections::HashMap::new();
        for i in 0..n {
            let bad = |col: &str, v: &dyn std::fmt::Debug| {
                format!("trace row {i}: {col} {v:?} is not a value the simulator writes")
            };
            let time = (t[i].is_finite() && t[i] >= 0.0)
                .then(|| tfcc_core::Time::from_secs_f64(t[i]))
                .ok_or_else(|| bad("t", &t[i]))?;
            let drop = |r: &Option<String>| match r.as_deref() {
                Some("overflow") => Some(LinkDrop::Queue(QueueDrop::Overflow)),
                Some("early") => Some(LinkDrop::Queue(QueueDrop::Early)),
                Some("artificial") => Some(LinkDrop::Artificial),
                Some("down") => Some(LinkDrop::Down),
                _ => None,
            };
            let ev = match (event[i].as_str(), reason[i].as_deref()) {
                ("+", None) => TraceEvent::Enqueue,
                ("-", None) => TraceEvent::Dequeue,
                ("r", None) => TraceEvent::Receive,
                ("d", Some(_)) => {
                    TraceEvent::Drop(drop(&reason[i]).ok_or_else(|| bad("reason", &reason[i]))?)
                }
                ("d", None) => return Err(bad("reason", &reason[i])),
                ("+" | "-" | "r", Some(_)) => return Err(bad("reason", &reason[i])),
                _ => return Err(bad("event", &event[i])),
            };
            let next = ids.len() as LinkId;
            let l = *ids.entry(link[i].as_str()).or_insert(next);
            if l as usize == out.links.len() {
                out.links.push(Some(link[i].clone()));
            }
            let dir = match direction[i].as_str() {
                "forward" => Direction::Forward,
                "reverse" => Direction::Reverse,
                _ => return Err(bad("direction", &direction[i])),
            };
            let k = Message::from_name(&kind[i]).ok_or_else(|| bad("kind", &kind[i]))?;
            let sq = match seq[i] {
                Some(s) if k.has_seq() => Some(u64::try_from(s).map_err(|_| bad("seq", &seq[i]))?),
                None if !k.has_seq() => None,
                _ => return Err(bad("seq", &seq[i])),
            };
            let fl = u32::try_from(flow[i]).map_err(|_| bad("flow", &flow[i]))?;
            let sz = u32::try_from(size[i]).map_err(|_| bad("size", &size[i]))?;
            out.records
                .push(TraceRecord::new(time, ev, l, fl, dir, k, sq, sz));
        }
        Ok(out)
    }
}

/// Trace records as the rows of `trace.parquet` and of the Python API's `trace` dict, the one
/// place a record becomes a row, so that the file and the dict cannot read a record two ways.
/// The file builds it a row group at a time ([`crate::tables::write_trace`]), the dict over
/// the whole trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRows<'a> {
    pub t: Vec<f64>,
    pub event: Vec<&'static str>,
    pub reason: Vec<Option<&'static str>>,
    pub link: Vec<&'a str>,
    pub flow: Vec<i64>,
    pub direction: Vec<&'static str>,
    pub kind: Vec<&'static str>,
    pub seq: Vec<Option<i64>>,
    pub size: Vec<i64>,
}

impl<'a> TraceRows<'a> {
    /// The rows of `records`, records of `trace` (whose link names they take).
    pub fn of(trace: &'a TraceColumns, records: &[TraceRecord]) -> Self {
        let mut rows = TraceRows::default();
        for r in records {
            rows.t.push(r.time.as_secs_f64());
            rows.event.push(r.event.letter());
            rows.reason.push(r.event.reason());
            rows.link.push(trace.link_name(r.link));
            rows.flow.push(i64::from(r.flow));
            rows.direction.push(direction_name(r.dir));
            rows.kind.push(r.kind.name());
            rows.seq.push(r.seq().map(saturating_i64));
            rows.size.push(i64::from(r.size));
        }
        rows
    }
}

/// A column of optional reals stored compactly: the values present, in order, and one
/// validity bit per row. A `Vec<Option<f64>>` takes 16 bytes a row; this takes 8 where a value
/// is present and a bit where none is (the PTCP columns of a TCP flow, the rate of a window
/// sender). It holds the same values: [`OptF64::iter`] gives back exactly what was pushed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OptF64 {
    values: Vec<f64>,
    valid: Vec<u64>,
    len: usize,
}

impl OptF64 {
    pub fn push(&mut self, v: Option<f64>) {
        let (word, bit) = (self.len / 64, self.len % 64);
        if bit == 0 {
            self.valid.push(0);
        }
        if let Some(x) = v {
            self.valid[word] |= 1 << bit;
            self.values.push(x);
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether row `i` holds a value.
    pub fn is_valid(&self, i: usize) -> bool {
        i < self.len && self.valid[i / 64] >> (i % 64) & 1 == 1
    }

    /// The values present, in row order (what a Parquet column chunk stores).
    pub fn present(&self) -> &[f64] {
        &self.values
    }

    /// Parquet's definition levels: 1 where a value is present, 0 for a null.
    pub fn levels(&self) -> Vec<i16> {
        (0..self.len).map(|i| i16::from(self.is_valid(i))).collect()
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        let mut k = 0;
        (0..self.len).map(move |i| {
            self.is_valid(i).then(|| {
                k += 1;
                self.values[k - 1]
            })
        })
    }

    pub fn to_vec(&self) -> Vec<Option<f64>> {
        self.iter().collect()
    }
}

impl FromIterator<Option<f64>> for OptF64 {
    fn from_iter<I: IntoIterator<Item = Option<f64>>>(it: I) -> Self {
        let mut c = OptF64::default();
        for v in it {
            c.push(v);
        }
        c
    }
}

impl From<Vec<Option<f64>>> for OptF64 {
    fn from(v: Vec<Option<f64>>) -> Self {
        v.into_iter().collect()
    }
}

/// Per flow, per sampling interval (DESIGN.md: throughput, cwnd or rate, p, RTT).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowColumns {
    pub flow: Vec<i64>,
    /// End of the interval, seconds.
    pub t: Vec<f64>,
    pub throughput_bps: Vec<f64>,
    pub delivered_bytes: Vec<i64>,
    pub cwnd: OptF64,
    pub rate_bps: OptF64,
    pub p: OptF64,
    pub rtt_s: OptF64,
    /// PTCP (001) only: `k` of Eq. 1 and the control slot length `s` (RTTs).
    pub ptcp_k: OptF64,
    pub ptcp_s: OptF64,
    /// PTCP only: `A` as used, and the simulation oracle's `A`, bit/s.
    pub ptcp_a_bps: OptF64,
    pub ptcp_oracle_a_bps: OptF64,
}

impl FlowColumns {
    /// The columns of `samples`.
    pub fn from_samples(samples: &[FlowSample]) -> Self {
        let mut c = FlowColumns::default();
        for s in samples {
            c.push(s);
        }
        c
    }

    /// Append one sample: what [`crate::Prepared::run`] does as the simulator takes them
    /// ([`tfcc_sim::Simulation::set_flow_sink`]), so a run's series are held once, in this
    /// form (about 56 bytes a row for a TCP flow, where the simulator's samples take 160).
    pub fn push(&mut self, s: &FlowSample) {
        self.flow.push(i64::from(s.flow));
        self.t.push(s.time.as_secs_f64());
        self.throughput_bps.push(s.throughput_bps);
        self.delivered_bytes.push(saturating_i64(s.delivered_bytes));
        self.cwnd.push(s.cwnd);
        self.rate_bps.push(s.rate_bps);
        self.p.push(s.p);
        self.rtt_s.push(s.rtt_s);
        self.ptcp_k.push(s.ptcp_k);
        self.ptcp_s.push(s.ptcp_s);
        self.ptcp_a_bps.push(s.ptcp_a_bps);
        self.ptcp_oracle_a_bps.push(s.ptcp_oracle_a_bps);
    }

    pub fn len(&self) -> usize {
        self.t.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

/// Per reported link, per sampling interval: the queue and what crossed the link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkColumns {
    pub link: Vec<String>,
    pub t: Vec<f64>,
    pub queue_pkts: Vec<i64>,
    pub queue_pkts_avg: Vec<f64>,
    pub queue_bytes: Vec<i64>,
    pub throughput_bps: Vec<f64>,
    pub drops: Vec<i64>,
}

impl LinkColumns {
    /// Samples of the `reported` links only (the per-flow access links are left out, as in the
    /// summary), named as in the summary.
    pub fn from_samples(
        samples: &[LinkSample],
        links: &[LinkSummary],
        reported: &[LinkId],
    ) -> Self {
        let mut names: Vec<Option<&str>> = vec![None; links.len()];
        for &id in reported {
            let i = id as usize;
            if let (Some(slot), Some(l)) = (names.get_mut(i), links.get(i)) {
                *slot = Some(l.name.as_str());
            }
        }
        let mut c = LinkColumns::default();
        for s in samples {
            let Some(name) = names.get(s.link as usize).copied().flatten() else {
                continue;
            };
            c.link.push(name.to_owned());
            c.t.push(s.time.as_secs_f64());
            c.queue_pkts.push(i64::from(s.queue_pkts));
            c.queue_pkts_avg.push(s.queue_pkts_avg);
            c.queue_bytes.push(saturating_i64(s.queue_bytes));
            c.throughput_bps.push(s.throughput_bps);
            c.drops.push(saturating_i64(s.drops));
        }
        c
    }
}

/// Per video flow, per frame slot (`frames.parquet`, [`tfcc_sim::frames`]): empty when the run
/// has no video source.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameColumns {
    pub flow: Vec<i64>,
    /// The slot's index on the source's frame grid (from 0 at the flow's start).
    pub frame: Vec<i64>,
    /// When the frame came due, seconds.
    pub t: Vec<f64>,
    /// 1 grabbed, 0 suspended by Algorithm 4.
    pub grabbed: Vec<i64>,
    /// Algorithm 5's quantizer; null when suspended or the source has no q.
    pub q: Vec<Option<i64>>,
    pub bytes: Vec<i64>,
    pub packets: Vec<i64>,
    pub delivered: Vec<i64>,
    /// When the receiver held the whole frame, seconds; null if it never did.
    pub complete_s: Vec<Option<f64>>,
    /// Bytes the sender's send buffer held when the frame came due, before it was offered
    /// (002 Sec. 6.2's `sbuf`); null for a sender that does not report its send buffer.
    pub sbuf_bytes: Vec<Option<i64>>,
}

impl FrameColumns {
    pub fn from_records(records: &[FrameRecord]) -> Self {
        let mut c = FrameColumns::default();
        for r in records {
            c.flow.push(i64::from(r.flow));
            c.frame.push(saturating_i64(r.index));
            c.t.push(r.t.as_secs_f64());
            c.grabbed.push(i64::from(r.grabbed));
            c.q.push(r.q.map(i64::from));
            c.bytes.push(saturating_i64(r.bytes));
            c.packets.push(saturating_i64(r.packets));
            c.delivered.push(saturating_i64(r.delivered));
            c.complete_s.push(r.complete_at.map(|t| t.as_secs_f64()));
            c.sbuf_bytes.push(r.sbuf_bytes.map(saturating_i64));
        }
        c
    }

    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

/// Every evaluation and control slot of the run's PTCP flows (001 Secs. 2.1 and 3), one row
/// each: per flow in id order, its evaluation slots and then its control slots, each in the
/// order they ended. They were arrays in `summary.json` until a 600 s run with 1000 SURGE
/// users made that file 47 MB, 96 % of it control slots (docs/scenarios.md, Outputs).
///
/// A member of a PTCP aggregate reports the aggregate's slots (001 Sec. 2.3: `bw` is the
/// sum's), so every member has the same rows under its own id; readers pick one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PtcpSlotColumns {
    pub flow: Vec<i64>,
    /// `eval` (the unit of "slots achieving bw") or `ctrl` (a control slot, diagnostics).
    pub kind: Vec<SlotKind>,
    /// When the slot started and ended, seconds since the start of the run.
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    /// Payload acknowledged in the slot over its length, bit/s.
    pub throughput_bps: Vec<f64>,
    /// `eval` rows: `throughput_bps ≥ bw`; null for `ctrl` rows.
    pub met: Vec<Option<bool>>,
    /// Window cuts in the slot: fast retransmits and timeouts.
    pub fast_retransmits: Vec<i64>,
    pub timeouts: Vec<i64>,
    /// `ctrl` rows (null for `eval` rows): the slot length in sRTTs, its target `g_i` (bit/s),
    /// the `k_max` equation in force (`eq3`, `eq4`), the bound that set `k` on most of its
    /// congestion-avoidance ACKs (`k_bw`, `k_max`, `k_min`; null also when none of its ACKs was
    /// in congestion avoidance), the ACKs on which each bound set `k`, and of the `k_min` ACKs
    /// those on which `k_max` was below `k_bw`.
    pub s: Vec<Option<i64>>,
    pub target_bps: Vec<Option<f64>>,
    pub regime: Vec<Option<String>>,
    pub bound_by: Vec<Option<String>>,
    pub k_bw_acks: Vec<Option<i64>>,
    pub k_max_acks: Vec<Option<i64>>,
    pub k_min_acks: Vec<Option<i64>>,
    pub k_min_over_k_max: Vec<Option<i64>>,
}

/// A row of `ptcp_slots.parquet`: one byte a row held here, its name only in the file (a
/// `String` a row was 24 bytes and an allocation, for one of two values; a 600 s
/// `001-e6-web.toml` run has hundreds of thousands of control slots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SlotKind {
    /// An evaluation slot (001 Sec. 3: "slots achieving bw" counts these).
    Eval,
    /// A control slot, over which `k` is set.
    Ctrl,
}

impl SlotKind {
    /// The name in the file's `kind` column.
    pub fn name(self) -> &'static str {
        match self {
            SlotKind::Eval => "eval",
            SlotKind::Ctrl => "ctrl",
        }
    }

    /// The kind a `kind` value names, if any.
    pub fn from_name(name: &str) -> Option<SlotKind> {
        match name {
            "eval" => Some(SlotKind::Eval),
            "ctrl" => Some(SlotKind::Ctrl),
            _ => None,
        }
    }
}

impl PtcpSlotColumns {
    /// The slots of the PTCP flows among `flows`; `None` when there is none, so a run without
    /// PTCP writes no `ptcp_slots.parquet` (a PTCP flow with no finished slot still has its
    /// file, empty).
    pub fn from_flows(flows: &[FlowSummary]) -> Option<Self> {
        let mut c = PtcpSlotColumns::default();
        let mut any = false;
        for f in flows {
            if let Some(r) = &f.ptcp {
                any = true;
                c.push_flow(f.id, r);
            }
        }
        any.then_some(c)
    }

    fn push_flow(&mut self, flow: u32, r: &PtcpRecord) {
        for e in &r.eval_slots {
            self.push_common(
                flow,
                SlotKind::Eval,
                e.start,
                e.end,
                e.throughput_bps,
                e.cuts,
            );
            self.met.push(Some(e.met));
            self.s.push(None);
            self.target_bps.push(None);
            self.regime.push(None);
            self.bound_by.push(None);
            self.k_bw_acks.push(None);
            self.k_max_acks.push(None);
            self.k_min_acks.push(None);
            self.k_min_over_k_max.push(None);
        }
        for c in &r.ctrl_slots {
            self.push_common(
                flow,
                SlotKind::Ctrl,
                c.start,
                c.end,
                c.throughput_bps,
                c.cuts,
            );
            self.met.push(None);
            self.s.push(Some(i64::from(c.s)));
            self.target_bps.push(Some(c.target_bps));
            self.regime.push(Some(c.regime.into()));
            self.bound_by.push(c.bound_by.map(Into::into));
            self.k_bw_acks.push(Some(saturating_i64(c.bound_counts[0])));
            self.k_max_acks
                .push(Some(saturating_i64(c.bound_counts[1])));
            self.k_min_acks
                .push(Some(saturating_i64(c.bound_counts[2])));
            self.k_min_over_k_max
                .push(Some(saturating_i64(c.k_min_over_k_max)));
        }
    }

    fn push_common(
        &mut self,
        flow: u32,
        kind: SlotKind,
        start: tfcc_core::Time,
        end: tfcc_core::Time,
        throughput_bps: f64,
        cuts: [u64; 2],
    ) {
        self.flow.push(i64::from(flow));
        self.kind.push(kind);
        self.start_s.push(start.as_secs_f64());
        self.end_s.push(end.as_secs_f64());
        self.throughput_bps.push(throughput_bps);
        self.fast_retransmits.push(saturating_i64(cuts[0]));
        self.timeouts.push(saturating_i64(cuts[1]));
    }

    pub fn len(&self) -> usize {
        self.flow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow.is_empty()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_count_past_the_int64_range_saturates() {
        assert_eq!(saturating_i64(0), 0);
        assert_eq!(saturating_i64(i64::MAX as u64), i64::MAX);
        assert_eq!(saturating_i64(i64::MAX as u64 + 1), i64::MAX);
        assert_eq!(saturating_i64(u64::MAX), i64::MAX);
    }

    #[test]
    fn a_compact_column_gives_back_what_was_pushed() {
        // Across word boundaries, with values and nulls in runs and alone.
        let v: Vec<Option<f64>> = (0..200)
            .map(|i| (i % 3 != 0 && i != 64).then(|| f64::from(i) * 0.5))
            .collect();
        let c = OptF64::from(v.clone());
        assert_eq!(c.len(), 200);
        assert_eq!(c.to_vec(), v);
        assert_eq!(c.present().len(), v.iter().flatten().count());
        let levels: Vec<i16> = v.iter().map(|x| i16::from(x.is_some())).collect();
        assert_eq!(c.levels(), levels);
        assert!(!c.is_valid(0) && c.is_valid(1) && !c.is_valid(64) && !c.is_valid(200));
        assert!(OptF64::default().is_empty());
    }

    /// A trace of `n` records on two links, every event, message and direction among them.
    fn trace(n: usize) -> TraceColumns {
        let events = [
            TraceEvent::Enqueue,
            TraceEvent::Dequeue,
            TraceEvent::Receive,
            TraceEvent::Drop(LinkDrop::Queue(QueueDrop::Overflow)),
            TraceEvent::Drop(LinkDrop::Queue(QueueDrop::Early)),
            TraceEvent::Drop(LinkDrop::Artificial),
            TraceEvent::Drop(LinkDrop::Down),
        ];
        let records = (0..n)
            .map(|i| {
                let kind = Message::ALL[i % Message::ALL.len()];
                let dir = if i % 2 == 0 {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
                TraceRecord::new(
                    tfcc_core::Time(i as u64 * 1_234_567),
                    events[i % events.len()],
                    (i % 2) as LinkId * 3,
                    (i % 5) as u32,
                    dir,
                    kind,
                    Some(i as u64 * 7),
                    40 + (i % 1460) as u32,
                )
            })
            .collect();
        let mut links = vec![None; 4];
        links[0] = Some("bottleneck".into());
        links[3] = Some("hop1".into());
        TraceColumns {
            links,
            records,
            pcaps: Vec::new(),
            pcap_only: false,
        }
    }

    /// The trace's columns as Python sees them: t, event, reason, link, flow, direction, kind,
    /// seq, size.
    type Cols = (
        Vec<f64>,
        Vec<String>,
        Vec<Option<String>>,
        Vec<String>,
        Vec<i64>,
        Vec<String>,
        Vec<String>,
        Vec<Option<i64>>,
        Vec<i64>,
    );

    /// The columns `trace_dict` hands to Python ([`TraceRows`]), with owned strings as Python
    /// hands them back.
    fn as_columns(c: &TraceColumns) -> Cols {
        let r = TraceRows::of(c, &c.records);
        let owned = |v: Vec<&str>| v.into_iter().map(String::from).collect();
        (
            r.t,
            owned(r.event),
            r.reason.into_iter().map(|x| x.map(String::from)).collect(),
            owned(r.link),
            r.flow,
            owned(r.direction),
            owned(r.kind),
            r.seq,
            r.size,
        )
    }

    #[test]
    fn a_trace_comes_back_from_its_columns() {
        let c = trace(500);
        let (t, e, re, l, f, d, k, s, z) = as_columns(&c);
        let back = TraceColumns::from_columns(&t, &e, &re, &l, &f, &d, &k, &s, &z).unwrap();
        // Link ids are renumbered in order of appearance; everything else is the same.
        assert_eq!(back.records.len(), 500);
        assert_eq!(as_columns(&back), as_columns(&c));
        assert_eq!(back.link_name(back.records[1].link), "hop1");
    }

    #[test]
    fn a_trace_column_with_a_value_the_simulator_never_writes_is_named() {
        let c = trace(20);
        let cols = as_columns(&c);
        let check = |edit: &dyn Fn(&mut Cols), want: &str| {
            let mut x = cols.clone();
            edit(&mut x);
            let (t, e, re, l, f, d, k, s, z) = x;
            let err = TraceColumns::from_columns(&t, &e, &re, &l, &f, &d, &k, &s, &z).unwrap_err();
            assert!(err.contains(want), "{err}");
        };
        check(&|x| x.1[2] = "x".into(), "trace row 2: event \"x\"");
        check(&|x| x.2[3] = None, "trace row 3: reason None"); // a d without its reason
        check(&|x| x.2[0] = Some("full".into()), "trace row 0: reason");
        check(&|x| x.5[4] = "up".into(), "trace row 4: direction");
        check(&|x| x.6[5] = "tcp".into(), "trace row 5: kind");
        check(&|x| x.7[1] = None, "trace row 1: seq None"); // tcp-data has a number
        check(&|x| x.7[1] = Some(-3), "trace row 1: seq Some(-3)");
        check(&|x| x.4[0] = -1, "trace row 0: flow -1");
        check(&|x| x.8[0] = 1 << 40, "trace row 0: size");
        check(&|x| x.0[0] = f64::NAN, "trace row 0: t NaN");
        check(
            &|x| drop(x.3.pop()),
            "trace column link has 19 rows where t has 20",
        );
    }

    #[test]
    fn a_long_trace_is_written_in_row_groups_and_reads_back_whole() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let n = (1 << 17) * 2 + 5;
        let c = trace(n);
        let dir = std::env::temp_dir().join(format!("tfcc-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.parquet");
        crate::tables::write_trace(&path, &c).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.num_row_groups(), 3);
        assert_eq!(meta.file_metadata().num_rows(), n as i64);
        let rows: Vec<_> = reader
            .get_row_iter(None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let last = rows[n - 1].to_string();
        let r = &c.records[n - 1];
        assert!(last.contains(&format!("size: {}", r.size)), "{last}");
        assert!(
            last.contains(&format!("kind: \"{}\"", r.kind.name())),
            "{last}"
        );
        // An empty trace still has the schema.
        crate::tables::write_trace(&path, &TraceColumns::default()).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
        assert_eq!(
            reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns(),
            9
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_runs_columns_are_its_samples() {
        // What `crate::run` collects through the simulator's sink is the series the
        // simulator would have kept.
        let dir = std::env::temp_dir().join(format!("tfcc-columns-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.toml");
        std::fs::write(
            &path,
            "name = \"c\"\nduration = \"3s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n[[flows]]\n\
             protocol = \"tcp-sack\"\ncount = 2\n[[flows]]\nprotocol = \"tfrc\"\n",
        )
        .unwrap();
        let run = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        let kept = tfcc_sim::scenario::load(&path, &[], None)
            .unwrap()
            .into_simulation()
            .unwrap()
            .run();
        std::fs::remove_dir_all(dir).unwrap();
        assert_eq!(run.flows.len(), 3 * 30);
        assert_eq!(run.flows, FlowColumns::from_samples(&kept.flow_series));
        // No PTCP flow: no slot rows, and so no ptcp_slots.parquet.
        assert!(run.ptcp_slots.is_none());
    }

    /// One lone PTCP flow and a two-member aggregate against three Reno flows; bw set so that
    /// some evaluation slots in the window meet it and some do not.
    pub(crate) const PTCP_SCENARIO: &str = "name = \"ptcp-slots\"\nduration = \"4s\"\n\
        measure_from = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
        bottleneck = { rate = \"20Mbps\", delay = \"10ms\", queue = \"droptail\", limit = 40 }\n\
        [[flows]]\nprotocol = \"ptcp\"\nparams = { bw = \"8Mbps\", e = 8, s_init = 4 }\n\
        [[flows]]\nprotocol = \"ptcp\"\ncount = 2\n\
        params = { bw = \"8Mbps\", e = 8, s_init = 4, group = \"g\" }\n\
        [[flows]]\nprotocol = \"tcp-reno\"\ncount = 3\n";

    #[test]
    fn the_slot_rows_are_the_slots_the_simulator_recorded() {
        let dir = std::env::temp_dir().join(format!("tfcc-ptcp-slots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.toml");
        std::fs::write(&path, PTCP_SCENARIO).unwrap();
        let run = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        let kept = tfcc_sim::scenario::load(&path, &[], None)
            .unwrap()
            .into_simulation()
            .unwrap()
            .run();
        std::fs::remove_dir_all(dir).unwrap();
        let c = run.ptcp_slots.expect("a run with PTCP flows has slot rows");
        let rows = |flow: i64, kind: &str| -> Vec<usize> {
            (0..c.len())
                .filter(|&i| c.flow[i] == flow && c.kind[i].name() == kind)
                .collect()
        };
        let mut mixed = false;
        for f in &kept.summary.flows {
            let (id, entry) = (i64::from(f.id), &run.summary.flows[f.id as usize]);
            let Some(r) = &f.ptcp else {
                assert!(rows(id, "eval").is_empty() && rows(id, "ctrl").is_empty());
                assert!(entry.ptcp.is_none());
                continue;
            };
            let (ev, ct) = (rows(id, "eval"), rows(id, "ctrl"));
            assert_eq!(ev.len(), r.eval_slots.len(), "flow {id}");
            assert_eq!(ct.len(), r.ctrl_slots.len(), "flow {id}");
            assert!(!ev.is_empty() && !ct.is_empty(), "flow {id} recorded slots");
            for (&i, e) in ev.iter().zip(&r.eval_slots) {
                assert_eq!(c.start_s[i], e.start.as_secs_f64());
                assert_eq!(c.end_s[i], e.end.as_secs_f64());
                assert_eq!(c.throughput_bps[i], e.throughput_bps);
                assert_eq!(c.met[i], Some(e.met));
                assert_eq!(
                    [c.fast_retransmits[i], c.timeouts[i]],
                    e.cuts.map(|x| x as i64)
                );
                assert!(c.s[i].is_none() && c.regime[i].is_none() && c.target_bps[i].is_none());
            }
            for (&i, x) in ct.iter().zip(&r.ctrl_slots) {
                assert_eq!(c.start_s[i], x.start.as_secs_f64());
                assert_eq!(c.end_s[i], x.end.as_secs_f64());
                assert_eq!(c.throughput_bps[i], x.throughput_bps);
                assert_eq!(c.met[i], None);
                assert_eq!(c.s[i], Some(i64::from(x.s)));
                assert_eq!(c.target_bps[i], Some(x.target_bps));
                assert_eq!(c.regime[i].as_deref(), Some(x.regime));
                assert_eq!(c.bound_by[i].as_deref(), x.bound_by);
                let counts = [c.k_bw_acks[i], c.k_max_acks[i], c.k_min_acks[i]];
                assert_eq!(counts, x.bound_counts.map(|n| Some(n as i64)));
                assert_eq!(c.k_min_over_k_max[i], Some(x.k_min_over_k_max as i64));
                assert_eq!(
                    [c.fast_retransmits[i], c.timeouts[i]],
                    x.cuts.map(|n| n as i64)
                );
            }
            // The summary's aggregate counts the rows that start in the measurement window.
            let p = entry.ptcp.as_ref().unwrap();
            let window: Vec<usize> = ev
                .into_iter()
                .filter(|&i| c.start_s[i] >= run.summary.measure_from_s)
                .collect();
            let met = window.iter().filter(|&&i| c.met[i] == Some(true)).count();
            assert_eq!((p.slots, p.slots_met), (window.len(), met), "flow {id}");
            mixed |= met > 0 && met < window.len();
        }
        assert!(mixed, "some flow has met and missed slots in the window");
        // The aggregate's members report its slots, each under its own id.
        let member = |id: i64| -> Vec<(f64, f64, Option<bool>)> {
            (0..c.len())
                .filter(|&i| c.flow[i] == id)
                .map(|i| (c.start_s[i], c.throughput_bps[i], c.met[i]))
                .collect()
        };
        assert_eq!(member(1), member(2));
        assert_ne!(member(0), member(1));
    }
}
