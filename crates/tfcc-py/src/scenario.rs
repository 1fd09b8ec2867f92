//! Python functions `run_scenario` and `check_scenario`: a scenario file through
//! `tfcc_sim::scenario` to plain Python data (DESIGN.md, "Outputs").
//!
//! Results come back as dicts and lists, not classes: the summary is what `summary.json` holds,
//! and the time series are columnar (one list per column) so that pyarrow builds
//! `timeseries.parquet` from them without a per-row loop in Python.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;
use std::time::Instant;
use tfcc_sim::scenario::{self, Built};
use tfcc_sim::RunResult;

create_exception!(
    tfcc._core,
    ScenarioError,
    PyValueError,
    "A scenario file that cannot run; the message names the file and the key."
);

fn load(path: &str, overrides: Vec<String>, seed: Option<u64>) -> PyResult<Built> {
    scenario::load(Path::new(path), &overrides, seed)
        .map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Check a scenario without running it; returns a short description.
#[pyfunction]
#[pyo3(signature = (path, overrides = Vec::new()))]
pub fn check_scenario<'py>(
    py: Python<'py>,
    path: &str,
    overrides: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let b = load(path, overrides, None)?;
    let d = PyDict::new(py);
    d.set_item("scenario", &b.name)?;
    d.set_item("duration_s", b.cfg.duration.as_secs_f64())?;
    d.set_item("measure_from_s", b.cfg.measure_from.as_secs_f64())?;
    d.set_item("seed", b.cfg.seed)?;
    d.set_item("flows", b.flows.len())?;
    d.set_item("links", b.topology.links.len())?;
    d.set_item("events", b.events.len())?;
    let mut groups: Vec<(String, usize)> = Vec::new();
    for f in &b.flow_info {
        match groups.iter_mut().find(|g| g.0 == f.label) {
            Some(g) => g.1 += 1,
            None => groups.push((f.label.clone(), 1)),
        }
    }
    d.set_item("groups", groups)?;
    // Building the simulation runs the simulator's own checks too.
    b.into_simulation()
        .map_err(|e| ScenarioError::new_err(format!("{path}: {e}")))?;
    Ok(d)
}

/// Run a scenario; `seed` replaces the file's; `progress(now_s, end_s)` is called about a
/// hundred times a run, and an exception it raises (or Ctrl-C) abandons the run. Returns `{"summary": dict, "flow_series": dict of lists,
/// "link_series": dict of lists}`.
#[pyfunction]
#[pyo3(signature = (path, overrides = Vec::new(), seed = None, progress = None))]
pub fn run_scenario<'py>(
    py: Python<'py>,
    path: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let wall = Instant::now();
    let b = load(path, overrides, seed)?;
    let name = b.name.clone();
    let info = b.flow_info.clone();
    let reported = b.reported_links.clone();
    let sim = b
        .into_simulation()
        .map_err(|e| ScenarioError::new_err(format!("{path}: {e}")))?;
    // The GIL is released while simulating; each progress report takes it back briefly to
    // call `progress` and to run Python's signal handlers, so Ctrl-C abandons the run there.
    let mut cb_err: Option<PyErr> = None;
    let result: Option<RunResult> = py.detach(|| {
        let mut report = |now: tfcc_core::Time, end: tfcc_core::Time| {
            Python::attach(|py| {
                let r = match &progress {
                    Some(cb) => cb
                        .call1(py, (now.as_secs_f64(), end.as_secs_f64()))
                        .map(drop),
                    None => Ok(()),
                }
                .and_then(|_| py.check_signals());
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        cb_err = Some(e);
                        false
                    }
                }
            })
        };
        sim.run_cancellable(&mut report)
    });
    let result = match (result, cb_err) {
        (_, Some(e)) => return Err(e),
        (Some(r), None) => r,
        (None, None) => return Err(ScenarioError::new_err(format!("{path}: run abandoned"))),
    };
    let wall_seconds = wall.elapsed().as_secs_f64();

    let s = &result.summary;
    let summary = PyDict::new(py);
    summary.set_item("scenario", &name)?;
    summary.set_item("seed", s.seed)?;
    summary.set_item("sim_seconds", s.sim_seconds)?;
    summary.set_item("measure_from_s", s.measure_from_s)?;
    summary.set_item("wall_seconds", wall_seconds)?;
    summary.set_item("events", s.events)?;
    summary.set_item("peak_packets", s.peak_packets)?;
    let flows = PyList::empty(py);
    for f in &s.flows {
        let d = PyDict::new(py);
        let fi = info.get(f.id as usize);
        d.set_item("id", f.id)?;
        d.set_item("label", fi.map(|i| i.label.as_str()))?;
        d.set_item("group", fi.map(|i| i.group))?;
        d.set_item("protocol", &f.protocol)?;
        d.set_item("throughput_bps", f.throughput_bps)?;
        d.set_item("bytes_delivered", f.bytes_delivered)?;
        d.set_item("packets_sent", f.packets_sent)?;
        d.set_item("packets_lost", f.packets_lost)?;
        d.set_item("loss_event_rate", finite(f.loss_event_rate))?;
        d.set_item("mean_rtt_s", f.mean_rtt_s.and_then(finite))?;
        d.set_item("cov", f.cov.and_then(finite))?;
        d.set_item("retransmits", f.retransmits)?;
        d.set_item("timeouts", f.timeouts)?;
        flows.append(d)?;
    }
    summary.set_item("flows", flows)?;
    let links = PyList::empty(py);
    for &id in &reported {
        let Some(l) = s.links.get(id as usize) else {
            continue;
        };
        let d = PyDict::new(py);
        d.set_item("name", &l.name)?;
        d.set_item("utilization", l.utilization)?;
        d.set_item("drops", l.drops)?;
        d.set_item("queue_drops", l.queue_drops)?;
        d.set_item("early_drops", l.early_drops)?;
        d.set_item("artificial_drops", l.artificial_drops)?;
        d.set_item("down_drops", l.down_drops)?;
        d.set_item("mean_queue_pkts", l.mean_queue_pkts)?;
        d.set_item("arrivals", l.arrivals)?;
        d.set_item("tx_packets", l.tx_packets)?;
        d.set_item("tx_bytes", l.tx_bytes)?;
        links.append(d)?;
    }
    summary.set_item("links", links)?;
    let metrics = PyDict::new(py);
    metrics.set_item("jain_index", s.jain_index.and_then(finite))?;
    summary.set_item("metrics", metrics)?;

    let fs = &result.flow_series;
    let flow_series = PyDict::new(py);
    flow_series.set_item("flow", fs.iter().map(|x| x.flow).collect::<Vec<_>>())?;
    flow_series.set_item(
        "t",
        fs.iter().map(|x| x.time.as_secs_f64()).collect::<Vec<_>>(),
    )?;
    flow_series.set_item(
        "throughput_bps",
        fs.iter().map(|x| x.throughput_bps).collect::<Vec<_>>(),
    )?;
    flow_series.set_item(
        "delivered_bytes",
        fs.iter().map(|x| x.delivered_bytes).collect::<Vec<_>>(),
    )?;
    flow_series.set_item("cwnd", fs.iter().map(|x| x.cwnd).collect::<Vec<_>>())?;
    flow_series.set_item(
        "rate_bps",
        fs.iter().map(|x| x.rate_bps).collect::<Vec<_>>(),
    )?;
    flow_series.set_item("p", fs.iter().map(|x| x.p).collect::<Vec<_>>())?;
    flow_series.set_item("rtt_s", fs.iter().map(|x| x.rtt_s).collect::<Vec<_>>())?;

    let mut names = vec![None; s.links.len()];
    for &id in &reported {
        if let Some(slot) = names.get_mut(id as usize) {
            *slot = s.links.get(id as usize).map(|l| l.name.as_str());
        }
    }
    let ls: Vec<_> = result
        .link_series
        .iter()
        .filter_map(|x| Some((names.get(x.link as usize).copied().flatten()?, x)))
        .collect();
    let link_series = PyDict::new(py);
    link_series.set_item("link", ls.iter().map(|x| x.0).collect::<Vec<_>>())?;
    link_series.set_item(
        "t",
        ls.iter()
            .map(|x| x.1.time.as_secs_f64())
            .collect::<Vec<_>>(),
    )?;
    link_series.set_item(
        "queue_pkts",
        ls.iter().map(|x| x.1.queue_pkts).collect::<Vec<_>>(),
    )?;
    link_series.set_item(
        "queue_pkts_avg",
        ls.iter().map(|x| x.1.queue_pkts_avg).collect::<Vec<_>>(),
    )?;
    link_series.set_item(
        "queue_bytes",
        ls.iter().map(|x| x.1.queue_bytes).collect::<Vec<_>>(),
    )?;
    link_series.set_item(
        "throughput_bps",
        ls.iter().map(|x| x.1.throughput_bps).collect::<Vec<_>>(),
    )?;
    link_series.set_item("drops", ls.iter().map(|x| x.1.drops).collect::<Vec<_>>())?;

    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("flow_series", flow_series)?;
    out.set_item("link_series", link_series)?;
    Ok(out)
}

/// JSON has no NaN or infinity: report such a value as missing.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}
