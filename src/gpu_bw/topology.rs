//! Where each GPU sits and what lies between two of them: the facts the
//! CUDA driver gives per pair (peer access, native atomics, performance
//! rank) and where the GPUs are in the PCI tree, NUMA nodes and sockets
//! (hwloc, else sysfs). From those, a label per pair that claims only what
//! the facts show. The labelling is pure; gathering reads the machine.

use std::path::Path;

use serde::Serialize;

use crate::topo::machine::{pci_closeness, Machine};

/// One GPU as the record and the report show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuFacts {
    /// CUDA device ordinal (after CUDA_VISIBLE_DEVICES).
    pub index: usize,
    pub name: String,
    /// `dddd:bb:dd.f`, lower-case hex, as sysfs writes it.
    pub pci_bus_id: Option<String>,
    pub numa_node: Option<usize>,
    /// Socket (hwloc package), when hwloc knows the GPU's cpus.
    pub package: Option<usize>,
    pub memory_bytes: Option<u64>,
    /// Bridges from the host bridge down to the GPU (not the GPU itself);
    /// empty when unknown.
    pub pci_path: Vec<String>,
}

/// What `cuDeviceGetP2PAttribute` and `cuDeviceCanAccessPeer` say about
/// source -> destination; None where the driver gave no answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PeerAttributes {
    pub can_access_peer: Option<bool>,
    pub access_supported: Option<bool>,
    pub native_atomics: Option<bool>,
    pub performance_rank: Option<i32>,
}

/// How two GPUs meet, from the PCI tree, NUMA nodes and sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PciRelation {
    /// They share a PCIe bridge below the host bridge (a switch).
    SameSwitch,
    /// They meet at one host bridge (root complex), on different ports.
    SameHostBridge,
    /// Different host bridges on the same NUMA node and socket (as far as
    /// known).
    AcrossHostBridges,
    /// Different NUMA nodes of one socket (or the socket is unknown).
    AcrossNumaNodes,
    /// Different sockets.
    AcrossSockets,
    /// Not enough facts.
    Unknown,
}

impl PciRelation {
    pub fn text(self) -> &'static str {
        match self {
            PciRelation::SameSwitch => "PCIe same switch",
            PciRelation::SameHostBridge => "PCIe same host bridge",
            PciRelation::AcrossHostBridges => "PCIe across host bridges",
            PciRelation::AcrossNumaNodes => "across NUMA nodes",
            PciRelation::AcrossSockets => "across sockets",
            PciRelation::Unknown => "unknown",
        }
    }
}

/// One ordered pair of GPUs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairPath {
    pub src: usize,
    pub dst: usize,
    pub attributes: PeerAttributes,
    pub pci: PciRelation,
    /// The short label printed and recorded.
    pub label: String,
    /// The path's peak one way, with its sources (filled in once sysfs
    /// and NVML were read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak: Option<super::peaks::GpuPeak>,
}

/// How `a` and `b` meet. A shared bridge wins over everything else (the
/// PCI tree is the most direct fact); then different sockets, different
/// NUMA nodes, and different host bridges.
pub(crate) fn relation(a: &GpuFacts, b: &GpuFacts) -> PciRelation {
    let paths_known = !a.pci_path.is_empty() && !b.pci_path.is_empty();
    let shared = if paths_known { pci_closeness(&a.pci_path, &b.pci_path) } else { 0 };
    let differ = |x: Option<usize>, y: Option<usize>| matches!((x, y), (Some(x), Some(y)) if x != y);
    match shared {
        2.. => PciRelation::SameSwitch,
        1 => PciRelation::SameHostBridge,
        _ if differ(a.package, b.package) => PciRelation::AcrossSockets,
        _ if differ(a.numa_node, b.numa_node) => PciRelation::AcrossNumaNodes,
        _ if paths_known => PciRelation::AcrossHostBridges,
        _ => PciRelation::Unknown,
    }
}

/// The label of a pair. Native atomics between two GPUs are what an NVLink
/// (or NVSwitch) connection offers and PCIe peer traffic does not, but the
/// driver API never names the link, hence the question mark.
pub fn label(attrs: &PeerAttributes, pci: PciRelation) -> String {
    if attrs.native_atomics == Some(true) {
        "NVLink?".to_string()
    } else {
        pci.text().to_string()
    }
}

/// The bridges above a PCI device from its resolved sysfs path
/// (`/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0`):
/// the host bridge (`pci0000:3a`) and each bridge below it, without the
/// device itself. Empty when the path does not look like one.
pub(crate) fn pci_path_from_sysfs(real: &Path) -> Vec<String> {
    let parts: Vec<String> = real.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let Some(top) = parts.iter().position(|p| p.starts_with("pci")) else { return Vec::new() };
    let mut path = parts[top..].to_vec();
    if path.len() < 2 {
        return Vec::new();
    }
    path.pop();
    path
}

/// Fills NUMA node, socket and PCI path of each GPU: from hwloc's map
/// when it has the GPU's bus id, else from sysfs.
pub fn locate(gpus: &mut [GpuFacts], machine: Option<&Machine>) {
    for g in gpus {
        let Some(id) = g.pci_bus_id.clone() else { continue };
        let found = machine.and_then(|m| m.gpus.iter().find(|x| x.pci_bus_id == id).map(|x| (m, x)));
        if let Some((m, x)) = found {
            g.numa_node = x.numa;
            g.pci_path = x.pci_path.clone();
            g.package = x.cpus.first().and_then(|&pu| m.core_of_pu(pu)).map(|c| c.package);
            continue;
        }
        let dev = Path::new("/sys/bus/pci/devices").join(&id);
        g.numa_node = std::fs::read_to_string(dev.join("numa_node")).ok().and_then(|s| s.trim().parse::<usize>().ok());
        g.pci_path = std::fs::canonicalize(&dev).map(|p| pci_path_from_sysfs(&p)).unwrap_or_default();
    }
}

/// The path of every ordered pair of `gpus`, with the driver's attributes
/// from `attrs(src, dst)`.
pub(crate) fn pair_paths(gpus: &[GpuFacts], attrs: impl Fn(usize, usize) -> PeerAttributes) -> Vec<PairPath> {
    let mut out = Vec::new();
    for a in gpus {
        for b in gpus.iter().filter(|b| b.index != a.index) {
            let attributes = attrs(a.index, b.index);
            let pci = relation(a, b);
            out.push(PairPath {
                src: a.index,
                dst: b.index,
                attributes,
                pci,
                label: label(&attributes, pci),
                peak: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: usize, path: &[&str], numa: Option<usize>, package: Option<usize>) -> GpuFacts {
        GpuFacts {
            index,
            name: "GPU".into(),
            pci_bus_id: None,
            numa_node: numa,
            package,
            memory_bytes: None,
            pci_path: path.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn relations_from_the_pci_tree_numa_and_sockets() {
        let sw_a = gpu(0, &["pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:08.0"], Some(0), Some(0));
        let sw_b = gpu(1, &["pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:10.0"], Some(0), Some(0));
        let port = gpu(2, &["pci0000:00", "0000:00:03.0"], Some(0), Some(0));
        let other_rc = gpu(3, &["pci0000:20", "0000:20:01.0"], Some(0), Some(0));
        let other_numa = gpu(4, &["pci0000:40", "0000:40:01.0"], Some(1), Some(0));
        let other_socket = gpu(5, &["pci0000:80", "0000:80:01.0"], Some(2), Some(1));
        let unknown = gpu(6, &[], None, None);
        assert_eq!(relation(&sw_a, &sw_b), PciRelation::SameSwitch);
        assert_eq!(relation(&sw_a, &port), PciRelation::SameHostBridge);
        assert_eq!(relation(&sw_a, &other_rc), PciRelation::AcrossHostBridges);
        assert_eq!(relation(&sw_a, &other_numa), PciRelation::AcrossNumaNodes);
        assert_eq!(relation(&sw_a, &other_socket), PciRelation::AcrossSockets);
        assert_eq!(relation(&sw_a, &unknown), PciRelation::Unknown);
        // NUMA nodes alone still say something.
        let numa_only = gpu(7, &[], Some(1), None);
        assert_eq!(relation(&gpu(8, &[], Some(0), None), &numa_only), PciRelation::AcrossNumaNodes);
        assert_eq!(relation(&gpu(8, &[], Some(1), None), &numa_only), PciRelation::Unknown);
    }

    #[test]
    fn labels_claim_only_what_the_facts_show() {
        let nvlink = PeerAttributes {
            can_access_peer: Some(true),
            access_supported: Some(true),
            native_atomics: Some(true),
            performance_rank: Some(0),
        };
        assert_eq!(label(&nvlink, PciRelation::AcrossSockets), "NVLink?");
        let pcie = PeerAttributes { native_atomics: Some(false), ..nvlink };
        assert_eq!(label(&pcie, PciRelation::SameSwitch), "PCIe same switch");
        assert_eq!(label(&pcie, PciRelation::SameHostBridge), "PCIe same host bridge");
        assert_eq!(label(&PeerAttributes::default(), PciRelation::AcrossSockets), "across sockets");
        assert_eq!(label(&PeerAttributes::default(), PciRelation::Unknown), "unknown");
    }

    #[test]
    fn pairs_are_ordered_and_skip_the_diagonal() {
        let gpus = [gpu(0, &["pci0000:00", "a"], None, None), gpu(2, &["pci0000:00", "b"], None, None)];
        let paths = pair_paths(&gpus, |s, _| PeerAttributes { native_atomics: Some(s == 2), ..Default::default() });
        let got: Vec<(usize, usize, &str)> = paths.iter().map(|p| (p.src, p.dst, p.label.as_str())).collect();
        assert_eq!(got, vec![(0, 2, "PCIe same host bridge"), (2, 0, "NVLink?")]);
    }

    #[test]
    fn sysfs_paths() {
        let p = Path::new("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3d:00.0");
        assert_eq!(pci_path_from_sysfs(p), vec!["pci0000:3a", "0000:3a:00.0", "0000:3b:00.0", "0000:3c:08.0"]);
        assert_eq!(pci_path_from_sysfs(Path::new("/sys/devices/pci0000:00/0000:00:04.0")), vec!["pci0000:00"]);
        assert!(pci_path_from_sysfs(Path::new("/sys/devices/virtual/x")).is_empty());
        assert!(pci_path_from_sysfs(Path::new("/sys/devices/pci0000:00")).is_empty());
    }
}
