//! Machines described in a small JSON file instead of discovered: for the
//! policy tests (an EPYC node with an HDR NIC, DGX-1, DGX-H100 in
//! tests/machines/) and for `commbench topo --machine FILE`, which shows
//! the placement a policy would give on a node you are not logged in to.
//!
//! Cores are numbered package by package, NUMA node by NUMA node; with
//! `threads_per_core` = t, core c has PUs c, c + cores, ..., as Linux
//! numbers hyperthreads. A device sits on a NUMA node (its local cpus are
//! that node's) and optionally behind a named PCI switch.

use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

use super::cpuset::{self, CpuListError};
use super::machine::{Core, Gpu, Machine, Nic, NicKind, NicPort, NumaNode};

/// Why a description cannot be used; each message starts with the file it
/// came from (`origin`).
#[derive(Debug, Error)]
pub enum DescribeError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{origin}: {source}")]
    Json { origin: String, source: serde_json::Error },
    #[error("{0}: packages, numa_per_package, cores_per_numa and threads_per_core must be > 0")]
    ZeroCount(String),
    #[error("{0}: more than 16384 cpus")]
    TooManyCpus(String),
    #[error("{origin}: {what} is on NUMA node {numa}, but there are {numa_count}")]
    NoSuchNuma { origin: String, what: String, numa: usize, numa_count: usize },
    #[error("{origin}: allowed_cpus: {source}")]
    AllowedCpus { origin: String, source: CpuListError },
    #[error("{0}: allowed_cpus names cpus the machine does not have")]
    AllowedCpusAbsent(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Description {
    hostname: String,
    packages: usize,
    numa_per_package: usize,
    cores_per_numa: usize,
    #[serde(default = "one")]
    threads_per_core: usize,
    #[serde(default)]
    nics: Vec<NicDescription>,
    #[serde(default)]
    gpus: Vec<GpuDescription>,
    /// The process's allowed cpus; all when absent.
    allowed_cpus: Option<String>,
}

fn one() -> usize {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NicDescription {
    name: String,
    kind: NicKind,
    netdev: Option<String>,
    numa: usize,
    switch: Option<String>,
    #[serde(default)]
    ports: Vec<NicPort>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuDescription {
    numa: usize,
    switch: Option<String>,
    name: Option<String>,
}

/// Reads a description file.
pub fn load(path: &Path) -> Result<Machine, DescribeError> {
    let text = crate::input_file::read_to_string(path)
        .map_err(|source| DescribeError::Read { path: path.display().to_string(), source })?;
    from_json(&text, &path.display().to_string())
}

/// Builds the machine a description says.
pub fn from_json(text: &str, source: &str) -> Result<Machine, DescribeError> {
    let origin = || source.to_string();
    let d: Description =
        serde_json::from_str(text).map_err(|source| DescribeError::Json { origin: origin(), source })?;
    if d.packages == 0 || d.numa_per_package == 0 || d.cores_per_numa == 0 || d.threads_per_core == 0 {
        return Err(DescribeError::ZeroCount(origin()));
    }
    let too_many = || DescribeError::TooManyCpus(origin());
    let numa_count = d.packages.checked_mul(d.numa_per_package).ok_or_else(too_many)?;
    let core_count = numa_count.checked_mul(d.cores_per_numa).ok_or_else(too_many)?;
    if core_count.checked_mul(d.threads_per_core).is_none_or(|n| n > 1 << 14) {
        return Err(too_many());
    }
    let cores: Vec<Core> = (0..core_count)
        .map(|c| {
            let numa = c / d.cores_per_numa;
            Core {
                index: c,
                package: numa / d.numa_per_package,
                numa: Some(numa),
                pus: (0..d.threads_per_core).map(|t| c + t * core_count).collect(),
            }
        })
        .collect();
    let numa_cpus = |n: usize| -> Vec<usize> {
        cpuset::normalized(&cores.iter().filter(|c| c.numa == Some(n)).flat_map(|c| c.pus.clone()).collect::<Vec<_>>())
    };
    let numa_nodes: Vec<NumaNode> =
        (0..numa_count).map(|n| NumaNode { os_index: n, cpus: numa_cpus(n), memory_bytes: None }).collect();
    let check_numa = |what: &str, n: usize| {
        if n < numa_count {
            Ok(())
        } else {
            Err(DescribeError::NoSuchNuma { origin: origin(), what: what.to_string(), numa: n, numa_count })
        }
    };
    let path = |sw: &Option<String>, numa: usize| -> Vec<String> {
        let mut p = vec![format!("numa{numa}")];
        p.extend(sw.iter().cloned());
        p
    };
    let mut nics = Vec::new();
    for (i, n) in d.nics.iter().enumerate() {
        check_numa(&n.name, n.numa)?;
        nics.push(Nic {
            name: n.name.clone(),
            kind: n.kind,
            netdev: n.netdev.clone(),
            ports: n.ports.clone(),
            pci_bus_id: Some(format!("0000:{:02x}:00.0", 0x40 + i)),
            numa: Some(n.numa),
            cpus: numa_cpus(n.numa),
            pci_path: path(&n.switch, n.numa),
        });
    }
    let mut gpus = Vec::new();
    for (i, g) in d.gpus.iter().enumerate() {
        check_numa(&format!("GPU {i}"), g.numa)?;
        gpus.push(Gpu {
            index: i,
            name: g.name.clone(),
            pci_bus_id: format!("0000:{:02x}:00.0", i + 1),
            numa: Some(g.numa),
            cpus: numa_cpus(g.numa),
            pci_path: path(&g.switch, g.numa),
        });
    }
    let all: Vec<usize> = (0..core_count * d.threads_per_core).collect();
    let allowed_cpus = match &d.allowed_cpus {
        Some(text) => {
            let list =
                cpuset::parse_list(text).map_err(|e| DescribeError::AllowedCpus { origin: origin(), source: e })?;
            let list = cpuset::normalized(&list);
            if !cpuset::is_subset(&list, &all) {
                return Err(DescribeError::AllowedCpusAbsent(origin()));
            }
            list
        }
        None => all,
    };
    Ok(Machine {
        hostname: d.hostname,
        source: source.to_string(),
        packages: d.packages,
        numa_nodes,
        cores,
        nics,
        gpus,
        allowed_cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_follows_linux() {
        let m = from_json(
            r#"{"hostname":"h","packages":2,"numa_per_package":1,"cores_per_numa":4,"threads_per_core":2,
               "nics":[{"name":"mlx5_0","kind":"infiniband","numa":1,"switch":"sw1",
                        "ports":[{"number":1,"state":"ACTIVE","rate_gbps":200}]}],
               "gpus":[{"numa":1,"switch":"sw1"}]}"#,
            "t",
        )
        .unwrap();
        assert_eq!(m.cores.len(), 8);
        assert_eq!(m.cores[5].pus, vec![5, 13]);
        assert_eq!(m.cores[5].package, 1);
        assert_eq!(m.numa_nodes[1].cpus, vec![4, 5, 6, 7, 12, 13, 14, 15]);
        assert_eq!(m.nics[0].cpus, m.numa_nodes[1].cpus);
        assert_eq!(m.allowed_cpus.len(), 16);
        assert_eq!(m.gpus[0].pci_path, vec!["numa1", "sw1"]);
        assert!(m.nics[0].is_usable());
    }

    #[test]
    fn errors_name_the_problem() {
        let e = from_json(
            r#"{"hostname":"h","packages":1,"numa_per_package":1,"cores_per_numa":2,"gpus":[{"numa":3}]}"#,
            "f",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "f: GPU 0 is on NUMA node 3, but there are 1");
        let e = from_json(r#"{"hostname":"h","packages":1,"numa_per_package":1,"cores_per_numa":2,"x":1}"#, "f")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f: unknown field `x`"), "{e}");
        let e = from_json(
            r#"{"hostname":"h","packages":1,"numa_per_package":1,"cores_per_numa":2,"allowed_cpus":"0-5"}"#,
            "f",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "f: allowed_cpus names cpus the machine does not have");
        let e = from_json(
            r#"{"hostname":"h","packages":1,"numa_per_package":1,"cores_per_numa":2,"allowed_cpus":"1-0"}"#,
            "f",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "f: allowed_cpus: range '1-0' runs backwards");
        let e = from_json(r#"{"hostname":"h","packages":0,"numa_per_package":1,"cores_per_numa":2}"#, "f")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "f: packages, numa_per_package, cores_per_numa and threads_per_core must be > 0");
        let e = load(Path::new("/nonexistent/machine.json")).unwrap_err().to_string();
        assert!(e.starts_with("cannot read /nonexistent/machine.json: "), "{e}");
    }
}
