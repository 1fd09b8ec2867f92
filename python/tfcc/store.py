"""The results store of a sweep: a Parquet dataset in the sweep directory, queried with DuckDB.

Layout of a sweep directory ``DIR``::

    sweep.json                  the sweep (scenario, fingerprint, axes, seeds)
    runs/<id>/                  each run's ``tfcc run`` outputs (summary.json, parquet, PNGs)
    store/runs/part-*.parquet   one row per finished run: run_id, seed, the axis columns,
                                scenario, sim_seconds, wall_seconds (simulating),
                                task_seconds (the worker's whole time), events, the metrics
    store/flows/part-*.parquet  one row per flow per run (the summary's flow fields)
    store/links/part-*.parquet  one row per link per run
    failed/<id>.json            a point that failed: its axis values, seed, error, traceback

Why files rather than one DuckDB database: a part is written beside its final name and renamed
into place, so a SIGKILL leaves whole parts or none, a reader (``tfcc query`` during a sweep)
never waits for the writer's lock, and the dataset reads the same from polars, pandas or Spark.
The three parts of a batch share a name and the ``runs`` part is renamed last: a run counts as
stored only when its ``runs`` row is, and flows/links parts without one are leftovers of a crash,
removed when the sweep resumes. Run directories are the ground truth: a resumed sweep stores any
finished run directory that the store lacks (a crash between the two), so nothing is lost or
stored twice. Views ``runs``, ``flows``, ``links``, ``timeseries`` and ``ptcp_slots`` answer
SQL.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcc.sweep import ordered_cases

if TYPE_CHECKING:
    import duckdb
    import polars

    from tfcc.sweep import Point

TABLES = ("flows", "links", "runs")  # write order: runs last
#: The fields of summary.json's flows and links entries as the store keeps them (``id`` as
#: ``flow``): an axis of the same name is shadowed by them in the flows and links views.
SHADOWED: dict[str, frozenset[str]] = {
    "flows": frozenset(
        "flow label group protocol throughput_bps bytes_delivered packets_sent packets_lost "
        "loss_event_rate mean_rtt_s base_rtt_s cov retransmits timeouts spurious_timeouts "
        "receiver_timeouts".split()
    ),
    "links": frozenset(
        "name utilization drops queue_drops early_drops artificial_drops down_drops "
        "mean_queue_pkts arrivals tx_packets tx_bytes".split()
    ),
}
#: Columns a view always has (docs/sweeps.md), with their type when no row has a value: a
#: sweep with no failure has no `error` otherwise, and one whose runs all have a null metric
#: (θ without TCP against another protocol) no column for it, so a query naming one failed.
ALWAYS: dict[str, dict[str, str]] = {
    "runs": {
        "status": "VARCHAR",
        "error": "VARCHAR",
        "fairness_theta": "DOUBLE",
        "jain_index": "DOUBLE",
    },
}
#: The columns of the per-run Parquet files the views ``timeseries`` and ``ptcp_slots`` read
#: (tfcc-run's ``tables.rs``), for a sweep with no such file: no run finished, or none had a
#: PTCP flow. Without them those views had only ``run_id`` and ``seed``, and a query written
#: against a sweep that has them failed on one that has not. tests/test_sweep.py compares them
#: with the files a run writes.
PER_RUN: dict[str, dict[str, str]] = {
    "timeseries": {
        "flow": "BIGINT",
        "t": "DOUBLE",
        "throughput_bps": "DOUBLE",
        "delivered_bytes": "BIGINT",
        **dict.fromkeys(
            "cwnd rate_bps p rtt_s ptcp_k ptcp_s ptcp_a_bps ptcp_oracle_a_bps".split(), "DOUBLE"
        ),
    },
    "ptcp_slots": {
        "flow": "BIGINT",
        "kind": "VARCHAR",
        "start_s": "DOUBLE",
        "end_s": "DOUBLE",
        "throughput_bps": "DOUBLE",
        "met": "BOOLEAN",
        "fast_retransmits": "BIGINT",
        "timeouts": "BIGINT",
        "s": "BIGINT",
        "target_bps": "DOUBLE",
        "regime": "VARCHAR",
        "bound_by": "VARCHAR",
        **dict.fromkeys("k_bw_acks k_max_acks k_min_acks k_min_over_k_max".split(), "BIGINT"),
    },
}
#: Flush buffered rows after this many runs or seconds; a crash loses at most the buffer's
#: store rows, which the resume rebuilds from the run directories.
FLUSH_RUNS = 64
FLUSH_SECONDS = 2.0


class StoreError(ValueError):
    """The directory is not a sweep directory, or belongs to another sweep."""


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    tmp.rename(path)


def _scalars(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is None or isinstance(v, str | int | float | bool)}


class Store:
    """The writer side: one per sweep directory at a time (a lock file enforces it)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.buffers: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self.pending = 0
        self.last_flush = time.monotonic()
        self.lock_fd: int | None = None

    @classmethod
    def create(cls, root: Path, meta: Mapping[str, Any], also: Sequence[str] = ()) -> Store:
        """Open ``root`` for writing a sweep described by ``meta`` (see
        :func:`tfcc.sweep.sweep_meta`), creating it, or resuming the same sweep there: one
        whose fingerprint is ``meta``'s or one of ``also`` (the same sweep under an older
        fingerprint, :meth:`tfcc.sweep.Sweep.text_fingerprint`; resumed, it takes the new one)."""
        from tfcc.sweep import SweepError

        if root.exists() and not root.is_dir():
            raise SweepError(f"{root}: exists and is not a directory")
        meta_path = root / "sweep.json"
        if root.is_dir() and any(root.iterdir()) and not meta_path.exists():
            raise SweepError(f"{root}: not empty and not a sweep directory; choose another --out")
        try:
            root.mkdir(parents=True, exist_ok=True)
            lock_fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            # a parent that does not exist as a directory, no permission, a read-only file system
            raise SweepError(f"{root}: cannot create the sweep directory ({e.strerror})") from None
        store = cls(root)
        store.lock_fd = lock_fd
        try:
            fcntl.flock(store.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            store.close()
            raise SweepError(f"{root}: another sweep is writing here") from None
        if meta_path.exists():
            try:
                old = read_meta(meta_path, SweepError)
            except SweepError:
                store.close()
                raise
            if old.get("fingerprint") not in (meta["fingerprint"], *also):
                store.close()
                raise SweepError(f"{root}: {_what_differs(old, meta)}; choose another --out")
            meta = _merge_meta(old, meta)
        for sub in ("runs", "failed", *(f"store/{t}" for t in TABLES)):
            (root / sub).mkdir(parents=True, exist_ok=True)
        _write_json(meta_path, dict(meta))
        store._drop_crash_leftovers()
        return store

    def close(self) -> None:
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    def _drop_crash_leftovers(self) -> None:
        """Temporary files of a killed writer, and flows/links parts whose runs part was never
        renamed into place."""
        have = {p.name for p in (self.root / "store" / "runs").glob("part-*.parquet")}
        for t in TABLES:
            for p in (self.root / "store" / t).iterdir():
                if p.name.startswith(".") or (t != "runs" and p.name not in have):
                    p.unlink(missing_ok=True)
        for p in (self.root / "failed").glob(".*"):
            p.unlink(missing_ok=True)
        for p in (self.root / "runs").glob(".*"):
            # the run writer's temporary directories (tfcc-run output.rs) of runs killed
            # mid-write
            shutil.rmtree(p, ignore_errors=True)

    def stored_ids(self) -> set[str]:
        import pyarrow.parquet as pq

        ids: set[str] = set()
        for p in (self.root / "store" / "runs").glob("part-*.parquet"):
            ids.update(pq.read_table(p, columns=["run_id"]).column("run_id").to_pylist())
        return ids

    def failed_ids(self) -> set[str]:
        return {p.stem for p in (self.root / "failed").glob("*.json")}

    def reconcile(self, points: Mapping[str, Point]) -> set[str]:
        """The ids of ``points`` that are done; a finished run directory the store lacks (the
        driver was killed before flushing) is stored now."""
        done = self.stored_ids()
        for pid, point in points.items():
            if pid in done:
                continue
            summary = self.run_dir(pid) / "summary.json"
            if summary.exists():
                try:
                    self.add(point, json.loads(summary.read_text()))
                except (OSError, ValueError):
                    continue  # unreadable: run it again
                done.add(pid)
        self.flush()
        return done

    def forget_failure(self, run_id: str) -> None:
        (self.root / "failed" / f"{run_id}.json").unlink(missing_ok=True)

    def add_failure(self, point: Point, error: str, tb: str) -> None:
        row = {
            "run_id": point.id,
            "seed": point.seed,
            **point.params,
            "status": "failed",
            "error": error,
            "traceback": tb,
            "overrides": list(point.overrides),
        }
        _write_json(self.root / "failed" / f"{point.id}.json", row)

    def add(
        self, point: Point, summary: Mapping[str, Any], task_seconds: float | None = None
    ) -> None:
        """Buffer a finished run's rows; ``task_seconds`` is the worker's whole time on it
        (simulation and outputs), for the machinery's cost."""
        key = {"run_id": point.id, "seed": point.seed, **point.params}
        metrics = {
            k: float(v)
            for k, v in (summary.get("metrics") or {}).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        self.buffers["runs"].append(
            {
                **key,
                "status": "ok",
                "scenario": summary.get("scenario"),
                "sim_seconds": summary.get("sim_seconds"),
                "wall_seconds": summary.get("wall_seconds"),
                "task_seconds": task_seconds,
                "events": summary.get("events"),
                **{k: v for k, v in metrics.items() if k not in key},
            }
        )
        for f in summary.get("flows", []):
            row = _scalars(f)
            row["flow"] = row.pop("id", None)
            self.buffers["flows"].append({**key, **row})
        for link in summary.get("links", []):
            self.buffers["links"].append({**key, **_scalars(link)})
        self.pending += 1
        if self.pending >= FLUSH_RUNS or time.monotonic() - self.last_flush > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one part per table, ``runs`` last."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.last_flush = time.monotonic()
        if not self.pending:
            return
        name = f"part-{time.time_ns()}-{os.getpid()}.parquet"
        for t in TABLES:
            rows = self.buffers[t]
            if not rows and t != "runs":
                continue
            table = pa.Table.from_pylist(rows)
            # a column with no value in this batch has no type; leave it to the other parts
            keep = [
                c for c in table.column_names if not pa.types.is_null(table.schema.field(c).type)
            ]
            table = table.select(keep)
            final = self.root / "store" / t / name
            tmp = final.with_name(f".{name}.tmp")
            pq.write_table(table, tmp)
            tmp.rename(final)
        self.buffers = {t: [] for t in TABLES}
        self.pending = 0


def _what_differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why a sweep directory refuses another sweep (their fingerprints differ): the
    overrides applied to every point, else the scenario's name or its text."""

    def show(ovs: Any) -> str:
        return " ".join(f"--set {o}" for o in ovs) if ovs else "no --set"

    if list(old.get("set", [])) != list(new.get("set", [])):
        return (
            f"holds a sweep with other overrides for every point ({show(old.get('set'))}, "
            f"now {show(new.get('set'))}; [sweep] set counts too)"
        )
    if Path(str(old.get("scenario"))).name != Path(str(new.get("scenario"))).name:
        return f"holds a sweep of another scenario ({old.get('scenario')})"
    return (
        f"holds a sweep of {old.get('scenario')} as it was: its settings have changed since "
        "(comments and its [sweep] table do not count)"
    )


def _merge_meta(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A resumed sweep with a changed grid keeps describing every run in the directory: the
    cases and seeds of both, the new order first (the report draws the axes from here)."""
    merged = dict(new)
    old_axes = {a["name"]: a for a in old.get("axes", [])}
    axes = []
    for a in new.get("axes", []):
        before = old_axes.pop(a["name"], {"cases": []})
        cases = a["cases"] + [c for c in before["cases"] if c not in a["cases"]]
        # quantities in numeric order, whichever sweep brought them (sweep.ordered_cases)
        axes.append({**a, "cases": ordered_cases(cases)})
    merged["axes"] = axes + list(old_axes.values())
    seeds = list(new.get("seeds", []))
    merged["seeds"] = seeds + [x for x in old.get("seeds", []) if x not in seeds]
    return merged


# --- the reader side -----------------------------------------------------------------------


def _check_dir(root: Path) -> None:
    # a mistyped path is named as one, not as a directory that lacks a sweep.json
    if not root.exists():
        raise StoreError(f"{root}: no such directory (give a sweep directory, tfcc sweep --out)")
    if not (root / "sweep.json").is_file():
        raise StoreError(f"{root}: not a sweep directory (no sweep.json); run `tfcc sweep` first")


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _numeric_axes(con: duckdb.DuckDBPyConnection, body: str, cols: list[str]) -> str:
    """``body`` with each axis column of ``cols`` whose values are all quantities of one kind
    (``"5Mbps"``, ``"20ms"``, plain numbers; :func:`tfcc.sweep.numeric_order`) made an ENUM of
    its labels in numeric order, so ``ORDER BY``, ``min``/``max`` and comparisons between
    values go by what the labels mean while they still read as written ("10Mbps" after
    "5Mbps", where text order puts it first), plus a column ``<axis>_value``: the quantity in SI
    base units (s, bit/s, bytes) as a DOUBLE, for arithmetic, ranges and plots. Other axes
    (named cases, protocols) stay text."""
    from tfcc.sweep import numeric_order, quantity_of

    have = {r[0] for r in con.execute(f"DESCRIBE {body}").fetchall()}
    replace, extra = [], []
    for c in cols:
        if c not in have:
            continue
        labels = sorted(
            r[0]
            for r in con.execute(
                f'SELECT DISTINCT CAST("{c}" AS VARCHAR) FROM ({body}) WHERE "{c}" IS NOT NULL'
            ).fetchall()
        )
        order = numeric_order(labels)
        if not order:
            continue
        text = f'CAST("{c}" AS VARCHAR)'
        replace.append(f'CAST({text} AS ENUM({", ".join(map(_lit, order))})) AS "{c}"')
        if f"{c}_value" not in have:
            whens = " ".join(
                f"WHEN {_lit(v)} THEN {(quantity_of(v) or ('', 0.0))[1]!r}::DOUBLE" for v in order
            )
            extra.append(f'CASE {text} {whens} END AS "{c}_value"')
    if not replace:
        return body
    more = "".join(f", {e}" for e in extra)
    return f"SELECT * REPLACE ({', '.join(replace)}){more} FROM ({body})"


def connect(root: Path | str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with views ``runs`` (finished and failed runs, one row
    each), ``flows``, ``links``, ``timeseries`` (every run's time series, with run_id) and
    ``ptcp_slots`` (every run's PTCP evaluation and control slots, with run_id).
    Axes whose values are quantities (``5Mbps``, ``20ms``, counts) sort numerically and come
    with ``<axis>_value`` in SI base units (:func:`_numeric_axes`)."""
    import duckdb

    root = Path(root)
    _check_dir(root)
    con = duckdb.connect(":memory:")
    try:
        _create_views(con, root)
    except duckdb.Error as e:
        # a store part or a run's Parquet file that is not one (a disk that filled up, a file
        # copied in by hand): DuckDB's words were a traceback in `tfcc report`
        con.close()
        why = str(e).splitlines()[0]
        raise StoreError(f"{root}: the results store cannot be read ({why})") from None
    return con


def _create_views(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """The views of :func:`connect` on ``con``."""

    def lit(p: Path) -> str:
        return "'" + str(p).replace("'", "''") + "'"

    def parts(t: str) -> str | None:
        d = root / "store" / t
        if not any(d.glob("part-*.parquet")):
            return None
        return f"SELECT * FROM read_parquet({lit(d / 'part-*.parquet')}, union_by_name = true)"

    failed = (
        f"SELECT * FROM read_json_auto({lit(root / 'failed' / '*.json')})"
        if any((root / "failed").glob("*.json"))
        else None
    )
    empty = "SELECT NULL::VARCHAR AS run_id, NULL::BIGINT AS seed WHERE false"
    axes = [a["column"] for a in meta(root).get("axes", []) if "column" in a]
    run_cols: set[str] = set()
    for t in ("runs", "flows", "links"):  # runs first: the others join it
        pieces = [q for q in (parts(t), failed if t == "runs" else None) if q]
        body = " UNION ALL BY NAME ".join(pieces) if pieces else empty
        # the columns the docs promise, NULL where no row has one: `error` comes only from
        # failed points, and a part leaves out a column without a value (see Store.flush)
        have = {r[0] for r in con.execute(f"DESCRIBE {body}").fetchall()}
        extra = "".join(
            f", NULL::{ty} AS {col}" for col, ty in ALWAYS.get(t, {}).items() if col not in have
        )
        if extra:
            body = f"SELECT *{extra} FROM ({body})"
        # An axis named like a flow or link field (the flagship's `protocol`) was overwritten
        # by the field in the rows (Store.add): its value comes back from `runs` as axis_NAME.
        shadowed = [c for c in axes if c in SHADOWED.get(t, ()) and c in run_cols]
        # an axis column of this table's own rows (not a flow/link field of the same name)
        body = _numeric_axes(con, body, [c for c in axes if c not in SHADOWED.get(t, ())])
        if shadowed:
            cols = ", ".join(f'r."{c}" AS "axis_{c}"' for c in shadowed)
            sel = ", ".join(f'"{c}"' for c in shadowed)
            body = (
                f"SELECT f.*, {cols} FROM ({body}) f "
                f"LEFT JOIN (SELECT run_id, {sel} FROM runs) r ON f.run_id = r.run_id"
            )
        con.execute(f"CREATE VIEW {t} AS {body}")
        if t == "runs":
            # what the others can take from it: after a crash, flows parts or run directories
            # may exist before any runs part (and so before any axis column)
            run_cols = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
    # Per-run Parquet files, every run's rows with its run_id: the time series, and PTCP's
    # evaluation and control slots (ptcp_slots.parquet, only in runs with a PTCP flow).
    for view in ("timeseries", "ptcp_slots"):
        if any((root / "runs").glob(f"*/{view}.parquet")):
            series = (
                "SELECT * EXCLUDE (filename), "
                f"regexp_extract(filename, '([^/]+)/{view}\\.parquet$', 1) AS run_id "
                f"FROM read_parquet({lit(root / 'runs' / '*' / f'{view}.parquet')}, "
                "filename = true, union_by_name = true)"
            )
        else:
            # no file: no rows, but a file's columns, with the run's beside them as below
            cols = ", ".join(f"NULL::{ty} AS {col}" for col, ty in PER_RUN[view].items())
            series = f"SELECT {cols}, NULL::VARCHAR AS run_id WHERE false"
        # the run's seed and axis values beside each row, as in flows and links (an axis named
        # like a series column is axis_NAME)
        have = {r[0] for r in con.execute(f"DESCRIBE {series}").fetchall()}
        cols = "".join(
            f', r."{c}"' if c not in have else f', r."{c}" AS "axis_{c}"'
            for c in ["seed", *axes]
            if c in run_cols
        )
        con.execute(
            f"CREATE VIEW {view} AS SELECT ts.*{cols} FROM ({series}) ts "
            "LEFT JOIN runs r ON ts.run_id = r.run_id"
        )


def query(root: Path | str, sql: str) -> polars.DataFrame:
    """Answer ``sql`` over the sweep in ``root`` (views: runs, flows, links, timeseries,
    ptcp_slots) as a polars DataFrame."""
    import polars as pl

    con = connect(root)
    try:
        rel = con.sql(sql)
        if rel is None:
            return pl.DataFrame()
        df = rel.pl()
        # an ENUM (a quantity axis, _numeric_axes) arrives as a Categorical, which polars
        # sorts by text: make it an Enum of the same order, so sorting in polars is numeric too
        enums = {
            name: dict(ty.children)["values"]
            for name, ty in zip(rel.columns, rel.types, strict=True)
            if ty.id == "enum"
        }
        if enums:
            df = df.with_columns(pl.col(n).cast(pl.Enum(v)) for n, v in enums.items())
        return df
    finally:
        con.close()


def runs(root: Path | str) -> polars.DataFrame:
    """One row per run of the sweep: id, seed, axis columns, status, metrics."""
    return query(root, "SELECT * FROM runs ORDER BY run_id")


def flows(root: Path | str) -> polars.DataFrame:
    """One row per flow per finished run."""
    return query(root, "SELECT * FROM flows ORDER BY run_id, flow")


def meta(root: Path | str) -> dict[str, Any]:
    """The sweep's ``sweep.json``."""
    root = Path(root)
    _check_dir(root)
    return read_meta(root / "sweep.json", StoreError)


def read_meta(path: Path, error: type[Exception]) -> dict[str, Any]:
    """``path`` (a ``sweep.json``) as :func:`tfcc.sweep.sweep_meta` wrote it, or ``error`` with
    one message: a file that is not JSON, or whose ``axes``/``seeds`` have another shape (another
    tool's file, or one edited by hand), was a traceback in ``tfcc report``/``query`` and in a
    resumed ``tfcc sweep``."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"{path}: not a tfcc sweep record ({e})") from None
    if not isinstance(doc, dict):
        raise error(f"{path}: not a tfcc sweep record (expected a JSON object)")
    axes = doc.get("axes", [])
    if not isinstance(axes, list) or not all(
        isinstance(a, dict)
        and isinstance(a.get("name"), str)
        and isinstance(a.get("cases"), list)
        and isinstance(a.get("column", ""), str)
        for a in axes
    ):
        raise error(f"{path}: not a tfcc sweep record (axes: expected a list of named axes)")
    seeds = doc.get("seeds", [])
    if not isinstance(seeds, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in seeds
    ):
        raise error(f"{path}: not a tfcc sweep record (seeds: expected a list of seeds)")
    doc.setdefault("axes", axes)
    doc.setdefault("seeds", seeds)
    return doc
