//! `tfcc run SCENARIO --out DIR`: the command itself (flags, progress, the printed table,
//! exit codes). The `tfcc` console script hands `run` to [`run_command`] before it imports the
//! Python CLI stack, so the command starts in milliseconds (see the crate docs).
//!
//! Conventions shared with the rest of the CLI: bad input gets one line on stderr starting
//! with `error:` and exit code 2, never a backtrace and never partial output.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use tfcc_core::Time;

use crate::output::{check_writable, write_run};
use crate::summary::{FlowEntry, Summary};
use crate::RunError;

/// Run a scenario in the simulator: summary.json, timeseries.parquet, queues.parquet and PNG
/// plots in OUT.
#[derive(Parser, Debug)]
#[command(name = "tfcc run", disable_version_flag = true)]
struct Args {
    /// Scenario file (TOML, see docs/scenarios.md).
    scenario: PathBuf,
    /// Output directory (an earlier run's outputs there are replaced; other files refuse it).
    #[arg(short, long)]
    out: PathBuf,
    /// Replace the scenario's seed (0 to 9223372036854775807, as a file's).
    // A string, checked by `parse_seed`: as a u64, `--seed -1` was clap's "unexpected
    // argument '-1'" with a tip to write `-- -1`, and 2^64 "number too large to fit in
    // target type", neither saying what a seed may be.
    #[arg(long, allow_negative_numbers = true)]
    seed: Option<String>,
    /// Override a key before validation: KEY.PATH=VALUE (repeatable), e.g.
    /// topology.bottleneck.rate=10Mbps or flows.0.count=4.
    #[arg(long = "set", value_name = "KEY.PATH=VALUE")]
    set: Vec<String>,
    /// Where to run: sim (the simulator) or testbed.
    #[arg(long, default_value = "sim")]
    backend: String,
    /// Skip the PNG plots.
    #[arg(long)]
    no_plots: bool,
    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this code (0 success, 2 bad input or unusable output directory).
    Code(i32),
    /// `keep_going` returned false (Ctrl-C): nothing was written.
    Interrupted,
}

/// Run `tfcc run` with `argv` (the arguments after `run`). `font` is a TrueType file for the
/// plot text; `keep_going` is polled about a hundred times a run and stops it with `false`.
pub fn run_command(
    argv: &[String],
    font: Option<&Path>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Exit {
    let args = match Args::try_parse_from(
        std::iter::once("tfcc run".to_string()).chain(argv.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return Exit::Code(code);
        }
    };
    let seed = match args.seed.as_deref().map(tfcc_sim::scenario::parse_seed) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(m)) => return fail(&format!("--seed: {m}")),
    };
    let testbed = match args.backend.as_str() {
        "sim" => false,
        "testbed" => true,
        other => {
            return fail(&format!(
                "--backend {other}: unknown backend (use sim or testbed)"
            ))
        }
    };
    // Scenario errors come before output-directory errors: the file is what the user most
    // likely got wrong. The simulation built for the check is the one that runs, so the
    // scenario is read and built once.
    let prepared = if testbed {
        crate::testbed::check(&args.scenario, &args.set).map(|_| None)
    } else {
        crate::prepare(&args.scenario, &args.set, seed).map(Some)
    };
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = check_writable(&args.out) {
        return fail(&e);
    }
    let mut bar = Progress::new(!args.quiet && std::io::stderr().is_terminal());
    let result = match prepared {
        Some(p) => p.run(&mut |now: Time, end: Time| {
            bar.update(now.as_secs_f64(), end.as_secs_f64());
            keep_going()
        }),
        None => crate::testbed::run(&args.scenario, &args.set, seed, keep_going),
    };
    bar.clear();
    let finished = match result {
        Ok(f) => f,
        Err(RunError::Cancelled) => return Exit::Interrupted,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = write_run(&args.out, &finished, !args.no_plots, font) {
        return fail(&e);
    }
    if !args.quiet {
        print!("{}", table(&finished.summary, &args.out, testbed));
    }
    Exit::Code(0)
}

fn fail(message: &str) -> Exit {
    eprintln!("error: {message}");
    Exit::Code(2)
}

/// A one-line progress bar on stderr, shown only once a run has taken two seconds, so short
/// runs print nothing extra.
struct Progress {
    enabled: bool,
    started: Instant,
    shown: bool,
}

impl Progress {
    const AFTER: Duration = Duration::from_secs(2);

    fn new(enabled: bool) -> Self {
        Progress {
            enabled,
            started: Instant::now(),
            shown: false,
        }
    }

    fn update(&mut self, now: f64, end: f64) {
        let elapsed = self.started.elapsed();
        if !self.enabled || elapsed < Self::AFTER || end <= 0.0 {
            return;
        }
        let frac = (now / end).clamp(0.0, 1.0);
        let filled = (frac * 30.0).round() as usize;
        let left = if frac > 0.0 {
            format!("{:.0} s left", elapsed.as_secs_f64() * (1.0 - frac) / frac)
        } else {
            String::new()
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rsimulating [{}{}] {now:.0}/{end:.0} s  {left}   ",
            "#".repeat(filled),
            ".".repeat(30 - filled)
        );
        let _ = err.flush();
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{:70}\r", "");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

fn fmt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.digits$}", v * scale))
}

/// The printed summary: a row per flow (per label, as means, above 16 flows), the reported
/// links, the scenario metrics and where the results are.
pub fn table(s: &Summary, out: &Path, testbed: bool) -> String {
    let mut rows: Vec<[String; 6]> = Vec::new();
    let grouped = s.flows.len() > 16;
    let label = |f: &FlowEntry| f.label.clone().unwrap_or_else(|| f.protocol.clone());
    if grouped {
        let mut groups: Vec<(String, Vec<&FlowEntry>)> = Vec::new();
        for f in &s.flows {
            let l = label(f);
            match groups.iter_mut().find(|g| g.0 == l) {
                Some(g) => g.1.push(f),
                None => groups.push((l, vec![f])),
            }
        }
        for (l, fl) in groups {
            let n = fl.len() as f64;
            let rtts: Vec<f64> = fl.iter().filter_map(|f| f.mean_rtt_s).collect();
            rows.push([
                fl.len().to_string(),
                format!("{l} (mean)"),
                fmt(
                    Some(fl.iter().map(|f| f.throughput_bps).sum::<f64>() / n),
                    1e-6,
                    3,
                ),
                fl.iter()
                    .map(|f| f.packets_lost)
                    .sum::<Option<u64>>()
                    .map_or_else(|| "-".into(), |n| n.to_string()),
                fmt(
                    Some(
                        fl.iter()
                            .map(|f| f.loss_event_rate.unwrap_or(0.0))
                            .sum::<f64>()
                            / n,
                    ),
                    1.0,
                    4,
                ),
                fmt(
                    (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
                    1e3,
                    1,
                ),
            ]);
        }
    } else {
        for f in &s.flows {
            rows.push([
                f.id.to_string(),
                label(f),
                fmt(Some(f.throughput_bps), 1e-6, 3),
                f.packets_lost.map_or_else(|| "-".into(), |n| n.to_string()),
                fmt(f.loss_event_rate, 1.0, 4),
                fmt(f.mean_rtt_s, 1e3, 1),
            ]);
        }
    }
    let head = [
        if grouped { "flows" } else { "flow" },
        "label",
        "throughput Mb/s",
        "lost pkts",
        "loss ev. rate",
        "RTT ms",
    ];
    let mut width = head.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(width).enumerate() {
            let pad = w - c.chars().count();
            if i == 1 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
            l.push_str("  ");
        }
        l.trim_end().to_string() + "\n"
    };
    let mut t = format!(
        "{}: {} s {} in {:.2} s (window from {} s)\n",
        s.scenario,
        s.sim_seconds,
        if testbed {
            "on the testbed"
        } else {
            "simulated"
        },
        s.wall_seconds,
        s.measure_from_s
    );
    t += &line(head);
    for r in &rows {
        t += &line(r.each_ref().map(String::as_str));
    }
    // A reverse link carries only ACKs unless some flow sends its data right to left; then
    // its utilisation, drops and queue are as much a result as the forward link's.
    let reverse_data = s.flows.iter().any(|f| f.is_reverse());
    for l in s
        .links
        .iter()
        .filter(|l| reverse_data || !l.name.ends_with("-rev"))
    {
        t += &format!(
            "link {}: utilisation {}, drops {}, mean queue {} pkts\n",
            l.name,
            fmt(l.utilization, 1.0, 3),
            l.drops,
            fmt(l.mean_queue_pkts, 1.0, 1)
        );
    }
    let m = &s.metrics;
    let parts: Vec<String> = [
        ("fairness_theta", m.fairness_theta),
        ("jain_index", m.jain_index),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k} {v:.3}")))
    .collect();
    if !parts.is_empty() {
        t += &format!("metrics: {}\n", parts.join(", "));
    }
    if let Some(w) = &s.web {
        // The web workload per class: its rate and mean latency, then MSF-RS's window.
        for c in &w.classes {
            t += &format!(
                "web class {} (weight {}, {} users): {} Mb/s, mean latency {} s ({} transactions)\n",
                c.class,
                c.weight,
                c.users,
                fmt(Some(c.throughput_bps), 1e-6, 3),
                fmt(c.mean_latency_s, 1.0, 2),
                c.transactions
            );
        }
        t += &format!(
            "web gateway {}: {} requests, {} unfinished; mean W+ {}, mean U {}\n",
            w.gateway,
            w.requests,
            w.unfinished,
            fmt(w.mean_window_max, 1.0, 2),
            fmt(w.mean_utilization, 1.0, 3)
        );
    }
    t += &format!("results in {}\n", out.display());
    t
}
