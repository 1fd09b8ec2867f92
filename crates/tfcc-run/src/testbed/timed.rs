//! The timed run: the flows run in real time while a tick, every 10 ms, polls for a stop
//! (Ctrl-C, SIGTERM), has the relay mark the window's edges at their instants, applies the
//! bottleneck's scheduled changes, and reads the queues (tc) and the namespaces' TCP counters
//! at the sampling instants, at the window's edges and after the drain. Every reading the
//! summary and the time series need is taken here, while the namespaces exist.

use std::time::{Duration, Instant};

use tfcc_net::capture::realtime_ns;
use tfcc_net::relay::{Relay, RelayCommand};
use tfcc_net::testbed::{run_flows_sampled, Dumbbell, FlowResult, TestbedError, DRAIN_MARGIN};
use tfcc_sim::LinkAction;

use super::plan::Plan;
use super::series::{latest_instant, Directions};
use super::spurious_rtos::{self, RtoSpace, Rtos};

/// What the tick read while the flows ran.
#[derive(Default)]
pub(super) struct Readings {
    /// The queues at the sampling instants reached: (the instant, when it was read, the
    /// reading).
    pub(super) queue: Vec<(Duration, Duration, Directions)>,
    /// tc's counters at the start of the measurement window: the summary's link figures cover
    /// the window only, as the simulator's do (tfcc_sim::recorder); without this the slowstart
    /// overshoot before `measure_from` was reported as drops of the steady state.
    pub(super) at_window: Option<Directions>,
    /// And at its end: read after the flows, tc's counters would include the half second in
    /// which the receivers wait for the queue to drain, and utilisation came out at 1.02-1.03
    /// (0.5 s more transmission over a 20 s window).
    pub(super) at_end: Option<Directions>,
    /// The queues once the senders have stopped and what they held has had time to leave,
    /// shortly before the receivers stop reading.
    pub(super) drained: Option<Directions>,
    /// Kernel TCP's spurious-timeout counters in each namespace that sends kernel-TCP data
    /// (`spurious_rtos`), at the window's start and end.
    pub(super) rtos_at_window: Option<Rtos>,
    pub(super) rtos_at_end: Option<Rtos>,
    /// The run's start on the captures' clock (CLOCK_REALTIME), set at the first tick.
    pub(super) origin_realtime: Option<u64>,
}

/// Runs the plan's flows on `bed` until the run's end and the drain after it, the relay (where
/// one runs) forwarding between the namespaces; `keep_going` is polled at every tick, and its
/// `false` stops the run with [`TestbedError::Interrupted`].
pub(super) fn run(
    bed: &Dumbbell,
    plan: &Plan,
    relay: Option<&Relay>,
    interval: Duration,
    drain: Duration,
    rto_spaces: &[RtoSpace],
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<(Vec<FlowResult>, Readings), TestbedError> {
    let (duration, measure_from) = (plan.duration, plan.measure_from);
    let router = bed.router_ns();
    let mut next_event = 0;
    let mut rate = plan.rate;
    let mut next_sample = interval;
    let mut readings = Readings::default();
    // The queues are read once more shortly before the receivers stop reading.
    let drained_at = duration + drain.saturating_sub(DRAIN_MARGIN);
    let mut marks_sent = false;
    let mut tick = |elapsed: Duration| -> Result<(), TestbedError> {
        if !keep_going() {
            return Err(TestbedError::Interrupted);
        }
        // The relay marks the window's edges itself, at their instants (the first tick comes
        // at the run's start, so `elapsed` places it to microseconds).
        if !marks_sent {
            marks_sent = true;
            // `elapsed` was read just before this call, from the run's start: the same
            // instant on the real-time clock is now less it (within the microseconds between
            // the two readings).
            readings.origin_realtime =
                Some(realtime_ns().saturating_sub(u64::try_from(elapsed.as_nanos()).unwrap_or(0)));
            if let Some(r) = relay {
                let origin = Instant::now() - elapsed;
                for (at, c) in [
                    (measure_from, RelayCommand::MarkWindow),
                    (duration, RelayCommand::MarkEnd),
                ] {
                    r.command(RelayCommand::At(origin + at, Box::new(c)));
                }
            }
        }
        if readings.drained.is_none() && elapsed >= drained_at {
            readings.drained = Directions::read(&router);
        }
        // Beyond the run's end the tick only watches the drain.
        let elapsed = elapsed.min(duration);
        if readings.rtos_at_window.is_none() && elapsed >= measure_from {
            readings.rtos_at_window = Some(spurious_rtos::read(rto_spaces));
        }
        if readings.rtos_at_end.is_none() && elapsed >= duration {
            readings.rtos_at_end = Some(spurious_rtos::read(rto_spaces));
        }
        if readings.at_window.is_none() && elapsed >= measure_from {
            readings.at_window = Some(Directions::read(&router).unwrap_or_default());
        }
        if readings.at_end.is_none() && elapsed >= duration {
            readings.at_end = Directions::read(&router);
        }
        while let Some((at, action)) = plan.events.get(next_event) {
            if *at > elapsed {
                break;
            }
            next_event += 1;
            match action {
                LinkAction::SetRate(r) => {
                    rate = *r;
                    bed.set_rate(*r)?;
                }
                LinkAction::SetUp(up) => {
                    if let Some(r) = relay {
                        r.command(RelayCommand::SetUp(*up));
                    }
                    bed.set_up(*up, rate)?;
                }
                LinkAction::SetLoss(l) => {
                    if let Some(r) = relay {
                        r.command(RelayCommand::SetLoss(l.clone()));
                    }
                }
                // Refused before the run (`plan`).
                LinkAction::SetStalled(_) => {}
            }
        }
        // tc is a process per reading (a few ms of CPU), so the queue is read once per
        // sampling interval, not averaged within it. A reading is stamped with the latest
        // sampling instant reached, and instants that passed while the machine was too busy
        // to read leave a gap: stepping one interval per reading had put the series behind real
        // time whenever a tick took longer than the interval (readings every 0.14 s for 0.1 s
        // under a load of 10-18 put a 330 s run's last reading at 236 s).
        if elapsed >= next_sample && next_sample <= duration {
            let at = latest_instant(elapsed, interval);
            if let Some(q) = Directions::read(&router) {
                readings.queue.push((at, elapsed, q));
            }
            next_sample = at + interval;
        }
        Ok(())
    };
    let results = run_flows_sampled(
        bed,
        &plan.flows,
        duration,
        measure_from,
        interval,
        drain,
        &mut tick,
    )?;
    Ok((results, readings))
}
