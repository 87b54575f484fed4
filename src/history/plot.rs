//! `history plot BENCHMARK --out FILE.svg`: one chart of a series' key
//! sizes over its runs (oldest left), each with the baseline band the runs
//! before it formed, shaded. Drawn with plotters like `commbench plot`'s
//! charts (its colours, size, band opacity and axis labels); the file is
//! put in place whole and never written through a link, and a device or
//! standard output is written as what it is
//! ([`crate::report::safe_file::write_named`]).

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use rusqlite::{params, Connection};

use super::baseline::{self, StoredRun, MIN_BAND_RUNS};
use super::key::SeriesKey;
use crate::compare::model::Quantity;
use crate::plot::axis::{linear_value_range, log_value_range, value_label};
use crate::plot::chart::{band_polygon, draw_legend, HEIGHT, PALETTE, WIDTH};
use crate::report::safe_file::Put;

pub struct Request<'a> {
    pub benchmark: &'a str,
    pub sizes: &'a [u64],
    pub system: Option<&'a str>,
    pub datatype: Option<&'a str>,
    pub last: usize,
    pub out: &'a Path,
}

/// One size's line: (run index, value) and (run index, band low, high).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeLine {
    pub size: u64,
    pub points: Vec<(usize, f64)>,
    pub band: Vec<(usize, f64, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HistoryChart {
    pub title: String,
    pub subtitle: String,
    pub metric: Quantity,
    /// The runs' dates, oldest first (`2026-12-03`).
    pub dates: Vec<String>,
    pub lines: Vec<SizeLine>,
}

/// The chart of `runs` (one series, oldest first) at `sizes` (default:
/// the key sizes), for its bandwidth, else latency, else message rate.
pub fn chart(key: &SeriesKey, runs: &[StoredRun], sizes: &[u64], last: usize) -> Option<HistoryChart> {
    let has = |m: Quantity| runs.iter().any(|r| r.points.iter().any(|p| p.1 == m));
    let metric = [Quantity::Bandwidth, Quantity::Latency, Quantity::MessageRate].into_iter().find(|m| has(*m))?;
    let all: Vec<u64> = runs.iter().flat_map(|r| r.points.iter().filter(|p| p.1 == metric).map(|p| p.0)).collect();
    let family = baseline::family(all.iter().copied());
    let chosen = if sizes.is_empty() { baseline::key_sizes(&all) } else { sizes.to_vec() };
    let mut lines = Vec::new();
    for size in chosen {
        let values: Vec<(usize, (f64, Option<f64>))> =
            runs.iter().enumerate().filter_map(|(i, r)| r.value(metric, size).map(|v| (i, v))).collect();
        if values.is_empty() {
            continue;
        }
        let mut band = Vec::new();
        for j in MIN_BAND_RUNS..values.len() {
            let before: Vec<(f64, Option<f64>)> =
                values[j.saturating_sub(last.max(1))..j].iter().map(|v| v.1).collect();
            if before.len() < MIN_BAND_RUNS {
                continue;
            }
            if let Some((lo, hi)) = baseline::baseline(&before, family).and_then(|b| b.band()) {
                band.push((values[j].0, lo, hi));
            }
        }
        lines.push(SizeLine { size, points: values.iter().map(|v| (v.0, v.1 .0)).collect(), band });
    }
    if lines.is_empty() {
        return None;
    }
    let dates = runs.iter().map(|r| r.started_utc.get(..10).unwrap_or(&r.started_utc).to_string()).collect();
    Some(HistoryChart {
        title: format!("{}: {} over time", key.benchmark, metric.name()),
        subtitle: format!(
            "{} · {} · np={} · {} · {} memory · {} runs · shaded: where one new run should fall, from up to {last} runs before",
            key.system,
            key.datatype,
            key.np,
            key.mpi_library,
            key.memory,
            runs.len()
        ),
        metric,
        dates,
        lines,
    })
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// The chart as an SVG document.
pub(crate) fn render(c: &HistoryChart) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(74);
        head.draw_text(&c.title, &("sans-serif", 26).into_font().color(&BLACK), (24, 12)).map_err(err)?;
        head.draw_text(&c.subtitle, &("sans-serif", 15).into_font().color(&RGBColor(70, 70, 70)), (24, 46))
            .map_err(err)?;
        let values =
            || c.lines.iter().flat_map(|l| l.points.iter().map(|p| p.1).chain(l.band.iter().flat_map(|b| [b.1, b.2])));
        let x = -0.5..c.dates.len() as f64 - 0.5;
        if c.metric == Quantity::Latency {
            let (y0, y1) = log_value_range(values()).ok_or("no positive values to draw")?;
            draw(&body, c, x, (y0..y1).log_scale())?;
        } else {
            let (y0, y1) = linear_value_range(values()).ok_or("no positive values to draw")?;
            draw(&body, c, x, y0..y1)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw<Y>(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    c: &HistoryChart,
    x: Range<f64>,
    y: Y,
) -> Result<(), String>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_left(16)
        .margin_right(36)
        .margin_bottom(12)
        .x_label_area_size(64)
        .y_label_area_size(96)
        .build_cartesian_2d::<Range<f64>, Y>(x, y)
        .map_err(err)?;
    let x_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        c.dates.get(i as usize).cloned().unwrap_or_default()
    };
    let y_fmt = |v: &f64| value_label(*v);
    chart
        .configure_mesh()
        .x_labels(c.dates.len().clamp(2, 10))
        .x_label_formatter(&x_fmt)
        .y_labels(12)
        .y_label_formatter(&y_fmt)
        .x_desc("run (oldest left)")
        .y_desc(format!("{} ({})", c.metric.name(), c.metric.unit()))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 18))
        .draw()
        .map_err(err)?;
    for (i, l) in c.lines.iter().enumerate() {
        if l.band.len() < 2 {
            continue;
        }
        let band: Vec<(f64, f64, f64)> = l.band.iter().map(|b| (b.0 as f64, b.1, b.2)).collect();
        chart.draw_series(std::iter::once(band_polygon(&band, PALETTE[i % PALETTE.len()]))).map_err(err)?;
    }
    for (i, l) in c.lines.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = l.points.iter().filter(|p| p.1 > 0.0).map(|&(x, v)| (x as f64, v)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(err)?
            .label(format!("{} B", l.size))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, colour.filled()))).map_err(err)?;
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft).map_err(err)
}

/// The series of `benchmark` to draw: of those matching the filters, the
/// one with the most runs (the latest on a tie).
fn pick(c: &Connection, r: &Request) -> rusqlite::Result<Option<(SeriesKey, usize)>> {
    let mut st = c.prepare(
        "SELECT system, benchmark, backend, memory, datatype, np, placement, mpi_library, options, count(*), \
         max(started_utc) FROM runs WHERE benchmark = ?1 AND (?2 IS NULL OR system = ?2) AND (?3 IS NULL OR datatype = ?3) \
         GROUP BY series_key ORDER BY count(*) DESC, max(started_utc) DESC",
    )?;
    let mut rows = st.query_map(params![r.benchmark, r.system, r.datatype], |row| {
        Ok((SeriesKey::from_row(row, 0)?, row.get::<_, i64>(9)?))
    })?;
    let first = rows.next().transpose()?;
    let more = rows.count();
    Ok(first.map(|(k, _)| (k, more)))
}

/// Runs `history plot`; returns the exit status: 0 written, 1 the file
/// could not be written, 2 bad input (no such series), as `commbench plot`.
pub fn run(c: &Connection, r: &Request) -> i32 {
    let (key, others) = match pick(c, r) {
        Ok(Some(k)) => k,
        Ok(None) => {
            let b = crate::diag::printable(r.benchmark);
            crate::say!("commbench history: no runs of {b} in the history (with the filters given)");
            return 2;
        }
        Err(e) => {
            crate::say!("commbench history: cannot read the history: {e}");
            return 2;
        }
    };
    if others > 0 {
        crate::say!(
            "commbench history: note: {} has {others} more series; drawn: {} (--system, --datatype choose)",
            crate::diag::printable(r.benchmark),
            crate::diag::printable(&key.short())
        );
    }
    let runs = match baseline::runs_of(c, &key, None) {
        Ok(runs) => runs,
        Err(e) => {
            crate::say!("commbench history: cannot read the history: {e}");
            return 2;
        }
    };
    let Some(spec) = chart(&key, &runs, r.sizes, r.last) else {
        crate::say!("commbench history: {}: nothing to draw at the sizes asked", crate::diag::printable(&key.short()));
        return 2;
    };
    let svg = match render(&spec) {
        Ok(s) => s,
        Err(e) => {
            crate::say!("commbench history: cannot draw {}: {e}", crate::diag::printable(&key.short()));
            return 1;
        }
    };
    let shown = crate::diag::printable(&r.out.display().to_string()).into_owned();
    match crate::report::safe_file::write_named(r.out, svg.as_bytes()) {
        Err(e) => {
            crate::say!("commbench history: {shown}: {e}");
            1
        }
        // The path is said only for a file: on standard output it would
        // follow the SVG.
        Ok(Put::File) => {
            println!("{shown}");
            0
        }
        Ok(Put::Stream) => 0,
    }
}
