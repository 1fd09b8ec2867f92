"""``tfcc sweep``: a scenario over the cartesian product of a parameter grid and seeds.

A sweep is the scenario file plus a grid, from ``--grid`` options or the file's ``[sweep]``
table (the simulator ignores that table)::

    [sweep]
    seeds = 3                                   # or a list: [1, 2, 5]
    set = ["duration=60s"]                      # overrides applied to every point
    [sweep.grid]
    "topology.bottleneck.rate" = ["1Mbps", "2Mbps"]          # one key, its values
    sources = { keys = ["flows.0.count", "flows.1.count"], values = [1, 2, 4] }
    protocol = { cases = { tfrc = { "flows.1.protocol" = "tfrc" },
                           "ttfwc(0.9)" = { "flows.1.protocol" = "ttfwc",
                                            "flows.1.params.tp" = 0.9 } } }

Each grid entry is an axis: a key and its values, several keys set to the same value, or named
cases that each set any keys. A point is one value per axis plus a seed; its id is a hash of
its overrides and the seed, so the same command names the same points and a re-run after a
crash (or with a grown grid) runs only what is missing.

The runs are independent processes: a local process pool on all cores by default, a local
Dask cluster with ``--workers N``, or a running Dask scheduler with ``--scheduler ADDRESS``.
Each run writes the normal ``tfcc run`` outputs into ``DIR/runs/<id>/`` (atomically, see
:mod:`tfcc.run`); the driver alone writes the results store (:mod:`tfcc.store`), so a
killed sweep leaves complete run directories and complete store parts, never half of one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Version of ``DIR/sweep.json``; bump when the meaning of a point id changes.
FORMAT = 1


class SweepError(ValueError):
    """A sweep that cannot start (bad grid, output directory of another sweep); the message
    names the option or key at fault."""


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: ``cases`` are ``(label, overrides)`` in the order given."""

    name: str
    cases: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def column(self) -> str:
        """The axis as a column name of the results store (``topology.bottleneck.rate`` →
        ``topology_bottleneck_rate``), so SQL needs no quoting."""
        return column_name(self.name)


@dataclass(frozen=True)
class Point:
    """One run of the sweep."""

    id: str
    seed: int
    #: Axis column name → the label of this point's case.
    params: Mapping[str, str]
    overrides: tuple[str, ...]


@dataclass
class Sweep:
    """A scenario, the grid and the seeds."""

    scenario: Path
    text: str
    axes: list[Axis]
    seeds: list[int]
    base: list[str] = field(default_factory=list)

    def fingerprint(self) -> str:
        """What a resumed sweep must share with the first one: the scenario as the simulator
        reads it and the overrides applied to every point. The file's comments and layout do
        not count, nor its ``[sweep]`` table (which the simulator ignores): a grid grown in the
        file, or more seeds, resume the sweep as they do from ``--grid`` and ``--seeds``. The
        values are hashed as the loader parses them, with table keys sorted, so ``"1Mbps"`` and
        ``"1000kbps"`` still count as a change (reading them alike is the simulator's call)."""
        from tfcc import _core

        doc = dict(_core.parse_toml(self.text.removeprefix("\ufeff")))
        doc.pop("sweep", None)
        h = hashlib.sha256()
        h.update(json.dumps(doc, sort_keys=True, default=str).encode())
        h.update(json.dumps(self.base).encode())
        return h.hexdigest()[:16]

    def text_fingerprint(self) -> str:
        """The fingerprint sweeps written before 2026-11-28 hold: the scenario's text byte for
        byte and the overrides. Such a sweep still resumes while its file is unchanged."""
        h = hashlib.sha256()
        h.update(self.text.encode())
        h.update(json.dumps(self.base).encode())
        return h.hexdigest()[:16]

    def points(self) -> list[Point]:
        out = []
        for combo in itertools.product(*(a.cases for a in self.axes)):
            overrides = tuple(o for _, ovs in combo for o in ovs)
            params = {a.column: label for a, (label, _) in zip(self.axes, combo, strict=True)}
            for seed in self.seeds:
                out.append(Point(point_id(overrides, seed), seed, params, overrides))
        return out


def column_name(name: str) -> str:
    col = re.sub(r"\W+", "_", name).strip("_")
    if not col or col[0].isdigit():
        col = f"p_{col}"
    return col


def point_id(overrides: Sequence[str], seed: int) -> str:
    """A stable name for a point: a hash of its overrides and the seed. The overrides are
    sorted by key first (axes set distinct keys, so their order does not change the run), so
    reordering the axes names the same points. A key set twice (a claim's `versus` set
    overriding its base set) counts with its last value, the one the simulator applies."""
    last: dict[str, Any] = {}
    for o in overrides:
        key, value = _canonical(o)
        last.pop(key, None)
        last[key] = value
    canon = sorted(([k, v] for k, v in last.items()), key=lambda kv: kv[0])
    h = hashlib.sha1(json.dumps(canon, default=str).encode()).hexdigest()[:10]
    return f"{h}-s{seed}"


def _canonical(override: str) -> list[Any]:
    """``[key, value]`` as the simulator reads ``KEY=VALUE`` (the value as TOML, else as plain
    text), so ``rate=1Mbps`` from the command line and ``rate="1Mbps"`` from a file are one
    point."""
    key, _, raw = override.partition("=")
    raw = raw.strip()
    from tfcc import _core

    try:
        value = _core.parse_toml(f"v = {raw}")["v"]
    except ValueError:
        value = raw
    return [key.strip(), value]


# --- the grid, from the command line or the [sweep] table ---------------------------------------


def parse_grid_option(text: str) -> Axis:
    """``KEY=V1,V2``, or ``NAME:KEY1+KEY2=V1,V2`` (an axis named NAME that sets every key to
    each value). Values are passed to the scenario like ``--set`` values (TOML, or plain text)."""
    head, sep, values = text.partition("=")
    if not sep or not head.strip() or not values.strip():
        raise SweepError(f"--grid {text}: expected KEY=V1,V2,... (or NAME:KEY1+KEY2=V1,V2,...)")
    name, _, keys_text = head.rpartition(":")
    keys = [k.strip() for k in keys_text.split("+")]
    if any(not k for k in keys):
        raise SweepError(f"--grid {text}: an empty key in {keys_text!r}")
    vals = [v.strip() for v in values.split(",")]
    if any(not v for v in vals):
        raise SweepError(f"--grid {text}: an empty value in {values!r}")
    if len(set(vals)) != len(vals):
        raise SweepError(f"--grid {text}: a value is listed twice")
    name = name.strip() or "+".join(keys)
    return Axis(name, tuple((v, tuple(f"{k}={v}" for k in keys)) for v in vals))


def toml_value(v: Any) -> str:
    """A TOML literal for an override value taken from a TOML file."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise SweepError(f"cannot use {v!r} as an override value")


def quantity_of(label: str) -> tuple[str, float] | None:
    """What an axis label means as a number: ``("number", x)`` for a plain number (in a scenario
    file a plain number is in SI base units), ``(kind, x)`` for a quantity with a unit in SI base
    units (``"5Mbps"`` → ``("rate", 5e6)``, ``"20ms"`` → ``("duration", 0.02)``, ``"1000B"`` →
    ``("size", 1000.0)``, read by the simulator's own parser), None for anything else (a
    protocol name, a named case). A label spelled as a TOML string (``"5Mbps"`` with its quotes,
    from ``--grid rate='"5Mbps"'``) is read without the quotes."""
    from tfcc import _core

    text = label.strip()
    if text[:1] in "\"'" and len(text) >= 2:
        try:
            inner = _core.parse_toml(f"v = {text}")["v"]
        except ValueError:
            inner = None
        if isinstance(inner, str):
            text = inner.strip()
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        return _core.parse_quantity(text)
    return ("number", x) if math.isfinite(x) else None


def numeric_order(labels: Sequence[str]) -> list[str] | None:
    """``labels`` sorted by the quantity each means, if every one is a quantity of one kind
    (plain numbers go with any kind: they are in the kind's SI base unit); None otherwise (the
    axis keeps the order it was given in). Equal quantities keep their given order. So
    ``["10Mbps", "5Mbps", "500kbps"]`` → ``["500kbps", "5Mbps", "10Mbps"]``, where sorting the
    text would put "10Mbps" first."""
    keys = [quantity_of(label) for label in labels]
    if not keys or any(k is None for k in keys):
        return None
    kinds = {k[0] for k in keys if k is not None} - {"number"}
    if len(kinds) > 1:
        return None
    order = sorted(range(len(labels)), key=lambda i: (keys[i] or ("", 0.0))[1])
    return [labels[i] for i in order]


def ordered_cases(labels: Sequence[str]) -> list[str]:
    """An axis' cases as a user sees them (sweep.json, the report's tables and heat maps):
    numeric order for quantities (:func:`numeric_order`), else the order given."""
    return numeric_order(labels) or list(labels)


def _label(v: Any) -> str:
    return v if isinstance(v, str) else toml_value(v)


def axes_from_table(grid: Mapping[str, Any], where: str) -> list[Axis]:
    """The axes of a ``[sweep.grid]`` table (see the module doc)."""
    if not isinstance(grid, dict):  # `grid = 3` was an AttributeError traceback
        raise SweepError(
            f"{where}: expected a table of axes, e.g. "
            '[sweep.grid] "topology.bottleneck.rate" = ["1Mbps", "2Mbps"]'
        )
    axes = []
    for name, spec in grid.items():
        key = f"{where}.{name}"
        if isinstance(spec, list):
            spec = {"keys": [name], "values": spec}
        if not isinstance(spec, dict):
            raise SweepError(f"{key}: expected a list of values or a table")
        unknown = set(spec) - {"keys", "values", "cases"}
        if unknown:
            raise SweepError(f"{key}: unknown key {sorted(unknown)[0]!r} (keys, values, cases)")
        if "cases" in spec:
            cases = spec["cases"]
            if set(spec) != {"cases"}:
                raise SweepError(f"{key}: give either cases or keys and values, not both")
            if not isinstance(cases, dict) or not cases:
                raise SweepError(f"{key}.cases: expected a table of label = {{ key = value }}")
            out = []
            for label, sets in cases.items():
                if not isinstance(sets, dict):
                    raise SweepError(f"{key}.cases.{label}: expected {{ key = value, ... }}")
                out.append((label, tuple(f"{k}={toml_value(v)}" for k, v in sets.items())))
            axes.append(Axis(name, tuple(out)))
            continue
        keys, values = spec.get("keys"), spec.get("values")
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise SweepError(f"{key}.keys: expected a list of key paths")
        if not isinstance(values, list) or not values:
            raise SweepError(f"{key}.values: expected a non-empty list")
        labels = [_label(v) for v in values]
        if len(set(labels)) != len(labels):
            raise SweepError(f"{key}.values: a value is listed twice")
        axes.append(
            Axis(
                name,
                tuple(
                    (lab, tuple(f"{k}={toml_value(v)}" for k in keys))
                    for lab, v in zip(labels, values, strict=True)
                ),
            )
        )
    return axes


#: The most points (grid cases × seeds) a sweep may have. Each point is a run directory and a
#: row of the store; `--seeds 1000000000` built a list of a billion seeds and the process was
#: killed for its memory before a message. A million runs of even 0.1 s is 28 hours on one core.
MAX_POINTS = 1_000_000

#: The largest seed a run takes, 2^63 - 1 (`tfcc_sim::scenario::MAX_SEED`): a scenario file's
#: seed is a TOML integer, and the store's `seed` column is Int64. With 2^64 - 1 here, seeds
#: counting up past 2^63 - 1 ran every point and then failed writing the store (pyarrow's
#: OverflowError traceback).
MAX_SEED = 2**63 - 1


def seed_range_error(got: object) -> str:
    """The words of every refused seed, as the Rust side's (`seed_range_error`)."""
    return (
        f"a seed is a whole number from 0 to {MAX_SEED} (a scenario file's seed is a TOML "
        f"integer), got {got}"
    )


def _seeds(value: Any, where: str, first: int) -> list[int]:
    if isinstance(value, bool):
        raise SweepError(f"{where}: expected a count or a list of seeds")
    if isinstance(value, int):
        if value < 1:
            raise SweepError(f"{where}: at least one seed")
        if value > MAX_POINTS:
            raise SweepError(f"{where}: at most {MAX_POINTS} seeds, got {value}")
        if first + value - 1 > MAX_SEED:
            raise SweepError(
                f"{where}: {value} seeds counting up from the scenario's seed {first} pass the "
                f"largest seed, {MAX_SEED}"
            )
        return list(range(first, first + value))
    if isinstance(value, list) and value and all(isinstance(s, int) for s in value):
        if len(set(value)) != len(value):
            raise SweepError(f"{where}: a seed is listed twice")
        for s in value:
            if isinstance(s, bool) or not 0 <= s <= MAX_SEED:
                raise SweepError(f"{where}: {seed_range_error(s)}")
        return list(value)
    raise SweepError(f"{where}: expected a count or a list of seeds")


#: One item of a ``--seeds`` list: a seed, or an inclusive range ``A-B`` of them.
_SEED_ITEM = re.compile(r"\s*(-?\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_seeds(text: str, where: str = "--seeds") -> int | list[int]:
    """A ``--seeds`` option as the value a ``[sweep]`` table's ``seeds`` holds, for
    :func:`_seeds` to check: ``N`` is a count (``seeds = N``), ``A-B`` the seeds ``A`` to ``B``
    and ``1,2,7`` (or ``1-3,7``) a list (``seeds = [1, 2, 7]``); one seed alone is ``7-7``. The
    one parser of ``tfcc sweep --seeds`` and ``tfcc reproduce --seeds``: both commands take the
    same words and refuse a seed in the same words (:func:`seed_range_error`)."""
    text = text.strip()
    if text.isdecimal():
        return int(text)
    seeds: list[int] = []
    for item in text.split(","):
        m = _SEED_ITEM.fullmatch(item)
        if m is None:
            raise SweepError(
                f"{where}: expected a count N, a range A-B or a list A,B,C of seeds (ranges "
                f"allowed in it), got {text!r}"
            )
        first = int(m[1])
        last = first if m[2] is None else int(m[2])
        for s in (first, last):
            if not 0 <= s <= MAX_SEED:
                raise SweepError(f"{where}: {seed_range_error(s)}")
        if last < first:
            raise SweepError(f"{where}: the range {item.strip()} runs down; write {last}-{first}")
        # checked before the list is built: `1-1000000000` was not to hold a billion seeds
        if len(seeds) + last - first + 1 > MAX_POINTS:
            raise SweepError(f"{where}: at most {MAX_POINTS} seeds, got more in {text!r}")
        seeds.extend(range(first, last + 1))
    return seeds


def seeds_option(text: str, first: int, where: str = "--seeds") -> list[int]:
    """The seeds a ``--seeds`` option names (:func:`parse_seeds`), a count counting up from
    ``first``; checked as a ``[sweep]`` table's ``seeds`` is."""
    return _seeds(parse_seeds(text, where), where, first)


def format_seeds(seeds: Sequence[int]) -> str:
    """A seed list as :func:`parse_seeds` reads it back: ``[1, 2, 3, 7]`` is ``1-3,7`` (each
    run of consecutive seeds a range; one seed alone ``7-7``, which a count would not be)."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(f"{seeds[i]}-{seeds[j]}" if j > i or len(seeds) == 1 else str(seeds[i]))
        i = j + 1
    return ",".join(parts)


def load(
    scenario: Path | str,
    grid: Sequence[str] = (),
    seeds: int | list[int] | None = None,
    overrides: Sequence[str] = (),
) -> Sweep:
    """The sweep of ``scenario``: its ``[sweep]`` table, with ``grid`` options added (an option
    naming an axis of the table replaces it) and ``seeds`` (a count, counting up from the
    scenario's own seed, or a list; :func:`parse_seeds` reads the option) replacing the
    table's. Raises :class:`SweepError`, or
    :class:`tfcc.ScenarioError` for a scenario that does not check."""
    from tfcc import _core

    scenario = Path(scenario)
    for what, value in (("grid", grid), ("overrides", overrides)):
        if isinstance(value, str):  # a string is a sequence: one axis per letter
            raise TypeError(f"{what}: a list of strings, not one string (write [{value!r}])")
    for o in overrides:
        # The [sweep] table is read from the file below; `--set sweep.seeds=5` reached only
        # the runs, whose simulator ignores it, and the sweep ran its file's one seed.
        if o.split("=", 1)[0].strip().split(".", 1)[0] == "sweep":
            raise SweepError(
                f"--set {o}: the [sweep] table is read from the file, not changed by --set "
                "(use --seeds N and --grid KEY=V1,V2 instead)"
            )
    text = _read_scenario(scenario)
    try:
        # a leading byte-order mark (Windows editors) is accepted, as the Rust loader does
        doc = _core.parse_toml(text.removeprefix("\ufeff"))
    except ValueError as e:
        raise SweepError(f"{scenario}: {e}") from None
    table = doc.get("sweep", {})
    where = f"{scenario}: sweep"
    if not isinstance(table, dict):
        raise SweepError(f"{where}: expected a table")
    unknown = set(table) - {"seeds", "set", "grid"}
    if unknown:
        raise SweepError(f"{where}.{sorted(unknown)[0]}: unknown key (seeds, set, grid)")
    base = table.get("set", [])
    if not isinstance(base, list) or not all(isinstance(s, str) for s in base):
        raise SweepError(f"{where}.set: expected a list of KEY=VALUE strings")
    base = [*base, *overrides]
    axes = axes_from_table(table.get("grid", {}), f"{where}.grid")
    given: set[str] = set()
    for opt in grid:
        axis = parse_grid_option(opt)
        if axis.name in given:  # the first would be dropped without a word
            raise SweepError(f"--grid {opt}: axis {axis.name} is given twice; give it once")
        given.add(axis.name)
        names = [a.name for a in axes]
        if axis.name in names:  # replaces the file's axis in its place
            axes[names.index(axis.name)] = axis
        else:
            axes.append(axis)
    keys: dict[str, str] = {}
    for a in axes:
        for k in {o.split("=", 1)[0].strip() for _, ovs in a.cases for o in ovs}:
            if k in keys:
                raise SweepError(f"{where}: axes {keys[k]} and {a.name} both set {k}")
            keys[k] = a.name
    # an override for every point of a key an axis sets never applies: the axis wins
    file_set = len(base) - len(overrides)
    for i, o in enumerate(base):
        k = o.split("=", 1)[0].strip()
        if k in keys:
            given = f"--set {o}" if i >= file_set else f"{where}.set {o!r}"
            raise SweepError(
                f"{given}: the grid axis {keys[k]} sets {k} at every point, so this never "
                "applies; drop one of them"
            )
    cols = [a.column for a in axes]
    dup = {c for c in cols if cols.count(c) > 1}
    if dup:
        raise SweepError(f"{where}: two axes share the column name {sorted(dup)[0]!r}")
    reserved = {"run_id", "seed", "status", "error"} & set(cols)
    if reserved:
        col = sorted(reserved)[0]
        hint = " (seeds: --seeds N, or seeds = [1, 2, 7] in [sweep])" if col == "seed" else ""
        raise SweepError(f"{where}: {col!r} is reserved; name the axis otherwise{hint}")
    info = _core.check_scenario(str(scenario), base)
    first = int(info["seed"])
    seed_list = (
        _seeds(seeds, "--seeds", first)
        if seeds is not None
        else _seeds(table.get("seeds", 1), f"{where}.seeds", first)
    )
    total = len(seed_list)
    for axis in axes:
        total *= len(axis.cases)
    if total > MAX_POINTS:
        shape = " × ".join([*(str(len(a.cases)) for a in axes), f"{len(seed_list)} seeds"])
        raise SweepError(f"{where}: {shape} is {total} points, more than {MAX_POINTS}")
    sweep = Sweep(scenario, text, axes, seed_list, base)
    # Check every case once (not every seed): a typo in the grid fails before anything runs.
    for axis in axes:
        for label, ovs in axis.cases:
            try:
                _core.check_scenario(str(scenario), [*base, *ovs])
            except _core.ScenarioError as e:
                raise SweepError(f"grid axis {axis.name} = {label}: {e}") from None
    return sweep


# --- one run, in a worker process --------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """What a worker needs: everything by value, so a remote worker needs no shared files."""

    point: Point
    scenario_name: str
    scenario_path: str
    scenario_text: str
    overrides: tuple[str, ...]
    #: Where to write the run's outputs; ``None``: return the series to the driver instead
    #: (workers on other machines).
    run_dir: str | None
    plots: bool


def _read_scenario(scenario: Path) -> str:
    """The scenario's text, or a SweepError that names the file (not a traceback), in the
    words of `tfcc run` and `tfcc check`: the Rust loader says why it cannot read it."""
    try:
        return scenario.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e
    from tfcc._core import ScenarioError, check_scenario

    try:
        check_scenario(str(scenario))
    except ScenarioError as e:
        raise SweepError(str(e)) from None
    # Readable by the time the loader looked (the file changed in between): Python's reason.
    raise SweepError(f"{scenario}: cannot read the scenario: {reason}") from None


def _scenario_file(task: Task) -> tuple[str, str | None]:
    """The scenario as a path on this machine: the original if it still holds the same text,
    else a private copy (a remote worker, or a file edited since the sweep began)."""
    try:
        if Path(task.scenario_path).read_text() == task.scenario_text:
            return task.scenario_path, None
    except OSError:
        pass
    tmpdir = tempfile.mkdtemp(prefix="tfcc-scenario.")
    path = os.path.join(tmpdir, task.scenario_name)
    with open(path, "w") as f:
        f.write(task.scenario_text)
    return path, tmpdir


def execute(task: Task) -> dict[str, Any]:
    """Run one point; never raises. Returns ``{"id", "ok", "summary" | "error", "wall"}`` (and
    the series when the driver writes the outputs)."""
    import shutil

    started = time.perf_counter()
    path, tmpdir = _scenario_file(task)
    try:
        if task.run_dir is not None:
            from tfcc.run import run as run_to

            summary = run_to(
                Path(path),
                Path(task.run_dir),
                seed=task.point.seed,
                overrides=list(task.overrides),
                plots=task.plots,
            )
            res: dict[str, Any] = {"summary": summary}
        else:
            from tfcc import _core

            res = dict(_core.run_scenario(path, list(task.overrides), task.point.seed, None))
        res.update(id=task.point.id, ok=True)
    except Exception as e:  # a failing point is recorded and must not stop the others
        res = {
            "id": task.point.id,
            "ok": False,
            "error": f"{type(e).__name__}: {e}",
            "traceback": traceback.format_exc(),
        }
    finally:
        if tmpdir is not None:
            shutil.rmtree(tmpdir, ignore_errors=True)
    res["wall"] = time.perf_counter() - started
    return res


def _die_with_parent(driver: int) -> None:
    """Pool worker initialiser: die when the driver process does, so a SIGKILLed sweep leaves
    no orphan still writing into the output directory while the resumed sweep runs. (The
    driver is not the worker's parent: forkserver workers are the fork server's children, and
    each holds the fork server's liveness pipe open, so neither notices the driver's death.) A
    daemon thread waits on a pidfd of the driver (Linux ≥ 5.3), else polls it. Ctrl-C is the
    driver's to handle (it stops the pool), so workers ignore SIGINT; SIGTERM keeps its default
    (the driver's SIGTERM handler raises KeyboardInterrupt, which must not reach a worker)."""
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        try:
            import select

            fd = os.pidfd_open(driver)
            select.select([fd], [], [])
        except (AttributeError, OSError):
            while True:
                try:
                    os.kill(driver, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="tfcc-driver-watch", daemon=True).start()


# --- executors -------------------------------------------------------------------------------


class Backend:
    """Runs tasks and yields results as they finish."""

    #: Whether workers can write into the output directory.
    shares_files = True

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class LocalPool(Backend):
    """A process pool on this machine (the default): forkserver workers preloaded with tfcc,
    so each starts in milliseconds and none inherits the driver's threads."""

    def __init__(self, workers: int | None = None) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["tfcc.run", "tfcc.sweep"])
        self.workers = workers or os.cpu_count() or 1
        self.pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=ctx,
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )
        self.futures: list[Any] = []

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        from concurrent.futures import as_completed

        futures = {self.pool.submit(execute, t): t for t in tasks}
        self.futures = list(futures)
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as e:  # the worker process died (killed, out of memory)
                yield _lost(futures[fut], e)

    def close(self) -> None:
        # Cancel the points not yet handed to a worker here rather than through
        # `shutdown(cancel_futures=True)` alone: the executor's manager thread cancels them only
        # if the executor object is still alive when it wakes, and after a Ctrl-C it is often
        # collected first, so every queued point ran before the process could exit (seen as
        # all 24 points of a test sweep finishing after the signal).
        #
        # When nothing is left running (a finished sweep), wait for the executor's manager thread:
        # left to finish on its own it closes its wake-up pipe while the interpreter's exit hook
        # (CPython 3.11's `concurrent.futures.process._python_exit`) may be writing to it, which
        # printed "Exception ignored ... OSError: [Errno 9] Bad file descriptor" after 3 of 18
        # finished flagship sweeps. A worker still running (Ctrl-C) is not waited for.
        for fut in self.futures:
            fut.cancel()
        idle = all(fut.done() for fut in self.futures)
        self.pool.shutdown(wait=idle, cancel_futures=True)


class DaskBackend(Backend):
    """A Dask distributed cluster: a local one of ``workers`` processes, or the scheduler at
    ``address``. Workers of a remote scheduler may not see this machine's files, so they
    return the series and the driver writes the run directories."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        from distributed import Client, LocalCluster

        self.cluster = None
        if address is None:
            self.cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self.client = Client(self.cluster)
        else:
            self.client = Client(address)
            self.shares_files = False

    def run(self, tasks: Sequence[Task]) -> Iterator[dict[str, Any]]:
        from distributed import as_completed

        futures = {
            self.client.submit(execute, t, key=f"tfcc-sweep-{t.point.id}", pure=False): t
            for t in tasks
        }
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as e:  # the worker died (KilledWorker) or lost the task
                yield _lost(futures[fut], e)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _lost(task: Task, e: BaseException) -> dict[str, Any]:
    return {
        "id": task.point.id,
        "ok": False,
        "error": f"the worker running this point failed: {type(e).__name__}: {e}",
        "traceback": "",
        "wall": math.nan,
    }


# --- the driver ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What a sweep did: points in the grid, already done before, run now, failed now."""

    total: int
    skipped: int
    ran: int
    failed: int
    wall_seconds: float
    errors: list[tuple[str, str]] = field(default_factory=list)


Progress = Callable[[int, int, int], object]


def run(
    sweep: Sweep,
    out: Path | str,
    *,
    backend: Backend | None = None,
    plots: bool = True,
    retry_failed: bool = False,
    on_start: Callable[[int, int], object] | None = None,
    progress: Progress | None = None,
    points: Sequence[Point] | None = None,
) -> Outcome:
    """Run the points of ``sweep`` (or the given ``points`` of its scenario) that ``out`` does
    not hold yet. ``on_start(todo, skipped)`` is called once the plan is known;
    ``progress(done, failed, todo)`` after each run."""
    from tfcc.store import Store

    started = time.perf_counter()
    store = Store.create(Path(out), sweep_meta(sweep), also=(sweep.text_fingerprint(),))
    try:
        points = list(points) if points is not None else sweep.points()
        done = store.reconcile({p.id: p for p in points})
        failed_before = store.failed_ids()
        todo = [
            p for p in points if p.id not in done and (retry_failed or p.id not in failed_before)
        ]
        skipped = len(points) - len(todo)
        if on_start is not None:
            on_start(len(todo), skipped)
        outcome = Outcome(len(points), skipped, 0, 0, 0.0)
        if todo:
            own = backend is None
            backend = backend or LocalPool()
            try:
                _drive(sweep, store, todo, backend, plots, outcome, progress)
            finally:
                if own:
                    backend.close()
    finally:
        # also on Ctrl-C: what finished is stored now rather than rebuilt on the next run
        store.flush()
        store.close()
    outcome.wall_seconds = time.perf_counter() - started
    return outcome


def sweep_meta(sweep: Sweep) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "scenario": str(sweep.scenario),
        "fingerprint": sweep.fingerprint(),
        "set": sweep.base,
        "axes": [
            {"name": a.name, "column": a.column, "cases": ordered_cases([c[0] for c in a.cases])}
            for a in sweep.axes
        ],
        "seeds": sweep.seeds,
    }


def _drive(
    sweep: Sweep,
    store: Any,
    todo: list[Point],
    backend: Backend,
    plots: bool,
    outcome: Outcome,
    progress: Progress | None,
) -> None:
    from tfcc.run import write_run

    by_id = {p.id: p for p in todo}
    tasks = [
        Task(
            point=p,
            scenario_name=sweep.scenario.name,
            scenario_path=str(sweep.scenario.resolve()),
            scenario_text=sweep.text,
            overrides=(*sweep.base, *p.overrides),
            # absolute: pool and cluster workers may not share the driver's working directory
            run_dir=str(store.run_dir(p.id).resolve()) if backend.shares_files else None,
            plots=plots,
        )
        for p in todo
    ]
    for p in todo:
        store.forget_failure(p.id)
    for res in backend.run(tasks):
        point = by_id[res["id"]]
        if res["ok"] and "flow_series" in res:
            try:
                write_run(
                    store.run_dir(point.id),
                    res["summary"],
                    res["flow_series"],
                    res["link_series"],
                    plots=plots,
                    trace=res.get("trace"),
                    pcaps=res.get("pcaps"),
                    frame_series=res.get("frame_series"),
                    ptcp_slots=res.get("ptcp_slots"),
                )
            except Exception as e:
                res = {**res, "ok": False, "error": f"writing the outputs: {e}", "traceback": ""}
        if res["ok"]:
            store.add(point, res["summary"], res.get("wall"))
            outcome.ran += 1
        else:
            store.add_failure(point, res["error"], res.get("traceback", ""))
            outcome.failed += 1
            outcome.errors.append((point.id, res["error"]))
        if progress is not None:
            progress(outcome.ran + outcome.failed, outcome.failed, len(todo))


# --- reproductions through the same machinery ----------------------------------------------


#: The file in each of ``prerun_claims``' sweep directories that keeps, per point id, the wall
#: time its run took when it was made (:class:`ClaimRuns`).
RUN_WALL = "run-wall.json"


@dataclass
class ClaimRuns:
    """The runs :func:`prerun_claims` made or found for a reproduction, and the runner that
    reads them back (call it as :func:`tfcc.reproduce.run`'s ``runner``).

    ``reused`` of the ``total`` runs were found in the runs directory from an earlier command and
    not run now. ``runs_wall_s`` is the wall time the ``total`` runs took when they were made:
    each call of :func:`run` that made some of them charges each point it ran an equal share
    of its wall time (the pool runs them side by side, so a share is not one run's duration;
    the shares of one command's points add up to the time it spent running them), kept in each
    sweep directory's ``run-wall.json`` and read back when the runs are reused. ``None`` when a
    run's share is unknown (made by an interrupted command, which records none, or by a tfcc
    older than this record)."""

    dirs: dict[Path, Path]
    total: int
    reused: int
    runs_wall_s: float | None

    def __call__(self, scenario: Path, overrides: list[str], seed: int) -> Any:
        from tfcc.run import read_run_result

        d = self.dirs[Path(scenario)]
        pid = point_id(overrides, seed)
        run_dir = d / "runs" / pid
        if not (run_dir / "summary.json").exists():
            err = d / "failed" / f"{pid}.json"
            reason = json.loads(err.read_text())["error"] if err.exists() else "no result"
            raise ValueError(f"seed {seed}: the run failed: {reason}")
        return read_run_result(run_dir)


def _read_run_wall(d: Path) -> dict[str, float]:
    try:
        data = json.loads((d / RUN_WALL).read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, int | float)}


def prerun_claims(
    claims: Sequence[Any],
    out: Path,
    *,
    backend: Backend | None = None,
    on_start: Callable[[int, int], object] | None = None,
    progress: Progress | None = None,
) -> ClaimRuns:
    """Run every (scenario, ``set``, seed) the claims of a reproduction need, in parallel and
    resumably, one sweep directory per scenario under ``out`` (named by the scenario's stem and
    fingerprint, so an edited scenario gets fresh runs); returns a runner for
    :func:`tfcc.reproduce.run` that reads each run back as a :class:`tfcc.metrics.RunResult`,
    and says how many runs were reused and how long they all took when made
    (:class:`ClaimRuns`). A point that failed raises ``ValueError`` with its error, which the
    claim reports."""
    by_scenario: dict[Path, dict[str, Point]] = {}
    for c in claims:
        if c.scenario is None:
            continue  # a trace claim: its metric runs no simulation
        pts = by_scenario.setdefault(Path(c.scenario), {})
        for overrides, seed in c.runs():
            pid = point_id(overrides, seed)
            pts[pid] = Point(pid, seed, {}, tuple(overrides))
    plans = []
    for scenario, pts in by_scenario.items():
        text = _read_scenario(scenario)
        sweep = Sweep(scenario, text, [], sorted({p.seed for p in pts.values()}))
        d = out / f"{scenario.stem}-{sweep.fingerprint()}"
        before = out / f"{scenario.stem}-{sweep.text_fingerprint()}"
        if not d.exists() and before.is_dir():
            # runs kept before the fingerprint ignored comments: the same runs, renamed to
            # the name they have now
            try:
                before.rename(d)
            except OSError:
                d = before
        plans.append((sweep, d, list(pts.values())))
    todo = total = 0
    from tfcc.store import Store, _write_json

    done_before: dict[Path, set[str]] = {}
    for _, d, pts in plans:
        if (d / "sweep.json").exists():
            st = Store(d)
            done = st.stored_ids() | {
                p.id for p in pts if (d / "runs" / p.id / "summary.json").exists()
            }
        else:
            done = set()
        done_before[d] = done
        todo += sum(p.id not in done for p in pts)
        total += len(pts)
    if on_start is not None:
        on_start(todo, total - todo)
    own = backend is None
    backend = backend or (LocalPool() if todo else None)
    finished = failed = 0

    def step(done: int, nfailed: int, _todo: int) -> None:
        if progress is not None:
            progress(finished + done, failed + nfailed, todo)

    try:
        for sweep, d, pts in plans:
            o = run(
                sweep, d, backend=backend, plots=False, retry_failed=True, progress=step, points=pts
            )
            finished += o.ran + o.failed
            failed += o.failed
            if o.ran + o.failed:
                share = o.wall_seconds / (o.ran + o.failed)
                made = {
                    p.id: share
                    for p in pts
                    if p.id not in done_before[d] and (d / "runs" / p.id / "summary.json").exists()
                }
                _write_json(d / RUN_WALL, {**_read_run_wall(d), **made})
    finally:
        if own and backend is not None:
            backend.close()
    walls: list[float | None] = []
    for _, d, pts in plans:
        recorded = _read_run_wall(d)
        walls.extend(recorded.get(p.id) for p in pts)
    runs_wall = None if any(w is None for w in walls) else sum(w for w in walls if w is not None)
    return ClaimRuns(
        dirs={sweep.scenario: d for sweep, d, _ in plans},
        total=total,
        reused=total - todo,
        runs_wall_s=runs_wall,
    )
