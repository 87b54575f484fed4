//! `commbench gpu-bw` as a user meets it on a machine without CUDA: one
//! line naming the host and the missing library, exit status 1, nothing on
//! stdout and no result files, within 5 s; `--help` exits 0; a bad option
//! is one line and exit status 2. On a machine that has the driver the
//! no-driver checks are skipped (they would measure instead).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `commbench gpu-bw ARGS` in `dir` and how long it took.
fn gpu_bw(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let began = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_commbench"))
        .arg("gpu-bw")
        .args(args)
        .current_dir(dir)
        .env_remove("COMMBENCH_RESULTS_DIR")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("commbench runs");
    (o, began.elapsed())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn no_driver_is_one_line_and_status_1() {
    if commbench::gpu::bw::driver::driver_present() {
        eprintln!("libcuda loads here: the no-driver case cannot be checked on this machine");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    for args in [&[][..], &["--tests", "p2p", "--gpus", "0,1", "--min-bw", "300"][..]] {
        let (o, took) = gpu_bw(d.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(took < Duration::from_secs(5), "{args:?} took {took:?}");
        assert_eq!(text(&o.stdout), "", "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let host = commbench::topo::hostname();
        let start = format!("commbench gpu-bw: no CUDA driver on {host}: libcuda.so.1 cannot be loaded (");
        assert!(err.starts_with(&start), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(')'), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    }
    assert!(!d.path().join("results").exists(), "no result files without a driver");
}

#[test]
fn help_exits_0() {
    let d = tempfile::tempdir().unwrap();
    let (o, _) = gpu_bw(d.path(), &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for word in ["--tests", "--gpus", "--size", "--reps", "--latency-size", "--min-bw", "--results-dir", "Exit status"]
    {
        assert!(out.contains(word), "{word} missing from:\n{out}");
    }
    assert_eq!(text(&o.stderr), "");
    // The command is listed in commbench's own help.
    let all = Command::new(env!("CARGO_BIN_EXE_commbench")).arg("--help").output().unwrap();
    assert!(text(&all.stdout).contains("\n  gpu-bw    "), "{}", text(&all.stdout));
}

#[test]
fn bad_options_are_one_line_and_status_2() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "commbench gpu-bw: unexpected argument '--bogus' found (see commbench gpu-bw --help)"),
        (
            &["--tests", "h2d,xyz"],
            "commbench gpu-bw: invalid value 'h2d,xyz' for '--tests <LIST>': 'xyz' is not a test",
        ),
        (&["--gpus", "2-1"], "range '2-1' runs backwards"),
        (&["--size", "0"], "size '0' is out of range"),
        (&["--tests", "d2d", "--min-bw", "10"], "commbench gpu-bw: --min-bw judges GPU-to-GPU bandwidth"),
    ];
    for (args, want) in cases {
        let (o, took) = gpu_bw(d.path(), args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(text(&o.stdout), "");
        assert!(took < Duration::from_secs(5));
    }
    assert!(!d.path().join("results").exists());
}
