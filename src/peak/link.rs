//! The network link a rank's traffic to another node leaves by, and what
//! it can carry: the NIC placement chose (`--nic`, the `nic` policy, or the
//! user's `UCX_NET_DEVICES`), else the node's only usable one, preferring
//! RDMA devices as MPI libraries do. Its rate is the port's (InfiniBand
//! `rate`, an interface's `speed`), lowered to its PCIe link's where that
//! is slower. Several candidates and no choice is "unknown", never a guess.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::pcie::{self, PcieLink};
use crate::topo::machine::{Machine, Nic, NicPort};

/// A rank's network link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicLink {
    /// The device as the transport names it: `mlx5_2:1` or `eth1`.
    pub nic: String,
    /// `InfiniBand`, `RoCE`, `Ethernet`.
    pub kind: String,
    /// The port's rate, Gb/s (10^9 bits per second).
    pub port_gbps: f64,
    /// The NIC's own PCIe link, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie: Option<PcieLink>,
    /// What the link carries at most, one direction, 10^6 bytes/s: the
    /// port's rate or the PCIe link's, whichever is lower.
    pub mbps: f64,
    /// Where each figure came from.
    pub sources: Vec<String>,
}

/// The link of a rank on machine `m`; `chosen` is placement's NIC
/// (`mlx5_2:1`, `eth0`) if any; `sys` is where sysfs is (/sys), read for
/// bridges and PCIe links when `m` came from hwloc. Err says why the
/// link is unknown.
pub(crate) fn nic_link(m: &Machine, chosen: Option<&str>, sys: &Path) -> Result<NicLink, String> {
    let discovered = m.source.starts_with("hwloc");
    let (nic, port) = match chosen {
        Some(name) => {
            let (dev, port) = match name.split_once(':') {
                Some((d, p)) => (d, p.parse::<u32>().ok()),
                None => (name, None),
            };
            let nic = m.find_nic(dev).ok_or_else(|| format!("the chosen NIC {name} is not in {}'s map", m.hostname))?;
            let port = match port {
                Some(n) => nic.ports.iter().find(|p| p.number == n).ok_or_else(|| format!("{dev} has no port {n}"))?,
                None => one_port(nic)?,
            };
            (nic, port)
        }
        None => {
            let usable: Vec<&Nic> =
                m.nics.iter().filter(|n| n.is_usable() && !(discovered && is_bridge(sys, &n.name))).collect();
            let rdma: Vec<&Nic> = usable.iter().copied().filter(|n| n.has_verbs_ports()).collect();
            let pool = if rdma.is_empty() { usable } else { rdma };
            match pool.as_slice() {
                [] => return Err(format!("no network device of {} is up", m.hostname)),
                [one] => (*one, one_port(one)?),
                many => {
                    let names: Vec<&str> = many.iter().map(|n| n.name.as_str()).collect();
                    return Err(format!(
                        "{} devices of {} are up ({}) and none was chosen: name one with --nic",
                        many.len(),
                        m.hostname,
                        names.join(", ")
                    ));
                }
            }
        }
    };
    let label = if nic.has_verbs_ports() { format!("{}:{}", nic.name, port.number) } else { nic.name.clone() };
    let gbps = port.rate_gbps.ok_or_else(|| format!("{label} on {} reports no link rate", m.hostname))?;
    let mut sources = vec![port_source(m, nic, port, discovered)];
    let pcie = match (&nic.pci_bus_id, discovered) {
        (Some(id), true) => pcie::read(sys, id).ok(),
        _ => None,
    };
    let mut mbps = gbps * 1e9 / 8.0 / 1e6;
    if let Some(p) = &pcie {
        sources.push(format!("{}: {} GT/s x{} ({}) = {:.0} MB/s", p.source, p.gts, p.width, p.encoding, p.mbps));
        mbps = mbps.min(p.mbps);
    }
    Ok(NicLink { nic: label, kind: nic.kind.name().to_string(), port_gbps: gbps, pcie, mbps, sources })
}

/// The one active port of `nic`; Err when it has none or several.
fn one_port(nic: &Nic) -> Result<&NicPort, String> {
    let active: Vec<&NicPort> = nic.active_ports().collect();
    match active.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("{} has no active port", nic.name)),
        _ => Err(format!("{} has {} active ports and none was chosen: name one with --nic", nic.name, active.len())),
    }
}

/// Where the port's rate was read, and what it said.
fn port_source(m: &Machine, nic: &Nic, port: &NicPort, discovered: bool) -> String {
    let rate = port.rate_gbps.map(|g| format!("{g} Gb/s")).unwrap_or_default();
    match (discovered, nic.has_verbs_ports()) {
        (true, true) => format!("/sys/class/infiniband/{}/ports/{}/rate: {rate}", nic.name, port.number),
        (true, false) => format!("/sys/class/net/{}/speed: {rate}", nic.name),
        (false, _) => format!("{}: {} port {} rate_gbps: {rate}", m.source, nic.name, port.number),
    }
}

/// A Linux bridge (docker0, a test's bridge): no traffic leaves by it.
fn is_bridge(sys: &Path, name: &str) -> bool {
    sys.join("class/net").join(name).join("bridge").exists()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::describe;
    use crate::topo::machine::NicKind;

    fn machine(file: &str) -> Machine {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/machines").join(file);
        describe::load(&path).unwrap()
    }

    fn nic(name: &str, kind: NicKind, ports: &[(&str, Option<f64>)]) -> Nic {
        Nic {
            name: name.into(),
            kind,
            netdev: None,
            ports: ports
                .iter()
                .enumerate()
                .map(|(i, (state, rate))| NicPort { number: i as u32 + 1, state: state.to_string(), rate_gbps: *rate })
                .collect(),
            pci_bus_id: Some("0000:3b:00.0".into()),
            numa: None,
            cpus: vec![],
            pci_path: vec![],
        }
    }

    #[test]
    fn epyc_hdr_prefers_its_active_infiniband_port() {
        let m = machine("epyc-hdr.json");
        let l = nic_link(&m, None, Path::new("/nonexistent")).unwrap();
        assert_eq!((l.nic.as_str(), l.kind.as_str(), l.port_gbps), ("mlx5_2:1", "InfiniBand", 200.0));
        // 200 Gb/s is 25,000 MB/s; a described machine has no PCIe figure.
        assert_eq!((l.mbps, l.pcie.is_none()), (25_000.0, true));
        assert!(l.sources[0].ends_with("epyc-hdr.json: mlx5_2 port 1 rate_gbps: 200 Gb/s"), "{:?}", l.sources);
        // The management port when it is chosen; a RoCE port that is down
        // still has a rate, as the kernel keeps it.
        let eth = nic_link(&m, Some("eth0"), Path::new("/x")).unwrap();
        assert_eq!((eth.nic.as_str(), eth.mbps), ("eth0", 125.0));
        assert_eq!(nic_link(&m, Some("mlx5_0:1"), Path::new("/x")).unwrap().mbps, 12_500.0);
        assert_eq!(
            nic_link(&m, Some("mlx5_9:1"), Path::new("/x")).unwrap_err(),
            format!("the chosen NIC mlx5_9:1 is not in {}'s map", m.hostname)
        );
        assert_eq!(nic_link(&m, Some("mlx5_2:2"), Path::new("/x")).unwrap_err(), "mlx5_2 has no port 2");
    }

    #[test]
    fn several_rails_need_a_choice() {
        let m = machine("dgx-h100.json");
        let e = nic_link(&m, None, Path::new("/x")).unwrap_err();
        assert!(e.contains("devices of") && e.ends_with("none was chosen: name one with --nic"), "{e}");
        let rail = nic_link(
            &m,
            Some(&format!("{}:1", m.nics.iter().find(|n| n.best_rate() == 400.0).unwrap().name)),
            Path::new("/x"),
        )
        .unwrap();
        assert_eq!(rail.mbps, 50_000.0);
    }

    #[test]
    fn from_a_sysfs_tree_the_pcie_link_can_be_the_limit() {
        // An HDR port (200 Gb/s = 25 GB/s) in a gen3 x16 slot (15.75 GB/s).
        let root = tempfile::tempdir().unwrap();
        let dev = root.path().join("bus/pci/devices/0000:3b:00.0");
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("current_link_speed"), "8.0 GT/s PCIe\n").unwrap();
        std::fs::write(dev.join("current_link_width"), "16\n").unwrap();
        let mut m = machine("epyc-hdr.json");
        m.source = "hwloc 2.9.0".into();
        m.nics = vec![nic("mlx5_0", NicKind::InfiniBand, &[("ACTIVE", Some(200.0))])];
        let l = nic_link(&m, None, root.path()).unwrap();
        assert_eq!((l.mbps.round(), l.port_gbps), (15754.0, 200.0));
        assert_eq!(l.sources[0], "/sys/class/infiniband/mlx5_0/ports/1/rate: 200 Gb/s");
        assert!(l.sources[1].ends_with("8 GT/s x16 (128b/130b) = 15754 MB/s"), "{:?}", l.sources);
        // A veth: a plain interface, its speed, no PCI device; a bridge
        // beside it is passed over.
        std::fs::create_dir_all(root.path().join("class/net/br0/bridge")).unwrap();
        let mut veth = nic("eth1", NicKind::Ethernet, &[("up", Some(10.0))]);
        veth.pci_bus_id = None;
        m.nics = vec![nic("br0", NicKind::Ethernet, &[("up", Some(10.0))]), veth];
        let l = nic_link(&m, None, root.path()).unwrap();
        assert_eq!((l.nic.as_str(), l.mbps), ("eth1", 1250.0));
        assert_eq!(l.sources, vec!["/sys/class/net/eth1/speed: 10 Gb/s".to_string()]);
        // An interface whose speed the kernel does not know (virtio: -1).
        m.nics = vec![nic("eth0", NicKind::Ethernet, &[("up", None)])];
        assert_eq!(
            nic_link(&m, None, root.path()).unwrap_err(),
            format!("eth0 on {} reports no link rate", m.hostname)
        );
        m.nics = vec![nic("eth0", NicKind::Ethernet, &[("down", Some(1.0))])];
        assert_eq!(nic_link(&m, None, root.path()).unwrap_err(), format!("no network device of {} is up", m.hostname));
    }
}
