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
    /// Where the rank's buffers are when not in host memory (`cuda`):
    /// two such ranks on one host meet GPU to GPU, not in shared memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_memory: Option<String>,
}

/// What kind of link bounds a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathClass {
    SharedMemory,
    Network,
    /// Buffers in GPU memory on one host (NVLink, PCIe, or through the
    /// CPU).
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
pub type End<'a> = (usize, &'a RankEnd);

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
    if let (true, Some(mem)) = (a.host == b.host, a.device_memory.as_ref().or(b.device_memory.as_ref())) {
        let why = a.copy_unknown.clone().or_else(|| b.copy_unknown.clone()).unwrap_or_default();
        return PathPeak::unknown(format!("{mem} memory on {}", a.host), PathClass::Gpu, why);
    }
    if a.host == b.host {
        let label = format!("shared memory on {}", a.host);
        let (ca, cb) = match (&a.copy, &b.copy) {
            (Some(ca), Some(cb)) => (ca, cb),
            _ => {
                let why = a.copy_unknown.clone().or_else(|| b.copy_unknown.clone());
                return PathPeak::unknown(label, PathClass::SharedMemory, why.unwrap_or_else(|| "no copy rate".into()));
            }
        };
        let peak = ca.mbps.min(cb.mbps);
        return PathPeak {
            label,
            class: PathClass::SharedMemory,
            peak_mbps: Some(peak),
            rate_text: format!("{:.2} GB/s copy", peak / 1e3),
            unknown: None,
            how: "the slower of the two ranks' copy rates".into(),
            sources: vec![copy_source(ra, a, ca), copy_source(rb, b, cb)],
        };
    }
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
pub fn pair_class(a: &RankEnd, b: &RankEnd) -> String {
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
            candidates.push(PathPeak {
                label: format!("{} {}", e.host, l.nic),
                class: PathClass::Network,
                peak_mbps: Some(l.mbps),
                rate_text: nic_rate_text(l),
                unknown: None,
                how: String::new(),
                sources: l.sources.iter().map(|s| format!("{}: {s}", e.host)).collect(),
            });
        }
    }
    for ranks in per_host.values().filter(|r| r.len() > 1) {
        for &r in ranks {
            let e = &ends[r];
            if let Some(mem) = &e.device_memory {
                let why = e.copy_unknown.clone().unwrap_or_default();
                return PathPeak::unknown(format!("{mem} memory on {}", e.host), PathClass::Gpu, why);
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

    #[test]
    fn gpu_buffers_on_one_host_are_not_shared_memory() {
        let gpu = |h: &str| RankEnd {
            host: h.into(),
            device_memory: Some("cuda".into()),
            copy_unknown: Some("not derived yet".into()),
            ..Default::default()
        };
        let p = pair((0, &gpu("n1")), (1, &gpu("n1")));
        assert_eq!((p.label.as_str(), p.class, p.peak_mbps), ("cuda memory on n1", PathClass::Gpu, None));
        assert_eq!(p.unknown.as_deref(), Some("not derived yet"));
        assert_eq!(collective(&[gpu("n1"), gpu("n1")]).class, PathClass::Gpu);
        // Across hosts the NIC still bounds it.
        let mut a = net("n1", "mlx5_0:1", 200.0, 1.0);
        a.device_memory = Some("cuda".into());
        assert_eq!(pair((0, &a), (1, &net("n2", "mlx5_0:1", 200.0, 1.0))).peak_mbps, Some(25_000.0));
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
