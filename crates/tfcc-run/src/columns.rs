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

/// Per flow, per sampling interval (DESIGN.md: throughput, cwnd or rate, p, RTT).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowColumns {
    pub flow: Vec<i64>,
    /// End of the interval, seconds.
    pub t: Vec<f64>,
    pub throughput_bps: Vec<f64>,
    pub delivered_bytes: Vec<i64>,
    pub cwnd: Vec<Option<f64>>,
    pub rate_bps: Vec<Option<f64>>,
    pub p: Vec<Option<f64>>,
    pub rtt_s: Vec<Option<f64>>,
    /// PTCP (001) only: `k` of Eq. 1 and the control slot length `s` (RTTs).
    pub ptcp_k: Vec<Option<f64>>,
    pub ptcp_s: Vec<Option<f64>>,
    /// PTCP only: `A` as used, and the simulation oracle's `A`, bit/s.
    pub ptcp_a_bps: Vec<Option<f64>>,
    pub ptcp_oracle_a_bps: Vec<Option<f64>>,
}

impl FlowColumns {
    /// The columns of `samples`, consumed as they are converted: the samples are taken from
    /// the end and their buffer is shrunk every 64 Ki rows, so the run's series are not held
    /// twice (at 128 flows × 100 s the series are tens of MB, and issue 4 compares peak memory
    /// with ns-2's).
    pub fn from_samples(mut samples: Vec<FlowSample>) -> Self {
        const CHUNK: usize = 1 << 16;
        let n = samples.len();
        let mut c = FlowColumns {
            flow: Vec::with_capacity(n),
            t: Vec::with_capacity(n),
            throughput_bps: Vec::with_capacity(n),
            delivered_bytes: Vec::with_capacity(n),
            cwnd: Vec::with_capacity(n),
            rate_bps: Vec::with_capacity(n),
            p: Vec::with_capacity(n),
            rtt_s: Vec::with_capacity(n),
            ptcp_k: Vec::with_capacity(n),
            ptcp_s: Vec::with_capacity(n),
            ptcp_a_bps: Vec::with_capacity(n),
            ptcp_oracle_a_bps: Vec::with_capacity(n),
        };
        while let Some(s) = samples.pop() {
            c.flow.push(i64::from(s.flow));
            c.t.push(s.time.as_secs_f64());
            c.throughput_bps.push(s.throughput_bps);
            c.delivered_bytes
                .push(i64::try_from(s.delivered_bytes).unwrap_or(i64::MAX));
            c.cwnd.push(s.cwnd);
            c.rate_bps.push(s.rate_bps);
            c.p.push(s.p);
            c.rtt_s.push(s.rtt_s);
            c.ptcp_k.push(s.ptcp_k);
            c.ptcp_s.push(s.ptcp_s);
            c.ptcp_a_bps.push(s.ptcp_a_bps);
            c.ptcp_oracle_a_bps.push(s.ptcp_oracle_a_bps);
            if samples.len() % CHUNK == 0 {
                samples.shrink_to_fit();
            }
        }
        c.flow.reverse();
        c.t.reverse();
        c.throughput_bps.reverse();
        c.delivered_bytes.reverse();
        c.cwnd.reverse();
        c.rate_bps.reverse();
        c.p.reverse();
        c.rtt_s.reverse();
        c.ptcp_k.reverse();
        c.ptcp_s.reverse();
        c.ptcp_a_bps.reverse();
        c.ptcp_oracle_a_bps.reverse();
        c
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
