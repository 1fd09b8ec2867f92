//! Vic's send-buffer coupling of 002 Sec. 6.2 and App. C: the grabber skips frames while the
//! send buffer holds more than 5 frames (Algorithm 4) and the codec moves its quantizer with the
//! send-buffer length at the start of every frame encoding (Algorithm 5), both measured in
//! packets against the average packets per frame of the last `K` frames (App. C, Eq. C.2).
//!
//! Sans-IO like the rest of the crate: no clock, no socket, no codec. The caller (a media
//! sender, or the simulator's video source) drives it once per frame time:
//!
//! 1. [`SendBufferControl::on_frame_due`] with the send buffer's length in packets as the frame
//!    comes due; it answers [`FrameDecision::Skip`] (suspend grabbing, Algorithm 4) or
//!    [`FrameDecision::Grab`] with the quantizer to encode this frame with (Algorithm 5).
//! 2. After a grab, [`SendBufferControl::on_frame_encoded`] with the packets the frame produced
//!    (`num[n]`) and the send buffer's length at the end of the encoding (`end(n)`).
//!
//! A higher quantizer means coarser quantization and fewer bits (002 Sec. 6.2.2); how many is
//! the codec's business, not this module's.

use std::collections::VecDeque;

use serde::Deserialize;

/// The coupling's constants, each from 002 where the thesis gives it.
///
/// The defaults are Vic's H.261 sender of 002 Ch. 6 (30 fps, q = 10, frames of 5-7 packets of
/// 1000 B on a 10 Mb/s, 40 ms Dummynet path).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SendBufferConfig {
    /// Algorithm 4 (frame-rate control, 002 Sec. 6.2.1): skip grabbing while the buffer is over
    /// [`Self::limit_frames`]. On.
    pub frame_rate_control: bool,
    /// Algorithm 5 (frame-size control, 002 Sec. 6.2.2): move the quantizer every frame. On.
    /// Off keeps q at [`Self::q_initial`] for the session, as Vic does by default ("q is
    /// normally fixed", Sec. 6.2.2) and as the Fig. 6.6-6.7 runs of Sec. 6.2.1 do.
    pub quantizer_control: bool,
    /// The send-buffer limit of Algorithm 4, in frames: 5. Sec. 6.2.1 fn. 8: a frame of 7
    /// packets of 1000 B takes 0.037 s at 1.5 Mb/s, so within the 200 ms of an interactive
    /// session "the buffer can hold up to 5 frames" ("a soft lower bound"). A frame is
    /// `numAvg` packets (Eq. C.2), so the limit is `limit_frames · numAvg` packets.
    pub limit_frames: f64,
    /// Whether the buffer at exactly the limit already suspends grabbing. `false`: Algorithm 4
    /// line 4 is `sbuf > 5 frames`. The prose beside Fig. 6.7 says "when the send buffer
    /// exceeds its length containing 5 or more frames", which is `true`; the algorithm is the
    /// thesis' statement of the rule, so it is the default.
    pub limit_inclusive: bool,
    /// Algorithm 5 line 4: at most `low · numAvg` packets in the buffer lowers q by
    /// [`Self::step_down`]. 1.
    pub low: f64,
    /// Algorithm 5 line 6: above `low · numAvg` and at most `high · numAvg` raises q by
    /// [`Self::step_up`]; above, by [`Self::step_up_fast`]. 3.5.
    pub high: f64,
    /// Algorithm 5 line 5 (`quantizer--`): 1.
    pub step_down: u8,
    /// Algorithm 5 line 7 (`quantizer++`): 1.
    pub step_up: u8,
    /// Algorithm 5 line 9 (`quantizer += 2`): 2.
    pub step_up_fast: u8,
    /// Smallest quantizer: 1, H.261's range of QUANT (1..31; Sec. 6.2.2 fn. 9: one quantizer
    /// for every DCT coefficient). Algorithm 5 prints no bound; q is clamped to the codec's.
    pub q_min: u8,
    /// Largest quantizer: 31 (H.261's QUANT is 5 bits).
    pub q_max: u8,
    /// The quantizer at the start: 10, "the codec's q factor is set to 10" (Sec. 6.2.1, Vic's
    /// default).
    pub q_initial: u8,
    /// `K` of Eq. C.2, the frames `numAvg` averages over: 30. The thesis calls K "the maximum
    /// history size" and gives no value; 30 is a reading: one second of frames at the 30 fps
    /// of every Ch. 6 run, short enough to follow Algorithm 5's q changes within a second and
    /// long enough to smooth the 5-7-packet spread of Sec. 6.2.1's frames. Until K frames have
    /// been encoded the mean is over those there are.
    pub history: usize,
}

impl Default for SendBufferConfig {
    fn default() -> Self {
        SendBufferConfig {
            frame_rate_control: true, // Algorithm 4
            quantizer_control: true,  // Algorithm 5
            limit_frames: 5.0,        // Sec. 6.2.1 fn. 8, Algorithm 4 line 4
            limit_inclusive: false,   // Algorithm 4 line 4: `>`
            low: 1.0,                 // Algorithm 5 line 4
            high: 3.5,                // Algorithm 5 line 6
            step_down: 1,             // Algorithm 5 line 5
            step_up: 1,               // Algorithm 5 line 7
            step_up_fast: 2,          // Algorithm 5 line 9
            q_min: 1,                 // H.261 QUANT
            q_max: 31,                // H.261 QUANT
            q_initial: 10,            // Sec. 6.2.1: Vic's q = 10
            history: 30,              // Eq. C.2's K: a reading (one second at 30 fps)
        }
    }
}

impl SendBufferConfig {
    /// Checks every field; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.limit_frames.is_finite() && self.limit_frames > 0.0) {
            return Err(format!(
                "limit_frames must be positive, got {}",
                self.limit_frames
            ));
        }
        if !(self.low.is_finite() && self.low >= 0.0) {
            return Err(format!("low must be non-negative, got {}", self.low));
        }
        if !(self.high.is_finite() && self.high >= self.low) {
            return Err(format!(
                "high must be at least low ({}), got {}",
                self.low, self.high
            ));
        }
        if self.q_min == 0 || self.q_min > self.q_max {
            return Err(format!(
                "need 1 <= q_min <= q_max, got {} and {}",
                self.q_min, self.q_max
            ));
        }
        if !(self.q_min..=self.q_max).contains(&self.q_initial) {
            return Err(format!(
                "q_initial must be in [q_min, q_max] = [{}, {}], got {}",
                self.q_min, self.q_max, self.q_initial
            ));
        }
        if self.history == 0 {
            return Err("history (K) must be at least 1".into());
        }
        Ok(())
    }
}

/// What to do with the frame that is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum FrameDecision {
    /// Grab and encode it with quantizer `q`, then report it with
    /// [`SendBufferControl::on_frame_encoded`].
    Grab { q: u8 },
    /// Suspend grabbing: the buffer holds more than the limit (Algorithm 4). The frame is not
    /// taken; the next one is asked about at its own time.
    Skip,
}

/// Counters since construction.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SendBufferStats {
    /// Frames that came due ([`SendBufferControl::on_frame_due`] calls).
    pub frames_due: u64,
    /// Of those, frames grabbed.
    pub frames_grabbed: u64,
    /// Of those, frames skipped by Algorithm 4.
    pub frames_skipped: u64,
    /// Sum of the quantizers the grabbed frames were encoded with (their mean is this over
    /// `frames_grabbed`).
    pub q_sum: u64,
    /// Packets the grabbed frames produced (`Σ num[n]`).
    pub packets_encoded: u64,
    /// Packets sent between encoding instances, Eq. C.1's `end(n) − begin(n+1)` summed.
    pub sent_between_frames: u64,
}

/// The coupling's state: the quantizer, the last `K` frames' packet counts, and the send-buffer
/// length at the end of the last encoding.
#[derive(Clone, Debug)]
pub struct SendBufferControl {
    cfg: SendBufferConfig,
    q: u8,
    /// `num[n]` of the last `K` encoded frames, oldest first (Eq. C.2).
    num: VecDeque<u64>,
    /// Their sum, kept so the mean costs nothing.
    num_sum: u64,
    /// `end(n)`: the send buffer's length at the end of the last encoding, if any.
    end: Option<u64>,
    stats: SendBufferStats,
}

impl SendBufferControl {
    /// A controller with `cfg`, which should have passed [`SendBufferConfig::validate`].
    pub fn new(cfg: SendBufferConfig) -> SendBufferControl {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        SendBufferControl {
            // max-then-min rather than `clamp`, which panics on a config that skipped validation.
            q: cfg.q_initial.max(cfg.q_min).min(cfg.q_max).max(1),
            num: VecDeque::with_capacity(cfg.history),
            num_sum: 0,
            end: None,
            stats: SendBufferStats::default(),
            cfg,
        }
    }

    pub fn config(&self) -> &SendBufferConfig {
        &self.cfg
    }

    /// The quantizer the next grabbed frame would start from.
    pub fn quantizer(&self) -> u8 {
        self.q
    }

    /// `numAvg`, Eq. C.2: the mean packets per frame over the last `K` encoded frames, with
    /// `K` terms (spec 002 §2.13 \[I\]: the printed sum from `i` to `K + i` has `K + 1`).
    /// `None` before the first frame is encoded.
    pub fn num_avg(&self) -> Option<f64> {
        if self.num.is_empty() {
            None
        } else {
            Some(self.num_sum as f64 / self.num.len() as f64)
        }
    }

    pub fn stats(&self) -> &SendBufferStats {
        &self.stats
    }

    /// Whether Algorithm 4 suspends grabbing with `sbuf` packets in the send buffer. Never
    /// before the first frame: with no `numAvg` "5 frames" has no length yet (the buffer is
    /// then empty anyway, as nothing was encoded).
    pub fn suspends(&self, sbuf: u64) -> bool {
        let Some(avg) = self.num_avg() else {
            return false;
        };
        let limit = self.cfg.limit_frames * avg;
        let s = sbuf as f64;
        if self.cfg.limit_inclusive {
            s >= limit
        } else {
            s > limit
        }
    }

    /// A frame is due with `sbuf` packets in the send buffer: Algorithm 4 (if on) decides to
    /// grab or skip; on a grab Algorithm 5 (if on) moves the quantizer from the same `sbuf`
    /// ("on starting every frame encoding instance") and the answer carries the new q.
    pub fn on_frame_due(&mut self, sbuf: u64) -> FrameDecision {
        self.stats.frames_due += 1;
        if let Some(end) = self.end.take() {
            // Eq. C.1: what left the buffer since the last encoding ended.
            self.stats.sent_between_frames += end.saturating_sub(sbuf);
        }
        if self.cfg.frame_rate_control && self.suspends(sbuf) {
            self.stats.frames_skipped += 1;
            // The buffer is looked at again at the next frame time: keep C.1's reference.
            self.end = Some(sbuf);
            return FrameDecision::Skip;
        }
        if self.cfg.quantizer_control {
            self.adjust_quantizer(sbuf);
        }
        self.stats.frames_grabbed += 1;
        self.stats.q_sum += u64::from(self.q);
        FrameDecision::Grab { q: self.q }
    }

    /// The frame just grabbed produced `packets` (`num[n]`), and `sbuf_after` packets were in
    /// the send buffer when its encoding ended (`end(n)`, Eq. C.1).
    pub fn on_frame_encoded(&mut self, packets: u64, sbuf_after: u64) {
        if self.num.len() == self.cfg.history {
            if let Some(old) = self.num.pop_front() {
                self.num_sum -= old;
            }
        }
        self.num.push_back(packets);
        self.num_sum += packets;
        self.stats.packets_encoded += packets;
        self.end = Some(sbuf_after);
    }

    /// Algorithm 5 with `sbuf` packets in the buffer; q stays within `[q_min, q_max]`. Before
    /// the first frame (no `numAvg`) q is left alone.
    fn adjust_quantizer(&mut self, sbuf: u64) {
        let Some(avg) = self.num_avg() else { return };
        let s = sbuf as f64;
        let c = &self.cfg;
        let q = if s <= c.low * avg {
            self.q.saturating_sub(c.step_down)
        } else if s <= c.high * avg {
            self.q.saturating_add(c.step_up)
        } else {
            self.q.saturating_add(c.step_up_fast)
        };
        self.q = q.max(c.q_min).min(c.q_max).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grab_q(d: FrameDecision) -> u8 {
        match d {
            FrameDecision::Grab { q } => q,
            FrameDecision::Skip => panic!("skipped"),
        }
    }

    /// A controller whose `numAvg` is `avg` (one frame of `avg` packets encoded).
    fn with_avg(cfg: SendBufferConfig, avg: u64) -> SendBufferControl {
        let mut c = SendBufferControl::new(cfg);
        let _ = c.on_frame_due(0);
        c.on_frame_encoded(avg, 0);
        c
    }

    fn q_only() -> SendBufferConfig {
        SendBufferConfig {
            frame_rate_control: false,
            ..SendBufferConfig::default()
        }
    }

    #[test]
    fn defaults_are_the_thesis_constants() {
        let c = SendBufferConfig::default();
        c.validate().unwrap();
        assert_eq!(c.limit_frames, 5.0);
        assert_eq!((c.low, c.high), (1.0, 3.5));
        assert_eq!((c.step_down, c.step_up, c.step_up_fast), (1, 1, 2));
        assert_eq!((c.q_min, c.q_initial, c.q_max), (1, 10, 31));
    }

    #[test]
    fn the_first_frame_is_grabbed_at_the_initial_quantizer() {
        let mut c = SendBufferControl::new(SendBufferConfig::default());
        assert_eq!(c.num_avg(), None);
        // No numAvg yet: neither algorithm has a yardstick.
        assert_eq!(c.on_frame_due(1000), FrameDecision::Grab { q: 10 });
    }

    /// Algorithm 5 at its thresholds, numAvg = 6: sbuf ≤ 6 → q − 1; 6 < sbuf ≤ 21 → q + 1;
    /// sbuf > 21 → q + 2.
    #[test]
    fn quantizer_steps_at_num_avg_and_three_and_a_half_num_avg() {
        for (sbuf, want) in [(0, 9), (6, 9), (7, 11), (21, 11), (22, 12), (200, 12)] {
            let mut c = with_avg(q_only(), 6);
            assert_eq!(grab_q(c.on_frame_due(sbuf)), want, "sbuf {sbuf}");
        }
        // 3.5 · numAvg need not be whole: numAvg 5 puts the line at 17.5.
        let mut c = with_avg(q_only(), 5);
        assert_eq!(grab_q(c.on_frame_due(17)), 11);
        let mut c = with_avg(q_only(), 5);
        assert_eq!(grab_q(c.on_frame_due(18)), 12);
    }

    #[test]
    fn quantizer_is_clamped_to_h261_range() {
        let mut c = with_avg(
            SendBufferConfig {
                q_initial: 1,
                ..q_only()
            },
            6,
        );
        assert_eq!(grab_q(c.on_frame_due(0)), 1);
        c.on_frame_encoded(6, 0);
        assert_eq!(grab_q(c.on_frame_due(0)), 1);
        let mut c = with_avg(
            SendBufferConfig {
                q_initial: 30,
                ..q_only()
            },
            6,
        );
        assert_eq!(grab_q(c.on_frame_due(100)), 31);
        c.on_frame_encoded(6, 100);
        assert_eq!(grab_q(c.on_frame_due(100)), 31);
        c.on_frame_encoded(6, 100);
        assert_eq!(grab_q(c.on_frame_due(7)), 31);
    }

    #[test]
    fn a_fixed_quantizer_never_moves() {
        let cfg = SendBufferConfig {
            quantizer_control: false,
            ..SendBufferConfig::default()
        };
        let mut c = with_avg(cfg, 6);
        for sbuf in [0, 6, 20, 30] {
            assert_eq!(grab_q(c.on_frame_due(sbuf)), 10);
            c.on_frame_encoded(6, sbuf + 6);
        }
    }

    /// Algorithm 4, numAvg = 6: 5 frames are 30 packets; 30 still grabs, 31 suspends, and
    /// grabbing resumes as soon as the buffer is back at 30.
    #[test]
    fn grabbing_is_suspended_above_five_frames_and_resumes_below() {
        let cfg = SendBufferConfig {
            quantizer_control: false,
            ..SendBufferConfig::default()
        };
        let mut c = with_avg(cfg.clone(), 6);
        assert_eq!(c.on_frame_due(30), FrameDecision::Grab { q: 10 });
        c.on_frame_encoded(6, 36);
        assert_eq!(c.on_frame_due(31), FrameDecision::Skip);
        assert_eq!(c.on_frame_due(36), FrameDecision::Skip);
        assert_eq!(c.on_frame_due(30), FrameDecision::Grab { q: 10 });
        let s = c.stats();
        assert_eq!(
            (s.frames_due, s.frames_grabbed, s.frames_skipped),
            (5, 3, 2)
        );
        // The prose's "5 or more frames" as the option: 30 suspends too.
        let mut c = with_avg(
            SendBufferConfig {
                limit_inclusive: true,
                ..cfg
            },
            6,
        );
        assert_eq!(c.on_frame_due(30), FrameDecision::Skip);
        assert_eq!(c.on_frame_due(29), FrameDecision::Grab { q: 10 });
    }

    #[test]
    fn a_skipped_frame_leaves_the_quantizer_alone() {
        let mut c = with_avg(SendBufferConfig::default(), 6);
        assert_eq!(c.on_frame_due(100), FrameDecision::Skip);
        assert_eq!(c.quantizer(), 10);
        // Algorithm 5 runs on the grab that follows: 25 > 3.5·6 = 21, so q + 2.
        assert_eq!(c.on_frame_due(25), FrameDecision::Grab { q: 12 });
    }

    #[test]
    fn frame_rate_control_off_never_skips() {
        let mut c = with_avg(
            SendBufferConfig {
                frame_rate_control: false,
                quantizer_control: false,
                ..SendBufferConfig::default()
            },
            6,
        );
        assert_eq!(c.on_frame_due(10_000), FrameDecision::Grab { q: 10 });
    }

    /// Eq. C.2 with K terms: the mean of the last K frames' packet counts.
    #[test]
    fn num_avg_is_the_mean_of_the_last_k_frames() {
        let mut c = SendBufferControl::new(SendBufferConfig {
            history: 3,
            ..q_only()
        });
        for (n, want) in [(6, 6.0), (3, 4.5), (9, 6.0), (12, 8.0), (3, 8.0)] {
            let _ = c.on_frame_due(0);
            c.on_frame_encoded(n, 0);
            assert_eq!(c.num_avg(), Some(want), "after {n}");
        }
        assert_eq!(c.stats().packets_encoded, 33);
    }

    /// App. C's example: cwnd 4, a frame of 6 packets leaves 2 in the buffer at the end of
    /// encoding; if the next encoding starts with 0 left, 2 more were sent in between (C.1).
    #[test]
    fn packets_sent_between_encodings_follow_eq_c1() {
        let mut c = SendBufferControl::new(SendBufferConfig::default());
        let _ = c.on_frame_due(0);
        c.on_frame_encoded(6, 2);
        let _ = c.on_frame_due(0);
        assert_eq!(c.stats().sent_between_frames, 2);
        c.on_frame_encoded(6, 5);
        let _ = c.on_frame_due(4);
        assert_eq!(c.stats().sent_between_frames, 3);
    }

    #[test]
    fn bad_values_are_rejected() {
        let bad = |f: fn(&mut SendBufferConfig)| {
            let mut c = SendBufferConfig::default();
            f(&mut c);
            c.validate().is_err()
        };
        assert!(bad(|c| c.limit_frames = 0.0));
        assert!(bad(|c| c.high = 0.5));
        assert!(bad(|c| c.q_min = 0));
        assert!(bad(|c| c.q_initial = 40));
        assert!(bad(|c| c.history = 0));
    }
}
