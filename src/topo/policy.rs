//! The binding policy: a pure function from (machine, ranks on this node,
//! request) to each local rank's cpus, NIC and GPU. No system calls here;
//! `placement.rs` carries a placement out and `report.rs` checks the result.
//!
//! Rules, in short:
//! - `none`: cpus stay as launched; a NIC or GPU is chosen only if listed.
//! - `core`: local rank i takes the i-th allowed core (all its allowed
//!   hyperthreads).
//! - `nic`: local rank i uses the i-th of the best NICs (RDMA before
//!   Ethernet, fastest active port, round robin over equals) and the first
//!   free core nearest it: its local cores, then its package, then the rest.
//! - `gpu`: local rank i uses GPU i mod count, the NIC nearest that GPU
//!   (same PCI switch, then NUMA node, then package; least shared on ties)
//!   and the first free core local to both, then to the GPU, then the NIC.
//! - `--cpu-list`, `--nic`, `--gpu` replace the policy's choice for their
//!   part only.
//! - Cores come only from the allowed set. When the launcher already gave
//!   each rank its own share (fewer allowed cores than ranks on the node),
//!   a rank chooses inside its share.

use thiserror::Error;

use super::cpuset::{self, format_list};
use super::machine::{pci_closeness, Machine, Nic};
use super::request::{BindPolicy, NicSpec, PlacementRequest};

/// Where one local rank goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    pub local_rank: usize,
    /// CPUs to bind to; None leaves the launcher's binding alone.
    pub cpus: Option<Vec<usize>>,
    pub nic: Option<NicSpec>,
    pub gpu: Option<usize>,
    /// Why the choice is not the ideal one, if it is not.
    pub notes: Vec<String>,
}

#[derive(Debug, Error, PartialEq)]
pub enum PlacementError {
    #[error("--cpu-list {list}: cpu {cpu} does not exist on {host} (it has cpus {have})")]
    CpuMissing { list: String, cpu: usize, host: String, have: String },
    #[error(
        "--cpu-list {list}: cpu {cpu} is outside the cpus this rank may use on {host} ({allowed}, set by the launcher \
         or cgroup); start the job without launcher binding (mpirun --bind-to none, srun --cpu-bind=none)"
    )]
    CpuNotAllowed { list: String, cpu: usize, host: String, allowed: String },
    #[error("--cpu-list {list} names {listed} cpu(s) but {ranks} ranks run on {host}: give one cpu per rank")]
    CpuListShort { list: String, listed: usize, ranks: usize, host: String },
    #[error("--nic {name}: no such network device on {host} (found: {have})")]
    NicMissing { name: String, host: String, have: String },
    #[error("--nic {name}: {device} has no port {port} on {host} (ports: {have})")]
    NicPortMissing { name: String, device: String, port: u32, host: String, have: String },
    #[error("--bind {policy}: no network device with an active link on {host} (found: {have})")]
    NoUsableNic { policy: &'static str, host: String, have: String },
    #[error("{what}: {host} has no GPU that hwloc can see")]
    NoGpu { what: String, host: String },
    #[error("--gpu {index}: {host} has {count} GPU(s) (0-{last})")]
    GpuMissing { index: usize, host: String, count: usize, last: usize },
    #[error("no cpu of {host} is allowed for this rank")]
    NoAllowedCpus { host: String },
}

fn nic_names(m: &Machine) -> String {
    if m.nics.is_empty() {
        return "none".into();
    }
    m.nics.iter().map(|n| n.name.clone()).collect::<Vec<_>>().join(", ")
}

/// The placement of every local rank on this node.
pub fn plan(m: &Machine, ranks_on_node: usize, req: &PlacementRequest) -> Result<Vec<Placement>, PlacementError> {
    let policy = req.policy();
    check_cpu_list(m, ranks_on_node, req)?;
    let nic_list = req.nic.as_ref().map(|l| l.iter().map(|s| resolve_nic(m, s)).collect::<Result<Vec<_>, _>>());
    let nic_list = nic_list.transpose()?;
    if let Some(list) = &req.gpu {
        // Where hwloc sees no GPU at all (no PCI view in a container, a
        // driver it cannot see) the number is CUDA's alone: the driver
        // checks it when the rank opens its GPU, and nothing is placed
        // near it.
        for &g in list.iter().filter(|_| !m.gpus.is_empty()) {
            if g >= m.gpus.len() {
                let count = m.gpus.len();
                return Err(PlacementError::GpuMissing { index: g, host: m.hostname.clone(), count, last: count - 1 });
            }
        }
    } else if policy == BindPolicy::Gpu && m.gpus.is_empty() {
        return Err(PlacementError::NoGpu { what: "--bind gpu".into(), host: m.hostname.clone() });
    }
    let candidates = best_nics(m);
    if policy == BindPolicy::Nic && nic_list.is_none() && candidates.is_empty() {
        return Err(PlacementError::NoUsableNic { policy: "nic", host: m.hostname.clone(), have: nic_names(m) });
    }

    let allowed_cores: Vec<usize> = m.cores.iter().filter(|c| !m.allowed_pus(c).is_empty()).map(|c| c.index).collect();
    let partitioned = allowed_cores.len() < ranks_on_node;
    let mut core_use = vec![0usize; m.cores.len()];
    let mut nic_use = vec![0usize; m.nics.len()];
    let mut out = Vec::with_capacity(ranks_on_node);
    for r in 0..ranks_on_node {
        let mut notes = Vec::new();
        if req.gpu.is_some() && m.gpus.is_empty() {
            notes.push(format!(
                "hwloc sees no GPU on {}: the GPU is CUDA's number alone, and no core or NIC is chosen for \
                 nearness to it",
                m.hostname
            ));
        }
        let gpu = match &req.gpu {
            Some(list) => Some(list[r % list.len()]),
            None if policy == BindPolicy::Gpu => Some(r % m.gpus.len()),
            None => None,
        };
        let nic: Option<usize> = match &nic_list {
            Some(list) => Some(list[r % list.len()].0),
            None => match (policy, gpu) {
                (BindPolicy::Nic, _) => Some(candidates[r % candidates.len()]),
                (BindPolicy::Gpu, Some(g)) if g < m.gpus.len() => nearest_nic(m, &candidates, g, &nic_use),
                _ => None,
            },
        };
        if let Some(n) = nic {
            nic_use[n] += 1;
        }
        let cpus = if let Some(list) = &req.cpu_list {
            Some(vec![list[r]])
        } else {
            let order = match policy {
                BindPolicy::None => None,
                BindPolicy::Core => Some(allowed_cores.clone()),
                BindPolicy::Nic => Some(near_order(m, &allowed_cores, &[nic.map(|n| m.nics[n].cpus.as_slice())])),
                BindPolicy::Gpu => {
                    let g = gpu.and_then(|g| m.gpus.get(g)).map(|g| g.cpus.as_slice());
                    let n = nic.map(|n| m.nics[n].cpus.as_slice());
                    Some(near_order(m, &allowed_cores, &[g, n]))
                }
            };
            match order {
                None => None,
                Some(order) if order.is_empty() => {
                    return Err(PlacementError::NoAllowedCpus { host: m.hostname.clone() })
                }
                Some(order) => {
                    let core = if partitioned {
                        order[r % order.len()]
                    } else {
                        // First of the least used cores, in order of nearness.
                        let least = order.iter().map(|&c| core_use[c]).min().unwrap_or(0);
                        order.iter().copied().find(|&c| core_use[c] == least).unwrap_or(order[0])
                    };
                    core_use[core] += 1;
                    if partitioned && allowed_cores.len() > 1 {
                        notes.push(format!(
                            "{ranks_on_node} ranks on this node but {} cores allowed to this rank: ranks may share cores",
                            allowed_cores.len()
                        ));
                    }
                    Some(m.allowed_pus(&m.cores[core]))
                }
            }
        };
        if let (Some(c), Some(n)) = (&cpus, nic) {
            let dev = &m.nics[n];
            if !dev.cpus.is_empty() && !cpuset::is_subset(c, &dev.cpus) {
                let local_allowed = cpuset::intersects(&dev.cpus, &m.allowed_cpus);
                // The rank's own cpus are in every placement table: the
                // note leaves them out so ranks with the same problem share
                // one line (`ranks 16-63: ...`).
                let local = format_list(&dev.cpus);
                notes.push(if req.cpu_list.is_some() {
                    format!("--cpu-list places it off {}'s local cpus {local}", dev.name)
                } else if local_allowed {
                    format!("its cpus are not local to {}: the local cpus {local} are taken by other ranks", dev.name)
                } else {
                    format!("none of {}'s local cpus {} is allowed for this rank", dev.name, format_list(&dev.cpus))
                });
            }
        }
        let nic = nic.map(|n| nic_spec(&m.nics[n], nic_list.as_ref().and_then(|l| l[r % l.len()].1)));
        out.push(Placement { local_rank: r, cpus, nic, gpu, notes });
    }
    Ok(out)
}

/// The placement of one local rank.
pub fn place(
    m: &Machine,
    local_rank: usize,
    ranks_on_node: usize,
    req: &PlacementRequest,
) -> Result<Placement, PlacementError> {
    let ranks = ranks_on_node.max(local_rank + 1);
    let mut all = plan(m, ranks, req)?;
    Ok(all.swap_remove(local_rank))
}

fn check_cpu_list(m: &Machine, ranks: usize, req: &PlacementRequest) -> Result<(), PlacementError> {
    let Some(list) = &req.cpu_list else { return Ok(()) };
    let text = format_list(list);
    let all = m.all_cpus();
    for &cpu in list {
        if all.binary_search(&cpu).is_err() {
            return Err(PlacementError::CpuMissing {
                list: text,
                cpu,
                host: m.hostname.clone(),
                have: format_list(&all),
            });
        }
        if m.allowed_cpus.binary_search(&cpu).is_err() {
            let allowed = format_list(&m.allowed_cpus);
            return Err(PlacementError::CpuNotAllowed { list: text, cpu, host: m.hostname.clone(), allowed });
        }
    }
    if list.len() < ranks {
        return Err(PlacementError::CpuListShort { list: text, listed: list.len(), ranks, host: m.hostname.clone() });
    }
    Ok(())
}

/// Index of the named NIC and the port asked for.
fn resolve_nic(m: &Machine, spec: &NicSpec) -> Result<(usize, Option<u32>), PlacementError> {
    let Some(i) = m.nics.iter().position(|n| n.name == spec.device || n.netdev.as_deref() == Some(&spec.device)) else {
        return Err(PlacementError::NicMissing {
            name: spec.to_string(),
            host: m.hostname.clone(),
            have: nic_names(m),
        });
    };
    if let Some(port) = spec.port {
        let nic = &m.nics[i];
        if !nic.ports.iter().any(|p| p.number == port) {
            let have = nic.ports.iter().map(|p| p.number.to_string()).collect::<Vec<_>>().join(", ");
            return Err(PlacementError::NicPortMissing {
                name: spec.to_string(),
                device: nic.name.clone(),
                port,
                host: m.hostname.clone(),
                have: if have.is_empty() { "none".into() } else { have },
            });
        }
    }
    Ok((i, spec.port))
}

/// The name a transport is given: `mlx5_2:1` for verbs devices (the port
/// asked for, else the first active one), the interface name otherwise.
fn nic_spec(nic: &Nic, port: Option<u32>) -> NicSpec {
    if nic.has_verbs_ports() {
        let port = port.or_else(|| nic.active_ports().next().map(|p| p.number)).unwrap_or(1);
        NicSpec { device: nic.name.clone(), port: Some(port) }
    } else {
        NicSpec { device: nic.netdev.clone().unwrap_or_else(|| nic.name.clone()), port: None }
    }
}

/// NICs a policy may choose from: those with an active link, on PCI when
/// any is, of the best kind present (InfiniBand, RoCE, Ethernet), at the
/// best rate of that kind.
pub(crate) fn best_nics(m: &Machine) -> Vec<usize> {
    let mut usable: Vec<usize> = (0..m.nics.len()).filter(|&i| m.nics[i].is_usable()).collect();
    // Devices on PCI first; virtual interfaces only when there is no other.
    if usable.iter().any(|&i| m.nics[i].pci_bus_id.is_some()) {
        usable.retain(|&i| m.nics[i].pci_bus_id.is_some());
    }
    let Some(kind) = usable.iter().map(|&i| m.nics[i].kind.rank()).min() else { return Vec::new() };
    let of_kind: Vec<usize> = usable.into_iter().filter(|&i| m.nics[i].kind.rank() == kind).collect();
    let best = of_kind.iter().map(|&i| m.nics[i].best_rate()).fold(0.0, f64::max);
    of_kind.into_iter().filter(|&i| m.nics[i].best_rate() >= best).collect()
}

/// The candidate NIC nearest GPU `g`: most shared PCI bridges, then same
/// NUMA node, then same package; the least used so far on ties.
fn nearest_nic(m: &Machine, candidates: &[usize], g: usize, nic_use: &[usize]) -> Option<usize> {
    let gpu = &m.gpus[g];
    let gpu_pkgs = m.packages_of(&gpu.cpus);
    candidates.iter().copied().min_by_key(|&n| {
        let nic = &m.nics[n];
        let closeness = pci_closeness(&gpu.pci_path, &nic.pci_path);
        let same_numa = gpu.numa.is_some() && gpu.numa == nic.numa;
        let same_pkg = m.packages_of(&nic.cpus).iter().any(|p| gpu_pkgs.contains(p));
        (std::cmp::Reverse(closeness), !same_numa, !same_pkg, nic_use[n])
    })
}

/// Allowed cores ordered by nearness to devices: cores local to all of
/// `near`, then to each in turn, then in the package of the first, then the
/// rest; machine order inside each tier.
fn near_order(m: &Machine, allowed_cores: &[usize], near: &[Option<&[usize]>]) -> Vec<usize> {
    let near: Vec<&[usize]> = near.iter().flatten().copied().filter(|c| !c.is_empty()).collect();
    let first_pkgs = near.first().map(|c| m.packages_of(c)).unwrap_or_default();
    let tier = |core: usize| -> usize {
        let pus = &m.cores[core].pus;
        if !near.is_empty() && near.iter().all(|c| cpuset::is_subset(pus, c)) {
            return 0;
        }
        if let Some(i) = near.iter().position(|c| cpuset::is_subset(pus, c)) {
            return 1 + i;
        }
        if first_pkgs.contains(&m.cores[core].package) {
            return 1 + near.len();
        }
        2 + near.len()
    };
    let mut order = allowed_cores.to_vec();
    order.sort_by_key(|&c| tier(c));
    order
}

#[cfg(test)]
mod tests;
