//! The packet trace (`[trace]`, `tfcc_sim::trace`) against the links' own counters: every
//! arrival is a `+` or a `d`, every drop has the reason the link counted, every `r` left the
//! transmitter, and recording a trace changes nothing else in the run.

use tfcc_sim::scenario::load_str;
use tfcc_sim::trace::{PacketTrace, TraceEvent};
use tfcc_sim::RunResult;

/// Two TCP-SACK flows, a TFRC flow and a CBR flow on a small DropTail bottleneck with 1 %
/// artificial loss, which is down from 8 s to 9 s: every kind of drop happens.
const SCENARIO: &str = r#"
duration = "12s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "2Mbps", delay = "20ms", queue = "droptail", limit = 15, loss = { model = "bernoulli", p = 0.01 } }
[[flows]]
protocol = "tcp-sack"
count = 2
[[flows]]
protocol = "tfrc"
[[flows]]
protocol = "cbr"
rate = "300kbps"
[[events]]
at = "8s"
link = "bottleneck"
up = false
[[events]]
at = "9s"
link = "bottleneck"
up = true
"#;

fn run(extra: &str) -> RunResult {
    run_with("", extra)
}

/// `top` goes before the scenario's tables (top-level keys), `extra` after them.
fn run_with(top: &str, extra: &str) -> RunResult {
    let text = format!("{top}{SCENARIO}{extra}");
    let b = load_str(&text, "t.toml", "t", &[], None).expect("the scenario builds");
    b.into_simulation().expect("it builds").run()
}

fn count(t: &PacketTrace, link: &str, pred: impl Fn(TraceEvent) -> bool) -> u64 {
    t.records()
        .iter()
        .filter(|r| t.link_name(r.link) == link && pred(r.event))
        .count() as u64
}

#[test]
fn the_trace_agrees_with_the_link_counters() {
    let r = run("[trace]\n");
    let t = r.trace.as_ref().expect("a trace was recorded");
    assert!(t.records().windows(2).all(|w| w[0].time <= w[1].time));
    for name in ["bottleneck", "bottleneck-rev"] {
        let l = r.summary.links.iter().find(|l| l.name == name).unwrap();
        let is = |e: TraceEvent| move |x: TraceEvent| x == e;
        let plus = count(t, name, is(TraceEvent::Enqueue));
        let drops = count(t, name, |e| matches!(e, TraceEvent::Drop(_)));
        let reason = |why: &str| count(t, name, |e| e.reason() == Some(why));
        let recv = count(t, name, is(TraceEvent::Receive));
        let starts = count(t, name, is(TraceEvent::Dequeue));
        assert_eq!(plus + drops, l.arrivals, "{name}");
        // Every transmission the link started has its `-` (`tx_packets` counts those that
        // ended; the run may end during one).
        assert_eq!(starts, l.totals.started, "{name}");
        assert_eq!(drops, l.drops, "{name}");
        assert_eq!(
            reason("overflow") + reason("early"),
            l.queue_drops,
            "{name}"
        );
        assert_eq!(reason("artificial"), l.artificial_drops, "{name}");
        assert_eq!(reason("down"), l.down_drops, "{name}");
        // What left the transmitter has reached the far end, but for what is still on the
        // 20 ms wire at the end (2 Mb/s: a few packets).
        assert!(
            recv <= l.tx_packets && l.tx_packets - recv < 10,
            "{name}: {recv} r, {l:?}"
        );
    }
    let b = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .unwrap();
    assert!(
        b.queue_drops > 0 && b.artificial_drops > 0 && b.down_drops > 0,
        "{b:?}"
    );
    let kinds: std::collections::BTreeSet<&str> =
        t.records().iter().map(|r| r.kind.name()).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["raw", "tcp-ack", "tcp-data", "tfrc-data", "tfrc-feedback"]
    );
}

#[test]
fn tracing_changes_nothing_else_and_is_deterministic() {
    let plain = run("");
    assert!(plain.trace.is_none());
    let traced = run("[trace]\nlinks = [\"bottleneck\"]\nfrom = \"2s\"\nuntil = \"5s\"\n");
    assert_eq!(plain.summary.flows, traced.summary.flows);
    assert_eq!(plain.summary.links, traced.summary.links);
    assert_eq!(plain.flow_series, traced.flow_series);
    let t = traced.trace.as_ref().unwrap();
    assert!(!t.records().is_empty());
    assert!(t.records().iter().all(|r| {
        let s = r.time.as_secs_f64();
        (2.0..5.0).contains(&s) && t.link_name(r.link) == "bottleneck"
    }));
    let again = run("[trace]\nlinks = [\"bottleneck\"]\nfrom = \"2s\"\nuntil = \"5s\"\n");
    assert_eq!(traced.trace, again.trace);
}

/// What docs/scenarios.md tells a user to do with the trace: the summary's link counts are the
/// measurement window's, so they match the rows at `t ≥ measure_from`; every `d` happens on
/// arrival (a discarded packet has no `+`) and a link is first-in first-out per flow, so the
/// k-th `+` of a (link, flow, direction, kind, seq) pairs with its k-th `r`, and `r − +` less
/// the serialisation time and the link's delay is the packet's queueing delay.
#[test]
fn the_window_and_the_plus_r_pairing_the_docs_describe_hold() {
    use std::collections::HashMap;
    let r = run_with(
        "measure_from = \"3s\"\n",
        "[trace]\nlinks = [\"bottleneck\"]\n",
    );
    let t = r.trace.as_ref().unwrap();
    let l = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .unwrap();
    let from3 = |pred: &dyn Fn(TraceEvent) -> bool| {
        t.records()
            .iter()
            .filter(|x| x.time.as_secs_f64() >= 3.0 && pred(x.event))
            .count() as u64
    };
    let plus = from3(&|e| e == TraceEvent::Enqueue);
    let drops = from3(&|e| matches!(e, TraceEvent::Drop(_)));
    assert_eq!((plus + drops, drops), (l.arrivals, l.drops), "{l:?}");
    assert!(count(t, "bottleneck", |e| matches!(e, TraceEvent::Drop(_))) > l.drops);

    // Pair each + with the - and the r of the same packet key, in order.
    type Key = (u32, bool, tfcc_sim::trace::Message, Option<u64>);
    type Times = std::collections::VecDeque<(f64, Option<f64>, u32)>;
    let mut waiting: HashMap<Key, Times> = HashMap::new();
    let (mut paired, mut max_q) = (0u64, 0.0f64);
    for x in t.records() {
        let key = (
            x.flow,
            x.dir == tfcc_sim::packet_pool::Direction::Forward,
            x.kind,
            x.seq(),
        );
        let now = x.time.as_secs_f64();
        match x.event {
            TraceEvent::Enqueue => waiting
                .entry(key)
                .or_default()
                .push_back((now, None, x.size)),
            TraceEvent::Dequeue => {
                let e = waiting
                    .get_mut(&key)
                    .and_then(|q| q.iter_mut().find(|e| e.1.is_none()))
                    .expect("every - has its + before it");
                assert!(e.0 <= now);
                e.1 = Some(now);
            }
            TraceEvent::Receive => {
                let (t_in, t_out, size) = waiting
                    .get_mut(&key)
                    .and_then(|q| q.pop_front())
                    .expect("every r has its + before it");
                let t_out = t_out.expect("every r has its - before it");
                assert_eq!(size, x.size);
                // 2 Mb/s, 20 ms: the time on the wire, from the start of the transmission.
                let wire = f64::from(size) * 8.0 / 2e6 + 0.020;
                assert!((now - t_out - wire).abs() < 1e-6, "{x:?}: {t_out} to {now}");
                let q = now - t_in - wire;
                assert!(q > -1e-9, "{x:?}: queueing delay {q}");
                assert!((q - (t_out - t_in)).abs() < 1e-6, "{x:?}");
                max_q = max_q.max(q);
                paired += 1;
            }
            TraceEvent::Drop(_) => {}
        }
    }
    let left: usize = waiting.values().map(|q| q.len()).sum();
    assert!(left < 20, "{left} + rows without their r at the end");
    assert!(paired > 1000);
    // At most the 15-packet queue ahead, plus the 1 s outage.
    assert!(max_q < 15.0 * 1040.0 * 8.0 / 2e6 + 1.0 + 1e-6, "{max_q}");
}

/// A packet that arrives at exactly the end of the run is processed and counted by the link,
/// so a trace to the end (the default `until`) has its `+` too: a 1 Gb/s CBR of 500-byte
/// packets (one every 4 µs) started 0.5 ms before the end sends 126 packets, the last at the
/// end itself (the invariant property test found the trace one row short).
#[test]
fn a_trace_to_the_end_of_the_run_keeps_the_packet_arriving_at_the_end() {
    let text = r#"
duration = "500ms"
[topology]
kind = "custom"
nodes = ["a", "b"]
links = [
  { name = "ab", from = "a", to = "b", rate = "1Gbps", delay = "0us", limit = 2 },
  { name = "ba", from = "b", to = "a", rate = "1Gbps", delay = "0us", limit = 2 },
]
[[flows]]
protocol = "cbr"
start = "499.5ms"
packet_size = 500
rate = "1Gbps"
route = ["a", "b"]
[trace]
links = ["ab"]
"#;
    let b = load_str(text, "t.toml", "t", &[], None).expect("the scenario builds");
    let r = b.into_simulation().expect("it builds").run();
    let t = r.trace.as_ref().unwrap();
    let l = r.summary.links.iter().find(|l| l.name == "ab").unwrap();
    assert_eq!(l.arrivals, 126);
    let rows = count(t, "ab", |e| {
        !matches!(e, TraceEvent::Receive | TraceEvent::Dequeue)
    });
    assert_eq!(rows, l.arrivals);
    assert_eq!(t.records().last().unwrap().time.as_secs_f64(), 0.5);
}

/// What docs/scenarios.md says of the time series' `throughput_bps`: a TCP receiver passes data
/// on in order, so at every sample a TCP flow's `delivered_bytes` is the payload of the unbroken
/// run of segments, from the first, that had reached it by then (read here from the `r` rows of
/// its last hop), and an interval counts at most what it held out of order at the interval's
/// start plus what arrived in it. A receiver that counted segments as they arrived, or counted
/// one twice, or a recorder that read it at the wrong time, would break the equality; and the
/// intervals in which a filled hole releases held data, the ones that may exceed the link rate,
/// must occur here (the scenario's losses make holes) for the test to exercise them.
#[test]
fn a_tcp_flows_goodput_is_the_in_order_run_of_what_reached_its_receiver() {
    use tfcc_sim::trace::Message;
    let r = run("[trace]\nlinks = [\"access-dst-0\", \"access-dst-1\"]\n");
    let t = r.trace.as_ref().unwrap();
    let mut releases = 0;
    for flow in 0..2u32 {
        let link = format!("access-dst-{flow}");
        // (time, segment, payload) of every data segment that reached the receiver; the 40 bytes
        // are TCP's header (the modelled SYN, segment 0, is only those).
        let arrivals: Vec<_> = t
            .records()
            .iter()
            .filter(|x| {
                x.flow == flow
                    && x.event == TraceEvent::Receive
                    && x.kind == Message::TcpData
                    && t.link_name(x.link) == link
            })
            .map(|x| (x.time, x.seq().unwrap(), u64::from(x.size - 40)))
            .collect();
        assert!(arrivals.len() > 100, "{flow}: {} arrivals", arrivals.len());
        let mut rx = InOrder::default();
        let mut rest = &arrivals[..];
        let mut prev = 0u64;
        for s in r.flow_series.iter().filter(|s| s.flow == flow) {
            // A segment arriving on the sample's very nanosecond may be counted on either side.
            let mut arrived = rx.take(&mut rest, |at| at < s.time);
            let below = rx.in_order;
            arrived += rx.take(&mut rest, |at| at == s.time);
            let d = s.delivered_bytes;
            assert!(
                (below..=rx.in_order).contains(&d),
                "flow {flow} at {:?}: delivered {d}, in order {below}..={}",
                s.time,
                rx.in_order
            );
            if d - prev > arrived {
                releases += 1;
            }
            prev = d;
        }
    }
    assert!(releases > 0, "no interval released data held out of order");
}

/// A TCP receiver rebuilt from its arrivals: the next segment expected, the payload of the
/// segments held beyond it, and the payload passed on in order so far.
#[derive(Default)]
struct InOrder {
    next: u64,
    held: std::collections::BTreeMap<u64, u64>,
    in_order: u64,
}

impl InOrder {
    /// Takes the leading `(time, segment, payload)` arrivals whose time satisfies `upto`;
    /// returns the payload of those not seen before.
    fn take(
        &mut self,
        arrivals: &mut &[(tfcc_core::Time, u64, u64)],
        upto: impl Fn(tfcc_core::Time) -> bool,
    ) -> u64 {
        let mut fresh = 0;
        while let Some((&(at, seq, payload), rest)) = arrivals.split_first() {
            if !upto(at) {
                break;
            }
            *arrivals = rest;
            if seq >= self.next && self.held.insert(seq, payload).is_none() {
                fresh += payload;
            }
            while let Some(p) = self.held.remove(&self.next) {
                self.in_order += p;
                self.next += 1;
            }
        }
        fresh
    }
}
