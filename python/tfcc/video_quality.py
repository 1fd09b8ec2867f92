"""The picture quality of a video run (002 Sec. 6.3, R7-R9), in the simulator or on the testbed:
PSNR per frame against a reference clip, Table 6.3's MOS, their mean and distribution
(``tfcc video-quality``).

A run's ``frames.parquet`` says, per frame slot of each video flow, whether Vic's coupling
grabbed the frame (Algorithm 4), at which quantizer q (Algorithm 5), and whether the receiver got
all of it (both backends write it with one bookkeeping, ``crates/tfcc-sim/src/frames.rs``; on the
testbed a frame is whole at the kernel's receive stamp of its last packet to arrive). The
pictures come from a real codec: the reference clip (raw YUV 4:2:0, CIF) is coded with ffmpeg's
H.261 encoder, Vic's codec (Sec. 6.1.4), once per q in H.261's range 1-31,
all-intra (``-g 1``, as Vic codes H.261), with a fixed quantizer per encode, and decoded again.
``-q:v Q`` with ``-qmin 1 -qmax 31`` makes every GOB header's GQUANT exactly Q (checked by
``tests/test_video_quality.py`` on the bitstream; without ``-qmin 1`` ffmpeg's default qmin 2
turns q = 1 into GQUANT 2). That gives per (frame, q) the coded bytes and the decoded luma, and
the PSNR of each against the reference; they are cached (:func:`code_clip`).

What the receiver shows in a slot: the decoded frame at its q when all its packets arrived (a
frame is *rendered*); otherwise the last rendered frame stays on screen (a freeze). 002 computes
PSNR "on each frame the Vic receiver renders", so by default only rendered slots count
(``freezes=False``); ``freezes=True`` takes every slot, a frozen one scored as the frame still on
screen against the reference frame the slot should have shown, which charges skipped and lost
frames to quality (a reading the thesis does not take; a choice here). Slots before the first
rendered frame show nothing and are left out in both modes. A play-out deadline is optional
(``playout_s``, ``--playout-delay``): with it a frame whole later than ``playout_s`` after it
came due is not rendered (an interactive receiver has shown the slot, frozen, by then; 002 Sec.
2.13 puts interactive media's budget at 150-200 ms end to end). Without it, as 002 scores Vic
(whose receiver renders a frame whenever it completes), a frame counts however late it
completes. The differences from Vic's receiver: no conditional replenishment (Vic codes changed
blocks only; here every frame is coded whole, so the bytes per frame differ from Vic's), and a
lost packet loses its whole frame (Vic's decoder shows the blocks that arrived).

The clip: foreman CIF (Sec. 6.1) is not available offline; :func:`synthetic_clip` makes a
moving CIF clip from ffmpeg's ``testsrc2`` lavfi source (300 frames, 30 fps, as foreman).
Absolute dB differ from foreman's; only comparisons between runs on the same clip mean much.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tfcc.metrics import CIF, mos_distribution, mos_from_psnr, psnr, read_yuv420_luma

#: H.261's quantizer range (QUANT/GQUANT, 5 bits): Vic's q (002 Algorithm 5) moves within it.
Q_RANGE = range(1, 32)
#: The picture sizes H.261 codes (ITU-T H.261's source formats CIF and QCIF), width by height.
H261_SIZES = ((352, 288), (176, 144))
#: The q an uncoupled source's frames are coded at: Vic's default (002 Sec. 6.2.1, q = 10).
Q_UNCOUPLED = 10
#: Bump when the cached table's layout or the encoder options change.
_CACHE_VERSION = 1


#: The protocols whose packets ``frames.parquet`` matches to frames (their senders report their
#: send buffer, ``crates/tfcc-sim/src/frames.rs``); another protocol's video flow (a TCP) has
#: its frames recorded with no packets, so none of them ever counts as rendered.
FOLLOWED_PROTOCOLS = ("tfwc", "tfrc", "cbr")


class VideoQualityError(ValueError):
    """The quality of a run cannot be computed (no frames, no ffmpeg, a bad clip); the message
    says why."""


def _ffmpeg() -> str:
    exe = shutil.which("ffmpeg")
    if exe is None or shutil.which("ffprobe") is None:
        raise VideoQualityError(
            "ffmpeg and ffprobe are not installed: run `make ffmpeg` "
            "(scripts/install-ffmpeg.sh, Debian package ffmpeg)"
        )
    return exe


def _run(argv: Sequence[str]) -> bytes:
    p = subprocess.run(list(argv), capture_output=True, check=False)
    if p.returncode != 0:
        tail = p.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise VideoQualityError(f"{argv[0]} failed: {' / '.join(tail)}")
    return p.stdout


def cache_dir() -> Path:
    """Where coded clips are kept: ``$TFCC_CACHE/video``, else ``$XDG_CACHE_HOME/tfcc/video``,
    else ``~/.cache/tfcc/video``."""
    if os.environ.get("TFCC_CACHE"):
        return Path(os.environ["TFCC_CACHE"]) / "video"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tfcc" / "video"


def synthetic_clip(
    path: Path,
    source: str = "testsrc2",
    frames: int = 300,
    fps: int = 30,
    size: tuple[int, int] = CIF,
) -> Path:
    """Write a moving clip of ``size`` (width, height; CIF by default) as raw YUV 4:2:0 to
    ``path`` from ffmpeg's lavfi ``source`` (``testsrc2``: a moving pattern, colour bars and a
    counter; ``mandelbrot``: a zoom; any lavfi source that takes ``size`` and ``rate``),
    ``frames`` frames at ``fps``: foreman's 300 at 30 fps by default. Deterministic: the same
    bytes every time. Written beside ``path`` and renamed into place, so an interrupted or
    failed call leaves nothing behind."""
    ffmpeg = _ffmpeg()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    w, h = size
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        _make_clip(ffmpeg, tmp, source, w, h, frames, fps)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _make_clip(ffmpeg: str, tmp: Path, source: str, w: int, h: int, frames: int, fps: int) -> None:
    _run(
        [
            ffmpeg,
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"{source}=size={w}x{h}:rate={fps}",
            "-frames:v",
            str(frames),
            "-pix_fmt",
            "yuv420p",
            "-f",
            "rawvideo",
            str(tmp),
        ]
    )


@dataclass
class CodedClip:
    """A reference clip coded at every q: ``bytes[frame, q]`` and ``psnr[frame, q]`` (dB, luma)
    for q in :data:`Q_RANGE` (column ``q - 1``), and the H.261 streams in ``directory`` to
    decode other frames from (:meth:`luma`)."""

    reference: Path
    directory: Path
    width: int
    height: int
    bytes: np.ndarray
    psnr: np.ndarray
    _decoded: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def frames(self) -> int:
        return int(self.bytes.shape[0])

    def stream(self, q: int) -> Path:
        return self.directory / f"q{q:02d}.h261"

    def luma(self, q: int) -> np.ndarray:
        """Every frame's decoded luma at ``q``, ``(frames, height, width)`` uint8 (decoded once
        and kept: about 30 MB per q for a CIF clip of 300 frames)."""
        if q not in self._decoded:
            self._decoded[q] = _decode(self.stream(q), self.width, self.height)
        return self._decoded[q]


def _decode(stream: Path, width: int, height: int) -> np.ndarray:
    raw = _run(
        [
            _ffmpeg(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "h261",
            "-i",
            str(stream),
            "-f",
            "rawvideo",
            "-pix_fmt",
            "yuv420p",
            "-",
        ]
    )
    frame = width * height * 3 // 2
    n = len(raw) // frame
    a = np.frombuffer(raw, dtype=np.uint8)[: n * frame].reshape(n, frame)
    return a[:, : width * height].reshape(n, height, width)


def _encode(reference: Path, out: Path, q: int, width: int, height: int) -> None:
    _run(
        [
            _ffmpeg(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "yuv420p",
            "-s",
            f"{width}x{height}",
            "-i",
            str(reference),
            "-c:v",
            "h261",
            "-g",
            "1",
            "-qmin",
            "1",
            "-qmax",
            "31",
            "-q:v",
            str(q),
            "-f",
            "h261",
            str(out),
        ]
    )


def _packet_sizes(stream: Path) -> list[int]:
    out = _run(
        [
            "ffprobe",
            "-v",
            "error",
            "-f",
            "h261",
            "-show_entries",
            "packet=size",
            "-of",
            "csv=p=0",
            str(stream),
        ]
    )
    return [int(x) for x in out.decode().split()]


def _clip_key(reference: Path, width: int, height: int) -> str:
    """The cache key of ``reference`` coded as ``width``x``height``: the same bytes read at
    another size are another clip."""
    h = hashlib.sha256(f"{width}x{height}/".encode())
    with open(reference, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    version = _run([_ffmpeg(), "-hide_banner", "-version"]).decode().splitlines()[0]
    h.update(f"{version}/{_CACHE_VERSION}".encode())
    return h.hexdigest()[:24]


def code_clip(
    reference: Path, width: int = CIF[0], height: int = CIF[1], cache: Path | None = None
) -> CodedClip:
    """Code ``reference`` (raw YUV 4:2:0) with H.261 at every q in :data:`Q_RANGE`,
    all-intra, and measure each frame's coded bytes (ffprobe's packet sizes) and decoded luma
    PSNR. Cached under ``cache`` (default :func:`cache_dir`) by the clip's content and the
    ffmpeg version: the first call takes a few seconds per q (the q values coded one per core at
    a time), later ones read the table."""
    reference = Path(reference)
    ref = read_yuv420_luma(reference, width, height)
    directory = (cache or cache_dir()) / _clip_key(reference, width, height)
    table = directory / "table.npz"
    if table.exists():
        t = np.load(table)
        return CodedClip(reference, directory, width, height, t["bytes"], t["psnr"])
    directory.mkdir(parents=True, exist_ok=True)
    n = ref.shape[0]

    def code_at(q: int) -> tuple[list[int], list[float]]:
        stream = directory / f"q{q:02d}.h261"
        with tempfile.NamedTemporaryFile(dir=directory, suffix=".h261", delete=False) as tmp:
            part = Path(tmp.name)
        try:
            _encode(reference, part, q, width, height)
            part.replace(stream)
        finally:
            part.unlink(missing_ok=True)
        sizes = _packet_sizes(stream)
        dec = _decode(stream, width, height)
        if len(sizes) != n or dec.shape[0] != n:
            raise VideoQualityError(
                f"H.261 at q = {q}: {len(sizes)} packets and {dec.shape[0]} decoded frames "
                f"for a clip of {n} frames"
            )
        return sizes, [psnr(ref[k], dec[k]) for k in range(n)]

    # The 31 quantisers are independent ffmpeg runs: one per core at a time (the table is the
    # same in any order). On an error or Ctrl-C the queued ones are cancelled and the running
    # ones finish, so each removes its own temporary file.
    pool = ThreadPoolExecutor(max_workers=max(1, min(len(Q_RANGE), os.cpu_count() or 1)))
    try:
        coded = list(pool.map(code_at, Q_RANGE))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    nbytes = np.zeros((n, len(Q_RANGE)), dtype=np.int64)
    db = np.zeros((n, len(Q_RANGE)), dtype=np.float64)
    for j, (sizes, frame_db) in enumerate(coded):
        nbytes[:, j] = sizes
        db[:, j] = frame_db
    tmp_table = directory / f".table.{os.getpid()}.npz"
    try:
        np.savez(tmp_table, bytes=nbytes, psnr=db)
        tmp_table.replace(table)
    finally:
        tmp_table.unlink(missing_ok=True)
    return CodedClip(reference, directory, width, height, nbytes, db)


@dataclass
class FlowQuality:
    """One video flow's picture quality over a run's window."""

    flow: int
    #: ``"rendered"`` or ``"freezes"`` (see the module doc).
    mode: str
    #: Per scored slot: ``frame`` (slot index), ``clip_frame``, ``t``, ``shown`` (the clip frame
    #: on screen), ``q`` (its quantizer), ``rendered`` (the slot's own frame arrived),
    #: ``psnr_db``, ``mos``.
    frames: list[dict[str, Any]]
    mean_psnr_db: float
    #: Share of scored frames at each MOS 1-5 (002 Fig. 6.19).
    mos: dict[int, float]
    #: Slots in the window, of them grabbed and rendered (the frame arrived whole).
    slots: int
    grabbed: int
    rendered: int
    #: Goodput over the measurement window (the summary's), bit/s.
    throughput_bps: float
    window_s: float
    #: The play-out deadline applied (s after a frame came due), or None.
    playout_s: float | None = None
    #: Per grabbed slot in the window whose frame became whole (late or not), how long after it
    #: came due, s: what a play-out deadline is chosen against.
    frame_delays_s: list[float] = field(default_factory=list)

    def frame_delay_s(self, quantile: float) -> float | None:
        """A quantile of :attr:`frame_delays_s` (None without a whole frame)."""
        if not self.frame_delays_s:
            return None
        return float(np.quantile(self.frame_delays_s, quantile))

    @property
    def rendered_fps(self) -> float:
        return self.rendered / self.window_s if self.window_s > 0 else math.nan

    def as_dict(self, with_frames: bool = False) -> dict[str, Any]:
        d = {
            "flow": self.flow,
            "mode": self.mode,
            "mean_psnr_db": self.mean_psnr_db,
            "mos": {str(k): v for k, v in self.mos.items()},
            "slots": self.slots,
            "grabbed": self.grabbed,
            "rendered": self.rendered,
            "rendered_fps": self.rendered_fps,
            "throughput_bps": self.throughput_bps,
            "playout_s": self.playout_s,
            "frame_delay_p50_s": self.frame_delay_s(0.5),
            "frame_delay_p95_s": self.frame_delay_s(0.95),
        }
        if with_frames:
            d["frames"] = self.frames
        return d


def to_json(result: Sequence[FlowQuality], with_frames: bool = False) -> str:
    """``result`` as strict JSON (``tfcc video-quality --json``): an infinite PSNR (a picture
    identical to its reference, :func:`tfcc.metrics.psnr`) is ``null``, as JSON has no
    infinity (Python's ``Infinity`` breaks ``jq`` and other readers)."""

    def finite(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: finite(v) for k, v in x.items()}
        if isinstance(x, list):
            return [finite(v) for v in x]
        return x

    return json.dumps(finite([f.as_dict(with_frames) for f in result]), allow_nan=False)


def check_run_dir(run_dir: Path) -> None:
    """:class:`VideoQualityError` unless ``run_dir`` is a run's outputs with a
    ``frames.parquet`` (cheap: call it before coding a clip)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        # a mistyped path, named as one (as tfcc ns2-trace does), not "no summary.json"
        what = "no such directory" if not run_dir.exists() else "not a directory"
        raise VideoQualityError(
            f"{run_dir}: {what} (give a run's output directory, tfcc run --out)"
        )
    if not (run_dir / "summary.json").is_file():
        raise VideoQualityError(f"{run_dir}: not a run's output directory (no summary.json)")
    if not (run_dir / "frames.parquet").is_file():
        try:
            summary = json.loads((run_dir / "summary.json").read_text())
            flows = summary.get("flows") if isinstance(summary, dict) else None
            video = isinstance(flows, list) and any(
                isinstance(f, dict) and f.get("video") for f in flows
            )
        except (OSError, ValueError):
            video = False
        if video:
            # A testbed run of a tfcc from before the testbed followed frames to the receiver.
            raise VideoQualityError(
                f"{run_dir}: a run with a video flow but no frames.parquet (written by an older "
                "tfcc, which recorded frames in the simulator only): run the scenario again"
            )
        raise VideoQualityError(
            f"{run_dir}: no frames.parquet (the run has no flow with a video source)"
        )


def _summary(run_dir: Path) -> dict[str, Any]:
    from tfcc.run import read_summary

    return read_summary(run_dir, VideoQualityError)


def _frames_table(run_dir: Path, columns: list[str] | None = None) -> Any:
    """The run's ``frames.parquet`` as a pyarrow table, or one message naming the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(run_dir) / "frames.parquet"
    try:
        return pq.read_table(path, columns=columns)
    except (OSError, pa.ArrowException) as e:
        raise VideoQualityError(f"{path}: not a readable Parquet file ({e})") from None


def unfollowed_flows(run_dir: Path) -> dict[int, str]:
    """The run's video flows whose packets ``frames.parquet`` does not follow (a protocol not
    in :data:`FOLLOWED_PROTOCOLS`), with their protocol: their frames cannot be scored.
    :func:`run_quality` leaves them out unless one is asked for by ``flow``."""

    check_run_dir(run_dir)
    summary = _summary(run_dir)
    video = set(_frames_table(run_dir, ["flow"])["flow"].to_pylist())
    return {
        int(f["id"]): str(f["protocol"])
        for f in summary.get("flows", [])
        if int(f["id"]) in video
        and f.get("protocol", FOLLOWED_PROTOCOLS[0]) not in FOLLOWED_PROTOCOLS
    }


def _read_frames(run_dir: Path) -> dict[str, list[Any]]:
    check_run_dir(run_dir)
    return _frames_table(run_dir).to_pydict()


def run_quality(
    run_dir: Path,
    clip: CodedClip,
    *,
    flow: int | None = None,
    freezes: bool = False,
    q_uncoupled: int = Q_UNCOUPLED,
    grace_s: float = 1.0,
    playout_s: float | None = None,
) -> list[FlowQuality]:
    """The picture quality of each video flow of the run in ``run_dir`` (or of ``flow``) on the
    coded ``clip``. The slots scored are those due in the measurement window and at least
    ``grace_s`` before the run's end (a frame due later may still be on its way). A slot shows
    clip frame ``frame mod N`` (a file grabber looping an N-frame clip). ``q_uncoupled`` is the q
    of a source without Vic's coupling (no q recorded). See the module doc for ``freezes`` and
    ``playout_s`` (None: no play-out deadline).
    The flows of :func:`unfollowed_flows` are left out (an error when ``flow`` names one, or
    when every video flow is one)."""
    run_dir = Path(run_dir)
    cols = _read_frames(run_dir)
    summary = _summary(run_dir)
    t0 = float(summary.get("measure_from_s", 0.0))
    end = float(summary.get("sim_seconds", math.inf))
    t1 = end - grace_s
    if t1 <= t0:
        raise VideoQualityError(
            f"the window [{t0}, {end}) s less the {grace_s} s grace at the end is empty"
        )
    if playout_s is not None and not (math.isfinite(playout_s) and playout_s > 0):
        raise VideoQualityError(
            f"the play-out delay must be a positive number of seconds, got {playout_s}"
        )
    if q_uncoupled not in Q_RANGE:
        raise VideoQualityError(f"q_uncoupled must be in 1-31, got {q_uncoupled}")
    flows = sorted(set(cols["flow"]))
    unfollowed = unfollowed_flows(run_dir)
    if flow is not None:
        if flow not in flows:
            raise VideoQualityError(f"flow {flow} has no video source (video flows: {flows})")
        flows = [flow]
    for fl in flows:
        if fl in unfollowed and (flow is not None or len(unfollowed) == len(flows)):
            raise VideoQualityError(
                f"flow {fl} ({unfollowed[fl]}): frames.parquet does not match its packets to "
                f"frames (only {', '.join(FOLLOWED_PROTOCOLS)} senders'), so no frame of it "
                "can be scored"
            )
    flows = [fl for fl in flows if fl not in unfollowed]
    thr = {int(f["id"]): float(f.get("throughput_bps", math.nan)) for f in summary["flows"]}
    n = clip.frames
    out = []
    for fl in flows:
        rows = [
            {k: cols[k][i] for k in cols} for i in range(len(cols["flow"])) if cols["flow"][i] == fl
        ]
        rows.sort(key=lambda r: r["frame"])
        shown: tuple[int, int] | None = None  # (clip frame, q) on screen
        scored: list[dict[str, Any]] = []
        slots = grabbed = rendered = 0
        delays: list[float] = []
        for r in rows:
            whole = bool(r["grabbed"]) and r["complete_s"] is not None and r["complete_s"] <= end
            delay = float(r["complete_s"]) - float(r["t"]) if whole else math.inf
            ok = whole and (playout_s is None or delay <= playout_s)
            q = q_uncoupled if r["q"] is None else int(r["q"])
            cf = int(r["frame"]) % n
            if ok:
                shown = (cf, q)
            if not (t0 <= float(r["t"]) < t1):
                continue
            slots += 1
            grabbed += int(bool(r["grabbed"]))
            if whole:
                delays.append(delay)
            rendered += int(ok)
            if shown is None or not (ok or freezes):
                continue
            scored.append(
                {
                    "frame": int(r["frame"]),
                    "clip_frame": cf,
                    "t": float(r["t"]),
                    "shown": shown[0],
                    "q": shown[1],
                    "rendered": ok,
                }
            )
        # Rendered slots read the table; a frozen one compares the frame on screen with the
        # slot's own reference frame, decoded at the q it was coded at.
        ref = None
        for s in scored:
            if s["shown"] == s["clip_frame"]:
                s["psnr_db"] = float(clip.psnr[s["clip_frame"], s["q"] - 1])
            else:
                if ref is None:
                    ref = read_yuv420_luma(clip.reference, clip.width, clip.height)
                s["psnr_db"] = psnr(ref[s["clip_frame"]], clip.luma(s["q"])[s["shown"]])
            s["mos"] = mos_from_psnr(s["psnr_db"])
        if not scored:
            raise VideoQualityError(f"flow {fl}: no frame rendered in the window")
        dbs = [s["psnr_db"] for s in scored]
        out.append(
            FlowQuality(
                flow=int(fl),
                mode="freezes" if freezes else "rendered",
                frames=scored,
                mean_psnr_db=float(np.mean(dbs)),
                mos=mos_distribution(dbs),
                slots=slots,
                grabbed=grabbed,
                rendered=rendered,
                throughput_bps=thr.get(int(fl), math.nan),
                window_s=t1 - t0,
                playout_s=playout_s,
                frame_delays_s=delays,
            )
        )
    return out
