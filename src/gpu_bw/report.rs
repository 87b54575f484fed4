//! The text `gpu-bw` prints: the GPUs, what lies between each pair, the
//! per-GPU table of host and on-GPU copies, the GPU-by-GPU matrices in the
//! layout p2pBandwidthLatencyTest users read (a `D\D` corner, one column
//! per destination GPU, values with two decimals), and the verdict of
//! `--min-bw`. Pure functions of the results.

use std::fmt::Write;

use super::options::Config;
use super::results::{HostMemory, Kind, MatrixId, Measurement};
use super::topology::{GpuFacts, PairPath};
use crate::bytes::human_bytes;
use crate::matrix::Matrix;
use crate::text::aligned_columns;

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "?".into(),
    }
}

/// The opening lines: host, driver, and one line per GPU.
pub(crate) fn gpu_list(host: &str, driver: Option<&str>, gpus: &[GpuFacts]) -> String {
    let mut s = String::new();
    let plural = if gpus.len() == 1 { "" } else { "s" };
    let _ = write!(s, "commbench gpu-bw on {host}: {} GPU{plural}", gpus.len());
    if let Some(v) = driver {
        let _ = write!(s, ", CUDA driver {v}");
    }
    s.push('\n');
    for g in gpus {
        let _ = write!(s, "GPU {}: {}", g.index, g.name);
        if let Some(id) = &g.pci_bus_id {
            let _ = write!(s, ", PCI {id}");
        }
        match g.numa_node {
            Some(n) => {
                let _ = write!(s, ", NUMA node {n}");
            }
            None => s.push_str(", NUMA node unknown"),
        }
        if let Some(b) = g.memory_bytes {
            let _ = write!(s, ", {}", human_bytes(u128::from(b)));
        }
        s.push('\n');
    }
    s
}

/// What lies between each ordered pair.
pub(crate) fn path_table(paths: &[PairPath]) -> String {
    if paths.is_empty() {
        return String::new();
    }
    let mut rows = vec![[
        "src".to_string(),
        "dst".into(),
        "peer access".into(),
        "native atomics".into(),
        "perf rank".into(),
        "path".into(),
    ]];
    for p in paths {
        let a = &p.attributes;
        rows.push([
            p.src.to_string(),
            p.dst.to_string(),
            yes_no(a.can_access_peer),
            yes_no(a.native_atomics),
            a.performance_rank.map_or("?".into(), |r| r.to_string()),
            p.label.clone(),
        ]);
    }
    let mut s = String::from(
        "\nGPU pairs (peer access and atomics from the CUDA driver; path from the PCI tree, NUMA nodes and \
         sockets; NVLink? = native atomics between the GPUs, which PCIe peers lack)\n",
    );
    for line in aligned_columns(&rows) {
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// The columns of the per-GPU table: (heading, kind, host memory).
const SINGLE_COLUMNS: [(&str, Kind, Option<HostMemory>); 5] = [
    ("H2D pinned", Kind::H2d, Some(HostMemory::Pinned)),
    ("D2H pinned", Kind::D2h, Some(HostMemory::Pinned)),
    ("H2D pageable", Kind::H2d, Some(HostMemory::Pageable)),
    ("D2H pageable", Kind::D2h, Some(HostMemory::Pageable)),
    ("D2D (read+write)", Kind::D2d, None),
];

/// The GPU a single-GPU measurement belongs to.
fn gpu_of(m: &Measurement) -> Option<usize> {
    m.dst.or(m.src)
}

/// The per-GPU table (GB/s) of host<->GPU and on-GPU copies; only the
/// columns that were measured. Empty when none were.
pub(crate) fn single_gpu_table(cfg: &Config, gpus: &[usize], ms: &[Measurement]) -> String {
    let single: Vec<&Measurement> = ms.iter().filter(|m| matches!(m.kind, Kind::H2d | Kind::D2h | Kind::D2d)).collect();
    let columns: Vec<_> = SINGLE_COLUMNS
        .iter()
        .filter(|(_, k, mem)| single.iter().any(|m| m.kind == *k && m.host_memory == *mem))
        .collect();
    if columns.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nHost and on-GPU copies (GB/s): {} bytes, {} copies per timing; pinned and on-GPU: GPU events, \
         pageable: host clock\n",
        cfg.host_bytes, cfg.host_reps
    );
    let mut head = format!("{:>5}", "GPU");
    for (name, ..) in &columns {
        let _ = write!(head, "  {name:>16}");
    }
    s.push_str(&head);
    s.push('\n');
    for &g in gpus {
        let mut line = format!("{g:>5}");
        for (_, k, mem) in &columns {
            let v = single.iter().find(|m| m.kind == *k && m.host_memory == *mem && gpu_of(m) == Some(g));
            match v {
                Some(m) => {
                    let _ = write!(line, "  {:>16.2}", m.value);
                }
                None => {
                    let _ = write!(line, "  {:>16}", "-");
                }
            }
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// One matrix: a title, a `D\D` corner and a column per GPU, then a row
/// per source GPU; `-` where nothing was measured.
pub(crate) fn matrix_text(title: &str, m: &Matrix, gpus: &[usize]) -> String {
    let mut s = format!("{title}\n   D\\D");
    for &g in gpus {
        let _ = write!(s, "{g:>6} ");
    }
    s.push('\n');
    for &r in gpus {
        let _ = write!(s, "{r:>6} ");
        for &c in gpus {
            match m.get(r, c) {
                Some(v) => {
                    let _ = write!(s, "{v:>6.2} ");
                }
                None => {
                    let _ = write!(s, "{:>6} ", "-");
                }
            }
        }
        s.push('\n');
    }
    s
}

/// The GPU-to-GPU section: what was copied, then every matrix that holds
/// a value. Empty when no pair test ran.
pub(crate) fn pair_section(cfg: &Config, devices: usize, gpus: &[usize], ms: &[Measurement]) -> String {
    let mut s = String::new();
    let mut said = false;
    for id in MatrixId::ALL {
        let m = id.matrix(devices, ms);
        if m.is_empty() {
            continue;
        }
        if !said {
            said = true;
            let _ = writeln!(
                s,
                "\nGPU-to-GPU copies: rows are source GPUs, columns destination GPUs; bandwidth {} bytes x {} \
                 copies per timing, latency {} bytes x {}; the diagonal is a copy within one GPU (bytes counted \
                 twice); - not measured (P2P=Enabled needs peer access both ways)",
                cfg.peer_bytes, cfg.peer_reps, cfg.latency_bytes, cfg.latency_reps
            );
        }
        s.push('\n');
        s.push_str(&matrix_text(&id.title(), &m, gpus));
    }
    s
}

/// One ordered pair below the floor (or without peer access).
#[derive(Clone, Debug, PartialEq)]
pub struct Shortfall {
    pub src: usize,
    pub dst: usize,
    /// GB/s with peer access, None when there was no such timing.
    pub gbps: Option<f64>,
}

/// The outcome of `--min-bw` over the one-way P2P=Enabled matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The floor in GB/s.
    pub min_gbps: f64,
    /// Ordered pairs judged.
    pub judged: usize,
    pub failing: Vec<Shortfall>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.failing.is_empty()
    }
}

/// Judges every ordered pair of different `gpus`: its one-way bandwidth
/// with peer access must reach `min_bw` (bytes/s); a pair with no such
/// timing fails.
pub fn judge(min_bw: f64, gpus: &[usize], ms: &[Measurement], devices: usize) -> Verdict {
    let on = MatrixId { kind: Kind::P2pUni, peer_access: true }.matrix(devices, ms);
    let min_gbps = min_bw / 1e9;
    let mut judged = 0;
    let mut failing = Vec::new();
    for &s in gpus {
        for &d in gpus.iter().filter(|&&d| d != s) {
            judged += 1;
            let v = on.get(s, d);
            if v.is_none_or(|v| v < min_gbps) {
                failing.push(Shortfall { src: s, dst: d, gbps: v });
            }
        }
    }
    Verdict { min_gbps, judged, failing }
}

/// The verdict lines, worst first; `paths` supply each pair's label.
pub(crate) fn verdict_text(v: &Verdict, paths: &[PairPath]) -> String {
    let floor = format!("{:.2} GB/s", v.min_gbps);
    if v.judged == 0 {
        return format!("\nNothing to judge against {floor}: fewer than two GPUs\n");
    }
    if v.passed() {
        return format!("\nPASS: all {} GPU pairs reach {floor} one way with peer access\n", v.judged);
    }
    let mut worst = v.failing.clone();
    worst.sort_by(|a, b| a.gbps.unwrap_or(-1.0).total_cmp(&b.gbps.unwrap_or(-1.0)));
    let mut s = format!("\nFAIL: {} of {} GPU pairs below {floor} one way with peer access\n", worst.len(), v.judged);
    for f in &worst {
        let label = paths.iter().find(|p| p.src == f.src && p.dst == f.dst).map_or("unknown", |p| p.label.as_str());
        match f.gbps {
            Some(x) => {
                let _ = writeln!(s, "  GPU {} -> GPU {}: {x:.2} GB/s ({label})", f.src, f.dst);
            }
            None => {
                let _ = writeln!(s, "  GPU {} -> GPU {}: no peer access ({label})", f.src, f.dst);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::options::ResultsDest;
    use crate::gpu_bw::options::Test;
    use crate::gpu_bw::results::Clock;
    use crate::gpu_bw::topology::{PciRelation, PeerAttributes};

    fn cfg() -> Config {
        Config {
            tests: Test::ALL.to_vec(),
            gpus: None,
            host_bytes: 32_000_000,
            host_reps: 100,
            peer_bytes: 160_000_000,
            peer_reps: 5,
            latency_bytes: 16,
            latency_reps: 100,
            min_bw: None,
            min_efficiency: None,
            results: ResultsDest::Off,
            machine: None,
        }
    }

    /// A one-way timing whose value comes out as `gbps`.
    fn uni(s: usize, d: usize, peer: Option<bool>, gbps: f64) -> Measurement {
        let shape = (1_000_000_000, 1, 1);
        let secs = if s == d { 2.0 / gbps } else { 1.0 / gbps };
        Measurement::bandwidth(Kind::P2pUni, Some(s), Some(d), None, peer, shape, secs, Clock::GpuEvents)
    }

    #[test]
    fn matrix_layout() {
        let mut m = Matrix::new(3);
        m.set(0, 0, 1524.594);
        m.set(0, 2, 11.437);
        m.set(2, 0, 11.383);
        m.set(2, 2, 3.0);
        let text = matrix_text("Unidirectional bandwidth, P2P=Disabled (GB/s)", &m, &[0, 2]);
        assert_eq!(
            text,
            "Unidirectional bandwidth, P2P=Disabled (GB/s)\n   D\\D     0      2 \n     0 1524.59  11.44 \n     2  \
             11.38   3.00 \n"
        );
        let mut gap = Matrix::new(2);
        gap.set(0, 0, 1.0);
        assert_eq!(
            matrix_text("t", &gap, &[0, 1]),
            "t\n   D\\D     0      1 \n     0   1.00      - \n     1      -      - \n"
        );
    }

    #[test]
    fn pair_section_prints_only_measured_matrices() {
        let ms = vec![uni(0, 0, None, 800.0), uni(0, 1, Some(false), 10.0), uni(1, 0, Some(false), 12.5)];
        let s = pair_section(&cfg(), 2, &[0, 1], &ms);
        assert!(s.contains("bandwidth 160000000 bytes x 5 copies per timing, latency 16 bytes x 100"), "{s}");
        let off =
            "Unidirectional bandwidth, P2P=Disabled (GB/s)\n   D\\D     0      1 \n     0 800.00  10.00 \n     1  \
                   12.50      - \n";
        assert!(s.contains(off), "{s}");
        // The diagonal alone fills the P2P=Enabled matrix too.
        assert!(s.contains("Unidirectional bandwidth, P2P=Enabled (GB/s)\n   D\\D     0      1 \n     0 800.00      - \n     1      -      - \n"), "{s}");
        assert!(!s.contains("Bidirectional") && !s.contains("Latency"));
        assert_eq!(pair_section(&cfg(), 2, &[0, 1], &[]), "");
    }

    #[test]
    fn single_gpu_table_layout() {
        let shape = (32_000_000, 100, 1);
        let ms = vec![
            Measurement::bandwidth(
                Kind::H2d,
                None,
                Some(0),
                Some(HostMemory::Pinned),
                None,
                shape,
                0.128,
                Clock::GpuEvents,
            ),
            Measurement::bandwidth(Kind::D2d, Some(0), Some(0), None, None, shape, 0.004, Clock::GpuEvents),
            Measurement::bandwidth(
                Kind::H2d,
                None,
                Some(1),
                Some(HostMemory::Pinned),
                None,
                shape,
                0.16,
                Clock::GpuEvents,
            ),
        ];
        let s = single_gpu_table(&cfg(), &[0, 1], &ms);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "Host and on-GPU copies (GB/s): 32000000 bytes, 100 copies per timing; pinned and on-GPU: GPU events, pageable: host clock");
        assert_eq!(lines[2], "  GPU        H2D pinned  D2D (read+write)");
        assert_eq!(lines[3], "    0             25.00           1600.00");
        assert_eq!(lines[4], "    1             20.00                 -");
        assert_eq!(single_gpu_table(&cfg(), &[0], &[]), "");
    }

    #[test]
    fn gpu_list_and_paths() {
        let g = GpuFacts {
            index: 0,
            name: "NVIDIA H200".into(),
            pci_bus_id: Some("0000:18:00.0".into()),
            numa_node: Some(0),
            package: Some(0),
            memory_bytes: Some(150_000_000_000),
            pci_path: vec![],
        };
        let h = GpuFacts { index: 1, pci_bus_id: None, numa_node: None, memory_bytes: None, ..g.clone() };
        assert_eq!(
            gpu_list("node1", Some("12.8"), &[g, h]),
            "commbench gpu-bw on node1: 2 GPUs, CUDA driver 12.8\nGPU 0: NVIDIA H200, PCI 0000:18:00.0, NUMA node \
             0, 139.7 GiB\nGPU 1: NVIDIA H200, NUMA node unknown\n"
        );
        let p = PairPath {
            src: 0,
            dst: 1,
            attributes: PeerAttributes {
                can_access_peer: Some(true),
                access_supported: Some(true),
                native_atomics: Some(true),
                performance_rank: Some(0),
            },
            pci: PciRelation::Unknown,
            label: "NVLink?".into(),
            peak: None,
        };
        let t = path_table(&[p]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[2], "src  dst  peer access  native atomics  perf rank  path");
        assert_eq!(lines[3], "0    1    yes          yes             0          NVLink?");
        assert_eq!(path_table(&[]), "");
    }

    #[test]
    fn verdict_fails_slow_pairs_and_pairs_without_peer_access() {
        let ms = vec![
            uni(0, 0, None, 1000.0),
            uni(0, 1, Some(true), 350.0),
            uni(1, 0, Some(true), 250.0),
            uni(0, 1, Some(false), 20.0),
            uni(0, 2, Some(false), 20.0),
        ];
        let v = judge(300e9, &[0, 1, 2], &ms, 3);
        assert_eq!(v.judged, 6);
        assert_eq!(v.failing.len(), 5, "{v:?}");
        assert!(v.failing.contains(&Shortfall { src: 0, dst: 2, gbps: None }));
        let t = verdict_text(&v, &[]);
        assert!(t.starts_with("\nFAIL: 5 of 6 GPU pairs below 300.00 GB/s one way with peer access\n"), "{t}");
        assert!(t.contains("  GPU 1 -> GPU 0: 250.00 GB/s (unknown)\n"), "{t}");
        assert!(t.contains("  GPU 0 -> GPU 2: no peer access (unknown)\n"), "{t}");
        let ok = judge(200e9, &[0, 1], &ms, 3);
        assert!(ok.passed());
        assert_eq!(verdict_text(&ok, &[]), "\nPASS: all 2 GPU pairs reach 200.00 GB/s one way with peer access\n");
        let none = judge(200e9, &[0], &ms, 3);
        assert_eq!((none.judged, none.passed()), (0, true));
        assert!(verdict_text(&none, &[]).contains("Nothing to judge"));
    }
}
