//! WARC's analysis results (003 Sec. 3.4, App. 2) for the reproduction's claims:
//! `tfcc_core::warc::analysis`, computed, never copied from the thesis.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tfcc_core::warc::analysis;

fn positive(name: &str, v: f64) -> PyResult<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(PyValueError::new_err(format!(
            "{name} must be positive, got {v}"
        )))
    }
}

/// History-Reset's false-positive probability per loss for (K, N), Eqs. 3.10–3.11.
#[pyfunction]
pub fn warc_hr_false_positive(k: f64, n: u32) -> PyResult<f64> {
    positive("k", k)?;
    if n == 0 {
        return Err(PyValueError::new_err("n must be at least 1"));
    }
    Ok(analysis::hr_false_positive_probability(k, n))
}

/// Fig. 3.5(b): RTTs for WARC, GAIMD and IIAD to raise their window by `m` at equal `CV̄[w]`.
#[pyfunction]
#[pyo3(signature = (m, cv, w))]
pub fn warc_equal_smoothness_aggressiveness(m: f64, cv: f64, w: f64) -> PyResult<(f64, f64, f64)> {
    if !(m.is_finite() && m > 1.0) {
        return Err(PyValueError::new_err(format!("m must exceed 1, got {m}")));
    }
    positive("cv", cv)?;
    positive("w", w)?;
    Ok(analysis::equal_smoothness_aggressiveness(m, cv, w))
}

/// Sec. 3.4.4: seconds spanned by 1000 losses for uniform W and RTT ranges.
#[pyfunction]
pub fn warc_span_of_1000_losses(w_lo: f64, w_hi: f64, rtt_lo: f64, rtt_hi: f64) -> PyResult<f64> {
    for (n, v) in [
        ("w_lo", w_lo),
        ("w_hi", w_hi),
        ("rtt_lo", rtt_lo),
        ("rtt_hi", rtt_hi),
    ] {
        positive(n, v)?;
    }
    Ok(analysis::span_of_1000_losses_s(w_lo, w_hi, rtt_lo, rtt_hi))
}

/// Fig. 3.4 / Eq. 3.7: WARC(s)'s `CV̄[w]` at mean window `w` (Eqs. A2.4–A2.8, integrated).
#[pyfunction]
pub fn warc_cv(w: f64, s: f64) -> PyResult<f64> {
    positive("w", w)?;
    positive("s", s)?;
    Ok(analysis::warc_cv(w, s))
}

/// `CV̄[w]` of a window growing linearly at `slope` packets per RTT under the same loss model
/// (TCP: slope 1; GAIMD: its `α`).
#[pyfunction]
pub fn warc_linear_increase_cv(slope: f64) -> PyResult<f64> {
    positive("slope", slope)?;
    Ok(analysis::linear_increase_cv(slope))
}

/// Eq. 3.8: RTTs for WARC(s) to raise its rate `m`-fold from a steady mean window `w`.
#[pyfunction]
pub fn warc_aggressiveness_rtts(m: f64, w: f64, s: f64) -> PyResult<f64> {
    if !(m.is_finite() && m > 1.0) {
        return Err(PyValueError::new_err(format!("m must exceed 1, got {m}")));
    }
    positive("w", w)?;
    positive("s", s)?;
    Ok(analysis::aggressiveness_rtts(m, w, s))
}

/// Eq. 3.9: loss events before WARC(s, K, N) cuts its rate to `1/m`, from mean window `w`.
#[pyfunction]
pub fn warc_responsiveness_losses(m: f64, w: f64, s: f64, k: f64, n: u32) -> PyResult<f64> {
    if !(m.is_finite() && m > 1.0) {
        return Err(PyValueError::new_err(format!("m must exceed 1, got {m}")));
    }
    positive("w", w)?;
    positive("s", s)?;
    positive("k", k)?;
    if n == 0 {
        return Err(PyValueError::new_err("n must be at least 1"));
    }
    Ok(analysis::responsiveness_losses(m, w, s, k, n))
}

/// 003 Eqs. 4.4–4.6, Fig. 4.5: mean `T_a` under MSF-RS over that under an ordinary gateway for
/// a batch of `m` equal responses and a fixed window `w_plus`.
#[pyfunction]
pub fn msfrs_active_time_ratio(m: u64, w_plus: u64) -> PyResult<f64> {
    if m == 0 || w_plus == 0 {
        return Err(PyValueError::new_err("m and w_plus must be at least 1"));
    }
    Ok(tfcc_core::msfrs::analysis::active_time_ratio(m, w_plus))
}
