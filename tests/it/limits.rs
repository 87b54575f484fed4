//! Limits: counts and times beyond what can be allocated or meant, runs
//! that would not fit in memory, and input files that are not files (a
//! FIFO, /dev/zero, /dev/urandom). Each is refused with one line, exit 1
//! on every rank (or the subcommand's usage status), within 5 s, with no
//! panic and no allocation abort.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One refusal of an OSU binary under mpirun: every rank exits 1, stderr
/// is one line satisfying `ok`, on stdout the usage after a refused option
/// and nothing else, within 5 s.
fn refused(np: usize, bench: &str, args: &[&str], ok: impl Fn(&str) -> bool) {
    let what = format!("np={np} {bench} {args:?}");
    let cwd = tempfile::tempdir().unwrap();
    let (run, codes) = launch_recorded(Mpi::OpenMpi, Mpi::OpenMpi, np, bench, args, cwd.path());
    assert!(codes.iter().all(|&c| c == 1), "{what}: rank exit statuses {codes:?}");
    assert!(!run.timed_out, "{what}: hung");
    run.assert_no_panic();
    assert!(run.elapsed < under_load(Duration::from_secs(5)), "{what}: took {:?}", run.elapsed);
    let lines = run.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{what}: stderr was:\n{}", run.stderr);
    assert!(ok(lines[0]), "{what}: line was: {}", lines[0]);
    assert_eq!(run.stdout, crate::bad_input::usage_after(bench, args), "{what}: stdout");
    for bad in ["memory allocation", "capacity overflow", "Killed"] {
        assert!(!run.stderr.contains(bad), "{what}: {}", run.stderr);
    }
}

#[test]
fn counts_beyond_a_c_int_are_refused() {
    let _g = mpi_lock();
    let cases = [
        ("osu_bw", &["-W", "4G"][..], "Invalid Window Size [-W 4G] (give 1 to 2147483647)"),
        ("osu_bw", &["-i", "4294967296"], "Invalid Number of Iterations [-i 4294967296] (give 1 to 2147483647)"),
        (
            "osu_latency",
            &["-i", "18446744073709551615"],
            "Invalid Number of Iterations [-i 18446744073709551615] (give 1 to 2147483647)",
        ),
        (
            "osu_bw",
            &["--timeout", "1e20"],
            "Invalid timeout [--timeout 1e20] (give 1 to 2592000 seconds, e.g. 60 or 5m, or 0 for no watchdog)",
        ),
        (
            "osu_latency",
            &["--timeout", "1e-12"],
            "Invalid timeout [--timeout 1e-12] (give 1 to 2592000 seconds, e.g. 60 or 5m, or 0 for no watchdog)",
        ),
    ];
    each_at_once(&cases, REFUSALS_AT_ONCE, |(bench, args, line)| refused(2, bench, args, |l| l == *line));
}

#[test]
fn runs_that_cannot_fit_are_refused_with_the_estimate() {
    let _g = mpi_lock();
    // A window of 1G requests (about 1 TiB of request state) and the same
    // window of 4 MiB buffers (4 PiB): far beyond any node.
    let cases = [
        ("osu_bw", &["-W", "1G"][..]),
        ("osu_bw", &["-W", "1G", "-b", "multiple"]),
        ("osu_bw", &["-W", "256M", "-m", "1:1"]),
        ("osu_bibw", &["-W", "1G", "-b", "multiple"]),
    ];
    each_at_once(&cases, REFUSALS_AT_ONCE, |(bench, args)| {
        refused(2, bench, args, |l| {
            l.starts_with(&format!("{bench}: this run needs about "))
                && (*bench == "osu_bibw" || l.contains("requests ") && l.contains(" is available (lower -m, -W or -i)"))
        })
    });
    // commbench pairs counts its requests too (a window of 1G once reached
    // the kernel's OOM killer): refused with its usage status, 2.
    let cwd = tempfile::tempdir().unwrap();
    let args = ["pairs", "-W", "1073741824", "--no-results"];
    let (run, codes) = launch_recorded(Mpi::OpenMpi, Mpi::OpenMpi, 2, "commbench", &args, cwd.path());
    assert!(codes.iter().all(|&c| c == 2), "rank exit statuses {codes:?}: {}", run.stderr);
    let lines = run.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].starts_with("commbench pairs: this run needs about 2.0 TiB more memory per rank"), "{}", lines[0]);
    assert!(lines[0].ends_with("(lower --size or -W)"), "{}", lines[0]);
}

fn commbench(args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(args).current_dir(repo_root());
    run_cmd(c, Duration::from_secs(10))
}

/// A FIFO with no writer in a fresh directory.
fn fifo(dir: &Path) -> PathBuf {
    let p = dir.join("pipe.csv");
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p
}

#[test]
fn non_regular_input_files_end_at_once_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = fifo(dir.path());
    let pipe = pipe.to_str().unwrap();
    let data = "tests/data/compare/seed_osu_bw.txt";
    for input in [pipe, "/dev/zero", "/dev/urandom"] {
        for args in [
            vec!["compare", input, data],
            vec!["compare", data, input],
            vec!["plot", input, "--out", dir.path().to_str().unwrap()],
            vec!["plot", data, "--reference", input, "--out", dir.path().to_str().unwrap()],
            vec!["topo", "--machine", input],
            vec!["suite", "--hostfile", input, "--dry-run"],
        ] {
            let run = commbench(&args);
            assert!(!run.timed_out, "{args:?}: hung");
            run.assert_no_panic();
            assert!(run.elapsed < under_load(Duration::from_secs(5)), "{args:?}: took {:?}", run.elapsed);
            assert_ne!(run.code, Some(0), "{args:?}");
            let lines: Vec<&str> = run.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{args:?}: stderr was:\n{}", run.stderr);
            assert!(lines[0].contains("not a regular file"), "{args:?}: {}", lines[0]);
        }
    }
}

#[test]
fn subcommand_numbers_are_bounded() {
    for (args, want) in [
        (&["topo", "--ranks-per-node", "4294967296"][..], "--ranks-per-node must be at most 4096"),
        (&["topo", "--ranks-per-node", "100000000"], "--ranks-per-node must be at most 4096"),
        (&["suite", "--timeout", "1e20", "--dry-run"], "--timeout must be a positive number of seconds"),
        (&["suite", "--max-time", "1e-12", "--dry-run"], "--max-time must be a positive number of seconds"),
        (&["suite", "--np", "4294967296", "--dry-run"], "--np must be at most"),
        (&["pairs", "--timeout", "1e20"], "is not a time in seconds from 1 to 2592000"),
        (&["pairs", "--window", "4294967296"], "is larger than 2147483647"),
    ] {
        let run = commbench(args);
        assert!(!run.timed_out, "{args:?}: hung");
        run.assert_no_panic();
        assert!(run.elapsed < under_load(Duration::from_secs(5)), "{args:?}: took {:?}", run.elapsed);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: stderr was:\n{}", run.stderr);
        assert!(lines[0].contains(want), "{args:?}: {}", lines[0]);
    }
}

/// Each rank's estimate and VmHWM, in rank order, from one run with the
/// hidden COMMBENCH_MEMORY_REPORT switch.
fn estimates_and_peaks(np: usize, bench: &str, args: &[&str]) -> Vec<(f64, f64)> {
    let o = Launch {
        env: vec![("COMMBENCH_MEMORY_REPORT".into(), "1".into())],
        timeout: Some(Duration::from_secs(60)),
        ..Launch::default()
    };
    let mut all = args.to_vec();
    all.push("--no-results");
    let run = launch(Mpi::OpenMpi, np, bench, &all, &o);
    assert_eq!(run.code, Some(0), "{bench} {args:?}: {}", run.stderr);
    let mut ranks = vec![(0f64, 0f64); np];
    for l in run.stderr.lines().filter(|l| l.contains(" memory rank ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let after = |k: &str| w.iter().position(|x| *x == k).and_then(|i| w.get(i + 1)?.parse::<f64>().ok());
        ranks[after("rank").unwrap() as usize] = (after("estimate").unwrap(), after("vmhwm").unwrap());
    }
    assert!(ranks.iter().all(|r| r.1 > 0.0), "{bench} {args:?}: a rank without a memory report in {}", run.stderr);
    ranks
}

/// The highest estimate and the highest VmHWM over the ranks of one run.
fn estimate_and_peak(np: usize, bench: &str, args: &[&str]) -> (f64, f64) {
    estimates_and_peaks(np, bench, args).iter().fold((0f64, 0f64), |(e, h), r| (e.max(r.0), h.max(r.1)))
}

/// A small subset of scripts/check-memory.sh: the pre-flight estimate is
/// within 25% of the measured peak for a window of separate buffers, a
/// large request window, and a reduction with MPI temporaries.
#[test]
fn memory_estimate_matches_the_measured_peak() {
    let _g = mpi_lock();
    for (np, bench, args) in [
        (2, "osu_bw", &["-m", "1M:1M", "-W", "128", "-b", "multiple", "-i", "2", "-x", "0"][..]),
        (2, "osu_bw", &["-m", "1:1", "-W", "16K", "-i", "1", "-x", "0"]),
        (2, "osu_reduce_scatter", &["-m", "32M:32M", "-i", "1", "-x", "0"]),
        (2, "osu_latency", &["-m", "1:1", "-i", "1M", "-x", "0"]),
    ] {
        let (est, hwm) = estimate_and_peak(np, bench, args);
        let ratio = est / hwm;
        assert!((0.75..=1.25).contains(&ratio), "{bench} {args:?}: estimate {est} against VmHWM {hwm} ({ratio:.3})");
    }
}

/// The non-blocking reductions' MPI temporaries are held by some ranks
/// only (libnbc's trees): each rank's estimate is within 25% of its own
/// peak, at 3 and 4 ranks (the heaviest rank's figure on every rank had
/// been 1.63 times the leaves' peak for ireduce_scatter, 1.27 times the
/// root's for ireduce).
#[test]
fn memory_estimate_matches_each_ranks_peak_in_nonblocking_reductions() {
    let _g = mpi_lock();
    for (np, bench) in [
        (3, "osu_ireduce_scatter"),
        (4, "osu_ireduce_scatter_block"),
        (3, "osu_ireduce"),
        (4, "osu_ireduce"),
        (3, "osu_iallreduce"),
    ] {
        let args = ["-m", "32M:32M", "-i", "1", "-x", "0"];
        for (rank, (est, hwm)) in estimates_and_peaks(np, bench, &args).into_iter().enumerate() {
            let ratio = est / hwm;
            assert!(
                (0.75..=1.25).contains(&ratio),
                "{bench} on {np} ranks, rank {rank}: estimate {est} against VmHWM {hwm} ({ratio:.3})"
            );
        }
    }
}
