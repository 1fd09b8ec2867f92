"""Mutated scenario files get one error line or a sound run, never a panic or half an output.

The committed scenarios are the inputs a user starts from and edits. Each example takes one of
them, shortened to 3 simulated seconds (no measurement start, events or flow schedules, which
would outlast it), and changes one or two of its values: to a value of the wrong kind, out of
range, at the edge of a type (0, -1, 2^63, NaN, infinity, ""), a duration or rate scaled by
10^-3 ... 10^3, or deletes the key. The native runner must then either refuse it with exit 2
and one line, `error: FILE: KEY: why`, writing nothing into the output directory, or run it and
write a summary whose numbers are finite and whose links are used at most fully. A panic (exit
101), a traceback, a multi-line message or a half-written directory fails the test. Derandomised,
so a run is the same every time; an ad-hoc run of 1,500 such mutations on 2026-11-28 found no
failure, so this is a guard against regressions, at a few seconds' cost.
"""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfcc import _core
from tfcc.sweep import toml_value

ROOT = Path(__file__).resolve().parents[1]
NATIVE = ROOT / "python" / "tfcc" / "_bin" / "tfcc-run"

# Values of every kind a hand edit or a script can leave: wrong types, edges of the integer
# types, non-finite floats, empty and nonsense strings, quantities with and without units.
ODD: list[Any] = [
    0, -1, 1, 2**63 - 1, -(2**63), 255, 65536, 2**32, 0.0, 0.5, -1e-9, 1e-12, 1e308,
    math.nan, math.inf, -math.inf, True, "", "x", "NaN", "1.5", "0s", "-1s", "1ns", "1e-30s",
    "1000000h", "0bps", "1e400Mbps", "0.0000001bps", "99999999Tbps", "0B", "1B", "100%",
    [], [0], [-1, 2], ["0s", "0s"], ["5s", "1s"], {}, {"a": 1},
]  # fmt: skip


def is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def to_toml(doc: dict[str, Any]) -> str:
    """The document back as TOML: top-level keys, then `[table]`s and `[[arrays]]` of one level,
    deeper tables inline (the scenarios' own shape)."""
    lines = [
        f"{json.dumps(k)} = {toml_value(v)}"
        for k, v in doc.items()
        if not isinstance(v, dict) and not is_table_array(v)
    ]
    for k, v in doc.items():
        if isinstance(v, dict):
            tables, header = [v], f"[{json.dumps(k)}]"
        elif is_table_array(v):
            tables, header = v, f"[[{json.dumps(k)}]]"
        else:
            continue
        for table in tables:
            lines.append(header)
            lines += [f"{json.dumps(kk)} = {toml_value(vv)}" for kk, vv in table.items()]
    return "\n".join(lines) + "\n"


def leaves(v: Any, path: tuple = ()) -> list[tuple]:
    """Every key path in the document, tables and lists included (so a mutation can replace or
    delete a whole table as well as a value)."""
    out = [path] if path else []
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        out += leaves(x, (*path, k))
    return out


def run(path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NATIVE), str(path), "--out", str(out), "--no-plots", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def bases(tmp: Path) -> list[tuple[str, dict[str, Any]]]:
    """The committed scenarios (not sweeps), shortened, that run as they are: mutating one
    that is refused anyway would mostly test the first refusal."""
    kept = []
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        doc = _core.parse_toml(path.read_text(encoding="utf-8"))
        if "sweep" in doc or "grid" in doc:
            continue
        doc["duration"] = "3s"
        doc.pop("measure_from", None)
        doc.pop("events", None)
        for flow in doc.get("flows", []):
            for key in ("start", "stop", "pauses", "schedule"):
                flow.pop(key, None)
        f = tmp / f"base-{path.stem}.toml"
        f.write_text(to_toml(doc), encoding="utf-8")
        if run(f, tmp / "base-out").returncode == 0:
            kept.append((path.name, doc))
    return kept


def scaled(v: Any, factor: float) -> Any:
    """A number or a quantity ("20ms", "1.5Mbps") scaled by `factor`, else `v`."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return type(v)(v * factor) if v else type(v)(factor)
    if isinstance(v, str) and (m := re.fullmatch(r"([0-9.]+)([a-zA-Zµ%]*)", v)):
        return f"{float(m.group(1)) * factor:g}{m.group(2)}"
    return v


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any]]]:
    if not NATIVE.exists():
        pytest.fail(f"{NATIVE} missing: run `make install` first")
    kept = bases(tmp_path_factory.mktemp("bases"))
    # Most committed scenarios run shortened; if few did, the mutations would explore little.
    assert len(kept) >= 20, [name for name, _ in kept]
    return kept


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_mutated_scenario_is_refused_in_one_line_or_runs_soundly(
    scenarios: list[tuple[str, dict[str, Any]]], tmp_path: Path, data: st.DataObject
) -> None:
    name, base = data.draw(st.sampled_from(scenarios), label="scenario")
    doc = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 2), label="changes")):
        paths = leaves(doc)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="key")
        *parent_path, key = path
        parent = doc
        for k in parent_path:
            parent = parent[k]
        how = data.draw(st.sampled_from(["odd", "scale", "delete"]), label="how")
        if how == "delete":
            del parent[key]
        elif how == "scale":
            parent[key] = scaled(parent[key], data.draw(st.sampled_from([0, 1e-3, 0.5, 3, 1e3])))
        else:
            parent[key] = copy.deepcopy(data.draw(st.sampled_from(ODD), label="value"))
    # A directory per example: `tmp_path` is the test function's, shared by every example.
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    f = work / f"mutated-{name}"
    text = to_toml(doc)
    f.write_text(text, encoding="utf-8")
    out = work / "out"
    r = run(f, out)
    err = r.stderr.strip()
    if r.returncode == 0:
        summary = json.loads((out / "summary.json").read_text(), parse_constant=float)

        for where in leaves(summary):
            v = summary
            for k in where:
                v = v[k]
            assert not isinstance(v, float) or math.isfinite(v), f"{where} = {v} in\n{text}"
        for link in summary["links"]:
            assert link["utilization"] <= 1.0 + 1e-9, f"{link} in\n{text}"
        return
    assert r.returncode == 2, f"exit {r.returncode}: {err}\n{text}"
    assert err.startswith("error: ") and "\n" not in err, f"{err!r}\n{text}"
    assert "panicked" not in err and "Traceback" not in err, err
    assert not out.exists() or not any(out.iterdir()), f"{list(out.iterdir())} after: {err}"
