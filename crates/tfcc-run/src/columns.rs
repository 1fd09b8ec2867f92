//! The recorded time series in columns, the shape of `timeseries.parquet` and
//! `queues.parquet` and of the dict of lists the Python API returns, and the packet trace in
//! the shape of `trace.parquet`.

use tfcc_sim::frames::FrameRecord;
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

#[cfg(test)]
mod tests {
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
    }
}
