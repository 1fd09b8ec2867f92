//! One simulator run, from a scenario file to the output contract of DESIGN.md ("Outputs"):
//! `summary.json`, `timeseries.parquet`, `queues.parquet` and PNG plots (and, where the run
//! has them, `frames.parquet`, `ptcp_slots.parquet` and `trace.parquet`), written atomically.
//!
//! This is what `tfcc run` executes. Issue 4 times `tfcc run` against ns-2 with set-up and
//! outputs included, and ns-2 finishes a 100 s two-flow dumbbell in a third of a second: a
//! Python layer that imports a CLI framework, pyarrow and a plotting library spends more than
//! that before the first event. So the whole command lives here, in Rust, and the Python
//! package calls it ([`cli::run_command`]) before importing anything else; the Python API
//! (`tfcc.run_scenario`, `tfcc.run.run`) uses the same functions, so there is one
//! implementation of the summary, the tables and the plots.

pub mod cli;
pub mod columns;
pub mod output;
pub mod pcap;
pub mod plots;
pub mod summary;
pub mod tables;
pub mod testbed;
pub mod web;

use std::path::Path;
use std::time::Instant;

use tfcc_core::Time;
use tfcc_sim::scenario;

pub use columns::{
    FlowColumns, FrameColumns, LinkColumns, OptF64, PtcpSlotColumns, SlotKind, TraceColumns,
};
pub use summary::Summary;

/// Why a run did not produce results. Each message names the file (and key) concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The scenario cannot run: unreadable, malformed, or refused by the simulator.
    Scenario(String),
    /// The output directory cannot be used or written.
    Output(String),
    /// The progress callback asked to stop.
    Cancelled,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Scenario(m) | RunError::Output(m) => f.write_str(m),
            RunError::Cancelled => f.write_str("run abandoned"),
        }
    }
}

impl std::error::Error for RunError {}

/// A finished run: its summary and its time series, ready to be written or handed to Python.
#[derive(Clone, Debug)]
pub struct Finished {
    pub summary: Summary,
    pub flows: FlowColumns,
    pub links: LinkColumns,
    /// The packet trace, when the scenario asked for one (`[trace]`).
    pub trace: Option<TraceColumns>,
    /// Per video flow, per frame slot; empty without a video source (no `frames.parquet`).
    pub frames: FrameColumns,
    /// Per PTCP flow, per evaluation and control slot; `None` when the run has no PTCP flow
    /// (no `ptcp_slots.parquet`).
    pub ptcp_slots: Option<PtcpSlotColumns>,
}

/// A scenario loaded and built into a simulation, ready to run: what `tfcc run` checks before
/// it looks at the output directory, so the scenario is read and built once.
pub struct Prepared {
    name: String,
    info: Vec<scenario::FlowInfo>,
    reported: Vec<tfcc_sim::LinkId>,
    web_info: Option<scenario::WebInfo>,
    trace: Option<summary::TraceSection>,
    /// The flows' addresses and wire forms, when the trace writes pcap files.
    pcap: Option<pcap::PcapPlan>,
    sim: tfcc_sim::Simulation,
    started: Instant,
}

/// Load, validate and build a scenario (the simulator's own checks included) without running
/// it. `seed` replaces the file's.
pub fn prepare(path: &Path, overrides: &[String], seed: Option<u64>) -> Result<Prepared, RunError> {
    let started = Instant::now();
    let built =
        scenario::load(path, overrides, seed).map_err(|e| RunError::Scenario(e.to_string()))?;
    let name = built.name.clone();
    let info = built.flow_info.clone();
    let reported = built.reported_links.clone();
    let web_info = built.web_info.clone();
    let trace = built.cfg.trace.as_ref().map(|t| {
        let nodes = built.node_numbers();
        summary::TraceSection::new(&built.topology, &nodes, &built.flows, &t.links)
    });
    let pcap = match (&built.cfg.trace, &trace) {
        (Some(t), Some(section)) if t.pcap => {
            Some(pcap::PcapPlan::new(&built.flows, &section.flows))
        }
        _ => None,
    };
    let sim = built
        .into_simulation()
        .map_err(|e| RunError::Scenario(format!("{}: {e}", path.display())))?;
    Ok(Prepared {
        name,
        info,
        reported,
        web_info,
        trace,
        pcap,
        sim,
        started,
    })
}

/// Check a scenario (parse, validate, build the simulation) without running it.
pub fn check(path: &Path, overrides: &[String]) -> Result<(), RunError> {
    prepare(path, overrides, None).map(drop)
}

/// Run a scenario file. `seed` replaces the file's; `progress(now, end)` is called about a
/// hundred times a run and stops it by returning `false`.
pub fn run(
    path: &Path,
    overrides: &[String],
    seed: Option<u64>,
    progress: &mut dyn FnMut(Time, Time) -> bool,
) -> Result<Finished, RunError> {
    prepare(path, overrides, seed)?.run(progress)
}

impl Prepared {
    /// Simulate to the end; `progress` as for [`run`]. `wall_seconds` counts from loading.
    pub fn run(self, progress: &mut dyn FnMut(Time, Time) -> bool) -> Result<Finished, RunError> {
        let Prepared {
            name,
            info,
            reported,
            web_info,
            trace: trace_section,
            pcap: pcap_plan,
            mut sim,
            started: wall,
        } = self;
        // The samples go into their columns as the simulator takes them: held once, compactly
        // (a long run's memory is then about the size of its timeseries.parquet, not 3.5 times
        // it, bench/RESULTS.md "At scale").
        let columns = std::sync::Arc::new(std::sync::Mutex::new(FlowColumns::default()));
        let sink = std::sync::Arc::clone(&columns);
        sim.set_flow_sink(Box::new(move |s| {
            sink.lock().expect("flow columns").push(s);
        }));
        let result = sim.run_cancellable(progress).ok_or(RunError::Cancelled)?;
        let mut summary = Summary::new(
            &name,
            &info,
            &reported,
            &result,
            tfcc_core::time::std_secs_f64(wall.elapsed()),
        );
        summary.trace = trace_section;
        if let (Some(section), Some(t)) = (&mut summary.trace, &result.trace) {
            section.set_pending(t);
        }
        if let (Some(i), Some(w)) = (&web_info, &result.web) {
            summary.web = Some(web::WebSection::new(
                i,
                w,
                summary.measure_from_s,
                summary.sim_seconds,
            ));
        }
        let flows = std::mem::take(&mut *columns.lock().expect("flow columns"));
        let links =
            LinkColumns::from_samples(&result.link_series, &result.summary.links, &reported);
        let mut trace = result.trace;
        let pcaps = match (&pcap_plan, &mut trace) {
            (Some(plan), Some(t)) => {
                let sent = t.take_sent();
                pcap::write_captures(plan, t.names(), t.records(), &sent)
                    .map_err(RunError::Scenario)?
            }
            _ => Vec::new(),
        };
        let trace = trace.map(|t| TraceColumns {
            pcaps,
            ..TraceColumns::from_trace(t)
        });
        let frames = FrameColumns::from_records(&result.frames);
        let ptcp_slots = PtcpSlotColumns::from_flows(&result.summary.flows);
        Ok(Finished {
            summary,
            flows,
            links,
            trace,
            frames,
            ptcp_slots,
        })
    }
}
