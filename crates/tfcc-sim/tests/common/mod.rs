//! The dumbbell of `bench/ns2/dumbbell.tcl`, shared by the end-to-end tests: one bottleneck,
//! per-flow 100 Mb/s access links with 10 000-packet buffers, the first fifth of the run not
//! measured, no time series recorded.

use tfcc_core::{Dur, Rate};
use tfcc_sim::{
    AccessSpec, DelaySpread, DumbbellSpec, LinkSpec, LossModel, QueueLimit, QueueSpec, SimConfig,
    Simulation, Topology,
};

/// The bottleneck: rate, one-way delay, DropTail limit in packets, Bernoulli loss (0: none).
pub struct Bottleneck {
    pub bps: u64,
    pub delay: Dur,
    pub limit: u32,
    pub loss: f64,
}

/// The dumbbell for `flows` flows with access delays `access`, and the bottleneck's index in
/// the run summary's links.
pub fn dumbbell(b: &Bottleneck, access: DelaySpread, flows: usize) -> (Topology, usize) {
    let mut bottleneck = LinkSpec::new(
        "bottleneck",
        Rate::from_bps(b.bps),
        b.delay,
        QueueSpec::DropTail(QueueLimit::Packets(b.limit)),
    );
    if b.loss > 0.0 {
        bottleneck = bottleneck.with_loss(LossModel::Bernoulli { p: b.loss });
    }
    let mut access = AccessSpec::new(Rate::from_mbps(100), access);
    access.queue = QueueSpec::DropTail(QueueLimit::Packets(10_000));
    let topo = Topology::dumbbell(&DumbbellSpec {
        bottleneck,
        access,
        flows,
    })
    .unwrap();
    let index = topo.link_id("bottleneck").unwrap() as usize;
    (topo, index)
}

/// A simulation of `secs` seconds measured from `secs / 5`, without time series.
pub fn simulation(topo: Topology, secs: u64, seed: u64) -> Simulation {
    Simulation::new(
        SimConfig {
            duration: Dur::from_secs(secs),
            measure_from: Dur::from_secs(secs) / 5,
            seed,
            record_series: false,
            ..SimConfig::default()
        },
        topo,
    )
    .unwrap()
}

/// One flow's dumbbell on a 100 Mb/s, 20 ms bottleneck (1000 packets of DropTail) whose losses
/// come only from `model`: the lossy link of the 003 taxonomy and WARC tests.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn lossy_link(model: LossModel) -> Topology {
    let link = LinkSpec::new(
        "bottleneck",
        Rate::from_mbps(100),
        Dur::from_millis(20),
        QueueSpec::DropTail(QueueLimit::Packets(1000)),
    )
    .with_loss(model);
    let mut access = AccessSpec::new(
        Rate::from_mbps(100),
        DelaySpread::Fixed(Dur::from_millis(1)),
    );
    access.queue = QueueSpec::DropTail(QueueLimit::Packets(10_000));
    Topology::dumbbell(&DumbbellSpec {
        bottleneck: link,
        access,
        flows: 1,
    })
    .unwrap()
}
