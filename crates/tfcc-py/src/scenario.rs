//! Python functions `run_scenario` and `check_scenario`: a scenario file through
//! `tfcc_sim::scenario` to plain Python data (DESIGN.md, "Outputs").
//!
//! The work is `tfcc_run`'s (the same code as the `tfcc run` command); results come back as
//! dicts and lists, not classes: the summary is what `summary.json` holds, and the time series
//! are columnar (one list per column).

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::path::{Path, PathBuf};
use tfcc_sim::scenario::{self, Built};

create_exception!(
    tfcc._core,
    ScenarioError,
    PyValueError,
    "A scenario file that cannot run; the message names the file and the key."
);

create_exception!(
    tfcc._core,
    OutputError,
    PyValueError,
    "The output directory cannot be used or written; the message names it and says why."
);

/// The `overrides` argument: a list (any sequence) of `KEY=VALUE` strings. One string is
/// refused by name (PyO3's own words were "Can't extract `str` to `Vec`").
fn overrides_of(obj: Option<Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    const WHAT: &str = "overrides: a list of KEY=VALUE strings, e.g. [\"duration=5s\"]";
    let Some(obj) = obj else {
        return Ok(Vec::new());
    };
    if obj.is_instance_of::<PyString>() {
        let one: String = obj.extract()?;
        return Err(PyTypeError::new_err(format!(
            "{WHAT}, not one string (write [{one:?}])"
        )));
    }
    obj.extract::<Vec<String>>()
        .map_err(|e| PyTypeError::new_err(format!("{WHAT}: {e}")))
}

/// The `seed` argument: a whole number from 0 to 2^63 − 1, the range of every seed
/// ([`tfcc_sim::scenario::MAX_SEED`]: a scenario file's is a TOML integer). PyO3's own words
/// for -1 were "can't convert negative int to unsigned", naming no argument.
fn seed_of(obj: Option<Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    match obj.extract::<u64>() {
        Ok(s) if s <= scenario::MAX_SEED => Ok(Some(s)),
        _ => {
            let shown = obj
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "?".into());
            Err(PyValueError::new_err(format!(
                "seed: a whole number from 0 to {} (a scenario file's seed is a TOML integer), \
                 got {shown}",
                scenario::MAX_SEED
            )))
        }
    }
}

fn load(path: &Path, overrides: Vec<String>, seed: Option<u64>) -> PyResult<Built> {
    scenario::load(path, &overrides, seed).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Check a scenario without running it (`path` a str or a `pathlib.Path`, `overrides` a list
/// of `KEY=VALUE` strings as `--set` takes); returns a short description: `scenario`,
/// `duration_s`, `measure_from_s`, `seed`, `flows`, `links`, `reported_links` (all but the
/// per-flow access links), `events`, `groups` (label, count) and `trace` (`None`, or with a
/// `[trace]` its `links` by name, `from_s`, `until_s` and `pcap`). Raises `ScenarioError` naming the
/// file and the key.
///
/// `backend = "testbed"` checks what `tfcc run --backend testbed` would refuse instead of the
/// simulator's own checks (without root: nothing is set up), and `notes` lists what the
/// testbed would run otherwise than the file says without refusing it (kernel TCP flows whose
/// `params` apply in the simulator only); the simulator's `notes` is empty.
#[pyfunction]
#[pyo3(signature = (path, overrides = None, backend = "sim"))]
pub fn check_scenario<'py>(
    py: Python<'py>,
    path: PathBuf,
    overrides: Option<Bound<'py, PyAny>>,
    backend: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let testbed = match backend {
        "sim" => false,
        "testbed" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "backend {other:?}: unknown backend (use \"sim\" or \"testbed\")"
            )))
        }
    };
    let overrides = overrides_of(overrides)?;
    let b = load(&path, overrides.clone(), None)?;
    let d = PyDict::new(py);
    d.set_item("scenario", &b.name)?;
    // the nearest double to the seconds ("60s" is 60.0, see `tfcc_core::time::nanos_to_secs_f64`)
    d.set_item("duration_s", b.cfg.duration.as_secs_f64())?;
    d.set_item("measure_from_s", b.cfg.measure_from.as_secs_f64())?;
    d.set_item("seed", b.cfg.seed)?;
    d.set_item("flows", b.flows.len())?;
    d.set_item("links", b.topology.links.len())?;
    // the links the outputs report (all but the per-flow access links)
    d.set_item("reported_links", b.reported_links.len())?;
    d.set_item("events", b.events.len())?;
    let mut groups: Vec<(String, usize)> = Vec::new();
    for f in &b.flow_info {
        match groups.iter_mut().find(|g| g.0 == f.label) {
            Some(g) => g.1 += 1,
            None => groups.push((f.label.clone(), 1)),
        }
    }
    d.set_item("groups", groups)?;
    match &b.cfg.trace {
        None => d.set_item("trace", py.None())?,
        Some(t) => {
            let td = PyDict::new(py);
            let names: Vec<&str> = t.links.iter().map(|(_, n)| n.as_str()).collect();
            td.set_item("links", names)?;
            td.set_item("from_s", t.from.as_secs_f64())?;
            td.set_item("until_s", t.until.as_secs_f64())?;
            td.set_item("pcap", t.pcap)?;
            d.set_item("trace", td)?;
        }
    }
    if testbed {
        let notes = tfcc_run::testbed::check(&path, &overrides)
            .map_err(|e| ScenarioError::new_err(e.to_string()))?;
        d.set_item("notes", notes)?;
        return Ok(d);
    }
    d.set_item("notes", Vec::<String>::new())?;
    // Building the simulation runs the simulator's own checks too.
    b.into_simulation()
        .map_err(|e| ScenarioError::new_err(format!("{}: {e}", path.display())))?;
    Ok(d)
}

/// Run a scenario (`path` a str or a `pathlib.Path`) in memory, writing nothing; `overrides`
/// is a list of `KEY=VALUE` strings as `--set` takes; `seed` replaces the file's;
/// `progress(now_s, end_s)` is called about a hundred times a run, and an exception it raises
/// (or Ctrl-C) abandons the run. Returns
/// `{"summary": dict, "flow_series": dict of lists, "link_series": dict of lists}`: the summary
/// is what `summary.json` holds, the series are the columns of `timeseries.parquet` and
/// `queues.parquet`; a run with a video flow adds `"frame_series"`, the columns of
/// `frames.parquet`, one with a PTCP flow `"ptcp_slots"`, the columns of `ptcp_slots.parquet`,
/// and one with a `[trace]` in the scenario `"trace"`, the columns of `trace.parquet`, and
/// with `pcap = true` `"pcaps"`, each `trace-<link>.pcap` file's name and bytes.
#[pyfunction]
#[pyo3(signature = (path, overrides = None, seed = None, progress = None))]
pub fn run_scenario<'py>(
    py: Python<'py>,
    path: PathBuf,
    overrides: Option<Bound<'py, PyAny>>,
    seed: Option<Bound<'py, PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let overrides = overrides_of(overrides)?;
    let seed = seed_of(seed)?;
    let done = simulate(py, &path, &overrides, seed, progress)?;
    let out = PyDict::new(py);
    out.set_item("summary", summary_dict(py, &done.summary)?)?;
    let flows = tfcc_run::tables::flow_columns(&done.flows);
    out.set_item("flow_series", columns_dict(py, &flows)?)?;
    let links = tfcc_run::tables::link_columns(&done.links);
    out.set_item("link_series", columns_dict(py, &links)?)?;
    if !done.frames.is_empty() {
        out.set_item(
            "frame_series",
            columns_dict(py, &tfcc_run::tables::frame_columns(&done.frames))?,
        )?;
    }
    if let Some(slots) = &done.ptcp_slots {
        out.set_item(
            "ptcp_slots",
            columns_dict(py, &tfcc_run::tables::ptcp_slot_columns(slots))?,
        )?;
    }
    if let Some(t) = &done.trace {
        out.set_item("trace", trace_dict(py, t)?)?;
        if !t.pcaps.is_empty() {
            let d = PyDict::new(py);
            for f in &t.pcaps {
                d.set_item(&f.name, pyo3::types::PyBytes::new(py, &f.bytes))?;
            }
            out.set_item("pcaps", d)?;
        }
    }
    Ok(out)
}

/// Run a scenario and write its outputs into `out` exactly as `tfcc run` does (atomically;
/// `font` for the plot text); returns the summary. Raises `ScenarioError` for the scenario and
/// `OutputError` for the directory, both before anything runs.
#[pyfunction]
#[pyo3(signature = (path, out, overrides = Vec::new(), seed = None, plots = true, progress = None, font = None))]
#[allow(clippy::too_many_arguments)]
pub fn run_to_dir<'py>(
    py: Python<'py>,
    path: &str,
    out: PathBuf,
    overrides: Vec<String>,
    seed: Option<Bound<'py, PyAny>>,
    plots: bool,
    progress: Option<Py<PyAny>>,
    font: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_of(seed)?;
    tfcc_run::check(Path::new(path), &overrides)
        .map_err(|e| ScenarioError::new_err(e.to_string()))?;
    tfcc_run::output::check_writable(&out).map_err(OutputError::new_err)?;
    let done = simulate(py, Path::new(path), &overrides, seed, progress)?;
    py.detach(|| tfcc_run::output::write_run(&out, &done, plots, font.as_deref()))
        .map_err(OutputError::new_err)?;
    summary_dict(py, &done.summary)
}

/// Write a run's outputs into `out` from Python data, exactly as `tfcc run` writes them: the
/// summary as `summary.json` text and the two series as dicts of columns (the shapes
/// `run_scenario` returns, its `ptcp_slots` when the summary has PTCP flows, its `trace`
/// when there is one and its `pcaps` with it). For drivers that simulate elsewhere (a sweep's
/// remote workers).
#[pyfunction]
#[pyo3(signature = (out, summary_json, flow_series, link_series, plots = true, font = None, frame_series = None, trace = None, ptcp_slots = None, pcaps = None))]
#[allow(clippy::too_many_arguments)]
pub fn write_run(
    py: Python<'_>,
    out: PathBuf,
    summary_json: &str,
    flow_series: &Bound<'_, PyDict>,
    link_series: &Bound<'_, PyDict>,
    plots: bool,
    font: Option<PathBuf>,
    frame_series: Option<&Bound<'_, PyDict>>,
    trace: Option<Bound<'_, PyDict>>,
    ptcp_slots: Option<&Bound<'_, PyDict>>,
    pcaps: Option<std::collections::BTreeMap<String, Vec<u8>>>,
) -> PyResult<()> {
    let summary: tfcc_run::Summary = serde_json::from_str(summary_json)
        .map_err(|e| PyValueError::new_err(format!("summary: {e}")))?;
    fn col<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, name: &str) -> PyResult<T> {
        d.get_item(name)?
            .ok_or_else(|| PyValueError::new_err(format!("series: no column {name:?}")))?
            .extract()
            .map_err(|e| PyValueError::new_err(format!("series column {name:?}: {e}")))
    }
    let f = flow_series;
    let flows = tfcc_run::FlowColumns {
        flow: col(f, "flow")?,
        t: col(f, "t")?,
        throughput_bps: col(f, "throughput_bps")?,
        delivered_bytes: col(f, "delivered_bytes")?,
        cwnd: col::<Vec<Option<f64>>>(f, "cwnd")?.into(),
        rate_bps: col::<Vec<Option<f64>>>(f, "rate_bps")?.into(),
        p: col::<Vec<Option<f64>>>(f, "p")?.into(),
        rtt_s: col::<Vec<Option<f64>>>(f, "rtt_s")?.into(),
        ptcp_k: col::<Vec<Option<f64>>>(f, "ptcp_k")?.into(),
        ptcp_s: col::<Vec<Option<f64>>>(f, "ptcp_s")?.into(),
        ptcp_a_bps: col::<Vec<Option<f64>>>(f, "ptcp_a_bps")?.into(),
        ptcp_oracle_a_bps: col::<Vec<Option<f64>>>(f, "ptcp_oracle_a_bps")?.into(),
    };
    let l = link_series;
    let links = tfcc_run::LinkColumns {
        link: col(l, "link")?,
        t: col(l, "t")?,
        queue_pkts: col(l, "queue_pkts")?,
        queue_pkts_avg: col(l, "queue_pkts_avg")?,
        queue_bytes: col(l, "queue_bytes")?,
        throughput_bps: col(l, "throughput_bps")?,
        drops: col(l, "drops")?,
    };
    let frames = match frame_series {
        None => tfcc_run::FrameColumns::default(),
        Some(fr) => tfcc_run::FrameColumns {
            flow: col(fr, "flow")?,
            frame: col(fr, "frame")?,
            t: col(fr, "t")?,
            grabbed: col(fr, "grabbed")?,
            q: col(fr, "q")?,
            bytes: col(fr, "bytes")?,
            packets: col(fr, "packets")?,
            delivered: col(fr, "delivered")?,
            complete_s: col(fr, "complete_s")?,
            sbuf_bytes: col(fr, "sbuf_bytes")?,
        },
    };
    let trace = match &trace {
        Some(t) => Some(
            tfcc_run::TraceColumns::from_columns(
                &col::<Vec<f64>>(t, "t")?,
                &col::<Vec<String>>(t, "event")?,
                &col::<Vec<Option<String>>>(t, "reason")?,
                &col::<Vec<String>>(t, "link")?,
                &col::<Vec<i64>>(t, "flow")?,
                &col::<Vec<String>>(t, "direction")?,
                &col::<Vec<String>>(t, "kind")?,
                &col::<Vec<Option<i64>>>(t, "seq")?,
                &col::<Vec<i64>>(t, "size")?,
            )
            .map_err(OutputError::new_err)?,
        ),
        None => None,
    };
    let trace = match (trace, pcaps) {
        (t, None) => t,
        (Some(mut t), Some(files)) => {
            // Only the names the run itself writes: nothing lands outside the run directory.
            let names: Vec<String> = t
                .links
                .iter()
                .flatten()
                .map(|l| tfcc_run::pcap::file_name(l))
                .collect();
            for (name, bytes) in files {
                if !names.contains(&name) {
                    return Err(OutputError::new_err(format!(
                        "pcaps: {name:?} is not a traced link's file ({})",
                        names.join(", ")
                    )));
                }
                t.pcaps.push(tfcc_run::pcap::PcapFile { name, bytes });
            }
            Some(t)
        }
        (None, Some(_)) => {
            return Err(OutputError::new_err("pcaps were given without a trace"));
        }
    };
    let ptcp_slots = match ptcp_slots {
        None => None,
        Some(p) => Some(tfcc_run::PtcpSlotColumns {
            flow: col(p, "flow")?,
            kind: col::<Vec<String>>(p, "kind")?
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    tfcc_run::SlotKind::from_name(k).ok_or_else(|| {
                        OutputError::new_err(format!(
                            "ptcp_slots row {i}: kind {k:?} is not a value the simulator \
                             writes (eval or ctrl)"
                        ))
                    })
                })
                .collect::<PyResult<_>>()?,
            start_s: col(p, "start_s")?,
            end_s: col(p, "end_s")?,
            throughput_bps: col(p, "throughput_bps")?,
            met: col(p, "met")?,
            fast_retransmits: col(p, "fast_retransmits")?,
            timeouts: col(p, "timeouts")?,
            s: col(p, "s")?,
            target_bps: col(p, "target_bps")?,
            regime: col(p, "regime")?,
            bound_by: col(p, "bound_by")?,
            k_bw_acks: col(p, "k_bw_acks")?,
            k_max_acks: col(p, "k_max_acks")?,
            k_min_acks: col(p, "k_min_acks")?,
            k_min_over_k_max: col(p, "k_min_over_k_max")?,
        }),
    };
    let done = tfcc_run::Finished {
        summary,
        flows,
        links,
        frames,
        trace,
        ptcp_slots,
    };
    py.detach(|| tfcc_run::output::write_run(&out, &done, plots, font.as_deref()))
        .map_err(OutputError::new_err)
}

/// Fail before a run if `out` cannot be created or replaced (`OutputError` naming it).
#[pyfunction]
pub fn check_writable(out: PathBuf) -> PyResult<()> {
    tfcc_run::output::check_writable(&out).map_err(OutputError::new_err)
}

/// `tfcc run ARGV...` natively (tfcc_run::cli); returns the exit code. Ctrl-C raises
/// `KeyboardInterrupt` after the run has been abandoned (nothing written).
#[pyfunction]
#[pyo3(signature = (argv, font = None))]
pub fn cli_run(py: Python<'_>, argv: Vec<String>, font: Option<PathBuf>) -> PyResult<i32> {
    let mut interrupt: Option<PyErr> = None;
    let exit = py.detach(|| {
        let mut keep_going = || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => true,
                Err(e) => {
                    interrupt = Some(e);
                    false
                }
            })
        };
        tfcc_run::cli::run_command(&argv, font.as_deref(), &mut keep_going)
    });
    match (exit, interrupt) {
        (_, Some(e)) => Err(e),
        (tfcc_run::cli::Exit::Code(c), None) => Ok(c),
        (tfcc_run::cli::Exit::Interrupted, None) => Err(PyKeyboardInterrupt::new_err(())),
    }
}

/// θ from per-flow goodputs of the TCP flows and of the flows they compete with (the one
/// definition, `tfcc_sim::recorder::fairness_theta`); `None` where it is undefined.
#[pyfunction]
pub fn fairness_theta(tcp: Vec<f64>, other: Vec<f64>) -> Option<f64> {
    tfcc_sim::recorder::fairness_theta(&tcp, &other)
}

/// Load, build and simulate with the GIL released; each progress report takes it back briefly
/// to call `progress` and to run Python's signal handlers, so Ctrl-C abandons the run there.
fn simulate(
    py: Python<'_>,
    path: &Path,
    overrides: &[String],
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<tfcc_run::Finished> {
    let mut cb_err: Option<PyErr> = None;
    let result = py.detach(|| {
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
        tfcc_run::run(path, overrides, seed, &mut report)
    });
    match (result, cb_err) {
        (_, Some(e)) => Err(e),
        (Ok(done), None) => Ok(done),
        (Err(e), None) => Err(ScenarioError::new_err(e.to_string())),
    }
}

/// The summary as plain Python data, through its JSON form (the same text `summary.json` has).
fn summary_dict<'py>(py: Python<'py>, s: &tfcc_run::Summary) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(s).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A file's columns ([`tfcc_run::tables::flow_columns`] and the like) as the dict of lists the
/// Python API returns for it: the same names in the same order.
fn columns_dict<'py>(
    py: Python<'py>,
    columns: &[(&str, tfcc_run::tables::Col<'_>)],
) -> PyResult<Bound<'py, PyDict>> {
    use tfcc_run::tables::Col;
    let d = PyDict::new(py);
    for (name, col) in columns {
        match col {
            Col::I64(v) => d.set_item(*name, *v)?,
            Col::OptI64(v) => d.set_item(*name, *v)?,
            Col::F64(v) => d.set_item(*name, *v)?,
            Col::OptF64(v) => d.set_item(*name, *v)?,
            Col::Nullable(v) => d.set_item(*name, v.to_vec())?,
            Col::Str(v) => d.set_item(*name, *v)?,
            Col::OptStr(v) => d.set_item(*name, *v)?,
            Col::OptBool(v) => d.set_item(*name, *v)?,
            Col::Text(v) => d.set_item(*name, *v)?,
            Col::OptText(v) => d.set_item(*name, *v)?,
            Col::SlotKinds(v) => {
                let names: Vec<&str> = v.iter().map(|k| k.name()).collect();
                d.set_item(*name, names)?
            }
        }
    }
    Ok(d)
}

fn trace_dict<'py>(py: Python<'py>, c: &tfcc_run::TraceColumns) -> PyResult<Bound<'py, PyDict>> {
    let r = tfcc_run::columns::TraceRows::of(c, &c.records);
    let d = PyDict::new(py);
    d.set_item("t", r.t)?;
    d.set_item("event", r.event)?;
    d.set_item("reason", r.reason)?;
    d.set_item("link", r.link)?;
    d.set_item("flow", r.flow)?;
    d.set_item("direction", r.direction)?;
    d.set_item("kind", r.kind)?;
    d.set_item("seq", r.seq)?;
    d.set_item("size", r.size)?;
    Ok(d)
}

/// The TOML document `text` as plain Python data (dicts, lists, str, int, float, bool), read
/// by the scenario loader's own parser, so that Python reads scenario, sweep and claim files
/// exactly as `tfcc run` does: they are TOML 1.1 (an inline table may span lines, as the 004
/// scenarios' `params` do), which Python 3.11's `tomllib` (TOML 1.0) refused. A date-time,
/// which no tfcc file holds, comes back as its TOML text. Raises `ValueError` with the
/// loader's message, `invalid TOML at line L, column C: why`.
#[pyfunction]
pub fn parse_toml<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let table = scenario::parse_toml(text).map_err(PyValueError::new_err)?;
    table_to_py(py, &table)
}

fn table_to_py<'py>(py: Python<'py>, table: &toml::Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in table {
        d.set_item(k, toml_to_py(py, v)?)?;
    }
    Ok(d)
}

fn toml_to_py<'py>(py: Python<'py>, v: &toml::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyBool, PyList};
    Ok(match v {
        toml::Value::String(s) => PyString::new(py, s).into_any(),
        toml::Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        toml::Value::Float(f) => f.into_pyobject(py)?.into_any(),
        toml::Value::Boolean(b) => PyBool::new(py, *b).to_owned().into_any(),
        toml::Value::Datetime(d) => PyString::new(py, &d.to_string()).into_any(),
        toml::Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| toml_to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        toml::Value::Table(t) => table_to_py(py, t)?.into_any(),
    })
}
