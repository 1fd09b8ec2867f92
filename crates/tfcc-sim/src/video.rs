//! An application-limited source: a video codec that hands its sender one frame every `1/fps`
//! seconds, of varying size, with optional silent periods (issue 5: TFRC for the media
//! engineer's streams, which have less to send than the allowed rate most of the time).
//!
//! The simulator calls the sender's [`tfcc_core::endpoint::Sender::offer`] with each frame's
//! bytes at the frame's time and polls it at once, as the web and SURGE workloads do for their
//! TCP transfers. The model is synthetic, not a trace (no thesis prescribes one): frame `k`
//! leaves the codec at `start + k/fps`; its size is the mean frame `rate/(8·fps)` times a
//! group-of-pictures weight (the first frame of every `gop` is an I-frame `i_frame_ratio`
//! times the size of the others, scaled so a GOP's mean is the mean frame) times a
//! multiplicative uniform noise of mean 1 and coefficient of variation `size_cv`. Frames whose
//! time falls in a pause are not produced (the codec is silent); the frame clock runs on, so
//! the stream resumes on its grid.

use crate::rng::SimRng;
use tfcc_core::{Rate, Time};

/// The video source's parameters (`source = { kind = "video", ... }` in a scenario).
#[derive(Clone, Debug, PartialEq)]
pub struct VideoConfig {
    /// Frames per second: 25 (PAL; 30 for NTSC-rate streams).
    pub fps: f64,
    /// Mean payload rate of the encoded stream, bit/s (the codec's target bitrate).
    pub rate: Rate,
    /// Frames per group of pictures, the first an I-frame: 12 (a common MPEG-2 GOP). 1 makes
    /// every frame alike.
    pub gop: u32,
    /// Size of an I-frame relative to the other frames of its GOP: 3.
    pub i_frame_ratio: f64,
    /// Coefficient of variation of the frame-size noise: 0.2; at most `1/√3` (the noise is
    /// uniform on `[1 − √3·cv, 1 + √3·cv]`, which must stay positive).
    pub size_cv: f64,
    /// `[start, end)` periods, in run time, in which the codec produces nothing.
    pub pauses: Vec<(Time, Time)>,
}

impl Default for VideoConfig {
    fn default() -> Self {
        VideoConfig {
            fps: 25.0,
            rate: Rate::from_mbps(1),
            gop: 12,
            i_frame_ratio: 3.0,
            size_cv: 0.2,
            pauses: Vec::new(),
        }
    }
}

impl VideoConfig {
    /// Checks every field; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.fps.is_finite() && self.fps > 0.0 && self.fps <= 1000.0) {
            return Err(format!("fps must be in (0, 1000], got {}", self.fps));
        }
        if self.rate.bps() == 0 {
            return Err("rate must be positive".into());
        }
        if self.gop == 0 {
            return Err("gop must be at least 1".into());
        }
        if !(self.i_frame_ratio.is_finite() && self.i_frame_ratio > 0.0) {
            return Err(format!(
                "i_frame_ratio must be positive, got {}",
                self.i_frame_ratio
            ));
        }
        if !(0.0..=1.0 / 3f64.sqrt()).contains(&self.size_cv) {
            return Err(format!(
                "size_cv must be in [0, 0.577], got {}",
                self.size_cv
            ));
        }
        for &(a, b) in &self.pauses {
            if b <= a {
                return Err(format!(
                    "a pause must end after it starts, got [{}, {}]",
                    a.as_secs_f64(),
                    b.as_secs_f64()
                ));
            }
        }
        Ok(())
    }

    /// The mean frame size in bytes, `rate/(8·fps)`.
    pub fn mean_frame(&self) -> f64 {
        self.rate.bps() as f64 / 8.0 / self.fps
    }
}

/// A running video source: yields `(time, bytes)` frame by frame.
#[derive(Clone, Debug)]
pub struct VideoSource {
    cfg: VideoConfig,
    start: Time,
    /// Index of the next frame on the grid.
    k: u64,
    rng: SimRng,
    /// Bytes produced so far.
    produced: u64,
}

impl VideoSource {
    /// A source whose frame 0 is at `start`, with its own random stream `rng`.
    pub fn new(cfg: VideoConfig, start: Time, rng: SimRng) -> VideoSource {
        VideoSource {
            cfg,
            start,
            k: 0,
            rng,
            produced: 0,
        }
    }

    pub fn config(&self) -> &VideoConfig {
        &self.cfg
    }

    /// Bytes produced so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// The time of frame `k`: `start + k/fps`, from the frame index so it never drifts.
    fn frame_time(&self, k: u64) -> Time {
        self.start + tfcc_core::Dur::from_secs_f64(k as f64 / self.cfg.fps)
    }

    fn paused(&self, t: Time) -> bool {
        self.cfg.pauses.iter().any(|&(a, b)| t >= a && t < b)
    }

    /// When the next frame is due (frames in a pause are skipped).
    pub fn next_time(&mut self) -> Time {
        while self.paused(self.frame_time(self.k)) {
            self.k += 1;
        }
        self.frame_time(self.k)
    }

    /// The frame due at [`Self::next_time`]: its size in bytes (at least 1); advances.
    pub fn take_frame(&mut self) -> u64 {
        let _ = self.next_time();
        let c = &self.cfg;
        let g = u64::from(c.gop.max(1));
        // A GOP of one I-frame of weight r·w and g − 1 frames of weight w has mean 1 when
        // w = g/(r + g − 1).
        let w = g as f64 / (c.i_frame_ratio + g as f64 - 1.0);
        let weight = if self.k % g == 0 {
            c.i_frame_ratio * w
        } else {
            w
        };
        let a = 3f64.sqrt() * c.size_cv;
        let noise = 1.0 - a + 2.0 * a * self.rng.uniform();
        let bytes = (c.mean_frame() * weight * noise).round().max(1.0) as u64;
        self.k += 1;
        self.produced += bytes;
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(cfg: VideoConfig) -> VideoSource {
        VideoSource::new(cfg, Time::from_secs(1), SimRng::named(7, "video"))
    }

    #[test]
    fn frames_come_every_one_over_fps_at_the_mean_rate() {
        let mut v = source(VideoConfig::default());
        let mut t = Vec::new();
        let mut bytes = 0;
        for _ in 0..2500 {
            t.push(v.next_time());
            bytes += v.take_frame();
        }
        assert_eq!(t[0], Time::from_secs(1));
        assert_eq!(t[25], Time::from_secs(2));
        assert_eq!(t[1] - t[0], tfcc_core::Dur::from_millis(40));
        // 100 s of 1 Mb/s: 12.5 MB, within 1 % (the noise averages out).
        let want = 12_500_000.0;
        assert!((bytes as f64 - want).abs() < 0.01 * want, "{bytes}");
        assert_eq!(v.produced(), bytes);
    }

    #[test]
    fn i_frames_are_larger_by_the_ratio() {
        let mut v = source(VideoConfig {
            size_cv: 0.0,
            ..VideoConfig::default()
        });
        let sizes: Vec<u64> = (0..24).map(|_| v.take_frame()).collect();
        // Mean frame 5000 B; w = 12/14: P-frames 4286 B, I-frames 12 857 B.
        assert_eq!(sizes[0], 12_857);
        assert_eq!(sizes[1], 4_286);
        assert_eq!(sizes[12], 12_857);
        let gop: u64 = sizes[..12].iter().sum();
        assert!((gop as f64 - 60_000.0).abs() <= 6.0, "{gop}");
    }

    #[test]
    fn no_frames_during_a_pause_and_the_grid_resumes() {
        let mut v = source(VideoConfig {
            pauses: vec![(Time::from_secs(2), Time::from_secs(7))],
            ..VideoConfig::default()
        });
        let mut times = Vec::new();
        for _ in 0..30 {
            times.push(v.next_time());
            v.take_frame();
        }
        // 25 frames in [1, 2), then the first at 7 s.
        assert_eq!(
            times[24],
            Time::from_secs(1) + tfcc_core::Dur::from_millis(960)
        );
        assert_eq!(times[25], Time::from_secs(7));
        assert!(times
            .iter()
            .all(|&t| t < Time::from_secs(2) || t >= Time::from_secs(7)));
    }

    #[test]
    fn bad_values_are_rejected() {
        let bad = |f: fn(&mut VideoConfig)| {
            let mut c = VideoConfig::default();
            f(&mut c);
            c.validate().is_err()
        };
        VideoConfig::default().validate().unwrap();
        assert!(bad(|c| c.fps = 0.0));
        assert!(bad(|c| c.gop = 0));
        assert!(bad(|c| c.size_cv = 0.6));
        assert!(bad(|c| c.i_frame_ratio = -1.0));
        assert!(bad(
            |c| c.pauses = vec![(Time::from_secs(3), Time::from_secs(3))]
        ));
    }
}
