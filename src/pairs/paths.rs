//! The paths of a pairs run and their peaks (crate::peak): every rank's end
//! of the paths, gathered before the first round, gives each direction its
//! path (`shared memory on node01`, `h1 eth1 -> h2 eth2`), its class (same
//! socket, across sockets, the NIC rail) and its peak; the measured
//! directions grouped by path give the summary's lines and the record's
//! `paths`. Pure: the session gathers the ends.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::criteria::median;
use crate::peak::path::{self, PathPeak, RankEnd};
use crate::peak::verdict::pct_text;
use crate::report::record::RankInfo;

/// Every rank's end of the paths, in rank order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairPeaks {
    ends: Vec<RankEnd>,
}

impl PairPeaks {
    pub fn new(ends: Vec<RankEnd>) -> PairPeaks {
        PairPeaks { ends }
    }

    /// The `n` ends from rank 0's gathered ranks; a rank that sent none (or
    /// is missing) gets an end whose peaks are unknown, saying so.
    pub(crate) fn from_ranks(n: usize, ranks: &[RankInfo]) -> PairPeaks {
        let ends = (0..n)
            .map(|r| {
                let info = ranks.iter().find(|x| x.rank == r);
                info.and_then(|x| x.path_end.clone()).unwrap_or_else(|| {
                    let why = format!("rank {r} sent no end of its paths");
                    RankEnd {
                        host: info.map_or_else(|| "?".into(), |x| x.host.clone()),
                        nic_unknown: Some(why.clone()),
                        copy_unknown: Some(why),
                        ..RankEnd::default()
                    }
                })
            })
            .collect();
        PairPeaks { ends }
    }

    pub fn ends(&self) -> &[RankEnd] {
        &self.ends
    }

    /// The path from `src` to `dst` (both below the number of ranks).
    pub fn path(&self, src: usize, dst: usize) -> PathPeak {
        path::pair((src, &self.ends[src]), (dst, &self.ends[dst]))
    }

    /// `same socket`, `across sockets`, `rail mlx5_0:1`, ... (path::pair_class).
    pub fn class(&self, src: usize, dst: usize) -> String {
        path::pair_class(&self.ends[src], &self.ends[dst])
    }

    /// The path's peak in bytes per second, None when unknown.
    pub(crate) fn peak_bps(&self, src: usize, dst: usize) -> Option<f64> {
        self.path(src, dst).peak_mbps.map(|m| m * 1e6)
    }
}

/// The measured directions that take one path (one label and class).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathGroup {
    pub label: String,
    /// `same socket`, `across sockets`, `shared memory`, `rail mlx5_0:1`,
    /// `network`.
    pub class: String,
    /// The lowest peak of its directions, 10^6 bytes/s (shared memory's
    /// is each pair's slower copy rate, so they may differ); None when no
    /// direction's is known.
    pub peak_mbps: Option<f64>,
    /// The highest, where it differs from the lowest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_max_mbps: Option<f64>,
    /// The lowest peak as the hardware states it (`10 Gb/s`, `9.81 GB/s
    /// copy`), `unknown` without one.
    pub rate_text: String,
    /// How the peak follows from the sources.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub how: String,
    /// Every figure the directions' peaks use, with where it was read or
    /// measured.
    pub sources: Vec<String>,
    /// Why a direction's peak is unknown, where one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// Directions whose peak is unknown.
    #[serde(skip_serializing_if = "is_zero")]
    pub unknown_directions: usize,
    pub directions: usize,
    /// Over the directions with a known peak, each against its own.
    pub median_efficiency_pct: Option<f64>,
    pub min_efficiency_pct: Option<f64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// At most this many path lines on stdout; the record keeps every path.
pub(crate) const MAX_SUMMARY_LINES: usize = 20;

/// Groups measured directions (sender, receiver, bytes per second) by
/// path label and class, in label order.
pub fn group(peaks: &PairPeaks, directions: impl IntoIterator<Item = (usize, usize, f64)>) -> Vec<PathGroup> {
    struct Acc {
        first: PathPeak,
        peaks: Vec<f64>,
        sources: BTreeSet<String>,
        unknown: Option<String>,
        unknown_directions: usize,
        directions: usize,
        efficiency: Vec<f64>,
    }
    let mut groups: BTreeMap<(String, String), Acc> = BTreeMap::new();
    for (src, dst, bps) in directions {
        let p = peaks.path(src, dst);
        let key = (p.label.clone(), peaks.class(src, dst));
        let acc = groups.entry(key).or_insert_with(|| Acc {
            first: p.clone(),
            peaks: Vec::new(),
            sources: BTreeSet::new(),
            unknown: None,
            unknown_directions: 0,
            directions: 0,
            efficiency: Vec::new(),
        });
        acc.directions += 1;
        match (p.peak_mbps, p.efficiency(bps / 1e6)) {
            (Some(peak), Some(eff)) => {
                // The lowest peak's texts speak for the group.
                if acc.peaks.iter().all(|&q| peak < q) {
                    acc.first = p.clone();
                }
                acc.peaks.push(peak);
                acc.efficiency.push(eff);
            }
            _ => {
                acc.unknown_directions += 1;
                if acc.unknown.is_none() {
                    acc.unknown = p.unknown.clone().or_else(|| Some("no peak".into()));
                }
            }
        }
        acc.sources.extend(p.sources);
    }
    groups
        .into_iter()
        .map(|((label, class), a)| {
            let lo = a.peaks.iter().copied().reduce(f64::min);
            let hi = a.peaks.iter().copied().reduce(f64::max);
            PathGroup {
                label,
                class,
                peak_mbps: lo,
                peak_max_mbps: hi.filter(|h| Some(*h) != lo),
                rate_text: if lo.is_some() { a.first.rate_text } else { "unknown".into() },
                how: if lo.is_some() { a.first.how } else { String::new() },
                sources: a.sources.into_iter().collect(),
                unknown: a.unknown,
                unknown_directions: a.unknown_directions,
                directions: a.directions,
                median_efficiency_pct: median(&a.efficiency),
                min_efficiency_pct: a.efficiency.iter().copied().reduce(f64::min),
            }
        })
        .collect()
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// One summary line: `# Path shared memory on vm (same socket): peak 45.50
/// GB/s copy; 2 directions, median 21% of it (min 20%)`.
pub fn line(g: &PathGroup) -> String {
    let mut s = format!("# Path {} ({}): ", g.label, g.class);
    match g.peak_mbps {
        None => s.push_str(&format!(
            "peak unknown ({}); {}",
            g.unknown.as_deref().unwrap_or("no peak"),
            plural(g.directions, "direction")
        )),
        Some(_) => {
            s.push_str(&format!("peak {}", g.rate_text));
            if let Some(hi) = g.peak_max_mbps {
                s.push_str(&format!(" (the lowest of its pairs'; the highest {:.2} GB/s)", hi / 1e3));
            }
            s.push_str(&format!("; {}", plural(g.directions, "direction")));
            if let (Some(med), Some(min)) = (g.median_efficiency_pct, g.min_efficiency_pct) {
                s.push_str(&format!(", median {} of it (min {})", pct_text(med), pct_text(min)));
            }
            if g.unknown_directions > 0 {
                s.push_str(&format!(
                    "; the peak of {} unknown ({})",
                    plural(g.unknown_directions, "direction"),
                    g.unknown.as_deref().unwrap_or("no peak")
                ));
            }
        }
    }
    s
}

/// The summary's path lines: every group, or past [`MAX_SUMMARY_LINES`]
/// the worst (unknown peaks, then the lowest efficiency) and a line saying
/// how many more the record holds.
pub fn lines(groups: &[PathGroup]) -> Vec<String> {
    if groups.len() <= MAX_SUMMARY_LINES {
        return groups.iter().map(line).collect();
    }
    let mut worst: Vec<&PathGroup> = groups.iter().collect();
    let rank =
        |g: &PathGroup| if g.peak_mbps.is_none() { f64::NEG_INFINITY } else { g.min_efficiency_pct.unwrap_or(0.0) };
    worst.sort_by(|x, y| rank(x).total_cmp(&rank(y)));
    let mut out: Vec<String> = worst[..MAX_SUMMARY_LINES].iter().map(|g| line(g)).collect();
    out.push(format!(
        "# ... and {} more paths (the worst {MAX_SUMMARY_LINES} are above; the run record holds every one)",
        groups.len() - MAX_SUMMARY_LINES
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::copy_rate::CopyRate;
    use crate::peak::link::NicLink;

    fn shm(host: &str, package: usize, mbps: f64) -> RankEnd {
        RankEnd {
            host: host.into(),
            package: Some(package),
            copy: Some(CopyRate { mbps, bytes: 1 << 20, copies: 5, method: "memcpy of 1 MiB".into() }),
            nic_unknown: Some("no NIC chosen".into()),
            ..Default::default()
        }
    }

    fn net(host: &str, nic: &str, package: usize) -> RankEnd {
        RankEnd {
            nic: Some(NicLink {
                nic: nic.into(),
                kind: "Ethernet".into(),
                port_gbps: 10.0,
                pcie: None,
                mbps: 1250.0,
                sources: vec![format!("/sys/class/net/{nic}/speed: 10 Gb/s")],
            }),
            nic_unknown: None,
            ..shm(host, package, 45_500.0)
        }
    }

    #[test]
    fn each_direction_has_its_path_and_class() {
        let p = PairPeaks::new(vec![net("h1", "eth1", 0), net("h1", "eth1", 1), net("h2", "eth2", 0)]);
        assert_eq!(p.path(0, 2).label, "h1 eth1 -> h2 eth2");
        assert_eq!(p.path(2, 0).label, "h2 eth2 -> h1 eth1");
        assert_eq!(p.peak_bps(0, 2), Some(1250e6));
        assert_eq!((p.class(0, 2).as_str(), p.class(0, 1).as_str()), ("rail eth1", "across sockets"));
        assert_eq!(p.path(0, 1).label, "shared memory on h1");
        assert_eq!(p.peak_bps(1, 0), Some(45_500e6));
    }

    #[test]
    fn a_rank_without_an_end_has_unknown_peaks() {
        use crate::report::record::samples::rank;
        let one = RankInfo { path_end: Some(shm("h1", 0, 9000.0)), ..rank(0, "h1", "0") };
        let p = PairPeaks::from_ranks(2, &[one, rank(1, "h1", "1")]);
        let path = p.path(0, 1);
        assert_eq!((path.label.as_str(), path.peak_mbps), ("shared memory on h1", None));
        assert_eq!(path.unknown.as_deref(), Some("rank 1 sent no end of its paths"));
    }

    #[test]
    fn directions_grouped_by_path() {
        // Ranks 0-2 on vm (0 and 1 on socket 0, 2 on socket 1); rank 3 on
        // h2 over eth2.
        let mut ends = vec![shm("vm", 0, 45_500.0), shm("vm", 0, 46_000.0), shm("vm", 1, 40_000.0)];
        ends[0].nic = net("vm", "eth1", 0).nic;
        ends.push(net("h2", "eth2", 0));
        let p = PairPeaks::new(ends);
        let dirs = [
            (0, 1, 9.1e9),
            (1, 0, 10.0e9),
            (0, 2, 20.0e9),
            (0, 3, 625e6),
            (3, 0, 1250e6),
            (1, 3, 100e6), // rank 1 has no NIC: unknown
        ];
        let g = group(&p, dirs);
        let labels: Vec<(&str, &str)> = g.iter().map(|g| (g.label.as_str(), g.class.as_str())).collect();
        assert_eq!(
            labels,
            [
                ("h2 eth2 -> vm eth1", "rail eth2"),
                ("shared memory on vm", "across sockets"),
                ("shared memory on vm", "same socket"),
                ("vm ? -> h2 eth2", "network"),
                ("vm eth1 -> h2 eth2", "rail eth1"),
            ]
        );
        let same = &g[2];
        assert_eq!((same.directions, same.peak_mbps, same.peak_max_mbps), (2, Some(45_500.0), None));
        assert_eq!(same.rate_text, "45.50 GB/s copy");
        assert_eq!(same.min_efficiency_pct, Some(20.0));
        assert!((same.median_efficiency_pct.unwrap() - (20.0 + 100.0 * 10.0e3 / 45_500.0) / 2.0).abs() < 1e-9);
        assert_eq!(same.sources.len(), 2, "{:?}", same.sources);
        assert_eq!(
            line(same),
            "# Path shared memory on vm (same socket): peak 45.50 GB/s copy; 2 directions, median 21% of it (min 20%)"
        );
        assert_eq!(
            line(&g[0]),
            "# Path h2 eth2 -> vm eth1 (rail eth2): peak 10 Gb/s; 1 direction, median 100% of it (min 100%)"
        );
        assert_eq!(g[3].peak_mbps, None);
        assert_eq!(line(&g[3]), "# Path vm ? -> h2 eth2 (network): peak unknown (rank 1: no NIC chosen); 1 direction");
        assert_eq!(g[3].unknown_directions, 1);
        assert_eq!(group(&p, []), Vec::new());
    }

    #[test]
    fn peaks_that_differ_and_peaks_partly_unknown() {
        let mut ends = vec![shm("vm", 0, 40_000.0), shm("vm", 0, 50_000.0), shm("vm", 0, 60_000.0)];
        let g = group(&PairPeaks::new(ends.clone()), [(0, 1, 20e9), (1, 2, 25e9)]);
        assert_eq!((g[0].peak_mbps, g[0].peak_max_mbps), (Some(40_000.0), Some(50_000.0)));
        assert_eq!(g[0].rate_text, "40.00 GB/s copy");
        assert_eq!(
            line(&g[0]),
            "# Path shared memory on vm (same socket): peak 40.00 GB/s copy (the lowest of its pairs'; the highest \
             50.00 GB/s); 2 directions, median 50% of it (min 50%)"
        );
        ends[2].copy = None;
        ends[2].copy_unknown = Some("could not copy".into());
        let g = group(&PairPeaks::new(ends), [(0, 1, 20e9), (1, 2, 25e9)]);
        assert_eq!((g[0].directions, g[0].unknown_directions), (2, 1));
        assert!(line(&g[0])
            .ends_with("; 2 directions, median 50% of it (min 50%); the peak of 1 direction unknown (could not copy)"));
    }

    #[test]
    fn many_paths_show_the_worst() {
        let ends: Vec<RankEnd> = (0..30).map(|i| net(&format!("h{i:02}"), "eth0", 0)).collect();
        let p = PairPeaks::new(ends);
        let dirs: Vec<(usize, usize, f64)> = (0..29).map(|i| (i, i + 1, (100 + i) as f64 * 1e6)).collect();
        let g = group(&p, dirs);
        assert_eq!(g.len(), 29);
        let l = lines(&g);
        assert_eq!(l.len(), MAX_SUMMARY_LINES + 1);
        assert!(l[0].starts_with("# Path h00 eth0 -> h01 eth0 "), "{}", l[0]);
        assert_eq!(l[20], "# ... and 9 more paths (the worst 20 are above; the run record holds every one)");
        assert_eq!(lines(&g[..3]).len(), 3);
    }
}
