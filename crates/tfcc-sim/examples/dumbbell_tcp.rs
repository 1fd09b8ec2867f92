//! The ns-2 cross-check dumbbell (`bench/ns2/dumbbell.tcl`) built through the simulator API:
//! N bulk TCP flows over one bottleneck, each on its own 100 Mb/s, 1 ms access links with large
//! buffers, flows started evenly over the first second (`start_mode=even start_max=1`), the
//! first fifth of the run ignored (`measure_from = duration / 5`).
//!
//! ```text
//! cargo run --release -p tfcc-sim --example dumbbell_tcp -- \
//!     FLOWS RATE_BPS DELAY_MS LIMIT DURATION_S LOSS [VARIANT] [SEED] [START_MAX]
//! cargo run --release -p tfcc-sim --example dumbbell_tcp -- 4 10e6 30 50 60 0 sack
//! ```
//!
//! It prints one JSON object: bottleneck utilisation, departures, queue and loss-model drops,
//! per-flow goodput, aggregate goodput and Jain's index. Goodput counts payload (1000 B of each
//! 1040 B segment); ns-2's `TCPSink bytes_` counts the 1040 wire bytes, so the comparison script
//! scales one to the other.

use std::process::ExitCode;

use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::{Dur, Rate, Time};
use tfcc_sim::{
    AccessSpec, DelaySpread, DumbbellSpec, FlowSpec, LinkSpec, LossModel, QueueLimit, QueueSpec,
    SimConfig, Simulation, Topology,
};

mod common;
use common::arg;

fn run(args: &[String]) -> Result<String, String> {
    let flows: usize = arg(args, 0, "FLOWS", None)?;
    let rate: f64 = arg(args, 1, "RATE_BPS", None)?;
    let delay_ms: f64 = arg(args, 2, "DELAY_MS", None)?;
    let limit: u32 = arg(args, 3, "LIMIT", None)?;
    let duration: f64 = arg(args, 4, "DURATION_S", None)?;
    let loss: f64 = arg(args, 5, "LOSS", Some(0.0))?;
    let variant: String = arg(args, 6, "VARIANT", Some("sack".to_string()))?;
    let seed: u64 = arg(args, 7, "SEED", Some(1))?;
    let start_max: f64 = arg(args, 8, "START_MAX", Some(1.0))?;
    // `sack/delack` uses the delayed-ACK sink (ns-2 `TCPSink/Sack1/DelAck`, dumbbell.tcl
    // `delack=1`).
    let (variant, delack) = match variant.strip_suffix("/delack") {
        Some(v) => (v.to_string(), true),
        None => (variant, false),
    };
    let variant = Variant::from_protocol(&format!("tcp-{variant}")).ok_or_else(|| {
        format!("VARIANT must be reno, newreno or sack (optionally /delack), got {variant}")
    })?;
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if flows == 0 || !positive(rate) || !positive(duration) || !(0.0..=1.0).contains(&loss) {
        return Err("need FLOWS > 0, RATE_BPS > 0, DURATION_S > 0, 0 <= LOSS <= 1".into());
    }

    let mut bottleneck = LinkSpec::new(
        "bottleneck",
        Rate::from_bps(rate as u64),
        Dur::from_secs_f64(delay_ms / 1000.0),
        QueueSpec::DropTail(QueueLimit::Packets(limit)),
    );
    if loss > 0.0 {
        bottleneck = bottleneck.with_loss(LossModel::Bernoulli { p: loss });
    }
    let mut access = AccessSpec::new(
        Rate::from_mbps(100),
        DelaySpread::Fixed(Dur::from_millis(1)),
    );
    // dumbbell.tcl's access_limit: every drop happens at the bottleneck.
    access.queue = QueueSpec::DropTail(QueueLimit::Packets(10_000));
    let topo = Topology::dumbbell(&DumbbellSpec {
        bottleneck,
        access,
        flows,
    })
    .map_err(|e| e.to_string())?;
    let b = topo.link_id("bottleneck").ok_or("no bottleneck link")? as usize;
    let mut sim = Simulation::new(
        SimConfig {
            duration: Dur::from_secs_f64(duration),
            measure_from: Dur::from_secs_f64(duration / 5.0),
            seed,
            record_series: false,
            ..SimConfig::default()
        },
        topo,
    )
    .map_err(|e| e.to_string())?;
    let mut cfg = TcpConfig::with_variant(variant);
    if delack {
        cfg.delayed_ack = Some(TcpConfig::NS2_DELACK_INTERVAL);
    }
    for i in 0..flows {
        // start_mode=even: flow i of n at i · start_max / n seconds.
        let start = Time::from_secs_f64(start_max * i as f64 / flows as f64);
        sim.add_flow(FlowSpec::tcp(i, cfg.clone(), start, None))
            .map_err(|e| e.to_string())?;
    }
    let wall = std::time::Instant::now();
    let r = sim.run();
    let wall = wall.elapsed().as_secs_f64();
    let s = &r.summary;
    let l = &s.links[b];
    let thr: Vec<String> = s
        .flows
        .iter()
        .map(|f| format!("{:.1}", f.throughput_bps))
        .collect();
    let total: f64 = s.flows.iter().map(|f| f.throughput_bps).sum();
    let rexmit: u64 = s.flows.iter().map(|f| f.retransmits).sum();
    let per_flow_rexmit: Vec<String> = s.flows.iter().map(|f| f.retransmits.to_string()).collect();
    let timeouts: u64 = s.flows.iter().map(|f| f.timeouts).sum();
    Ok(format!(
        "{{\"tool\": \"tfcc\", \"variant\": \"{}\", \"flows\": {flows}, \"utilization\": {:.6}, \
         \"departures_pkts\": {}, \"drops_pkts\": {}, \"loss_model_drops_pkts\": {}, \
         \"mean_queue_pkts\": {:.3}, \"total_goodput_bps\": {:.1}, \"jain_index\": {:.6}, \
         \"retransmits\": {rexmit}, \"timeouts\": {timeouts}, \"throughput_bps\": [{}], \
         \"retransmits_per_flow\": [{}], \
         \"wall_seconds\": {wall:.3}}}",
        variant.name(),
        l.utilization,
        l.tx_packets,
        l.queue_drops,
        l.artificial_drops,
        l.mean_queue_pkts,
        total,
        s.jain_index.unwrap_or(f64::NAN),
        thr.join(", "),
        per_flow_rexmit.join(", "),
    ))
}

fn main() -> ExitCode {
    common::main(
        "dumbbell_tcp",
        "FLOWS RATE_BPS DELAY_MS LIMIT DURATION_S LOSS [VARIANT] [SEED] [START_MAX]",
        run,
    )
}
