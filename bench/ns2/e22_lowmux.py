"""E2.2 (thesis 003 Sec. 2.4.2) in ns-2.35: GAIMD's goodput over TCP's on seeds 1-10.

Runs `e22_lowmux.tcl` for each case and seed and prints the ratio of the mean GAIMD goodput to
the mean TCP goodput (the claims' `normalized_throughput`), which group holds a flow above
3 Mb/s (three times the 1 Mb/s fair share: "T" TCP, "S" the scheme, "-" none), the ratio
without such flows, and the timeouts. Usage: `python bench/ns2/e22_lowmux.py CASE[,CASE...]
[maxwin]`, cases `rtt0-new`, `spread-new` (the one-way reading of 003-e22-lowmux.toml),
`rtt0-old`, `spread-old` (the 50 ms read as the RTT, queue 150). Findings:
docs/reproductions/log/taxonomy.md, "E2.2: the escaped flow decides".
"""

import statistics
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("e22_lowmux.tcl")
# bottleneck delay (ms), queue limit, access delay low and high (ms)
CASES = {
    "rtt0-new": (40, 300, 5, 5),
    "spread-new": (5, 300, 4.3, 40.7),
    "rtt0-old": (20, 150, 2.5, 2.5),
    "spread-old": (1, 150, 2.9, 21.1),
}
ESCAPED_KBPS = 3000.0


def run(case: str, seed: int, maxwin: str) -> list[list[str]]:
    bd, q, lo, hi = CASES[case]
    args = [str(seed), str(bd), str(q), str(lo), str(hi), maxwin]
    out = subprocess.run(
        ["ns", str(SCRIPT), *args], capture_output=True, text=True, check=True
    ).stdout
    return [line.split() for line in out.strip().splitlines()]


def main() -> None:
    maxwin = sys.argv[2] if len(sys.argv) > 2 else "200"
    for case in sys.argv[1].split(","):
        ratios, without, escaped, timeouts = [], [], [], []
        for seed in range(1, 11):
            rows = run(case, seed, maxwin)
            tcp = [float(r[3]) for r in rows if r[1] == "0"]
            sch = [float(r[3]) for r in rows if r[1] == "1"]
            ratios.append(statistics.mean(sch) / statistics.mean(tcp))
            esc = "".join("T" if r[1] == "0" else "S" for r in rows if float(r[3]) > ESCAPED_KBPS)
            escaped.append(esc or "-")
            t2 = [x for x in tcp if x <= ESCAPED_KBPS]
            s2 = [x for x in sch if x <= ESCAPED_KBPS]
            without.append(statistics.mean(s2) / statistics.mean(t2))
            timeouts.append(
                (
                    sum(int(r[5]) for r in rows if r[1] == "0"),
                    sum(int(r[5]) for r in rows if r[1] == "1"),
                )
            )
        per = " ".join(f"{r:.2f}" for r in ratios)
        print(
            f"{case} maxwin {maxwin}: mean {statistics.mean(ratios):.3f}, "
            f"seeds 1-3 {statistics.mean(ratios[:3]):.3f} | {per}"
        )
        per = " ".join(f"{r:.2f}" for r in without)
        print(
            f"  escaped: {' '.join(escaped)}; without: mean {statistics.mean(without):.3f} | {per}"
        )
        print(f"  timeouts TCP/GAIMD: {timeouts}")


if __name__ == "__main__":
    main()
