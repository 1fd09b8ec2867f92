//! Fig. 4.16's CBR stop (003 §4.6), interval by interval: `cargo run --profile ci -p tfcc-sim
//! --example msfrs_m6_stop [-- SEED]`. Runs `scenarios/003-msfrs-backlogged.toml` with the
//! claims' 0.8 Mb/s, 640 s on/off CBR (stop at 1280 s) to 1400 s and prints, for every WRC update
//! of 1200-1400 s: U_k (all bytes, as WRC measures it), the CBR's and the responses' parts of it,
//! whether the window bound, W+ after the update, W, and the web connections that moved bytes
//! in the interval with their summed and largest cwnd at its end.

use std::path::Path;

use tfcc_core::Time;
use tfcc_sim::scenario;

fn main() {
    let seed: u64 = std::env::args()
        .nth(1)
        .map_or(1, |s| s.parse().expect("seed"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let overrides = [
        "duration=1400s".to_string(),
        "sample_interval=1s".to_string(),
        "web.exceptive={ rate = \"800kbps\", on = \"640s\", off = \"640s\", start = \"640s\" }"
            .to_string(),
    ];
    let built = scenario::load(
        &root.join("003-msfrs-backlogged.toml"),
        &overrides,
        Some(seed),
    )
    .expect("scenario");
    let mut r = built.into_simulation().expect("simulation").run();
    let web = r.web.take().expect("web report");
    let cbr = r.flow_series.iter().map(|s| s.flow).max().expect("flows");
    let cap = 2e6 * 5.0 / 8.0;
    let on = |a: u64, b: u64| web.mean_window_max(Time::from_secs(a), Time::from_secs(b));
    println!(
        "seed {seed}: mean W+ 700-1280 s {:.3}, 1320-1400 s {:.3}",
        on(700, 1280),
        on(1320, 1400)
    );
    println!("   t      U_k   U_cbr  U_resp bind    W+   W  conns  sum_cwnd max_cwnd");
    for w in &web.windows {
        let t = w.time;
        if t < Time::from_secs(1200) || t > Time::from_secs(1400) {
            continue;
        }
        let prev = Time(t.0 - 5_000_000_000); // sample_interval 1 s: WRC's T = 5 s apart
        let at = |time: Time| r.flow_series.iter().filter(move |s| s.time == time);
        let delivered = |f: u32, time: Time| {
            at(time)
                .find(|s| s.flow == f)
                .map_or(0, |s| s.delivered_bytes)
        };
        let u_cbr = (delivered(cbr, t) - delivered(cbr, prev)) as f64 / cap;
        let mut conns = 0;
        let (mut sum, mut max) = (0.0, 0.0f64);
        for s in at(t).filter(|s| s.flow != cbr) {
            if s.delivered_bytes > delivered(s.flow, prev) {
                conns += 1;
                let c = s.cwnd.unwrap_or(0.0);
                sum += c;
                max = max.max(c);
            }
        }
        println!(
            "{:6.0} {:7.3} {:7.3} {:7.3} {:>4} {:6.2} {:3} {:5} {:9.1} {:8.1}",
            t.as_secs_f64(),
            w.utilization,
            u_cbr,
            w.utilization - u_cbr,
            if w.binding { "yes" } else { "no" },
            w.window_max,
            w.outstanding,
            conns,
            sum,
            max
        );
    }
    let down = r
        .summary
        .links
        .iter()
        .position(|l| l.name == "access-down")
        .expect("access-down") as u32;
    println!("\nper second, 1270-1300 s: the responses' share of the link, connections that moved bytes, their summed and largest cwnd (segments) at the second's end, their mean srtt, access-down's mean queue (packets) and drops");
    for sec in 1271..=1300u64 {
        let (t, prev) = (Time::from_secs(sec), Time::from_secs(sec - 1));
        let at = |time: Time| r.flow_series.iter().filter(move |s| s.time == time);
        let delivered = |f: u32, time: Time| {
            at(time)
                .find(|s| s.flow == f)
                .map_or(0, |s| s.delivered_bytes)
        };
        let (mut bytes, mut conns, mut sum, mut max, mut rtt) = (0u64, 0, 0.0, 0.0f64, 0.0);
        for s in at(t).filter(|s| s.flow != cbr) {
            let d = s.delivered_bytes - delivered(s.flow, prev);
            if d > 0 {
                bytes += d;
                conns += 1;
                let c = s.cwnd.unwrap_or(0.0);
                sum += c;
                max = max.max(c);
                rtt += s.rtt_s.unwrap_or(0.0);
            }
        }
        let link = r
            .link_series
            .iter()
            .find(|l| l.time == t && l.link == down)
            .expect("access-down sample");
        let cbr_b = delivered(cbr, t) - delivered(cbr, prev);
        println!(
            "{sec:5} resp {:.3} cbr {:.3} conns {conns:3} sum_cwnd {sum:6.1} max_cwnd {max:5.1} srtt {:.3} queue {:5.1} drops {}",
            bytes as f64 * 1.04 * 8.0 / 2e6,
            cbr_b as f64 * 8.0 / 2e6,
            rtt / f64::from(conns.max(1)),
            link.queue_pkts_avg,
            link.drops
        );
    }
}
