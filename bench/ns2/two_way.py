"""tfcc against ns-2.35 on two-way dumbbells: forward flows plus reverse-path TCP (002 Secs.
4.2 and 4.4), whose data shares the bottleneck's reverse direction with the forward ACKs.

Both simulators run the same set-up: 20 ms bottleneck, 1 ms access links at 100 Mb/s, 1000-byte
segments, TCP-SACK (ns-2 `Agent/TCP/Sack1`), TFRC with ns-2's defaults (tfcc's ns2 preset), the
starts spread evenly over the first second (ns-2's `start_mode=even`, flow i of n at i/n s, the
reverse flows last), 100 s measured from 20 s. ns-2 counts wire bytes (1040 per TCP segment,
1032 per TFRC packet), tfcc goodput, so ns-2's Mb/s are about 4 % higher for the same run.

    .venv/bin/python bench/ns2/two_way.py     # prints a Markdown table (about a minute)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tfcc.ns2 import run_ns2

DURATION, MEASURE_FROM, DELAY = 100.0, 20.0, 0.02

#: name, bottleneck bit/s, forward limit, reverse limit, TCP, TFRC, reverse TCP
CASES = [
    ("2 Mb/s, 20 / 50 pkts, 2 TCP", 2e6, 20, 50, 2, 0, 0),
    ("2 Mb/s, 20 / 50 pkts, 2 TCP + 2 reverse", 2e6, 20, 50, 2, 0, 2),
    ("5 Mb/s, 28 / 50 pkts, 5 TCP + 5 reverse", 5e6, 28, 50, 5, 0, 5),
    ("5 Mb/s, 300 / 50 pkts, 8 TCP + 8 reverse", 5e6, 300, 50, 8, 0, 8),
    ("1 Mb/s, 15 / 50 pkts, 2 TCP + 2 TFRC + 2 reverse", 1e6, 15, 50, 2, 2, 2),
    ("1 Mb/s, 15 / 15 pkts, 2 TCP + 2 TFRC + 2 reverse", 1e6, 15, 15, 2, 2, 2),
]


def scenario(rate: float, limit: int, rlimit: int, tcp: int, tfrc: int, rev: int) -> str:
    """The tfcc scenario of one case, starts as ns-2's `even` mode places them."""
    n = tcp + tfrc + rev
    groups, k = [], 0
    for proto, count, extra in (
        ("tcp-sack", tcp, ""),
        ("tfrc", tfrc, 'params = { preset = "ns2" }\n'),
        ("tcp-sack", rev, 'direction = "reverse"\n'),
    ):
        if count:
            lo, hi = k / n, (k + count - 1) / n
            groups.append(
                f'[[flows]]\nprotocol = "{proto}"\ncount = {count}\n'
                f'start = ["{lo}s", "{hi}s"]\n{extra}'
            )
            k += count
    head = f"""duration = "{DURATION}s"
measure_from = "{MEASURE_FROM}s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = {rate}, delay = {DELAY}, limit = {limit} }}
access = {{ rate = "100Mbps", delay = "1ms", limit = 10000 }}
reverse_queue = {{ limit = {rlimit} }}
"""
    return head + "\n".join(groups)


def run_tfcc(text: str) -> dict[str, Any]:
    tfcc = Path(sys.executable).with_name("tfcc")
    with tempfile.TemporaryDirectory(prefix="tfcc-two-way-") as d:
        path = Path(d) / "s.toml"
        path.write_text(text)
        out = Path(d) / "out"
        subprocess.run(
            [str(tfcc), "run", str(path), "--out", str(out), "--no-plots", "-q"],
            check=True,
            capture_output=True,
        )
        return json.loads((out / "summary.json").read_text())


def row(case: tuple) -> str:
    name, rate, limit, rlimit, tcp, tfrc, rev = case
    ns = run_ns2(
        {
            "tcp": tcp,
            "tfrc": tfrc,
            "reverse_tcp": rev,
            "bottleneck_rate": rate,
            "bottleneck_delay": DELAY,
            "limit": limit,
            "reverse_limit": rlimit,
            "duration": DURATION,
            "measure_from": MEASURE_FROM,
            "start_mode": "even",
            "start_max": 1.0,
        }
    )
    t = run_tfcc(scenario(rate, limit, rlimit, tcp, tfrc, rev))
    links = {x["name"]: x for x in t["links"]}
    fwd, back = links["bottleneck"], links["bottleneck-rev"]
    nr = ns["bottleneck_reverse"]

    def ns_mbps(kind: str) -> float:
        return sum(f["throughput_bps"] for f in ns["flows"] if f["kind"] == kind) / 1e6

    def t_mbps(proto: str, direction: str) -> float:
        return (
            sum(
                f["throughput_bps"]
                for f in t["flows"]
                if f["protocol"] == proto and f["direction"] == direction
            )
            / 1e6
        )

    theta = ns["derived"]["theta"]
    cells = [
        name,
        f"{ns['bottleneck']['utilization']:.3f} / {fwd['utilization']:.3f}",
        f"{nr['utilization']:.3f} / {back['utilization']:.3f}",
        f"{nr['mean_queue_pkts']:.1f} / {back['mean_queue_pkts']:.1f}",
        f"{ns['bottleneck']['drops_pkts']} / {fwd['drops']}",
        f"{nr['drops_pkts']} / {back['drops']}",
        f"{ns_mbps('tcp'):.3f} / {t_mbps('tcp-sack', 'forward'):.3f}",
        f"{ns_mbps('tcp-reverse'):.3f} / {t_mbps('tcp-sack', 'reverse'):.3f}" if rev else "—",
        f"{theta:.3f} / {t['metrics']['fairness_theta']:.3f}" if theta is not None else "—",
    ]
    return "| " + " | ".join(cells) + " |"


def main() -> int:
    print(
        "| case | fwd util. ns-2 / tfcc | rev. util. | rev. queue, mean pkts | fwd drops "
        "| rev. drops | TCP fwd Mb/s | reverse TCP Mb/s | θ |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for case in CASES:
        print(row(case), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
