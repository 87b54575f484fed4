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
//! without NVRTC that is one line on stderr, status 1.

use super::driver::{self, Device};
use super::kernels::{KernelError, Kernels};
use super::measure::peer_matrix::{Engine, Grid, PeerMatrix, Transfer, LATENCY_BYTES};
use super::measure::{Lane, PairBuffers};
use super::out;
use super::sample_args::Args;
use crate::diag::say;

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

/// The matrices, each printed as it is done.
fn matrices(devices: &[Device], elems: usize, read: bool, engine: Engine) -> Result<(), driver::CudaError> {
    let bytes = elems * 4;
    let lanes = devices.iter().map(Lane::new).collect::<Result<Vec<_>, _>>()?;
    // The bandwidth buffers go before the latency ones are made.
    {
        let bufs = devices.iter().map(|d| PairBuffers::new(d, bytes)).collect::<Result<Vec<_>, _>>()?;
        let m = PeerMatrix { lanes: &lanes, bufs: &bufs, bytes, engine };
        out("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n");
        out(&grid("   D\\D", &m.one_way(false, Transfer::Write)?));
        out("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n");
        out(&grid("   D\\D", &m.one_way(true, Transfer::Write)?));
        if read {
            out("Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)\n");
            out(&grid("   D\\D", &m.one_way(true, Transfer::Read)?));
        }
        out("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n");
        out(&grid("   D\\D", &m.two_way(false)?));
        out("Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n");
        out(&grid("   D\\D", &m.two_way(true)?));
    }
    let small = devices.iter().map(|d| PairBuffers::new(d, LATENCY_BYTES)).collect::<Result<Vec<_>, _>>()?;
    let m = PeerMatrix { lanes: &lanes, bufs: &small, bytes: LATENCY_BYTES, engine };
    let latencies = |p2p, way| -> Result<String, driver::CudaError> {
        let (gpu, cpu) = m.latency(p2p, way)?;
        Ok(format!("{}\n{}", grid("   GPU", &gpu), grid("   CPU", &cpu)))
    };
    out("P2P=Disabled Latency Matrix (us)\n");
    out(&latencies(false, Transfer::Write)?);
    out("P2P=Enabled Latency (P2P Writes) Matrix (us)\n");
    out(&latencies(true, Transfer::Write)?);
    if read {
        out("P2P=Enabled Latency (P2P Reads) Matrix (us)\n");
        out(&latencies(true, Transfer::Read)?);
    }
    Ok(())
}

/// The arguments in `argv` the sample reads nothing from (it ignores
/// them), for checking a documented command line.
pub fn unread_arguments(argv: &[String]) -> Vec<String> {
    argv.iter()
        .filter(|a| {
            let one = Args::new(std::slice::from_ref(a));
            !["help", "p2p_read", "sm_copy", "numElems"].iter().any(|f| one.flag(f))
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
    let kernels = if sm_copy {
        match devices.iter().map(Kernels::load).collect::<Result<Vec<_>, _>>() {
            Ok(k) => k,
            Err(e) => return fail(format!("--sm_copy: {e}")),
        }
    } else {
        Vec::new()
    };
    let engine = if sm_copy { Engine::Sm(&kernels) } else { Engine::Copy };
    if let Err(e) = matrices(&devices, elems as usize, read, engine) {
        return fail(e.to_string());
    }
    out("\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n");
    0
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
