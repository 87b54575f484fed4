//! `p2pBandwidthLatencyTest`, the drop-in for CUDA's sample, on the GPU
//! stand-in: its layout against the sample's format strings (titles,
//! headers, number widths), each bandwidth and latency against the
//! stand-in's model for the pair's path (exact: event-timed), the
//! refusal of `--sm_copy`, `--help`, and a machine without a driver.

use std::collections::HashMap;
use std::process::Command;

use commbench::topo::describe::{self, GpuLinkKind};

use crate::common;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn p2p_test(machine: Option<&str>, visible: &str, args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_p2pBandwidthLatencyTest"));
    cmd.args(args).current_dir(d.path()).env("CUDA_VISIBLE_DEVICES", visible);
    if let Some(m) = machine {
        common::standin::stand_in(m).apply(&mut cmd);
    }
    let o = cmd.output().expect("p2pBandwidthLatencyTest runs");
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The matrices of a run by title: each row's values.
fn matrices(stdout: &str) -> HashMap<String, Vec<Vec<f64>>> {
    let mut all: HashMap<String, Vec<Vec<f64>>> = HashMap::new();
    let mut title = String::new();
    for line in stdout.lines() {
        if line.ends_with("(GB/s)") || line.ends_with("(us)") {
            title = line.to_string();
        } else if line.starts_with("   CPU") {
            title = format!("{title} CPU");
        } else if let Some(rest) = line.strip_prefix("     ").filter(|_| !title.is_empty()) {
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.len() > 1 && !line.contains('\t') {
                all.entry(title.clone()).or_default().push(words[1..].iter().map(|w| w.parse().unwrap()).collect());
            }
        }
    }
    all
}

/// With `--p2p_read` on three GPUs of the DGX-1 (0 and 1: one NVLink; 0
/// and 4: two; 1 and 4: none, so no peer access): the sample's lines in
/// its order, eight matrices with its titles, and every value the
/// model's: a copy within a GPU counts twice; without peer access a copy
/// goes through the host; both ways add the two directions; the GPU
/// latency is the model's copy cost, the CPU's the host's queueing.
#[test]
fn every_matrix_in_the_sample_s_layout_and_the_model_s_values() {
    let r = p2p_test(Some("dgx1"), "0,1,4", &["--numElems=1000000", "--p2p_read"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let masked = regex::Regex::new(r"\d+(\.\d+)?").unwrap().replace_all(&r.stdout, "#").into_owned();
    let head = "[P#P (Peer-to-Peer) GPU Bandwidth Latency Test]\n\
        Device: #, Tesla V#-SXM#-#GB, pciBusID: #, pciDeviceID: #, pciDomainID:#\n\
        Device: #, Tesla V#-SXM#-#GB, pciBusID: #, pciDeviceID: #, pciDomainID:#\n\
        Device: #, Tesla V#-SXM#-#GB, pciBusID: #, pciDeviceID: #, pciDomainID:#\n\
        Device=# CAN Access Peer Device=#\nDevice=# CAN Access Peer Device=#\n\
        Device=# CAN Access Peer Device=#\nDevice=# CANNOT Access Peer Device=#\n\
        Device=# CAN Access Peer Device=#\nDevice=# CANNOT Access Peer Device=#\n\n\
        ***NOTE: In case a device doesn't have P#P access to other one, it falls back to normal memcopy procedure.\n\
        So you can see lesser Bandwidth (GB/s) and unstable Latency (us) in those cases.\n\n\
        P#P Connectivity Matrix\n     D\\D     #     #     #\n     #\t     #     #     #\n     #\t     #     #     #\n     #\t     #     #     #\n";
    assert!(masked.starts_with(head), "{}", r.stdout);
    let titles: Vec<&str> = r.stdout.lines().filter(|l| l.ends_with("(GB/s)") || l.ends_with("(us)")).collect();
    assert_eq!(
        titles,
        [
            "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
            "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
            "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
            "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
            "P2P=Disabled Latency Matrix (us)",
            "P2P=Enabled Latency (P2P Writes) Matrix (us)",
            "P2P=Enabled Latency (P2P Reads) Matrix (us)",
        ]
    );
    let matrix_head = "   D\\D     #      #      # \n";
    assert_eq!(masked.matches(matrix_head).count(), 5, "{}", r.stdout);
    assert_eq!(masked.matches("   GPU     #      #      # \n").count(), 3);
    assert_eq!(masked.matches("\n   CPU     #      #      # \n").count(), 3);
    assert!(r.stdout.ends_with(
        "\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n"
    ));

    let m = describe::load_gpu_model(&common::standin::description("dgx1")).unwrap();
    let rates = m.rates.unwrap();
    let described = [0usize, 1, 4];
    let link = |a: usize, b: usize| {
        let (a, b) = (described[a], described[b]);
        m.links.iter().find(|l| (l.a, l.b) == (a.min(b), a.max(b))).map(|l| l.kind)
    };
    let bytes = 4e6;
    let at = |rate: f64, bytes: f64| bytes / (rates.copy_latency_us * 1e-6 + bytes / (rate * 1e9)) / 1e9;
    let one_way = |i: usize, j: usize, p2p: bool| {
        if i == j {
            return 2.0 * at(rates.d2d_gbs, bytes);
        }
        match (p2p, link(i, j)) {
            (true, Some(GpuLinkKind::NvLink(n))) => at(f64::from(n) * rates.nvlink_gbs, bytes),
            (true, Some(GpuLinkKind::Pcie)) => at(rates.pcie_peer_gbs, bytes),
            _ => at(rates.staged_peer_gbs, bytes),
        }
    };
    let got = matrices(&r.stdout);
    // Within a hundredth and 1e-4 of the model (the stand-in counts whole
    // nanoseconds).
    let near = |got: f64, want: f64| (got - want).abs() <= 0.005 + want * 1e-4;
    for (title, p2p) in [
        ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", false),
        ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", true),
        ("Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)", true),
    ] {
        for (i, row) in got[title].iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let want = one_way(i, j, p2p);
                assert!(near(v, want), "{title} {i},{j}: the model's {want}\n{}", r.stdout);
            }
        }
    }
    // Both ways at once: the two directions' bytes in one time.
    for (title, p2p) in [
        ("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)", false),
        ("Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)", true),
    ] {
        for (i, row) in got[title].iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let want = 2.0 * one_way(i, j, p2p);
                assert!(near(v, want), "{title} {i},{j}: the model's {want}\n{}", r.stdout);
            }
        }
    }
    for title in ["P2P=Disabled Latency Matrix (us)", "P2P=Enabled Latency (P2P Writes) Matrix (us)"] {
        for row in &got[title] {
            for &us in row {
                assert!((us - rates.copy_latency_us).abs() <= 0.01, "{title}: {}", r.stdout);
            }
        }
        assert!(got[&format!("{title} CPU")].iter().flatten().all(|&us| us > 0.0), "{}", r.stdout);
    }
}

/// `--sm_copy` (a kernel's copies) is refused in one line until commbench
/// compiles kernels; `--numElems` must be positive; `--help` is usage
/// and status 0; without a driver, one line naming the host and status 1.
#[test]
fn refusals_help_and_no_driver() {
    for (args, said) in [
        (&["--sm_copy"][..], "p2pBandwidthLatencyTest: --sm_copy (copies by a kernel) is not offered yet"),
        (&["--numElems=0"][..], "p2pBandwidthLatencyTest: --numElems=0: the copies need a positive number of ints"),
    ] {
        let r = p2p_test(Some("dgx1"), "0,1", args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stdout);
        assert_eq!(r.stdout, "", "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with(said), "{args:?}: {}", r.stderr);
    }
    let r = p2p_test(Some("dgx1"), "0,1", &["--help"]);
    assert_eq!(r.code, Some(0));
    assert!(r.stdout.starts_with("Usage:  p2pBandwidthLatencyTest [OPTION]...\n"), "{}", r.stdout);
    for option in ["--p2p_read", "--sm_copy", "--numElems="] {
        assert!(r.stdout.contains(option), "{option}: {}", r.stdout);
    }
    if commbench::gpu_bw::driver::driver_present() {
        eprintln!("libcuda loads here: the no-driver case cannot be checked on this machine");
        return;
    }
    let r = p2p_test(None, "0", &[]);
    assert_eq!(r.code, Some(1));
    assert_eq!(r.stdout, "");
    assert!(r.stderr.starts_with("p2pBandwidthLatencyTest: no CUDA driver on "), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}
