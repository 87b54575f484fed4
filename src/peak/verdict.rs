//! Judging a bandwidth curve against its path's peak: the plateau (the
//! largest sizes, where a user reads a bandwidth curve) and the lines of
//! `--min-efficiency`. Every number in a line comes from the path (whose
//! sources the record names) and the measured rows.

use serde::{Deserialize, Serialize};

use super::path::PathPeak;

/// How many of the largest sizes make the plateau.
pub(crate) const PLATEAU_SIZES: usize = 3;

/// Where a curve stands against its peak at its plateau.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// The size of the plateau's best value, bytes.
    pub size: usize,
    /// Its bandwidth, 10^6 bytes/s.
    pub value_mbps: f64,
    pub efficiency_pct: f64,
}

/// The plateau of `points` (size, bandwidth in MB/s) against `path`: of
/// the [`PLATEAU_SIZES`] largest sizes, the one closest to the peak, so a
/// single noisy size does not fail a good link. None without a peak or a
/// point.
pub fn plateau(points: &[(usize, f64)], path: &PathPeak) -> Option<Plateau> {
    let mut sorted: Vec<(usize, f64)> = points.iter().copied().filter(|(_, v)| v.is_finite()).collect();
    sorted.sort_by_key(|p| p.0);
    let top = &sorted[sorted.len().saturating_sub(PLATEAU_SIZES)..];
    let (size, value_mbps) = top.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let efficiency_pct = path.efficiency(value_mbps)?;
    Some(Plateau { size, value_mbps, efficiency_pct })
}

/// `h1 eth1 -> h2 eth2: 61% of 10 Gb/s (0.76 of 1.25 GB/s expected) at
/// 4 MiB`.
pub fn line(path: &PathPeak, p: &Plateau) -> String {
    format!("{} at {}", share(path, p.value_mbps, p.efficiency_pct), crate::bytes::exact_label(p.size as u64))
}

/// `value_mbps` over `path`, which is `efficiency_pct` of its peak:
/// `h1 eth1 -> h2 eth2: 61% of 10 Gb/s (0.76 of 1.25 GB/s expected)`.
pub fn share(path: &PathPeak, value_mbps: f64, efficiency_pct: f64) -> String {
    share_of(&path.label, &path.rate_text, path.peak_mbps.unwrap_or(0.0), value_mbps, efficiency_pct)
}

/// The words of [`share`] for any path with a label, a rate as the
/// hardware states it and a peak (MB/s): gpu-bw's rows say it this way too.
pub(crate) fn share_of(label: &str, rate_text: &str, peak_mbps: f64, value_mbps: f64, efficiency_pct: f64) -> String {
    format!(
        "{label}: {} of {rate_text} ({:.2} of {:.2} GB/s expected)",
        pct_text(efficiency_pct),
        value_mbps / 1e3,
        peak_mbps / 1e3
    )
}

/// A share as people read it: whole percents, one decimal below 10% (so
/// that a path far below its peak never reads `0%`).
pub(crate) fn pct_text(pct: f64) -> String {
    if pct < 9.95 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    }
}

/// `the peak of h1 eth1 -> h2 eth2 is unknown (rank 1: ...)`.
pub fn unknown(path: &PathPeak) -> String {
    format!("the peak of {} is unknown ({})", path.label, path.unknown.as_deref().unwrap_or("no reason given"))
}

/// What `--min-efficiency PCT` says of one path: None when it holds, else
/// the line naming it (below, or not judged for want of a peak or a
/// plateau).
pub fn judge(path: &PathPeak, plateau: Option<&Plateau>, min_pct: f64) -> Option<String> {
    match (plateau, &path.unknown) {
        (Some(p), _) if p.efficiency_pct >= min_pct => None,
        (Some(p), _) => Some(format!("below --min-efficiency {min_pct}%: {}", line(path, p))),
        (None, Some(_)) => Some(format!("cannot judge --min-efficiency: {}", unknown(path))),
        (None, None) => Some(format!("cannot judge --min-efficiency: no bandwidth was measured over {}", path.label)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::path::PathClass;

    fn path(peak: Option<f64>) -> PathPeak {
        PathPeak {
            label: "h1 eth1 -> h2 eth2".into(),
            class: PathClass::Network,
            peak_mbps: peak,
            rate_text: if peak.is_some() { "10 Gb/s".into() } else { "unknown".into() },
            unknown: peak.is_none().then(|| "rank 1: eth2 reports no link rate".into()),
            how: String::new(),
            sources: vec![],
        }
    }

    #[test]
    fn the_plateau_is_the_best_of_the_largest_sizes() {
        let pts = [(1, 1.0), (1 << 20, 900.0), (2 << 20, 1100.0), (4 << 20, 700.0), (512, 1200.0)];
        let p = plateau(&pts, &path(Some(1250.0))).unwrap();
        assert_eq!((p.size, p.value_mbps, p.efficiency_pct), (2 << 20, 1100.0, 88.0));
        assert_eq!(
            line(&path(Some(1250.0)), &p),
            "h1 eth1 -> h2 eth2: 88% of 10 Gb/s (1.10 of 1.25 GB/s expected) at 2 MiB"
        );
        assert_eq!(plateau(&[], &path(Some(1.0))), None);
        assert_eq!(plateau(&pts, &path(None)), None);
    }

    #[test]
    fn judged_both_ways() {
        let good = path(Some(1250.0));
        let p = plateau(&[(4 << 20, 762.5)], &good).unwrap();
        assert_eq!(judge(&good, Some(&p), 61.0), None);
        assert_eq!(
            judge(&good, Some(&p), 80.0).as_deref(),
            Some(
                "below --min-efficiency 80%: h1 eth1 -> h2 eth2: 61% of 10 Gb/s (0.76 of 1.25 GB/s expected) at 4 MiB"
            )
        );
        assert_eq!(
            judge(&path(None), None, 80.0).as_deref(),
            Some("cannot judge --min-efficiency: the peak of h1 eth1 -> h2 eth2 is unknown (rank 1: eth2 reports no link rate)")
        );
    }
}
