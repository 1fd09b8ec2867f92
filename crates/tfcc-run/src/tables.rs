//! `timeseries.parquet` and `queues.parquet`: the time series as Parquet files, one row group,
//! uncompressed (the files are small and read back by pyarrow, polars or DuckDB).
//!
//! Column types follow what pyarrow inferred from the earlier Python writer, so readers see
//! the same schema: integers as INT64, reals as DOUBLE, optional reals (a window-based flow has
//! no rate) as nullable DOUBLE, link names as UTF-8 strings.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::columns::{
    FlowColumns, FrameColumns, LinkColumns, OptF64, PtcpSlotColumns, SlotKind, TraceColumns,
    TraceRows,
};

/// One column's values. The files' column lists ([`flow_columns`] and the like) are also the
/// keys and values of the Python API's dicts of lists (tfcc-py's `run_scenario`), so the two
/// cannot differ.
pub enum Col<'a> {
    I64(&'a [i64]),
    OptI64(&'a [Option<i64>]),
    F64(&'a [f64]),
    OptF64(&'a [Option<f64>]),
    /// The same column as `OptF64`, stored compactly.
    Nullable(&'a OptF64),
    Str(&'a [String]),
    OptStr(&'a [Option<String>]),
    OptBool(&'a [Option<bool>]),
    /// Strings held elsewhere (the trace's names of links, events and messages).
    Text(&'a [&'a str]),
    OptText(&'a [Option<&'a str>]),
    /// PTCP slot kinds, written as their names.
    SlotKinds(&'a [SlotKind]),
}

impl Col<'_> {
    fn len(&self) -> usize {
        match self {
            Col::I64(v) => v.len(),
            Col::OptI64(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::OptF64(v) => v.len(),
            Col::Nullable(v) => v.len(),
            Col::Str(v) => v.len(),
            Col::OptStr(v) => v.len(),
            Col::OptBool(v) => v.len(),
            Col::Text(v) => v.len(),
            Col::OptText(v) => v.len(),
            Col::SlotKinds(v) => v.len(),
        }
    }

    fn field(&self, name: &str) -> parquet::errors::Result<Type> {
        let (physical, repetition, logical) = match self {
            Col::I64(_) => (Physical::INT64, Repetition::REQUIRED, None),
            Col::OptI64(_) => (Physical::INT64, Repetition::OPTIONAL, None),
            Col::F64(_) => (Physical::DOUBLE, Repetition::REQUIRED, None),
            Col::OptF64(_) | Col::Nullable(_) => (Physical::DOUBLE, Repetition::OPTIONAL, None),
            Col::Str(_) | Col::Text(_) | Col::SlotKinds(_) => (
                Physical::BYTE_ARRAY,
                Repetition::REQUIRED,
                Some(LogicalType::String),
            ),
            Col::OptStr(_) | Col::OptText(_) => (
                Physical::BYTE_ARRAY,
                Repetition::OPTIONAL,
                Some(LogicalType::String),
            ),
            Col::OptBool(_) => (Physical::BOOLEAN, Repetition::OPTIONAL, None),
        };
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()
    }
}

/// Write `columns` (name, values; all the same length) to `path` as one row group,
/// dictionary-encoded when `dictionary` (for columns of a few repeated values).
fn write(
    path: &Path,
    schema_name: &str,
    columns: &[(&str, Col<'_>)],
    dictionary: bool,
) -> Result<(), String> {
    let mut t = Table::create(path, schema_name, columns, dictionary)?;
    t.group(columns)?;
    t.close()
}

/// A Parquet file being written, one row group at a time.
struct Table<'p> {
    path: &'p Path,
    writer: SerializedFileWriter<File>,
}

impl<'p> Table<'p> {
    /// Create `path` with the schema of `columns` (their names and types; the values are not
    /// written).
    fn create(
        path: &'p Path,
        schema_name: &str,
        columns: &[(&str, Col<'_>)],
        dictionary: bool,
    ) -> Result<Self, String> {
        let fail = |e: parquet::errors::ParquetError| format!("{}: {e}", path.display());
        let fields = columns
            .iter()
            .map(|(name, c)| c.field(name).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let schema = Type::group_type_builder(schema_name)
            .with_fields(fields)
            .build()
            .map_err(fail)?;
        let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Dictionary encoding pays off for repeated values; time series are mostly distinct
        // reals, and its hash tables were a large share of the writer's memory. The trace's
        // event, link, direction and kind columns hold a handful of strings each: there it
        // shrinks the file several times.
        let props = Arc::new(
            WriterProperties::builder()
                .set_dictionary_enabled(dictionary)
                .build(),
        );
        let writer = SerializedFileWriter::new(file, Arc::new(schema), props).map_err(fail)?;
        Ok(Table { path, writer })
    }

    /// Append `columns` (in the schema's order, all the same length) as one row group.
    fn group(&mut self, columns: &[(&str, Col<'_>)]) -> Result<(), String> {
        let path = self.path;
        let rows = columns.first().map_or(0, |c| c.1.len());
        if let Some((name, c)) = columns.iter().find(|c| c.1.len() != rows) {
            return Err(format!(
                "column {name} has {} rows where the others have {rows}",
                c.len()
            ));
        }
        let fail = |e: parquet::errors::ParquetError| format!("{}: {e}", path.display());
        let mut group = self.writer.next_row_group().map_err(fail)?;
        for (_, col) in columns {
            let Some(mut w) = group.next_column().map_err(fail)? else {
                break;
            };
            match col {
                Col::I64(v) => w.typed::<Int64Type>().write_batch(v, None, None),
                Col::OptI64(v) => {
                    let present: Vec<i64> = v.iter().flatten().copied().collect();
                    w.typed::<Int64Type>()
                        .write_batch(&present, Some(&levels(v)), None)
                }
                Col::F64(v) => w.typed::<DoubleType>().write_batch(v, None, None),
                Col::OptF64(v) => {
                    let present: Vec<f64> = v.iter().flatten().copied().collect();
                    w.typed::<DoubleType>()
                        .write_batch(&present, Some(&levels(v)), None)
                }
                Col::Nullable(v) => {
                    w.typed::<DoubleType>()
                        .write_batch(v.present(), Some(&v.levels()), None)
                }
                Col::Str(v) => {
                    let bytes: Vec<ByteArray> =
                        v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                    w.typed::<ByteArrayType>().write_batch(&bytes, None, None)
                }
                Col::OptStr(v) => {
                    let bytes: Vec<ByteArray> = v
                        .iter()
                        .flatten()
                        .map(|s| ByteArray::from(s.as_str()))
                        .collect();
                    w.typed::<ByteArrayType>()
                        .write_batch(&bytes, Some(&levels(v)), None)
                }
                Col::OptBool(v) => {
                    let present: Vec<bool> = v.iter().flatten().copied().collect();
                    w.typed::<BoolType>()
                        .write_batch(&present, Some(&levels(v)), None)
                }
                Col::Text(v) => {
                    let bytes: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(*s)).collect();
                    w.typed::<ByteArrayType>().write_batch(&bytes, None, None)
                }
                Col::OptText(v) => {
                    let bytes: Vec<ByteArray> =
                        v.iter().flatten().map(|s| ByteArray::from(*s)).collect();
                    w.typed::<ByteArrayType>()
                        .write_batch(&bytes, Some(&levels(v)), None)
                }
                Col::SlotKinds(v) => {
                    let bytes: Vec<ByteArray> =
                        v.iter().map(|k| ByteArray::from(k.name())).collect();
                    w.typed::<ByteArrayType>().write_batch(&bytes, None, None)
                }
            }
            .map_err(fail)?;
            w.close().map_err(fail)?;
        }
        group.close().map_err(fail)?;
        Ok(())
    }

    fn close(self) -> Result<(), String> {
        let path = self.path;
        self.writer
            .close()
            .map(drop)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Definition levels of an optional column: 1 where a value is present.
fn levels<T>(v: &[Option<T>]) -> Vec<i16> {
    v.iter().map(|x| i16::from(x.is_some())).collect()
}

/// `timeseries.parquet`: per flow, per sampling interval.
pub fn write_flows(path: &Path, c: &FlowColumns) -> Result<(), String> {
    write(path, "flows", &flow_columns(c), false)
}

/// The columns of `timeseries.parquet`.
pub fn flow_columns(c: &FlowColumns) -> [(&'static str, Col<'_>); 12] {
    [
        ("flow", Col::I64(&c.flow)),
        ("t", Col::F64(&c.t)),
        ("throughput_bps", Col::F64(&c.throughput_bps)),
        ("delivered_bytes", Col::I64(&c.delivered_bytes)),
        ("cwnd", Col::Nullable(&c.cwnd)),
        ("rate_bps", Col::Nullable(&c.rate_bps)),
        ("p", Col::Nullable(&c.p)),
        ("rtt_s", Col::Nullable(&c.rtt_s)),
        ("ptcp_k", Col::Nullable(&c.ptcp_k)),
        ("ptcp_s", Col::Nullable(&c.ptcp_s)),
        ("ptcp_a_bps", Col::Nullable(&c.ptcp_a_bps)),
        ("ptcp_oracle_a_bps", Col::Nullable(&c.ptcp_oracle_a_bps)),
    ]
}

/// `queues.parquet`: per reported link, per sampling interval.
pub fn write_links(path: &Path, c: &LinkColumns) -> Result<(), String> {
    write(path, "links", &link_columns(c), false)
}

/// The columns of `queues.parquet`.
pub fn link_columns(c: &LinkColumns) -> [(&'static str, Col<'_>); 7] {
    [
        ("link", Col::Str(&c.link)),
        ("t", Col::F64(&c.t)),
        ("queue_pkts", Col::I64(&c.queue_pkts)),
        ("queue_pkts_avg", Col::F64(&c.queue_pkts_avg)),
        ("queue_bytes", Col::I64(&c.queue_bytes)),
        ("throughput_bps", Col::F64(&c.throughput_bps)),
        ("drops", Col::I64(&c.drops)),
    ]
}

/// Rows per row group of `trace.parquet`: the columns of one group are built at a time, so
/// writing a trace of any length needs a few tens of megabytes beside its records.
const TRACE_GROUP_ROWS: usize = 1 << 17;

/// `trace.parquet`: one row per traced packet event, in row groups of 131 072 rows.
pub fn write_trace(path: &Path, c: &TraceColumns) -> Result<(), String> {
    let empty = TraceRows::default();
    let mut table = Table::create(path, "trace", &trace_columns(&empty), true)?;
    for chunk in c.records.chunks(TRACE_GROUP_ROWS) {
        table.group(&trace_columns(&TraceRows::of(c, chunk)))?;
    }
    if c.records.is_empty() {
        table.group(&trace_columns(&empty))?;
    }
    table.close()
}

/// One row group of the trace as the file's columns.
fn trace_columns<'r>(rows: &'r TraceRows<'_>) -> [(&'static str, Col<'r>); 9] {
    [
        ("t", Col::F64(&rows.t)),
        ("event", Col::Text(&rows.event)),
        ("reason", Col::OptText(&rows.reason)),
        ("link", Col::Text(&rows.link)),
        ("flow", Col::I64(&rows.flow)),
        ("direction", Col::Text(&rows.direction)),
        ("kind", Col::Text(&rows.kind)),
        ("seq", Col::OptI64(&rows.seq)),
        ("size", Col::I64(&rows.size)),
    ]
}

/// `frames.parquet`: per video flow, per frame slot ([`FrameColumns`]).
pub fn write_frames(path: &Path, c: &FrameColumns) -> Result<(), String> {
    write(path, "frames", &frame_columns(c), false)
}

/// The columns of `frames.parquet`.
pub fn frame_columns(c: &FrameColumns) -> [(&'static str, Col<'_>); 10] {
    [
        ("flow", Col::I64(&c.flow)),
        ("frame", Col::I64(&c.frame)),
        ("t", Col::F64(&c.t)),
        ("grabbed", Col::I64(&c.grabbed)),
        ("q", Col::OptI64(&c.q)),
        ("bytes", Col::I64(&c.bytes)),
        ("packets", Col::I64(&c.packets)),
        ("delivered", Col::I64(&c.delivered)),
        ("complete_s", Col::OptF64(&c.complete_s)),
        ("sbuf_bytes", Col::OptI64(&c.sbuf_bytes)),
    ]
}

/// `ptcp_slots.parquet`: per PTCP flow, per evaluation and control slot ([`PtcpSlotColumns`]).
/// Dictionary-encoded: the members of an aggregate repeat the aggregate's slots, and `kind`,
/// `regime`, `bound_by` and the small counts hold a handful of values each (001-e6-web, 60 s:
/// 12,790 bytes, 121,088 without).
pub fn write_ptcp_slots(path: &Path, c: &PtcpSlotColumns) -> Result<(), String> {
    write(path, "ptcp_slots", &ptcp_slot_columns(c), true)
}

/// The columns of `ptcp_slots.parquet`.
pub fn ptcp_slot_columns(c: &PtcpSlotColumns) -> [(&'static str, Col<'_>); 16] {
    [
        ("flow", Col::I64(&c.flow)),
        ("kind", Col::SlotKinds(&c.kind)),
        ("start_s", Col::F64(&c.start_s)),
        ("end_s", Col::F64(&c.end_s)),
        ("throughput_bps", Col::F64(&c.throughput_bps)),
        ("met", Col::OptBool(&c.met)),
        ("fast_retransmits", Col::I64(&c.fast_retransmits)),
        ("timeouts", Col::I64(&c.timeouts)),
        ("s", Col::OptI64(&c.s)),
        ("target_bps", Col::OptF64(&c.target_bps)),
        ("regime", Col::OptStr(&c.regime)),
        ("bound_by", Col::OptStr(&c.bound_by)),
        ("k_bw_acks", Col::OptI64(&c.k_bw_acks)),
        ("k_max_acks", Col::OptI64(&c.k_max_acks)),
        ("k_min_acks", Col::OptI64(&c.k_min_acks)),
        ("k_min_over_k_max", Col::OptI64(&c.k_min_over_k_max)),
    ]
}
