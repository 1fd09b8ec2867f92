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

fn draw(
    path: &Path,
    size: (u32, u32),
    title: &str,
    xlabel: &str,
    panels: &[Panel],
    text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
        draw_into(root, title, xlabel, panels, text)?;
    }
    write_png(path, size, &pixels)
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

fn draw_into(
    root: DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    xlabel: &str,
    panels: &[Panel],
    text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let root = if text {
        root.titled(title, ("sans-serif", 16))?
    } else {
        root
    };
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (i, (panel, area)) in panels.iter().zip(&areas).enumerate() {
        let (xmin, xmax, ymin, ymax) = bounds(panel);
        let last = i + 1 == panels.len();
        // The right margin holds half of the last x label, which is centred on the axis's end
        // ("100.0" of a 100 s run): at 8 px like the others it was cut to "100.(".
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .margin_right(24)
            .x_label_area_size(if text && last { 32 } else { 8 })
            .y_label_area_size(if text { 56 } else { 8 })
            .build_cartesian_2d(xmin..xmax, ymin..ymax)?;
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
            let style = panel.styles.get(j).copied().unwrap_or(j);
            let colour = COLOURS[style % COLOURS.len()];
            let dashed = style % (2 * COLOURS.len()) >= COLOURS.len();
            let points = xs
                .iter()
                .zip(ys)
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(&x, &y)| (x, y));
            let style = colour.stroke_width(1);
            let series = if dashed {
                chart.draw_series(DashedLineSeries::new(points, DASH, GAP, style))?
            } else {
                chart.draw_series(LineSeries::new(points, style))?
            };
            if text {
                let legend = colour.stroke_width(2);
                // The legend sample is two strokes, touching for a solid line and apart for a
                // dashed one (offsets from the legend entry's anchor).
                let (a, b) = if dashed { (6, 10) } else { (8, 8) };
                series.label(label.as_str()).legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (a, 0)], legend)
                        + PathElement::new(vec![(b, 0), (16, 0)], legend)
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

/// Draw `panels` stacked in one PNG at `path`, `size` pixels (width, height), with text if
/// `font` is a readable TrueType file.
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
