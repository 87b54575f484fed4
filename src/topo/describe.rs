//! Machines described in a small JSON file instead of discovered: for the
//! policy tests (an EPYC node with an HDR NIC, DGX-1, DGX-H100 in
//! tests/machines/) and for `commbench topo --machine FILE`, which shows
//! the placement a policy would give on a node you are not logged in to.
//!
//! Cores are numbered package by package, NUMA node by NUMA node; with
//! `threads_per_core` = t, core c has PUs c, c + cores, ..., as Linux
//! numbers hyperthreads. A device sits on a NUMA node (its local cpus are
//! that node's) and optionally behind a named PCI switch.
//!
//! A description may also say what its GPUs are (memory, compute
//! capability), how fast copies to, from and between them run, and which
//! pairs are linked (`gpu_rates`, `gpu_links`): placement ignores these;
//! [`gpu_model`] reads them, for the tests' stand-in CUDA driver.

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
    #[error("{origin}: GPU {gpu}: compute_capability '{text}' is not MAJOR.MINOR")]
    ComputeCapability { origin: String, gpu: usize, text: String },
    #[error("{origin}: GPU {gpu}: memory_gib must be > 0")]
    GpuMemory { origin: String, gpu: usize },
    #[error("{origin}: gpu_rates: {field} must be {bound}")]
    GpuRate { origin: String, field: &'static str, bound: &'static str },
    #[error("{origin}: gpu_links: {why}")]
    GpuLinks { origin: String, why: String },
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
    gpu_rates: Option<GpuRates>,
    gpu_links: Option<LinksDescription>,
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
    /// Device memory in GiB (2^30 bytes).
    memory_gib: Option<f64>,
    /// `7.0`.
    compute_capability: Option<String>,
}

/// Copy rates of a described machine's GPUs, in GB/s (10^9 bytes per
/// second), and the fixed costs of a copy and of an NCCL operation.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuRates {
    /// Host to GPU from pinned (page-locked) memory.
    pub h2d_pinned_gbs: f64,
    /// Host to GPU from ordinary (pageable) memory.
    pub h2d_pageable_gbs: f64,
    pub d2h_pinned_gbs: f64,
    pub d2h_pageable_gbs: f64,
    /// A copy within one GPU's memory.
    pub d2d_gbs: f64,
    /// One NVLink, one direction.
    pub nvlink_gbs: f64,
    /// GPU to GPU over PCIe with peer access.
    pub pcie_peer_gbs: f64,
    /// GPU to GPU staged through host memory (peer access off).
    pub staged_peer_gbs: f64,
    /// Launch cost of each copy, microseconds.
    pub copy_latency_us: f64,
    /// Fixed cost of each NCCL operation, microseconds.
    pub nccl_latency_us: f64,
}

impl GpuRates {
    fn fields(&self) -> [(&'static str, f64); 10] {
        [
            ("h2d_pinned_gbs", self.h2d_pinned_gbs),
            ("h2d_pageable_gbs", self.h2d_pageable_gbs),
            ("d2h_pinned_gbs", self.d2h_pinned_gbs),
            ("d2h_pageable_gbs", self.d2h_pageable_gbs),
            ("d2d_gbs", self.d2d_gbs),
            ("nvlink_gbs", self.nvlink_gbs),
            ("pcie_peer_gbs", self.pcie_peer_gbs),
            ("staged_peer_gbs", self.staged_peer_gbs),
            ("copy_latency_us", self.copy_latency_us),
            ("nccl_latency_us", self.nccl_latency_us),
        ]
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksDescription {
    /// GPU pairs joined by NVLinks: `{"gpus": [0, 3], "links": 2}`.
    #[serde(default)]
    nvlink: Vec<NvlinkDescription>,
    /// Every pair of GPUs through NVSwitch, with this many NVLinks per GPU.
    nvswitch_links: Option<u32>,
    /// GPU pairs with peer access over PCIe.
    #[serde(default)]
    pcie_peers: Vec<[usize; 2]>,
    /// The NVLink generation (major version: 2 for V100, 4 for H100), for
    /// the stand-in's NVML.
    nvlink_version: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NvlinkDescription {
    gpus: [usize; 2],
    links: u32,
}

/// How one pair of GPUs is linked; pairs not listed have no peer access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuLinkKind {
    /// NVLink (or NVSwitch) with this many links.
    NvLink(u32),
    Pcie,
}

/// One linked pair of GPUs, `a < b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuLink {
    pub a: usize,
    pub b: usize,
    pub kind: GpuLinkKind,
}

/// What a GPU is, as far as the description says.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSpec {
    pub memory_bytes: Option<u64>,
    /// (major, minor).
    pub compute_capability: Option<(u32, u32)>,
}

/// The GPU fields of a description: per GPU, its memory and compute
/// capability; the copy rates; every linked pair (NVSwitch spelled out as
/// all pairs).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuModel {
    pub gpus: Vec<GpuSpec>,
    pub rates: Option<GpuRates>,
    pub links: Vec<GpuLink>,
    /// Whether the NVLinks go through NVSwitches (`nvswitch_links`).
    pub nvswitch: bool,
    /// `gpu_links.nvlink_version` (the major version), when given.
    pub nvlink_version: Option<u32>,
}

/// Reads a description file.
pub fn load(path: &Path) -> Result<Machine, DescribeError> {
    let text = crate::input_file::read_to_string(path)
        .map_err(|source| DescribeError::Read { path: path.display().to_string(), source })?;
    from_json(&text, &path.display().to_string())
}

/// Reads the GPU fields of a description file.
pub fn load_gpu_model(path: &Path) -> Result<GpuModel, DescribeError> {
    let text = crate::input_file::read_to_string(path)
        .map_err(|source| DescribeError::Read { path: path.display().to_string(), source })?;
    gpu_model(&text, &path.display().to_string())
}

/// The GPU fields of a description (see [`GpuModel`]).
pub(crate) fn gpu_model(text: &str, source: &str) -> Result<GpuModel, DescribeError> {
    let d: Description =
        serde_json::from_str(text).map_err(|e| DescribeError::Json { origin: source.to_string(), source: e })?;
    model_of(&d, source)
}

fn model_of(d: &Description, source: &str) -> Result<GpuModel, DescribeError> {
    let origin = || source.to_string();
    let mut gpus = Vec::new();
    for (i, g) in d.gpus.iter().enumerate() {
        let memory_bytes = match g.memory_gib {
            Some(gib) if gib.is_finite() && gib > 0.0 => Some((gib * (1u64 << 30) as f64).round() as u64),
            Some(_) => return Err(DescribeError::GpuMemory { origin: origin(), gpu: i }),
            None => None,
        };
        let compute_capability = match &g.compute_capability {
            Some(text) => Some(parse_capability(text).ok_or_else(|| DescribeError::ComputeCapability {
                origin: origin(),
                gpu: i,
                text: text.clone(),
            })?),
            None => None,
        };
        gpus.push(GpuSpec { memory_bytes, compute_capability });
    }
    if let Some(r) = &d.gpu_rates {
        for (field, v) in r.fields() {
            // Rates must be positive; a latency may be zero.
            let latency = field.ends_with("_us");
            if !v.is_finite() || v < 0.0 || (!latency && v == 0.0) {
                let bound = if latency { ">= 0" } else { "> 0" };
                return Err(DescribeError::GpuRate { origin: origin(), field, bound });
            }
        }
    }
    let links = match &d.gpu_links {
        Some(l) => links_of(l, d.gpus.len()).map_err(|why| DescribeError::GpuLinks { origin: origin(), why })?,
        None => Vec::new(),
    };
    let nvswitch = d.gpu_links.as_ref().is_some_and(|l| l.nvswitch_links.is_some());
    let nvlink_version = d.gpu_links.as_ref().and_then(|l| l.nvlink_version);
    if nvlink_version.is_some_and(|v| !(1..=5).contains(&v)) {
        return Err(DescribeError::GpuLinks { origin: origin(), why: "nvlink_version must be 1 to 5".into() });
    }
    Ok(GpuModel { gpus, rates: d.gpu_rates.clone(), links, nvswitch, nvlink_version })
}

/// `7.0` as (7, 0).
fn parse_capability(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn links_of(l: &LinksDescription, count: usize) -> Result<Vec<GpuLink>, String> {
    let mut links: Vec<GpuLink> = Vec::new();
    let mut add = |x: usize, y: usize, kind: GpuLinkKind| -> Result<(), String> {
        if x >= count || y >= count {
            return Err(format!("GPU pair {x}-{y}: there are {count} GPUs"));
        }
        if x == y {
            return Err(format!("GPU pair {x}-{y} joins a GPU to itself"));
        }
        let (a, b) = (x.min(y), x.max(y));
        if links.iter().any(|k| k.a == a && k.b == b) {
            return Err(format!("GPU pair {a}-{b} is listed twice"));
        }
        links.push(GpuLink { a, b, kind });
        Ok(())
    };
    if let Some(n) = l.nvswitch_links {
        if !l.nvlink.is_empty() {
            return Err("nvswitch_links links every pair; nvlink pairs cannot be listed beside it".into());
        }
        if n == 0 {
            return Err("nvswitch_links must be > 0".into());
        }
        for a in 0..count {
            for b in a + 1..count {
                add(a, b, GpuLinkKind::NvLink(n))?;
            }
        }
    }
    for p in &l.nvlink {
        if p.links == 0 {
            return Err(format!("GPU pair {}-{}: links must be > 0", p.gpus[0], p.gpus[1]));
        }
        add(p.gpus[0], p.gpus[1], GpuLinkKind::NvLink(p.links))?;
    }
    for p in &l.pcie_peers {
        add(p[0], p[1], GpuLinkKind::Pcie)?;
    }
    links.sort_by_key(|k| (k.a, k.b));
    Ok(links)
}

/// Builds the machine a description says.
pub fn from_json(text: &str, source: &str) -> Result<Machine, DescribeError> {
    let origin = || source.to_string();
    let d: Description =
        serde_json::from_str(text).map_err(|source| DescribeError::Json { origin: origin(), source })?;
    model_of(&d, source)?;
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

    #[test]
    fn gpu_fields_are_typed_and_checked() {
        let base = r#""hostname":"h","packages":1,"numa_per_package":1,"cores_per_numa":2"#;
        let rates = r#""gpu_rates":{"h2d_pinned_gbs":12,"h2d_pageable_gbs":7,"d2h_pinned_gbs":13,
            "d2h_pageable_gbs":6.5,"d2d_gbs":380,"nvlink_gbs":25,"pcie_peer_gbs":11,"staged_peer_gbs":8,
            "copy_latency_us":4,"nccl_latency_us":0}"#;
        let gpus = r#""gpus":[{"numa":0,"memory_gib":16,"compute_capability":"7.0"},{"numa":0},
            {"numa":0,"compute_capability":"9.0"}]"#;
        let json = |links: &str| format!("{{{base},{gpus},{rates},\"gpu_links\":{links}}}");
        let m = gpu_model(&json(r#"{"nvlink":[{"gpus":[2,0],"links":2}],"pcie_peers":[[1,2]]}"#), "f").unwrap();
        assert_eq!(m.gpus[0], GpuSpec { memory_bytes: Some(16 << 30), compute_capability: Some((7, 0)) });
        assert_eq!(m.gpus[1], GpuSpec { memory_bytes: None, compute_capability: None });
        assert_eq!(m.rates.as_ref().map(|r| (r.nvlink_gbs, r.nccl_latency_us)), Some((25.0, 0.0)));
        assert_eq!(
            m.links,
            vec![GpuLink { a: 0, b: 2, kind: GpuLinkKind::NvLink(2) }, GpuLink { a: 1, b: 2, kind: GpuLinkKind::Pcie }]
        );
        let all = gpu_model(&json(r#"{"nvswitch_links":18}"#), "f").unwrap();
        assert_eq!(all.links.len(), 3);
        assert!(all.links.iter().all(|l| l.kind == GpuLinkKind::NvLink(18)));
        // The placement view accepts the fields and ignores them.
        assert_eq!(from_json(&json("{}"), "f").unwrap().gpus.len(), 3);
        let err = |links: &str| from_json(&json(links), "f").unwrap_err().to_string();
        assert_eq!(err(r#"{"nvlink":[{"gpus":[0,3],"links":1}]}"#), "f: gpu_links: GPU pair 0-3: there are 3 GPUs");
        assert_eq!(
            err(r#"{"nvlink":[{"gpus":[0,1],"links":1}],"pcie_peers":[[1,0]]}"#),
            "f: gpu_links: GPU pair 0-1 is listed twice"
        );
        assert_eq!(err(r#"{"nvlink":[{"gpus":[1,1],"links":1}]}"#), "f: gpu_links: GPU pair 1-1 joins a GPU to itself");
        let bad_cc = format!("{{{base},\"gpus\":[{{\"numa\":0,\"compute_capability\":\"7\"}}]}}");
        assert_eq!(
            from_json(&bad_cc, "f").unwrap_err().to_string(),
            "f: GPU 0: compute_capability '7' is not MAJOR.MINOR"
        );
        let bad_rate = json("{}").replace("\"d2d_gbs\":380", "\"d2d_gbs\":0");
        assert_eq!(from_json(&bad_rate, "f").unwrap_err().to_string(), "f: gpu_rates: d2d_gbs must be > 0");
        let bad_latency = json("{}").replace("\"copy_latency_us\":4", "\"copy_latency_us\":-1");
        assert_eq!(from_json(&bad_latency, "f").unwrap_err().to_string(), "f: gpu_rates: copy_latency_us must be >= 0");
        let unknown = json("{}").replace("\"d2d_gbs\"", "\"d2d\"");
        assert!(from_json(&unknown, "f").unwrap_err().to_string().contains("unknown field `d2d`"));
    }
}
