"""PSNR (002 Eqs. 6.1-6.2), Table 6.3's PSNR→MOS mapping, the MOS distribution (Fig. 6.19) and
raw YUV 4:2:0 luma reading."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfcc import metrics
from tfcc.metrics import MetricError


def _plane(seed: int = 0, shape: tuple[int, int] = (16, 16)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def test_psnr_of_an_mse_of_one_is_48_13_db() -> None:
    ref = np.full((8, 8), 100, dtype=np.uint8)
    img = ref.copy()
    img[::2] += 1  # half the samples off by +1,
    img[1::2] -= 1  # the other half by -1: MSE exactly 1
    assert metrics.psnr(ref, img) == pytest.approx(10 * math.log10(255**2))
    assert metrics.psnr(ref, img) == pytest.approx(48.1308, abs=1e-4)


def test_psnr_worked_values() -> None:
    ref = np.zeros((4, 4), dtype=np.uint8)
    # Every sample off by 255: MSE = 255², PSNR 0 dB.
    assert metrics.psnr(ref, np.full((4, 4), 255, dtype=np.uint8)) == pytest.approx(0.0)
    # Every sample off by 10: MSE 100, 10·log10(65025/100) = 28.13 dB.
    assert metrics.psnr(ref, np.full((4, 4), 10, dtype=np.uint8)) == pytest.approx(
        28.1308, abs=1e-4
    )
    # One sample in 16 off by 4: MSE 1, whatever the sign (no uint8 wrap-around).
    img = ref.copy()
    img[0, 0] = 4
    assert metrics.psnr(img, ref) == pytest.approx(48.1308, abs=1e-4)
    # The peak is the thesis' m: 10-bit samples have m = 1023.
    assert metrics.psnr(ref, np.ones((4, 4)), peak=1023) == pytest.approx(20 * math.log10(1023))


def test_psnr_of_identical_planes_is_infinite() -> None:
    p = _plane()
    assert metrics.psnr(p, p.copy()) == math.inf
    assert metrics.mos_from_psnr(math.inf) == 5


def test_psnr_rejects_mismatched_or_empty_planes() -> None:
    with pytest.raises(ValueError):
        metrics.psnr(_plane(shape=(4, 4)), _plane(shape=(4, 5)))
    with pytest.raises(ValueError):
        metrics.psnr(np.zeros((0, 0)), np.zeros((0, 0)))
    with pytest.raises(ValueError):
        metrics.psnr(_plane(), _plane(), peak=0)


@pytest.mark.parametrize(
    ("db", "mos"),
    [
        (50.0, 5),
        (37.01, 5),
        (37.0, 4),  # "> 37" is 5: 37 itself is 4
        (36.99, 4),
        (31.01, 4),
        (31.0, 3),  # rows 31-37 and 25-31 both name 31: read closed above, so 3
        (30.99, 3),
        (25.01, 3),
        (25.0, 2),  # likewise 25 → 2
        (24.99, 2),
        (20.0, 2),  # "< 20" is 1: 20 itself is 2
        (19.99, 1),
        (0.0, 1),
        (-5.0, 1),
    ],
)
def test_mos_from_psnr_table_6_3_and_its_boundaries(db: float, mos: int) -> None:
    assert metrics.mos_from_psnr(db) == mos


def test_mos_from_psnr_rejects_nan() -> None:
    with pytest.raises(ValueError):
        metrics.mos_from_psnr(float("nan"))


def test_mos_distribution_counts_frames_per_score() -> None:
    d = metrics.mos_distribution([40.0, 38.0, 35.0, 30.0, math.inf, 10.0, 20.0, 37.0])
    assert d == {1: 1 / 8, 2: 1 / 8, 3: 1 / 8, 4: 2 / 8, 5: 3 / 8}
    assert sum(d.values()) == pytest.approx(1.0)
    with pytest.raises(MetricError):
        metrics.mos_distribution([])


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    sigma=st.floats(0.5, 40.0),
    factor=st.floats(1.5, 4.0),
)
def test_psnr_falls_as_noise_grows(seed: int, sigma: float, factor: float) -> None:
    rng = np.random.default_rng(seed)
    ref = np.full((32, 32), 128.0)
    noise = rng.standard_normal((32, 32))
    noise -= noise.mean()
    if not np.any(noise):
        return
    # The same noise pattern, scaled: the MSE grows by factor², the PSNR falls by 20·log10(factor).
    lo = metrics.psnr(ref, ref + sigma * noise)
    hi = metrics.psnr(ref, ref + sigma * factor * noise)
    assert hi < lo
    assert lo - hi == pytest.approx(20 * math.log10(factor), rel=1e-9)


@settings(deadline=None)  # the monotonicity is checked, not the speed (see test_sweep.py)
@given(a=st.floats(-100.0, 200.0), b=st.floats(-100.0, 200.0))
def test_mos_is_monotone_in_psnr(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert 1 <= metrics.mos_from_psnr(lo) <= metrics.mos_from_psnr(hi) <= 5


def test_read_yuv420_luma_takes_the_y_plane_of_each_frame(tmp_path) -> None:
    w, h, n = 8, 6, 3
    frames = []
    for k in range(n):
        y = np.full((h, w), 10 * k, dtype=np.uint8)
        y[0, 0] = 200 + k
        chroma = np.full(w * h // 2, 77 + k, dtype=np.uint8)  # U and V, each W·H/4
        frames.append(np.concatenate([y.ravel(), chroma]))
    path = tmp_path / "clip.yuv"
    np.concatenate(frames).tofile(path)
    luma = metrics.read_yuv420_luma(path, w, h)
    assert luma.shape == (n, h, w)
    assert luma.dtype == np.uint8
    for k in range(n):
        assert luma[k, 0, 0] == 200 + k
        assert luma[k, 1, 1] == 10 * k
        assert luma[k, -1, -1] == 10 * k  # no chroma byte leaks into the plane


def test_read_yuv420_luma_rejects_a_partial_frame_and_odd_sizes(tmp_path) -> None:
    path = tmp_path / "short.yuv"
    np.zeros(8 * 6 * 3 // 2 + 1, dtype=np.uint8).tofile(path)
    with pytest.raises(ValueError, match="whole number"):
        metrics.read_yuv420_luma(path, 8, 6)
    with pytest.raises(ValueError):
        metrics.read_yuv420_luma(path, 7, 6)
