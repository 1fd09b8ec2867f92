"""002 R7-R9 (Figs. 6.15-6.19, Table 6.5) in the simulator: PSNR and MOS of Vic's video over
TFWC, TFRC and no congestion control, per case, beside the thesis' numbers.

Usage: python scripts/r7_r9_video_quality.py [--seeds 1,2,3] [--reference CLIP.yuv] OUTDIR

Runs scenarios/002-r7-vic-psnr.toml for R7's cases (a) 5 Mb/s, (b) 2.5 Mb/s, (c) 5 Mb/s and
0.1 % loss, (d) 5 Mb/s and 1 % loss, each with TFWC, TFRC and no CC, and R8 (case (b) at a fixed
15 fps, q control only, TFWC and TFRC); scores every run with ``tfcc.video_quality`` (rendered
frames, 002's reading, and with freezes), writes OUTDIR/r7-r9.json and prints the Markdown
tables of docs/reproductions/log/tfwc.md's "R7-R9" section. Needs ffmpeg (``make ffmpeg``). The
reference is the synthetic ``testsrc2`` CIF clip unless --reference names another: absolute dB
are the clip's, not foreman's, so only the comparisons between protocols and cases carry over.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from tfcc import video_quality as vq
from tfcc.run import run

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "002-r7-vic-psnr.toml"

ADAPT = 'flows.0.source.adapt={ kind = "vic", q_exponent = 0.62%s }'
CASES = {
    "a": [],
    "b": ["topology.bottleneck.rate=2.5Mbps"],
    "c": ['topology.bottleneck.loss={ model = "bernoulli", p = 0.001 }'],
    "d": ['topology.bottleneck.loss={ model = "bernoulli", p = 0.01 }'],
}
PROTOCOLS = {
    "TFWC": [],
    "TFRC": ["flows.0.protocol=tfrc", 'flows.0.params={ preset = "rfc5348" }'],
    "no CC": [
        "flows.0.protocol=cbr",
        "flows.0.params={}",
        "flows.0.rate=100Mbps",
        ADAPT % ", frame_rate_control = false, quantizer_control = false",
    ],
}
R8 = [
    "topology.bottleneck.rate=2.5Mbps",
    "flows.0.source.fps=15",
    "flows.0.source.rate=1.24Mbps",
    ADAPT % ", frame_rate_control = false",
]

#: 002 Sec. 6.3 as spec 002 Sec. 4.2 reads it: mean PSNR dB (None: not stated).
THESIS = {
    ("a", "TFWC"): "≈40",
    ("a", "TFRC"): "≈40",
    ("a", "no CC"): "≈35 (half the throughput)",
    ("b", "TFWC"): "≈35, fluctuating",
    ("b", "TFRC"): "≈35, fluctuating",
    ("c", "TFWC"): "≈40",
    ("c", "TFRC"): "≈40",
    ("c", "no CC"): "similar, lower bit rate",
    ("d", "TFWC"): "≈32",
    ("d", "TFRC"): "≈32",
    ("d", "no CC"): "similar, lower bit rate",
    ("R8", "TFWC"): "≈40, stable",
    ("R8", "TFRC"): "≈40, stable",
}


def score(out: Path, clip: vq.CodedClip) -> dict:
    (r,) = vq.run_quality(out, clip)
    (f,) = vq.run_quality(out, clip, freezes=True)
    qs = [x["q"] for x in r.frames]
    return {
        "t": [x["t"] for x in r.frames],
        "psnr_series": [x["psnr_db"] for x in r.frames],
        "psnr": r.mean_psnr_db,
        "psnr_sd": statistics.pstdev(x["psnr_db"] for x in r.frames),
        "psnr_freezes": f.mean_psnr_db,
        "mos": r.mos,
        "mos_freezes": f.mos,
        "mbps": r.throughput_bps / 1e6,
        "fps": r.rendered_fps,
        "grabbed": r.grabbed / r.slots,
        "mean_q": statistics.fmean(qs),
    }


def figure(results: dict[str, list[dict]], path: Path) -> None:
    """Per-frame PSNR over time of the first seed, one panel per case (Figs. 6.15-6.18)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [*CASES, "R8"]
    fig, axes = plt.subplots(len(cases), 1, figsize=(9, 2.2 * len(cases)), sharex=True)
    for ax, case in zip(axes, cases, strict=True):
        for proto in PROTOCOLS:
            runs = results.get(f"{case}/{proto}")
            if not runs:
                continue
            r = runs[0]
            ax.plot(r["t"], r["psnr_series"], lw=0.6, label=f"{proto} ({r['mbps']:.2f} Mb/s)")
        title = {"R8": "R8: (b) at 15 fps, q control only"}.get(case, f"R7 ({case})")
        ax.set_title(title, fontsize=9, loc="left")
        ax.set_ylabel("PSNR dB")
        ax.legend(fontsize=7, loc="lower right")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s), rendered frames of seed 1")
    fig.tight_layout()
    fig.savefig(path, dpi=72)
    plt.close(fig)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--reference", type=Path, default=None)
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    ref = a.reference
    if ref is None:
        ref = vq.cache_dir() / "testsrc2-352x288-300.yuv"
        if not ref.exists():
            vq.synthetic_clip(ref)
    clip = vq.code_clip(ref)
    runs = [((c, p), CASES[c] + PROTOCOLS[p]) for c in CASES for p in PROTOCOLS]
    runs += [(("R8", p), R8 + PROTOCOLS[p][:2]) for p in ("TFWC", "TFRC")]
    results: dict[str, list[dict]] = {}
    for (case, proto), sets in runs:
        key = f"{case}/{proto}"
        for seed in seeds:
            out = a.outdir / "runs" / f"{case}-{proto.replace(' ', '')}-s{seed}"
            run(SCENARIO, out, seed=seed, overrides=sets, plots=False)
            results.setdefault(key, []).append(score(out, clip))
        print(key, "done", file=sys.stderr)
    (a.outdir / "r7-r9.json").write_text(json.dumps(results, indent=1))
    figure(results, a.outdir / "r7-r9-psnr.png")

    def mean(key: str, field: str) -> float:
        return statistics.fmean(r[field] for r in results[key])

    def mos(key: str, field: str) -> str:
        m = {k: statistics.fmean(r[field][k] for r in results[key]) for k in range(1, 6)}
        return " / ".join(f"{100 * m[k]:.0f}" for k in (5, 4, 3, 2, 1))

    print(f"Seeds {a.seeds}; means over the seeds.\n")
    print(
        "| case | protocol | thesis PSNR dB | PSNR dB rendered (SD over frames) | PSNR dB with "
        "freezes | Mb/s | rendered fps | mean q | MOS 5/4/3/2/1 % rendered | "
        "MOS 5/4/3/2/1 % freezes |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (case, proto), _ in runs:
        k = f"{case}/{proto}"
        print(
            f"| {case} | {proto} | {THESIS.get((case, proto), '—')} | {mean(k, 'psnr'):.2f} "
            f"({mean(k, 'psnr_sd'):.2f}) | "
            f"{mean(k, 'psnr_freezes'):.2f} | {mean(k, 'mbps'):.2f} | {mean(k, 'fps'):.1f} | "
            f"{mean(k, 'mean_q'):.1f} | {mos(k, 'mos')} | {mos(k, 'mos_freezes')} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
