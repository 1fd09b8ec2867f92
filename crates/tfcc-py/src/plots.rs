//! PNG line charts for `tfcc run`, drawn in Rust with plotters.
//!
//! matplotlib's import alone takes most of a second, several times what a small simulation
//! takes, and issue 4 counts outputs in the speed comparison with ns-2; a bitmap drawn here
//! costs milliseconds. Python groups the series (`tfcc.plots`) and calls [`plot_panels`] once
//! per figure. Text needs a TrueType font: Python passes the path of one (matplotlib ships
//! DejaVu Sans); without it the charts are drawn without text.

use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::FontStyle;
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

/// matplotlib's "tab10" colours, so the charts look like the rest of the project's figures.
const COLOURS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// Whether a font is registered; registration happens once per process.
static FONT: OnceLock<bool> = OnceLock::new();

fn load_font(path: Option<&str>) -> bool {
    *FONT.get_or_init(|| {
        let Some(bytes) = path.and_then(|p| std::fs::read(p).ok()) else {
            return false;
        };
        // plotters keeps fonts for the life of the process; leaking one file once is that.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    })
}

fn bounds(panel: &Panel) -> (f64, f64, f64) {
    let (mut xmax, mut ymin, mut ymax) = (0.0f64, 0.0f64, 0.0f64);
    for (_, xs, ys) in &panel.lines {
        for &x in xs.iter().filter(|x| x.is_finite()) {
            xmax = xmax.max(x);
        }
        for &y in ys.iter().filter(|y| y.is_finite()) {
            ymin = ymin.min(y);
            ymax = ymax.max(y);
        }
    }
    if xmax <= 0.0 {
        xmax = 1.0;
    }
    if ymax <= ymin {
        ymax = ymin + 1.0;
    }
    (xmax, ymin, ymax * 1.05)
}

fn draw(
    path: &str,
    size: (u32, u32),
    title: &str,
    xlabel: &str,
    panels: &[Panel],
    text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let root = if text {
        root.titled(title, ("sans-serif", 16))?
    } else {
        root
    };
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (i, (panel, area)) in panels.iter().zip(&areas).enumerate() {
        let (xmax, ymin, ymax) = bounds(panel);
        let last = i + 1 == panels.len();
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .x_label_area_size(if text && last { 32 } else { 8 })
            .y_label_area_size(if text { 56 } else { 8 })
            .build_cartesian_2d(0f64..xmax, ymin..ymax)?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE.mix(0.0));
        if text {
            mesh.y_desc(panel.ylabel.as_str())
                .label_style(("sans-serif", 11));
            if last {
                mesh.x_desc(xlabel);
            }
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw()?;
        for (j, (label, xs, ys)) in panel.lines.iter().enumerate() {
            let colour = COLOURS[j % COLOURS.len()];
            let points = xs
                .iter()
                .zip(ys)
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(&x, &y)| (x, y));
            let series = chart.draw_series(LineSeries::new(points, colour.stroke_width(1)))?;
            if text {
                series.label(label.as_str()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                });
            }
        }
        if text && !panel.lines.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 10))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

/// Draw `panels` stacked in one PNG at `path`, `width`×`height` pixels.
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
    if width < 100 || height < 100 || width > 10_000 || height > 10_000 {
        return Err(PyValueError::new_err(
            "width and height: must be between 100 and 10000 pixels",
        ));
    }
    for p in &panels {
        if let Some((label, _, _)) = p.lines.iter().find(|(_, xs, ys)| xs.len() != ys.len()) {
            return Err(PyValueError::new_err(format!(
                "panels: line {label:?} has {} x values but a different number of y values",
                p.lines
                    .iter()
                    .find(|l| &l.0 == label)
                    .map_or(0, |l| l.1.len())
            )));
        }
    }
    let text = load_font(font);
    py.detach(|| {
        draw(path, (width, height), title, xlabel, &panels, text).map_err(|e| e.to_string())
    })
    .map_err(|e| PyOSError::new_err(format!("{path}: cannot draw the plot: {e}")))
}
