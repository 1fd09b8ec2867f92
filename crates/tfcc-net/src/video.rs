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
//! [`VideoSource::frame_slot`], so it skips and scales frames as it does there.
//!
//! Asked to ([`VideoFeed::follow_frames`]), it also keeps the simulator's per-frame records
//! ([`tfcc_sim::frames::FrameLog`], one bookkeeping for both backends): each frame slot as the
//! source produced it, and each data packet the session's sender handed out with the bytes
//! its send buffer shrank by ([`Session::take_data_sent`]), in the order they happened at the
//! sender. Deliveries are the receiver's to add ([`FrameLog::on_delivered`]).

use tfcc_core::endpoint::Sender;
use tfcc_core::Time;
use tfcc_sim::frames::FrameLog;
use tfcc_sim::video::{FrameSlot, VideoCounts, VideoSource};

use crate::Session;

/// A video source and what it has offered so far.
#[derive(Clone, Debug)]
pub struct VideoFeed {
    src: VideoSource,
    frames: u64,
    bytes: u64,
    /// The frames' records, once [`Self::follow_frames`] asked for them, and the clock their
    /// slot times are on ([`Self::follow_frames`]'s `clock`).
    log: Option<(FrameLog, (Time, Time))>,
}

impl VideoFeed {
    /// Feeds from `src`, whose times are the session's.
    pub fn new(src: VideoSource) -> VideoFeed {
        VideoFeed {
            src,
            frames: 0,
            bytes: 0,
            log: None,
        }
    }

    /// From now on, record every frame slot and match the sender's data packets to the
    /// frames' bytes as flow `flow`'s [`FrameLog`]; call after [`Self::start`] (the sender
    /// reports its send buffer from then on; the simulator decides the same way whether a
    /// flow can be followed byte by byte). A slot's time is recorded on another clock,
    /// on which session time `clock.0` is `clock.1`: the testbed records the run's (a slot
    /// due `d` after the source's start at `clock.0` is recorded at `clock.1 + d`, the flow's
    /// start in the run plus `d`, the simulator's time for it).
    pub fn follow_frames<S: Sender>(&mut self, s: &mut Session<S>, flow: u32, clock: (Time, Time)) {
        s.keep_data_sent();
        let log = FrameLog::new(flow, s.endpoint().buffered().is_some());
        self.log = Some((log, clock));
    }

    /// The frame log, with every packet the sender has handed out; `None` unless
    /// [`Self::follow_frames`]. The receiver's deliveries are the caller's to add.
    pub fn take_frames<S: Sender>(&mut self, s: &mut Session<S>) -> Option<FrameLog> {
        self.note_sent(s);
        self.log.take().map(|(log, _)| log)
    }

    /// Hands the log the data packets sent since the last call.
    fn note_sent<S: Sender>(&mut self, s: &mut Session<S>) {
        if let Some((log, _)) = self.log.as_mut() {
            for (seq, taken) in s.take_data_sent() {
                log.on_sent(seq, taken);
            }
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
        // The packets sent before this frame took the bytes of the frames before it.
        self.note_sent(s);
        let mut n = 0;
        while self.src.next_time() <= t && self.src.next_time() < end {
            let sbuf = s.endpoint().buffered();
            let slot = self.src.frame_slot(sbuf);
            if let Some((log, (from, to))) = self.log.as_mut() {
                let time = *to + (slot.time - *from);
                log.on_slot(&FrameSlot { time, ..slot }, sbuf);
            }
            let Some((b, _)) = slot.grabbed else {
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
