//! Paths between ranks and their peaks, joined from what each rank knows of
//! its own end ([`RankEnd`]): ranks on one host meet in shared memory, whose
//! peak is the slower end's copy rate; ranks on two hosts meet over their
//! NICs, whose peak is the slower link. A benchmark's traffic (its pairs,
//! or a fan) gives one path per pair and one for the run: the sum of the
//! pairs' peaks, capped by what the NICs they share can carry; a collective
//! is bound by the slowest link any rank's traffic crosses. Pure: the
//! runner gathers the ends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::copy_rate::CopyRate;
use super::gpu::{self, GpuPeak, GpuSide};
use super::link::NicLink;

/// What one rank knows of itself for the paths: gathered with its record
/// entry, so joining them costs no message of its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankEnd {
    pub host: String,
    /// The socket (hwloc package) holding every cpu the rank may use;
    /// None when they span several or the node map is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<usize>,
    /// The rank's network link, or why it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<NicLink>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_unknown: Option<String>,
    /// Its core's copy rate (host memory runs that report a bandwidth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<CopyRate>,
    /// Why there is no copy rate, where there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_unknown: Option<String>,
    /// The GPU holding the rank's buffers, when they are in GPU memory:
    /// two such ranks on one host meet over NVLink or PCIe, not in shared
    /// memory, and one leaving its host crosses the GPU's PCIe link too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuSide>,
}

/// What kind of link bounds a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathClass {
    SharedMemory,
    Network,
    /// Buffers in GPU memory on one host (NVLink, NVSwitch, or PCIe,
    /// peer to peer or through the CPU).
    Gpu,
    /// A run whose pairs take both kinds.
    Mixed,
}

impl PathClass {
    pub fn text(self) -> &'static str {
        match self {
            PathClass::SharedMemory => "shared memory",
            PathClass::Network => "network",
            PathClass::Gpu => "GPU",
            PathClass::Mixed => "mixed",
        }
    }
}

/// One path and its peak; `peak_mbps` None means unknown, and `unknown` says
/// why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathPeak {
    /// What a person reads: `shared memory on node01`, `h1 eth1 -> h2 eth2`.
    pub label: String,
    pub class: PathClass,
    /// The ceiling of the reported bandwidth, 10^6 bytes/s.
    pub peak_mbps: Option<f64>,
    /// The peak as the hardware states it: `200 Gb/s`, `9.81 GB/s copy`.
    pub rate_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// The arithmetic from the sources to the peak.
    pub how: String,
    /// Every figure used, with where it was read or measured.
    pub sources: Vec<String>,
}

impl PathPeak {
    fn unknown(label: String, class: PathClass, why: String) -> PathPeak {
        PathPeak {
            label,
            class,
            peak_mbps: None,
            rate_text: "unknown".into(),
            unknown: Some(why),
            how: String::new(),
            sources: Vec::new(),
        }
    }

    /// `value_mbps` as a percentage of the peak.
    pub fn efficiency(&self, value_mbps: f64) -> Option<f64> {
        self.peak_mbps.filter(|p| *p > 0.0).map(|p| 100.0 * value_mbps / p)
    }
}

/// A rank's end as the runner has it: its rank number and its facts.
pub(crate) type End<'a> = (usize, &'a RankEnd);

fn copy_source(rank: usize, e: &RankEnd, c: &CopyRate) -> String {
    format!("rank {rank} on {}: {} = {:.0} MB/s", e.host, c.method, c.mbps)
}

fn nic_rate_text(l: &NicLink) -> String {
    match &l.pcie {
        Some(p) if p.mbps < l.port_gbps * 125.0 => {
            format!("PCIe {} GT/s x{} ({:.2} GB/s)", p.gts, p.width, p.mbps / 1e3)
        }
        _ => format!("{} Gb/s", l.port_gbps),
    }
}

/// The path from rank `a` to rank `b` (one direction).
pub fn pair((ra, a): End, (rb, b): End) -> PathPeak {
    if a.host != b.host {
        // A GPU's PCIe link lies on the way too (nothing without one).
        return behind_gpus(network_pair((ra, a), (rb, b)), &[(ra, a), (rb, b)]);
    }
    if a.gpu.is_some() || b.gpu.is_some() {
        return gpu_pair(a, b);
    }
    let label = format!("shared memory on {}", a.host);
    let (ca, cb) = match (&a.copy, &b.copy) {
        (Some(ca), Some(cb)) => (ca, cb),
        _ => {
            let why = a.copy_unknown.clone().or_else(|| b.copy_unknown.clone());
            return PathPeak::unknown(label, PathClass::SharedMemory, why.unwrap_or_else(|| "no copy rate".into()));
        }
    };
    let peak = ca.mbps.min(cb.mbps);
    PathPeak {
        label,
        class: PathClass::SharedMemory,
        peak_mbps: Some(peak),
        rate_text: format!("{:.2} GB/s copy", peak / 1e3),
        unknown: None,
        how: "the slower of the two ranks' copy rates".into(),
        sources: vec![copy_source(ra, a, ca), copy_source(rb, b, cb)],
    }
}

/// Two hosts' ranks over their NICs.
fn network_pair((ra, a): End, (rb, b): End) -> PathPeak {
    let name = |e: &RankEnd| format!("{} {}", e.host, e.nic.as_ref().map_or("?", |n| n.nic.as_str()));
    let label = format!("{} -> {}", name(a), name(b));
    match (&a.nic, &b.nic) {
        (Some(la), Some(lb)) => {
            let slow = if la.mbps <= lb.mbps { la } else { lb };
            let mut sources: Vec<String> = la.sources.iter().map(|s| format!("{}: {s}", a.host)).collect();
            sources.extend(lb.sources.iter().map(|s| format!("{}: {s}", b.host)));
            PathPeak {
                label,
                class: PathClass::Network,
                peak_mbps: Some(slow.mbps),
                rate_text: nic_rate_text(slow),
                unknown: None,
                how: "the slower of the two NICs' links (port rate, or its PCIe link where lower)".into(),
                sources,
            }
        }
        _ => {
            let why = [(a, ra), (b, rb)]
                .iter()
                .find_map(|(e, r)| {
                    e.nic.is_none().then(|| format!("rank {r}: {}", e.nic_unknown.as_deref().unwrap_or("no NIC")))
                })
                .unwrap_or_default();
            PathPeak::unknown(label, PathClass::Network, why)
        }
    }
}

/// The class of the path between two ranks, for a pairs matrix: `same
/// socket` or `across sockets` within a host (`shared memory` when a
/// rank's socket is unknown), else the NIC rail the sender leaves by
/// (`rail mlx5_0:1`, or `network` when its NIC is unknown).
pub(crate) fn pair_class(a: &RankEnd, b: &RankEnd) -> String {
    if a.host == b.host {
        return match (a.package, b.package) {
            (Some(x), Some(y)) if x == y => "same socket".into(),
            (Some(_), Some(_)) => "across sockets".into(),
            _ => "shared memory".into(),
        };
    }
    match &a.nic {
        Some(l) => format!("rail {}", l.nic),
        None => "network".into(),
    }
}

fn gpu_name(g: &GpuSide) -> String {
    format!("GPU {} ({})", g.index, g.bus_id)
}

/// A [`GpuPeak`] as a path of `label`.
fn from_gpu(label: String, p: GpuPeak) -> PathPeak {
    let rate_text = format!("{} {}", p.class, p.rate_text());
    match p.peak_mbps {
        Some(_) => PathPeak {
            label,
            class: PathClass::Gpu,
            peak_mbps: p.peak_mbps,
            rate_text,
            unknown: None,
            how: p.how,
            sources: p.sources,
        },
        None => PathPeak::unknown(label, PathClass::Gpu, format!("{}: {}", p.class, p.unknown.unwrap_or_default())),
    }
}

/// Two ranks of one host of which one or both have their buffers in GPU
/// memory: GPU to GPU over their NVLinks (NVML), else over PCIe (the
/// slower of the two links, which the copy crosses whether it goes peer
/// to peer or through host memory); host memory to a GPU over its PCIe
/// link.
fn gpu_pair(a: &RankEnd, b: &RankEnd) -> PathPeak {
    let on = &a.host;
    match (&a.gpu, &b.gpu) {
        (Some(ga), Some(gb)) if ga.bus_id == gb.bus_id => PathPeak::unknown(
            format!("{} on {on}, both ends", gpu_name(ga)),
            PathClass::Gpu,
            "both ranks' buffers are in one GPU's memory, whose bandwidth commbench does not derive".into(),
        ),
        (Some(ga), Some(gb)) => {
            let label = format!("{} -> {} on {on}", gpu_name(ga), gpu_name(gb));
            let (ea, eb) = (ga.end(), gb.end());
            let peak = match (ga.links(), gb.links()) {
                (Ok(la), Ok(lb)) => gpu::nvlink_between(&ea, &eb, &la, &lb, true).unwrap_or_else(|| {
                    gpu::slower_pcie(
                        &ea,
                        &eb,
                        "PCIe",
                        "no NVLink between them in NVML: the slower of the two GPUs' PCIe links (the copy crosses \
                         both, peer to peer or through host memory)",
                    )
                }),
                (Err(why), _) | (_, Err(why)) => GpuPeak::nvlinks_uncounted(&why),
            };
            from_gpu(label, peak)
        }
        (Some(g), None) => from_gpu(format!("{} -> host memory on {on}", gpu_name(g)), gpu::host_link(&g.end())),
        (None, Some(g)) => from_gpu(format!("host memory -> {} on {on}", gpu_name(g)), gpu::host_link(&g.end())),
        (None, None) => unreachable!("gpu_pair is called with a GPU end"),
    }
}

/// `p` (a path between hosts) for ranks whose buffers may be in GPU
/// memory: a GPU's PCIe link lies on the way too, and bounds the path
/// where it is slower than the NICs.
fn behind_gpus(mut p: PathPeak, ends: &[End]) -> PathPeak {
    for (r, e) in ends {
        let Some(g) = &e.gpu else { continue };
        let Some(peak) = p.peak_mbps else { return p };
        match &g.pcie {
            Some(l) => {
                p.sources.push(format!("{}: {}", e.host, gpu::pcie_source(&g.end(), l)));
                if l.mbps < peak {
                    p.peak_mbps = Some(l.mbps);
                    p.rate_text =
                        format!("{} PCIe {} GT/s x{} ({:.2} GB/s)", gpu_name(g), l.gts, l.width, l.mbps / 1e3);
                    p.how = format!("rank {r}'s GPU's PCIe link, slower than the NICs");
                }
            }
            None => {
                let why =
                    format!("rank {r}'s {}: {}", gpu_name(g), g.pcie_unknown.as_deref().unwrap_or("no PCIe link"));
                return PathPeak::unknown(p.label, p.class, why);
            }
        }
    }
    p
}

/// The run's path for a traffic of `edges` (sender, receiver), each
/// carrying data both ways at once when `duplex` (osu_bibw): every pair's
/// path, and the whole's, whose peak bounds the reported bandwidth (the sum
/// over every pair).
pub fn traffic(edges: &[(usize, usize)], duplex: bool, ends: &[RankEnd]) -> (Vec<PathPeak>, PathPeak) {
    let each: Vec<PathPeak> = edges.iter().map(|&(a, b)| pair((a, &ends[a]), (b, &ends[b]))).collect();
    let ways = if duplex { 2.0 } else { 1.0 };
    let both = if duplex { ", both directions at once (x2)" } else { "" };
    if let [one] = each.as_slice() {
        let mut p = one.clone();
        if duplex {
            p.peak_mbps = p.peak_mbps.map(|m| m * 2.0);
            p.how = format!("{}{both}", p.how);
            p.label = p.label.replace(" -> ", " <-> ");
        }
        return (each, p);
    }
    let class = if each.iter().all(|p| p.class == each[0].class) { each[0].class } else { PathClass::Mixed };
    let distinct: std::collections::BTreeSet<&str> = each.iter().map(|p| p.label.as_str()).collect();
    let label = match distinct.len() {
        1 => format!("{} pairs: {}", each.len(), each[0].label),
        n => format!("{} pairs over {n} paths", each.len()),
    };
    if let Some((i, p)) = each.iter().enumerate().find(|(_, p)| p.peak_mbps.is_none()) {
        let (a, b) = edges[i];
        let why = format!("ranks {a} -> {b} ({}): {}", p.label, p.unknown.as_deref().unwrap_or(""));
        return (each.clone(), PathPeak::unknown(label, class, why));
    }
    // Shared-memory pairs add up (their copy rates were measured all at
    // once); network pairs add up to what their NICs carry, each NIC
    // counted once on the sending side and once on the receiving side.
    let mut shm = 0.0;
    let mut net = 0.0;
    let mut tx: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    let mut rx: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for (&(a, b), p) in edges.iter().zip(&each) {
        let peak = p.peak_mbps.unwrap_or(0.0);
        match p.class {
            PathClass::Network => {
                net += peak;
                let (la, lb) = (ends[a].nic.as_ref(), ends[b].nic.as_ref());
                if let (Some(la), Some(lb)) = (la, lb) {
                    tx.insert((&ends[a].host, &la.nic), la.mbps);
                    rx.insert((&ends[b].host, &lb.nic), lb.mbps);
                }
            }
            _ => shm += peak,
        }
    }
    let (tx_cap, rx_cap): (f64, f64) = (tx.values().sum(), rx.values().sum());
    let capped = net.min(tx_cap).min(rx_cap);
    let mut how = format!("the sum of the {} pairs' peaks", each.len());
    if net > 0.0 && capped < net {
        how.push_str(&format!(
            ", the network pairs' capped at what their {} sending and {} receiving NICs carry",
            tx.len(),
            rx.len()
        ));
    }
    how.push_str(both);
    let peak = (shm + capped) * ways;
    let rate_text = match class {
        PathClass::Network if tx.len() == 1 && rx.len() == 1 => each[0].rate_text.clone(),
        _ => format!("{:.2} GB/s", peak / 1e3),
    };
    let mut sources: Vec<String> = each.iter().flat_map(|p| p.sources.iter().cloned()).collect();
    sources.dedup();
    sources.sort();
    sources.dedup();
    let whole = PathPeak { label, class, peak_mbps: Some(peak), rate_text, unknown: None, how, sources };
    (each, whole)
}

/// A collective's bound: the slowest link any rank's traffic crosses, the
/// NIC of a rank whose host holds other ranks' peers elsewhere, and shared
/// memory where a host holds several ranks.
pub fn collective(ends: &[RankEnd]) -> PathPeak {
    let mut per_host: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (r, e) in ends.iter().enumerate() {
        per_host.entry(&e.host).or_default().push(r);
    }
    let mut candidates: Vec<PathPeak> = Vec::new();
    if per_host.len() > 1 {
        // Every rank reaches another host over its NIC.
        for (r, e) in ends.iter().enumerate() {
            let Some(l) = &e.nic else {
                let label = format!("{} {}", e.host, "?");
                let why = format!("rank {r}: {}", e.nic_unknown.as_deref().unwrap_or("no NIC"));
                return PathPeak::unknown(label, PathClass::Network, why);
            };
            let nic = PathPeak {
                label: format!("{} {}", e.host, l.nic),
                class: PathClass::Network,
                peak_mbps: Some(l.mbps),
                rate_text: nic_rate_text(l),
                unknown: None,
                how: String::new(),
                sources: l.sources.iter().map(|s| format!("{}: {s}", e.host)).collect(),
            };
            let nic = behind_gpus(nic, &[(r, e)]);
            if nic.peak_mbps.is_none() {
                return nic;
            }
            candidates.push(nic);
        }
    }
    for ranks in per_host.values().filter(|r| r.len() > 1) {
        for &r in ranks {
            let e = &ends[r];
            if let Some(g) = &e.gpu {
                let peers: Vec<&str> = ranks
                    .iter()
                    .filter(|&&o| o != r)
                    .filter_map(|&o| ends[o].gpu.as_ref().map(|p| p.bus_id.as_str()))
                    .filter(|b| *b != g.bus_id)
                    .collect();
                let end = g.end();
                let peak = match g.links() {
                    Ok(links) => gpu::nvlink_aggregate(&end, &links, &peers).unwrap_or_else(|| gpu::host_link(&end)),
                    Err(why) => GpuPeak::nvlinks_uncounted(&why),
                };
                let p = from_gpu(format!("{} on {}", gpu_name(g), e.host), peak);
                if p.peak_mbps.is_none() {
                    return p;
                }
                candidates.push(p);
                continue;
            }
            let Some(c) = &e.copy else {
                let why = e.copy_unknown.clone().unwrap_or_else(|| "no copy rate".into());
                return PathPeak::unknown(format!("shared memory on {}", e.host), PathClass::SharedMemory, why);
            };
            candidates.push(PathPeak {
                label: format!("shared memory on {}", e.host),
                class: PathClass::SharedMemory,
                peak_mbps: Some(c.mbps),
                rate_text: format!("{:.2} GB/s copy", c.mbps / 1e3),
                unknown: None,
                how: String::new(),
                sources: vec![copy_source(r, e, c)],
            });
        }
    }
    let Some(slowest) =
        candidates.iter().min_by(|a, b| a.peak_mbps.unwrap_or(0.0).total_cmp(&b.peak_mbps.unwrap_or(0.0)))
    else {
        return PathPeak::unknown("one rank".into(), PathClass::SharedMemory, "a single rank crosses no link".into());
    };
    let mut p = slowest.clone();
    p.how = format!("the slowest of the {} links the ranks' traffic crosses", candidates.len());
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peak::pcie::PcieLink;

    fn shm(host: &str, mbps: f64) -> RankEnd {
        RankEnd {
            host: host.into(),
            copy: Some(CopyRate { mbps, bytes: 4 << 20, copies: 5, method: "memcpy of 4 MiB".into() }),
            nic_unknown: Some("no choice".into()),
            ..Default::default()
        }
    }

    fn net(host: &str, nic: &str, gbps: f64, mbps_copy: f64) -> RankEnd {
        RankEnd {
            nic: Some(NicLink {
                nic: nic.into(),
                kind: "InfiniBand".into(),
                port_gbps: gbps,
                pcie: None,
                mbps: gbps * 125.0,
                sources: vec![format!("/sys/class/infiniband/{nic}/ports/1/rate: {gbps} Gb/s")],
            }),
            nic_unknown: None,
            ..shm(host, mbps_copy)
        }
    }

    #[test]
    fn one_host_is_shared_memory_at_the_slower_copy() {
        let ends = [shm("n1", 9000.0), shm("n1", 8000.0)];
        let (each, run) = traffic(&[(0, 1)], false, &ends);
        assert_eq!(each.len(), 1);
        assert_eq!(
            (run.label.as_str(), run.class, run.peak_mbps),
            ("shared memory on n1", PathClass::SharedMemory, Some(8000.0))
        );
        assert_eq!(run.rate_text, "8.00 GB/s copy");
        assert_eq!(run.sources[1], "rank 1 on n1: memcpy of 4 MiB = 8000 MB/s");
        assert_eq!(run.efficiency(4000.0), Some(50.0));
        // osu_bibw: both ways at once.
        let (_, bi) = traffic(&[(0, 1)], true, &ends);
        assert_eq!((bi.peak_mbps, bi.label.as_str()), (Some(16000.0), "shared memory on n1"));
        assert!(bi.how.ends_with("both directions at once (x2)"));
    }

    #[test]
    fn two_hosts_meet_at_the_slower_nic() {
        let ends = [net("n1", "mlx5_0:1", 200.0, 9e3), net("n2", "mlx5_1:1", 100.0, 9e3)];
        let (_, run) = traffic(&[(0, 1)], false, &ends);
        assert_eq!((run.label.as_str(), run.peak_mbps), ("n1 mlx5_0:1 -> n2 mlx5_1:1", Some(12_500.0)));
        assert_eq!(run.rate_text, "100 Gb/s");
        assert_eq!(run.sources[0], "n1: /sys/class/infiniband/mlx5_0:1/ports/1/rate: 200 Gb/s");
        let (_, bi) = traffic(&[(0, 1)], true, &ends);
        assert_eq!((bi.label.as_str(), bi.peak_mbps), ("n1 mlx5_0:1 <-> n2 mlx5_1:1", Some(25_000.0)));
        // A PCIe link below the port's rate names itself.
        let mut slow = ends.clone();
        let l = slow[1].nic.as_mut().unwrap();
        l.port_gbps = 200.0;
        l.pcie = Some(PcieLink { gts: 8.0, width: 8, encoding: "128b/130b".into(), mbps: 7876.9, source: "x".into() });
        l.mbps = 7876.9;
        assert_eq!(traffic(&[(0, 1)], false, &slow).1.rate_text, "PCIe 8 GT/s x8 (7.88 GB/s)");
        // A rank whose NIC is unknown makes the path unknown, saying why.
        let mut unk = ends.clone();
        unk[1].nic = None;
        unk[1].nic_unknown = Some("2 devices of n2 are up".into());
        let (_, u) = traffic(&[(0, 1)], false, &unk);
        assert_eq!((u.peak_mbps, u.unknown.as_deref()), (None, Some("rank 1: 2 devices of n2 are up")));
        assert_eq!(u.rate_text, "unknown");
    }

    #[test]
    fn many_pairs_share_their_nics() {
        // osu_mbw_mr with 4 ranks per host on two hosts and one HDR NIC
        // each: four 25 GB/s paths, but one NIC each side.
        let mut ends: Vec<RankEnd> = (0..4).map(|_| net("n1", "mlx5_0:1", 200.0, 9e3)).collect();
        ends.extend((0..4).map(|_| net("n2", "mlx5_0:1", 200.0, 9e3)));
        let edges: Vec<(usize, usize)> = (0..4).map(|i| (i, i + 4)).collect();
        let (each, run) = traffic(&edges, false, &ends);
        assert_eq!(each.len(), 4);
        assert_eq!((run.peak_mbps, run.rate_text.as_str()), (Some(25_000.0), "200 Gb/s"));
        assert_eq!(run.label, "4 pairs: n1 mlx5_0:1 -> n2 mlx5_0:1");
        assert!(run.how.contains("capped at what their 1 sending and 1 receiving NICs carry"), "{}", run.how);
        // On one host the pairs' copy rates add up.
        let ends: Vec<RankEnd> = (0..4).map(|i| shm("n1", 5000.0 + i as f64)).collect();
        let (_, run) = traffic(&[(0, 2), (1, 3)], false, &ends);
        assert_eq!((run.peak_mbps, run.class), (Some(10_001.0), PathClass::SharedMemory));
        assert_eq!(run.label, "2 pairs: shared memory on n1");
    }

    /// GPU `i` (bus 0000:0i:00.0) of a DGX-1-like host: a gen3 x16 link
    /// and `links` NVLinks 2.0 to (GPU, count).
    fn gpu_end(host: &str, i: usize, links: &[(usize, u32)]) -> RankEnd {
        let pcie = crate::peak::pcie::link("8.0 GT/s PCIe", "16", format!("gpu{i}")).unwrap();
        let mut active = Vec::new();
        for &(j, n) in links {
            for _ in 0..n {
                let remote_bus_id = format!("0000:0{j}:00.0");
                active.push(crate::gpu::nvml::ActiveLink {
                    link: active.len() as u32,
                    version: 2,
                    remote_bus_id,
                    remote_is_gpu: true,
                });
            }
        }
        RankEnd {
            gpu: Some(GpuSide {
                index: i,
                bus_id: format!("0000:0{i}:00.0"),
                buffers: "device".into(),
                pcie: Some(pcie),
                nvlinks: Some(active),
                ..Default::default()
            }),
            ..net(host, "mlx5_0:1", 100.0, 9000.0)
        }
    }

    #[test]
    fn gpu_buffers_take_nvlinks_pcie_or_the_nic_behind_the_gpu() {
        let g0 = gpu_end("n1", 0, &[(3, 2), (1, 1), (2, 1), (4, 1)]);
        let g3 = gpu_end("n1", 3, &[(0, 2), (1, 1), (2, 1), (7, 1)]);
        let g5 = gpu_end("n1", 5, &[(1, 1), (4, 2), (6, 1), (7, 1)]);
        let p = pair((0, &g0), (1, &g3));
        assert_eq!(p.label, "GPU 0 (0000:00:00.0) -> GPU 3 (0000:03:00.0) on n1");
        assert_eq!(
            (p.class, p.peak_mbps, p.rate_text.as_str()),
            (PathClass::Gpu, Some(50_000.0), "NVLink x2 50.00 GB/s")
        );
        assert_eq!(p.sources, vec!["GPU 0 (0000:00:00.0): NVML: 2 active NVLinks to GPU 3, version 2.0"]);
        // No NVLink between 0 and 5: the slower PCIe link, both named.
        let p = pair((0, &g0), (1, &g5));
        assert_eq!((p.rate_text.as_str(), p.peak_mbps.map(f64::round)), ("PCIe 15.75 GB/s", Some(15_754.0)));
        assert_eq!(p.sources.len(), 2);
        // Host memory on one side: the GPU's own PCIe link.
        let h = shm("n1", 9000.0);
        let p = pair((0, &h), (1, &g3));
        assert_eq!(
            (p.label.as_str(), p.rate_text.as_str()),
            ("host memory -> GPU 3 (0000:03:00.0) on n1", "PCIe link 15.75 GB/s")
        );
        // Without NVML the count is unknown, and says why.
        let mut blind = g3.clone();
        blind.gpu.as_mut().unwrap().nvlinks = None;
        blind.gpu.as_mut().unwrap().nvlinks_unknown = Some("NVML not found".into());
        let p = pair((0, &g0), (1, &blind));
        assert_eq!(p.peak_mbps, None);
        assert_eq!(p.unknown.as_deref(), Some("NVLink?: NVML not found: the NVLink count is not known"));
        // A collective on one host: each GPU's links to the job's other
        // GPUs together, the slowest GPU's bound: with 3 and 5, GPU 0 has
        // 2 links, GPU 3 has 2, GPU 5 none (its PCIe link bounds it).
        let c = collective(&[g0.clone(), g3.clone()]);
        assert_eq!((c.class, c.peak_mbps), (PathClass::Gpu, Some(50_000.0)));
        let c = collective(&[g0.clone(), g3.clone(), g5.clone()]);
        assert_eq!((c.label.as_str(), c.peak_mbps.map(f64::round)), ("GPU 5 (0000:05:00.0) on n1", Some(15_754.0)));
        // Across hosts the NIC bounds it, or the GPU's link where slower.
        let far = gpu_end("n2", 3, &[]);
        let p = pair((0, &g0), (1, &far));
        assert_eq!((p.class, p.peak_mbps), (PathClass::Network, Some(12_500.0)));
        assert_eq!(p.sources.len(), 4, "{:?}", p.sources);
        let (mut fast0, mut fast1) = (g0.clone(), far.clone());
        for e in [&mut fast0, &mut fast1] {
            e.nic.as_mut().unwrap().mbps = 50_000.0;
        }
        let p = pair((0, &fast0), (1, &fast1));
        assert_eq!(p.peak_mbps.map(f64::round), Some(15_754.0));
        assert_eq!(p.how, "rank 0's GPU's PCIe link, slower than the NICs");
        assert_eq!(collective(&[fast0, fast1]).peak_mbps.map(f64::round), Some(15_754.0));
        // Two ranks on one GPU: nothing is claimed.
        assert_eq!(pair((0, &g0), (1, &g0.clone())).peak_mbps, None);
    }

    #[test]
    fn classes_of_pairs() {
        let (mut a, mut b) = (shm("n1", 1.0), shm("n1", 1.0));
        assert_eq!(pair_class(&a, &b), "shared memory");
        (a.package, b.package) = (Some(0), Some(0));
        assert_eq!(pair_class(&a, &b), "same socket");
        b.package = Some(1);
        assert_eq!(pair_class(&a, &b), "across sockets");
        let (x, y) = (net("n1", "mlx5_1:1", 200.0, 1.0), net("n2", "mlx5_1:1", 200.0, 1.0));
        assert_eq!(pair_class(&x, &y), "rail mlx5_1:1");
        assert_eq!(pair_class(&a, &y), "network");
    }

    #[test]
    fn a_collective_is_bound_by_its_slowest_link() {
        let ends = [shm("n1", 9000.0), shm("n1", 7000.0), shm("n1", 8000.0)];
        let p = collective(&ends);
        assert_eq!((p.label.as_str(), p.peak_mbps), ("shared memory on n1", Some(7000.0)));
        let ends = [
            net("n1", "a:1", 200.0, 50e3),
            net("n1", "a:1", 200.0, 50e3),
            net("n2", "b:1", 100.0, 9e3),
            net("n3", "c:1", 200.0, 9e3),
        ];
        let p = collective(&ends);
        assert_eq!((p.label.as_str(), p.peak_mbps, p.class), ("n2 b:1", Some(12_500.0), PathClass::Network));
        assert_eq!(p.how, "the slowest of the 6 links the ranks' traffic crosses");
        // Shared memory slower than the NIC bounds it instead.
        let ends = [net("n1", "a:1", 400.0, 20_000.0), net("n1", "a:1", 400.0, 30_000.0), net("n2", "b:1", 400.0, 9e3)];
        assert_eq!(collective(&ends).peak_mbps, Some(20_000.0));
        let one = collective(&[shm("n1", 1.0)]);
        assert_eq!(one.unknown.as_deref(), Some("a single rank crosses no link"));
    }
}
