//! What share of its path's peak each gpu-bw bandwidth reached: host to GPU
//! and back (pinned host memory) against the GPU's PCIe link, and each
//! ordered GPU pair one way and both ways (with peer access where the pair
//! has it, else staged through host memory) against its path
//! ([`super::peaks`]; twice the peak both ways). The one-way pairs are
//! grouped by path class, one line each with the class's median,
//! peak and efficiency, the way an article explains its numbers
//! ("NVLink x2 ... through the CPU ..."); `--min-efficiency` names every
//! row below its share. Pure functions of the measurements and peaks.

use std::fmt::Write;

use serde::Serialize;

use super::peaks::GpuPeak;
use super::results::{HostMemory, Kind, Measurement};
use super::topology::PairPath;
use crate::peak::verdict::pct_text;

/// One judged bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `GPU 0 -> GPU 3`, `GPU 0 H2D`.
    pub name: String,
    pub kind: Kind,
    pub src: Option<usize>,
    pub dst: Option<usize>,
    /// Measured, GB/s.
    pub gbps: f64,
    pub peak: GpuPeak,
    /// Percent of the peak; None when the peak is unknown.
    pub efficiency_pct: Option<f64>,
}

/// The pairs of one path class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassSummary {
    pub class: String,
    pub pairs: usize,
    pub median_gbps: f64,
    /// The class's peak (the median of its pairs' peaks), GB/s; None when
    /// a pair's peak is unknown.
    pub peak_gbps: Option<f64>,
    pub efficiency_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::stats::ci::median(&v).unwrap_or(0.0)
}

/// A bandwidth of `gbps` against `peak`.
pub(crate) fn row(name: String, kind: Kind, src: Option<usize>, dst: Option<usize>, gbps: f64, peak: &GpuPeak) -> Row {
    Row { name, kind, src, dst, gbps, efficiency_pct: peak.efficiency(gbps * 1e3), peak: peak.clone() }
}

fn measured(name: String, m: &Measurement, peak: &GpuPeak) -> Row {
    row(name, m.kind, m.src, m.dst, m.value, peak)
}

/// The judged rows: each GPU's pinned H2D and D2H against `host(gpu)`,
/// then each ordered pair's one-way copy (peer access on where the pair
/// has it, else off) against the pair's peak, then its two-way copy
/// against twice that.
pub fn rows(ms: &[Measurement], pairs: &[PairPath], host: &dyn Fn(usize) -> Option<GpuPeak>) -> Vec<Row> {
    let mut out = Vec::new();
    for m in ms.iter().filter(|m| matches!(m.kind, Kind::H2d | Kind::D2h) && m.host_memory == Some(HostMemory::Pinned))
    {
        let Some(g) = m.dst.or(m.src) else { continue };
        if let Some(peak) = host(g) {
            let dir = if m.kind == Kind::H2d { "H2D" } else { "D2H" };
            out.push(measured(format!("GPU {g} {dir}"), m, &peak));
        }
    }
    for p in pairs {
        let Some(peak) = &p.peak else { continue };
        let peer = p.attributes.can_access_peer == Some(true);
        let found = ms.iter().find(|m| {
            m.kind == Kind::P2pUni && m.src == Some(p.src) && m.dst == Some(p.dst) && m.peer_access == Some(peer)
        });
        if let Some(m) = found {
            out.push(measured(format!("GPU {} -> GPU {}", p.src, p.dst), m, peak));
        }
    }
    // Both ways at once: twice the one-way peak.
    for p in pairs {
        let Some(peak) = &p.peak else { continue };
        let peer = p.attributes.can_access_peer == Some(true);
        let found = ms.iter().find(|m| {
            m.kind == Kind::P2pBidir && m.src == Some(p.src) && m.dst == Some(p.dst) && m.peer_access == Some(peer)
        });
        if let Some(m) = found {
            let mut both = peak.clone();
            both.peak_mbps = both.peak_mbps.map(|x| 2.0 * x);
            both.how = format!("{}, both directions at once (x2)", both.how);
            out.push(measured(format!("GPU {} <-> GPU {}", p.src, p.dst), m, &both));
        }
    }
    out
}

/// The pair rows grouped by class, fastest class first.
pub fn classes(rows: &[Row]) -> Vec<ClassSummary> {
    let pairs: Vec<&Row> = rows.iter().filter(|r| r.kind == Kind::P2pUni).collect();
    let mut names: Vec<&str> = Vec::new();
    for r in &pairs {
        if !names.contains(&r.peak.class.as_str()) {
            names.push(&r.peak.class);
        }
    }
    let mut out: Vec<ClassSummary> = names
        .iter()
        .map(|&class| {
            let members: Vec<&&Row> = pairs.iter().filter(|r| r.peak.class == class).collect();
            let median_gbps = median(members.iter().map(|r| r.gbps).collect());
            let unknown = members.iter().find_map(|r| r.peak.unknown.clone());
            let peak_gbps = if unknown.is_some() {
                None
            } else {
                Some(median(members.iter().filter_map(|r| r.peak.peak_mbps).map(|p| p / 1e3).collect()))
            };
            let efficiency_pct = peak_gbps.filter(|p| *p > 0.0).map(|p| 100.0 * median_gbps / p);
            ClassSummary {
                class: class.to_string(),
                pairs: members.len(),
                median_gbps,
                peak_gbps,
                efficiency_pct,
                unknown,
            }
        })
        .collect();
    out.sort_by(|a, b| b.median_gbps.total_cmp(&a.median_gbps));
    out
}

/// The class lines, then one line per GPU for its PCIe link.
pub fn text(rows: &[Row], classes: &[ClassSummary], peer_bytes: usize) -> String {
    let mut s = String::new();
    if !classes.is_empty() {
        let _ = writeln!(
            s,
            "\nGPU pairs by path, one way ({peer_bytes} bytes; peer access where the pair has it, else through host \
             memory), against each path's peak (one direction; NVLinks from NVML, PCIe links from sysfs):"
        );
        for c in classes {
            let plural = if c.pairs == 1 { "" } else { "s" };
            match (c.peak_gbps, c.efficiency_pct) {
                (Some(p), Some(e)) => {
                    let _ = writeln!(
                        s,
                        "  {}: {} pair{plural}, median {:.2} GB/s of {p:.2} GB/s peak ({})",
                        c.class,
                        c.pairs,
                        c.median_gbps,
                        pct_text(e)
                    );
                }
                _ => {
                    let why = c.unknown.as_deref().unwrap_or("no peak");
                    let _ = writeln!(
                        s,
                        "  {}: {} pair{plural}, median {:.2} GB/s, peak unknown ({why})",
                        c.class, c.pairs, c.median_gbps
                    );
                }
            }
        }
    }
    let host: Vec<&Row> = rows.iter().filter(|r| matches!(r.kind, Kind::H2d | Kind::D2h)).collect();
    if !host.is_empty() {
        let _ = writeln!(s, "\nHost and GPU (pinned) against each GPU's PCIe link (one direction, from sysfs):");
        for r in host {
            let _ = match r.efficiency_pct {
                Some(e) => writeln!(s, "  {}: {:.2} GB/s of {} ({})", r.name, r.gbps, r.peak.rate_text(), pct_text(e)),
                None => writeln!(
                    s,
                    "  {}: {:.2} GB/s, peak unknown ({})",
                    r.name,
                    r.gbps,
                    r.peak.unknown.as_deref().unwrap_or("no peak")
                ),
            };
        }
    }
    s
}

/// Whether `r` fails `--min-efficiency min_pct`: below that share of its
/// peak, or with no known peak to judge it by.
pub(crate) fn falls_short(min_pct: f64, r: &Row) -> bool {
    r.efficiency_pct.is_none_or(|e| e < min_pct)
}

/// `--min-efficiency PCT`: one line per row below PCT% of its peak, or
/// whose peak is unknown (it cannot be judged), worst first.
pub fn judge(min_pct: f64, rows: &[Row]) -> Vec<String> {
    let mut failing: Vec<(f64, String)> = Vec::new();
    for r in rows.iter().filter(|r| falls_short(min_pct, r)) {
        let label = format!("{} {}", r.name, r.peak.class);
        match (r.efficiency_pct, r.peak.peak_mbps) {
            (Some(e), Some(p)) => {
                failing.push((e, crate::peak::verdict::share_of(&label, &r.peak.rate_text(), p, r.gbps * 1e3, e)))
            }
            _ => failing.push((
                -1.0,
                format!(
                    "{label}: cannot judge: the peak is unknown ({})",
                    r.peak.unknown.as_deref().unwrap_or("no peak")
                ),
            )),
        }
    }
    failing.sort_by(|a, b| a.0.total_cmp(&b.0));
    failing.into_iter().map(|(_, l)| l).collect()
}

/// The verdict lines of `--min-efficiency`.
pub(crate) fn verdict_text(min_pct: f64, judged: usize, failing: &[String]) -> String {
    if judged == 0 {
        return format!("\nNothing to judge against --min-efficiency {min_pct}%: no bandwidth with a path\n");
    }
    if failing.is_empty() {
        return format!("\nPASS: all {judged} bandwidths reach {min_pct}% of their path's peak\n");
    }
    let mut s = format!("\nFAIL: {} of {judged} bandwidths below {min_pct}% of their path's peak\n", failing.len());
    for l in failing {
        let _ = writeln!(s, "  {l}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_bw::results::Clock;
    use crate::gpu_bw::topology::{PciRelation, PeerAttributes};

    fn peak(class: &str, mbps: Option<f64>) -> GpuPeak {
        GpuPeak {
            class: class.into(),
            peak_mbps: mbps,
            unknown: mbps.is_none().then(|| "NVML not found (x): the NVLink count is not known".into()),
            how: String::new(),
            sources: vec![],
        }
    }

    fn pair(src: usize, dst: usize, peer: bool, p: GpuPeak) -> PairPath {
        let attributes = PeerAttributes { can_access_peer: Some(peer), ..Default::default() };
        PairPath { src, dst, attributes, pci: PciRelation::Unknown, label: String::new(), peak: Some(p) }
    }

    fn uni(s: usize, d: usize, peer: bool, gbps: f64) -> Measurement {
        Measurement::bandwidth(
            Kind::P2pUni,
            Some(s),
            Some(d),
            None,
            Some(peer),
            (1_000_000_000, 1, 1),
            1.0 / gbps,
            Clock::GpuEvents,
        )
    }

    #[test]
    fn pairs_group_by_class_and_are_judged() {
        let pairs = [
            pair(0, 3, true, peak("NVLink x2", Some(50_000.0))),
            pair(3, 0, true, peak("NVLink x2", Some(50_000.0))),
            pair(0, 5, false, peak("through the CPU", Some(15_750.0))),
            pair(0, 1, true, peak("NVLink?", None)),
        ];
        let ms = vec![
            uni(0, 3, true, 30.5),
            uni(3, 0, true, 48.0),
            uni(0, 3, false, 8.0),
            uni(0, 5, false, 8.2),
            uni(0, 5, true, 99.0),
            uni(0, 1, true, 22.0),
            Measurement::bandwidth(
                Kind::P2pBidir,
                Some(0),
                Some(3),
                None,
                Some(true),
                (1_000_000_000, 1, 2),
                2.0 / 90.0,
                Clock::GpuEvents,
            ),
            Measurement::bandwidth(
                Kind::H2d,
                None,
                Some(0),
                Some(HostMemory::Pinned),
                None,
                (1, 1, 1),
                1e-10,
                Clock::GpuEvents,
            ),
        ];
        let host = |g: usize| (g == 0).then(|| peak("PCIe link", Some(15_750.0)));
        let rows = rows(&ms, &pairs, &host);
        let names: Vec<(&str, f64)> = rows.iter().map(|r| (r.name.as_str(), r.gbps)).collect();
        // Peer access on where the pair has it, else off.
        assert_eq!(
            names,
            [
                ("GPU 0 H2D", 10.0),
                ("GPU 0 -> GPU 3", 30.5),
                ("GPU 3 -> GPU 0", 48.0),
                ("GPU 0 -> GPU 5", 8.2),
                ("GPU 0 -> GPU 1", 22.0),
                ("GPU 0 <-> GPU 3", 90.0)
            ]
        );
        let both = rows.last().unwrap();
        assert_eq!((both.peak.peak_mbps, both.efficiency_pct), (Some(100_000.0), Some(90.0)));
        assert!(both.peak.how.ends_with("both directions at once (x2)"));
        let cs = classes(&rows);
        let got: Vec<(&str, usize, f64, Option<f64>)> =
            cs.iter().map(|c| (c.class.as_str(), c.pairs, c.median_gbps, c.peak_gbps)).collect();
        assert_eq!(
            got,
            [("NVLink x2", 2, 39.25, Some(50.0)), ("NVLink?", 1, 22.0, None), ("through the CPU", 1, 8.2, Some(15.75))]
        );
        let t = text(&rows, &cs, 4 << 20);
        assert!(t.contains("\n  NVLink x2: 2 pairs, median 39.25 GB/s of 50.00 GB/s peak (78%)\n"), "{t}");
        assert!(t.contains("\n  through the CPU: 1 pair, median 8.20 GB/s of 15.75 GB/s peak (52%)\n"), "{t}");
        assert!(t.contains("  NVLink?: 1 pair, median 22.00 GB/s, peak unknown (NVML not found (x)"), "{t}");
        assert!(t.contains("\n  GPU 0 H2D: 10.00 GB/s of 15.75 GB/s (63%)\n"), "{t}");
        let failing = judge(80.0, &rows);
        assert_eq!(
            failing,
            [
                "GPU 0 -> GPU 1 NVLink?: cannot judge: the peak is unknown (NVML not found (x): the NVLink count is not \
                 known)",
                "GPU 0 -> GPU 5 through the CPU: 52% of 15.75 GB/s (8.20 of 15.75 GB/s expected)",
                "GPU 0 -> GPU 3 NVLink x2: 61% of 50.00 GB/s (30.50 of 50.00 GB/s expected)",
                "GPU 0 H2D PCIe link: 63% of 15.75 GB/s (10.00 of 15.75 GB/s expected)",
            ]
        );
        let v = verdict_text(80.0, rows.len(), &failing);
        assert!(v.starts_with("\nFAIL: 4 of 6 bandwidths below 80% of their path's peak\n  GPU 0 -> GPU 1"), "{v}");
        let known: Vec<Row> = rows.into_iter().filter(|r| r.peak.peak_mbps.is_some()).collect();
        assert!(judge(50.0, &known).is_empty());
        assert_eq!(verdict_text(50.0, 4, &[]), "\nPASS: all 4 bandwidths reach 50% of their path's peak\n");
        assert!(verdict_text(50.0, 0, &[]).contains("Nothing to judge"));
    }
}
