//! Per-host and per-rank summaries, and where a failure most likely lies.
//! A host (or rank) is called bad when every direction between it and the
//! others failed, over at least two different pairs, while some direction
//! between other hosts (ranks) passed: then the fault is the host, not
//! each of its links. Pairs inside a host do not clear it (they do not use
//! its network). When every direction fails, nothing is singled out (the
//! limit may be above what the system can do).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::criteria::{median, Evaluation, Measured};
use super::results::PairRow;

/// One direction with its verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Direction {
    src: usize,
    dst: usize,
    value: Option<f64>,
    failed: bool,
    pair: (usize, usize),
}

fn directions(rows: &[PairRow], eval: &Evaluation) -> Vec<Direction> {
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let fails = &eval.failures[i];
        let hit = |m: Measured| fails.iter().any(|f| f.measured == m || f.measured == Measured::Latency);
        for (src, dst, value, m) in [(r.a, r.b, r.ab, Measured::Forward), (r.b, r.a, r.ba, Measured::Backward)] {
            let missing_is_failure = fails.iter().any(|f| f.measured == m);
            if value.is_some() || missing_is_failure {
                out.push(Direction { src, dst, value, failed: hit(m), pair: (r.a, r.b) });
            }
        }
    }
    out
}

/// What one host or rank saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EndpointSummary {
    pub name: String,
    pub ranks: Vec<usize>,
    /// Directions sent or received by a member.
    pub directions: usize,
    pub failing_directions: usize,
    /// Distinct pairs those directions belong to.
    pub pairs: usize,
    /// Bytes per second.
    pub median_out: Option<f64>,
    pub median_in: Option<f64>,
    pub min_out: Option<f64>,
    pub min_in: Option<f64>,
    pub bad: bool,
}

/// Most likely place of a failing row's fault.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Host(String),
    Rank(usize),
    /// Every direction failed: nothing stands out.
    Everything,
    Link,
}

impl Cause {
    pub fn describe(&self) -> String {
        match self {
            Cause::Host(h) => format!("bad host {h}"),
            Cause::Rank(r) => format!("bad rank {r}"),
            Cause::Everything => "all pairs fail".into(),
            Cause::Link => "link".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Blame {
    pub hosts: Vec<EndpointSummary>,
    pub ranks: Vec<EndpointSummary>,
    /// Per row: None when it passed.
    pub causes: Vec<Option<Cause>>,
}

/// Running totals of one endpoint.
#[derive(Default)]
struct Tally {
    directions: usize,
    failing: usize,
    pairs: HashSet<(usize, usize)>,
    /// The same over directions to or from other endpoints only.
    cross: usize,
    cross_failing: usize,
    cross_pairs: HashSet<(usize, usize)>,
    out: Vec<f64>,
    inn: Vec<f64>,
}

/// Summaries of the endpoints `group` maps ranks to, in one pass over the
/// directions (1024 ranks with every pair measured stay quick). Whether an
/// endpoint is bad is judged on the directions that leave or enter it: a
/// host whose NIC is broken still has fast pairs inside itself.
fn summarise(names: Vec<String>, group: &[usize], dirs: &[Direction]) -> Vec<EndpointSummary> {
    let mut tallies: Vec<Tally> = names.iter().map(|_| Tally::default()).collect();
    let mut cross_passing_total = 0;
    let mut cross_passing = vec![0usize; names.len()];
    for d in dirs {
        let (gs, gd) = (group[d.src], group[d.dst]);
        let cross = gs != gd;
        if cross && !d.failed {
            cross_passing_total += 1;
            cross_passing[gs] += 1;
            cross_passing[gd] += 1;
        }
        let ends: &[(usize, bool, bool)] =
            if cross { &[(gs, true, false), (gd, false, true)] } else { &[(gs, true, true)] };
        for &(g, is_src, is_dst) in ends {
            let t = &mut tallies[g];
            t.directions += 1;
            t.failing += usize::from(d.failed);
            t.pairs.insert(d.pair);
            if cross {
                t.cross += 1;
                t.cross_failing += usize::from(d.failed);
                t.cross_pairs.insert(d.pair);
            }
            if let Some(v) = d.value {
                if is_src {
                    t.out.push(v);
                }
                if is_dst {
                    t.inn.push(v);
                }
            }
        }
    }
    let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
    names
        .into_iter()
        .zip(tallies)
        .enumerate()
        .map(|(g, (name, t))| EndpointSummary {
            name,
            ranks: (0..group.len()).filter(|&r| group[r] == g).collect(),
            directions: t.directions,
            failing_directions: t.failing,
            pairs: t.pairs.len(),
            median_out: median(&t.out),
            median_in: median(&t.inn),
            min_out: min(&t.out),
            min_in: min(&t.inn),
            // Every direction to or from it failed, over two pairs or
            // more, while some direction between other endpoints passed.
            bad: t.cross > 0
                && t.cross_failing == t.cross
                && t.cross_pairs.len() >= 2
                && cross_passing_total > cross_passing[g],
        })
        .collect()
}

/// Summaries per host (in order of first rank) and per rank, and a cause
/// for each failing row. `hosts[r]` is rank r's host.
pub fn blame(rows: &[PairRow], eval: &Evaluation, hosts: &[String]) -> Blame {
    let dirs = directions(rows, eval);
    let mut names: Vec<String> = Vec::new();
    let mut host_group = Vec::with_capacity(hosts.len());
    let mut index: HashMap<&String, usize> = HashMap::new();
    for h in hosts {
        let g = *index.entry(h).or_insert_with(|| {
            names.push(h.clone());
            names.len() - 1
        });
        host_group.push(g);
    }
    let host_sums = summarise(names, &host_group, &dirs);
    let rank_group: Vec<usize> = (0..hosts.len()).collect();
    let rank_sums = summarise((0..hosts.len()).map(|r| format!("rank {r}")).collect(), &rank_group, &dirs);
    let everything = !dirs.is_empty() && dirs.iter().all(|d| d.failed);
    let causes = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if eval.failures[i].is_empty() {
                return None;
            }
            let bad_host =
                [r.a, r.b].into_iter().filter_map(|x| host_group.get(x)).find(|&&g| host_sums[g].bad).copied();
            let bad_rank = [r.a, r.b].into_iter().find(|&x| rank_sums.get(x).is_some_and(|s| s.bad));
            Some(match (bad_host, bad_rank) {
                (Some(g), _) => Cause::Host(host_sums[g].name.clone()),
                (None, Some(x)) => Cause::Rank(x),
                _ if everything => Cause::Everything,
                _ => Cause::Link,
            })
        })
        .collect();
    Blame { hosts: host_sums, ranks: rank_sums, causes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::criteria::{evaluate, Criteria};
    use crate::pairs::results::Measurements;
    use crate::pairs::schedule::{rounds, RandomRounds, Scheme};

    /// `all` over 8 ranks on 4 hosts (2 each) with bandwidth from `bw`.
    fn run(bw: impl Fn(usize, usize) -> f64) -> (Vec<PairRow>, Evaluation, Blame) {
        run_on(8, bw)
    }

    /// `all` over `n` ranks, two per host, with bandwidth from `bw`.
    fn run_on(n: usize, bw: impl Fn(usize, usize) -> f64) -> (Vec<PairRow>, Evaluation, Blame) {
        let hosts: Vec<String> = (0..n).map(|r| format!("h{}", r / 2)).collect();
        let mut m = Measurements::default();
        for (i, round) in rounds(Scheme::All, n, RandomRounds { rounds: 1, seed: 1 }).unwrap().iter().enumerate() {
            let g: Vec<f64> = round
                .flows
                .iter()
                .enumerate()
                .flat_map(|(r, f)| [f.from.map(|s| bw(s, r)).unwrap_or(f64::NAN), f64::NAN])
                .collect();
            m.add_round(i, round, &g);
        }
        let rows = m.pair_rows();
        let eval = evaluate(&rows, &Criteria { min_bw: Some(50.0), ..Criteria::default() }, true, &|_, _| None);
        let b = blame(&rows, &eval, &hosts);
        (rows, eval, b)
    }

    #[test]
    fn a_slow_host_is_a_bad_host() {
        // Host h1 (ranks 2, 3) is slow in everything it does.
        let (rows, eval, b) = run(|s, d| if [s, d].iter().any(|&x| x / 2 == 1) { 10.0 } else { 100.0 });
        assert_eq!(b.hosts.len(), 4);
        assert!(b.hosts[1].bad);
        assert_eq!(b.hosts[1].ranks, vec![2, 3]);
        assert!(!b.hosts[0].bad && !b.hosts[2].bad);
        assert_eq!(b.hosts[1].min_out, Some(10.0));
        assert_eq!(b.hosts[0].median_out, Some(100.0));
        for &i in &eval.failing {
            assert_eq!(b.causes[i], Some(Cause::Host("h1".into())), "{:?}", rows[i]);
        }
    }

    #[test]
    fn a_host_slow_to_everyone_else_is_bad_even_if_fast_inside() {
        // h1's pair 2 <-> 3 stays inside the host and is fast.
        let (_, eval, b) = run(|s, d| if (s / 2 == 1) != (d / 2 == 1) { 10.0 } else { 100.0 });
        assert!(b.hosts[1].bad);
        assert_eq!(b.hosts[1].failing_directions, 2 * 2 * 6);
        assert!(!b.ranks[2].bad, "rank 2 is fast to rank 3");
        for &i in &eval.failing {
            assert_eq!(b.causes[i], Some(Cause::Host("h1".into())));
        }
    }

    #[test]
    fn two_hosts_cannot_tell_which_one_is_bad() {
        let (_, eval, b) = run_on(4, |s, d| if s / 2 == d / 2 { 100.0 } else { 10.0 });
        assert!(b.hosts.iter().all(|h| !h.bad));
        assert_eq!(eval.failing.len(), 4);
        assert!(eval.failing.iter().all(|&i| b.causes[i] == Some(Cause::Link)));
    }

    #[test]
    fn one_slow_link_is_a_link() {
        let (rows, eval, b) = run(|s, d| if (s, d) == (1, 6) { 10.0 } else { 100.0 });
        assert_eq!(eval.failing.len(), 1);
        let i = eval.failing[0];
        assert_eq!((rows[i].a, rows[i].b), (1, 6));
        assert_eq!(b.causes[i], Some(Cause::Link));
        assert!(b.hosts.iter().all(|h| !h.bad));
        assert!(b.ranks.iter().all(|r| !r.bad));
        assert_eq!(b.hosts[0].failing_directions, 1);
    }

    #[test]
    fn a_slow_rank_is_a_bad_rank() {
        let (_, eval, b) = run(|s, d| if s == 5 || d == 5 { 10.0 } else { 100.0 });
        assert!(b.ranks[5].bad);
        assert!(!b.hosts[2].bad, "rank 4 on the same host is fine");
        for &i in &eval.failing {
            assert_eq!(b.causes[i], Some(Cause::Rank(5)));
        }
    }

    #[test]
    fn everything_slow_blames_nobody() {
        let (_, eval, b) = run(|_, _| 1.0);
        assert_eq!(eval.failing.len(), 28);
        assert!(b.hosts.iter().all(|h| !h.bad));
        assert!(b.causes.iter().all(|c| c == &Some(Cause::Everything)));
    }
}
