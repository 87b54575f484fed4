//! A matrix as an SVG heatmap, written by hand (no fonts or raster needed):
//! one colour per cell from red (worst) through yellow to green (best),
//! grey where nothing was measured, lines between hosts, failing cells
//! outlined, and a colour bar with the value range. Equal neighbouring
//! cells in a row share one rectangle, so 1024 ranks stay a modest file.

use std::fmt::Write;

use super::Matrix;

/// What the picture shows and how to read it.
pub(crate) struct HeatmapSpec<'a> {
    pub title: &'a str,
    /// Second line: what ran (scheme, size).
    pub subtitle: &'a str,
    /// What rows and columns are ("row: sender rank, column: receiver
    /// rank"), at the start of the third line.
    pub axes: &'a str,
    /// Unit of the printed values, after `scale` is applied ("MB/s").
    pub unit: &'a str,
    pub scale: f64,
    pub higher_is_better: bool,
    /// Rank -> host, for the host boundaries.
    pub hosts: &'a [String],
    /// Whether cell (row, col) failed the criteria.
    pub failed: &'a dyn Fn(usize, usize) -> bool,
}

const LEVELS: usize = 64;
const STOPS: [(f64, f64, f64); 3] = [(215.0, 48.0, 39.0), (254.0, 224.0, 139.0), (26.0, 152.0, 80.0)];

/// Colour of a quality level (0 worst .. LEVELS-1 best).
fn colour(level: usize) -> String {
    let t = level as f64 / (LEVELS - 1) as f64;
    let (a, b, u) = if t < 0.5 { (STOPS[0], STOPS[1], t * 2.0) } else { (STOPS[1], STOPS[2], (t - 0.5) * 2.0) };
    let mix = |x: f64, y: f64| (x + (y - x) * u).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn level(v: f64, lo: f64, hi: f64, higher_is_better: bool) -> usize {
    if hi <= lo {
        return LEVELS - 1;
    }
    let t = ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
    let t = if higher_is_better { t } else { 1.0 - t };
    (t * (LEVELS - 1) as f64).round() as usize
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Renders the heatmap.
/// A value short enough for a cell: 3 significant digits.
fn cell_label(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

pub fn svg(m: &Matrix, spec: &HeatmapSpec) -> String {
    let n = m.size().max(1);
    let grid = (n as f64 * 24.0).clamp(360.0, 800.0);
    let cell = grid / n as f64;
    let (left, top) = (60.0, 74.0);
    let (width, height) = (left + grid + 130.0, top + grid + 40.0);
    // Colours run from zero to the best value, so a link at 90% of the
    // best stays green and one at 10% is red.
    let (lo, hi) = (0.0, m.range().map_or(0.0, |r| r.1));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{left}" y="20" font-size="14">{}</text>"#, escape(spec.title));
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="38" fill="#444">{}</text>
<text x="{left}" y="56" fill="#444">{}; grey: not measured; outlined: failed</text>"##,
        escape(spec.subtitle),
        escape(spec.axes)
    );
    let _ = writeln!(s, r##"<rect x="{left}" y="{top}" width="{grid:.2}" height="{grid:.2}" fill="#e6e6e6"/>"##);

    // Cells, merging equal neighbours of a row into one rectangle.
    let small = n <= 64;
    for r in 0..m.size() {
        let mut c = 0;
        while c < m.size() {
            let Some(v) = m.get(r, c) else {
                c += 1;
                continue;
            };
            let lv = level(v, lo, hi, spec.higher_is_better);
            let mut end = c + 1;
            while !small
                && end < m.size()
                && m.get(r, end).is_some_and(|w| level(w, lo, hi, spec.higher_is_better) == lv)
            {
                end += 1;
            }
            let (x, y, w) = (left + c as f64 * cell, top + r as f64 * cell, (end - c) as f64 * cell);
            if small {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{cell:.2}" fill="{}"><title>{r} -&gt; {c}: {:.2} {}</title></rect>"#,
                    colour(lv),
                    v * spec.scale,
                    escape(spec.unit)
                );
            } else {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{cell:.2}" fill="{}"/>"#,
                    colour(lv)
                );
            }
            c = end;
        }
    }
    if small {
        for r in 0..m.size() {
            for c in 0..m.size() {
                if m.get(r, c).is_some() && (spec.failed)(r, c) {
                    let (x, y) = (left + c as f64 * cell + 1.0, top + r as f64 * cell + 1.0);
                    let _ = writeln!(
                        s,
                        r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="none" stroke="black" stroke-width="2"/>"#,
                        cell - 2.0,
                        cell - 2.0
                    );
                }
            }
        }
    }

    // Values written in the cells when they are wide enough to read, as
    // in the bandwidth matrices people know from GPU and fabric tests.
    if cell >= 40.0 {
        let font = (cell / 5.0).clamp(9.0, 14.0);
        for r in 0..m.size() {
            for c in 0..m.size() {
                if let Some(v) = m.get(r, c) {
                    let (x, y) = (left + (c as f64 + 0.5) * cell, top + (r as f64 + 0.5) * cell + font / 3.0);
                    let _ = writeln!(
                        s,
                        r#"<text x="{x:.2}" y="{y:.2}" text-anchor="middle" font-size="{font:.0}">{}</text>"#,
                        cell_label(v * spec.scale)
                    );
                }
            }
        }
    }

    // Host boundaries.
    for r in 1..spec.hosts.len().min(m.size()) {
        if spec.hosts[r] != spec.hosts[r - 1] {
            let p = r as f64 * cell;
            let _ = writeln!(
                s,
                r##"<line x1="{left}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="#222" stroke-width="1"/><line x1="{:.2}" y1="{top}" x2="{:.2}" y2="{:.2}" stroke="#222" stroke-width="1"/>"##,
                top + p,
                left + grid,
                top + p,
                left + p,
                left + p,
                top + grid
            );
        }
    }

    // Rank labels, at most about 32 per axis.
    let step = n.div_ceil(32);
    for i in (0..m.size()).step_by(step) {
        let mid = (i as f64 + 0.5) * cell;
        let _ = writeln!(s, r#"<text x="{:.2}" y="{:.2}" text-anchor="end">{i}</text>"#, left - 4.0, top + mid + 4.0);
        let _ = writeln!(s, r#"<text x="{:.2}" y="{:.2}" text-anchor="middle">{i}</text>"#, left + mid, top - 4.0);
    }

    // Colour bar: best at the top.
    let (bx, bh) = (left + grid + 20.0, grid.min(300.0));
    let seg = bh / LEVELS as f64;
    for k in 0..LEVELS {
        let _ = writeln!(
            s,
            r#"<rect x="{bx:.2}" y="{:.2}" width="16" height="{:.2}" fill="{}"/>"#,
            top + k as f64 * seg,
            seg + 0.5,
            colour(LEVELS - 1 - k)
        );
    }
    let (best, worst) = if spec.higher_is_better { (hi, lo) } else { (lo, hi) };
    let unit = escape(spec.unit);
    let _ = writeln!(s, r#"<text x="{:.2}" y="{:.2}">{:.2} {unit}</text>"#, bx + 20.0, top + 10.0, best * spec.scale);
    let _ = writeln!(s, r#"<text x="{:.2}" y="{:.2}">{:.2} {unit}</text>"#, bx + 20.0, top + bh, worst * spec.scale);
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize, bw: impl Fn(usize, usize) -> f64) -> Matrix {
        let mut m = Matrix::new(n);
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    m.set(s, d, bw(s, d));
                }
            }
        }
        m
    }

    fn render(n: usize, failed: &dyn Fn(usize, usize) -> bool) -> String {
        let hosts: Vec<String> = (0..n).map(|r| format!("h{}", r / 2)).collect();
        let bw = |s: usize, d: usize| if n <= 64 { 1e6 * (1 + (s + d) % 3) as f64 } else { 1e6 * (1 + s / 64) as f64 };
        svg(
            &matrix(n, bw),
            &HeatmapSpec {
                title: "bw <test>",
                subtitle: "scheme all",
                axes: "row: sender rank, column: receiver rank",
                unit: "MB/s",
                scale: 1e-6,
                higher_is_better: true,
                hosts: &hosts,
                failed,
            },
        )
    }

    #[test]
    fn small_matrix_has_a_cell_per_pair() {
        let s = render(4, &|r, c| (r, c) == (0, 1));
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        assert_eq!(s.matches("<title>").count(), 12);
        assert!(s.contains("bw &lt;test&gt;"));
        assert!(s.contains(">row: sender rank, column: receiver rank; grey: not measured; outlined: failed<"));
        assert_eq!(s.matches(r#"stroke="black""#).count(), 1);
        assert_eq!(s.matches("<line").count(), 2, "one boundary per host change");
        assert!(s.contains("3.00 MB/s") && s.contains("0.00 MB/s"));
    }

    #[test]
    fn colours_run_from_red_to_green() {
        assert_eq!(colour(0), "#d73027");
        assert_eq!(colour(LEVELS - 1), "#1a9850");
        assert_eq!(level(5.0, 0.0, 10.0, false), level(5.0, 0.0, 10.0, true));
        assert_eq!(level(0.0, 0.0, 10.0, false), LEVELS - 1);
        assert_eq!(level(10.0, 0.0, 10.0, true), LEVELS - 1);
        assert_eq!(level(3.0, 3.0, 3.0, true), LEVELS - 1);
    }

    #[test]
    fn small_matrix_shows_values_in_cells() {
        let s = render(4, &|_, _| false);
        let labels = s.matches(r#"text-anchor="middle" font-size="#).count();
        assert_eq!(labels, 12, "one label per measured direction");
        assert_eq!(cell_label(5810.25), "5810");
        assert_eq!(cell_label(12.345), "12.3");
        assert_eq!(cell_label(0.5), "0.50");
        // Too many ranks for readable cells: no labels.
        assert_eq!(render(64, &|_, _| false).matches(r#"font-size="9">"#).count(), 0);
    }

    #[test]
    fn large_matrix_merges_cells() {
        let s = render(256, &|_, _| false);
        let rects = s.matches("<rect").count();
        // Two runs per row (either side of the empty diagonal), plus the
        // background and the colour bar.
        assert!(rects <= 2 * 256 + 1 + LEVELS, "{rects} rectangles");
        assert!(s.len() < 8 << 20);
    }
}
