//! N x N matrices of values between the endpoints a tool measured (ranks
//! for `pairs`, GPUs for `gpu-bw`): row = source, column = destination,
//! empty cells for pairs not measured, and their CSV form. Shared by both
//! tools and owned by neither, with the heatmap drawn from a matrix
//! ([`heatmap`]). Still here for now: the matrices of a `pairs` run from
//! its measurements (bandwidth by direction, symmetric latency; a pair
//! measured more than once keeps its worst value).

pub mod heatmap;

use std::io::{self, Write};

use crate::pairs::results::Measurements;

#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    n: usize,
    cells: Vec<Option<f64>>,
}

impl Matrix {
    pub fn new(n: usize) -> Matrix {
        Matrix { n, cells: vec![None; n * n] }
    }

    pub fn size(&self) -> usize {
        self.n
    }

    pub fn get(&self, row: usize, col: usize) -> Option<f64> {
        self.cells.get(row * self.n + col).copied().flatten()
    }

    /// Puts `v` in cell (row, col), replacing what was there; a cell
    /// outside the matrix is left alone.
    pub fn set(&mut self, row: usize, col: usize, v: f64) {
        if row < self.n && col < self.n {
            self.cells[row * self.n + col] = Some(v);
        }
    }

    /// Keeps the smaller of the old and new value.
    fn keep_min(&mut self, row: usize, col: usize, v: f64) {
        let c = &mut self.cells[row * self.n + col];
        *c = Some(c.map_or(v, |old| old.min(v)));
    }

    fn keep_max(&mut self, row: usize, col: usize, v: f64) {
        let c = &mut self.cells[row * self.n + col];
        *c = Some(c.map_or(v, |old| old.max(v)));
    }

    /// Bandwidth in bytes per second, sender by receiver.
    pub fn bandwidth(n: usize, m: &Measurements) -> Matrix {
        let mut x = Matrix::new(n);
        for d in &m.directed {
            x.keep_min(d.src, d.dst, d.bytes_per_s);
        }
        x
    }

    /// Latency in seconds, both triangles.
    pub fn latency(n: usize, m: &Measurements) -> Matrix {
        let mut x = Matrix::new(n);
        for l in &m.latency {
            x.keep_max(l.a, l.b, l.secs);
            x.keep_max(l.b, l.a, l.secs);
        }
        x
    }

    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(Option::is_none)
    }

    /// Smallest and largest value present.
    pub fn range(&self) -> Option<(f64, f64)> {
        self.cells.iter().flatten().fold(None, |acc, &v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
    }

    /// CSV: a header row `corner,0,1,...` then one row per rank, values
    /// multiplied by `scale` with two decimals, empty where unmeasured.
    pub fn write_csv(&self, mut w: impl Write, corner: &str, scale: f64) -> io::Result<()> {
        let mut line = String::from(corner);
        for c in 0..self.n {
            line.push_str(&format!(",{c}"));
        }
        writeln!(w, "{line}")?;
        for r in 0..self.n {
            line.clear();
            line.push_str(&r.to_string());
            for c in 0..self.n {
                line.push(',');
                if let Some(v) = self.get(r, c) {
                    line.push_str(&format!("{:.2}", v * scale));
                }
            }
            writeln!(w, "{line}")?;
        }
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::results::{Directed, LatencySample};

    fn sample() -> Measurements {
        Measurements {
            directed: vec![
                Directed { round: 0, src: 0, dst: 1, bytes_per_s: 5e6 },
                Directed { round: 0, src: 1, dst: 0, bytes_per_s: 6e6 },
                Directed { round: 1, src: 0, dst: 1, bytes_per_s: 4e6 },
            ],
            latency: vec![
                LatencySample { round: 0, a: 0, b: 1, secs: 2e-6 },
                LatencySample { round: 1, a: 0, b: 1, secs: 3e-6 },
            ],
        }
    }

    #[test]
    fn shape_and_worst_values() {
        let m = sample();
        let bw = Matrix::bandwidth(3, &m);
        assert_eq!(bw.size(), 3);
        assert_eq!(bw.get(0, 1), Some(4e6));
        assert_eq!(bw.get(1, 0), Some(6e6));
        assert_eq!(bw.get(0, 2), None);
        assert_eq!(bw.range(), Some((4e6, 6e6)));
        let lat = Matrix::latency(3, &m);
        assert_eq!(lat.get(0, 1), Some(3e-6));
        assert_eq!(lat.get(1, 0), Some(3e-6));
        assert!(Matrix::new(2).is_empty());
        let mut x = Matrix::new(2);
        x.set(1, 0, 7.0);
        x.set(2, 0, 9.0);
        assert_eq!((x.get(1, 0), x.range()), (Some(7.0), Some((7.0, 7.0))));
    }

    #[test]
    fn csv_layout() {
        let bw = Matrix::bandwidth(3, &sample());
        let mut out = Vec::new();
        bw.write_csv(&mut out, "sender\\receiver (MB/s)", 1e-6).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "sender\\receiver (MB/s),0,1,2\n0,,4.00,\n1,6.00,,\n2,,,\n");
    }
}
