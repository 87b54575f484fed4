//! `bandwidthTest`, the drop-in for CUDA's sample, on the GPU stand-in:
//! its layout against the sample's format strings (digits masked), its
//! sweeps, every refusal with its lines and status, and each bandwidth
//! against the stand-in's model (exact for event-timed copies, whose
//! clock is the stand-in's; never above it for pageable ones, timed on
//! the host's clock).

use std::process::Command;

use crate::common;

use commbench::topo::describe;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn bandwidth_test(machine: Option<&str>, args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bandwidthTest"));
    cmd.args(args).current_dir(d.path()).env("RUST_BACKTRACE", "1");
    cmd.env("COMMBENCH_RESULTS_DIR", results.path());
    if let Some(m) = machine {
        common::standin::stand_in(m).apply(&mut cmd);
    }
    let o = cmd.output().expect("bandwidthTest runs");
    let run = Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    assert!(std::fs::read_dir(d.path()).unwrap().next().is_none(), "{args:?} wrote into its directory");
    run
}

/// Every run of digits as one `#`, so a value's width does not matter.
fn digits_masked(t: &str) -> String {
    regex::Regex::new(r"\d+").unwrap().replace_all(t, "#").into_owned()
}

const NOTE: &str =
    "\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary when GPU Boost is enabled.\n";

/// GB/s the stand-in's model gives `bytes` copied at `rate` GB/s after
/// its fixed cost, as the sample counts them (`factor` 2 within a GPU).
fn model(machine: &str, bytes: f64, rate: impl Fn(&describe::GpuRates) -> f64, factor: f64) -> f64 {
    let m = describe::load_gpu_model(&common::standin::description(machine)).unwrap();
    let r = m.rates.unwrap();
    factor * bytes / (r.copy_latency_us * 1e-6 + bytes / (rate(&r) * 1e9)) / 1e9
}

/// The default run, line for line as the sample's format strings print
/// it, each of its three bandwidths the model's.
#[test]
fn quick_mode_prints_the_sample_s_layout() {
    let r = bandwidth_test(Some("dgx1"), &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let table = |heading: &str| {
        format!(
            " {heading} Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t\t1.0\n\n"
        )
    };
    let want = format!(
        "[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla V100-SXM2-16GB\n Quick Mode\n\n{}{}{}Result = PASS\n{NOTE}",
        table("Host to Device"),
        table("Device to Host"),
        table("Device to Device")
    );
    assert_eq!(digits_masked(&r.stdout), digits_masked(&want), "{}", r.stdout);
    let values: Vec<f64> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("   32000000"))
        .map(|l| l.trim().split('\t').next_back().unwrap().parse().unwrap())
        .collect();
    let want = [
        model("dgx1", 32e6, |r| r.h2d_pinned_gbs, 1.0),
        model("dgx1", 32e6, |r| r.d2h_pinned_gbs, 1.0),
        model("dgx1", 32e6, |r| r.d2d_gbs, 2.0),
    ];
    for (got, want) in values.iter().zip(want) {
        assert!((got - want).abs() <= 0.05 + 1e-9, "{got} against the model's {want}: {}", r.stdout);
    }
}

/// `--mode=shmoo --csv`: a dot per size, then one CSV line per size in
/// the sample's format, its 81 sizes from 1000 to 68000000 bytes. About
/// ten seconds: the stand-in copies every byte, 100 times 757 MB.
#[test]
fn shmoo_csv_is_81_lines_in_the_sample_s_format() {
    let r = bandwidth_test(Some("dgx-h100"), &["--mode=shmoo", "--csv", "--htod"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[4], " Shmoo Mode");
    assert_eq!(lines[6], ".".repeat(81));
    let rows: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("bandwidthTest-")).collect();
    assert_eq!(rows.len(), 81, "{}", r.stdout);
    let re = regex::Regex::new(
        r"^bandwidthTest-H2D-Pinned, Bandwidth = (\d+\.\d) GB/s, Time = (\d+\.\d{5}) s, Size = (\d+) bytes, NumDevsUsed = 1$",
    )
    .unwrap();
    let sizes: Vec<u64> =
        rows.iter().map(|l| re.captures(l).unwrap_or_else(|| panic!("{l}"))[3].parse().unwrap()).collect();
    assert_eq!((sizes[0], sizes[19], sizes[20], sizes[80]), (1000, 20_000, 22_000, 68_000_000));
    for (row, &size) in rows.iter().zip(&sizes) {
        let c = re.captures(row).unwrap();
        let bw: f64 = c[1].parse().unwrap();
        let want = model("dgx-h100", size as f64, |r| r.h2d_pinned_gbs, 1.0);
        assert!((bw - want).abs() <= 0.05 + 1e-9, "{row}: the model's {want}");
    }
    assert!(r.stdout.ends_with(&format!("Result = PASS\n{NOTE}")));
}

/// `--device=all`: the sample's line, every GPU listed and counted, the
/// bandwidths summed over them; `--wc`'s note runs into the column
/// heads as the sample prints it; `--device=N` beyond the GPUs is GPU 0
/// with the sample's line; flags and values in any case and with any
/// dashes.
#[test]
fn every_gpu_summed_and_the_device_choice() {
    let args = ["-Device=all", "--DTOD", "--mode=range", "--start=1000", "--end=5000", "--increment=2000", "--wc"];
    let r = bandwidth_test(Some("dgx1"), &args);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with(
        "[CUDA Bandwidth Test] - Starting...\n\n!!!!!Cumulative Bandwidth to be computed from all the devices !!!!!!\n\nRunning on...\n\n Device 0: "
    ), "{}", r.stdout);
    assert_eq!(r.stdout.matches(" Device 7: Tesla V100-SXM2-16GB\n").count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains(
        " Range Mode\n\n Device to Device Bandwidth, 8 Device(s)\n PINNED Memory Transfers\n Write-Combined Memory Writes are Enabled   Transfer Size (Bytes)\tBandwidth(GB/s)\n   1000\t\t\t\t"
    ), "{}", r.stdout);
    for size in [1000u32, 3000, 5000] {
        let line = r.stdout.lines().find(|l| l.starts_with(&format!("   {size}\t"))).unwrap();
        let got: f64 = line.trim().split('\t').next_back().unwrap().parse().unwrap();
        let want = 8.0 * model("dgx1", f64::from(size), |r| r.d2d_gbs, 2.0);
        assert!((got - want).abs() <= 0.05 + 1e-9, "{line}: the model's {want}");
    }
    let r = bandwidth_test(Some("dgx1"), &["--device=12", "--htod", "--csv"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(
        "\n!!!!!Invalid GPU number 12 given hence default gpu 0 will be used !!!!!\nRunning on...\n\n Device 0: "
    ));
    assert!(r.stdout.contains("bandwidthTest-H2D-Pinned, Bandwidth = "), "{}", r.stdout);
}

/// Pageable copies: timed one by one on the host's clock, bandwidthTest's
/// 256 MB written between them; never above the model's pageable rate.
/// About three seconds: the flush, 100 times.
#[test]
fn pageable_copies_are_host_timed_below_the_model() {
    let r = bandwidth_test(Some("dgx1"), &["--memory=pageable", "--dtoh", "--csv"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let row = r.stdout.lines().find(|l| l.starts_with("bandwidthTest-D2H-Paged, Bandwidth = ")).expect("a row");
    let bw: f64 = row.split(" = ").nth(1).unwrap().trim_end_matches(" GB/s, Time").parse().unwrap();
    assert!(bw > 0.0 && bw <= model("dgx1", 32e6, |r| r.d2h_pageable_gbs, 1.0) + 0.05, "{row}");
}

/// Each setting the sample refuses: its lines, `Result = FAIL`, the note
/// and status 1; `--help`: usage, `Result = PASS`, status 0.
#[test]
fn refusals_print_the_sample_s_lines_and_fail() {
    let range = ["--mode=range"];
    let cases: &[(&[&str], &str)] = &[
        (
            &["--memory=shared"],
            "Invalid memory mode - valid modes are pageable or pinned\nSee --help for more information\n",
        ),
        (&["--mode=fast"], "Invalid mode - valid modes are quick, range, or shmoo\nSee --help for more information\n"),
        (&range, "Must specify a starting size in range mode\nSee --help for more information\n"),
        (&["--mode=range", "--start=0"], "Illegal argument - start must be greater than zero\n"),
        (&["--mode=range", "--start=8"], "Must specify an end size in range mode.\nSee --help for more information\n"),
        (&["--mode=range", "--start=8", "--end=-1"], "Illegal argument - end must be greater than zero\n"),
        (&["--mode=range", "--start=8", "--end=4"], "Illegal argument - start is greater than end\n"),
        (
            &["--mode=range", "--start=8", "--end=16"],
            "Must specify an increment in user mode\nSee --help for more information\n",
        ),
        (
            &["--mode=range", "--start=8", "--end=16", "--increment=x"],
            "Illegal argument - increment must be greater than zero\n",
        ),
    ];
    for (args, lines) in cases {
        let r = bandwidth_test(Some("dgx1"), args);
        assert_eq!(r.code, Some(1), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.ends_with(&format!("{lines}Result = FAIL\n{NOTE}")), "{args:?}: {}", r.stdout);
        assert_eq!(r.stderr, "", "{args:?}");
    }
    let r = bandwidth_test(Some("dgx1"), &["--help", "--mode=fast"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.starts_with("[CUDA Bandwidth Test] - Starting...\nUsage:  bandwidthTest [OPTION]...\n"),
        "{}",
        r.stdout
    );
    for option in [
        "--csv",
        "--device=",
        "--memory=",
        "--mode=",
        "--htod",
        "--dtoh",
        "--dtod",
        "--wc",
        "--cputiming",
        "--start=",
        "--end=",
        "--increment=",
    ] {
        assert!(r.stdout.contains(option), "{option}: {}", r.stdout);
    }
    assert!(r.stdout.ends_with(&format!("Result = PASS\n{NOTE}")));
}

/// Without a CUDA driver: the sample's two lines after `Running on...`,
/// one line of ours on stderr naming the host and the library, status 1,
/// no result line; likewise with `--device`, which asks for the count
/// first. Skipped where the machine has a real driver.
#[test]
fn no_driver_is_the_sample_s_lines_and_one_of_ours() {
    if commbench::gpu_bw::driver::driver_present() {
        eprintln!("libcuda loads here: the no-driver case cannot be checked on this machine");
        return;
    }
    for (args, want) in [
        (&[][..], "[CUDA Bandwidth Test] - Starting...\nRunning on...\n\ncudaGetDeviceProperties returned 35\n-> CUDA driver version is insufficient for CUDA runtime version\n"),
        (&["--device=all"][..], "[CUDA Bandwidth Test] - Starting...\ncudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version\n"),
    ] {
        let r = bandwidth_test(None, args);
        assert_eq!(r.code, Some(1), "{args:?}");
        assert_eq!(r.stdout, want, "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.starts_with("bandwidthTest: no CUDA driver on "), "{}", r.stderr);
    }
}
