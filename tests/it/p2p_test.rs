//! `p2pBandwidthLatencyTest`, the drop-in for CUDA's sample, on the GPU
//! stand-in: its layout against the sample's format strings (titles,
//! headers, number widths), each bandwidth and latency against the
//! stand-in's model for the pair's path (exact: event-timed), copies by
//! the sample's kernel (`--sm_copy`, compiled by the real NVRTC) and the
//! one line without NVRTC, `--help`, and a machine without a driver.

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
    p2p_test_with(machine, visible, &[], args)
}

/// [`p2p_test`] with more variables (set after the stand-in's, so they
/// may replace its machine file).
fn p2p_test_with(machine: Option<&str>, visible: &str, env: &[(&str, &str)], args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_p2pBandwidthLatencyTest"));
    cmd.args(args).current_dir(d.path()).env("CUDA_VISIBLE_DEVICES", visible);
    if let Some(m) = machine {
        common::standin::stand_in(m).apply(&mut cmd);
    }
    cmd.envs(env.iter().copied());
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

/// `--sm_copy` on the DGX-1's GPUs 0, 1 and 4, its kernel compiled by the
/// real NVRTC and run by the stand-in with kernels at half the copy
/// engines' rate (`rate.sm_copy_factor=0.5`): the same lines and matrices
/// as without it, and the kernel's values wherever the pair has peer
/// access on (the P2P=Enabled matrices off the diagonal; reads too):
/// the stand-in's kernels have no launch cost, so GPU 0 writing 5 x 4 MB
/// to GPU 1 over one NVLink lane (25 GB/s) takes 5 x 4e6 / 12.5e9 s
/// = 1.6 ms: 12.50 GB/s; 0 and 4 (two lanes) 25.00; both ways at once,
/// each GPU's kernel writing to the other, twice that; a 16-byte copy
/// 1 ns (0.00 us). The diagonal, the P2P=Disabled matrices and the
/// pair 1-4 (no peer access) stay the copy engines', as in the sample.
#[test]
fn sm_copy_copies_by_kernel_where_peer_access_is_on() {
    let base = common::standin::config_text(&common::standin::description("dgx1")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("dgx1-half-sm.conf");
    std::fs::write(&conf, format!("{base}rate.sm_copy_factor=0.5\n")).unwrap();
    let conf = conf.display().to_string();
    let nvrtc = crate::kernels::libnvrtc().display().to_string();
    let env = [("COMMBENCH_STANDIN_MACHINE", conf.as_str()), ("COMMBENCH_NVRTC", nvrtc.as_str())];
    let args = ["--numElems=1000000", "--p2p_read"];
    let ce = p2p_test_with(Some("dgx1"), "0,1,4", &env, &args);
    let trace = dir.path().join("trace");
    let trace_var = trace.display().to_string();
    let traced = [env[0], env[1], ("COMMBENCH_STANDIN_TRACE", trace_var.as_str())];
    let r = p2p_test_with(Some("dgx1"), "0,1,4", &traced, &["--sm_copy", args[0], args[1]]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    assert_eq!(ce.code, Some(0), "{}\n{}", ce.stdout, ce.stderr);
    let mask = |t: &str| regex::Regex::new(r"\d+(\.\d+)?").unwrap().replace_all(t, "#").into_owned();
    assert_eq!(mask(&r.stdout), mask(&ce.stdout), "the layout differs from the copy engines' run");

    let m = describe::load_gpu_model(&common::standin::description("dgx1")).unwrap();
    let rates = m.rates.unwrap();
    // GPU 0-1: one NVLink lane; 0-4: two; 1-4: no peer access.
    let lanes = |i: usize, j: usize| match (i.min(j), i.max(j)) {
        (0, 1) => Some(1.0),
        (0, 2) => Some(2.0),
        _ => None,
    };
    let bytes = 4e6;
    let ce_at = |rate: f64| bytes / (rates.copy_latency_us * 1e-6 + bytes / (rate * 1e9)) / 1e9;
    let ce_one_way = |i: usize, j: usize, p2p: bool| match (i == j, p2p.then(|| lanes(i, j)).flatten()) {
        (true, _) => 2.0 * ce_at(rates.d2d_gbs),
        (false, Some(n)) => ce_at(n * rates.nvlink_gbs),
        (false, None) => ce_at(rates.staged_peer_gbs),
    };
    // The kernel: the link's rate at half speed, no launch cost.
    let one_way = |i: usize, j: usize, p2p: bool| match (i != j && p2p, lanes(i, j)) {
        (true, Some(n)) => n * rates.nvlink_gbs * 0.5,
        _ => ce_one_way(i, j, p2p),
    };
    assert_eq!(one_way(0, 1, true), 12.5);
    let got = matrices(&r.stdout);
    let near = |got: f64, want: f64| (got - want).abs() <= 0.005 + want * 1e-4;
    for (title, p2p, both) in [
        ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", false, 1.0),
        ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)", true, 1.0),
        ("Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)", true, 1.0),
        ("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)", false, 2.0),
        ("Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)", true, 2.0),
    ] {
        for (i, row) in got[title].iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let want = both * one_way(i, j, p2p);
                assert!(near(v, want), "{title} {i},{j}: the model's {want}\n{}", r.stdout);
            }
        }
    }
    // The launches, by the GPU that ran them and their bytes: per peer pair
    // (0-1 and 0-4, each way) 5 on the row's GPU in each one-way matrix
    // (writes, reads), 5 on each GPU both ways at once, and 100 of 16
    // bytes on the row's GPU per latency matrix; none elsewhere.
    let mut launches: HashMap<(usize, usize), usize> = HashMap::new();
    let kernel = regex::Regex::new(r" GPU (\d+) stream \S+ kernel (\d+) B ").unwrap();
    for c in kernel.captures_iter(&std::fs::read_to_string(&trace).unwrap()) {
        *launches.entry((c[1].parse().unwrap(), c[2].parse().unwrap())).or_default() += 1;
    }
    let want: HashMap<(usize, usize), usize> = [
        ((0, 4_000_000), 40),
        ((1, 4_000_000), 20),
        ((4, 4_000_000), 20),
        ((0, 16), 400),
        ((1, 16), 200),
        ((4, 16), 200),
    ]
    .into_iter()
    .collect();
    assert_eq!(launches, want);
    assert_eq!(got["Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"][0][1], 12.5);
    assert_eq!(got["Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)"][2][0], 50.0);
    // Latency: the copy engines' cost per copy, but a kernel's 16 bytes
    // (1 ns on the stand-in's whole-nanosecond clock) where peer access is on.
    for (title, p2p) in [
        ("P2P=Disabled Latency Matrix (us)", false),
        ("P2P=Enabled Latency (P2P Writes) Matrix (us)", true),
        ("P2P=Enabled Latency (P2P Reads) Matrix (us)", true),
    ] {
        for (i, row) in got[title].iter().enumerate() {
            for (j, &us) in row.iter().enumerate() {
                let kernel = p2p && i != j && lanes(i, j).is_some();
                let want = if kernel { 0.0 } else { rates.copy_latency_us };
                assert!((us - want).abs() <= 0.01, "{title} {i},{j}: the model's {want}\n{}", r.stdout);
            }
        }
        assert!(got[&format!("{title} CPU")].iter().flatten().all(|&us| us > 0.0), "{}", r.stdout);
    }
}

/// `--numElems` must be positive, and `--sm_copy` needs NVRTC (here
/// `COMMBENCH_NVRTC` naming no file): each one line on stderr, status 1,
/// nothing measured; `--help` is usage and status 0; without a driver,
/// one line naming the host and status 1.
#[test]
fn refusals_help_and_no_driver() {
    for (args, said) in [
        (&["--numElems=0"][..], "p2pBandwidthLatencyTest: --numElems=0: the copies need a positive number of ints"),
        (
            &["--sm_copy"][..],
            "p2pBandwidthLatencyTest: --sm_copy: cannot build the SM copy kernels: NVRTC is not available: \
             COMMBENCH_NVRTC=/nonexistent/libnvrtc.so.12 does not load (",
        ),
    ] {
        let r = p2p_test_with(Some("dgx1"), "0,1", &[("COMMBENCH_NVRTC", "/nonexistent/libnvrtc.so.12")], args);
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
