//! Python bindings: the private extension module `tfcc._core`.
//!
//! The public Python API is `python/tfcc/__init__.py`, which re-exports what is here; the stub
//! `python/tfcc/_core.pyi` documents each name for editors and type checkers. Bad arguments raise
//! `ValueError` with the parameter's name; nothing here panics on user input.

use pyo3::prelude::*;

mod endpoint;
mod equation;
mod loss_history;
mod net;
mod plots;
mod quantity;
mod rate;
mod scenario;
mod tfrc;
mod tfwc;
mod warc_analysis;
mod wire;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<equation::PyEquation>()?;
    m.add_class::<loss_history::PyLossHistory>()?;
    m.add_class::<tfrc::PyTfrcSender>()?;
    m.add_class::<tfrc::PyTfrcReceiver>()?;
    m.add_class::<tfwc::PyTfwcSender>()?;
    m.add_class::<tfwc::PyTfwcReceiver>()?;
    m.add_class::<rate::PyRateSender>()?;
    m.add_class::<rate::PyRateReceiver>()?;
    m.add(
        "ScenarioError",
        m.py().get_type::<scenario::ScenarioError>(),
    )?;
    m.add("OutputError", m.py().get_type::<scenario::OutputError>())?;
    m.add_function(wrap_pyfunction!(scenario::run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::run_to_dir, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::check_writable, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::write_run, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::cli_run, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::fairness_theta, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::parse_toml, m)?)?;
    m.add_function(wrap_pyfunction!(plots::plot_panels, m)?)?;
    m.add_function(wrap_pyfunction!(quantity::parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(net::cli_net, m)?)?;
    m.add_function(wrap_pyfunction!(wire::decode_datagram, m)?)?;
    m.add_function(wrap_pyfunction!(warc_analysis::warc_hr_false_positive, m)?)?;
    m.add_function(wrap_pyfunction!(
        warc_analysis::warc_equal_smoothness_aggressiveness,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        warc_analysis::warc_span_of_1000_losses,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(warc_analysis::warc_cv, m)?)?;
    m.add_function(wrap_pyfunction!(warc_analysis::warc_linear_increase_cv, m)?)?;
    m.add_function(wrap_pyfunction!(
        warc_analysis::warc_aggressiveness_rtts,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        warc_analysis::warc_responsiveness_losses,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(warc_analysis::msfrs_active_time_ratio, m)?)?;
    Ok(())
}
