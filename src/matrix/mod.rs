//! N x N matrices of values between the endpoints a tool measured (ranks
//! for `pairs`, GPUs for `gpu-bw`): row = source, column = destination,
//! empty cells for pairs not measured, and their CSV form. Shared by both
//! tools and owned by neither, with the heatmap drawn from a matrix
//! ([`heatmap`]) and the bandwidth unit both read from the command line
//! ([`units`]). What goes into the cells is each tool's: `pairs::matrix`
//! builds its matrices from a run's measurements, `gpu_bw::results` from
//! its timings.

pub(crate) mod heatmap;
pub(crate) mod units;

use std::io::{self, Write};

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

    /// Keeps the smaller of the old value of cell (row, col) and `v`.
    pub(crate) fn keep_min(&mut self, row: usize, col: usize, v: f64) {
        let c = &mut self.cells[row * self.n + col];
        *c = Some(c.map_or(v, |old| old.min(v)));
    }

    /// Keeps the larger of the old value of cell (row, col) and `v`.
    pub(crate) fn keep_max(&mut self, row: usize, col: usize, v: f64) {
        let c = &mut self.cells[row * self.n + col];
        *c = Some(c.map_or(v, |old| old.max(v)));
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
    pub(crate) fn write_csv(&self, mut w: impl Write, corner: &str, scale: f64) -> io::Result<()> {
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

    #[test]
    fn cells_and_range() {
        let mut x = Matrix::new(3);
        assert_eq!(x.size(), 3);
        assert!(x.is_empty());
        assert_eq!(x.range(), None);
        x.keep_min(0, 1, 5.0);
        x.keep_min(0, 1, 4.0);
        x.keep_min(0, 1, 6.0);
        x.keep_max(1, 0, 2.0);
        x.keep_max(1, 0, 3.0);
        x.keep_max(1, 0, 1.0);
        assert_eq!((x.get(0, 1), x.get(1, 0), x.get(0, 2)), (Some(4.0), Some(3.0), None));
        assert_eq!(x.range(), Some((3.0, 4.0)));
        let mut y = Matrix::new(2);
        y.set(1, 0, 7.0);
        y.set(2, 0, 9.0);
        assert_eq!((y.get(1, 0), y.range()), (Some(7.0), Some((7.0, 7.0))));
    }

    #[test]
    fn csv_layout() {
        let mut x = Matrix::new(3);
        x.set(0, 1, 4e6);
        x.set(1, 0, 6e6);
        let mut out = Vec::new();
        x.write_csv(&mut out, "sender\\receiver (MB/s)", 1e-6).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "sender\\receiver (MB/s),0,1,2\n0,,4.00,\n1,6.00,,\n2,,,\n");
    }
}
