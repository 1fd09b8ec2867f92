//! The ns-2 TFRC cross-check dumbbell (issue 5; `bench/ns2/dumbbell.tcl tcp=N tfrc=M`) built
//! as a scenario: N TCP-SACK and M TFRC flows (preset `ns2`), each on its own 100 Mb/s, 1 ms
//! access links, started evenly over the first second in the order ns-2 starts them (TCP flows
//! first; `start_mode=even start_max=1`), the first fifth of the run not measured.
//!
//! ```text
//! cargo run --release -p tfcc-sim --example dumbbell_tfrc -- \
//!     TCP TFRC DURATION_S [LOSS] [SEED] [TFRC_PARAMS] [RATE_BPS DELAY_MS LIMIT]
//! cargo run --release -p tfcc-sim --example dumbbell_tfrc -- 8 8 100
//! cargo run --release -p tfcc-sim --example dumbbell_tfrc -- 0 1 100 0.01 1 'ism = false'
//! ```
//!
//! `TFRC_PARAMS` is TOML for the flows' `params` on top of `preset = "ns2"`. It prints one JSON
//! object: bottleneck utilisation and drops, θ (TCP bytes / all bytes, issue 5), and per flow
//! its kind, goodput, packets sent and lost, loss event rate and mean RTT.

use std::fmt::Write as _;
use std::process::ExitCode;

mod common;
use common::arg;

fn run(args: &[String]) -> Result<String, String> {
    let tcp: usize = arg(args, 0, "TCP", None)?;
    let tfrc: usize = arg(args, 1, "TFRC", None)?;
    let duration: f64 = arg(args, 2, "DURATION_S", None)?;
    let loss: f64 = arg(args, 3, "LOSS", Some(0.0))?;
    let seed: u64 = arg(args, 4, "SEED", Some(1))?;
    let params: String = arg(args, 5, "TFRC_PARAMS", Some(String::new()))?;
    let rate: f64 = arg(args, 6, "RATE_BPS", Some(15e6))?;
    let delay_ms: f64 = arg(args, 7, "DELAY_MS", Some(20.0))?;
    let limit: u32 = arg(args, 8, "LIMIT", Some(100))?;
    let n = tcp + tfrc;
    if n == 0 || !duration.is_finite() || duration <= 0.0 || !(0.0..=1.0).contains(&loss) {
        return Err("need TCP + TFRC > 0, DURATION_S > 0, 0 <= LOSS <= 1".into());
    }
    let loss_key = if loss > 0.0 {
        format!(", loss = {{ model = \"bernoulli\", p = {loss} }}")
    } else {
        String::new()
    };
    let mut text = format!(
        "name = \"dumbbell-tfrc\"\nduration = \"{duration}s\"\nmeasure_from = \"{}s\"\nseed = {seed}\n\
         [topology]\nkind = \"dumbbell\"\n\
         bottleneck = {{ rate = {rate}, delay = \"{delay_ms}ms\", queue = \"droptail\", limit = {limit}{loss_key} }}\n\
         access = {{ rate = \"100Mbps\", delay = \"1ms\", limit = 10000 }}\n",
        duration / 5.0
    );
    let params: toml::Table = toml::from_str(&params).map_err(|e| format!("TFRC_PARAMS: {e}"))?;
    let mut inline = String::from("preset = \"ns2\"");
    for (k, v) in &params {
        let _ = write!(inline, ", {k} = {v}");
    }
    for i in 0..n {
        // start_mode=even: flow i of n at i / n seconds.
        let start = i as f64 / n as f64;
        if i < tcp {
            let _ = write!(text, "[[flows]]\nprotocol = \"tcp-sack\"\nstart = \"{start}s\"\npacket_size = \"1000B\"\n");
        } else {
            let _ = write!(
                text,
                "[[flows]]\nprotocol = \"tfrc\"\nstart = \"{start}s\"\nparams = {{ {inline} }}\n"
            );
        }
    }
    let built = tfcc_sim::scenario::load_str(&text, "dumbbell_tfrc", "dumbbell_tfrc", &[], None)
        .map_err(|e| format!("{e}\n{text}"))?;
    let sim = built.into_simulation().map_err(|e| e.to_string())?;
    let wall = std::time::Instant::now();
    let r = sim.run();
    let wall = wall.elapsed().as_secs_f64();
    let s = &r.summary;
    let b = s
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .ok_or("no bottleneck link")?;
    let bytes = |tcp_kind: bool| -> u64 {
        s.flows
            .iter()
            .filter(|f| f.protocol.starts_with("tcp") == tcp_kind)
            .map(|f| f.bytes_delivered)
            .sum()
    };
    let (tb, fb) = (bytes(true), bytes(false));
    let theta = if tcp > 0 && tfrc > 0 {
        tb as f64 / (tb + fb) as f64
    } else {
        f64::NAN
    };
    let mut flows = Vec::new();
    for f in &s.flows {
        flows.push(format!(
            "{{\"id\": {}, \"kind\": \"{}\", \"throughput_bps\": {:.1}, \"packets_sent\": {}, \
             \"packets_lost\": {}, \"loss_event_rate\": {:.6}, \"mean_rtt_s\": {:.6}, \"timeouts\": {}}}",
            f.id,
            if f.protocol.starts_with("tcp") { "tcp" } else { "tfrc" },
            f.throughput_bps,
            f.packets_sent,
            f.packets_lost,
            f.loss_event_rate,
            f.mean_rtt_s.unwrap_or(f64::NAN),
            f.timeouts,
        ));
    }
    Ok(format!(
        "{{\"tool\": \"tfcc\", \"tcp\": {tcp}, \"tfrc\": {tfrc}, \"utilization\": {:.6}, \
         \"drops_pkts\": {}, \"loss_model_drops_pkts\": {}, \"mean_queue_pkts\": {:.3}, \
         \"theta\": {}, \"wall_seconds\": {wall:.3}, \"flows\": [{}]}}",
        b.utilization,
        b.queue_drops,
        b.artificial_drops,
        b.mean_queue_pkts,
        if theta.is_nan() {
            "null".to_string()
        } else {
            format!("{theta:.6}")
        },
        flows.join(", "),
    ))
}

fn main() -> ExitCode {
    common::main(
        "dumbbell_tfrc",
        "TCP TFRC DURATION_S [LOSS] [SEED] [TFRC_PARAMS] [RATE_BPS DELAY_MS LIMIT]",
        run,
    )
}
