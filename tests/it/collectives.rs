//! Blocking collectives under real launchers: stdout against OSU 7.4's own
//! output, CSV against stdout (avg/min/max, busbw, slowest and fastest
//! rank), validation at np = 2, 3 and 4 under Open MPI and np = 2 under
//! MPICH, and Open MPI 4.1's AVX MPI_CHAR reduction bug caught by -c.

use crate::common;

use common::golden::{self, check_goldens, GoldenEnv, GoldenRun};
use common::*;
use std::collections::HashMap;

/// Open MPI's AVX reduction component saturates MPI_CHAR sums from 16
/// elements on (open-mpi/ompi#8045); this turns it off.
const NO_AVX: (&str, &str) = ("OMPI_MCA_op", "^avx");

/// Every collective benchmark of the registry that `mpi` runs at any
/// number of ranks (Open MPI 4.1 has no persistent collectives:
/// tests/it/persistent.rs).
fn collectives(mpi: Mpi) -> Vec<&'static str> {
    use commbench::backend::Capability::{NeighborCollectives, PersistentCollectives};
    // (the non-blocking ones, with their overlap columns, are tests/it/nbc.rs's)
    commbench::bench::registry::BENCHMARKS
        .iter()
        .filter(|e| e.is_collective() && !e.spec.is_overlap())
        .filter(|e| mpi == Mpi::Mpich || e.needs != Some(PersistentCollectives))
        // (and the neighbourhood ones, whose topology needs 3 ranks or more,
        // tests/it/neighborhood.rs's)
        .filter(|e| e.needs != Some(NeighborCollectives))
        .map(|e| e.name())
        .collect()
}

/// Whether a benchmark takes OSU's `-l` (in place).
fn takes_in_place(bench: &str) -> bool {
    commbench::bench::registry::lookup(bench).is_some_and(|e| e.spec.takes('l'))
}

/// Whether a benchmark takes OSU's `-k` (root rank).
fn takes_root(bench: &str) -> bool {
    commbench::bench::registry::lookup(bench).is_some_and(|e| e.spec.takes('k'))
}

/// (golden file, benchmark, np, arguments)
const GOLDEN: &[golden::Case] = &[
    ("barrier", "osu_barrier", 2, &["-i", "100", "-x", "10"]),
    ("barrier_f", "osu_barrier", 2, &["-i", "100", "-x", "10", "-f"]),
    ("barrier_z", "osu_barrier", 2, &["-i", "100", "-x", "10", "-z"]),
    ("barrier_f_z", "osu_barrier", 2, &["-i", "100", "-x", "10", "-f", "-z"]),
    ("allreduce_m64", "osu_allreduce", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("allreduce_f", "osu_allreduce", 2, &["-m", "16", "-i", "20", "-x", "2", "-f"]),
    // OSU keeps large-message counts for the next datatype's 8192-byte
    // row; commbench does not (the golden file has 1000 there).
    ("allreduce_T_all_f", "osu_allreduce", 2, &["-m", "8192:16384", "-T", "all", "-f"]),
    ("allgather_f_c_z", "osu_allgather", 2, &["-m", "16", "-i", "100", "-x", "2", "-f", "-c", "-z"]),
    ("alltoall_m64", "osu_alltoall", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("reduce_scatter_np4_f_c", "osu_reduce_scatter", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("bcast_f_c_z", "osu_bcast", 2, &["-m", "16", "-i", "100", "-x", "2", "-f", "-c", "-z"]),
    ("reduce_f", "osu_reduce", 2, &["-m", "16", "-i", "20", "-x", "2", "-f"]),
    ("reduce_T_all", "osu_reduce", 2, &["-m", "8", "-T", "all", "-i", "20", "-x", "2"]),
    ("gather_m64", "osu_gather", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("gather_f_c_z", "osu_gather", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("gather_np4_f", "osu_gather", 4, &["-m", "16", "-i", "10", "-x", "1", "-f"]),
    ("gather_T_all", "osu_gather", 2, &["-T", "all", "-m", "8", "-i", "10", "-x", "1"]),
    ("scatter_m64", "osu_scatter", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("scatter_f_c_z", "osu_scatter", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("scatter_np4_f", "osu_scatter", 4, &["-m", "16", "-i", "10", "-x", "1", "-f"]),
    ("scatter_T_all", "osu_scatter", 2, &["-T", "all", "-m", "8", "-i", "10", "-x", "1"]),
    ("gatherv_f_c_z", "osu_gatherv", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("gatherv_np4_f_c", "osu_gatherv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("scatterv_f_c_z", "osu_scatterv", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("scatterv_np4_f_c", "osu_scatterv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("allgatherv_f_c_z", "osu_allgatherv", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("allgatherv_np4_f_c", "osu_allgatherv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("alltoallv_f_c_z", "osu_alltoallv", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("alltoallv_np4_f_c", "osu_alltoallv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("alltoallw_f_c_z", "osu_alltoallw", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("alltoallw_np4_f_c", "osu_alltoallw", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    (
        "reduce_scatter_block_f_c_z",
        "osu_reduce_scatter_block",
        2,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"],
    ),
    ("reduce_scatter_block_np4_f_c", "osu_reduce_scatter_block", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("alltoallw_T_all_c", "osu_alltoallw", 2, &["-T", "all", "-m", "8", "-i", "10", "-x", "1", "-c"]),
];

fn env_of(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The layout does not depend on the number of ranks, so every golden
/// file is checked at each `np` given (`None`: the file's own).
fn golden_layouts(mpi: Mpi, np: Option<usize>) {
    let _g = mpi_lock();
    let runs: Vec<GoldenRun> =
        GoldenRun::table(GOLDEN).into_iter().map(|g| if let Some(np) = np { g.at_np(np) } else { g }).collect();
    check_goldens(mpi, &runs, &GoldenEnv { env: env_of(&[NO_AVX]), quiet_stderr: false });
}

#[test]
fn open_mpi_collective_layout_matches_osu() {
    golden_layouts(Mpi::OpenMpi, None);
}

#[test]
fn open_mpi_collective_layout_np3_np4() {
    golden_layouts(Mpi::OpenMpi, Some(3));
    golden_layouts(Mpi::OpenMpi, Some(4));
}

#[test]
fn mpich_collective_layout_matches_osu() {
    require_mpich!();
    golden_layouts(Mpi::Mpich, Some(2));
}

fn num(rec: &HashMap<String, String>, col: &str) -> f64 {
    rec[col].parse().unwrap_or_else(|_| panic!("{col} = '{}'", rec[col]))
}

/// Checks one collective run's CSV against its `-f -c -z` stdout and the
/// nccl-tests bandwidth definitions.
fn assert_collective_csv(o: &Outcome, bench: &str, np: usize) {
    let rows = osu_rows(&o.run.stdout);
    assert_eq!(rows.len(), o.csv.len(), "{bench}\n{}", o.run.stdout);
    // a persistent form reports as its blocking twin
    let twin = bench.trim_end_matches("_persistent");
    let barrier = twin == "osu_barrier";
    for (row, rec) in rows.iter().zip(&o.csv) {
        // barrier rows have no size column
        let cells: &[String] = if barrier { row } else { &row[1..] };
        if !barrier {
            assert_eq!(row[0], rec["size_bytes"]);
        }
        assert_eq!(cells[0], two_decimals(&rec["avg_lat_us"]), "{bench} avg");
        assert_eq!(cells[1], two_decimals(&rec["min_lat_us"]), "{bench} min");
        assert_eq!(cells[2], two_decimals(&rec["max_lat_us"]), "{bench} max");
        assert_eq!(cells[3], rec["iterations"], "{bench} iterations");
        let (min, avg, max) = (num(rec, "min_lat_us"), num(rec, "avg_lat_us"), num(rec, "max_lat_us"));
        assert!(min <= avg * 1.000001 && avg <= max * 1.000001, "{bench}: {min} {avg} {max}");
        let (fast, slow): (usize, usize) = (rec["fastest_rank"].parse().unwrap(), rec["slowest_rank"].parse().unwrap());
        assert!(fast < np && slow < np, "{bench}: ranks {fast} {slow}");
        assert_eq!(rec["np"], np.to_string());
        assert_eq!(rec["pairs"], "");
        let tails: Vec<String> =
            rec["osu_tails"].split(';').map(|t| two_decimals(t.split_once('=').unwrap().1)).collect();
        let tail_cells = if barrier { &cells[4..] } else { &cells[5..] };
        assert_eq!(tail_cells, &tails[..], "{bench} tails");
        if barrier {
            assert_eq!((rec["datatype"].as_str(), rec["algbw_GBps"].as_str()), ("", ""));
            continue;
        }
        assert_eq!(cells[4], "Pass", "{bench} validation");
        let size: f64 = rec["size_bytes"].parse().unwrap();
        let n = np as f64;
        let (bytes, factor) = match twin {
            "osu_allreduce" => (size, 2.0 * (n - 1.0) / n),
            "osu_allgather" | "osu_allgatherv" | "osu_alltoall" | "osu_alltoallv" | "osu_alltoallw" | "osu_gather"
            | "osu_gatherv" | "osu_scatter" | "osu_scatterv" => (size * n, (n - 1.0) / n),
            "osu_reduce_scatter" | "osu_reduce_scatter_block" => (size, (n - 1.0) / n),
            _ => (size, 1.0),
        };
        let (algbw, busbw) = (num(rec, "algbw_GBps"), num(rec, "busbw_GBps"));
        let want = bytes / (avg * 1e-6) / 1e9;
        assert!((algbw - want).abs() <= 1e-9 * want.max(1.0), "{bench}: algbw {algbw} vs {want}");
        assert!((busbw - algbw * factor).abs() <= 1e-9 * busbw.max(1.0), "{bench}: busbw {busbw}");
    }
}

/// Every collective at `np` ranks with `-f -z` (and `-c -T all` where it
/// moves data): as it is, in place where it has that form, and with a root
/// that moves or is the last rank where it has a root; each run's CSV
/// against its stdout, its record complete.
///
/// Under MPICH 4 iterations and 1 warm-up a size instead of 30 and 3: its
/// ranks spin while they wait, so beside other work each call can cost a
/// scheduler time slice, and the 120,000 calls of Open MPI's counts took
/// over 420 s at load 7 on two cores (7.6 s idle). Four still validate
/// every datatype, size, placement and root.
fn every_collective(mpi: Mpi, np: usize) {
    let _g = mpi_lock();
    let mut runs: Vec<(&str, Vec<String>)> = Vec::new();
    let last = format!("fixed:{}", np - 1);
    let last_root = ["-k", last.as_str()];
    for bench in collectives(mpi) {
        let (iterations, warmup) = match mpi {
            Mpi::OpenMpi => ("30", "3"),
            Mpi::Mpich => ("4", "1"),
        };
        let mut args = vec!["-m", "1:4K", "-i", iterations, "-x", warmup, "-f", "-z"];
        if !bench.starts_with("osu_barrier") {
            args.extend(["-c", "-T", "all"]);
        }
        let mut variants: Vec<&[&str]> = vec![&[]];
        if takes_in_place(bench) {
            variants.push(&["-l"]);
        }
        if takes_root(bench) {
            // a root that moves every iteration, in place too
            variants.extend([&["-k", "rotate"][..], &["-k", "rotate", "-l"], &last_root]);
        }
        for extra in variants {
            let mut args = args.clone();
            args.extend(extra);
            if mpi == Mpi::Mpich && bench == "osu_reduce" && extra.contains(&"-k") && extra.contains(&"-l") {
                // MPICH 4.0.2 crashes in an in-place MPI_Reduce to a
                // root other than 0 from 4096 bytes on; OSU 7.4's own
                // osu_reduce -k rotate -l does the same.
                args[1] = "1:2K";
            }
            runs.push((bench, args.iter().map(|a| a.to_string()).collect()));
        }
    }
    each_at_once(&runs, short_jobs_at_once(mpi), |(bench, args)| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // MPICH 4.0.2's persistent allgather, gather and scatter need their
        // working algorithms (tests/it/persistent.rs).
        let mut env = vec![NO_AVX];
        env.extend(crate::persistent::MPICH_PERSISTENT_FIX);
        let o = run_with_results_env(mpi, np, bench, &args, &env);
        assert_eq!(o.run.code, Some(0), "{bench} {args:?}: {:?}", o.run);
        o.run.assert_no_panic();
        assert_collective_csv(&o, bench, np);
        assert_eq!(o.record["status"], "complete", "{bench} {args:?}");
    });
}

#[test]
fn open_mpi_collectives_np2() {
    every_collective(Mpi::OpenMpi, 2);
}

#[test]
fn open_mpi_collectives_np3() {
    every_collective(Mpi::OpenMpi, 3);
}

#[test]
fn open_mpi_collectives_np4() {
    every_collective(Mpi::OpenMpi, 4);
}

#[test]
fn mpich_collectives_np2() {
    require_mpich!();
    every_collective(Mpi::Mpich, 2);
}

/// The issue's own check: `mpirun -np 4 --oversubscribe osu_allreduce -f -z`
/// prints OSU's -f and tail columns; each CSV row's avg/min/max match, busbw
/// = algbw x 2(n-1)/n, and the slowest and fastest ranks are named.
#[test]
fn allreduce_full_tails_at_four_ranks() {
    let _g = mpi_lock();
    let o = run_with_results(Mpi::OpenMpi, 4, "osu_allreduce", &["-f", "-z", "-i", "200", "-x", "20"]);
    assert!(o.run.stdout.contains(
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)"
    ));
    assert_eq!(o.csv.len(), 21);
    for rec in &o.csv {
        let ratio = num(rec, "busbw_GBps") / num(rec, "algbw_GBps");
        assert!((ratio - 1.5).abs() < 1e-12, "busbw/algbw = {ratio}");
        let fastest: usize = rec["fastest_rank"].parse().unwrap();
        let slowest: usize = rec["slowest_rank"].parse().unwrap();
        assert!(fastest < 4 && slowest < 4);
    }
    let rows = osu_rows(&o.run.stdout);
    for (row, rec) in rows.iter().zip(&o.csv) {
        assert_eq!(
            (row[1].as_str(), row[2].as_str(), row[3].as_str()),
            (
                two_decimals(&rec["avg_lat_us"]).as_str(),
                two_decimals(&rec["min_lat_us"]).as_str(),
                two_decimals(&rec["max_lat_us"]).as_str()
            )
        );
    }
}

fn cpu_has_avx() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|t| t.split_whitespace().any(|f| f == "avx2"))
}

/// Open MPI 4.1.4's AVX component saturates MPI_CHAR sums from 16 elements
/// on. -c must catch it where OSU does (size 16), say where, stop, and exit
/// 1; with the component disabled the same run passes.
#[test]
fn open_mpi_avx_char_sum_bug_is_caught_and_the_workaround_passes() {
    if !cpu_has_avx() {
        eprintln!("SKIPPED: this CPU has no AVX2, so Open MPI's AVX reduction (and its bug) is not in use");
        return;
    }
    let _g = mpi_lock();
    let args = ["-m", "16", "-i", "100", "-x", "2", "-f", "-c", "-z"];
    let o = run_with_results_env(Mpi::OpenMpi, 2, "osu_allreduce", &args, &[]);
    // OSU's own output for this run, with its path replaced by ours
    let argv0 = bin(Mpi::OpenMpi, "osu_allreduce").display().to_string();
    let want = golden("allreduce_f_c_z_avx")
        .replace("<prefix>/libexec/osu-micro-benchmarks/mpi/collective/osu_allreduce", &argv0);
    assert_eq!(mask(&o.run.stdout), mask(&want));
    assert_eq!(o.run.code, Some(1));
    assert!(
        o.run.stderr.contains(
            "osu_allreduce: validation failed on rank 0: size 16 (MPI_CHAR), iteration 0: element 9 expected -116, found 127"
        ),
        "{}",
        o.run.stderr
    );
    assert_eq!(o.record["status"], "validation_failed");
    assert_eq!(o.record["status_detail"], "validation failed at message size 16");
    let verdicts: Vec<&str> = o.csv.iter().map(|r| r["validation"].as_str()).collect();
    assert_eq!(verdicts, ["Pass", "Pass", "Pass", "Pass", "Fail"]);

    let o = run_with_results_env(Mpi::OpenMpi, 2, "osu_allreduce", &args, &[NO_AVX]);
    assert_eq!(o.run.code, Some(0), "{:?}", o.run);
    let pass = golden("allreduce_f_c_z_avx").replace("Fail", "Pass");
    let pass: String =
        pass.lines().filter(|l| !l.starts_with("DATA VALIDATION ERROR")).map(|l| format!("{l}\n")).collect();
    assert_eq!(mask(&o.run.stdout), mask(&pass));
    assert!(o.csv.iter().all(|r| r["validation"] == "Pass"));
}

/// -clog writes what each failing rank saw.
#[test]
fn validation_log_names_the_failing_elements() {
    if !cpu_has_avx() {
        eprintln!("SKIPPED: this CPU has no AVX2, so no real validation failure is available");
        return;
    }
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let logs = d.path().join("vlogs");
    let arg = format!("-clog:{}", logs.display());
    let run = launch(
        Mpi::OpenMpi,
        2,
        "osu_reduce",
        &["-m", "32", "-i", "10", "-x", "1", &arg, "--no-results"],
        &Launch::default(),
    );
    assert_eq!(run.code, Some(1));
    let log = std::fs::read_to_string(logs.join("log-0.log")).unwrap();
    assert!(log.starts_with("size 16 (MPI_CHAR), iteration 0: element "), "{log}");
    assert!(!logs.join("log-1.log").exists(), "only the root of a reduce checks");
}
