//! The measurements of a run as rank 0 collects them round by round, and
//! their grouping into pair rows (both directions of two ranks, plus the
//! latency between them) for the table, the criteria and the matrices.

use std::collections::{BTreeMap, HashMap};

use super::measure::RankResult;
use super::schedule::Round;

/// One direction measured in one round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Directed {
    pub round: usize,
    pub src: usize,
    pub dst: usize,
    pub bytes_per_s: f64,
}

/// A latency measured between two ranks (lower first) in one round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencySample {
    pub round: usize,
    pub a: usize,
    pub b: usize,
    pub secs: f64,
}

/// Two ranks a < b: bandwidth a -> b, b -> a, latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairRow {
    /// The round that completed the row (a shift scheme measures the two
    /// directions in different rounds).
    pub round: usize,
    pub a: usize,
    pub b: usize,
    pub ab: Option<f64>,
    pub ba: Option<f64>,
    pub latency: Option<f64>,
}

/// Values each rank contributes per round, gathered at rank 0.
pub(crate) const PER_RANK: usize = 2;

/// This rank's contribution to the round's gather.
pub(crate) fn encode(r: &RankResult) -> [f64; PER_RANK] {
    [r.recv_bw.unwrap_or(f64::NAN), r.latency.unwrap_or(f64::NAN)]
}

/// Everything measured so far.
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub directed: Vec<Directed>,
    pub latency: Vec<LatencySample>,
}

impl Measurements {
    /// Adds a round from the gathered values (PER_RANK per rank, in rank
    /// order) and the round's flows.
    pub(crate) fn add_round(&mut self, index: usize, round: &Round, gathered: &[f64]) {
        for (rank, flow) in round.flows.iter().enumerate() {
            let Some(v) = gathered.get(rank * PER_RANK..(rank + 1) * PER_RANK) else { continue };
            if let (Some(src), bw) = (flow.from, v[0]) {
                if bw.is_finite() {
                    self.directed.push(Directed { round: index, src, dst: rank, bytes_per_s: bw });
                }
            }
            if let (Some(p), lat) = (flow.partner(), v[1]) {
                if lat.is_finite() {
                    self.latency.push(LatencySample { round: index, a: rank.min(p), b: rank.max(p), secs: lat });
                }
            }
        }
    }

    /// Groups the directions into pair rows, in round then rank order: a
    /// row is complete when both directions of a pair have been measured
    /// (in the same round for pairing schemes); a direction whose reverse
    /// never came gives a row with one side empty.
    pub(crate) fn pair_rows(&self) -> Vec<PairRow> {
        let mut rows = Vec::new();
        let mut pending: BTreeMap<(usize, usize), PairRow> = BTreeMap::new();
        let mut directed = self.directed.clone();
        directed.sort_by_key(|d| (d.round, d.src.min(d.dst), d.src.max(d.dst), d.src));
        for d in directed {
            let key = (d.src.min(d.dst), d.src.max(d.dst));
            let forward = d.src < d.dst;
            let row = pending.entry(key).or_insert(PairRow {
                round: d.round,
                a: key.0,
                b: key.1,
                ab: None,
                ba: None,
                latency: None,
            });
            let slot = if forward { &mut row.ab } else { &mut row.ba };
            if slot.is_some() {
                // The same direction again before its reverse: the pending
                // row stays one-sided and a new one starts.
                let old = *row;
                rows.push(old);
                *row = PairRow { round: d.round, a: key.0, b: key.1, ab: None, ba: None, latency: None };
            }
            let slot = if forward { &mut row.ab } else { &mut row.ba };
            *slot = Some(d.bytes_per_s);
            row.round = d.round;
            if row.ab.is_some() && row.ba.is_some() {
                if let Some(done) = pending.remove(&key) {
                    rows.push(done);
                }
            }
        }
        rows.extend(pending.into_values());
        let latency: HashMap<(usize, usize, usize), f64> =
            self.latency.iter().map(|l| ((l.round, l.a, l.b), l.secs)).collect();
        for row in &mut rows {
            row.latency = latency.get(&(row.round, row.a, row.b)).copied();
        }
        rows.sort_by_key(|r| (r.round, r.a, r.b));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::schedule::{rounds, RandomRounds, Scheme};

    const R: RandomRounds = RandomRounds { rounds: 2, seed: 1 };

    /// Fake gathered values: rank r receives at 1000 * src + r B/s, and
    /// the initiator of a pair reports latency a + b microseconds.
    fn fake(round: &Round) -> Vec<f64> {
        round
            .flows
            .iter()
            .enumerate()
            .flat_map(|(r, f)| {
                let bw = f.from.map(|s| (1000 * s + r) as f64);
                let lat = f.partner().filter(|&p| r < p).map(|p| (r + p) as f64 * 1e-6);
                encode(&RankResult { recv_bw: bw, latency: lat })
            })
            .collect()
    }

    fn measure(scheme: Scheme, n: usize) -> Measurements {
        let mut m = Measurements::default();
        for (i, round) in rounds(scheme, n, R).unwrap().iter().enumerate() {
            m.add_round(i, round, &fake(round));
        }
        m
    }

    #[test]
    fn all_gives_one_row_per_pair() {
        for n in [2, 3, 4, 5, 8] {
            let rows = measure(Scheme::All, n).pair_rows();
            assert_eq!(rows.len(), n * (n - 1) / 2, "n={n}");
            for r in &rows {
                assert_eq!(r.ab, Some((1000 * r.a + r.b) as f64));
                assert_eq!(r.ba, Some((1000 * r.b + r.a) as f64));
                assert_eq!(r.latency, Some((r.a + r.b) as f64 * 1e-6));
            }
        }
    }

    #[test]
    fn shift_joins_directions_from_different_rounds() {
        let rows = measure(Scheme::Shift(None), 5).pair_rows();
        assert_eq!(rows.len(), 10);
        for r in &rows {
            assert!(r.ab.is_some() && r.ba.is_some());
            assert_eq!(r.latency, None);
        }
        // 0 -> 1 is round 0 (k = 1); 1 -> 0 is round 3 (k = 4).
        let r01 = rows.iter().find(|r| (r.a, r.b) == (0, 1)).unwrap();
        assert_eq!(r01.round, 3);
    }

    #[test]
    fn one_shift_leaves_one_sided_rows() {
        let rows = measure(Scheme::Shift(Some(1)), 4).pair_rows();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows.iter().filter(|r| r.ab.is_some() != r.ba.is_some()).count(), 4);
    }

    /// Everything rank 0 does after the rounds, at `n` ranks with every
    /// pair and latency: nothing in it may be quadratic in the rows.
    fn post_process(n: usize) -> usize {
        use crate::pairs::{blame, criteria, matrix};
        let m = measure(Scheme::All, n);
        let rows = m.pair_rows();
        let c = criteria::Criteria {
            min_bw: Some(1500.0),
            max_lat: Some(1.0),
            min_fraction_of_median: Some(0.5),
            min_efficiency: None,
        };
        let eval = criteria::evaluate(&rows, &c, true, &|_, _| None);
        let hosts: Vec<String> = (0..n).map(|r| format!("h{}", r / 8)).collect();
        let b = blame::blame(&rows, &eval, &hosts);
        assert_eq!(b.hosts.len(), n / 8);
        assert!(!matrix::bandwidth(n, &m).is_empty() && !matrix::latency(n, &m).is_empty());
        rows.len()
    }

    #[test]
    fn post_processing_scales() {
        assert_eq!(post_process(256), 256 * 255 / 2);
    }

    /// A timing probe at full scale, not an assertion about speed; it takes
    /// seconds in a debug build, so it runs on request:
    /// `cargo test --release --lib -- --ignored post_processing_at_1024`
    #[test]
    #[ignore = "timing probe at 1024 ranks; run on request"]
    fn post_processing_at_1024() {
        let t = std::time::Instant::now();
        assert_eq!(post_process(1024), 1024 * 1023 / 2);
        crate::say!("1024 ranks, all pairs: {:.2} s", t.elapsed().as_secs_f64());
    }

    #[test]
    fn idle_ranks_add_nothing() {
        let m = measure(Scheme::Half, 5);
        assert_eq!(m.directed.len(), 4);
        assert_eq!(m.latency.len(), 2);
    }
}
