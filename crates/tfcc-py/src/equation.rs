//! Python class `Equation`: the shared TCP throughput model of `tfcc_core::equation`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tfcc_core::equation::{Equation as CoreEquation, Model, TimeoutTerm};
use tfcc_core::Dur;

/// A TCP throughput model: the simple model (004 Eq. 2.6) or Padhye/PFTK in the RFC 5348 form
/// (004 Eq. 2.7), as a rate in bytes/s, as a window in packets per RTT, and their inverses.
#[pyclass(module = "tfcc._core", name = "Equation", frozen)]
#[derive(Clone)]
pub struct PyEquation {
    pub inner: CoreEquation,
}

fn parse_model(s: &str) -> PyResult<Model> {
    match s {
        "pftk" | "padhye" => Ok(Model::Pftk),
        "simple" => Ok(Model::Simple),
        _ => Err(PyValueError::new_err(format!(
            "model must be \"pftk\" or \"simple\", got {s:?}"
        ))),
    }
}

fn parse_timeout_term(s: &str) -> PyResult<TimeoutTerm> {
    match s {
        "rfc5348" => Ok(TimeoutTerm::Rfc5348),
        "pftk-min" => Ok(TimeoutTerm::PftkMin),
        "as-printed-004" => Ok(TimeoutTerm::AsPrinted004),
        _ => Err(PyValueError::new_err(format!(
            "timeout_term must be \"rfc5348\", \"pftk-min\" or \"as-printed-004\", got {s:?}"
        ))),
    }
}

fn dur(secs: f64, what: &str) -> PyResult<Dur> {
    if secs.is_finite() && secs >= 0.0 {
        Ok(Dur::from_secs_f64(secs))
    } else {
        Err(PyValueError::new_err(format!(
            "{what} must be a finite number of seconds >= 0, got {secs}"
        )))
    }
}

/// `v` must be a finite number above zero: a packet size, an RTT, a rate or a window. The
/// equation gives 0, infinity or NaN for anything else (`s = -1` was a rate of 0 B/s, `rtt = 0`
/// an infinite one), which reads as an answer; a `ValueError` names the argument instead.
fn positive(v: f64, what: &str, unit: &str) -> PyResult<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(PyValueError::new_err(format!(
            "{what} must be a finite number above 0{unit}, got {v}"
        )))
    }
}

/// A loss event rate: finite and above 0 (at `p = 0` no loss bounds the rate; the equation's
/// limit is infinite). Above 1 it is taken as 1, as the core does: a sender-counted loss event
/// rate can exceed 1 in a short window (docs/scenarios.md, `loss_event_rate`), and the metrics
/// model such flows.
fn loss_rate(p: f64) -> PyResult<f64> {
    if p.is_finite() && p > 0.0 {
        Ok(p)
    } else {
        Err(PyValueError::new_err(format!(
            "p must be a loss event rate above 0 (finite; above 1 counts as 1), got {p}"
        )))
    }
}

#[pymethods]
impl PyEquation {
    #[new]
    #[pyo3(signature = (model = "pftk", *, b = 1.0, rto_factor = 4.0, rto_floor = 0.0, c = None, timeout_term = "rfc5348"))]
    fn new(
        model: &str,
        b: f64,
        rto_factor: f64,
        rto_floor: f64,
        c: Option<f64>,
        timeout_term: &str,
    ) -> PyResult<Self> {
        let mut e = CoreEquation::pftk();
        e.model = parse_model(model)?;
        e.b = b;
        e.rto_factor = rto_factor;
        e.rto_floor = dur(rto_floor, "rto_floor")?;
        if let Some(c) = c {
            e.simple_c = c;
        }
        e.timeout_term = parse_timeout_term(timeout_term)?;
        e.validate()
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        Ok(PyEquation { inner: e })
    }

    /// The TCP-friendly rate in bytes/s for packet size `s` (bytes), RTT `rtt` (s), loss event rate `p`.
    fn rate(&self, s: f64, rtt: f64, p: f64) -> PyResult<f64> {
        Ok(self.inner.rate_secs(
            positive(s, "s", " bytes")?,
            positive(rtt, "rtt", " seconds")?,
            loss_rate(p)?,
        ))
    }

    /// The window in packets per RTT, `W = 1/f(p)` (002 Eq. 3.4).
    fn window(&self, p: f64) -> PyResult<f64> {
        Ok(self.inner.window(loss_rate(p)?))
    }

    /// The loss event rate whose rate is `x` bytes/s (the inverse of `rate`).
    fn loss_for_rate(&self, s: f64, rtt: f64, x: f64) -> PyResult<f64> {
        Ok(self.inner.loss_for_rate_secs(
            positive(s, "s", " bytes")?,
            positive(rtt, "rtt", " seconds")?,
            positive(x, "x", " bytes/s")?,
        ))
    }

    /// The loss event rate whose window is `w` packets (the inverse of `window`).
    fn loss_for_window(&self, w: f64) -> PyResult<f64> {
        Ok(self.inner.loss_for_window(positive(w, "w", " packets")?))
    }

    fn __repr__(&self) -> String {
        let e = &self.inner;
        format!(
            "Equation(model={:?}, b={}, rto_factor={}, rto_floor={}, c={}, timeout_term={:?})",
            e.model,
            e.b,
            e.rto_factor,
            e.rto_floor.as_secs_f64(),
            e.simple_c,
            e.timeout_term
        )
    }
}
