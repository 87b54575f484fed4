//! What lies under every GPU copy front end's figures, gathered once per
//! run: each opened GPU's facts (name, bus id, NUMA node, PCI path:
//! hwloc or a described machine, else sysfs, else the driver), each
//! ordered pair's path with its peak (NVLinks from NVML, PCIe links from
//! sysfs, else through the CPU), and each GPU's own PCIe link as the peak
//! between it and host memory. `commbench gpu-bw`, `bandwidthTest`,
//! `p2pBandwidthLatencyTest` and `nvbandwidth` all judge their cells
//! through [`Survey::peak`].

use serde::Serialize;

use super::driver::Device;
use super::peaks::{self, GpuEnd, GpuPeak};
use super::topology::{self, GpuFacts, PairPath, PeerAttributes};
use crate::topo::machine::Machine;

/// One GPU's PCIe link as the host<->GPU peak.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct HostLink {
    pub gpu: usize,
    pub peak: GpuPeak,
}

/// The paths between the GPUs and to host memory, as the run records
/// keep them.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Paths {
    /// Every ordered pair of GPUs, with its peak.
    pub pairs: Vec<PairPath>,
    /// Each GPU's PCIe link (host<->GPU peak).
    pub host_links: Vec<HostLink>,
    /// Why NVML could not count NVLinks, where it could not.
    pub nvml_unknown: Option<String>,
}

/// The GPUs and their paths.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Survey {
    /// The opened GPUs.
    pub gpus: Vec<GpuFacts>,
    #[serde(flatten)]
    pub paths: Paths,
    /// Each GPU's end for the peaks (PCIe link or why unknown).
    #[serde(skip)]
    ends: Vec<GpuEnd>,
}

/// Where a copy's bytes start or land.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Host,
    Gpu(usize),
}

impl Survey {
    /// Surveys the opened `devices`; the locality from `described` when
    /// given, else from hwloc (and sysfs).
    pub fn of(devices: &[Device], described: Option<Machine>) -> Survey {
        let gpus = gpu_facts(devices, described);
        let pairs = topology::pair_paths(&gpus, |s, d| peer_attributes(devices, s, d));
        let mut s = Survey { gpus, paths: Paths { pairs, ..Paths::default() }, ends: Vec::new() };
        s.path_peaks();
        s
    }

    /// Each GPU's PCIe link (sysfs) and each pair's peak (NVML for NVLinks).
    fn path_peaks(&mut self) {
        let root = peaks::sysfs_root();
        self.ends = self
            .gpus
            .iter()
            .map(|g| GpuEnd {
                index: g.index,
                bus_id: g.pci_bus_id.clone(),
                pcie: match &g.pci_bus_id {
                    Some(id) => crate::peak::pcie::read(&root, id),
                    None => Err("the driver gave no PCI bus id".into()),
                },
            })
            .collect();
        let nvml = if self.paths.pairs.iter().any(|p| p.attributes.can_access_peer == Some(true)) {
            match self.ends.iter().map(|e| e.bus_id.clone()).collect::<Option<Vec<String>>>() {
                Some(ids) => crate::gpu::nvml::links(&ids),
                None => Err("a GPU has no PCI bus id to ask NVML about".into()),
            }
        } else {
            Err("no pair has peer access".into())
        };
        self.paths.nvml_unknown = nvml.as_ref().err().cloned();
        self.paths.host_links =
            self.ends.iter().map(|e| HostLink { gpu: e.index, peak: peaks::host_link(e) }).collect();
        for p in &mut self.paths.pairs {
            let (Some(a), Some(b)) =
                (self.ends.iter().find(|e| e.index == p.src), self.ends.iter().find(|e| e.index == p.dst))
            else {
                continue;
            };
            p.peak = Some(peaks::pair_peak(p, a, b, &nvml));
        }
    }

    /// A survey of nothing but `paths` (tests).
    #[cfg(test)]
    pub(crate) fn of_paths(paths: Paths) -> Survey {
        Survey { gpus: Vec::new(), paths, ends: Vec::new() }
    }

    /// The peak between GPU `g` and host memory (its PCIe link).
    pub fn host_peak(&self, g: usize) -> Option<GpuPeak> {
        self.paths.host_links.iter().find(|h| h.gpu == g).map(|h| h.peak.clone())
    }

    /// The path and peak (one direction) of a copy `from` -> `to`:
    /// between host and a GPU its PCIe link; between two GPUs the pair's
    /// path, or through the CPU where `peer` says peer access was off.
    /// None within one GPU (its memory's peak is not known here) and for
    /// a GPU this run did not open.
    pub fn peak(&self, from: End, to: End, peer: Option<bool>) -> Option<GpuPeak> {
        match (from, to) {
            (End::Host, End::Gpu(g)) | (End::Gpu(g), End::Host) => self.host_peak(g),
            (End::Gpu(a), End::Gpu(b)) if a != b => {
                if peer == Some(false) {
                    let (ea, eb) = (self.ends.iter().find(|e| e.index == a)?, self.ends.iter().find(|e| e.index == b)?);
                    return Some(crate::peak::gpu::through_cpu(ea, eb));
                }
                self.paths.pairs.iter().find(|p| (p.src, p.dst) == (a, b)).and_then(|p| p.peak.clone())
            }
            _ => None,
        }
    }
}

/// Names, bus ids, memory and locality of the opened GPUs; the locality
/// from `described` when given, else from hwloc (and sysfs).
fn gpu_facts(devices: &[Device], described: Option<Machine>) -> Vec<GpuFacts> {
    let mut gpus: Vec<GpuFacts> = devices
        .iter()
        .map(|d| GpuFacts {
            index: d.ordinal,
            name: d.name(),
            pci_bus_id: d.pci_bus_id().and_then(|id| crate::gpu::bus_id::normalize(&id)),
            numa_node: None,
            package: None,
            memory_bytes: d.total_memory(),
            pci_path: Vec::new(),
        })
        .collect();
    let machine = described.or_else(|| crate::topo::hwloc::discover().ok());
    topology::locate(&mut gpus, machine.as_ref());
    // Where neither hwloc nor sysfs knows the device, the driver may.
    for (g, d) in gpus.iter_mut().zip(devices) {
        g.numa_node = g.numa_node.or_else(|| d.host_numa_id());
    }
    gpus
}

/// What the driver says about source -> destination (CUDA ordinals).
fn peer_attributes(devices: &[Device], src: usize, dst: usize) -> PeerAttributes {
    use cudarc::driver::sys::CUdevice_P2PAttribute as Attr;
    let find = |o: usize| devices.iter().find(|d| d.ordinal == o);
    let (Some(s), Some(d)) = (find(src), find(dst)) else { return PeerAttributes::default() };
    let flag = |a: Attr| s.p2p_attribute(d, a).map(|v| v != 0);
    PeerAttributes {
        can_access_peer: s.can_access_peer(d),
        access_supported: flag(Attr::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED),
        native_atomics: flag(Attr::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED),
        performance_rank: s.p2p_attribute(d, Attr::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK),
    }
}
