//! Python class `LossHistory`: the average-loss-interval estimator of `tfcc_core::loss_history`.
//!
//! Fed packet by packet in sequence order. Without an RTT the binding cannot group losses into
//! events itself, so by default every lost packet starts a loss event; pass `same_event=True` for
//! a loss inside the open event (what `tfcc_core::loss_events` decides in a protocol).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tfcc_core::loss_history::{
    AliConfig, Discounting, FirstRun, LossEstimator, LossHistory as CoreHistory, OpenInterval,
    PartialHistory, Weights,
};

fn bad(what: &str, expected: &str, got: impl std::fmt::Debug) -> PyErr {
    PyValueError::new_err(format!("{what} must be {expected}, got {got:?}"))
}

fn preset(name: &str) -> PyResult<AliConfig> {
    Ok(match name {
        "tfrc" => AliConfig::tfrc_thesis(),
        "rfc5348" => AliConfig::rfc5348(),
        "tfwc" => AliConfig::tfwc(),
        "ttfwc-smooth" => AliConfig::ttfwc(true),
        "ttfwc-responsive" => AliConfig::ttfwc(false),
        _ => {
            return Err(bad(
                "preset",
                "one of \"tfrc\", \"rfc5348\", \"tfwc\", \"ttfwc-smooth\", \"ttfwc-responsive\"",
                name,
            ))
        }
    })
}

/// Weights given by name or as an explicit list.
#[derive(FromPyObject)]
enum WeightsArg {
    Name(String),
    List(Vec<f64>),
}

/// The weighted average loss interval (004 Eq. 3.6) with the current-interval rule (Sec. 3.4.3)
/// and history discounting (Sec. 3.7, RFC 5348 §5.5).
#[pyclass(module = "tfcc._core", name = "LossHistory")]
pub struct PyLossHistory {
    inner: CoreHistory,
}

#[pymethods]
impl PyLossHistory {
    #[new]
    #[pyo3(signature = (n = None, *, preset = "tfrc", weights = None, current_interval = None,
        discounting = None, discount_floor = None, discount_threshold = None, partial = None,
        first_run = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n: Option<i128>,
        preset: &str,
        weights: Option<WeightsArg>,
        current_interval: Option<&str>,
        discounting: Option<&str>,
        discount_floor: Option<f64>,
        discount_threshold: Option<f64>,
        partial: Option<&str>,
        first_run: Option<&str>,
    ) -> PyResult<Self> {
        let mut cfg = self::preset(preset)?;
        if let Some(n) = n {
            // Taken as any int so that a negative or huge `n` gets the core's message naming
            // `n` and its range, not pyo3's nameless OverflowError; past usize it is refused here
            // with the same words.
            cfg.n = usize::try_from(n).map_err(|_| {
                PyValueError::new_err(format!(
                    "loss history size n must be in 1..={}, got {n}",
                    tfcc_core::loss_history::MAX_HISTORY
                ))
            })?;
        }
        if let Some(w) = weights {
            cfg.weights = match w {
                WeightsArg::Name(s) if s == "rfc5348" => Weights::Rfc5348,
                WeightsArg::Name(s) if s == "choi" => Weights::Choi,
                WeightsArg::Name(s) => {
                    return Err(bad("weights", "\"rfc5348\", \"choi\" or a list", s))
                }
                WeightsArg::List(v) => Weights::Custom(v),
            };
        }
        if let Some(s) = current_interval {
            cfg.open_interval = match s {
                "if-larger" => OpenInterval::IfLarger,
                "never" => OpenInterval::Never,
                "always" => OpenInterval::Always,
                _ => {
                    return Err(bad(
                        "current_interval",
                        "\"if-larger\", \"never\" or \"always\"",
                        s,
                    ))
                }
            };
        }
        if let Some(s) = partial {
            cfg.partial = match s {
                "grow" => PartialHistory::Grow,
                "same-weights" => PartialHistory::SameWeights,
                _ => return Err(bad("partial", "\"grow\" or \"same-weights\"", s)),
            };
        }
        if let Some(s) = first_run {
            cfg.first_run = match s {
                "as-interval" => FirstRun::AsInterval,
                "discard" => FirstRun::Discard,
                _ => return Err(bad("first_run", "\"as-interval\" or \"discard\"", s)),
            };
        }
        if let Some(s) = discounting {
            // The floors default to the thesis' d_lim = 0.2 (004 Sec. 3.7.4) and RFC 5348's
            // THRESHOLD = 0.5 (§5.5).
            cfg.discounting =
                match s {
                    "off" => Discounting::Off,
                    "discard" => Discounting::Discard,
                    "duplication" => Discounting::Duplication,
                    "proportional" => Discounting::Proportional {
                        floor: discount_floor.unwrap_or(0.2),
                    },
                    "remodel" => Discounting::ProportionalRemodel,
                    "rfc5348" => Discounting::Rfc5348 {
                        floor: discount_floor.unwrap_or(0.5),
                    },
                    _ => return Err(bad(
                        "discounting",
                        "\"off\", \"discard\", \"duplication\", \"proportional\", \"remodel\" or \
                         \"rfc5348\"",
                        s,
                    )),
                };
        } else if discount_floor.is_some() {
            return Err(PyValueError::new_err(
                "discount_floor needs discounting=\"proportional\" or \"rfc5348\"",
            ));
        }
        if let Some(m) = discount_threshold {
            cfg.discount_threshold = m;
        }
        CoreHistory::new(cfg)
            .map(|inner| PyLossHistory { inner })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// One packet in sequence order. A lost packet starts a new loss event unless `same_event`.
    #[pyo3(signature = (lost = false, *, same_event = false))]
    fn packet(&mut self, lost: bool, same_event: bool) {
        if lost && !same_event {
            self.inner.on_loss_event();
        } else {
            self.inner.on_packets(1);
        }
    }

    /// `count` packets that do not start a loss event.
    fn packets(&mut self, count: u64) {
        self.inner.on_packets(count);
    }

    /// A lost packet that starts a new loss event.
    fn loss_event(&mut self) {
        self.inner.on_loss_event();
    }

    /// Replace the closed history by one synthetic interval (004 Sec. 3.6.2; 002 Alg. 2).
    fn seed(&mut self, interval: f64) -> PyResult<()> {
        if !interval.is_finite() || interval <= 0.0 {
            return Err(bad(
                "interval",
                "a positive finite number of packets",
                interval,
            ));
        }
        self.inner.seed(interval);
        Ok(())
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    /// The average loss interval in packets, or None before a complete interval exists.
    #[getter]
    fn ali(&self) -> Option<f64> {
        self.inner.average_loss_interval()
    }

    /// The loss event rate p = 1/ALI.
    #[getter]
    fn p(&self) -> Option<f64> {
        self.inner.loss_event_rate()
    }

    #[getter]
    fn loss_events(&self) -> u64 {
        self.inner.loss_events()
    }

    /// Packets in the open interval.
    #[getter]
    fn open_interval(&self) -> u64 {
        self.inner.open_interval()
    }

    /// The resolved weights w_0..w_{n-1}.
    #[getter]
    fn weights(&self) -> Vec<f64> {
        self.inner.weights().to_vec()
    }

    /// Closed intervals, newest first.
    #[getter]
    fn intervals(&self) -> Vec<f64> {
        self.inner.closed_intervals().collect()
    }

    /// The deweighting factor d of 004 Eq. 3.22 at this moment (1 when not discounting).
    #[getter]
    fn discount_factor(&self) -> f64 {
        self.inner.deweight_factor()
    }

    fn __repr__(&self) -> String {
        format!(
            "LossHistory(n={}, ali={}, loss_events={}, open_interval={})",
            self.inner.config().n,
            self.inner
                .average_loss_interval()
                .map_or("None".to_string(), |a| format!("{a}")),
            self.inner.loss_events(),
            self.inner.open_interval()
        )
    }
}
