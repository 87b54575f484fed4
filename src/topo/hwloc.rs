//! This node's map from hwloc (cores, NUMA nodes, PCI locality of NICs and
//! GPUs), completed from sysfs where hwloc does not say (verbs port state,
//! link layer and rate; interface state and speed).

use std::fs;
use std::path::Path;

use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::types::{OSDeviceType, ObjectType};
use hwlocality::object::TopologyObject;
use hwlocality::topology::builder::TypeFilter;
use hwlocality::Topology;
use thiserror::Error;

use super::affinity;
use super::cpuset;
use super::machine::{Core, Gpu, Machine, Nic, NicKind, NicPort, NumaNode};

#[derive(Debug, Error)]
#[error("cannot read this node's topology with hwloc: {0}")]
pub(crate) struct DiscoveryError(String);

fn cpu_list(set: Option<&hwlocality::cpu::cpuset::CpuSet>) -> Vec<usize> {
    set.map(|b| b.iter_set().map(usize::from).collect()).unwrap_or_default()
}

fn node_list(set: Option<&hwlocality::memory::nodeset::NodeSet>) -> Vec<usize> {
    set.map(|b| b.iter_set().map(usize::from).collect()).unwrap_or_default()
}

/// hwloc plugins that find nothing commbench reads: GL displays, OpenCL
/// devices, and libxml2 for XML import (hwloc's own XML reader remains).
const UNUSED_PLUGINS: &str = "hwloc_gl,hwloc_opencl,hwloc_xml_libxml";

/// Keeps hwloc (ours, and the MPI library's where it shares the system
/// libhwloc) from loading the plugins in [`UNUSED_PLUGINS`]: loading them
/// pulls in X11, OpenCL, ICU and libstdc++, about 10 ms of CPU per process
/// here, which every rank pays and 128 ranks on 2 cores pay 64 times over
/// in start-up time (scripts/bench-scale.sh). A `HWLOC_PLUGINS_BLACKLIST`
/// already set is kept. Call first thing in main, before any thread.
pub fn skip_unused_plugins() {
    if std::env::var_os("HWLOC_PLUGINS_BLACKLIST").is_none() {
        std::env::set_var("HWLOC_PLUGINS_BLACKLIST", UNUSED_PLUGINS);
    }
}

/// Local cpus, NUMA node and PCI bridge path of an I/O object.
type Locality = (Vec<usize>, Option<usize>, Vec<String>);

/// Reads the node this process runs on.
pub(crate) fn discover() -> Result<Machine, DiscoveryError> {
    let topo = Topology::builder()
        .with_io_type_filter(TypeFilter::KeepImportant)
        .map_err(|e| DiscoveryError(e.to_string()))?
        .build()
        .map_err(|e| DiscoveryError(e.to_string()))?;
    let cpus_of = |o: &TopologyObject| -> Vec<usize> { cpu_list(o.cpuset().as_deref()) };

    let packages = topo.objects_with_type(ObjectType::Package).count().max(1);
    let numa_nodes: Vec<NumaNode> = topo
        .objects_with_type(ObjectType::NUMANode)
        .map(|n| NumaNode {
            os_index: n.os_index().unwrap_or(0),
            cpus: cpus_of(n),
            memory_bytes: Some(n.total_memory()).filter(|&m| m > 0),
        })
        .collect();
    let numa_of_cpu = |cpu: usize| numa_nodes.iter().find(|n| n.cpus.contains(&cpu)).map(|n| n.os_index);
    let cores: Vec<Core> = topo
        .objects_with_type(ObjectType::Core)
        .enumerate()
        .map(|(i, c)| {
            let pus = cpus_of(c);
            Core {
                index: i,
                package: c.first_ancestor_with_type(ObjectType::Package).map(|p| p.logical_index()).unwrap_or(0),
                numa: pus.first().and_then(|&p| numa_of_cpu(p)),
                pus,
            }
        })
        .collect();
    if cores.is_empty() {
        return Err(DiscoveryError("hwloc reports no cores".into()));
    }

    // Locality of an I/O object: the cpus and NUMA node of its first
    // non-I/O ancestor, and the PCI bridges above it.
    let locality = |o: &TopologyObject| -> Locality {
        let anc = o.first_non_io_ancestor();
        let cpus = anc.map(&cpus_of).unwrap_or_default();
        let nodes = node_list(anc.and_then(|a| a.nodeset()).as_deref());
        let numa = if nodes.len() == 1 { Some(nodes[0]) } else { None };
        let mut path: Vec<String> = o
            .ancestors()
            .filter(|a| a.object_type() == ObjectType::Bridge)
            .map(|a| format!("bridge{}", a.global_persistent_index()))
            .collect();
        path.reverse();
        (cpus, numa, path)
    };
    let pci_id = |o: &TopologyObject| -> Option<String> {
        match o.attributes() {
            Some(ObjectAttributes::PCIDevice(p)) => {
                Some(format!("{:04x}:{:02x}:{:02x}.{:x}", p.domain(), p.bus_id(), p.bus_device(), p.function()))
            }
            _ => None,
        }
    };

    let mut nics: Vec<Nic> = Vec::new();
    let mut netdevs: Vec<(String, Option<String>, Locality)> = Vec::new();
    for dev in topo.os_devices() {
        let Some(ObjectAttributes::OSDevice(attr)) = dev.attributes() else { continue };
        let Some(name) = dev.name().and_then(|n| n.to_str().ok()).map(str::to_string) else { continue };
        let parent_pci = dev.parent().filter(|p| p.object_type() == ObjectType::PCIDevice);
        match attr.device_type() {
            OSDeviceType::OpenFabrics => {
                let (cpus, numa, pci_path) = locality(dev);
                let ports = verbs_ports(&name);
                let ethernet = ports.iter().any(|(_, ll)| ll.eq_ignore_ascii_case("ethernet"));
                nics.push(Nic {
                    name,
                    kind: if ethernet { NicKind::RoCE } else { NicKind::InfiniBand },
                    netdev: None,
                    ports: ports.into_iter().map(|(p, _)| p).collect(),
                    pci_bus_id: parent_pci.and_then(pci_id),
                    numa,
                    cpus,
                    pci_path,
                });
            }
            OSDeviceType::Network => {
                netdevs.push((name, parent_pci.and_then(pci_id), locality(dev)));
            }
            _ => {}
        }
    }
    // An interface on the PCI function of a verbs device is that device's
    // netdev (ib0 of mlx5_0); the others are NICs of their own.
    for (name, pci, (cpus, numa, pci_path)) in netdevs {
        if let Some(n) = nics.iter_mut().find(|n| n.pci_bus_id.is_some() && n.pci_bus_id == pci) {
            if n.netdev.is_none() {
                n.netdev = Some(name);
            }
            continue;
        }
        nics.push(interface_nic(name, pci, (cpus, numa, pci_path)));
    }

    // Interfaces hwloc does not show (bonds, veths, VLANs, interfaces of
    // another network namespace's view): no PCI locality, but they can be
    // named with --nic.
    for name in extra_interfaces(&nics) {
        nics.push(interface_nic(name, None, (Vec::new(), None, Vec::new())));
    }

    // GPUs: NVIDIA display or 3D controllers, in PCI bus order (the order
    // CUDA uses with CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi shows).
    let mut gpus: Vec<Gpu> = topo
        .pci_devices()
        .filter_map(|d| match d.attributes() {
            Some(ObjectAttributes::PCIDevice(p)) if p.vendor_id() == 0x10de && p.class_id() >> 8 == 0x03 => {
                let (cpus, numa, pci_path) = locality(d);
                Some(Gpu {
                    index: 0,
                    name: d.info("PCIDevice").and_then(|s| s.to_str().ok()).map(str::to_string),
                    pci_bus_id: pci_id(d)?,
                    numa,
                    cpus,
                    pci_path,
                })
            }
            _ => None,
        })
        .collect();
    gpus.sort_by(|a, b| a.pci_bus_id.cmp(&b.pci_bus_id));
    for (i, g) in gpus.iter_mut().enumerate() {
        g.index = i;
    }

    let mut allowed = affinity::allowed_cpus();
    if allowed.is_empty() {
        allowed = cpu_list(Some(&topo.allowed_cpuset()));
    }
    Ok(Machine {
        hostname: super::hostname(),
        source: format!("hwloc {}", hwloc_version(&topo)),
        packages,
        numa_nodes,
        cores,
        nics,
        gpus,
        allowed_cpus: cpuset::normalized(&allowed),
    })
}

/// The library's release (the root object's hwlocVersion), else its API
/// version.
fn hwloc_version(topo: &Topology) -> String {
    if let Some(v) = topo.root_object().info("hwlocVersion").and_then(|v| v.to_str().ok()) {
        return v.to_string();
    }
    let v = hwlocality::hwloc_api_version();
    format!("API {}.{}", v >> 16, (v >> 8) & 0xff)
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// Ports of a verbs device with their link layer, from
/// /sys/class/infiniband/<dev>/ports/<n>/{state,rate,link_layer}.
fn verbs_ports(dev: &str) -> Vec<(NicPort, String)> {
    let dir = Path::new("/sys/class/infiniband").join(dev).join("ports");
    let mut ports: Vec<(NicPort, String)> = fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| {
                let e = e.ok()?;
                let number: u32 = e.file_name().to_str()?.parse().ok()?;
                let p = e.path();
                // "4: ACTIVE" -> "ACTIVE"; "200 Gb/sec (4X HDR)" -> 200.
                let state = read_trim(&p.join("state"))
                    .map(|s| s.split_once(": ").map(|(_, s)| s.to_string()).unwrap_or(s))
                    .unwrap_or_else(|| "unknown".into());
                let rate_gbps = read_trim(&p.join("rate")).and_then(|r| r.split_whitespace().next()?.parse().ok());
                let link = read_trim(&p.join("link_layer")).unwrap_or_default();
                Some((NicPort { number, state, rate_gbps }, link))
            })
            .collect()
        })
        .unwrap_or_default();
    ports.sort_by_key(|(p, _)| p.number);
    ports
}

/// Ethernet-type interfaces in /sys/class/net not already in `known`
/// (by name or as a verbs device's interface), loopback excluded.
fn extra_interfaces(known: &[Nic]) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir("/sys/class/net")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter(|n| !known.iter().any(|k| &k.name == n || k.netdev.as_ref() == Some(n)))
        // ARPHRD_ETHER; loopback is 772, IPoIB 32 (reached through its verbs device).
        .filter(|n| read_trim(&Path::new("/sys/class/net").join(n).join("type")).as_deref() == Some("1"))
        .collect()
}

/// A plain network interface as a NIC, with its locality if known.
fn interface_nic(name: String, pci_bus_id: Option<String>, (cpus, numa, pci_path): Locality) -> Nic {
    let port = interface_port(&name);
    Nic { name, kind: NicKind::Ethernet, netdev: None, ports: vec![port], pci_bus_id, numa, cpus, pci_path }
}

/// An interface as a one-port NIC: operstate and speed (Mb/s) from
/// /sys/class/net/<if>.
fn interface_port(name: &str) -> NicPort {
    let dir = Path::new("/sys/class/net").join(name);
    let state = read_trim(&dir.join("operstate")).unwrap_or_else(|| "unknown".into());
    let rate_gbps =
        read_trim(&dir.join("speed")).and_then(|s| s.parse::<f64>().ok()).filter(|&s| s > 0.0).map(|s| s / 1000.0);
    NicPort { number: 1, state, rate_gbps }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real hwloc path on the machine the tests run on.
    #[test]
    fn discovers_this_node() {
        let m = discover().expect("hwloc");
        assert!(!m.cores.is_empty() && !m.numa_nodes.is_empty());
        assert_eq!(m.all_cpus().len(), m.pu_count());
        assert!(cpuset::is_subset(&m.allowed_cpus, &m.all_cpus()));
        for n in &m.nics {
            assert!(cpuset::is_subset(&n.cpus, &m.all_cpus()), "{n:?}");
        }
        // Where /sys says eth0 is a PCI device, hwloc must show it with its
        // local cpus.
        if Path::new("/sys/class/net/eth0/device").exists() {
            let eth0 = m.find_nic("eth0").expect("eth0 in hwloc's map");
            assert!(!eth0.cpus.is_empty());
            assert_eq!(eth0.kind, NicKind::Ethernet);
        }
    }
}
