//! Packet-level trace of thesis 004's E10 setup 3 (Sec. 4.8.2: a TCP joining a running TFRC at
//! 80 s, `scenarios/004-e10-setup3.toml`): `cargo run --profile ci -p tfcc-sim --example
//! e10_setup3_trace -- SEED OUT.csv [KEY=VALUE ...]` (the overrides as `tfcc run --set`).
//!
//! Runs the scenario to 160 s with every endpoint wrapped in a recorder and writes one CSV row per
//! event from 70 s on: `t,flow,kind,a,b,c,d,e`, where `kind` is
//! - `tx`: a data packet sent (`a` sequence number, `b` 1 for a TCP retransmission);
//! - `rx`: a data packet received (`a` sequence number, `b` its send time in s), so a packet sent
//!   and never received was dropped on the way;
//! - `tcp`: the TCP sender's state after an event that changed it (`a` cwnd, `b` ssthresh, `c`
//!   1 in fast recovery, `d` timeouts so far, `e` fast retransmits so far);
//! - `fb`: a TFRC receiver report at the sender (`a` reported p, `b` X_recv in B/s, `c` the
//!   sender's rate in B/s after it, `d` X_calc or -1, `e` the sender's smoothed RTT in s);
//! - `rate`: the TFRC sender's rate changed outside a report (the no-feedback timer);
//! - `rxp`: the TFRC receiver's loss event rate changed (`a` the new p).
//!
//! The analysis (drops per flow, queue or random, per TCP window, fast recoveries against
//! timeouts) is `scripts/e10_setup3_trace.py`; docs/reproductions/log/tfrc.md has the findings.

use std::path::Path;

use tfcc_core::endpoint::{Endpoint, Receiver};
use tfcc_core::tcp::TcpSender;
use tfcc_core::tfrc::{TfrcReceiver, TfrcSender};
use tfcc_core::{Header, Packet, Time};
use tfcc_sim::scenario;
use tfcc_sim::{ReceiverImpl, SenderImpl};

mod trace;
use trace::{Log, Tap, Traced};

/// Rows before this are not written (the trace is about 75-125 s).
const FROM: Time = Time::from_secs(70);

fn row(log: &Log, now: Time, flow: usize, kind: &str, vals: &[f64]) {
    if now >= FROM {
        trace::row(log, now, flow, kind, vals);
    }
}

fn data_seq(p: &Packet) -> Option<(u64, f64, bool)> {
    match &p.header {
        Header::TcpData(d) => Some((d.seq, d.ts.as_secs_f64(), d.retransmit)),
        Header::TfrcData(d) => Some((d.seq, d.timestamp.as_secs_f64(), false)),
        _ => None,
    }
}

struct TcpTap {
    flow: usize,
    log: Log,
    last: (f64, u64, bool, u64, u64),
}

impl TcpTap {
    fn state(&mut self, inner: &TcpSender, now: Time) {
        let st = inner.stats();
        let s = (
            inner.cwnd(),
            inner.ssthresh(),
            inner.in_recovery(),
            st.timeouts,
            inner.fast_retransmits(),
        );
        if s != self.last {
            self.last = s;
            let vals = [
                s.0,
                s.1 as f64,
                f64::from(u8::from(s.2)),
                s.3 as f64,
                s.4 as f64,
            ];
            row(&self.log, now, self.flow, "tcp", &vals);
        }
    }
}

impl Tap<TcpSender> for TcpTap {
    fn after_packet(&mut self, inner: &TcpSender, now: Time, _pkt: &Packet) {
        self.state(inner, now);
    }
    fn after_timeout(&mut self, inner: &TcpSender, now: Time) {
        self.state(inner, now);
    }
    fn sent(&mut self, _inner: &TcpSender, now: Time, p: &Packet) {
        if let Some((seq, _, rexmit)) = data_seq(p) {
            let vals = [seq as f64, f64::from(u8::from(rexmit))];
            row(&self.log, now, self.flow, "tx", &vals);
        }
    }
}

struct TfrcTap {
    flow: usize,
    log: Log,
    rate: f64,
}

impl Tap<TfrcSender> for TfrcTap {
    fn after_packet(&mut self, inner: &TfrcSender, now: Time, pkt: &Packet) {
        self.rate = inner.rate();
        if let Header::TfrcFeedback(f) = &pkt.header {
            let srtt = inner.rtt().smoothed_secs().unwrap_or(-1.0);
            let vals = [
                f.p,
                f64::from(f.x_recv),
                self.rate,
                inner.x_calc().unwrap_or(-1.0),
                srtt,
            ];
            row(&self.log, now, self.flow, "fb", &vals);
        }
    }
    fn after_timeout(&mut self, inner: &TfrcSender, now: Time) {
        if inner.rate() != self.rate {
            self.rate = inner.rate();
            row(&self.log, now, self.flow, "rate", &[self.rate]);
        }
    }
    fn sent(&mut self, _inner: &TfrcSender, now: Time, p: &Packet) {
        if let Some((seq, _, _)) = data_seq(p) {
            row(&self.log, now, self.flow, "tx", &[seq as f64, 0.0]);
        }
    }
}

struct RxTap<R> {
    flow: usize,
    log: Log,
    p: f64,
    /// The TFRC receiver's loss event rate, when the receiver is TFRC's.
    tfrc_p: fn(&R) -> Option<f64>,
}

impl<R: Receiver> Tap<R> for RxTap<R> {
    fn before_packet(&mut self, _inner: &R, now: Time, pkt: &Packet) {
        if let Some((seq, ts, _)) = data_seq(pkt) {
            row(&self.log, now, self.flow, "rx", &[seq as f64, ts]);
        }
    }
    fn after_packet(&mut self, inner: &R, now: Time, _pkt: &Packet) {
        if let Some(p) = (self.tfrc_p)(inner) {
            if p != self.p {
                self.p = p;
                row(&self.log, now, self.flow, "rxp", &[p]);
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("seed"));
    let out = args.next().unwrap_or_else(|| "e10_setup3_trace.csv".into());
    let mut overrides = vec!["duration=160s".to_string(), "measure_from=80s".to_string()];
    overrides.extend(args);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut built = scenario::load(&root.join("004-e10-setup3.toml"), &overrides, Some(seed))
        .expect("scenario");
    let log = trace::new_log();
    for (i, f) in built.flows.iter_mut().enumerate() {
        let placeholder = || SenderImpl::Custom(Box::new(TcpSender::new(Default::default())));
        f.sender = match std::mem::replace(&mut f.sender, placeholder()) {
            SenderImpl::Tcp(s) => SenderImpl::Custom(Box::new(Traced {
                inner: s,
                tap: TcpTap {
                    flow: i,
                    log: log.clone(),
                    last: (f64::NAN, 0, false, 0, 0),
                },
            })),
            SenderImpl::Tfrc(s) => {
                let rate = s.rate();
                SenderImpl::Custom(Box::new(Traced {
                    inner: *s,
                    tap: TfrcTap {
                        flow: i,
                        log: log.clone(),
                        rate,
                    },
                }))
            }
            _ => panic!("flow {i}: the trace knows TCP and TFRC senders only"),
        };
        let sink = || ReceiverImpl::Sink(Default::default());
        f.receiver = match std::mem::replace(&mut f.receiver, sink()) {
            ReceiverImpl::Tcp(r) => ReceiverImpl::Custom(Box::new(Traced {
                inner: r,
                tap: RxTap {
                    flow: i,
                    log: log.clone(),
                    p: f64::NAN,
                    tfrc_p: |_| None,
                },
            })),
            ReceiverImpl::Tfrc(r) => ReceiverImpl::Custom(Box::new(Traced {
                inner: *r,
                tap: RxTap {
                    flow: i,
                    log: log.clone(),
                    p: f64::NAN,
                    tfrc_p: |r: &TfrcReceiver| Some(r.loss_event_rate()),
                },
            })),
            _ => panic!("flow {i}: the trace knows TCP and TFRC receivers only"),
        };
    }
    let r = built.into_simulation().expect("simulation").run();
    std::fs::write(&out, log.lock().expect("log").as_bytes()).expect("write the trace");
    let bn = &r.summary.links[0];
    println!(
        "seed {seed}: {out}; bottleneck 80-160 s: {} queue drops, {} random drops",
        bn.queue_drops, bn.artificial_drops
    );
    for f in &r.summary.flows {
        println!(
            "  flow {} {}: {:.0} b/s, timeouts {}",
            f.id, f.protocol, f.throughput_bps, f.timeouts
        );
    }
}
