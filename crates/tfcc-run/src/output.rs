//! The output directory: checked before a run starts, written in full beside the target and
//! renamed into place at the end, so an interrupted or failed run never leaves half-written
//! results under the target name (issue 4, "no partial output").

use std::path::{Path, PathBuf};

use crate::{plots, tables, Finished};

/// Fail before a run starts if `out` cannot be created or replaced; the message names it.
pub fn check_writable(out: &Path) -> Result<(), String> {
    let shown = out.display();
    let parent = parent_of(out);
    let mut probe = parent.clone();
    while !probe.exists() {
        match probe.parent() {
            Some(p) if !p.as_os_str().is_empty() => probe = p.to_path_buf(),
            _ => {
                probe = PathBuf::from(".");
                break;
            }
        }
    }
    if !probe.is_dir() {
        return Err(format!("{shown}: {} is not a directory", probe.display()));
    }
    // Try it rather than ask access(2): root passes access checks on read-only filesystems.
    let trial = fresh_dir(&probe, ".tfcc-probe").map_err(|e| {
        // A directory that exists but takes no new entries (/proc) answers ENOENT, which
        // read "No such file or directory" of a directory that is there.
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "it takes no new entries".to_string(),
            _ => e.to_string(),
        };
        format!(
            "{shown}: the directory {} is not writable ({why})",
            probe.display()
        )
    })?;
    let _ = std::fs::remove_dir(&trial);
    if out.exists() && !out.is_dir() {
        return Err(format!("{shown}: exists and is not a directory"));
    }
    // An existing `out` is replaced as a whole: only when it is empty or an earlier run's
    // outputs (it holds a summary.json), never a directory of the user's own files
    // (`--out ~/papers`, `--out .`).
    if out.is_dir() && !out.join("summary.json").exists() {
        let empty = std::fs::read_dir(out)
            .map_err(|e| format!("{shown}: cannot read the directory ({e})"))?
            .next()
            .is_none();
        if !empty {
            return Err(format!(
                "{shown}: exists and holds files that are not a run's outputs (no summary.json); \
                 choose another --out (a run replaces its --out as a whole)"
            ));
        }
    }
    Ok(())
}

/// The directory `out` lives in (`.` for a bare name).
fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Create a new directory `dir/PREFIX.PID.N` that did not exist before. `create_dir` applies
/// the umask, so the results get the user's ordinary permissions.
fn fresh_dir(dir: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let p = dir.join(format!("{prefix}.{pid}.{n}"));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Write one run's outputs into `out` (replacing an earlier run there): `summary.json`,
/// `timeseries.parquet`, `queues.parquet`, `frames.parquet` when the run has a video flow,
/// `ptcp_slots.parquet` when it has a PTCP flow, `trace.parquet` when it recorded a packet
/// trace (and `trace-<link>.pcap` per traced link when it asked for pcap files; the testbed's
/// trace is those files alone) and, if
/// `plots`, the PNG charts.
pub fn write_run(
    out: &Path,
    run: &Finished,
    plots: bool,
    font: Option<&Path>,
) -> Result<(), String> {
    check_writable(out)?;
    let shown = out.display();
    // The summary's PTCP entries count slots that only ptcp_slots.parquet lists: one without
    // the other (a caller of the Python `write_run` that left the slots out) is refused
    // before anything is written.
    let ptcp_flows = run.summary.flows.iter().any(|f| f.ptcp.is_some());
    if ptcp_flows != run.ptcp_slots.is_some() {
        return Err(if ptcp_flows {
            format!("{shown}: the summary has PTCP flows but no PTCP slots were given")
        } else {
            format!("{shown}: PTCP slots were given but the summary has no PTCP flow")
        });
    }
    let parent = parent_of(out);
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("{shown}: cannot create {} ({e})", parent.display()))?;
    let name = out
        .file_name()
        .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
    let tmp = fresh_dir(&parent, &format!(".{name}"))
        .map_err(|e| format!("{shown}: cannot write the results ({e})"))?;
    let written = (|| {
        std::fs::write(tmp.join("summary.json"), run.summary.to_json())
            .map_err(|e| format!("{shown}: cannot write the results ({e})"))?;
        tables::write_flows(&tmp.join("timeseries.parquet"), &run.flows)?;
        tables::write_links(&tmp.join("queues.parquet"), &run.links)?;
        if !run.frames.is_empty() {
            tables::write_frames(&tmp.join("frames.parquet"), &run.frames)?;
        }
        if let Some(slots) = &run.ptcp_slots {
            tables::write_ptcp_slots(&tmp.join("ptcp_slots.parquet"), slots)?;
        }
        if let Some(trace) = &run.trace {
            if !trace.pcap_only {
                tables::write_trace(&tmp.join("trace.parquet"), trace)?;
            }
            for f in &trace.pcaps {
                std::fs::write(tmp.join(&f.name), &f.bytes)
                    .map_err(|e| format!("{shown}: cannot write {} ({e})", f.name))?;
            }
        }
        if plots {
            plots::plot_run(&tmp, &run.summary, &run.flows, &run.links, font)?;
        }
        replace_dir(&tmp, out).map_err(|e| format!("{shown}: cannot write the results ({e})"))
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written
}

/// Rename `new` to `out`; an existing `out` is moved aside first and removed after.
fn replace_dir(new: &Path, out: &Path) -> std::io::Result<()> {
    let mut old = None;
    if out.exists() {
        let name = out
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let aside = parent_of(out).join(format!(".{name}.old-{}", std::process::id()));
        std::fs::rename(out, &aside)?;
        old = Some(aside);
    }
    std::fs::rename(new, out)?;
    if let Some(old) = old {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::{FlowColumns, LinkColumns};

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tfcc-run-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn finished(scenario: &str, flows: FlowColumns) -> Finished {
        let text = format!(
            "name = \"{scenario}\"\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\nprotocol = \"cbr\"\nrate = \"1Mbps\"\n"
        );
        // Tests run in parallel: each scenario file gets a directory of its own.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = scratch(&format!("scen-{scenario}-{n}"));
        let path = dir.join("s.toml");
        std::fs::write(&path, text).unwrap();
        let mut run = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
        run.flows = flows;
        run.links = LinkColumns::default();
        run
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn outputs_land_complete_and_replace_an_earlier_run() {
        let dir = scratch("replace");
        let out = dir.join("run");
        let flows = FlowColumns {
            flow: vec![0, 0],
            t: vec![0.1, 0.2],
            throughput_bps: vec![1e6, 2e6],
            delivered_bytes: vec![1, 2],
            cwnd: vec![None, Some(4.0)].into(),
            rate_bps: vec![Some(1e6), None].into(),
            p: vec![None, None].into(),
            rtt_s: vec![None, None].into(),
            ptcp_k: vec![None, None].into(),
            ptcp_s: vec![None, None].into(),
            ptcp_a_bps: vec![None, None].into(),
            ptcp_oracle_a_bps: vec![None, None].into(),
        };
        write_run(&out, &finished("t", flows.clone()), true, None).unwrap();
        assert!(entries(&out).contains(&"throughput.png".to_string()));
        write_run(&out, &finished("u", flows), false, None).unwrap();
        assert_eq!(
            entries(&out),
            ["queues.parquet", "summary.json", "timeseries.parquet"]
        );
        let s = std::fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(s.contains("\"scenario\": \"u\""), "{s}");
        assert_eq!(entries(&dir), ["run"], "no temporaries left behind");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_ptcp_run_writes_its_slots_and_a_summary_without_them_is_refused() {
        let dir = scratch("ptcp");
        let path = dir.join("s.toml");
        std::fs::write(&path, crate::columns::tests::PTCP_SCENARIO).unwrap();
        let run = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        let out = dir.join("run");
        write_run(&out, &run, false, None).unwrap();
        assert_eq!(
            entries(&out),
            [
                "ptcp_slots.parquet",
                "queues.parquet",
                "summary.json",
                "timeseries.parquet"
            ]
        );
        let s = std::fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(
            s.contains("\"slots_met\"") && !s.contains("eval_slots"),
            "{s}"
        );
        // Slots without their PTCP flows, or PTCP flows without their slots: nothing written.
        let out2 = dir.join("run2");
        let mut lost = run.clone();
        lost.ptcp_slots = None;
        let e = write_run(&out2, &lost, false, None).unwrap_err();
        assert!(e.contains("no PTCP slots were given"), "{e}");
        let mut stray = finished("t", FlowColumns::default());
        stray.ptcp_slots = run.ptcp_slots.clone();
        let e = write_run(&out2, &stray, false, None).unwrap_err();
        assert!(e.contains("no PTCP flow"), "{e}");
        assert!(!out2.exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failure_while_writing_leaves_nothing() {
        let dir = scratch("fail");
        let out = dir.join("run");
        // Columns of different lengths cannot make a table.
        let flows = FlowColumns {
            flow: vec![0],
            t: vec![0.1, 0.2],
            ..FlowColumns::default()
        };
        let err = write_run(&out, &finished("t", flows), true, None).unwrap_err();
        assert!(err.contains("rows"), "{err}");
        assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn unusable_directories_are_refused_with_their_names() {
        // /proc refuses new directories even to root.
        let e = check_writable(Path::new("/proc/tfcc-test/run")).unwrap_err();
        assert!(
            e.contains("/proc/tfcc-test/run") && e.contains("not writable"),
            "{e}"
        );
        // As root, mkdir there fails with ENOENT, which is not "No such file or directory"
        // to the user: /proc is there.
        assert!(!e.contains("No such file"), "{e}");
        let dir = scratch("file");
        std::fs::write(dir.join("f"), "x").unwrap();
        let e = check_writable(&dir.join("f").join("run")).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        let e = check_writable(&dir.join("f")).unwrap_err();
        assert!(e.contains("exists and is not a directory"), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_of_other_files_is_never_replaced() {
        let dir = scratch("precious");
        let mine = dir.join("papers");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("thesis.tex"), "keep").unwrap();
        let e = check_writable(&mine).unwrap_err();
        assert!(e.contains("not a run's outputs"), "{e}");
        let flows = FlowColumns::default();
        assert!(write_run(&mine, &finished("p", flows.clone()), false, None).is_err());
        assert_eq!(
            std::fs::read_to_string(mine.join("thesis.tex")).unwrap(),
            "keep"
        );
        // an empty directory, and an earlier run's, are replaced
        let empty = dir.join("empty");
        std::fs::create_dir(&empty).unwrap();
        write_run(&empty, &finished("p", flows.clone()), false, None).unwrap();
        std::fs::write(empty.join("note.txt"), "x").unwrap();
        write_run(&empty, &finished("p", flows), false, None).unwrap();
        assert!(empty.join("summary.json").exists() && !empty.join("note.txt").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
