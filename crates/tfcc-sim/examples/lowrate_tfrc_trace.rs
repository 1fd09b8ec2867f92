//! Per-event trace of the TFRC flows of any scenario, for TFRC at very low rates (thesis 004's
//! cable-modem stand-in, `scenarios/004-e3-cable.toml`, where a flow sends well under one packet
//! per RTT): `cargo run --profile ci -p tfcc-sim --example lowrate_tfrc_trace -- SCENARIO SEED
//! OUT.csv [KEY=VALUE ...]` (the overrides as `tfcc run --set`).
//!
//! One CSV row per event, `t,flow,kind,a,b,c,d,e`, where `kind` is
//! - `tx`: a data packet sent (`a` sequence number, `b` the sender's mode: 0 Init RTT,
//!   1 slowstart, 2 congestion control, 3 forced);
//! - `rx`: a data packet received (`a` sequence number, `b` its send time in s, `c` the smoothed
//!   RTT in its header in s, `d` the latest RTT sample in its header in s), so a packet sent and
//!   never received was dropped;
//! - `fb`: a report at the sender (`a` reported p, `b` X_recv in B/s, `c` the sender's rate in
//!   B/s after it, `d` X_calc or -1, `e` the sender's smoothed RTT in s);
//! - `nfb`: the no-feedback timer fired (`a` the rate after it in B/s, `b` the interval it had
//!   been armed with, in s);
//! - `rxp`: the receiver's loss event rate changed (`a` the new p, `b` loss events so far,
//!   `c` the newest closed interval in packets, `d` closed intervals held, `e` the open one).
//!
//! TCP flows run unwrapped. docs/reproductions/log/tfrc.md (section "Cable-modem stand-in: why
//! TFRC's low-multiplexing fairness falls short") has what it showed.

use std::path::PathBuf;

use tfcc_core::endpoint::Endpoint;
use tfcc_core::loss_history::{AnyEstimator, LossEstimator};
use tfcc_core::tcp::TcpSender;
use tfcc_core::tfrc::Mode;
use tfcc_core::tfrc::{TfrcReceiver, TfrcSender};
use tfcc_core::{Header, Packet, Time};
use tfcc_sim::scenario;
use tfcc_sim::{ReceiverImpl, SenderImpl};

mod trace;
use trace::{row, Log, Tap, Traced};

fn mode_code(m: Mode) -> f64 {
    match m {
        Mode::InitRtt => 0.0,
        Mode::Slowstart => 1.0,
        Mode::CongestionControl => 2.0,
        Mode::Forced => 3.0,
    }
}

struct TxTap {
    flow: usize,
    log: Log,
    /// The timer's count and interval before it fired.
    armed: (u64, Option<tfcc_core::Dur>),
}

impl Tap<TfrcSender> for TxTap {
    fn after_packet(&mut self, inner: &TfrcSender, now: Time, pkt: &Packet) {
        if let Header::TfrcFeedback(f) = &pkt.header {
            let vals = [
                f.p,
                f64::from(f.x_recv),
                inner.rate(),
                inner.x_calc().unwrap_or(-1.0),
                inner.rtt().smoothed_secs().unwrap_or(-1.0),
            ];
            row(&self.log, now, self.flow, "fb", &vals);
        }
    }
    fn before_timeout(&mut self, inner: &TfrcSender, _now: Time) {
        let st = inner.stats();
        self.armed = (st.timeouts, st.rto);
    }
    fn after_timeout(&mut self, inner: &TfrcSender, now: Time) {
        if inner.stats().timeouts != self.armed.0 {
            let iv = self.armed.1.map_or(-1.0, |d| d.as_secs_f64());
            row(&self.log, now, self.flow, "nfb", &[inner.rate(), iv]);
        }
    }
    fn sent(&mut self, _inner: &TfrcSender, now: Time, p: &Packet) {
        if let Header::TfrcData(d) = &p.header {
            let vals = [d.seq as f64, mode_code(d.mode)];
            row(&self.log, now, self.flow, "tx", &vals);
        }
    }
}

struct RxTap {
    flow: usize,
    log: Log,
    p: f64,
}

impl Tap<TfrcReceiver> for RxTap {
    fn before_packet(&mut self, _inner: &TfrcReceiver, now: Time, pkt: &Packet) {
        if let Header::TfrcData(d) = &pkt.header {
            let vals = [
                d.seq as f64,
                d.timestamp.as_secs_f64(),
                d.rtt.as_secs_f64(),
                d.rtt_sample.as_secs_f64(),
            ];
            row(&self.log, now, self.flow, "rx", &vals);
        }
    }
    fn after_packet(&mut self, inner: &TfrcReceiver, now: Time, _pkt: &Packet) {
        let p = inner.loss_event_rate();
        if p != self.p {
            self.p = p;
            let est = inner.estimator();
            let (newest, held, open) = match est {
                AnyEstimator::Ali(h) => {
                    let c: Vec<f64> = h.closed_intervals().collect();
                    (
                        c.first().copied().unwrap_or(-1.0),
                        c.len() as f64,
                        h.open_interval() as f64,
                    )
                }
                _ => (-1.0, -1.0, -1.0),
            };
            let vals = [p, est.loss_events() as f64, newest, held, open];
            row(&self.log, now, self.flow, "rxp", &vals);
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().expect("SCENARIO"));
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("seed"));
    let out = args
        .next()
        .unwrap_or_else(|| "lowrate_tfrc_trace.csv".into());
    let overrides: Vec<String> = args.collect();
    let mut built = scenario::load(&path, &overrides, Some(seed)).expect("scenario");
    let log = trace::new_log();
    for (i, f) in built.flows.iter_mut().enumerate() {
        let placeholder = || SenderImpl::Custom(Box::new(TcpSender::new(Default::default())));
        f.sender = match std::mem::replace(&mut f.sender, placeholder()) {
            SenderImpl::Tfrc(s) => SenderImpl::Custom(Box::new(Traced {
                inner: *s,
                tap: TxTap {
                    flow: i,
                    log: log.clone(),
                    armed: (0, None),
                },
            })),
            other => other,
        };
        let sink = || ReceiverImpl::Sink(Default::default());
        f.receiver = match std::mem::replace(&mut f.receiver, sink()) {
            ReceiverImpl::Tfrc(r) => ReceiverImpl::Custom(Box::new(Traced {
                inner: *r,
                tap: RxTap {
                    flow: i,
                    log: log.clone(),
                    p: 0.0,
                },
            })),
            other => other,
        };
    }
    let r = built.into_simulation().expect("simulation").run();
    std::fs::write(&out, log.lock().expect("log").as_bytes()).expect("write the trace");
    let bn = &r.summary.links[0];
    println!(
        "seed {seed}: {out}; bottleneck: {} queue drops, mean queue {:.1} packets",
        bn.queue_drops, bn.mean_queue_pkts
    );
    for f in &r.summary.flows {
        println!(
            "  flow {} {}: {:.0} b/s, timeouts {}",
            f.id, f.protocol, f.throughput_bps, f.timeouts
        );
    }
}
