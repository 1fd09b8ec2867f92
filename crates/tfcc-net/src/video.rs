//! Feeding an application-limited sender from a video source over real time (issue 5).
//!
//! The frame model is the simulator's, [`tfcc_sim::video`] (one model for both: given its own
//! seeded random stream it says which frame of which size is due when). [`VideoFeed`] offers
//! each frame's bytes to a [`Session`]'s sender ([`Session::offer`]) at the frame's time;
//! the driver runs the session between frames up to [`VideoFeed::next_time`]. `tfcc send
//! --source video` and the testbed's video flows use it.
//!
//! A coupled source (`adapt`, Vic's send-buffer coupling of 002 Sec. 6.2) is told what the
//! sender still holds at each frame ([`Sender::buffered`]) through the simulator's own
//! [`VideoSource::frame_due`], so it skips and scales frames as it does there.

use tfcc_core::endpoint::Sender;
use tfcc_core::Time;
use tfcc_sim::video::{VideoCounts, VideoSource};

use crate::Session;

/// A video source and what it has offered so far.
#[derive(Clone, Debug)]
pub struct VideoFeed {
    src: VideoSource,
    frames: u64,
    bytes: u64,
}

impl VideoFeed {
    /// Feeds from `src`, whose times are the session's.
    pub fn new(src: VideoSource) -> VideoFeed {
        VideoFeed {
            src,
            frames: 0,
            bytes: 0,
        }
    }

    /// When the next frame is due (session time).
    pub fn next_time(&mut self) -> Time {
        self.src.next_time()
    }

    /// Frames grabbed and offered so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Bytes offered so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The source's frames due and grabbed (and their quantizers) so far: what the
    /// simulator's summary reports of a video flow in its window.
    pub fn counts(&self) -> VideoCounts {
        self.src.counts()
    }

    /// Makes the session's sender application-limited with nothing to send yet; call once,
    /// before its first step.
    pub fn start<S: Sender>(&self, s: &mut Session<S>) {
        s.offer(Some(0));
    }

    /// Offers the sender every frame due at or before `t` and before `end` (a frame due when
    /// the flow ends is not produced) that the source grabs, a coupled source reading the
    /// sender's send buffer at each; returns the bytes offered.
    pub fn offer_due<S: Sender>(&mut self, s: &mut Session<S>, t: Time, end: Time) -> u64 {
        let mut n = 0;
        while self.src.next_time() <= t && self.src.next_time() < end {
            let Some(b) = self.src.frame_due(s.endpoint().buffered()) else {
                continue;
            };
            s.offer(Some(b));
            self.frames += 1;
            n += b;
        }
        self.bytes += n;
        n
    }

    /// Runs the session until `until`, offering each frame due before `end` at its time.
    pub fn run_until<S: Sender>(
        &mut self,
        s: &mut Session<S>,
        until: Time,
        end: Time,
    ) -> std::io::Result<()> {
        loop {
            let stop = self.next_time().min(until);
            s.run_until(stop)?;
            self.offer_due(s, stop, end);
            if stop >= until {
                return Ok(());
            }
        }
    }
}
