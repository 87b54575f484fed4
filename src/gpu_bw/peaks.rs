//! gpu-bw's pairs against their paths' peaks (`crate::peak::gpu`): the
//! driver's peer attributes say whether a pair copies peer to peer at all
//! (else through the CPU) and whether NVML's links to NVSwitches may be
//! trusted for it (native atomics); NVML then counts the links.

use super::topology::PairPath;
use crate::gpu::nvml::GpuLinks;
pub(crate) use crate::peak::gpu::{host_link, GpuEnd, GpuPeak};
use crate::peak::gpu::{links_of, nvlink_between, slower_pcie, through_cpu};
pub(crate) use crate::peak::pcie::sysfs_root;

/// The path of `pair` (source `a`, destination `b`): NVLinks counted from
/// `nvml` (Err: why NVML could not tell), else PCIe peers, else through
/// the CPU.
pub(crate) fn pair_peak(pair: &PairPath, a: &GpuEnd, b: &GpuEnd, nvml: &Result<Vec<GpuLinks>, String>) -> GpuPeak {
    let attrs = &pair.attributes;
    if attrs.can_access_peer != Some(true) {
        return through_cpu(a, b);
    }
    let (la, lb) = match nvml {
        Ok(all) => (links_of(all, a), links_of(all, b)),
        Err(why) => {
            if attrs.native_atomics == Some(true) {
                return GpuPeak::nvlinks_uncounted(why);
            }
            return slower_pcie(a, b, "PCIe", "peers over PCIe: the slower of the two GPUs' PCIe links");
        }
    };
    let (Some(la), Some(lb)) = (la, lb) else {
        let why = "NVML has no links for a GPU without a PCI bus id".to_string();
        return GpuPeak::unknown("NVLink?", why);
    };
    if let Some(peak) = nvlink_between(a, b, la, lb, attrs.native_atomics == Some(true)) {
        return peak;
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
    use crate::peak::pcie::PcieLink;
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
