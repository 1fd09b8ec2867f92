//! MSF-RS, Minimum-Service-First Request Scheduling at the user-side access gateway (003 Ch. 4).
//!
//! When an enterprise's access *downlink* is the bottleneck, packets queue at the ISP's router,
//! where NAT hides which user they belong to; a packet scheduler at the gateway sees them only
//! after the bottleneck. MSF-RS shapes the downlink from the uplink instead: it holds the users'
//! requests in per-class queues and releases them so that the *responses* share the downlink in
//! proportion to per-user weights (003 §4.1–4.3).
//!
//! - [`moa`]: the Minimum-service Order Arbiter, which request goes next (§4.3.1);
//! - [`wrc`]: the Window-based Rate Controller, when it may go (§4.3.2);
//! - [`analysis`]: the batch-latency model and the delay and fairness bounds of §4.4;
//! - [`config`]: [`MsfrsConfig`], every constant.
//!
//! [`Msfrs`] joins the two halves as a sans-IO component, so a simulator gateway and a real HTTP
//! proxy drive the same code. It never reads a clock; the driver
//! 1. reports events with the current time: [`Msfrs::on_request`] when a request arrives,
//!    [`Msfrs::on_response_bytes`] for every piece of a response (and for downlink traffic of a
//!    class that no request of ours asked for, §4.6 type 2), [`Msfrs::on_response_end`] when a
//!    response's last byte is in, [`Msfrs::on_unclassified_bytes`] for downlink traffic of no
//!    class (§4.6 type 3);
//! 2. after each event calls [`Msfrs::poll_release`] until it returns `None` and forwards the
//!    requests it returns;
//! 3. calls [`Msfrs::on_timeout`] when the clock reaches [`Msfrs::next_timeout`] (WRC's update
//!    interval), then polls again.
//!
//! Thesis inconsistencies and how they are resolved (spec 003 §4.3–4.4, §8 item 9):
//! - Eq. 4.1 divides by `UC_i`, Fig. 4.4 does not: Eq. 4.1 by default, the other as
//!   [`MsfrsConfig::per_user`] = false (§4.5.4 shows it failing).
//! - Fig. 4.3 resets SC `If (UCi ≠ 0)`; the text says for an idle class: `UC_i = 0` ([`moa`]).
//! - Fig. 4.3 releases an arriving request only if `W = 0` and never increments W there; here a
//!   release always increments W, and an arrival is released whenever `W < W+`
//!   ([`ReleaseRule::BelowWindow`]; the literal rule is [`ReleaseRule::WhenIdle`]).
//! - Rounding of W+ is unspecified: [`WindowRounding`].

pub mod analysis;
pub mod config;
pub mod moa;
pub mod wrc;

#[cfg(test)]
mod tests;

pub use config::{BindingRule, MsfrsConfig, MsfrsConfigError, ReleaseRule, WindowRounding};
pub use moa::{ClassStats, Moa, Queued};
pub use wrc::{WindowUpdate, Wrc};

use thiserror::Error;

use crate::time::{Dur, Time};

/// An event MSF-RS could not apply; the state is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MsfrsError {
    /// The class index is not below the number of configured classes.
    #[error("msfrs: no class {class} (there are {classes})")]
    UnknownClass { class: usize, classes: usize },
    /// A response ended for a user with no outstanding request in that class.
    #[error("msfrs: response end for user {user} of class {class}, which has none outstanding")]
    NoOutstanding { class: usize, user: u32 },
}

/// A request MSF-RS lets go: forward it to its server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release<R> {
    /// The caller's handle, as given to [`Msfrs::on_request`].
    pub request: R,
    pub class: usize,
    pub user: u32,
    /// When it arrived (`a_k`).
    pub arrived: Time,
    /// Its queuing time at the gateway, `T_q = b_k − a_k`.
    pub queued_for: Dur,
}

/// A snapshot for recording and reporting.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct MsfrsStats {
    /// `W`, outstanding responses.
    pub outstanding: u32,
    /// `W+`.
    pub window_max: f64,
    /// `⌈W+⌉`, the integer limit on W.
    pub limit: u32,
    /// `U` of the last completed interval (Eq. 4.2), if one has completed.
    pub utilization: Option<f64>,
    /// Requests waiting in all class queues.
    pub queued: usize,
    /// Requests received, released, and responses ended.
    pub arrived: u64,
    pub released: u64,
    pub completed: u64,
    /// Events refused with an [`MsfrsError`].
    pub refused: u64,
    /// Update intervals completed.
    pub updates: u64,
}

/// MOA and WRC together: the MSF-RS gateway scheduler. `R` is the caller's request handle.
#[derive(Clone, Debug)]
pub struct Msfrs<R> {
    moa: Moa<R>,
    wrc: Wrc,
    release: ReleaseRule,
    /// Fig. 4.4's loop runs after response data ([`ReleaseRule::WhenIdle`] only).
    wrc_pass: bool,
    arrived: u64,
    released: u64,
    completed: u64,
    refused: u64,
}

impl<R> Msfrs<R> {
    /// A scheduler whose first WRC interval starts at `now`.
    pub fn new(cfg: &MsfrsConfig, now: Time) -> Result<Self, MsfrsConfigError> {
        cfg.validate()?;
        Ok(Msfrs {
            moa: Moa::new(&cfg.weights, cfg.per_user),
            wrc: Wrc::new(cfg, now),
            release: cfg.release,
            wrc_pass: false,
            arrived: 0,
            released: 0,
            completed: 0,
            refused: 0,
        })
    }

    fn check_class(&mut self, class: usize) -> Result<(), MsfrsError> {
        let classes = self.moa.classes();
        if class < classes {
            Ok(())
        } else {
            self.refused += 1;
            Err(MsfrsError::UnknownClass { class, classes })
        }
    }

    /// A request of `user` in `class` arrived at `now` (`Request_Receiver`, Fig. 4.3). Then poll.
    pub fn on_request(
        &mut self,
        now: Time,
        class: usize,
        user: u32,
        request: R,
    ) -> Result<(), MsfrsError> {
        self.check_class(class)?;
        self.moa.enqueue(
            class,
            Queued {
                request,
                user,
                arrived: now,
            },
        );
        self.arrived += 1;
        Ok(())
    }

    /// `bytes` of a response (or other downlink traffic) for `class` arrived: Eq. 4.1 and `S_k`
    /// of Eq. 4.2. Then poll.
    pub fn on_response_bytes(
        &mut self,
        _now: Time,
        class: usize,
        bytes: u64,
    ) -> Result<(), MsfrsError> {
        self.check_class(class)?;
        self.moa.credit(class, bytes);
        self.wrc.on_bytes(bytes);
        self.wrc_pass = true;
        Ok(())
    }

    /// The last byte of a response of `user` in `class` arrived: `W−1`, and the user may leave
    /// its class (Fig. 4.4). Report the bytes first. Then poll.
    pub fn on_response_end(
        &mut self,
        _now: Time,
        class: usize,
        user: u32,
    ) -> Result<(), MsfrsError> {
        self.check_class(class)?;
        if !self.moa.has_outstanding(class, user) {
            self.refused += 1;
            return Err(MsfrsError::NoOutstanding { class, user });
        }
        self.moa.complete(class, user);
        self.wrc.on_complete();
        self.completed += 1;
        self.wrc_pass = true;
        Ok(())
    }

    /// Downlink bytes of no class (§4.6 type 3): they count in `U` only, so W+ shrinks while
    /// they last and grows back when they stop.
    pub fn on_unclassified_bytes(&mut self, _now: Time, bytes: u64) {
        self.wrc.on_bytes(bytes);
    }

    /// The next request to forward at `now`, if WRC allows one more outstanding response and a
    /// queue holds one. Call until `None` after every event.
    #[must_use]
    pub fn poll_release(&mut self, now: Time) -> Option<Release<R>> {
        let allowed = self.wrc.can_release()
            && match self.release {
                ReleaseRule::BelowWindow => true,
                ReleaseRule::WhenIdle => self.wrc.outstanding() == 0 || self.wrc_pass,
            };
        if !allowed {
            if self.moa.queued() > 0 {
                self.wrc.note_blocked();
            }
            self.wrc_pass = false;
            return None;
        }
        let Some((class, q)) = self.moa.release() else {
            self.wrc_pass = false;
            return None;
        };
        self.wrc.on_release();
        self.released += 1;
        Some(Release {
            request: q.request,
            class,
            user: q.user,
            arrived: q.arrived,
            queued_for: now.saturating_since(q.arrived),
        })
    }

    /// When WRC's current update interval ends.
    #[must_use]
    pub fn next_timeout(&self) -> Time {
        self.wrc.next_timeout()
    }

    /// Closes WRC's update intervals that ended by `now` (Eq. 4.2–4.3); returns the last one
    /// closed. Early calls are no-ops. Then poll: a larger W+ may release requests.
    pub fn on_timeout(&mut self, now: Time) -> Option<WindowUpdate> {
        let waiting = self.moa.queued() > 0;
        self.wrc.on_timeout(now, waiting)
    }

    /// A snapshot of `class`, or `None` if there is no such class.
    pub fn class_stats(&self, class: usize) -> Option<ClassStats> {
        self.moa.class_stats(class)
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.moa.classes()
    }

    /// The whole scheduler's state.
    pub fn stats(&self) -> MsfrsStats {
        MsfrsStats {
            outstanding: self.wrc.outstanding(),
            window_max: self.wrc.window_max(),
            limit: self.wrc.limit(),
            utilization: self.wrc.last_update().map(|u| u.utilization),
            queued: self.moa.queued(),
            arrived: self.arrived,
            released: self.released,
            completed: self.completed,
            refused: self.refused,
            updates: self.wrc.updates(),
        }
    }
}
