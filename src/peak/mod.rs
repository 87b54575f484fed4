//! Is this number good? The peak of each path a benchmark's bytes take,
//! from the machine and never from a product name: a NIC's link rate and
//! its PCIe link (`link.rs`, `pcie.rs`, sysfs), a GPU's PCIe link and
//! NVLinks (`gpu.rs`, sysfs and NVML), the machine's own copy rate
//! for shared memory (`copy_rate.rs`, measured before anything is timed);
//! the paths of a run joined from every rank's end (`path.rs`); and the
//! plateau of a bandwidth curve judged against its path (`verdict.rs`,
//! `--min-efficiency`). Where a figure cannot be known the peak is unknown
//! and says why.

pub(crate) mod copy_rate;
#[cfg(test)]
mod described;
pub mod gpu;
pub mod link;
pub mod path;
pub mod pcie;
pub mod verdict;

pub(crate) use path::{PathClass, PathPeak, RankEnd};

use serde::{Deserialize, Serialize};

/// What a run record keeps of the paths: the run's own (whose peak every
/// row's efficiency uses, with every source), each pair's, the plateau,
/// each size's efficiency, and `--min-efficiency`'s verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunPaths {
    pub run: PathPeak,
    /// Point-to-point runs: each pair's path, sender to receiver.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<PairPath>,
    /// Every size's best bandwidth (MB/s, or bus bandwidth x 1000) and its
    /// share of the peak, filled in as the run ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<verdict::Plateau>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau: Option<verdict::Plateau>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_efficiency_pct: Option<f64>,
    /// What `--min-efficiency` said: None when it held or was not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// One pair's path, its sources being the run's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairPath {
    pub from: usize,
    pub to: usize,
    pub label: String,
    pub class: PathClass,
    pub peak_mbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl PairPath {
    pub fn new(from: usize, to: usize, p: &PathPeak) -> PairPath {
        PairPath {
            from,
            to,
            label: p.label.clone(),
            class: p.class,
            peak_mbps: p.peak_mbps,
            unknown: p.unknown.clone(),
        }
    }
}
