//! The peaks of the paths GPU memory takes, from the machine and never
//! from a product name: a GPU's PCIe link from sysfs (host to GPU and
//! back), the NVLinks between two GPUs from NVML (their count times the
//! per-link rate of their version), a GPU's NVLinks to the other GPUs of a
//! job (a collective's ceiling on one host), and for GPUs without peer
//! access the host memory they go through (the slower of their two PCIe
//! links). Where a figure cannot be known the peak is unknown and says
//! why. Pure: the caller reads sysfs (`pcie::sysfs_root`) and NVML
//! (`crate::gpu::nvml`). gpu-bw's pairs (`gpu_bw::peaks`) and the OSU
//! binaries' GPU paths (`peak::path`) both build on it.

use serde::{Deserialize, Serialize};

use crate::gpu::nvml::{ActiveLink, GpuLinks};
use crate::peak::pcie::{self, PcieLink};

/// One direction of one NVLink, GB/s (10^9 bytes/s), by the value
/// `nvmlDeviceGetNvLinkVersion` returns (nvml.h's `nvmlNvlinkVersion_t`:
/// 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0), and the
/// version's name. The rates are NVIDIA's published per-GPU totals over
/// its link count, halved for one direction: NVLink 1.0 (P100) 160 GB/s
/// over 4 links = 20; 2.0 (V100) 300 GB/s over 6 = 25; 3.0 (A100) 600 over
/// 12 = 25; 4.0 (H100) 900 over 18 = 25; 5.0 (Blackwell) 1.8 TB/s over 18
/// = 50 (NVIDIA's NVLink and NVSwitch page: "18 NVLink 100 GB/s
/// connections for a total bandwidth of 1.8 TB/s", both directions).
/// Older drivers returned the major version itself; values 1 to 4 give
/// the same rate either way.
pub(crate) fn nvlink_rate(version: u32) -> Option<(f64, &'static str)> {
    match version {
        1 => Some((20.0, "1.0")),
        2 => Some((25.0, "2.0")),
        3 => Some((25.0, "2.2")),
        4 => Some((25.0, "3.0")),
        5 => Some((25.0, "3.1")),
        6 => Some((25.0, "4.0")),
        7 => Some((50.0, "5.0")),
        _ => None,
    }
}

/// A path's peak; `peak_mbps` None means unknown and `unknown` says why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuPeak {
    /// The path class the report groups by: `NVLink x2`, `NVSwitch x18`,
    /// `PCIe`, `through the CPU`, `NVLink?`, `PCIe link`.
    pub class: String,
    /// One direction, 10^6 bytes/s.
    pub peak_mbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// The arithmetic from the sources to the peak.
    pub how: String,
    /// Every figure used and where it was read.
    pub sources: Vec<String>,
}

impl GpuPeak {
    pub fn unknown(class: &str, why: String) -> GpuPeak {
        GpuPeak { class: class.into(), peak_mbps: None, unknown: Some(why), how: String::new(), sources: Vec::new() }
    }

    /// A pair's NVLinks that cannot be counted: NVML said `why`.
    pub(crate) fn nvlinks_uncounted(why: &str) -> GpuPeak {
        GpuPeak::unknown("NVLink?", format!("{why}: the NVLink count is not known"))
    }

    /// `value_mbps` as a percentage of the peak.
    pub fn efficiency(&self, value_mbps: f64) -> Option<f64> {
        self.peak_mbps.filter(|p| *p > 0.0).map(|p| 100.0 * value_mbps / p)
    }

    /// `50.00 GB/s`, or `unknown`.
    pub fn rate_text(&self) -> String {
        self.peak_mbps.map_or("unknown".into(), |p| format!("{:.2} GB/s", p / 1e3))
    }
}

/// What is known of one GPU for the peaks.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuEnd {
    pub index: usize,
    pub bus_id: Option<String>,
    /// Its PCIe link, or why it is unknown.
    pub pcie: Result<PcieLink, String>,
}

pub(crate) fn pcie_source(g: &GpuEnd, l: &PcieLink) -> String {
    format!("GPU {}: {}: {} GT/s x{} ({}) = {:.0} MB/s", g.index, l.source, l.gts, l.width, l.encoding, l.mbps)
}

/// Host to GPU or back over the GPU's PCIe link.
pub(crate) fn host_link(g: &GpuEnd) -> GpuPeak {
    match &g.pcie {
        Ok(l) => GpuPeak {
            class: "PCIe link".into(),
            peak_mbps: Some(l.mbps),
            unknown: None,
            how: "the GPU's PCIe link after line encoding, one direction".into(),
            sources: vec![pcie_source(g, l)],
        },
        Err(why) => GpuPeak::unknown("PCIe link", format!("GPU {}: {why}", g.index)),
    }
}

/// The slower of two GPUs' PCIe links, as `class`.
pub(crate) fn slower_pcie(a: &GpuEnd, b: &GpuEnd, class: &str, how: &str) -> GpuPeak {
    match (&a.pcie, &b.pcie) {
        (Ok(la), Ok(lb)) => GpuPeak {
            class: class.into(),
            peak_mbps: Some(la.mbps.min(lb.mbps)),
            unknown: None,
            how: how.into(),
            sources: vec![pcie_source(a, la), pcie_source(b, lb)],
        },
        (Err(why), _) => GpuPeak::unknown(class, format!("GPU {}: {why}", a.index)),
        (_, Err(why)) => GpuPeak::unknown(class, format!("GPU {}: {why}", b.index)),
    }
}

/// Copies between two GPUs without peer access, staged in host memory.
pub(crate) fn through_cpu(a: &GpuEnd, b: &GpuEnd) -> GpuPeak {
    slower_pcie(
        a,
        b,
        "through the CPU",
        "the slower of the two GPUs' PCIe links (the copy crosses both, through host memory)",
    )
}

/// The links of `g` in NVML's answer.
pub(crate) fn links_of<'a>(nvml: &'a [GpuLinks], g: &GpuEnd) -> Option<&'a GpuLinks> {
    let bus = g.bus_id.as_deref()?;
    nvml.iter().find(|l| l.bus_id == bus)
}

/// One NVLink rate for a set of links: all must share a known version.
fn rate_of<'l>(links: impl Iterator<Item = &'l ActiveLink>) -> Result<(f64, &'static str), String> {
    let versions: std::collections::BTreeSet<u32> = links.map(|l| l.version).collect();
    match versions.iter().collect::<Vec<_>>().as_slice() {
        [v] => nvlink_rate(**v).ok_or_else(|| format!("NVLink version value {v} is not in the rate table")),
        [] => Err("no active link".into()),
        _ => Err(format!("the links report different NVLink versions ({versions:?})")),
    }
}

/// A rank's GPU as its end of a path (its buffers are in that GPU's
/// memory): gathered with the rank's record entry, so the record names
/// where every figure came from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSide {
    /// CUDA's index of the GPU in the rank's process.
    pub index: usize,
    pub bus_id: String,
    /// `device` or `managed`.
    pub buffers: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie: Option<PcieLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_unknown: Option<String>,
    /// Its NVLinks that are up, from NVML (empty when it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlinks: Option<Vec<ActiveLink>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlinks_unknown: Option<String>,
}

impl GpuSide {
    /// Reads GPU `index` (`bus_id`): its PCIe link under `sys` and its
    /// NVLinks from NVML.
    pub fn read(index: usize, bus_id: &str, buffers: &str, sys: &std::path::Path) -> GpuSide {
        let (pcie, pcie_unknown) = match pcie::read(sys, bus_id) {
            Ok(l) => (Some(l), None),
            Err(why) => (None, Some(why)),
        };
        let (nvlinks, nvlinks_unknown) = match crate::gpu::nvml::links(&[bus_id.to_string()]) {
            Ok(mut l) => (Some(l.pop().map(|g| g.active).unwrap_or_default()), None),
            Err(why) => (None, Some(why)),
        };
        GpuSide { index, bus_id: bus_id.into(), buffers: buffers.into(), pcie, pcie_unknown, nvlinks, nvlinks_unknown }
    }

    pub fn end(&self) -> GpuEnd {
        let pcie = match (&self.pcie, &self.pcie_unknown) {
            (Some(l), _) => Ok(l.clone()),
            (None, why) => Err(why.clone().unwrap_or_else(|| "no PCIe link".into())),
        };
        GpuEnd { index: self.index, bus_id: Some(self.bus_id.clone()), pcie }
    }

    /// Its links as NVML gave them, or why NVML could not.
    pub fn links(&self) -> Result<GpuLinks, String> {
        match &self.nvlinks {
            Some(active) => Ok(GpuLinks { bus_id: self.bus_id.clone(), active: active.clone() }),
            None => Err(self.nvlinks_unknown.clone().unwrap_or_else(|| "NVML gave no answer".into())),
        }
    }
}

fn nvml_source(g: &GpuEnd, n: usize, to: &str, version: &str) -> String {
    format!(
        "GPU {} ({}): NVML: {n} active NVLinks to {to}, version {version}",
        g.index,
        g.bus_id.as_deref().unwrap_or("?")
    )
}

/// The NVLinks from `a` (whose links are `la`) to `b` (`lb`): its direct
/// links to `b` (`NVLink xN`), else, when `switched` may be trusted (the
/// driver says the pair has native atomics, or nothing says otherwise),
/// the fewer of the two GPUs' links to NVLink devices that are not GPUs
/// (`NVSwitch xN`). None when NVML shows neither.
pub(crate) fn nvlink_between(a: &GpuEnd, b: &GpuEnd, la: &GpuLinks, lb: &GpuLinks, switched: bool) -> Option<GpuPeak> {
    let direct: Vec<_> = la.active.iter().filter(|l| Some(l.remote_bus_id.as_str()) == b.bus_id.as_deref()).collect();
    let switched_a: Vec<_> = la.active.iter().filter(|l| !l.remote_is_gpu).collect();
    let switched_b: Vec<_> = lb.active.iter().filter(|l| !l.remote_is_gpu).collect();
    if !direct.is_empty() {
        let n = direct.len();
        return Some(match rate_of(direct.iter().copied()) {
            Ok((rate, name)) => GpuPeak {
                class: format!("NVLink x{n}"),
                peak_mbps: Some(n as f64 * rate * 1e3),
                unknown: None,
                how: format!("{n} links x {rate} GB/s per link and direction (NVLink {name})"),
                sources: vec![nvml_source(a, n, &format!("GPU {}", b.index), name)],
            },
            Err(why) => GpuPeak::unknown(&format!("NVLink x{n}"), why),
        });
    }
    if switched_a.is_empty() || switched_b.is_empty() || !switched {
        return None;
    }
    let n = switched_a.len().min(switched_b.len());
    Some(match rate_of(switched_a.iter().chain(&switched_b).copied()) {
        Ok((rate, name)) => GpuPeak {
            class: format!("NVSwitch x{n}"),
            peak_mbps: Some(n as f64 * rate * 1e3),
            unknown: None,
            how: format!(
                "the fewer of the two GPUs' links to NVLink devices that are not GPUs (NVSwitches), {n} x {rate} GB/s \
                 per link and direction (NVLink {name})"
            ),
            sources: vec![
                nvml_source(a, switched_a.len(), "NVLink devices that are not GPUs", name),
                nvml_source(b, switched_b.len(), "NVLink devices that are not GPUs", name),
            ],
        },
        Err(why) => GpuPeak::unknown(&format!("NVSwitch x{n}"), why),
    })
}

/// What GPU `g` (links `links`) can send into a collective over the other
/// GPUs `peers` (bus ids) of its host, one direction: its NVLinks to those
/// GPUs plus its links to NVSwitches, all at once (NCCL spreads a
/// collective over every link it has); None when it has no such link, and
/// then its traffic leaves over PCIe.
pub(crate) fn nvlink_aggregate(g: &GpuEnd, links: &GpuLinks, peers: &[&str]) -> Option<GpuPeak> {
    let to_peers: Vec<&ActiveLink> =
        links.active.iter().filter(|l| peers.contains(&l.remote_bus_id.as_str())).collect();
    let switched: Vec<&ActiveLink> = links.active.iter().filter(|l| !l.remote_is_gpu).collect();
    let used: Vec<&ActiveLink> =
        if peers.is_empty() { Vec::new() } else { [to_peers.clone(), switched.clone()].concat() };
    if used.is_empty() {
        return None;
    }
    let n = used.len();
    let class = if switched.is_empty() { format!("NVLink x{n}") } else { format!("NVSwitch x{n}") };
    Some(match rate_of(used.iter().copied()) {
        Ok((rate, name)) => {
            let mut sources = Vec::new();
            if !to_peers.is_empty() {
                sources.push(nvml_source(g, to_peers.len(), "the job's other GPUs on its host", name));
            }
            if !switched.is_empty() {
                sources.push(nvml_source(g, switched.len(), "NVLink devices that are not GPUs", name));
            }
            GpuPeak {
                class,
                peak_mbps: Some(n as f64 * rate * 1e3),
                unknown: None,
                how: format!(
                    "GPU {}'s {n} NVLinks to the job's other GPUs (or NVSwitches) together, x {rate} GB/s per link and \
                     direction (NVLink {name})",
                    g.index
                ),
                sources,
            }
        }
        Err(why) => GpuPeak::unknown(&class, why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_by_nvlink_version() {
        assert_eq!(nvlink_rate(1), Some((20.0, "1.0")));
        assert_eq!(nvlink_rate(2).map(|r| r.0), Some(25.0));
        assert_eq!(nvlink_rate(6), Some((25.0, "4.0")));
        assert_eq!(nvlink_rate(7), Some((50.0, "5.0")));
        assert_eq!(nvlink_rate(0), None);
        assert_eq!(nvlink_rate(8), None);
    }

    fn end(i: usize) -> GpuEnd {
        GpuEnd { index: i, bus_id: Some(format!("0000:0{i}:00.0")), pcie: Err("none".into()) }
    }

    fn links(i: usize, to: &[(usize, u32)], switches: u32) -> GpuLinks {
        let mut active = Vec::new();
        for &(j, n) in to {
            for _ in 0..n {
                let remote_bus_id = format!("0000:0{j}:00.0");
                active.push(ActiveLink { link: active.len() as u32, version: 2, remote_bus_id, remote_is_gpu: true });
            }
        }
        for _ in 0..switches {
            let remote_bus_id = "0000:f0:00.0".to_string();
            active.push(ActiveLink { link: active.len() as u32, version: 6, remote_bus_id, remote_is_gpu: false });
        }
        GpuLinks { bus_id: format!("0000:0{i}:00.0"), active }
    }

    #[test]
    fn a_gpu_s_links_to_the_job_s_other_gpus_together() {
        // DGX-1's GPU 0: two links to 3, one each to 1, 2 and 4.
        let l0 = links(0, &[(3, 2), (1, 1), (2, 1), (4, 1)], 0);
        let peers = ["0000:03:00.0", "0000:02:00.0", "0000:01:00.0"];
        let p = nvlink_aggregate(&end(0), &l0, &peers).unwrap();
        assert_eq!((p.class.as_str(), p.peak_mbps), ("NVLink x4", Some(100_000.0)));
        assert_eq!(
            p.sources,
            vec!["GPU 0 (0000:00:00.0): NVML: 4 active NVLinks to the job's other GPUs on its host, version 2.0"]
        );
        // GPU 5 is not linked to GPU 0: its traffic leaves over PCIe.
        assert_eq!(nvlink_aggregate(&end(0), &l0, &["0000:05:00.0"]), None);
        assert_eq!(nvlink_aggregate(&end(0), &l0, &[]), None);
        // An NVSwitch box: every switch link, whichever GPUs are peers.
        let s = links(0, &[], 18);
        let p = nvlink_aggregate(&end(0), &s, &["0000:01:00.0"]).unwrap();
        assert_eq!((p.class.as_str(), p.peak_mbps), ("NVSwitch x18", Some(450_000.0)));
        assert_eq!(nvlink_aggregate(&end(0), &s, &[]), None);
        // Direct links between two GPUs, and switches only when trusted.
        let l3 = links(3, &[(0, 2)], 0);
        assert_eq!(nvlink_between(&end(0), &end(3), &l0, &l3, true).unwrap().class, "NVLink x2");
        assert_eq!(nvlink_between(&end(0), &end(5), &l0, &links(5, &[], 0), true), None);
        let s1 = links(1, &[], 12);
        assert_eq!(nvlink_between(&end(0), &end(1), &s, &s1, true).unwrap().class, "NVSwitch x12");
        assert_eq!(nvlink_between(&end(0), &end(1), &s, &s1, false), None);
    }
}
