//! tfcc-sim: a deterministic discrete-event packet simulator for the tfcc protocols.
//!
//! Integer nanosecond time, events ordered by `(time, insertion order)`, packets in an arena
//! addressed by index, one random stream per component derived from the scenario seed: the same
//! scenario and seed give bit-identical results (DESIGN.md, "Simulator").
//!
//! The pieces, bottom up:
//! - [`engine`]: the event queue;
//! - [`packet_pool`]: the packet arena;
//! - [`rng`]: per-component random streams;
//! - [`queue`]: DropTail and RED (gentle) with ns-2.35's semantics and defaults;
//! - [`loss_model`]: periodic, Bernoulli, Gilbert–Elliott and interval artificial losses;
//! - [`link`]: rate, propagation delay, queue, loss, up/down;
//! - [`topology`]: dumbbell, parking lot, custom;
//! - [`flow`]: endpoint dispatch and the CBR / on-off CBR source and sink;
//! - [`recorder`]: time series, summary, metrics;
//! - [`video`]: an application-limited video source (frames at `fps`, pauses);
//! - [`frames`]: per-frame records of a video flow (grabbed, q, packets, completion);
//! - [`web`]: web transactions behind an access gateway (plain or MSF-RS, 003 Ch. 4);
//! - [`sim`]: the [`Simulation`] API that a scenario fills and runs;
//! - [`scenario`]: TOML scenario files to a ready [`Simulation`], and the protocol registry.
//!
//! A scenario layer builds a [`Topology`], a [`SimConfig`], [`FlowSpec`]s and
//! [`ScheduledEvent`]s, then calls [`Simulation::run`] (or `run_with_progress`).

#![forbid(unsafe_code)]

pub mod drr;
pub mod engine;
pub mod flow;
pub mod frames;
pub mod link;
pub mod loss_model;
pub mod packet_pool;
pub mod queue;
pub mod recorder;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod surge;
pub mod topology;
pub mod trace;
pub mod video;
pub mod web;

pub use flow::{CbrConfig, FlowSpec, ReceiverImpl, SenderImpl};
pub use link::{LinkId, LinkSpec};
pub use loss_model::{LossModel, LossScope, LossSpec};
pub use queue::{QueueLimit, QueueSpec, RedConfig};
pub use recorder::{
    counts_in_window, FlowSample, FlowSummary, FlowTotals, LinkSample, LinkSummary, LinkTotals,
    RunResult, RunSummary, WindowGoodput,
};
pub use sim::{FlowSink, LinkAction, ScheduledEvent, SimConfig, Simulation};
pub use topology::{
    AccessSpec, CustomLink, CustomRoute, DelaySpread, DumbbellSpec, ParkingLotSpec, Route, Topology,
};

/// Why a simulation could not be set up. Each message names the offending link, route, flow or
/// event so that the scenario layer can map it back to the file and key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A link parameter is out of range.
    #[error("link `{link}`: {reason}")]
    InvalidLink { link: String, reason: String },
    /// Two links share a name.
    #[error("duplicate link name `{0}`")]
    DuplicateLink(String),
    /// A route or event names a link that does not exist.
    #[error("unknown link `{0}`")]
    UnknownLink(String),
    /// A route is empty, disconnected or does not return to its sender.
    #[error("route {route}: {reason}")]
    InvalidRoute { route: usize, reason: String },
    /// A flow's route or parameters are invalid.
    #[error("flow {flow}: {reason}")]
    InvalidFlow { flow: usize, reason: String },
    /// A scheduled event is invalid.
    #[error("event {event}: {reason}")]
    InvalidEvent { event: usize, reason: String },
    /// A run-wide setting is invalid.
    #[error("{0}")]
    InvalidConfig(String),
}
