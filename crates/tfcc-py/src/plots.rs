//! `plot_panels`: the stacked line charts of `tfcc_run::plots` for Python (reproduction
//! figures reuse them). Text needs a TrueType font: Python passes the path of one
//! (`tfcc.plots.font_path`); without it the charts are drawn without text.

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// One line: its legend label and its points.
type Line = (String, Vec<f64>, Vec<f64>);

/// One panel of a figure, stacked top to bottom.
#[derive(FromPyObject)]
pub struct Panel {
    #[pyo3(item)]
    ylabel: String,
    #[pyo3(item)]
    lines: Vec<Line>,
}

/// Draw `panels` stacked in one PNG at `path`, `width`×`height` pixels, wider or taller by the
/// legends where they would hide lines inside the plots.
#[pyfunction]
#[pyo3(signature = (path, panels, *, title, xlabel, width = 880, height = 440, font = None))]
#[allow(clippy::too_many_arguments)]
pub fn plot_panels(
    py: Python<'_>,
    path: &str,
    panels: Vec<Panel>,
    title: &str,
    xlabel: &str,
    width: u32,
    height: u32,
    font: Option<&str>,
) -> PyResult<()> {
    let panels: Vec<tfcc_run::plots::Panel> = panels
        .into_iter()
        .map(|p| tfcc_run::plots::Panel {
            ylabel: p.ylabel,
            lines: p.lines,
            styles: Vec::new(),
        })
        .collect();
    py.detach(|| {
        tfcc_run::plots::plot_panels(
            Path::new(path),
            &panels,
            title,
            xlabel,
            (width, height),
            font.map(Path::new),
        )
    })
    .map_err(|e| {
        if e.starts_with("width") || e.starts_with("panels") {
            PyValueError::new_err(e)
        } else {
            PyOSError::new_err(e)
        }
    })
}
