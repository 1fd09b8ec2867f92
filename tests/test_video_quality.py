"""``tfcc video-quality``: the reference clip coded with H.261 per q (ffmpeg), PSNR per rendered
or frozen frame slot of a run's ``frames.parquet``, Table 6.3's MOS (002 Sec. 6.3, R7-R9).
Skipped without ffmpeg (``make ffmpeg`` installs it)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tfcc import video_quality as vq
from tfcc.metrics import mos_from_psnr, psnr, read_yuv420_luma
from tfcc.run import run

pytestmark = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="ffmpeg is not installed (make ffmpeg)",
)

ROOT = Path(__file__).resolve().parent.parent
QCIF = (176, 144)  # H.261's small picture: a quick clip
FRAMES = 8


@pytest.fixture(scope="module")
def coded(tmp_path_factory: pytest.TempPathFactory) -> vq.CodedClip:
    d = tmp_path_factory.mktemp("clip")
    clip = d / "clip.yuv"
    # synthetic_clip makes CIF; a QCIF one the same way, through the module's ffmpeg runner.
    vq._run(
        [
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            f"testsrc2=size={QCIF[0]}x{QCIF[1]}:rate=30",
            "-frames:v",
            str(FRAMES),
            "-pix_fmt",
            "yuv420p",
            "-f",
            "rawvideo",
            str(clip),
        ]
    )
    # Laid out as cache_dir() under TFCC_CACHE=d, so the CLI tests find it coded.
    return vq.code_clip(clip, *QCIF, cache=d / "video")


def _gquants(stream: Path) -> set[int]:
    """GQUANT of every GOB header of an H.261 stream (Rec. H.261 Sec. 4.2.2: GBSC, 16 bits
    0000 0000 0000 0001, then GN, 4 bits, non-zero, then GQUANT, 5 bits)."""
    bits = "".join(f"{b:08b}" for b in stream.read_bytes())
    found, i = set(), 0
    while (i := bits.find("0000000000000001", i)) >= 0:
        if int(bits[i + 16 : i + 20], 2) != 0:
            found.add(int(bits[i + 20 : i + 25], 2))
        i += 16
    return found


def test_each_encode_has_gquant_equal_to_q(coded: vq.CodedClip) -> None:
    for q in (1, 2, 10, 31):
        assert _gquants(coded.stream(q)) == {q}


def test_coded_bytes_fall_and_psnr_falls_as_q_rises(coded: vq.CodedClip) -> None:
    assert coded.bytes.shape == coded.psnr.shape == (FRAMES, 31)
    mean_bytes = coded.bytes.mean(axis=0)
    mean_db = coded.psnr.mean(axis=0)
    # From q = 2 up (q = 1 is H.261's special case: levels past ±127 clip, see docs).
    assert all(np.diff(mean_bytes[1:]) < 0)
    assert mean_db[1] > mean_db[9] > mean_db[30]
    # The table's PSNR is the decoded luma's against the reference.
    ref = read_yuv420_luma(coded.reference, *QCIF)
    assert coded.psnr[3, 9] == pytest.approx(psnr(ref[3], coded.luma(10)[3]))


def test_the_coded_clip_is_cached(coded: vq.CodedClip) -> None:
    table = coded.directory / "table.npz"
    before = table.stat().st_mtime_ns
    again = vq.code_clip(coded.reference, *QCIF, cache=coded.directory.parent)
    assert again.directory == coded.directory
    assert table.stat().st_mtime_ns == before
    assert np.array_equal(again.psnr, coded.psnr)


def _run_dir(tmp: Path, rows: list[dict]) -> Path:
    d = tmp / "run"
    d.mkdir()
    summary = {
        "measure_from_s": 0.0,
        "sim_seconds": 10.0,
        "flows": [{"id": 1, "throughput_bps": 2e6}],
    }
    (d / "summary.json").write_text(json.dumps(summary))
    cols = {k: [r[k] for r in rows] for k in rows[0]}
    pq.write_table(pa.table(cols), d / "frames.parquet")
    return d


def _row(frame: int, grabbed: bool, q: int | None, complete: float | None) -> dict:
    return {
        "flow": 1,
        "frame": frame,
        "t": frame / 30,
        "grabbed": int(grabbed),
        "q": q,
        "bytes": 5000 if grabbed else 0,
        "packets": 5 if grabbed else 0,
        "delivered": 5 if complete is not None else 0,
        "complete_s": complete,
    }


def test_rendered_frames_and_freezes(coded: vq.CodedClip, tmp_path: Path) -> None:
    rows = [
        _row(0, True, 10, 0.1),  # rendered
        _row(1, True, 12, None),  # lost: frame 0 stays on screen
        _row(2, False, None, None),  # suspended: still frame 0
        _row(3, True, 4, 0.2),  # rendered
        _row(4 + FRAMES, True, 31, 0.3),  # the clip loops: clip frame 4
    ]
    d = _run_dir(tmp_path, rows)
    (only,) = vq.run_quality(d, coded, grace_s=0.0)
    assert only.mode == "rendered"
    assert [f["clip_frame"] for f in only.frames] == [0, 3, 4]
    want = [coded.psnr[0, 9], coded.psnr[3, 3], coded.psnr[4, 30]]
    assert [f["psnr_db"] for f in only.frames] == pytest.approx(want)
    assert only.mean_psnr_db == pytest.approx(np.mean(want))
    assert (only.slots, only.grabbed, only.rendered) == (5, 4, 3)
    assert [f["mos"] for f in only.frames] == [mos_from_psnr(x) for x in want]
    assert sum(only.mos.values()) == pytest.approx(1.0)
    assert only.throughput_bps == 2e6

    (fz,) = vq.run_quality(d, coded, freezes=True, grace_s=0.0)
    assert [(f["clip_frame"], f["shown"], f["q"]) for f in fz.frames] == [
        (0, 0, 10),
        (1, 0, 10),
        (2, 0, 10),
        (3, 3, 4),
        (4, 4, 31),
    ]
    ref = read_yuv420_luma(coded.reference, *QCIF)
    frozen = [psnr(ref[k], coded.luma(10)[0]) for k in (1, 2)]
    assert [f["psnr_db"] for f in fz.frames[1:3]] == pytest.approx(frozen)
    # The moving clip: a frozen picture is worse than the frame itself.
    assert max(frozen) < coded.psnr[0, 9]


def test_an_uncoupled_source_is_scored_at_vics_default_q(
    coded: vq.CodedClip, tmp_path: Path
) -> None:
    d = _run_dir(tmp_path, [_row(2, True, None, 0.1)])
    (f,) = vq.run_quality(d, coded, grace_s=0.0)
    assert f.frames[0]["q"] == 10
    (g,) = vq.run_quality(d, coded, grace_s=0.0, q_uncoupled=20)
    assert g.frames[0]["psnr_db"] == pytest.approx(coded.psnr[2, 19])


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfcc.cli", "video-quality", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def test_cli_end_to_end_on_a_short_vic_run(coded: vq.CodedClip, tmp_path: Path) -> None:
    out = tmp_path / "r2"
    run(
        ROOT / "scenarios" / "002-r2-vic-cwnd.toml",
        out,
        overrides=["duration=4s", "measure_from=1s"],
        plots=False,
    )
    env = {"TFCC_CACHE": str(coded.directory.parent.parent)}
    ref = str(coded.reference)
    p = _cli(str(out), "--reference", ref, "--size", "176x144", "--json", env=env)
    assert p.returncode == 0, p.stderr
    (flow,) = json.loads(p.stdout)
    assert flow["mode"] == "rendered" and flow["flow"] == 0
    assert 30 <= flow["mean_psnr_db"] <= 60
    assert 0 < flow["rendered"] <= flow["grabbed"] <= flow["slots"] == 60
    csv = tmp_path / "frames.csv"
    p = _cli(str(out), "-r", ref, "--size", "176x144", "--freezes", "--csv", str(csv), env=env)
    assert p.returncode == 0, p.stderr
    assert "freezes" in p.stdout
    assert csv.read_text().splitlines()[0].startswith("flow,frame,clip_frame,t,shown,q")


def test_cli_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    # a mistyped run directory said "not a run's output directory (no summary.json)"
    p = _cli(str(tmp_path / "typo"))
    why = "no such directory (give a run's output directory, tfcc run --out)"
    assert (p.returncode, p.stderr) == (2, f"error: {tmp_path / 'typo'}: {why}\n")
    p = _cli(str(tmp_path))
    assert p.returncode == 2 and "no summary.json" in p.stderr and "Traceback" not in p.stderr
    (tmp_path / "summary.json").write_text("{}")
    p = _cli(str(tmp_path))
    assert p.returncode == 2 and "no frames.parquet" in p.stderr
    # A testbed run without a video flow has none either, and is told so.
    (tmp_path / "summary.json").write_text('{"testbed": {"tcp_spurious_rtos": []}}')
    p = _cli(str(tmp_path))
    assert p.returncode == 2 and "the run has no flow with a video source" in p.stderr
    # A video run without one: an older tfcc's testbed run (it wrote none).
    (tmp_path / "summary.json").write_text(
        '{"testbed": {"tcp_spurious_rtos": []}, "flows": [{"id": 0, "video": {"frames_due": 3}}]}'
    )
    p = _cli(str(tmp_path))
    assert p.returncode == 2 and "a run with a video flow but no frames.parquet" in p.stderr
    (tmp_path / "frames.parquet").write_bytes(b"")
    p = _cli(str(tmp_path), "--reference", str(tmp_path / "none.yuv"))
    assert p.returncode == 2 and "none.yuv" in p.stderr
    p = _cli(str(tmp_path), "--size", "big")
    assert p.returncode == 2 and "--size" in p.stderr
    # A size H.261 cannot code: refused before a 35 MB clip is made for ffmpeg to reject.
    p = _cli(str(tmp_path), "--size", "320x240", env={"TFCC_CACHE": str(tmp_path / "c")})
    assert p.returncode == 2 and "H.261 codes 352x288 (CIF) and 176x144" in p.stderr
    assert not (tmp_path / "c").exists()


def test_an_unreadable_summary_or_frames_file_is_named(tmp_path: Path) -> None:
    # Before: the JSON parser's or Arrow's words alone ("Expecting property name enclosed in
    # double quotes: line 2 column 1", "Could not open Parquet input source ..."), no file named
    # for the summary.
    d = _run_dir(tmp_path, [_row(0, True, 10, 0.1)])
    (d / "frames.parquet").write_bytes(b"garbage")
    with pytest.raises(vq.VideoQualityError, match=r"frames\.parquet: not a readable Parquet"):
        vq.unfollowed_flows(d)
    (d / "summary.json").write_text("{")
    with pytest.raises(vq.VideoQualityError, match=r"summary\.json: cannot read it \(Expecting"):
        vq.unfollowed_flows(d)
    (d / "summary.json").write_text("[]")
    with pytest.raises(vq.VideoQualityError, match=r"summary\.json: not a run summary"):
        vq.unfollowed_flows(d)


def test_synthetic_clip_has_the_size_asked_and_leaves_nothing_when_it_fails(
    tmp_path: Path,
) -> None:
    # `tfcc video-quality --size 176x144` without --reference made a CIF clip under a QCIF
    # name (read back as 1200 QCIF frames of garbage).
    clip = vq.synthetic_clip(tmp_path / "c.yuv", frames=2, size=QCIF)
    assert clip.stat().st_size == 2 * QCIF[0] * QCIF[1] * 3 // 2
    with pytest.raises(vq.VideoQualityError):
        vq.synthetic_clip(tmp_path / "bad.yuv", source="no-such-lavfi-source", frames=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yuv"]


def test_the_cache_tells_the_same_bytes_at_two_sizes_apart(tmp_path: Path) -> None:
    # 4 QCIF frames are 1 CIF frame: the same file coded at either size is another clip.
    f = tmp_path / "x.yuv"
    f.write_bytes(bytes(4 * QCIF[0] * QCIF[1] * 3 // 2))
    assert vq._clip_key(f, *QCIF) != vq._clip_key(f, 352, 288)


def test_a_tcp_video_flow_is_left_out_not_fatal(coded: vq.CodedClip, tmp_path: Path) -> None:
    # A TCP sender's frames have no packets matched (frames.rs): its slots never render, and
    # the whole command used to fail with "no frame rendered" for the other flows too.
    rows = [_row(0, True, 10, 0.1), _row(1, True, 10, 0.15)]
    rows += [{**r, "flow": 2, "packets": 0, "delivered": 0, "complete_s": None} for r in rows]
    d = _run_dir(tmp_path, rows)
    summary = json.loads((d / "summary.json").read_text())
    summary["flows"] = [
        {"id": 1, "protocol": "tfwc", "throughput_bps": 2e6},
        {"id": 2, "protocol": "tcp-sack", "throughput_bps": 1e6},
    ]
    (d / "summary.json").write_text(json.dumps(summary))
    assert vq.unfollowed_flows(d) == {2: "tcp-sack"}
    (only,) = vq.run_quality(d, coded, grace_s=0.0)
    assert only.flow == 1 and only.rendered == 2
    with pytest.raises(vq.VideoQualityError, match=r"flow 2 \(tcp-sack\): frames.parquet"):
        vq.run_quality(d, coded, flow=2, grace_s=0.0)


def test_cli_csv_errors_and_interrupt_leave_no_partial_files(
    coded: vq.CodedClip, tmp_path: Path
) -> None:
    d = _run_dir(tmp_path, [_row(k, True, 10, k / 30 + 0.1) for k in range(FRAMES)])
    env = {"TFCC_CACHE": str(coded.directory.parent.parent)}
    ref = str(coded.reference)
    for bad in (tmp_path / "no-dir" / "x.csv", tmp_path):
        p = _cli(str(d), "-r", ref, "--size", "176x144", "--csv", str(bad), env=env)
        assert p.returncode == 2 and "--csv" in p.stderr and "Traceback" not in p.stderr
    p = _cli(str(d), "-r", str(tmp_path), "--size", "176x144", env=env)
    assert p.returncode == 2 and "not a file" in p.stderr
    # Ctrl-C while the default clip is being made and coded (a fresh cache): exit 130, one
    # line, and no temporary file left in the cache or beside the CSV.
    cache = tmp_path / "cache"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcc.cli", "video-quality", str(d), "--size", "176x144"]
        + ["--csv", str(tmp_path / "out.csv")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TFCC_CACHE": str(cache)},
    )
    import time

    # Into ffmpeg's work (the clip and its coding take ~14 s): wait for the clip's temporary file
    # rather than a fixed time, which a loaded machine (parallel test workers) can spend on the
    # imports alone.
    end = time.monotonic() + 60
    while not list(cache.rglob(".*")) and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    proc.send_signal(2)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.startswith("interrupted") and "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()
    assert [p for p in cache.rglob(".*")] == []


def test_json_output_is_strict_when_a_picture_is_identical() -> None:
    # A flat clip (`--synthetic color`) codes losslessly: PSNR +inf, which --json printed as
    # `Infinity`, not JSON.
    f = vq.FlowQuality(
        flow=0,
        mode="rendered",
        frames=[{"frame": 0, "psnr_db": math.inf, "mos": 5}],
        mean_psnr_db=math.inf,
        mos={1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 1.0},
        slots=1,
        grabbed=1,
        rendered=1,
        throughput_bps=1e6,
        window_s=1.0,
    )
    text = vq.to_json([f], with_frames=True)
    (d,) = json.loads(text, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert d["mean_psnr_db"] is None and d["frames"][0]["psnr_db"] is None
    assert d["mos"]["5"] == 1.0 and d["rendered_fps"] == 1.0


def test_a_play_out_deadline_turns_late_frames_into_freezes(
    coded: vq.CodedClip, tmp_path: Path
) -> None:
    # Frame k comes due at k/30 s; frames 1 and 3 are whole 50 ms and 400 ms after that.
    rows = [
        _row(0, True, 10, 0.01),
        _row(1, True, 10, 1 / 30 + 0.05),
        _row(2, True, 10, 2 / 30 + 0.2),  # exactly at a 200 ms deadline: still shown
        _row(3, True, 10, 3 / 30 + 0.4),
    ]
    d = _run_dir(tmp_path, rows)
    (free,) = vq.run_quality(d, coded, grace_s=0.0)
    assert free.rendered == 4 and free.playout_s is None
    (late,) = vq.run_quality(d, coded, grace_s=0.0, playout_s=0.2, freezes=True)
    assert late.rendered == 3 and late.as_dict()["playout_s"] == 0.2
    assert [(f["clip_frame"], f["shown"], f["rendered"]) for f in late.frames] == [
        (0, 0, True),
        (1, 1, True),
        (2, 2, True),
        (3, 2, False),  # too late: frame 2 stays on screen
    ]
    (tight,) = vq.run_quality(d, coded, grace_s=0.0, playout_s=0.03)
    assert tight.rendered == 1
    # The delays are of every whole frame, whatever the deadline: what one is chosen against.
    assert tight.frame_delays_s == pytest.approx([0.01, 0.05, 0.2, 0.4])
    assert tight.frame_delay_s(0.5) == pytest.approx(0.125)
    assert late.as_dict()["frame_delay_p95_s"] == pytest.approx(0.37)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(vq.VideoQualityError, match="play-out delay"):
            vq.run_quality(d, coded, grace_s=0.0, playout_s=bad)
    for bad in ("0", "-0.1", "inf", "nan"):
        p = _cli(str(d), "--playout-delay", bad)
        assert p.returncode == 2 and "--playout-delay" in p.stderr, p.stderr
        assert "Traceback" not in p.stderr
