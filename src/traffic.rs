//! An all-to-all whose every pair of ranks moves its own amount (nccl-tests'
//! `alltoallv_perf`): how many bytes rank i sends rank j. Two patterns, as
//! nccl-tests has them:
//!
//! - generated: each rank sends a total T, spread over its peers by a
//!   blend of even shares and shares that grow with the distance in rank
//!   numbers (`NCCL_TESTS_ALLTOALLV_SPREAD`, 0 even to 1 by distance), so
//!   every rank sends and receives the same total but not the same to
//!   each peer;
//! - a matrix read from a file (`NCCL_TESTS_ALLTOALLV_MATRIX_FILE`,
//!   scaled by `NCCL_TESTS_ALLTOALLV_MATRIX_SCALE`), whose row i column j
//!   is what i sends j, whatever the sweep's size.
//!
//! Every pair's bytes are rounded down to a multiple of 16, as nccl-tests
//! rounds them. Pure arithmetic: the nccl-tests front end reads the
//! variables and the file, the benchmark lays out its buffers from this,
//! the NCCL transport posts one send and one receive per pair that moves
//! anything, and the table prints its size column from it.

use serde::Serialize;

/// Every pair's bytes are a multiple of this.
pub const ALIGN: u64 = 16;

/// Where each pair's bytes come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Traffic {
    /// Generated from each rank's total, with this spread (0 to 1).
    Generated { spread: f64 },
    /// Read from a matrix file.
    Matrix(Matrix),
}

/// A square matrix of bytes, row = sender, column = receiver, each
/// already scaled and rounded down to [`ALIGN`]. Only the first np rows
/// and columns of a larger one are used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matrix {
    /// The file it came from, as named.
    pub file: String,
    /// The factor applied to every value.
    pub scale: f64,
    /// Rows (and columns).
    pub dim: usize,
    /// Row-major, dim x dim (not in the run record: the file is).
    #[serde(skip)]
    pub bytes: Vec<u64>,
}

impl Traffic {
    /// The per-peer element count nccl-tests' table shows for a sweep size
    /// of `count` elements of `elt` bytes on `np` ranks: one rank's even
    /// share, rounded down so that it holds a multiple of [`ALIGN`] bytes;
    /// 0 for a matrix (its sizes are its own).
    pub fn per_peer_count(&self, count: usize, elt: usize, np: usize) -> usize {
        match self {
            Traffic::Generated { .. } => {
                let step = (ALIGN as usize / elt.max(1)).max(1);
                count / np.max(1) / step * step
            }
            Traffic::Matrix(_) => 0,
        }
    }

    /// Bytes rank `from` sends rank `to` among `np` ranks when each rank
    /// sends `total` bytes in all (generated; a matrix ignores `total`).
    pub fn peer_bytes(&self, from: usize, to: usize, np: usize, total: u64) -> u64 {
        let bytes = match self {
            Traffic::Matrix(m) => return m.bytes[from * m.dim + to],
            Traffic::Generated { .. } if np <= 1 => total as f64,
            Traffic::Generated { spread } => {
                let distance = ((to + np - from) % np) as f64;
                let distances = (np * (np - 1) / 2) as f64;
                let total = total as f64;
                let even = total / np as f64;
                let far = distance * total / distances;
                (1.0 - spread) * even + spread * far
            }
        };
        // As C's conversion: toward zero, saturating.
        (bytes as u64) & !(ALIGN - 1)
    }

    /// Elements of `elt` bytes rank `rank` sends each peer, in rank order.
    pub fn send_counts(&self, rank: usize, np: usize, total: u64, elt: usize) -> Vec<usize> {
        (0..np).map(|to| (self.peer_bytes(rank, to, np, total) / elt.max(1) as u64) as usize).collect()
    }

    /// Elements of `elt` bytes rank `rank` receives from each peer, in
    /// rank order.
    pub fn recv_counts(&self, rank: usize, np: usize, total: u64, elt: usize) -> Vec<usize> {
        (0..np).map(|from| (self.peer_bytes(from, rank, np, total) / elt.max(1) as u64) as usize).collect()
    }

    /// The most elements any rank sends and the most any rank receives
    /// (generated: every rank's, which are all alike; a matrix: each
    /// column's and row's most).
    pub fn max_counts(&self, np: usize, total: u64, elt: usize) -> (usize, usize) {
        let sum = |v: Vec<usize>| v.into_iter().sum::<usize>();
        match self {
            Traffic::Generated { .. } => {
                let one = sum(self.send_counts(0, np, total, elt));
                (one, one)
            }
            Traffic::Matrix(_) => (0..np).fold((0, 0), |(s, r), rank| {
                (s.max(sum(self.send_counts(rank, np, total, elt))), r.max(sum(self.recv_counts(rank, np, total, elt))))
            }),
        }
    }

    /// The bytes of the busiest rank's side: the most it sends or
    /// receives (nccl-tests' algbw counts these, and its size column
    /// shows them).
    pub fn busiest_bytes(&self, np: usize, total: u64, elt: usize) -> usize {
        let (s, r) = self.max_counts(np, total, elt);
        s.max(r) * elt
    }

    /// The line nccl-tests prints where the matrix has fewer rows than
    /// the job has ranks, or where `-e` (`max_bytes`) cannot hold the
    /// busiest rank's side; None where neither.
    pub fn misfit(&self, np: usize, max_bytes: u64) -> Option<String> {
        let Traffic::Matrix(m) = self else { return None };
        if np > m.dim {
            return Some(format!(
                "Invalid alltoallv traffic matrix, requested nranks ({np}) is larger than matrix size ({}) in file {}.",
                m.dim, m.file
            ));
        }
        let need = self.busiest_bytes(np, 0, 1) as u64;
        (max_bytes < need).then(|| {
            format!(
                "maxBytes (-e) must be at least {need} bytes as required by traffic matrix file {} (got {max_bytes}). Increase -e.",
                m.file
            )
        })
    }

    /// nccl-tests' `# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY` lines for a cell
    /// of `secs` seconds at `total` bytes per rank on `np` ranks: the
    /// pattern, then each rank's bytes and bandwidths.
    pub fn summary_lines(&self, np: usize, total: u64, secs: f64) -> Vec<String> {
        let head = match self {
            Traffic::Generated { spread } => format!(
                "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=generated nranks={np} total_bytes={total} \
                 spread={spread:.3} time_usec={:.2}",
                secs * 1e6
            ),
            Traffic::Matrix(m) => format!(
                "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks={np} matrix_dim={} scale={:.3} \
                 time_usec={:.2}",
                m.dim,
                m.scale,
                secs * 1e6
            ),
        };
        let factor = (np as f64 - 1.0) / np as f64;
        let ranks = (0..np).map(|rank| {
            let sent: u64 = (0..np).map(|p| self.peer_bytes(rank, p, np, total)).sum();
            let got: u64 = (0..np).map(|p| self.peer_bytes(p, rank, np, total)).sum();
            let alg = sent.max(got) as f64 / 1e9 / secs;
            format!("#   rank={rank} send_bytes={sent} recv_bytes={got} alg_bw={alg:.2} bus_bw={:.2}", alg * factor)
        });
        std::iter::once(head).chain(ranks).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(dim: usize, bytes: Vec<u64>) -> Traffic {
        Traffic::Matrix(Matrix { file: "m.txt".into(), scale: 1.0, dim, bytes })
    }

    /// nccl-tests' own example: rank 0 of 4 sends nothing to itself and
    /// more the further a peer is; spread 0 shares evenly; every rank's
    /// totals agree.
    #[test]
    fn generated_pairs_grow_with_distance_and_totals_agree() {
        let far = Traffic::Generated { spread: 1.0 };
        // 4 ranks, 1 MiB each: distances sum to 6, so a sixth per step.
        let t = 1 << 20;
        let row: Vec<u64> = (0..4).map(|j| far.peer_bytes(0, j, 4, t)).collect();
        assert_eq!(row, [0, 174752, 349520, 524288]);
        assert_eq!(far.peer_bytes(2, 1, 4, t), 524288, "distance wraps: 1 - 2 is 3 around 4");
        let even = Traffic::Generated { spread: 0.0 };
        assert!((0..4).all(|j| even.peer_bytes(1, j, 4, t) == 262144));
        let half = Traffic::Generated { spread: 0.5 };
        assert_eq!(half.peer_bytes(0, 3, 4, t), ((0.5 * 262144.0 + 0.5 * 524288.0) as u64) & !15);
        for tr in [&far, &even, &half] {
            for np in [1, 2, 3, 5, 8] {
                let sends: Vec<usize> = (0..np).map(|r| tr.send_counts(r, np, t, 4).iter().sum()).collect();
                let recvs: Vec<usize> = (0..np).map(|r| tr.recv_counts(r, np, t, 4).iter().sum()).collect();
                assert!(sends.iter().chain(&recvs).all(|&s| s == sends[0]), "{tr:?} np {np}: {sends:?} {recvs:?}");
                assert_eq!(tr.max_counts(np, t, 4), (sends[0], sends[0]));
                assert!(sends[0] * 4 <= t as usize, "never more than the total");
            }
        }
        // One rank sends itself the total, rounded to 16.
        assert_eq!(far.peer_bytes(0, 0, 1, 1000), 992);
    }

    #[test]
    fn the_per_peer_count_is_a_whole_number_of_16_bytes() {
        let g = Traffic::Generated { spread: 1.0 };
        // 1 KiB over 3 ranks: 341 bytes each, 336 as 16-byte multiples.
        assert_eq!(g.per_peer_count(1024, 1, 3), 336);
        assert_eq!(g.per_peer_count(256, 4, 3), 84);
        assert_eq!(g.per_peer_count(128, 8, 3), 42);
        assert_eq!(g.per_peer_count(7, 1, 1), 0);
        assert_eq!(matrix(1, vec![16]).per_peer_count(1024, 4, 1), 0);
    }

    #[test]
    fn a_matrix_gives_its_own_cells_and_its_busiest_side() {
        let m = matrix(3, vec![96, 192, 144, 48, 96, 64, 288, 144, 192]);
        assert_eq!(m.peer_bytes(2, 0, 3, 12345), 288);
        assert_eq!(m.send_counts(1, 3, 0, 4), [12, 24, 16]);
        assert_eq!(m.recv_counts(0, 3, 0, 4), [24, 12, 72]);
        // Sends: 432, 208, 624; receives: 432, 432, 400.
        assert_eq!(m.max_counts(3, 0, 1), (624, 432));
        assert_eq!(m.busiest_bytes(3, 0, 1), 624);
        // Two ranks use the top-left corner.
        assert_eq!(m.max_counts(2, 0, 1), (288, 288));
        assert_eq!(m.misfit(3, 624), None);
        assert_eq!(
            m.misfit(3, 623).unwrap(),
            "maxBytes (-e) must be at least 624 bytes as required by traffic matrix file m.txt (got 623). Increase -e."
        );
        assert_eq!(
            m.misfit(4, 1 << 30).unwrap(),
            "Invalid alltoallv traffic matrix, requested nranks (4) is larger than matrix size (3) in file m.txt."
        );
        assert_eq!(Traffic::Generated { spread: 1.0 }.misfit(64, 0), None);
    }

    #[test]
    fn the_summary_follows_nccl_tests_lines() {
        let g = Traffic::Generated { spread: 1.0 };
        let lines = g.summary_lines(2, 2048, 1e-5);
        assert_eq!(
            lines,
            [
                "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=generated nranks=2 total_bytes=2048 spread=1.000 time_usec=10.00",
                "#   rank=0 send_bytes=2048 recv_bytes=2048 alg_bw=0.20 bus_bw=0.10",
                "#   rank=1 send_bytes=2048 recv_bytes=2048 alg_bw=0.20 bus_bw=0.10",
            ]
        );
        let m =
            Traffic::Matrix(Matrix { file: "f".into(), scale: 2.0, dim: 3, bytes: vec![0, 16, 0, 0, 0, 0, 0, 0, 0] });
        assert_eq!(
            m.summary_lines(2, 0, 1e-6)[..2],
            [
                "# NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY: mode=matrix nranks=2 matrix_dim=3 scale=2.000 time_usec=1.00",
                "#   rank=0 send_bytes=16 recv_bytes=0 alg_bw=0.02 bus_bw=0.01",
            ]
        );
    }
}
