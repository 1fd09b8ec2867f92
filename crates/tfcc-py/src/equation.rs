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
    fn rate(&self, s: f64, rtt: f64, p: f64) -> f64 {
        self.inner.rate_secs(s, rtt, p)
    }

    /// The window in packets per RTT, `W = 1/f(p)` (002 Eq. 3.4).
    fn window(&self, p: f64) -> f64 {
        self.inner.window(p)
    }

    /// The loss event rate whose rate is `x` bytes/s (the inverse of `rate`).
    fn loss_for_rate(&self, s: f64, rtt: f64, x: f64) -> f64 {
        self.inner.loss_for_rate_secs(s, rtt, x)
    }

    /// The loss event rate whose window is `w` packets (the inverse of `window`).
    fn loss_for_window(&self, w: f64) -> f64 {
        self.inner.loss_for_window(w)
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
