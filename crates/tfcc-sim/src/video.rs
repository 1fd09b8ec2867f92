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
//!
//! With [`VideoConfig::adapt`] the codec is Vic's of 002 Sec. 6.2, coupled to the send buffer
//! by [`tfcc_core::send_buffer_control`]: at each frame time the simulator tells the source
//! what the sender still holds ([`VideoSource::frame_due`]); a frame Algorithm 4 suspends is
//! not grabbed (the frame clock and the clip run on, as Vic's file grabber skips a frame of
//! the sequence), and a grabbed frame's size is scaled from its `q = q_ref` size by the
//! quantizer Algorithm 5 chose ([`VicCoupling::q_exponent`]).

use crate::rng::SimRng;
use tfcc_core::send_buffer_control::{FrameDecision, SendBufferConfig, SendBufferControl};
use tfcc_core::{Rate, Time};

/// Vic's send-buffer coupling of a video source (`source = { ..., adapt = "vic" }`).
#[derive(Clone, Debug, PartialEq)]
pub struct VicCoupling {
    /// Algorithms 4 and 5 and the `numAvg` history (002 Sec. 6.2, App. C).
    pub control: SendBufferConfig,
    /// The quantizer at which the frames have the source's sizes (`rate`, `gop`, noise): 10,
    /// Vic's default, the q of the thesis' "approximately 1.5 Mb/s" foreman run (Sec. 6.2.1).
    pub q_ref: u8,
    /// The frame-size model, a reading (002 gives none; Fig. 6.8 only shows that bit rate
    /// falls as q rises): bytes(q) = bytes(q_ref)·(q_ref/q)^q_exponent. 1: bits inversely
    /// proportional to the quantizer step, MPEG-2 Test Model 5's rate model (Ch. 10: a
    /// picture's "global complexity" `X = S·Q`, bits times mean quantizer, is what carries over
    /// from picture to picture), which applies to H.261 because its QUANT is a linear step
    /// size (2·QUANT) shared by every coefficient (Sec. 6.2.2 fn. 9). With q fixed at `q_ref`
    /// the model has no effect.
    pub q_exponent: f64,
    /// The flow's packet size, bytes: the send buffer's length and a frame's `num[n]` are
    /// counted in packets of this size, rounded up (the flow's `packet_size`).
    pub packet_size: u32,
}

impl Default for VicCoupling {
    fn default() -> Self {
        VicCoupling {
            control: SendBufferConfig::default(),
            q_ref: 10,       // Sec. 6.2.1: Vic's q = 10
            q_exponent: 1.0, // TM5's X = S·Q: a reading
            packet_size: 1000,
        }
    }
}

impl VicCoupling {
    pub fn validate(&self) -> Result<(), String> {
        self.control.validate().map_err(|m| format!("adapt: {m}"))?;
        let c = &self.control;
        if !(c.q_min..=c.q_max).contains(&self.q_ref) {
            return Err(format!(
                "q_ref must be in [q_min, q_max] = [{}, {}], got {}",
                c.q_min, c.q_max, self.q_ref
            ));
        }
        if !(self.q_exponent.is_finite() && self.q_exponent >= 0.0) {
            return Err(format!(
                "q_exponent must be non-negative, got {}",
                self.q_exponent
            ));
        }
        if self.packet_size == 0 {
            return Err("packet_size must be positive".into());
        }
        Ok(())
    }

    /// A frame of `bytes` at `q_ref` encoded at `q`.
    pub fn scaled(&self, bytes: f64, q: u8) -> f64 {
        bytes * (f64::from(self.q_ref) / f64::from(q.max(1))).powf(self.q_exponent)
    }

    /// `bytes` in whole packets.
    pub fn packets(&self, bytes: u64) -> u64 {
        bytes.div_ceil(u64::from(self.packet_size.max(1)))
    }
}

/// One frame slot of the clip as the source met it: its index on the frame grid (frame `k`
/// at `start + k/fps`; frames in a pause have no slot), its time, and, if grabbed, its bytes
/// and the quantizer it was coded at (`None` for an uncoupled source, which has no q).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSlot {
    pub index: u64,
    pub time: Time,
    pub grabbed: Option<(u64, Option<u8>)>,
}

/// A video source's frame counts since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VideoCounts {
    /// Frames that came due (not in a pause).
    pub frames_due: u64,
    /// Of those, frames grabbed and offered to the sender.
    pub frames_grabbed: u64,
    /// Sum of the grabbed frames' quantizers (coupled sources only; 0 otherwise).
    pub q_sum: u64,
}

/// The largest frame a video source may produce: 4 GiB. A frame's bytes are a `u64` count
/// and the sender's send buffer sums them; `adapt.q_exponent = 1e30` made a frame of
/// `u64::MAX` bytes and the source's byte count overflowed at the next one (a panic). No codec
/// makes a frame that size, so the source refuses it instead of clamping it.
pub const MAX_FRAME_BYTES: u64 = u32::MAX as u64;

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
    /// Vic's send-buffer coupling (002 Sec. 6.2): `None` (the default) offers every frame at
    /// its size, whatever the sender still holds.
    pub adapt: Option<VicCoupling>,
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
            adapt: None,
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
        if let Some(a) = &self.adapt {
            a.validate()?;
        }
        let largest = self.largest_frame();
        if largest > MAX_FRAME_BYTES as f64 {
            return Err(format!(
                "the largest frame would be {largest:.3e} bytes (rate/(8·fps) × the I-frame's \
                 share × the noise's top{}); at most {MAX_FRAME_BYTES} (4 GiB): lower rate{}",
                if self.adapt.is_some() {
                    " × (q_ref/q_min)^q_exponent"
                } else {
                    ""
                },
                if self.adapt.is_some() {
                    " or adapt.q_exponent"
                } else {
                    ""
                },
            ));
        }
        Ok(())
    }

    /// The largest frame the source can produce, in bytes: the I-frame (or, with
    /// `i_frame_ratio` below 1, a P-frame) at the noise's top and, coupled, at `q_min`.
    pub fn largest_frame(&self) -> f64 {
        let (i_weight, weight) = self.frame_weights();
        let noise = 1.0 + self.noise_span();
        let scale = self
            .adapt
            .as_ref()
            .map_or(1.0, |a| a.scaled(1.0, a.control.q_min.min(a.q_ref)));
        self.mean_frame() * i_weight.max(weight) * noise * scale
    }

    /// The size weights of a GOP's I-frame and of each of its other frames: one I-frame of
    /// weight r·w and g − 1 frames of weight w have mean 1 when w = g/(r + g − 1).
    fn frame_weights(&self) -> (f64, f64) {
        let g = f64::from(self.gop.max(1));
        let w = g / (self.i_frame_ratio + g - 1.0);
        (self.i_frame_ratio * w, w)
    }

    /// Half the width of the uniform noise on a frame's size, `√3·size_cv`: a uniform on
    /// `1 ± a` has the CV `a/√3`.
    fn noise_span(&self) -> f64 {
        3f64.sqrt() * self.size_cv
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
    /// The coupling's state, with [`VideoConfig::adapt`].
    control: Option<SendBufferControl>,
    counts: VideoCounts,
}

impl VideoSource {
    /// A source whose frame 0 is at `start`, with its own random stream `rng`.
    pub fn new(cfg: VideoConfig, start: Time, rng: SimRng) -> VideoSource {
        VideoSource {
            control: cfg
                .adapt
                .as_ref()
                .map(|a| SendBufferControl::new(a.control.clone())),
            cfg,
            start,
            k: 0,
            rng,
            produced: 0,
            counts: VideoCounts::default(),
        }
    }

    /// Frames due and grabbed so far.
    pub fn counts(&self) -> VideoCounts {
        self.counts
    }

    /// The coupling's state, for a coupled source.
    pub fn control(&self) -> Option<&SendBufferControl> {
        self.control.as_ref()
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

    /// The frame due at [`Self::next_time`] when the sender still holds `buffered` bytes
    /// (`None`: it cannot tell, taken as empty): its size in bytes, or `None` if the coupling
    /// skips it (Algorithm 4). Advances either way. An uncoupled source grabs every frame at
    /// its size ([`Self::take_frame`]).
    pub fn frame_due(&mut self, buffered: Option<u64>) -> Option<u64> {
        self.frame_slot(buffered).grabbed.map(|g| g.0)
    }

    /// [`Self::frame_due`] with the frame's place on the clip and its quantizer: the slot
    /// `frames.parquet` records ([`crate::frames`]).
    pub fn frame_slot(&mut self, buffered: Option<u64>) -> FrameSlot {
        let time = self.next_time();
        let index = self.k;
        let grabbed = self.grab(buffered);
        FrameSlot {
            index,
            time,
            grabbed,
        }
    }

    /// The frame due now: `(bytes, q)`, or `None` if Algorithm 4 suspends it.
    fn grab(&mut self, buffered: Option<u64>) -> Option<(u64, Option<u8>)> {
        if self.control.is_none() {
            return Some((self.take_frame(), None));
        }
        // The clip's frame is drawn either way, so a skipped frame is that frame of the
        // sequence missed, and the frames after it are the same whatever was skipped.
        let raw = self.raw_frame();
        let (Some(a), Some(ctl)) = (&self.cfg.adapt, &mut self.control) else {
            unreachable!("a source has a controller exactly when its config has `adapt`")
        };
        let sbuf = a.packets(buffered.unwrap_or(0));
        self.counts.frames_due += 1;
        match ctl.on_frame_due(sbuf) {
            FrameDecision::Skip => None,
            FrameDecision::Grab { q } => {
                let bytes = a.scaled(raw, q).round().max(1.0) as u64;
                let n = a.packets(bytes);
                // Encoding takes no time here: the buffer at its end is the one at its start
                // plus the frame (App. C's end(n)).
                ctl.on_frame_encoded(n, sbuf + n);
                self.counts.frames_grabbed += 1;
                self.counts.q_sum += u64::from(q);
                self.produced += bytes;
                Some((bytes, Some(q)))
            }
        }
    }

    /// The frame due at [`Self::next_time`]: its size in bytes (at least 1); advances.
    pub fn take_frame(&mut self) -> u64 {
        let bytes = self.raw_frame().round().max(1.0) as u64;
        self.counts.frames_due += 1;
        self.counts.frames_grabbed += 1;
        self.produced += bytes;
        bytes
    }

    /// The size the codec gives the frame due at [`Self::next_time`], unrounded; advances.
    fn raw_frame(&mut self) -> f64 {
        let _ = self.next_time();
        let c = &self.cfg;
        let (i_weight, w) = c.frame_weights();
        let weight = if self.k % u64::from(c.gop.max(1)) == 0 {
            i_weight
        } else {
            w
        };
        let a = c.noise_span();
        let noise = 1.0 - a + 2.0 * a * self.rng.uniform();
        self.k += 1;
        c.mean_frame() * weight * noise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl VideoConfig {
        fn with_adapt(mut self, on: bool) -> VideoConfig {
            if !on {
                self.adapt = None;
            }
            self
        }
    }

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

    fn coupled(control: SendBufferConfig) -> VideoConfig {
        VideoConfig {
            gop: 1,
            rate: Rate::from_bps(1_500_000),
            fps: 30.0,
            size_cv: 0.0,
            adapt: Some(VicCoupling {
                control,
                ..VicCoupling::default()
            }),
            ..VideoConfig::default()
        }
    }

    fn fixed_q() -> SendBufferConfig {
        SendBufferConfig {
            quantizer_control: false,
            ..SendBufferConfig::default()
        }
    }

    /// Frames of 6250 B are 7 packets of 1000 B; 5 frames are 35 packets. Grabbing stops
    /// above that and resumes at or below it; the clip runs on under the skipped frames.
    #[test]
    fn a_coupled_source_skips_frames_while_the_buffer_holds_over_five() {
        let mut v = source(coupled(fixed_q()));
        assert_eq!(v.frame_due(Some(0)), Some(6250));
        assert_eq!(v.frame_due(Some(35_000)), Some(6250));
        assert_eq!(v.frame_due(Some(35_001)), None);
        assert_eq!(v.frame_due(None), Some(6250));
        let c = v.counts();
        assert_eq!((c.frames_due, c.frames_grabbed, c.q_sum), (4, 3, 30));
        assert_eq!(v.produced(), 3 * 6250);
        // Frame 4 is on the grid after the skipped frame 2.
        assert_eq!(
            v.next_time(),
            Time::from_secs(1) + tfcc_core::Dur::from_secs_f64(4.0 / 30.0)
        );
    }

    /// With the size noise on, the grabbed frames are the uncoupled source's frames at the
    /// same indices: a skip takes its frame's draw with it.
    #[test]
    fn skipping_leaves_the_other_frames_as_they_were() {
        let noisy = |adapt| {
            VideoConfig {
                size_cv: 0.2,
                ..coupled(fixed_q())
            }
            .with_adapt(adapt)
        };
        let mut plain = source(noisy(false));
        let mut v = source(noisy(true));
        let all: Vec<u64> = (0..6).map(|_| plain.take_frame()).collect();
        let mut got = Vec::new();
        for k in 0..6 {
            // Fill the buffer past 5 frames at frames 2 and 3.
            let buffered = if k == 2 || k == 3 { 10_000_000 } else { 0 };
            got.push(v.frame_due(Some(buffered)));
        }
        assert_eq!(got[2], None);
        assert_eq!(got[3], None);
        for k in [0, 1, 4, 5] {
            assert_eq!(got[k], Some(all[k]), "frame {k}");
        }
    }

    /// Algorithm 5 moves q; the frame size follows bytes(q) = bytes(10)·10/q.
    #[test]
    fn frame_size_scales_inversely_with_the_quantizer() {
        let mut v = source(coupled(SendBufferConfig::default()));
        // First frame at q = 10, numAvg 7; an empty buffer then lowers q by one per frame.
        assert_eq!(v.frame_due(Some(0)), Some(6250));
        assert_eq!(v.frame_due(Some(0)), Some(6944)); // q = 9: 6250·10/9
        assert_eq!(v.frame_due(Some(0)), Some(7813)); // q = 8
                                                      // A buffer above 3.5·numAvg packets raises q by 2: 8 → 10.
        assert_eq!(v.frame_due(Some(30_000)), Some(6250));
        assert_eq!(v.control().unwrap().quantizer(), 10);
        let c = v.counts();
        assert_eq!(c.q_sum, 10 + 9 + 8 + 10);
    }

    #[test]
    fn an_uncoupled_source_offers_every_frame_whatever_the_buffer() {
        let mut v = source(VideoConfig::default());
        for _ in 0..30 {
            assert!(v.frame_due(Some(u64::MAX / 2)).is_some());
        }
        assert!(v.control().is_none());
        assert_eq!(v.counts().frames_grabbed, 30);
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
        assert!(bad(|c| c.adapt = Some(VicCoupling {
            q_ref: 40,
            ..VicCoupling::default()
        })));
        assert!(bad(|c| c.adapt = Some(VicCoupling {
            packet_size: 0,
            ..VicCoupling::default()
        })));
    }
}
