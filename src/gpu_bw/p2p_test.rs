//! `p2pBandwidthLatencyTest`, the drop-in for CUDA's sample of that name:
//! its options (`--p2p_read`, `--sm_copy`, `--numElems=N`, `--help`; read
//! with the samples' grammar), its device list, peer-access lines and
//! connectivity matrix, and its matrices with their titles and number
//! formats: one-way bandwidth with P2P off and on (writes, and reads with
//! `--p2p_read`), both ways at once, and latency in the GPU's and the
//! host's time, each timed as the sample times it
//! ([`crate::gpu_bw::measure::peer_matrix`]). With `--sm_copy` the copies
//! between GPUs with peer access on go by the sample's grid-stride copy
//! kernel (src/gpu/kernels.cu, compiled by NVRTC at run time, its grid
//! sized by CUDA's occupancy calculator) instead of the copy engines;
//! without NVRTC that is one line on stderr, status 1. Every value is
//! also a cell of the results CSV, judged against its path's peak
//! ([`crate::gpu_bw::cells`]); commbench's own `--min-efficiency=PCT`
//! names the cells below that share on stderr and exits 1.

use super::cells::{self, Cell, CopyRecord, Outputs, Unit};
use super::driver::{self, Device};
use super::kernels::{KernelError, Kernels};
use super::measure::peer_matrix::{Engine, Grid, PeerMatrix, Transfer, BANDWIDTH_REPS, LATENCY_BYTES, LATENCY_REPS};
use super::measure::{Lane, PairBuffers};
use super::out;
use super::sample_args::Args;
use super::survey::Survey;
use crate::diag::say;
use crate::report::record::RunStatus;

const NAME: &str = "p2pBandwidthLatencyTest";

/// The sample's default copy: 40,000,000 ints.
const DEFAULT_ELEMS: i32 = 40_000_000;

/// Our help: the sample's options, in our words.
fn help() -> String {
    [
        "Usage:  p2pBandwidthLatencyTest [OPTION]...",
        "Bandwidth and latency of copies between every pair of GPUs, with peer access off and on",
        "(commbench's drop-in for CUDA's sample).",
        "",
        "Options:",
        "--help\t\tThis text",
        "--p2p_read\tAlso the matrices of copies that read from the peer (writes are always shown)",
        "--sm_copy                      Copies between GPUs with peer access by a kernel, not the copy engines",
        "--numElems=<NUM_OF_INT_ELEMS>  Ints per bandwidth copy (default 40000000)",
        "",
    ]
    .join("\n")
}

/// The header row of a matrix (`   D\D` or `   GPU`, then each column).
fn header(corner: &str, n: usize) -> String {
    let mut t = corner.to_string();
    for j in 0..n {
        t.push_str(&format!("{j:6} "));
    }
    t.push('\n');
    t
}

/// A matrix under its header: each row's number, then each value with
/// two decimals, six wide, a space after each.
fn grid(corner: &str, g: &Grid) -> String {
    let mut t = header(corner, g.len());
    for (i, row) in g.iter().enumerate() {
        t.push_str(&format!("{i:6} "));
        for v in row {
            t.push_str(&format!("{v:6.2} "));
        }
        t.push('\n');
    }
    t
}

/// The connectivity matrix: 1 where the row's GPU can map the column's
/// memory (and on the diagonal).
fn connectivity(access: &[Vec<bool>]) -> String {
    let mut t = String::from("P2P Connectivity Matrix\n     D\\D");
    for j in 0..access.len() {
        t.push_str(&format!("{j:6}"));
    }
    t.push('\n');
    for (i, row) in access.iter().enumerate() {
        t.push_str(&format!("{i:6}\t"));
        for (j, &a) in row.iter().enumerate() {
            t.push_str(&format!("{:6}", u8::from(a || i == j)));
        }
        t.push('\n');
    }
    t
}

/// The peer-access lines and the sample's note after them.
fn access_lines(access: &[Vec<bool>]) -> String {
    let mut t = String::new();
    for (i, row) in access.iter().enumerate() {
        for (j, &a) in row.iter().enumerate() {
            if i != j {
                t.push_str(&format!("Device={i} {} Access Peer Device={j}\n", if a { "CAN" } else { "CANNOT" }));
            }
        }
    }
    t.push_str(
        "\n***NOTE: In case a device doesn't have P2P access to other one, it falls back to normal memcopy procedure.\nSo you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\n",
    );
    t
}

/// A device line: number, name and PCI location in hex.
fn device_line(i: usize, name: &str, bus: i32, device: i32, domain: i32) -> String {
    format!("Device: {i}, {name}, pciBusID: {bus:x}, pciDeviceID: {device:x}, pciDomainID:{domain:x}\n")
}

/// What one printed matrix was: its test's name in the CSV, the matrix
/// (latency: `gpu` or `cpu` time), which way its copies went, with peer
/// access where the sample turns it on, and how they were counted.
struct Shown<'t> {
    test: &'t str,
    matrix: &'t str,
    p2p: bool,
    way: Transfer,
    both_ways: bool,
    bytes: usize,
    loops: usize,
    unit: Unit,
}

/// The cells of a printed matrix (`access[i][j]`: GPU i can map GPU j's
/// memory). A one-way copy in row i goes from GPU i to the column's GPU
/// (reads: the other way), both ways between them; within a GPU, from
/// the GPU to itself.
fn grid_cells(g: &Grid, shown: &Shown, access: &[Vec<bool>], sm: bool) -> Vec<Cell> {
    let mut out = Vec::new();
    for (i, row) in g.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let (from, to) = if shown.way == Transfer::Read && !shown.both_ways { (j, i) } else { (i, j) };
            let peer = i != j && shown.p2p && access[i][j];
            out.push(Cell {
                test: shown.test.to_string(),
                // The kernel copies only where peer access is on.
                engine: if sm && peer { "sm" } else { "ce" },
                matrix: shown.matrix.to_string(),
                row: Some(i),
                column: Some(j),
                from: format!("gpu{from}"),
                to: format!("gpu{to}"),
                host_memory: "",
                peer_access: (i != j).then_some(peer),
                bytes: shown.bytes as u64,
                loops: Some(shown.loops as u64),
                samples: Some(1),
                statistic: "",
                value: v,
                unit: shown.unit,
                both_ways: shown.both_ways,
                judged: true,
            });
        }
    }
    out
}

/// The matrices, each printed as it is done and its cells kept.
fn matrices(
    devices: &[Device],
    elems: usize,
    read: bool,
    access: &[Vec<bool>],
    engine: Engine,
    res: &mut Outputs<CopyRecord>,
) -> Result<(), driver::CudaError> {
    let sm = matches!(engine, Engine::Sm(_));
    let bytes = elems * 4;
    let lanes = devices.iter().map(Lane::new).collect::<Result<Vec<_>, _>>()?;
    let bw = |test, p2p, way, both_ways| Shown {
        test,
        matrix: "",
        p2p,
        way,
        both_ways,
        bytes,
        loops: BANDWIDTH_REPS,
        unit: Unit::GBps,
    };
    let mut print = |title: &str, corner: &str, g: &Grid, shown: Shown| {
        out(title);
        out(&grid(corner, g));
        res.add(grid_cells(g, &shown, access, sm));
    };
    // The bandwidth buffers go before the latency ones are made.
    {
        let bufs = devices.iter().map(|d| PairBuffers::new(d, bytes)).collect::<Result<Vec<_>, _>>()?;
        let m = PeerMatrix { lanes: &lanes, bufs: &bufs, bytes, engine };
        let (w, r) = (Transfer::Write, Transfer::Read);
        let g = m.one_way(false, w)?;
        print(
            "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n",
            "   D\\D",
            &g,
            bw("unidirectional_p2p_disabled", false, w, false),
        );
        let g = m.one_way(true, w)?;
        print(
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n",
            "   D\\D",
            &g,
            bw("unidirectional_p2p_enabled_writes", true, w, false),
        );
        if read {
            let g = m.one_way(true, r)?;
            print(
                "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)\n",
                "   D\\D",
                &g,
                bw("unidirectional_p2p_enabled_reads", true, r, false),
            );
        }
        let g = m.two_way(false)?;
        print(
            "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n",
            "   D\\D",
            &g,
            bw("bidirectional_p2p_disabled", false, w, true),
        );
        let g = m.two_way(true)?;
        print(
            "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n",
            "   D\\D",
            &g,
            bw("bidirectional_p2p_enabled", true, w, true),
        );
    }
    let small = devices.iter().map(|d| PairBuffers::new(d, LATENCY_BYTES)).collect::<Result<Vec<_>, _>>()?;
    let m = PeerMatrix { lanes: &lanes, bufs: &small, bytes: LATENCY_BYTES, engine };
    let lat = |test: &'static str, matrix: &'static str, p2p: bool, way: Transfer| Shown {
        test,
        matrix,
        p2p,
        way,
        both_ways: false,
        bytes: LATENCY_BYTES,
        loops: LATENCY_REPS,
        unit: Unit::Us,
    };
    let mut latencies = |title: &str, test: &'static str, p2p: bool, way: Transfer| -> Result<(), driver::CudaError> {
        let (gpu, cpu) = m.latency(p2p, way)?;
        out(title);
        out(&format!("{}\n{}", grid("   GPU", &gpu), grid("   CPU", &cpu)));
        res.add(grid_cells(&gpu, &lat(test, "gpu", p2p, way), access, sm));
        res.add(grid_cells(&cpu, &lat(test, "cpu", p2p, way), access, sm));
        Ok(())
    };
    latencies("P2P=Disabled Latency Matrix (us)\n", "latency_p2p_disabled", false, Transfer::Write)?;
    latencies("P2P=Enabled Latency (P2P Writes) Matrix (us)\n", "latency_p2p_enabled_writes", true, Transfer::Write)?;
    if read {
        latencies("P2P=Enabled Latency (P2P Reads) Matrix (us)\n", "latency_p2p_enabled_reads", true, Transfer::Read)?;
    }
    Ok(())
}

/// The arguments in `argv` the sample reads nothing from (it ignores
/// them), for checking a documented command line.
pub fn unread_arguments(argv: &[String]) -> Vec<String> {
    argv.iter()
        .filter(|a| {
            let one = Args::new(std::slice::from_ref(a));
            !["help", "p2p_read", "sm_copy", "numElems", "min-efficiency"].iter().any(|f| one.flag(f))
        })
        .cloned()
        .collect()
}

/// Entry point of the `p2pBandwidthLatencyTest` binary: the arguments
/// after its name; returns the exit status (0, or 1 with one line on
/// stderr).
pub fn main(argv: &[String]) -> i32 {
    crate::job::install_panic_hook(NAME);
    let fail = |line: String| {
        say(&format!("{NAME}: {line}"));
        1
    };
    let count = match driver::start(&crate::topo::hostname()) {
        Ok(n) => n,
        Err(f) => return fail(f.line),
    };
    let a = Args::new(argv);
    if a.flag("help") {
        out(&help());
        return 0;
    }
    let read = a.flag("p2p_read");
    let sm_copy = a.flag("sm_copy");
    // The kernel is compiled at run time: without NVRTC, say so before
    // anything is printed.
    if sm_copy {
        if let Err(e) = crate::gpu::nvrtc_lib::load() {
            return fail(format!("--sm_copy: {}", KernelError::Nvrtc(e)));
        }
    }
    let elems = if a.flag("numElems") { a.int("numElems") } else { DEFAULT_ELEMS };
    if elems <= 0 {
        return fail(format!("--numElems={elems}: the copies need a positive number of ints"));
    }
    let min_pct = match cells::min_efficiency_arg(
        a.flag("min-efficiency").then(|| a.string("min-efficiency").unwrap_or_default()),
    ) {
        Ok(p) => p,
        Err(line) => return fail(line),
    };
    out("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n");
    let devices = match (0..count).map(Device::open).collect::<Result<Vec<_>, _>>() {
        Ok(d) => d,
        Err(e) => return fail(e.to_string()),
    };
    for d in &devices {
        let (bus, dev, domain) = d.pci_location();
        out(&device_line(d.ordinal, &d.name(), bus, dev, domain));
    }
    let access: Vec<Vec<bool>> =
        devices.iter().map(|a| devices.iter().map(|b| a.can_access_peer(b) == Some(true)).collect()).collect();
    out(&access_lines(&access));
    out(&connectivity(&access));
    let settings = serde_json::json!({
        "num_elems": elems,
        "bytes": elems as u64 * 4,
        "p2p_read": read,
        "sm_copy": sm_copy,
        "min_efficiency_pct": min_pct,
    });
    let kernels = if sm_copy {
        match devices.iter().map(Kernels::load).collect::<Result<Vec<_>, _>>() {
            Ok(k) => k,
            Err(e) => return fail(format!("--sm_copy: {e}")),
        }
    } else {
        Vec::new()
    };
    let engine = if sm_copy { Engine::Sm(&kernels) } else { Engine::Copy };
    let mut rec = CopyRecord::running(NAME, FOLLOWS, settings, crate::topo::hostname(), command_line(argv));
    rec.conventions = conventions();
    rec.cuda_driver_version = driver::driver_version_code().unwrap_or(0);
    let mut res = match Outputs::open(NAME, rec, Survey::of(&devices, None)) {
        Ok(r) => r,
        Err(line) => {
            say(&line);
            return 1;
        }
    };
    let subtitle = format!("{} ints per bandwidth copy, {BANDWIDTH_REPS} copies per timing", elems);
    if let Err(e) = matrices(&devices, elems as usize, read, &access, engine, &mut res) {
        let line = e.to_string();
        say(&format!("{NAME}: {line}"));
        return res.end(RunStatus::Error, Some(line), 1, min_pct, &subtitle).1;
    }
    out("\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n");
    res.end(RunStatus::Complete, None, 0, min_pct, &subtitle).1
}

/// The sample this follows.
const FOLLOWS: &str = "CUDA samples' p2pBandwidthLatencyTest (12.x)";

/// The command line as the record keeps it: the program's name, then
/// the arguments.
fn command_line(argv: &[String]) -> Vec<String> {
    std::iter::once(NAME.to_string()).chain(argv.iter().cloned()).collect()
}

/// How the matrices' figures are counted, in words.
fn conventions() -> std::collections::BTreeMap<&'static str, &'static str> {
    [
        ("bandwidth", "GB/s = bytes of 5 copies / seconds between CUDA events on the row's GPU / 1e9; within one GPU the bytes count twice (read and written)"),
        ("bidirectional", "both directions' bytes added: row -> column on the row's GPU and back on the column's at once"),
        ("peer_access", "P2P=Enabled: peer access on both ways for the pair while it is timed, where the GPUs can map each other's memory; else the copy goes through host memory"),
        ("latency", "microseconds per 16-byte copy over 100 copies: gpu between CUDA events, cpu the host's time to queue them"),
        ("cells", "row i, column j: writes go from GPU i to GPU j, reads from GPU j to GPU i"),
    ]
    .into_iter()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matrices' layout as the sample's format strings print it.
    #[test]
    fn matrices_follow_the_sample_s_format() {
        let g = vec![vec![718.25, 9.5], vec![10.0, 1234.567]];
        assert_eq!(grid("   D\\D", &g), "   D\\D     0      1 \n     0 718.25   9.50 \n     1  10.00 1234.57 \n");
        assert!(grid("   GPU", &g).starts_with("   GPU     0      1 \n"));
        let access = vec![vec![false, true], vec![false, false]];
        assert_eq!(
            connectivity(&access),
            "P2P Connectivity Matrix\n     D\\D     0     1\n     0\t     1     1\n     1\t     0     1\n"
        );
        assert!(access_lines(&access)
            .starts_with("Device=0 CAN Access Peer Device=1\nDevice=1 CANNOT Access Peer Device=0\n\n***NOTE: "));
        assert_eq!(
            device_line(3, "H100", 0x1b, 0, 0),
            "Device: 3, H100, pciBusID: 1b, pciDeviceID: 0, pciDomainID:0\n"
        );
    }
}
