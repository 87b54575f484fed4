//! The peak of each path gpu-bw measures, from the machine and never from a
//! product name: a GPU's PCIe link from sysfs (host to GPU and back), the
//! NVLinks between two GPUs from NVML (their count times the per-link rate
//! of their version), and for GPUs without peer access the host memory
//! they go through (the slower of their two PCIe links). Where a figure
//! cannot be known the peak is unknown and says why. Pure: the caller reads
//! sysfs ([`sysfs_root`]) and NVML (`crate::gpu::nvml`).

use std::path::PathBuf;

use serde::Serialize;

use super::topology::PairPath;
use crate::gpu::nvml::GpuLinks;
use crate::peak::pcie::PcieLink;

/// The sysfs tree PCIe links are read from: `COMMBENCH_SYSFS_ROOT` (a
/// fixture tree, for tests or a copy taken from another node), else `/sys`.
pub fn sysfs_root() -> PathBuf {
    std::env::var_os("COMMBENCH_SYSFS_ROOT").filter(|v| !v.is_empty()).map_or_else(|| "/sys".into(), PathBuf::from)
}

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
pub fn nvlink_rate(version: u32) -> Option<(f64, &'static str)> {
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
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    fn unknown(class: &str, why: String) -> GpuPeak {
        GpuPeak { class: class.into(), peak_mbps: None, unknown: Some(why), how: String::new(), sources: Vec::new() }
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

fn pcie_source(g: &GpuEnd, l: &PcieLink) -> String {
    format!("GPU {}: {}: {} GT/s x{} ({}) = {:.0} MB/s", g.index, l.source, l.gts, l.width, l.encoding, l.mbps)
}

/// Host to GPU or back over the GPU's PCIe link.
pub fn host_link(g: &GpuEnd) -> GpuPeak {
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
fn slower_pcie(a: &GpuEnd, b: &GpuEnd, class: &str, how: &str) -> GpuPeak {
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
pub fn through_cpu(a: &GpuEnd, b: &GpuEnd) -> GpuPeak {
    slower_pcie(
        a,
        b,
        "through the CPU",
        "the slower of the two GPUs' PCIe links (the copy crosses both, through host memory)",
    )
}

/// The links of `g` in NVML's answer.
fn links_of<'a>(nvml: &'a [GpuLinks], g: &GpuEnd) -> Option<&'a GpuLinks> {
    let bus = g.bus_id.as_deref()?;
    nvml.iter().find(|l| l.bus_id == bus)
}

/// One NVLink rate for a set of links: all must share a known version.
fn rate_of<'l>(links: impl Iterator<Item = &'l crate::gpu::nvml::ActiveLink>) -> Result<(f64, &'static str), String> {
    let versions: std::collections::BTreeSet<u32> = links.map(|l| l.version).collect();
    match versions.iter().collect::<Vec<_>>().as_slice() {
        [v] => nvlink_rate(**v).ok_or_else(|| format!("NVLink version value {v} is not in the rate table")),
        [] => Err("no active link".into()),
        _ => Err(format!("the links report different NVLink versions ({versions:?})")),
    }
}

/// The path of `pair` (source `a`, destination `b`): NVLinks counted from
/// `nvml` (Err: why NVML could not tell), else PCIe peers, else through
/// the CPU.
pub fn pair_peak(pair: &PairPath, a: &GpuEnd, b: &GpuEnd, nvml: &Result<Vec<GpuLinks>, String>) -> GpuPeak {
    let attrs = &pair.attributes;
    if attrs.can_access_peer != Some(true) {
        return through_cpu(a, b);
    }
    let (la, lb) = match nvml {
        Ok(all) => (links_of(all, a), links_of(all, b)),
        Err(why) => {
            if attrs.native_atomics == Some(true) {
                return GpuPeak::unknown("NVLink?", format!("{why}: the NVLink count is not known"));
            }
            return slower_pcie(a, b, "PCIe", "peers over PCIe: the slower of the two GPUs' PCIe links");
        }
    };
    let (Some(la), Some(lb)) = (la, lb) else {
        let why = "NVML has no links for a GPU without a PCI bus id".to_string();
        return GpuPeak::unknown("NVLink?", why);
    };
    let direct: Vec<_> = la.active.iter().filter(|l| Some(l.remote_bus_id.as_str()) == b.bus_id.as_deref()).collect();
    let switched_a: Vec<_> = la.active.iter().filter(|l| !l.remote_is_gpu).collect();
    let switched_b: Vec<_> = lb.active.iter().filter(|l| !l.remote_is_gpu).collect();
    let source = |g: &GpuEnd, n: usize, to: &str, v: &str| {
        format!(
            "GPU {} ({}): NVML: {n} active NVLinks to {to}, version {v}",
            g.index,
            g.bus_id.as_deref().unwrap_or("?")
        )
    };
    if !direct.is_empty() {
        return match rate_of(direct.iter().copied()) {
            Ok((rate, name)) => {
                let n = direct.len();
                GpuPeak {
                    class: format!("NVLink x{n}"),
                    peak_mbps: Some(n as f64 * rate * 1e3),
                    unknown: None,
                    how: format!("{n} links x {rate} GB/s per link and direction (NVLink {name})"),
                    sources: vec![source(a, n, &format!("GPU {}", b.index), name)],
                }
            }
            Err(why) => GpuPeak::unknown(&format!("NVLink x{}", direct.len()), why),
        };
    }
    if !switched_a.is_empty() && !switched_b.is_empty() && attrs.native_atomics == Some(true) {
        let n = switched_a.len().min(switched_b.len());
        return match rate_of(switched_a.iter().chain(&switched_b).copied()) {
            Ok((rate, name)) => GpuPeak {
                class: format!("NVSwitch x{n}"),
                peak_mbps: Some(n as f64 * rate * 1e3),
                unknown: None,
                how: format!(
                    "the fewer of the two GPUs' links to NVLink devices that are not GPUs (NVSwitches), {n} x {rate} GB/s \
                     per link and direction (NVLink {name})"
                ),
                sources: vec![
                    source(a, switched_a.len(), "NVLink devices that are not GPUs", name),
                    source(b, switched_b.len(), "NVLink devices that are not GPUs", name),
                ],
            },
            Err(why) => GpuPeak::unknown(&format!("NVSwitch x{n}"), why),
        };
    }
    slower_pcie(
        a,
        b,
        "PCIe",
        "peers over PCIe (no NVLink between them in NVML): the slower of the two GPUs' PCIe links",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvml::ActiveLink;
    use crate::gpu_bw::topology::{PciRelation, PeerAttributes};
    use crate::topo::describe::{self, GpuLinkKind, GpuModel};

    /// tests/machines/`name`.json: its GPUs' bus ids and its GPU model.
    fn described(name: &str) -> (Vec<String>, GpuModel) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machines").join(format!("{name}.json"));
        let m = describe::load(&path).unwrap();
        (m.gpus.iter().map(|g| g.pci_bus_id.clone()).collect(), describe::load_gpu_model(&path).unwrap())
    }

    fn gen(gts: &str, width: &str, i: usize) -> Result<PcieLink, String> {
        crate::peak::pcie::link(gts, width, format!("/sys/bus/pci/devices/gpu{i}/current_link_{{speed,width}}"))
    }

    fn ends(buses: &[String], gts: &str) -> Vec<GpuEnd> {
        buses
            .iter()
            .enumerate()
            .map(|(i, b)| GpuEnd { index: i, bus_id: Some(b.clone()), pcie: gen(gts, "16", i) })
            .collect()
    }

    /// What NVML would answer for the described links: NVLink pairs as
    /// links to the other GPU, NVSwitch boxes as every link to a switch.
    fn nvml(buses: &[String], model: &GpuModel) -> Vec<GpuLinks> {
        let version = match model.nvlink_version.unwrap_or(2) {
            1 => 1,
            2 => 2,
            3 => 4,
            4 => 6,
            _ => 7,
        };
        let link = |n: u32, remote: &str, gpu: bool| ActiveLink {
            link: n,
            version,
            remote_bus_id: remote.to_string(),
            remote_is_gpu: gpu,
        };
        buses
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut active = Vec::new();
                for l in model.links.iter().filter(|l| l.a == i || l.b == i) {
                    let GpuLinkKind::NvLink(n) = l.kind else { continue };
                    if model.nvswitch {
                        if active.is_empty() {
                            active = (0..n).map(|k| link(k, "0000:f0:00.0", false)).collect();
                        }
                        continue;
                    }
                    let other = if l.a == i { l.b } else { l.a };
                    for _ in 0..n {
                        active.push(link(active.len() as u32, &buses[other], true));
                    }
                }
                GpuLinks { bus_id: b.clone(), active }
            })
            .collect()
    }

    fn pairs(n: usize, model: &GpuModel) -> Vec<PairPath> {
        let mut out = Vec::new();
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                let kind = model.links.iter().find(|l| (l.a, l.b) == (a.min(b), a.max(b))).map(|l| l.kind);
                let attributes = PeerAttributes {
                    can_access_peer: Some(kind.is_some()),
                    access_supported: Some(kind.is_some()),
                    native_atomics: Some(matches!(kind, Some(GpuLinkKind::NvLink(_)))),
                    performance_rank: Some(0),
                };
                out.push(PairPath {
                    src: a,
                    dst: b,
                    attributes,
                    pci: PciRelation::Unknown,
                    label: String::new(),
                    peak: None,
                });
            }
        }
        out
    }

    fn peak_of(ps: &[PairPath], e: &[GpuEnd], nv: &Result<Vec<GpuLinks>, String>, a: usize, b: usize) -> GpuPeak {
        let p = ps.iter().find(|p| (p.src, p.dst) == (a, b)).unwrap();
        pair_peak(p, &e[a], &e[b], nv)
    }

    #[test]
    fn rates_by_nvlink_version() {
        assert_eq!(nvlink_rate(1), Some((20.0, "1.0")));
        assert_eq!(nvlink_rate(2).map(|r| r.0), Some(25.0));
        assert_eq!(nvlink_rate(6), Some((25.0, "4.0")));
        assert_eq!(nvlink_rate(7), Some((50.0, "5.0")));
        assert_eq!(nvlink_rate(0), None);
        assert_eq!(nvlink_rate(8), None);
    }

    #[test]
    fn dgx1_cube_mesh() {
        let (buses, model) = described("dgx1");
        let e = ends(&buses, "8.0 GT/s PCIe");
        let ps = pairs(buses.len(), &model);
        let nv = Ok(nvml(&buses, &model));
        let two = peak_of(&ps, &e, &nv, 0, 3);
        assert_eq!((two.class.as_str(), two.peak_mbps), ("NVLink x2", Some(50_000.0)));
        assert_eq!(two.how, "2 links x 25 GB/s per link and direction (NVLink 2.0)");
        assert_eq!(two.sources, vec![format!("GPU 0 ({}): NVML: 2 active NVLinks to GPU 3, version 2.0", buses[0])]);
        let one = peak_of(&ps, &e, &nv, 1, 0);
        assert_eq!((one.class.as_str(), one.peak_mbps), ("NVLink x1", Some(25_000.0)));
        assert_eq!(two.efficiency(45_500.0), Some(91.0));
        // The diagonals have no peer access: through host memory, at the
        // slower PCIe link (gen3 x16, 15.75 GB/s).
        let cpu = peak_of(&ps, &e, &nv, 0, 5);
        assert_eq!(cpu.class, "through the CPU");
        assert_eq!(cpu.peak_mbps.map(|p| p.round()), Some(15_754.0));
        assert_eq!(cpu.sources.len(), 2);
        let mut slow = e.clone();
        slow[5].pcie = gen("8.0 GT/s PCIe", "8", 5);
        assert_eq!(peak_of(&ps, &slow, &nv, 0, 5).peak_mbps.map(|p| p.round()), Some(7877.0));
        // Without NVML the count is unknown, and says why; the diagonals
        // still go through the CPU.
        let none: Result<Vec<GpuLinks>, String> = Err("NVML not found (libnvidia-ml.so.1: cannot open)".into());
        let u = peak_of(&ps, &e, &none, 0, 3);
        assert_eq!((u.class.as_str(), u.peak_mbps), ("NVLink?", None));
        assert_eq!(
            u.unknown.as_deref(),
            Some("NVML not found (libnvidia-ml.so.1: cannot open): the NVLink count is not known")
        );
        assert_eq!(peak_of(&ps, &e, &none, 0, 5).class, "through the CPU");
        // A GPU without a PCIe link makes its paths through the CPU unknown.
        let mut down = e.clone();
        down[5].pcie = gen("8.0 GT/s PCIe", "0", 5);
        let d = peak_of(&ps, &down, &nv, 0, 5);
        assert_eq!(d.peak_mbps, None);
        assert!(d.unknown.as_deref().unwrap().starts_with("GPU 5: "), "{d:?}");
        assert!(d.unknown.as_deref().unwrap().ends_with("link width '0' (the link is down)"), "{d:?}");
        assert_eq!(host_link(&down[5]).rate_text(), "unknown");
        assert_eq!(host_link(&e[0]).rate_text(), "15.75 GB/s");
    }

    #[test]
    fn dgx_h100_through_nvswitch() {
        let (buses, model) = described("dgx-h100");
        assert!(model.nvswitch);
        let e = ends(&buses, "32.0 GT/s PCIe");
        let ps = pairs(buses.len(), &model);
        let nv = Ok(nvml(&buses, &model));
        for (a, b) in [(0, 1), (7, 2), (3, 4)] {
            let p = peak_of(&ps, &e, &nv, a, b);
            assert_eq!((p.class.as_str(), p.peak_mbps), ("NVSwitch x18", Some(450_000.0)), "{a} -> {b}");
            assert!(p.how.contains("18 x 25 GB/s per link and direction (NVLink 4.0)"), "{}", p.how);
        }
        assert_eq!(host_link(&e[0]).peak_mbps.map(|p| p.round()), Some(63_015.0));
    }

    #[test]
    fn pcie_peers_and_odd_answers() {
        let (buses, mut model) = described("dgx1");
        // Pretend 0-5 are PCIe peers.
        model.links.push(describe::GpuLink { a: 0, b: 5, kind: GpuLinkKind::Pcie });
        let e = ends(&buses, "8.0 GT/s PCIe");
        let ps = pairs(buses.len(), &model);
        let nv = Ok(nvml(&buses, &model));
        let p = peak_of(&ps, &e, &nv, 0, 5);
        assert_eq!(p.class, "PCIe");
        assert_eq!(p.peak_mbps.map(|p| p.round()), Some(15_754.0));
        // Without NVML, peers without native atomics are PCIe peers too.
        assert_eq!(peak_of(&ps, &e, &Err("x".into()), 0, 5).class, "PCIe");
        // A version outside the table makes the NVLink peak unknown.
        let mut odd = nvml(&buses, &model);
        odd[0].active.iter_mut().for_each(|l| l.version = 9);
        let u = peak_of(&ps, &e, &Ok(odd), 0, 3);
        assert_eq!((u.class.as_str(), u.peak_mbps), ("NVLink x2", None));
        assert_eq!(u.unknown.as_deref(), Some("NVLink version value 9 is not in the rate table"));
    }
}
