//! One node as placement sees it: packages, NUMA nodes, cores with their
//! hardware threads (PUs), network devices and GPUs with their locality,
//! and the cpus this process may use. Built from hwloc (`hwloc.rs`) or from
//! a description file (`describe.rs`); the binding policy only reads it.

use serde::{Deserialize, Serialize};

use super::cpuset;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    /// Where this map came from: "hwloc 2.9.0" or a description file.
    pub source: String,
    pub packages: usize,
    pub numa_nodes: Vec<NumaNode>,
    /// In hwloc's logical order (package, then NUMA node, then core).
    pub cores: Vec<Core>,
    pub nics: Vec<Nic>,
    pub gpus: Vec<Gpu>,
    /// CPUs this process may run on (cgroup and launcher binding), sorted.
    pub allowed_cpus: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NumaNode {
    pub os_index: usize,
    pub cpus: Vec<usize>,
    pub memory_bytes: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Core {
    /// Logical index (0..cores).
    pub index: usize,
    pub package: usize,
    pub numa: Option<usize>,
    /// OS numbers of its hardware threads, sorted.
    pub pus: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NicKind {
    /// Verbs device with an InfiniBand link layer.
    InfiniBand,
    /// Verbs device with an Ethernet link layer.
    RoCE,
    /// Plain network interface.
    Ethernet,
    Other,
}

impl NicKind {
    /// Preference when no NIC is named: RDMA first.
    pub fn rank(self) -> u8 {
        match self {
            NicKind::InfiniBand => 0,
            NicKind::RoCE => 1,
            NicKind::Ethernet => 2,
            NicKind::Other => 3,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NicKind::InfiniBand => "InfiniBand",
            NicKind::RoCE => "RoCE",
            NicKind::Ethernet => "Ethernet",
            NicKind::Other => "other",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicPort {
    pub number: u32,
    /// As the kernel says: ACTIVE, DOWN, INIT for verbs ports; up, down for
    /// interfaces.
    pub state: String,
    pub rate_gbps: Option<f64>,
}

impl NicPort {
    pub(crate) fn is_active(&self) -> bool {
        let s = self.state.to_ascii_lowercase();
        s.contains("active") || s == "up"
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Nic {
    /// Verbs device name (`mlx5_2`) or interface name (`eth0`).
    pub name: String,
    pub kind: NicKind,
    /// The interface of a verbs device (`ib0`), if any.
    pub netdev: Option<String>,
    pub ports: Vec<NicPort>,
    pub pci_bus_id: Option<String>,
    pub numa: Option<usize>,
    /// CPUs local to the device.
    pub cpus: Vec<usize>,
    /// PCI bridges above the device, outermost first: devices sharing a
    /// longer prefix sit behind the same switch.
    pub pci_path: Vec<String>,
}

impl Nic {
    pub(crate) fn active_ports(&self) -> impl Iterator<Item = &NicPort> {
        self.ports.iter().filter(|p| p.is_active())
    }

    pub(crate) fn is_usable(&self) -> bool {
        self.active_ports().next().is_some()
    }

    /// Fastest active link, for choosing among NICs.
    pub(crate) fn best_rate(&self) -> f64 {
        self.active_ports().filter_map(|p| p.rate_gbps).fold(0.0, f64::max)
    }

    /// Whether the device has a verbs port numbering (`name:port` means
    /// something to UCX and NCCL).
    pub(crate) fn has_verbs_ports(&self) -> bool {
        matches!(self.kind, NicKind::InfiniBand | NicKind::RoCE)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// CUDA device index (PCI bus order).
    pub index: usize,
    pub name: Option<String>,
    pub pci_bus_id: String,
    pub numa: Option<usize>,
    pub cpus: Vec<usize>,
    pub pci_path: Vec<String>,
}

/// Length of the shared prefix of two PCI paths: 0 when the devices meet
/// only at the CPU, higher when they share bridges or a switch.
pub(crate) fn pci_closeness(a: &[String], b: &[String]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl Machine {
    pub(crate) fn pu_count(&self) -> usize {
        self.cores.iter().map(|c| c.pus.len()).sum()
    }

    pub(crate) fn all_cpus(&self) -> Vec<usize> {
        cpuset::normalized(&self.cores.iter().flat_map(|c| c.pus.iter().copied()).collect::<Vec<_>>())
    }

    pub(crate) fn core_of_pu(&self, pu: usize) -> Option<&Core> {
        self.cores.iter().find(|c| c.pus.contains(&pu))
    }

    /// Cores with at least one PU in `cpus`.
    pub(crate) fn cores_touching(&self, cpus: &[usize]) -> Vec<usize> {
        self.cores.iter().filter(|c| cpuset::intersects(&c.pus, cpus)).map(|c| c.index).collect()
    }

    /// NUMA nodes whose cpus meet `cpus`, ascending.
    pub(crate) fn numa_of(&self, cpus: &[usize]) -> Vec<usize> {
        let mut v: Vec<usize> =
            self.numa_nodes.iter().filter(|n| cpuset::intersects(&n.cpus, cpus)).map(|n| n.os_index).collect();
        v.sort_unstable();
        v
    }

    /// Packages of the cores touching `cpus`.
    pub(crate) fn packages_of(&self, cpus: &[usize]) -> Vec<usize> {
        let mut v: Vec<usize> =
            self.cores.iter().filter(|c| cpuset::intersects(&c.pus, cpus)).map(|c| c.package).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// PUs of `core` that this process may use.
    pub(crate) fn allowed_pus(&self, core: &Core) -> Vec<usize> {
        core.pus.iter().copied().filter(|p| self.allowed_cpus.binary_search(p).is_ok()).collect()
    }

    pub(crate) fn find_nic(&self, name: &str) -> Option<&Nic> {
        self.nics.iter().find(|n| n.name == name || n.netdev.as_deref() == Some(name))
    }
}
