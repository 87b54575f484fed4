//! What share of its path's peak each gpu-bw bandwidth reached: host to GPU
//! and back (pinned host memory) against the GPU's PCIe link, and each
//! ordered GPU pair one way (with peer access where the pair has it, else
//! staged through host memory) against its path ([`super::peaks`]). The
//! pairs are grouped by path class, one line each with the class's median,
//! peak and efficiency, the way an article explains its numbers
//! ("NVLink x2 ... through the CPU ..."); `--min-efficiency` names every
//! row below its share. Pure functions of the measurements and peaks.

use std::fmt::Write;

use serde::Serialize;

use super::peaks::GpuPeak;
use super::results::{HostMemory, Kind, Measurement};
use super::topology::PairPath;

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
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn row(name: String, m: &Measurement, peak: &GpuPeak) -> Row {
    Row {
        name,
        kind: m.kind,
        src: m.src,
        dst: m.dst,
        gbps: m.value,
        efficiency_pct: peak.efficiency(m.value * 1e3),
        peak: peak.clone(),
    }
}

/// The judged rows: each GPU's pinned H2D and D2H against `host(gpu)`,
/// then each ordered pair's one-way copy (peer access on where the pair
/// has it, else off) against the pair's peak.
pub fn rows(ms: &[Measurement], pairs: &[PairPath], host: &dyn Fn(usize) -> Option<GpuPeak>) -> Vec<Row> {
    let mut out = Vec::new();
    for m in ms.iter().filter(|m| matches!(m.kind, Kind::H2d | Kind::D2h) && m.host_memory == Some(HostMemory::Pinned))
    {
        let Some(g) = m.dst.or(m.src) else { continue };
        if let Some(peak) = host(g) {
            let dir = if m.kind == Kind::H2d { "H2D" } else { "D2H" };
            out.push(row(format!("GPU {g} {dir}"), m, &peak));
        }
    }
    for p in pairs {
        let Some(peak) = &p.peak else { continue };
        let peer = p.attributes.can_access_peer == Some(true);
        let found = ms.iter().find(|m| {
            m.kind == Kind::P2pUni && m.src == Some(p.src) && m.dst == Some(p.dst) && m.peer_access == Some(peer)
        });
        if let Some(m) = found {
            out.push(row(format!("GPU {} -> GPU {}", p.src, p.dst), m, peak));
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
                        "  {}: {} pair{plural}, median {:.2} GB/s of {p:.2} GB/s peak ({e:.0}%)",
                        c.class, c.pairs, c.median_gbps
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
                Some(e) => writeln!(s, "  {}: {:.2} GB/s of {} ({e:.0}%)", r.name, r.gbps, r.peak.rate_text()),
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

/// `--min-efficiency PCT`: one line per row below PCT% of its peak, or
/// whose peak is unknown (it cannot be judged), worst first.
pub fn judge(min_pct: f64, rows: &[Row]) -> Vec<String> {
    let mut failing: Vec<(f64, String)> = Vec::new();
    for r in rows {
        let label = format!("{} {}", r.name, r.peak.class);
        match (r.efficiency_pct, r.peak.peak_mbps) {
            (Some(e), Some(p)) if e < min_pct => failing.push((
                e,
                format!("{label}: {e:.0}% of {:.2} GB/s ({:.2} of {:.2} GB/s expected)", p / 1e3, r.gbps, p / 1e3),
            )),
            (Some(_), Some(_)) => {}
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
pub fn verdict_text(min_pct: f64, judged: usize, failing: &[String]) -> String {
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
