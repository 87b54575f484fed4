//! The matrices of a `pairs` run, built from its measurements: bandwidth by
//! direction (row = sender, column = receiver), its share of each path's
//! peak, and latency (symmetric), empty where the scheme did not measure a
//! pair (or the path's peak is unknown). A pair measured more than once
//! keeps its worst value (lowest bandwidth or share, highest latency).
//! The matrix itself, its CSV and its heatmap are shared (`crate::matrix`).

use super::results::Measurements;
use crate::matrix::Matrix;

/// The axes of a rank-by-rank matrix, for its heatmap.
pub(crate) const RANK_AXES: &str = "row: sender rank, column: receiver rank";

/// Bandwidth in bytes per second, sender by receiver.
pub fn bandwidth(n: usize, m: &Measurements) -> Matrix {
    let mut x = Matrix::new(n);
    for d in &m.directed {
        x.keep_min(d.src, d.dst, d.bytes_per_s);
    }
    x
}

/// Bandwidth in percent of the path's peak (`peak`, bytes per second,
/// sender by receiver), sender by receiver.
pub fn efficiency(n: usize, m: &Measurements, peak: &dyn Fn(usize, usize) -> Option<f64>) -> Matrix {
    let mut x = Matrix::new(n);
    for d in &m.directed {
        if let Some(p) = peak(d.src, d.dst).filter(|p| *p > 0.0) {
            x.keep_min(d.src, d.dst, 100.0 * d.bytes_per_s / p);
        }
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
        let bw = bandwidth(3, &m);
        assert_eq!(bw.size(), 3);
        assert_eq!(bw.get(0, 1), Some(4e6));
        assert_eq!(bw.get(1, 0), Some(6e6));
        assert_eq!(bw.get(0, 2), None);
        assert_eq!(bw.range(), Some((4e6, 6e6)));
        let lat = latency(3, &m);
        assert_eq!(lat.get(0, 1), Some(3e-6));
        assert_eq!(lat.get(1, 0), Some(3e-6));
    }

    #[test]
    fn efficiency_against_each_peak() {
        let m = sample();
        let eff = efficiency(3, &m, &|s, _| (s == 0).then_some(8e6));
        assert_eq!(eff.get(0, 1), Some(50.0), "the worst of 5 and 4 MB/s over 8");
        assert_eq!(eff.get(1, 0), None, "no peak");
        assert!(efficiency(3, &m, &|_, _| None).is_empty());
    }

    #[test]
    fn csv_layout() {
        let bw = bandwidth(3, &sample());
        let mut out = Vec::new();
        bw.write_csv(&mut out, "sender\\receiver (MB/s)", 1e-6).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "sender\\receiver (MB/s),0,1,2\n0,,4.00,\n1,6.00,,\n2,,,\n");
    }
}
