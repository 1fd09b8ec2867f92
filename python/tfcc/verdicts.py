"""003 Table 2.3 recomputed: the taxonomy's verdicts (O satisfactory, Δ acceptable, X
unacceptable) from the measured values of ``tfcc reproduce taxonomy``, beside the thesis' own.

The thesis gives its verdicts without the rule that turns a plot into a letter; the rules below
are this project's reading, chosen so that the thesis' own headline numbers land on the thesis'
letters (e.g. 0.8 of TCP at CV[T] = 1 is Δ, 0.6 is X; > 1.5 x TCP at low multiplexing is X):

- fairness (normalised throughput ``r``): O if ``|r − 1| ≤ 0.1``, Δ if ``|r − 1| ≤ 0.25``,
  else X; the TCP-compatibility letter in parentheses is O if ``r ≤ 1.1`` (not more than
  TCP), else X;
- aggressiveness and responsiveness (convergence time ``t`` against the fastest of the eight
  schemes in the same column, ``t_min``, at least 1 s): O if ``t ≤ 1.5·t_min``, Δ if
  ``t ≤ 3·t_min``, else X (a claim that never converged is X). The thesis' letters rank the
  schemes against each other ("TFRC, TFRCP and TEAR converge in ≈ 20 s, half the time of GAIMD
  and SIMD"); TCP itself, which halves per loss, converges faster than all of them after the
  fall (7.7 s in E2.3) and would make every scheme X. Where only a ratio to TCP was measured
  (``*-vs-tcp`` claims) it is used as is.
- a claim id ``ID`` is looked up as ``ID``, then ``ID-quick``, so a ``--quick`` run gives a table.

A cell whose run is not part of the reproduction reads "—". The result is a Markdown table for
``docs/reproductions/log/taxonomy.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCHEMES = ["gaimd", "iiad", "sqrt", "simd", "aiadh", "tfrcp", "tfrc", "tear"]
NAMES = {
    "gaimd": "GAIMD",
    "iiad": "IIAD",
    "sqrt": "SQRT",
    "simd": "SIMD",
    "aiadh": "AIAD/H",
    "tfrcp": "TFRCP",
    "tfrc": "TFRC",
    "tear": "TEAR",
}
COLUMNS = [
    "Fair: non-periodic",
    "Fair: low-mux, homogeneous RTT",
    "Fair: low-mux, heterogeneous RTT",
    "Aggr: two-state",
    "Aggr: bursty",
    "Resp: two-state",
    "Resp: bursty",
]

#: 003 Table 2.3 as printed (spec 003 §5.1), per scheme in COLUMNS order.
THESIS: dict[str, list[str]] = {
    "gaimd": ["Δ(O)", "X", "X", "Δ(O)", "Δ", "Δ(Δ)", "Δ"],
    "iiad": ["X(O)", "Δ", "X", "X(O)", "X", "X(X)", "X"],
    "sqrt": ["X(O)", "Δ", "X", "O(O)", "Δ", "O(O)", "O"],
    "simd": ["Δ(O)", "X", "X", "O(O)", "O", "Δ(Δ)", "X"],
    "aiadh": ["X(O)", "Δ", "X", "X(O)", "X", "X(X)", "X"],
    "tfrcp": ["X(X)", "Δ", "O", "Δ(O)", "X", "O(O)", "O"],
    "tfrc": ["Δ(O)", "Δ", "O", "Δ(O)", "Δ", "O(O)", "O"],
    "tear": ["X(O)", "Δ", "O", "X(O)", "X", "O(O)", "O"],
}


def fairness_verdict(r: float) -> str:
    """Equivalence letter and, in parentheses, the TCP-compatibility letter for a normalised
    throughput ``r``."""
    eq = "O" if abs(r - 1) <= 0.1 else "Δ" if abs(r - 1) <= 0.25 else "X"
    return f"{eq}({'O' if r <= 1.1 else 'X'})"


def speed_verdict(ratio: float) -> str:
    """A convergence time over TCP's: O within 1.5 times, Δ within 3 times, else X."""
    return "O" if ratio <= 1.5 else "Δ" if ratio <= 3.0 else "X"


def _measured(rows: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """Claim id → measured value (None when the claim's metric failed, e.g. never converged);
    a quick claim also answers for its full id when the full one was not run."""
    out: dict[str, float | None] = {}
    for r in rows:
        out[r["claim"]["id"]] = r.get("measured")
    for k, v in list(out.items()):
        if k.endswith("-quick"):
            out.setdefault(k.removesuffix("-quick"), v)
    return out


def _time_column(m: Mapping[str, float | None], pattern: str) -> list[str]:
    """Letters for one convergence-time column (``pattern`` formats a scheme into a claim id)."""
    times = {p: m[pattern.format(p)] for p in SCHEMES if pattern.format(p) in m}
    # Under 1 s means the flow was already at the new level when the change came (IIAD in
    # E2.3 without a warm-up, still descending from its start-up): nothing converged, no letter.
    known = [t for t in times.values() if t is not None and t >= 1.0]
    fastest = min(known) if known else None
    cells = []
    for p in SCHEMES:
        if p not in times or (times[p] is not None and times[p] < 1.0) or fastest is None:  # type: ignore[operator]
            cells.append("—")
        elif times[p] is None:
            cells.append("X")
        else:
            cells.append(speed_verdict(times[p] / fastest))  # type: ignore[operator]
    return cells


def verdicts(rows: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Each scheme's recomputed letters (COLUMNS order) from a results.json's rows."""
    m = _measured(rows)
    aggr2 = _time_column(m, "e23-{}-rise")
    resp2 = _time_column(m, "e23-{}-fall")
    resp_b = _time_column(m, "e24-{}-fall")
    out = {}
    for i, p in enumerate(SCHEMES):
        cells = []
        r = m.get(f"e21-{p}-cv1")
        cells.append("—" if r is None else fairness_verdict(r))
        r = m.get(f"e22-{p}-rtt0")
        cells.append("—" if r is None else fairness_verdict(r)[0])
        r = m.get(f"e22-{p}-rtt-spread")
        cells.append("—" if r is None else fairness_verdict(r)[0])
        cells.append(aggr2[i])
        ratio = m.get(f"e24-{p}-rise-vs-tcp")
        cells.append("—" if ratio is None else speed_verdict(ratio))
        cells.append(resp2[i])
        cells.append(resp_b[i])
        out[p] = cells
    return out


def to_markdown(rows: list[Mapping[str, Any]]) -> str:
    """Table 2.3 with each cell as "measured / thesis"; a match is plain, a mismatch bold."""
    got = verdicts(rows)
    lines = [
        "| scheme | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for p in SCHEMES:
        cells = []
        for mine, theirs in zip(got[p], THESIS[p], strict=True):
            same = mine == "—" or mine[0] == theirs[0]
            cell = f"{mine} / {theirs}"
            cells.append(cell if same else f"**{cell}**")
        lines.append(f"| {NAMES[p]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(results: Path) -> str:
    """The table from ``results.json`` written by ``tfcc reproduce taxonomy --out DIR``."""
    return to_markdown(json.loads(results.read_text()))


if __name__ == "__main__":  # pragma: no cover - a convenience for the docs
    import sys

    print(main(Path(sys.argv[1])), end="")
