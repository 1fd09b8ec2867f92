//! Scenario files: TOML in, a ready-to-run simulation out (DESIGN.md, "Scenario files";
//! docs/scenarios.md documents every key).
//!
//! The pipeline, each step with its own error that names the file and the key:
//! 1. read the file and parse it as TOML ([`toml::Table`]);
//! 2. apply `--set key.path=value` overrides on that table ([`apply_override`]), so overrides go
//!    through exactly the same checks as the file;
//! 3. deserialise into [`spec::ScenarioSpec`] through `serde_path_to_error`, which turns unknown
//!    keys, wrong types and wrong units into errors at `topology.bottleneck.rate`;
//! 4. check what serde cannot and build the simulator objects ([`build::build`]), looking up
//!    each flow group's protocol in the registry ([`protocols`]).
//!
//! Nothing runs until all of this has succeeded: a bad file never starts a run.

pub mod build;
mod gateway;
pub mod protocols;
pub mod spec;
#[cfg(test)]
mod tests;

pub use build::{BuildError, Built, FlowInfo, WebInfo};
pub use protocols::{config_from_params, FlowCommon, ProtocolError};
pub use spec::ScenarioSpec;

use crate::sim::Simulation;
use std::fmt;
use std::path::Path;

/// A scenario that cannot run: which file, which key (a dotted path, `flows[0].count`, or the
/// `--set` override at fault), and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}: {}: {}", self.file, k, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

impl Built {
    /// Every link's ends as node numbers, `[from, to]` by link id, as an ns-2 script building
    /// the same network numbers its nodes: a custom topology's in the order of its `nodes`, the
    /// others' as [`crate::topology::Topology::node_numbers`] derives them.
    pub fn node_numbers(&self) -> Vec<[u32; 2]> {
        self.link_nodes
            .clone()
            .unwrap_or_else(|| self.topology.node_numbers())
    }

    /// The simulation, with every flow and event added.
    pub fn into_simulation(self) -> Result<Simulation, crate::SimError> {
        let mut sim = Simulation::new(self.cfg, self.topology)?;
        for f in self.flows {
            sim.add_flow(f)?;
        }
        for e in self.events {
            sim.add_event(e)?;
        }
        for (flow, v) in self.videos {
            sim.add_video(flow, v)?;
        }
        if let Some(web) = self.web {
            sim.set_web(web);
        }
        Ok(sim)
    }
}

/// The error for a rate of 0 bit/s. Rates are whole bits per second, so a plain number below
/// 0.5 (`rate = 0.02`, meant as 0.02 Mb/s or as seconds) rounds to 0: the message says the unit.
pub const RATE_NOT_POSITIVE: &str =
    "must be positive: at least 1 bit/s (a plain number is in bit/s; \"10Mbps\" is 10 Mb/s)";

/// The largest seed a run takes, 2^63 − 1, wherever the seed comes from (a file's `seed`,
/// `--set seed=`, `--seed`, a sweep, the Python API). A scenario file's seed is a TOML integer,
/// which is signed 64-bit, and the sweep store keeps seeds in an Int64 column: a run with a
/// larger seed (`--seed` took any u64) wrote a summary whose seed no file could hold, and a
/// sweep whose seeds counted past 2^63 − 1 ran every point and then failed with a traceback
/// writing its store. One range for all keeps every run reproducible from a file.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// The words every refused seed gets: the range and why it stops there.
pub fn seed_range_error(got: &str) -> String {
    format!(
        "a seed is a whole number from 0 to {MAX_SEED} (a scenario file's seed is a TOML \
         integer), got {got}"
    )
}

/// A seed as a command line writes it (`--seed 7`): a whole number in `0..=MAX_SEED`, else
/// [`seed_range_error`].
pub fn parse_seed(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(s) if s <= MAX_SEED => Ok(s),
        _ => Err(seed_range_error(text)),
    }
}

/// Read, override, check and build the scenario at `path`. `seed`, when given, replaces the
/// file's `seed` (the command line's `--seed`).
pub fn load(path: &Path, overrides: &[String], seed: Option<u64>) -> Result<Built, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        key: None,
        message: format!("cannot read the scenario: {}", io_reason(&e)),
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    load_str(&text, &file, &stem, overrides, seed)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::InvalidData => "not UTF-8 text".into(),
        std::io::ErrorKind::IsADirectory => "is a directory, not a scenario file".into(),
        _ => e.to_string(),
    }
}

/// As [`load`] for text already in memory; `file` names it in errors and `stem` is the default
/// scenario name.
pub fn load_str(
    text: &str,
    file: &str,
    stem: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Built, ScenarioError> {
    let fail = |key: Option<String>, message: String| ScenarioError {
        file: file.to_string(),
        key,
        message: plain_types(&message),
    };
    let table = parse_toml(text).map_err(|m| fail(None, m))?;
    let mut root = toml::Value::Table(table);
    for o in overrides {
        apply_override(&mut root, o).map_err(|m| fail(Some(format!("--set {o}")), m))?;
    }
    let mut spec: ScenarioSpec = serde_path_to_error::deserialize(root).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().message().trim_end().to_string();
        let (key, message) = refine(path, message);
        fail(key, message)
    })?;
    if let Some(s) = seed {
        if s > MAX_SEED {
            return Err(fail(
                Some("--seed".into()),
                seed_range_error(&s.to_string()),
            ));
        }
        spec.seed = s;
    }
    let name = spec.name.clone().unwrap_or_else(|| stem.to_string());
    build::build(&spec, name).map_err(|e| fail(Some(e.key), e.message))
}

/// The TOML document `text` as the scenario loader reads it, or `invalid TOML at line L, column
/// C: why`. Scenario files are TOML 1.1 (the `toml` crate's, which lets an inline table span
/// lines, as the 004 scenarios' `params` do); the Python side reads scenario, sweep and claim
/// files through this function (`tfcc._core.parse_toml`), since Python 3.11's `tomllib` reads
/// TOML 1.0 only and refused files that `tfcc run` accepts. Tables keep the file's key order
/// (the workspace's `toml` has `preserve_order`).
pub fn parse_toml(text: &str) -> Result<toml::Table, String> {
    toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| {
                let (line, col) = line_col(text, s.start);
                format!(" at line {line}, column {col}")
            })
            .unwrap_or_default();
        format!("invalid TOML{at}: {}", e.message().trim_end())
    })
}

/// serde reports a missing field at its parent (`flows[0]`: "missing field `protocol`"); name
/// the field itself instead.
fn refine(path: String, message: String) -> (Option<String>, String) {
    let parent = (path != ".").then_some(path);
    if let Some(rest) = message.strip_prefix("missing field `") {
        if let Some(field) = rest.strip_suffix('`') {
            let key = match parent {
                Some(p) => format!("{p}.{field}"),
                None => field.to_string(),
            };
            return (Some(key), "missing: this key is required".into());
        }
    }
    (parent, message)
}

/// serde's messages name Rust's types ("invalid value: integer `-1`, expected u32",
/// "expected struct LinkTable", "expected a map"); a scenario's author knows TOML's words.
/// Rewrites those names, and nothing else, in a message.
pub fn plain_types(message: &str) -> String {
    const WORDS: [(&str, &str); 12] = [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number from 0 up"),
        ("expected usize", "expected a whole number from 0 up"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f32", "expected a number"),
        ("expected f64", "expected a number"),
        ("expected a map", "expected a table"),
        ("expected a sequence", "expected a list"),
        ("invalid type: sequence", "invalid type: list"),
    ];
    let mut out = message.to_string();
    for (rust, plain) in WORDS {
        out = replace_word(&out, rust, plain);
    }
    out = replace_word(&out, "invalid type: map", "invalid type: table");
    // the toml crate's words for a number or a table where a name (an enum) belongs
    out = out.replace(
        "invalid type: unit variant, expected string only",
        "expected one of its names, as a string",
    );
    // "expected struct TopologySpec", "expected enum Foo": the key already says which table
    for (kind, plain) in [
        ("expected struct ", "expected a table"),
        ("expected enum ", "expected one of its names"),
    ] {
        while let Some(i) = out.find(kind) {
            let rest = &out[i + kind.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            out = format!("{}{plain}{}", &out[..i], &rest[end..]);
        }
    }
    out
}

/// `text` with every `word` that is not followed by a letter, digit or `_` replaced.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let after = &rest[i + word.len()..];
        let whole = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..i]);
        out.push_str(if whole { by } else { word });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Apply one `key.path=value` override to the parsed file. `value` is read as TOML (`10`,
/// `true`, `"15Mbps"`, `{ model = "bernoulli", p = 0.01 }`), or taken as a plain string when it
/// is not valid TOML (`15Mbps`). Numbers in the path index lists (`flows.0.count`); missing
/// tables on the way are created, so a key the file leaves out can still be set.
pub fn apply_override(root: &mut toml::Value, assignment: &str) -> Result<(), String> {
    let Some((path, raw)) = assignment.split_once('=') else {
        return Err("expected KEY=VALUE, e.g. topology.bottleneck.rate=10Mbps".into());
    };
    let path = path.trim();
    let raw = raw.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"));
    // A list or a table that is not valid TOML (`[0s, 1s]`, `{ model = bernoulli }`) is a
    // mistake, not a plain string: as a string it failed later as "expected a duration".
    if parsed.is_none() && (raw.starts_with('[') || raw.starts_with('{')) {
        return Err(format!(
            "`{raw}` is not a valid TOML {}: text inside needs quotes, e.g. \
             [\"0s\", \"1s\"] or {{ model = \"bernoulli\", p = 0.01 }} (in a shell, \
             put the whole --set in single quotes)",
            if raw.starts_with('[') {
                "list"
            } else {
                "table"
            }
        ));
    }
    let value = parsed.unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(format!("`{path}` is not a dotted key path"));
    }
    let mut cur: &mut toml::Value = root;
    let mut walked = String::new();
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let here = if walked.is_empty() {
            seg.to_string()
        } else {
            format!("{walked}.{seg}")
        };
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(seg.to_string(), value);
                    return Ok(());
                }
                // A missing key followed by an index (`events.0.at=1s` in a file without
                // events) is meant as a list entry, which a table cannot stand for: it was
                // made a table and refused later as "events: invalid type: table, expected a
                // list".
                let next = segs[i + 1];
                if !t.contains_key(*seg) && next.parse::<usize>().is_ok() {
                    return Err(format!(
                        "`{here}` is not in the file, so it has no entry {next}: set the whole list, \
                         e.g. {here}=[{{ ... }}], or add the entry to the file"
                    ));
                }
                t.entry(seg.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let len = a.len();
                let idx: usize = seg.parse().map_err(|_| {
                    format!("`{walked}` is a list: index it with a number, not `{seg}`")
                })?;
                let slot = a.get_mut(idx).ok_or_else(|| {
                    format!("`{walked}` has {len} entries (numbered from 0), there is no {idx}")
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => {
                return Err(format!(
                    "`{walked}` is a value, not a table: cannot set `{here}`"
                ))
            }
        };
        walked = here;
    }
    Ok(())
}
