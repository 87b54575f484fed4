//! Draws one chart as SVG text with plotters: a value against message size
//! (log-2 x axis, log y for latency, linear y for bandwidth), one line per
//! run and the reference dashed in black; or, for benchmarks without sizes
//! (barrier), one point per run beside the reference level.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use thiserror::Error;

use super::axis::{linear_value_range, log2_range, log2_tick_label, log_value_range, value_label};
use crate::compare::model::Quantity;

/// Why a chart could not be drawn.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum ChartError {
    #[error("no positive message sizes to draw")]
    NoSizes,
    #[error("no positive values to draw")]
    NoValues,
    /// plotters' own error, as it describes itself (Debug).
    #[error("{0}")]
    Drawing(String),
}

pub(crate) const WIDTH: u32 = 1100;
pub(crate) const HEIGHT: u32 = 680;

/// Line colours for runs (the reference is black); chosen to stay apart.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// One series: a run, or the reference.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Line {
    pub label: String,
    /// (size in bytes, value), sizes ascending.
    pub points: Vec<(u64, f64)>,
    pub reference: bool,
    /// The run's spread, p10 to p90 per size (size, low, high), sizes
    /// ascending; drawn as a shaded band behind the line. Empty where the
    /// run has no per-iteration distribution (OSU's text, a batch).
    pub band: Vec<(u64, f64, f64)>,
}

/// How opaque a run's p10–p90 band is drawn.
pub(crate) const BAND_OPACITY: f64 = 0.18;

/// Everything one chart shows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ChartSpec {
    pub benchmark: String,
    pub metric: Quantity,
    pub title: String,
    pub subtitle: String,
    /// False for benchmarks without message sizes.
    pub sized: bool,
    pub lines: Vec<Line>,
}

impl ChartSpec {
    fn y_desc(&self) -> String {
        let scale = if self.metric == Quantity::Latency && self.sized { ", log scale" } else { "" };
        format!("{} ({}{scale})", self.metric.name(), self.metric.unit())
    }
}

fn colour(spec: &ChartSpec, i: usize) -> RGBColor {
    if spec.lines[i].reference {
        BLACK
    } else {
        let run_index = spec.lines[..i].iter().filter(|l| !l.reference).count();
        PALETTE[run_index % PALETTE.len()]
    }
}

/// Grid lines of both chart kinds.
const GRID_BOLD: RGBColor = RGBColor(205, 205, 205);
const GRID_LIGHT: RGBColor = RGBColor(238, 238, 238);

/// The plot area with room for the axis labels, the same for both kinds.
fn chart_builder<'a, 'b>(area: &'a DrawingArea<SVGBackend<'b>, Shift>) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(area);
    b.margin_left(16).margin_right(36).margin_bottom(12).x_label_area_size(64).y_label_area_size(96);
    b
}

fn err<E: std::fmt::Debug>(e: E) -> ChartError {
    ChartError::Drawing(format!("{e:?}"))
}

/// The chart as an SVG document.
pub(crate) fn render(spec: &ChartSpec) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(74);
        head.draw_text(&spec.title, &("sans-serif", 26).into_font().color(&BLACK), (24, 12)).map_err(err)?;
        head.draw_text(&spec.subtitle, &("sans-serif", 16).into_font().color(&RGBColor(70, 70, 70)), (24, 46))
            .map_err(err)?;
        if spec.sized {
            let sizes = spec.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
            let (x0, x1) = log2_range(sizes).ok_or(ChartError::NoSizes)?;
            let values = || {
                spec.lines
                    .iter()
                    .flat_map(|l| l.points.iter().map(|p| p.1).chain(l.band.iter().flat_map(|b| [b.1, b.2])))
            };
            if spec.metric == Quantity::Latency {
                let (y0, y1) = log_value_range(values()).ok_or(ChartError::NoValues)?;
                // Powers of two label a log axis more densely than powers of ten.
                draw_sized(&body, spec, x0..x1, (y0..y1).log_scale().base(2.0))?;
            } else {
                let (y0, y1) = linear_value_range(values()).ok_or(ChartError::NoValues)?;
                draw_sized(&body, spec, x0..x1, y0..y1)?;
            }
        } else {
            draw_sizeless(&body, spec)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_sized<Y>(area: &DrawingArea<SVGBackend, Shift>, spec: &ChartSpec, x: Range<f64>, y: Y) -> Result<(), ChartError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let powers = (x.end - x.start).round() as usize + 1;
    let mut chart = chart_builder(area).build_cartesian_2d::<Range<f64>, Y>(x, y).map_err(err)?;
    let x_fmt = |v: &f64| log2_tick_label(*v);
    let y_fmt = |v: &f64| value_label(*v);
    chart
        .configure_mesh()
        .x_labels(powers.min(12))
        .x_max_light_lines(1)
        .x_label_formatter(&x_fmt)
        .y_labels(12)
        .y_label_formatter(&y_fmt)
        .x_desc("message size (bytes, log2 scale)")
        .y_desc(spec.y_desc())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID_LIGHT)
        .draw()
        .map_err(err)?;
    // Bands first, so that every line is drawn over them: the polygon
    // runs along the p90s and back along the p10s. A band needs two sizes.
    for (i, line) in spec.lines.iter().enumerate() {
        let band: Vec<&(u64, f64, f64)> = line.band.iter().filter(|b| b.0 > 0 && b.1 > 0.0).collect();
        if band.len() < 2 {
            continue;
        }
        let band: Vec<(f64, f64, f64)> = band.iter().map(|b| ((b.0 as f64).log2(), b.1, b.2)).collect();
        chart.draw_series(std::iter::once(band_polygon(&band, colour(spec, i)))).map_err(err)?;
    }
    for (i, line) in spec.lines.iter().enumerate() {
        let c = colour(spec, i);
        let pts: Vec<(f64, f64)> =
            line.points.iter().filter(|p| p.0 > 0 && p.1 > 0.0).map(|&(s, v)| ((s as f64).log2(), v)).collect();
        let legend = move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3));
        if line.reference {
            chart
                .draw_series(DashedLineSeries::new(pts.clone(), 10, 6, c.stroke_width(2)))
                .map_err(err)?
                .label(&line.label)
                .legend(legend);
            chart.draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 5, c.filled()))).map_err(err)?;
        } else {
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(&line.label)
                .legend(legend);
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled()))).map_err(err)?;
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft).map_err(err)
}

fn draw_sizeless(area: &DrawingArea<SVGBackend, Shift>, spec: &ChartSpec) -> Result<(), ChartError> {
    let n = spec.lines.len();
    let values = spec.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (y0, y1) = linear_value_range(values).ok_or(ChartError::NoValues)?;
    let mut chart = chart_builder(area)
        .build_cartesian_2d::<Range<f64>, Range<f64>>(0.5..n as f64 + 0.5, y0..y1 * 1.1)
        .map_err(err)?;
    let names: Vec<String> =
        spec.lines.iter().map(|l| if l.reference { "reference".to_string() } else { l.label.clone() }).collect();
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 1.0 {
            return String::new();
        }
        names.get(i as usize - 1).map(|s| shorten(s, 28)).unwrap_or_default()
    };
    let y_fmt = |v: &f64| value_label(*v);
    chart
        .configure_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&x_fmt)
        .disable_x_mesh()
        .y_labels(10)
        .y_label_formatter(&y_fmt)
        .x_desc("run")
        .y_desc(spec.y_desc())
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 18))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID_LIGHT)
        .draw()
        .map_err(err)?;
    for (i, line) in spec.lines.iter().enumerate() {
        let c = colour(spec, i);
        let x = i as f64 + 1.0;
        for &(_, v) in &line.points {
            let legend = move |(x, y): (i32, i32)| Circle::new((x + 12, y), 5, c.filled());
            let font = ("sans-serif", 16).into_font().color(&c);
            let marker = EmptyElement::at((x, v))
                + Circle::new((0, 0), 7, c.filled())
                + Text::new(format!("{v:.2}"), (12, -20), font);
            chart.draw_series(std::iter::once(marker)).map_err(err)?.label(&line.label).legend(legend);
            if line.reference {
                let level = vec![(0.5, v), (n as f64 + 0.5, v)];
                chart.draw_series(DashedLineSeries::new(level, 10, 6, c.stroke_width(1))).map_err(err)?;
            }
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight).map_err(err)
}

/// A shaded band behind a line: its (x, low, high) points, x ascending,
/// outlined along the highs and back along the lows.
pub(crate) fn band_polygon(band: &[(f64, f64, f64)], c: RGBColor) -> Polygon<(f64, f64)> {
    let mut outline: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
    outline.extend(band.iter().rev().map(|b| (b.0, b.1)));
    Polygon::new(outline, c.mix(BAND_OPACITY).filled())
}

/// The legend box every chart draws, in its `corner`.
pub(crate) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    corner: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(120, 120, 120))
        .label_font(("sans-serif", 15))
        .draw()
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let tail: String = s.chars().rev().take(max - 1).collect::<Vec<_>>().into_iter().rev().collect();
    format!("…{tail}")
}
