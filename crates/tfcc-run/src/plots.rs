//! PNG line charts of a run (`throughput.png`, `window.png`, `queue.png`) and the generic
//! stacked-panel chart behind them, drawn with plotters.
//!
//! matplotlib's import alone takes most of a second, several times what a small simulation
//! takes, and issue 4 counts outputs in the speed comparison with ns-2; a bitmap drawn here
//! costs milliseconds. Text needs a TrueType font, passed in as a path (the Python layer finds
//! matplotlib's DejaVu Sans); without one the charts are drawn without text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use crate::columns::{FlowColumns, LinkColumns};
use crate::summary::Summary;

/// One line: its legend label, its x and its y values.
pub type Line = (String, Vec<f64>, Vec<f64>);

/// One panel of a figure; panels are stacked top to bottom and share the x axis label.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Panel {
    pub ylabel: String,
    pub lines: Vec<Line>,
    /// Each line's style, by index: colour `i % 10`, dashed from the eleventh. A run's charts
    /// give a flow the same index in each (its rank among the run's flows), so flow 4 is the
    /// same colour in `throughput.png` and `window.png` although the window panel leaves out
    /// the rate-based flows. Empty (or shorter than `lines`): a line's position.
    pub styles: Vec<usize>,
}

/// Above this many flows, lines are drawn per label (the mean of its flows) instead of per flow.
pub const MAX_LINES: usize = 16;

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

/// Lines past the tenth (up to [`MAX_LINES`]) reuse the colours dashed, so no two lines of a
/// chart look alike: dash and gap lengths in pixels.
const DASH: u32 = 6;
const GAP: u32 = 4;

/// Whether a font is registered; registration happens once per process.
static FONT: OnceLock<bool> = OnceLock::new();

fn load_font(path: Option<&Path>) -> bool {
    *FONT.get_or_init(|| {
        let Some(bytes) = path.and_then(|p| std::fs::read(p).ok()) else {
            return false;
        };
        // plotters keeps fonts for the life of the process; leaking one file once is that.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    })
}

/// The panel's axes: `(xmin, xmax, ymin, ymax)`. The time axis starts at 0 unless the lines
/// start later than a tenth of the way in (a figure drawn from some time on, `after` in a claim
/// file's `[[figures]]`), where it starts at their first sample.
fn bounds(panel: &Panel) -> (f64, f64, f64, f64) {
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::INFINITY, 0.0f64, 0.0f64, 0.0f64);
    for (_, xs, ys) in &panel.lines {
        for &x in xs.iter().filter(|x| x.is_finite()) {
            xmin = xmin.min(x);
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
    let xmin = if xmin.is_finite() && xmin > 0.1 * xmax && xmin < xmax {
        xmin
    } else {
        0.0
    };
    (xmin, xmax, ymin, ymax * 1.05)
}

/// A rectangle in pixels of the whole image: `x0..x1` by `y0..y1`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Px {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
}

impl Px {
    fn of<CT: plotters::coord::CoordTranslate>(area: &DrawingArea<BitMapBackend<'_>, CT>) -> Px {
        let (x, y) = area.get_pixel_range();
        Px {
            x0: x.start,
            y0: y.start,
            x1: x.end,
            y1: y.end,
        }
    }

    fn size(&self) -> (i32, i32) {
        (self.x1 - self.x0, self.y1 - self.y0)
    }

    /// The rectangle grown by `d` pixels on each side.
    fn grown(&self, d: i32) -> Px {
        Px {
            x0: self.x0 - d,
            y0: self.y0 - d,
            x1: self.x1 + d,
            y1: self.y1 + d,
        }
    }

    /// The rectangle moved `dy` pixels down.
    fn down(&self, dy: i32) -> Px {
        Px {
            y0: self.y0 + dy,
            y1: self.y1 + dy,
            ..*self
        }
    }

    /// Whether the segment from `a` to `b` passes through (clipping it to the rectangle leaves
    /// something: Liang and Barsky's parametric test).
    fn crossed_by(&self, a: (i32, i32), b: (i32, i32)) -> bool {
        let (ax, ay) = (f64::from(a.0), f64::from(a.1));
        let (dx, dy) = (f64::from(b.0) - ax, f64::from(b.1) - ay);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let sides = [
            (-dx, ax - f64::from(self.x0)),
            (dx, f64::from(self.x1) - ax),
            (-dy, ay - f64::from(self.y0)),
            (dy, f64::from(self.y1) - ay),
        ];
        for (p, q) in sides {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else if p < 0.0 {
                t0 = t0.max(q / p);
            } else {
                t1 = t1.min(q / p);
            }
            if t0 > t1 {
                return false;
            }
        }
        true
    }
}

/// Where a figure's legends go. Inside a plot they cost no room but hide what they cover (a
/// user's 20-flow figure, fig4-7a, lost its upper right to a column of 20 entries), so they go
/// outside (all of a figure's legends alike) unless each finds a corner of its plot where no
/// line passes under it; the image then grows by the legends, so that the plots keep the size
/// they have in the image asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    /// In the first free corner of the plot: upper right, upper left, lower right, lower left.
    Inside,
    /// One column (more if the plot is too short) to the right of the plot.
    Right,
    /// Rows under the plot, as many entries to a row as fit in the plot's width: a column of
    /// many entries beside the plot would need a plot as tall, or smaller text.
    Below,
}

/// Up to this many entries a legend outside the plot is a column to its right; past it, rows
/// below, like the HTML report's legends.
const MAX_BESIDE: usize = 8;
/// The legend's text size, the axes' labels' less one; it does not shrink with many entries.
const LEGEND_FONT: u32 = 10;
/// Pixels: the line sample before an entry's text, the gap after it, the gap between columns,
/// the padding inside the legend's box, its distance from the plot (inside: from the plot's
/// edges; outside: from the panel's chart area, which holds the axis labels) and, outside,
/// from the image's edge (a box drawn up to the edge loses its border there).
const SAMPLE: i32 = 16;
const SAMPLE_GAP: i32 = 4;
const COL_GAP: i32 = 10;
const PAD: i32 = 4;
const OFFSET: i32 = 8;
const EDGE: i32 = 12;

/// A legend's entries in a grid of cells of the widest entry's size; below the plot they run
/// along rows (left to right, then down), beside it down columns.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Grid {
    cols: usize,
    rows: usize,
    cell: (i32, i32),
    along_rows: bool,
}

impl Grid {
    /// `n` entries in cells of `cell` pixels; `room`: the plot's width (rows below it) or
    /// height (columns beside or inside it).
    fn new(n: usize, cell: (i32, i32), place: Place, room: i32) -> Grid {
        let n = n.max(1);
        let (cols, rows) = if place == Place::Below {
            let fit = ((room - 2 * PAD + COL_GAP) / (cell.0 + COL_GAP)).max(1) as usize;
            let cols = fit.min(n);
            (cols, n.div_ceil(cols))
        } else {
            let fit = ((room - 2 * PAD) / cell.1.max(1)).max(1) as usize;
            let cols = n.div_ceil(fit);
            (cols, n.div_ceil(cols))
        };
        Grid {
            cols,
            rows,
            cell,
            along_rows: place == Place::Below,
        }
    }

    /// The box's width and height, padding included.
    fn size(&self) -> (i32, i32) {
        let cols = self.cols as i32;
        (
            2 * PAD + cols * self.cell.0 + (cols - 1) * COL_GAP,
            2 * PAD + self.rows as i32 * self.cell.1,
        )
    }

    /// The box with its top left corner at `(x, y)`.
    fn at(&self, x: i32, y: i32) -> Px {
        let (w, h) = self.size();
        Px {
            x0: x,
            y0: y,
            x1: x + w,
            y1: y + h,
        }
    }

    /// The box in each corner of `plot`, in the order tried: upper right, upper left, lower
    /// right, lower left.
    fn corners(&self, plot: &Px) -> [Px; 4] {
        let (w, h) = self.size();
        let (left, right) = (plot.x0 + OFFSET, plot.x1 - OFFSET - w);
        let (top, bottom) = (plot.y0 + OFFSET, plot.y1 - OFFSET - h);
        [
            self.at(right, top),
            self.at(left, top),
            self.at(right, bottom),
            self.at(left, bottom),
        ]
    }

    /// The top left corner of entry `k`'s cell, from the box's top left corner.
    fn cell_at(&self, k: usize) -> (i32, i32) {
        let (c, r) = if self.along_rows {
            (k % self.cols, k / self.cols)
        } else {
            (k / self.rows, k % self.rows)
        };
        (
            PAD + c as i32 * (self.cell.0 + COL_GAP),
            PAD + r as i32 * self.cell.1,
        )
    }
}

/// Line `j`'s colour and whether it is dashed (see [`Panel::styles`]).
fn line_style(panel: &Panel, j: usize) -> (RGBColor, bool) {
    let style = panel.styles.get(j).copied().unwrap_or(j);
    let dashed = style % (2 * COLOURS.len()) >= COLOURS.len();
    (COLOURS[style % COLOURS.len()], dashed)
}

type Area<'b> = DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>;
type Chart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The panel's axes in `area`; the same call lays out the plot when measuring and drawing, so
/// the drawn plot is the measured one.
fn build_chart<'a, 'b>(
    area: &'a Area<'b>,
    panel: &Panel,
    last: bool,
    text: bool,
) -> Result<Chart<'a, 'b>, String> {
    let (xmin, xmax, ymin, ymax) = bounds(panel);
    // The right margin holds half of the last x label, which is centred on the axis's end
    // ("100.0" of a 100 s run): at 8 px like the others it was cut to "100.(".
    ChartBuilder::on(area)
        .margin(8)
        .margin_right(24)
        .x_label_area_size(if text && last { 32 } else { 8 })
        .y_label_area_size(if text { 56 } else { 8 })
        .build_cartesian_2d(xmin..xmax, ymin..ymax)
        .map_err(|e| e.to_string())
}

/// One panel as drawn: its chart area (axes and labels), its plot (inside the axes) and its
/// legend's box, if it has one.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Drawn {
    area: Px,
    plot: Px,
    legend: Option<Px>,
}

/// The figure as asked for (`size`), before any legend: each panel's chart area, its plot, its
/// legend's grid inside the plot and the first corner of the plot where that hides no line, if
/// one does not. Measured by laying the charts out on a scratch bitmap.
struct Measured {
    panels: Vec<(Px, Px, Grid, Option<Px>)>,
}

fn measure(
    size: (u32, u32),
    title: &str,
    panels: &[Panel],
    text: bool,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let mut scratch = vec![0u8; size.0 as usize * size.1 as usize * 3];
    let root = BitMapBackend::with_buffer(&mut scratch, size).into_drawing_area();
    let body = if text {
        root.titled(title, ("sans-serif", 16))?
    } else {
        root.clone()
    };
    let font: TextStyle = ("sans-serif", LEGEND_FONT).into_font().into();
    let mut out = Vec::new();
    let areas = body.split_evenly((panels.len().max(1), 1));
    for (i, (panel, area)) in panels.iter().zip(&areas).enumerate() {
        let chart = build_chart(area, panel, i + 1 == panels.len(), text)?;
        let plot = Px::of(chart.plotting_area());
        let mut cell = (0, 0);
        if text {
            for (label, ..) in &panel.lines {
                let (w, h) = root.estimate_text_size(label, &font)?;
                cell = (cell.0.max(w as i32), cell.1.max(h as i32 + 4));
            }
        }
        cell.0 += SAMPLE + SAMPLE_GAP;
        let grid = Grid::new(
            panel.lines.len(),
            cell,
            Place::Inside,
            plot.size().1 - 2 * OFFSET,
        );
        // a line is a pixel wide: one along the box's edge counts as under it
        let hides = |corner: &Px| {
            let near = corner.grown(1);
            panel.lines.iter().any(|(_, xs, ys)| {
                let mut points = xs
                    .iter()
                    .zip(ys)
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .map(|(&x, &y)| chart.backend_coord(&(x, y)));
                let Some(mut a) = points.next() else {
                    return false;
                };
                near.crossed_by(a, a)
                    || points.any(|b| near.crossed_by(std::mem::replace(&mut a, b), b))
            })
        };
        let clear = if text {
            grid.corners(&plot).into_iter().find(|c| !hides(c))
        } else {
            None
        };
        out.push((Px::of(area), plot, grid, clear));
    }
    Ok(Measured { panels: out })
}

fn draw(
    path: &Path,
    size: (u32, u32),
    title: &str,
    xlabel: &str,
    panels: &[Panel],
    text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let drawn = render(size, title, xlabel, panels, text)?;
    write_png(path, drawn.size, &drawn.pixels)
}

/// A figure drawn: its RGB pixels, its size (the size asked for, widened or heightened by
/// legends outside the plots) and each panel as drawn.
struct Rendered {
    pixels: Vec<u8>,
    size: (u32, u32),
    #[cfg_attr(not(test), allow(dead_code))] // where the legends went, for the tests
    panels: Vec<Drawn>,
}

fn render(
    size: (u32, u32),
    title: &str,
    xlabel: &str,
    panels: &[Panel],
    text: bool,
) -> Result<Rendered, Box<dyn std::error::Error>> {
    let measured = measure(size, title, panels, text)?;
    let entries = panels.iter().map(|p| p.lines.len()).max().unwrap_or(0);
    let covered = measured
        .panels
        .iter()
        .zip(panels)
        .any(|((.., clear), p)| clear.is_none() && !p.lines.is_empty());
    let place = if !text || entries == 0 || !covered {
        Place::Inside
    } else if entries > MAX_BESIDE {
        Place::Below
    } else {
        Place::Right
    };
    // Each panel's legend grid, in its place, and the room it takes outside the chart area: the
    // box and its distances from the chart area and from the image's edge.
    let grids: Vec<Grid> = measured
        .panels
        .iter()
        .zip(panels)
        .map(|((_, plot, grid, _), panel)| match place {
            Place::Inside => *grid,
            Place::Right => Grid::new(panel.lines.len(), grid.cell, place, plot.size().1),
            Place::Below => Grid::new(panel.lines.len(), grid.cell, place, plot.size().0),
        })
        .collect();
    let extra = |g: &Grid| match place {
        Place::Inside => (0, 0),
        Place::Right => (g.size().0 + OFFSET + EDGE, 0),
        Place::Below => (0, g.size().1 + OFFSET + EDGE),
    };
    let wider = grids.iter().map(|g| extra(g).0).max().unwrap_or(0);
    let taller: i32 = grids.iter().map(|g| extra(g).1).sum();
    let full = (size.0 + wider as u32, size.1 + taller as u32);

    let mut pixels = vec![0u8; full.0 as usize * full.1 as usize * 3];
    let mut drawn = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut pixels, full).into_drawing_area();
        root.fill(&WHITE)?;
        if text {
            // centred over the plots, not over the legends beside them
            root.clone()
                .shrink((0, 0), (size.0, full.1))
                .titled(title, ("sans-serif", 16))?;
        }
        let mut below = 0;
        let measured = measured.panels.iter().zip(&grids);
        for (i, (panel, ((area, plot, _, clear), grid))) in panels.iter().zip(measured).enumerate()
        {
            let (area, plot) = (area.down(below), plot.down(below));
            let chart_area = root.clone().shrink((area.x0, area.y0), area.size());
            let last = i + 1 == panels.len();
            draw_panel(&chart_area, panel, last, xlabel, text)?;
            let legend = (text && !panel.lines.is_empty()).then(|| match place {
                // Inside, nothing is below: the plot is where it was measured.
                Place::Inside => clear.unwrap_or(grid.corners(&plot)[0]),
                Place::Right => grid.at(area.x1 + OFFSET, plot.y0),
                Place::Below => grid.at(plot.x0, area.y1 + OFFSET),
            });
            if let Some(at) = legend {
                draw_legend(&root, panel, grid, at, place == Place::Inside)?;
            }
            below += extra(grid).1;
            drawn.push(Drawn { area, plot, legend });
        }
        root.present()?;
    }
    Ok(Rendered {
        pixels,
        size: full,
        panels: drawn,
    })
}

/// Draw the panel's axes and lines in `area`.
fn draw_panel(
    area: &Area<'_>,
    panel: &Panel,
    last: bool,
    xlabel: &str,
    text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut chart = build_chart(area, panel, last, text)?;
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
    for (j, (_, xs, ys)) in panel.lines.iter().enumerate() {
        let (colour, dashed) = line_style(panel, j);
        let points = xs
            .iter()
            .zip(ys)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|(&x, &y)| (x, y));
        let style = colour.stroke_width(1);
        if dashed {
            chart.draw_series(DashedLineSeries::new(points, DASH, GAP, style))?;
        } else {
            chart.draw_series(LineSeries::new(points, style))?;
        }
    }
    Ok(())
}

/// Draw the panel's legend in its box `at` (whole-image pixels); inside the plot the box is a
/// little see-through, as plotters' own legends were.
fn draw_legend(
    root: &Area<'_>,
    panel: &Panel,
    grid: &Grid,
    at: Px,
    inside: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    // a rectangle's corners are its first and last pixels
    let corners = [(at.x0, at.y0), (at.x1 - 1, at.y1 - 1)];
    let fill = WHITE.mix(if inside { 0.85 } else { 1.0 });
    root.draw(&Rectangle::new(corners, fill.filled()))?;
    root.draw(&Rectangle::new(corners, BLACK.mix(0.3)))?;
    let font = ("sans-serif", LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (label, ..)) in panel.lines.iter().enumerate() {
        let (colour, dashed) = line_style(panel, k);
        let stroke = colour.stroke_width(2);
        let (cx, cy) = grid.cell_at(k);
        let (x, y) = (at.x0 + cx, at.y0 + cy + grid.cell.1 / 2);
        // The sample is two strokes, touching for a solid line and apart for a dashed one.
        let (a, b) = if dashed { (6, 10) } else { (8, 8) };
        root.draw(&PathElement::new(vec![(x, y), (x + a, y)], stroke))?;
        root.draw(&PathElement::new(vec![(x + b, y), (x + SAMPLE, y)], stroke))?;
        root.draw_text(label, &font, (x + SAMPLE + SAMPLE_GAP, y))?;
    }
    Ok(())
}

/// Encode RGB `pixels` of `size` as a PNG file at `path`.
fn write_png(
    path: &Path,
    size: (u32, u32),
    pixels: &[u8],
) -> Result<(), Box<dyn std::error::Error>> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, size.0, size.1);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = enc.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;
    Ok(())
}

/// Draw `panels` stacked in one PNG at `path`, `size` pixels (width, height), with text if
/// `font` is a readable TrueType file. The image is wider or taller by the legends where they
/// would hide lines inside the plots: a legend stays in a corner of its plot where no line
/// passes, else all go outside (beside up to 8 entries, in rows below past that).
pub fn plot_panels(
    path: &Path,
    panels: &[Panel],
    title: &str,
    xlabel: &str,
    size: (u32, u32),
    font: Option<&Path>,
) -> Result<(), String> {
    if !(100..=10_000).contains(&size.0) || !(100..=10_000).contains(&size.1) {
        return Err("width and height: must be between 100 and 10000 pixels".into());
    }
    for p in panels {
        if let Some((label, xs, ys)) = p.lines.iter().find(|(_, xs, ys)| xs.len() != ys.len()) {
            return Err(format!(
                "panels: line {label:?} has {} x values but {} y values",
                xs.len(),
                ys.len()
            ));
        }
    }
    let text = load_font(font);
    draw(path, size, title, xlabel, panels, text)
        .map_err(|e| format!("{}: cannot draw the plot: {e}", path.display()))
}

/// One line per flow of `column` (scaled), or per label as the mean over its flows when there
/// are more than [`MAX_LINES`] flows. Samples without a value (`None`) are left out. With
/// each line, its style index (see [`Panel::styles`]): the flow's rank among all the run's
/// flows, or the label's among all labels, so that every chart of a run draws a flow alike.
///
/// `column` gives the column's rows afresh on each call. With more than [`MAX_LINES`] flows
/// the means are summed straight from the rows, in row order, without a copy of every flow's
/// points (16 bytes a sample: a tenth of the memory of a 1000-flow hour). The simulator and
/// the testbed write each sampling time's rows in ascending flow order, so a mean adds its
/// flows in that order.
fn flow_lines<I: Iterator<Item = Option<f64>>>(
    summary: &Summary,
    flows: &FlowColumns,
    column: impl Fn() -> I,
    scale: f64,
) -> (Vec<Line>, Vec<usize>) {
    let labels: BTreeMap<i64, String> = summary
        .flows
        .iter()
        .map(|f| {
            let l = f.label.clone().unwrap_or_else(|| f.protocol.clone());
            (i64::from(f.id), l)
        })
        .collect();
    let label = |id: i64| labels.get(&id).cloned().unwrap_or_default();
    let all_ids: std::collections::BTreeSet<i64> = flows.flow.iter().copied().collect();
    // a rank past MAX_LINES would repeat another line's style: then the position serves
    let rank = |all: usize, r: Option<usize>, j: usize| match r {
        Some(r) if all <= MAX_LINES => r,
        _ => j,
    };
    let with_values: std::collections::BTreeSet<i64> = flows
        .flow
        .iter()
        .zip(column())
        .filter_map(|(&id, v)| v.map(|_| id))
        .collect();
    if with_values.len() > MAX_LINES {
        // One mean line per label, in label order: the sum and count at each sampling time
        // (times are exact multiples of the interval, so their bit patterns serve as keys).
        let all_labels: Vec<String> = all_ids
            .iter()
            .map(|&id| label(id))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let label_of: BTreeMap<i64, usize> = all_ids
            .iter()
            .filter_map(|&id| Some((id, all_labels.binary_search(&label(id)).ok()?)))
            .collect();
        let mut groups: Vec<BTreeMap<u64, (f64, f64, u32)>> =
            vec![BTreeMap::new(); all_labels.len()];
        for ((id, &t), v) in flows.flow.iter().zip(&flows.t).zip(column()) {
            let (Some(v), Some(&g)) = (v, label_of.get(id)) else {
                continue;
            };
            let e = groups[g].entry(t.to_bits()).or_insert((t, 0.0, 0));
            e.1 += v * scale;
            e.2 += 1;
        }
        return groups
            .into_iter()
            .enumerate()
            .filter(|(_, pts)| !pts.is_empty())
            .enumerate()
            .map(|(j, (g, pts))| {
                let style = rank(all_labels.len(), Some(g), j);
                let mut pts: Vec<(f64, f64)> = pts
                    .into_values()
                    .map(|(x, s, n)| (x, s / f64::from(n)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (xs, ys) = pts.into_iter().unzip();
                ((format!("{} (mean)", all_labels[g]), xs, ys), style)
            })
            .unzip();
    }
    let mut per_flow: BTreeMap<i64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for ((&id, &t), v) in flows.flow.iter().zip(&flows.t).zip(column()) {
        if let Some(v) = v {
            let e = per_flow.entry(id).or_default();
            e.0.push(t);
            e.1.push(v * scale);
        }
    }
    per_flow
        .into_iter()
        .enumerate()
        .map(|(j, (id, (xs, ys)))| {
            let style = rank(all_ids.len(), all_ids.iter().position(|&x| x == id), j);
            ((format!("{id} {}", label(id)), xs, ys), style)
        })
        .unzip()
}

/// Write `throughput.png`, `window.png` (cwnd and/or rate) and `queue.png` into `dir`; returns
/// the files written (a chart with nothing to show is skipped).
pub fn plot_run(
    dir: &Path,
    summary: &Summary,
    flows: &FlowColumns,
    links: &LinkColumns,
    font: Option<&Path>,
) -> Result<Vec<PathBuf>, String> {
    let name = &summary.scenario;
    let mut written = Vec::new();
    let mut chart = |file: &str, panels: &[Panel], title: String, height: u32| {
        let path = dir.join(file);
        plot_panels(&path, panels, &title, "time (s)", (880, height), font)?;
        written.push(path);
        Ok::<(), String>(())
    };
    let throughput = || flows.throughput_bps.iter().map(|&x| Some(x));
    let (tput, styles) = flow_lines(summary, flows, throughput, 1e-6);
    if !tput.is_empty() {
        let panel = Panel {
            ylabel: "throughput (Mb/s)".into(),
            lines: tput,
            styles,
        };
        chart(
            "throughput.png",
            &[panel],
            format!("{name}: throughput"),
            440,
        )?;
    }
    let panels: Vec<Panel> = [
        (
            "cwnd (packets)",
            flow_lines(summary, flows, || flows.cwnd.iter(), 1.0),
        ),
        (
            "allowed rate (Mb/s)",
            flow_lines(summary, flows, || flows.rate_bps.iter(), 1e-6),
        ),
    ]
    .into_iter()
    .filter(|(_, (lines, _))| !lines.is_empty())
    .map(|(ylabel, (lines, styles))| Panel {
        ylabel: ylabel.into(),
        lines,
        styles,
    })
    .collect();
    if !panels.is_empty() {
        let height = 110 + 330 * panels.len() as u32;
        chart(
            "window.png",
            &panels,
            format!("{name}: window and rate"),
            height,
        )?;
    }
    if !links.t.is_empty() {
        let mut per_link: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        for ((link, &t), &q) in links.link.iter().zip(&links.t).zip(&links.queue_pkts) {
            let e = per_link.entry(link.as_str()).or_default();
            e.0.push(t);
            e.1.push(q as f64);
        }
        let lines = per_link
            .into_iter()
            .map(|(l, (xs, ys))| (l.to_owned(), xs, ys))
            .collect();
        let panel = Panel {
            ylabel: "queue (packets)".into(),
            lines,
            styles: Vec::new(),
        };
        chart("queue.png", &[panel], format!("{name}: queue length"), 330)?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 s run of TCP, TFRC and TFWC (flows 0, 1, 2) on one dumbbell.
    fn mixed_run() -> crate::Finished {
        // Tests run in parallel: each call gets a directory of its own.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tfcc-plots-test-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.toml");
        std::fs::write(
            &path,
            "duration = \"2s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }\n\
             [[flows]]\nprotocol = \"tcp-sack\"\n[[flows]]\nprotocol = \"tfrc\"\n\
             [[flows]]\nprotocol = \"tfwc\"\n",
        )
        .unwrap();
        let run = crate::run(&path, &[], None, &mut |_, _| true).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
        run
    }

    /// Register DejaVu Sans (legends are drawn only with text): Debian's copy, else
    /// matplotlib's in the workspace's `.venv` (`make install`). Directly, not by
    /// `load_font`: another test of the process may have settled that without a font.
    fn with_font() {
        static DONE: OnceLock<()> = OnceLock::new();
        DONE.get_or_init(|| {
            let debian = PathBuf::from("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
            let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
            let found = std::iter::once(debian)
                .chain(
                    std::fs::read_dir(venv)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|d| d.path().join("site-packages/matplotlib/mpl-data/fonts/ttf"))
                        .map(|d| d.join("DejaVuSans.ttf")),
                )
                .find(|p| p.is_file());
            let font =
                found.expect("DejaVu Sans: fonts-dejavu-core or `make install`'s matplotlib");
            let bytes: &'static [u8] = Box::leak(std::fs::read(&font).unwrap().into_boxed_slice());
            let registered = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
            assert!(registered.is_ok(), "{}: not registered", font.display());
        });
    }

    fn overlap(a: &Px, b: &Px) -> bool {
        a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
    }

    /// `n` lines over 0-100 s, line `j` at `y(j, x)`, as in a run's chart.
    fn lines(n: usize, y: impl Fn(usize, f64) -> f64) -> Panel {
        let xs: Vec<f64> = (0..=100).map(f64::from).collect();
        Panel {
            ylabel: "y".into(),
            lines: (0..n)
                .map(|j| {
                    let ys = xs.iter().map(|&x| y(j, x)).collect();
                    (format!("{j} tcp-sack"), xs.clone(), ys)
                })
                .collect(),
            styles: Vec::new(),
        }
    }

    /// Render and check what holds wherever a legend goes: each legend lies in the image, clear
    /// of its edges and of every panel's plot (its own legend excepted if inside), and of the
    /// other legends; each plot keeps the size of `reference`'s (if given).
    fn checked(
        size: (u32, u32),
        panels: &[Panel],
        reference: &[Drawn],
    ) -> ((u32, u32), Vec<Drawn>) {
        let Rendered {
            pixels,
            size: full,
            panels: drawn,
        } = render(size, "t", "time (s)", panels, true).unwrap();
        assert_eq!(pixels.len(), full.0 as usize * full.1 as usize * 3);
        assert!(
            full.0 >= size.0 && full.1 >= size.1,
            "{full:?} smaller than {size:?}"
        );
        let image = Px {
            x0: 0,
            y0: 0,
            x1: full.0 as i32,
            y1: full.1 as i32,
        };
        for (i, d) in drawn.iter().enumerate() {
            if let Some(r) = reference.get(i) {
                assert_eq!(d.plot.size(), r.plot.size(), "panel {i}'s plot");
            }
            let legend = d.legend.expect("a legend");
            let inner = image.grown(-8);
            assert!(
                inner.x0 <= legend.x0
                    && inner.y0 <= legend.y0
                    && legend.x1 <= inner.x1
                    && legend.y1 <= inner.y1,
                "legend {legend:?} not 8 px inside the image {image:?}"
            );
            for (k, other) in drawn.iter().enumerate() {
                if k != i || image.size() != (size.0 as i32, size.1 as i32) {
                    assert!(!overlap(&legend, &other.plot), "legend {i} on plot {k}");
                }
                if k != i {
                    assert!(
                        !overlap(&legend, &other.legend.unwrap()),
                        "legends {i}, {k}"
                    );
                }
            }
        }
        (full, drawn)
    }

    #[test]
    fn a_legend_stays_off_the_lines_and_the_plot_keeps_its_size() {
        with_font();
        let size = (880, 440);
        // Lines low in the plot after a peak at the start leave its upper right corner to the
        // legend: the image is the size asked for.
        let low = || lines(3, |j, x| if x < 10.0 { 10.0 } else { j as f64 });
        let low = [low(), low()];
        let (full, reference) = checked(size, &low[..1], &[]);
        assert_eq!(full, size);
        let (full, reference2) = checked(size, &low, &[]);
        assert_eq!(full, size);
        let legend = reference[0].legend.unwrap();
        let plot = reference[0].plot;
        assert!(plot.x0 < legend.x0 && legend.x1 < plot.x1 && plot.y0 < legend.y0);
        // One flow along the top of the plot (at the link's rate): the lower right corner.
        let (full, drawn) = checked(size, &[lines(1, |_, _| 10.0)], &reference);
        assert_eq!(full, size);
        let (legend, plot) = (drawn[0].legend.unwrap(), drawn[0].plot);
        assert!(legend.x1 < plot.x1 && legend.y1 < plot.y1 && legend.y0 > plot.y1 - 40);
        // One flow swinging from top to bottom every second: no corner is free, beside it.
        let swing = |_, x: f64| if x as i64 % 2 == 0 { 0.0 } else { 10.0 };
        let (full, drawn) = checked(size, &[lines(1, swing)], &reference);
        assert_eq!(full.1, size.1);
        assert!(drawn[0].legend.unwrap().x0 >= drawn[0].area.x1, "{drawn:?}");
        // 8 flows across the plot: one column beside it.
        let (_, drawn) = checked(size, &[lines(8, |j, _| j as f64)], &reference);
        assert!(drawn[0].legend.unwrap().x0 >= drawn[0].area.x1, "{drawn:?}");
        // 20 flows (fig4-7a), in a figure of two panels: rows under each panel, no taller than
        // the column of 3 entries (the text no smaller), and the plots as with the legend
        // inside.
        let many = [lines(20, |j, _| j as f64), lines(20, |j, _| j as f64)];
        let (full, drawn) = checked(size, &many, &reference2);
        assert_eq!(full.0, size.0);
        let legend = drawn[0].legend.unwrap();
        assert!(legend.y0 >= drawn[0].area.y1 && legend.y1 <= drawn[1].area.y0);
        assert!(drawn[1].legend.unwrap().y0 >= drawn[1].area.y1);
        let (_, row) = reference[0].legend.unwrap().size();
        assert!(
            legend.size().1 <= row,
            "{legend:?}: more rows than 3 entries' column"
        );
    }

    #[test]
    fn a_segment_crosses_a_rectangle_only_through_it() {
        let r = Px {
            x0: 10,
            y0: 10,
            x1: 20,
            y1: 20,
        };
        assert!(r.crossed_by((0, 15), (30, 15)));
        assert!(r.crossed_by((15, 0), (15, 30)));
        assert!(r.crossed_by((12, 12), (12, 12)));
        assert!(r.crossed_by((0, 0), (30, 30)));
        assert!(!r.crossed_by((0, 0), (30, 0)));
        assert!(!r.crossed_by((0, 30), (30, 30)));
        assert!(!r.crossed_by((0, 15), (15, 0)));
        assert!(!r.crossed_by((5, 5), (5, 5)));
        assert!(!r.crossed_by((21, 0), (21, 40)));
    }

    #[test]
    fn the_time_axis_starts_at_zero_unless_the_lines_start_late() {
        let panel = |xs: Vec<f64>| Panel {
            ylabel: "y".into(),
            lines: vec![("a".into(), xs.clone(), vec![1.0; xs.len()])],
            styles: Vec::new(),
        };
        // A run's series from its first sampling interval: the axis from 0.
        assert_eq!(bounds(&panel(vec![0.1, 50.0, 100.0])).0, 0.0);
        // A figure drawn from 80 s of 120 s: the axis from the first sample.
        assert_eq!(bounds(&panel(vec![80.0, 100.0, 120.0])).0, 80.0);
        // No lines: 0 to 1.
        let (xmin, xmax, ..) = bounds(&panel(Vec::new()));
        assert_eq!((xmin, xmax), (0.0, 1.0));
    }

    #[test]
    fn a_flow_keeps_its_colour_in_every_chart_of_a_run() {
        // ux3: window.png's cwnd panel (TCP and TFWC only) numbered its lines afresh, so
        // TFWC's flow 2 was green in throughput.png and orange beside TCP's cwnd.
        let run = mixed_run();
        let tput = || run.flows.throughput_bps.iter().map(|&x| Some(x));
        let (lines, styles) = flow_lines(&run.summary, &run.flows, tput, 1e-6);
        let labels: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(labels, ["0 tcp-sack", "1 tfrc", "2 tfwc"]);
        assert_eq!(styles, [0, 1, 2]);
        let (lines, styles) = flow_lines(&run.summary, &run.flows, || run.flows.cwnd.iter(), 1.0);
        let labels: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(labels, ["0 tcp-sack", "2 tfwc"]);
        assert_eq!(styles, [0, 2]);
        let (lines, styles) =
            flow_lines(&run.summary, &run.flows, || run.flows.rate_bps.iter(), 1e-6);
        assert_eq!(lines.len(), 1);
        assert_eq!(styles, [1]);
    }

    #[test]
    fn mean_lines_are_the_per_label_means_of_each_sampling_time() {
        // 30 flows (past MAX_LINES; 20 of them with a cwnd), labelled as the run's flows 0-2
        // and "" for the rest. In time-major rows of ascending flow ids, as the simulator
        // writes them, each mean adds its flows in id order: bit for bit the sum below. Rows
        // in reverse order give the same lines up to rounding.
        let run = mixed_run();
        let label = |id: i64| {
            ["tcp-sack", "tfrc", "tfwc"]
                .get(id as usize)
                .copied()
                .unwrap_or("")
        };
        let tput = |id: i64, k: u32| 0.1 * (id as f64 + 1.0) * f64::from(k).sqrt();
        let cwnd = |id: i64, k: u32| (id % 3 != 0).then(|| 1.0 / (id as f64 + f64::from(k)));
        let mut c = FlowColumns::default();
        for k in 1..=50 {
            for id in 0..30i64 {
                c.flow.push(id);
                c.t.push(f64::from(k) * 0.1);
                c.throughput_bps.push(tput(id, k));
                c.cwnd.push(cwnd(id, k));
            }
        }
        let mut rev = FlowColumns::default();
        let c_cwnd = c.cwnd.to_vec();
        for i in (0..c.len()).rev() {
            rev.flow.push(c.flow[i]);
            rev.t.push(c.t[i]);
            rev.throughput_bps.push(c.throughput_bps[i]);
            rev.cwnd.push(c_cwnd[i]);
        }
        let expected = |value: &dyn Fn(i64, u32) -> Option<f64>, scale: f64| -> Vec<Line> {
            let mut out = Vec::new();
            for l in ["", "tcp-sack", "tfrc", "tfwc"] {
                let (mut xs, mut ys) = (Vec::new(), Vec::new());
                for k in 1..=50 {
                    let vs: Vec<f64> = (0..30i64)
                        .filter(|&id| label(id) == l)
                        .filter_map(|id| value(id, k).map(|v| v * scale))
                        .collect();
                    if !vs.is_empty() {
                        xs.push(f64::from(k) * 0.1);
                        ys.push(vs.iter().fold(0.0, |a, v| a + v) / vs.len() as f64);
                    }
                }
                if !xs.is_empty() {
                    out.push((format!("{l} (mean)"), xs, ys));
                }
            }
            out
        };
        let cases = [
            (
                flow_lines(&run.summary, &c, || c.cwnd.iter(), 1.0),
                flow_lines(&run.summary, &rev, || rev.cwnd.iter(), 1.0),
                expected(&cwnd, 1.0),
                // "tcp-sack" (flow 0) has no cwnd here; the styles stay the labels' ranks
                vec![0, 2, 3],
            ),
            (
                flow_lines(
                    &run.summary,
                    &c,
                    || c.throughput_bps.iter().map(|&x| Some(x)),
                    1e-6,
                ),
                flow_lines(
                    &run.summary,
                    &rev,
                    || rev.throughput_bps.iter().map(|&x| Some(x)),
                    1e-6,
                ),
                expected(&|id, k| Some(tput(id, k)), 1e-6),
                vec![0, 1, 2, 3],
            ),
        ];
        for (in_order, reversed, want, styles) in cases {
            let bits = |v: &Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(in_order.0.len(), want.len());
            for (got, want) in in_order.0.iter().zip(&want) {
                assert_eq!(got.0, want.0);
                assert_eq!(bits(&got.1), bits(&want.1), "{}", got.0);
                assert_eq!(bits(&got.2), bits(&want.2), "{}", got.0);
            }
            assert_eq!(in_order.1, styles);
            assert_eq!(reversed.1, styles);
            for (a, b) in in_order.0.iter().zip(&reversed.0) {
                assert_eq!((&a.0, &a.1), (&b.0, &b.1));
                for (x, y) in a.2.iter().zip(&b.2) {
                    assert!((x - y).abs() <= 1e-12 * x.abs(), "{}: {x} {y}", a.0);
                }
            }
        }
    }
}
