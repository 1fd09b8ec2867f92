//! The recorded time series in columns, the shape of `timeseries.parquet` and
//! `queues.parquet` and of the dict of lists the Python API returns, the packet trace in
//! the shape of `trace.parquet`, and PTCP's slots in the shape of `ptcp_slots.parquet`.

use tfcc_sim::frames::FrameRecord;
use tfcc_sim::recorder::{FlowSummary, PtcpRecord};
use tfcc_sim::trace::PacketTrace;
use tfcc_sim::{FlowSample, LinkId, LinkSample, LinkSummary};

/// The packet trace ([`tfcc_sim::trace`]), one row per event.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceColumns {
    /// Seconds since the start of the run.
    pub t: Vec<f64>,
    /// ns-2's letter: `+` (accepted by the link), `d` (discarded), `r` (reached its far end).
    pub event: Vec<String>,
    /// For `d`: `overflow`, `early`, `artificial` or `down`.
    pub reason: Vec<Option<String>>,
    pub link: Vec<String>,
    pub flow: Vec<i64>,
    /// `forward` (data) or `reverse` (feedback), as the flow's route runs.
    pub direction: Vec<String>,
    /// The protocol message (`tcp-data`, `tcp-ack`, `tfrc-data`, ...).
    pub kind: Vec<String>,
    /// The message's sequence number where it has one.
    pub seq: Vec<Option<i64>>,
    /// Bytes on the wire.
    pub size: Vec<i64>,
}

impl TraceColumns {
    pub fn from_trace(trace: &PacketTrace) -> Self {
        let r = trace.records();
        let mut c = TraceColumns {
            t: Vec::with_capacity(r.len()),
            event: Vec::with_capacity(r.len()),
            reason: Vec::with_capacity(r.len()),
            link: Vec::with_capacity(r.len()),
            flow: Vec::with_capacity(r.len()),
            direction: Vec::with_capacity(r.len()),
            kind: Vec::with_capacity(r.len()),
            seq: Vec::with_capacity(r.len()),
            size: Vec::with_capacity(r.len()),
        };
        for e in r {
            c.t.push(e.time.as_secs_f64());
            c.event.push(e.event.letter().into());
            c.reason.push(e.event.reason().map(Into::into));
            c.link.push(trace.link_name(e.link).into());
            c.flow.push(i64::from(e.flow));
            c.direction.push(
                match e.dir {
                    tfcc_sim::packet_pool::Direction::Forward => "forward",
                    tfcc_sim::packet_pool::Direction::Reverse => "reverse",
                }
                .into(),
            );
            c.kind.push(e.kind.into());
            c.seq
                .push(e.seq.map(|s| i64::try_from(s).unwrap_or(i64::MAX)));
            c.size.push(i64::from(e.size));
        }
        c
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
        self.delivered_bytes
            .push(i64::try_from(s.delivered_bytes).unwrap_or(i64::MAX));
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
            c.queue_bytes
                .push(i64::try_from(s.queue_bytes).unwrap_or(i64::MAX));
            c.throughput_bps.push(s.throughput_bps);
            c.drops.push(i64::try_from(s.drops).unwrap_or(i64::MAX));
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
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let mut c = FrameColumns::default();
        for r in records {
            c.flow.push(i64::from(r.flow));
            c.frame.push(int(r.index));
            c.t.push(r.t.as_secs_f64());
            c.grabbed.push(i64::from(r.grabbed));
            c.q.push(r.q.map(i64::from));
            c.bytes.push(int(r.bytes));
            c.packets.push(int(r.packets));
            c.delivered.push(int(r.delivered));
            c.complete_s.push(r.complete_at.map(|t| t.as_secs_f64()));
            c.sbuf_bytes.push(r.sbuf_bytes.map(int));
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
    pub kind: Vec<String>,
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
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        for e in &r.eval_slots {
            self.push_common(flow, "eval", e.start, e.end, e.throughput_bps, e.cuts);
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
            self.push_common(flow, "ctrl", c.start, c.end, c.throughput_bps, c.cuts);
            self.met.push(None);
            self.s.push(Some(i64::from(c.s)));
            self.target_bps.push(Some(c.target_bps));
            self.regime.push(Some(c.regime.into()));
            self.bound_by.push(c.bound_by.map(Into::into));
            self.k_bw_acks.push(Some(int(c.bound_counts[0])));
            self.k_max_acks.push(Some(int(c.bound_counts[1])));
            self.k_min_acks.push(Some(int(c.bound_counts[2])));
            self.k_min_over_k_max.push(Some(int(c.k_min_over_k_max)));
        }
    }

    fn push_common(
        &mut self,
        flow: u32,
        kind: &str,
        start: tfcc_core::Time,
        end: tfcc_core::Time,
        throughput_bps: f64,
        cuts: [u64; 2],
    ) {
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.flow.push(i64::from(flow));
        self.kind.push(kind.into());
        self.start_s.push(start.as_secs_f64());
        self.end_s.push(end.as_secs_f64());
        self.throughput_bps.push(throughput_bps);
        self.fast_retransmits.push(int(cuts[0]));
        self.timeouts.push(int(cuts[1]));
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
                .filter(|&i| c.flow[i] == flow && c.kind[i] == kind)
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
