//! Drop-in behaviour beyond stdout, as sites run OSU binaries: harnesses
//! and Slurm's slurm-%j.out read stdout and stderr merged, ReFrame passes
//! OSU's `D D` buffer words on CPU nodes, and working directories can be
//! read-only or full. Every benchmark is checked with its streams merged
//! against OSU 7.4's own stdout (digits masked).

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// One merged-stream case per benchmark: (benchmark, golden file cut from
/// OSU's binary, np, arguments). Every benchmark in the registry must have
/// one (checked below), so a new benchmark cannot skip this test.
const MERGED: &[(&str, &str, usize, &[&str])] = &[
    ("osu_latency", "latency_c_z", 2, &["-m", "16", "-i", "100", "-x", "2", "-c", "-z"]),
    ("osu_bw", "bw_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_bibw", "bibw_c", 2, &["-m", "16", "-i", "10", "-x", "1", "-c"]),
    ("osu_mbw_mr", "mbw_mr_np4", 4, &["-m", "16", "-i", "10", "-x", "1"]),
    ("osu_multi_lat", "multi_lat_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_barrier", "barrier_f", 2, &["-i", "100", "-x", "10", "-f"]),
    ("osu_allreduce", "allreduce_f", 2, &["-m", "16", "-i", "20", "-x", "2", "-f"]),
    ("osu_allgather", "allgather_f_c_z", 2, &["-m", "16", "-i", "100", "-x", "2", "-f", "-c", "-z"]),
    ("osu_alltoall", "alltoall_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_reduce_scatter", "reduce_scatter_np4_f_c", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("osu_bcast", "bcast_f_c_z", 2, &["-m", "16", "-i", "100", "-x", "2", "-f", "-c", "-z"]),
    ("osu_reduce", "reduce_f", 2, &["-m", "16", "-i", "20", "-x", "2", "-f"]),
    ("osu_gather", "gather_np4_f", 4, &["-m", "16", "-i", "10", "-x", "1", "-f"]),
    ("osu_scatter", "scatter_f_c_z", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("osu_gatherv", "gatherv_np4_f_c", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("osu_scatterv", "scatterv_f_c_z", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("osu_allgatherv", "allgatherv_f_c_z", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("osu_alltoallv", "alltoallv_np4_f_c", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("osu_alltoallw", "alltoallw_f_c_z", 2, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"]),
    ("osu_reduce_scatter_block", "reduce_scatter_block_np4_f_c", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c"]),
    ("osu_iallreduce", "iallreduce_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_ibarrier", "ibarrier_f_z_t10", 2, &["-i", "20", "-x", "2", "-f", "-z", "-t", "10"]),
    ("osu_ibcast", "ibcast_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_iallgather", "iallgather_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_ialltoall", "ialltoall_np4_f_c_l", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("osu_ireduce", "ireduce_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_igather", "igather_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_iscatter", "iscatter_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_ireduce_scatter", "ireduce_scatter_np3_f_c_l", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("osu_ireduce_scatter_block", "ireduce_scatter_block_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_iallgatherv", "iallgatherv_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_igatherv", "igatherv_np3_f_c_l", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("osu_iscatterv", "iscatterv_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_ialltoallv", "ialltoallv_f_c_z_t4", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("osu_ialltoallw", "ialltoallw_np3_f_c_l", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("osu_put_latency", "put_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_get_latency", "get_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_put_bw", "put_bw_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_get_bw", "get_bw_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    // OSU's osu_get_mbw hangs under its default flush; lock is osu_get_bw's.
    ("osu_get_mbw", "get_mbw_lock", 2, &["-s", "lock", "-m", "64", "-i", "10", "-x", "2"]),
    ("osu_put_bibw", "put_bibw_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_acc_latency", "acc_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_fop_latency", "fop_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_cas_latency", "cas_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_get_acc_latency", "get_acc_latency_m64", 2, &["-m", "64", "-i", "10", "-x", "2"]),
    ("osu_latency_persistent", "latency_persistent_c_z", 2, &["-m", "16", "-i", "100", "-x", "2", "-c", "-z"]),
    ("osu_bw_persistent", "bw_persistent_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_bibw_persistent", "bibw_persistent_c", 2, &["-m", "16", "-i", "10", "-x", "1", "-c"]),
    ("osu_latency_mt", "latency_mt_m64", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("osu_latency_mp", "latency_mp_c_z", 2, &["-m", "4", "-i", "10", "-x", "1", "-c", "-z"]),
];

/// Benchmarks whose merged-stream case lives in another file, and why:
/// osu_init's milliseconds are whole numbers the digit mask leaves alone,
/// and the fan benchmarks need ranks on several hosts.
const ELSEWHERE: &[(&str, &str)] = &[
    ("osu_bw_fan_in", "tests/it/fan.rs: nothing on stderr beside OSU's stdout, across hosts"),
    ("osu_bw_fan_out", "tests/it/fan.rs: as osu_bw_fan_in"),
    ("osu_init", "tests/it/startup.rs: streams merged, milliseconds masked"),
    ("osu_hello", "tests/it/startup.rs: streams merged"),
    ("osu_allgather_persistent", PERSISTENT),
    ("osu_allgatherv_persistent", PERSISTENT),
    ("osu_allreduce_persistent", PERSISTENT),
    ("osu_alltoall_persistent", PERSISTENT),
    ("osu_alltoallv_persistent", PERSISTENT),
    ("osu_alltoallw_persistent", PERSISTENT),
    ("osu_barrier_persistent", PERSISTENT),
    ("osu_bcast_persistent", PERSISTENT),
    ("osu_gather_persistent", PERSISTENT),
    ("osu_gatherv_persistent", PERSISTENT),
    ("osu_reduce_persistent", PERSISTENT),
    ("osu_reduce_scatter_persistent", PERSISTENT),
    ("osu_scatter_persistent", PERSISTENT),
    ("osu_scatterv_persistent", PERSISTENT),
    ("osu_neighbor_allgather", NEIGHBOURHOOD),
    ("osu_neighbor_allgatherv", NEIGHBOURHOOD),
    ("osu_neighbor_alltoall", NEIGHBOURHOOD),
    ("osu_neighbor_alltoallv", NEIGHBOURHOOD),
    ("osu_neighbor_alltoallw", NEIGHBOURHOOD),
    ("osu_ineighbor_allgather", NEIGHBOURHOOD),
    ("osu_ineighbor_allgatherv", NEIGHBOURHOOD),
    ("osu_ineighbor_alltoall", NEIGHBOURHOOD),
    ("osu_ineighbor_alltoallv", NEIGHBOURHOOD),
    ("osu_ineighbor_alltoallw", NEIGHBOURHOOD),
];

/// Their default topology needs 3 ranks or more.
const NEIGHBOURHOOD: &str = "tests/it/neighborhood.rs: stdout against OSU's at 3 and 4 ranks with stderr empty";

/// Open MPI 4.1 has no persistent collectives, and this file's streams run
/// under Open MPI.
const PERSISTENT: &str = "tests/it/persistent.rs: MPICH only (MPI-4); stdout against OSU's with stderr empty";

/// The loose row pattern of older OSU harnesses, unanchored, applied to
/// the whole merged text (where `\s` also crosses line ends).
fn loose_regex() -> regex::Regex {
    regex::Regex::new(r"(\d+)\s+([\d.]+)").unwrap()
}

fn loose_rows(text: &str) -> Vec<(String, String)> {
    loose_regex().captures_iter(text).map(|c| (c[1].to_string(), c[2].to_string())).collect()
}

/// The (size, first value) of each data row of an OSU table.
fn table_rows(stdout: &str) -> Vec<(String, String)> {
    osu_rows(stdout).into_iter().map(|r| (r[0].clone(), r[1].clone())).collect()
}

/// No text commbench added is ever read as a row: over the whole merged
/// text the loose regex takes no digit from an added line, and line by
/// line it matches only the OSU table's data rows, the same ones as in the
/// table alone.
///
/// Over the whole text the regex also pairs the last number of one row
/// with the first of the next, so any line the launcher slips between two
/// rows (its own warnings as much as ours) shifts which numbers pair up;
/// that phase is the regex's own and is not asserted.
fn assert_regex_sees_only_rows(merged: &str, added: impl Fn(&str) -> bool, what: &str) {
    let mut spans = Vec::new();
    let mut at = 0;
    for line in merged.split_inclusive('\n') {
        if added(line.trim_end_matches('\n')) {
            spans.push(at..at + line.len());
        }
        at += line.len();
    }
    for c in loose_regex().captures_iter(merged) {
        for g in [c.get(1).unwrap(), c.get(2).unwrap()] {
            let hit = spans.iter().any(|s| s.contains(&g.start()) || s.contains(&(g.end() - 1)));
            assert!(!hit, "{what}: the regex took {:?} from an added line:\n{merged}", g.as_str());
        }
    }
    let table: String = merged.lines().filter(|l| !added(l)).map(|l| format!("{l}\n")).collect();
    let matched: Vec<&str> = merged.lines().filter(|l| !loose_rows(l).is_empty()).collect();
    let in_table: Vec<&str> = table.lines().filter(|l| !loose_rows(l).is_empty()).collect();
    // Data rows: every line of an OSU table that is neither blank nor a
    // '#' comment (osu_barrier's rows start with spaces, not a size).
    let rows: Vec<&str> = merged.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    assert_eq!(matched, rows, "{what}: lines the regex matches");
    assert_eq!(matched, in_table, "{what}: lines the regex matches with and without the added ones");
    assert!(!rows.is_empty(), "{what}: no rows in\n{merged}");
}

/// The check above catches an added line that lends the regex a number:
/// here the warning ends in a digit, which pairs with the next row's size.
#[test]
#[should_panic(expected = "from an added line")]
fn the_row_check_catches_a_number_in_an_added_line() {
    let merged = "# Size Latency(us)\n1 0.50\n# warning: ranks on core 1\n2 0.51\n";
    assert_regex_sees_only_rows(merged, |l| l.starts_with("# warning: "), "made up");
}

fn merged_run(mpi: Mpi, np: usize, bench: &str, args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let o = Launch { cwd: Some(cwd.to_path_buf()), env, merge_streams: true, ..Launch::default() };
    let run = launch(mpi, np, bench, args, &o);
    assert_eq!(run.code, Some(0), "{mpi:?} {bench} {args:?}: {run:?}");
    run.assert_no_panic();
    run
}

fn merged_matches_osu(mpi: Mpi, cases: &[(&str, &str, usize, &[&str])]) {
    let _g = mpi_lock();
    each_at_once(cases, short_jobs_at_once(mpi), |(bench, golden_name, np, args)| {
        // The default results place (./results): files are written, and
        // nothing about them is said.
        let cwd = tempfile::tempdir().unwrap();
        let run = merged_run(mpi, *np, bench, args, cwd.path(), &[("OMPI_MCA_op", "^avx")]);
        let what = format!("{mpi:?} {bench} {args:?}");
        assert_eq!(mask(&run.stdout), mask(&golden(golden_name)), "{what}: merged output differs from OSU's stdout");
        assert_regex_sees_only_rows(&run.stdout, |_| false, &what);
        let results = cwd.path().join("results");
        assert_eq!(files_with_ext(&results, "csv").len(), 1, "{what}: no CSV in the default place");
        assert_eq!(files_with_ext(&results, "json").len(), 1, "{what}: no run record in the default place");
    });
}

#[test]
fn every_benchmark_has_a_merged_stream_case() {
    let names: Vec<&str> = commbench::bench::registry::specs().map(|s| s.name).collect();
    let covered: Vec<&str> = MERGED.iter().map(|c| c.0).chain(ELSEWHERE.iter().map(|c| c.0)).collect();
    for n in &names {
        assert!(covered.contains(n), "{n} has no merged-stream case in tests/it/dropin.rs");
    }
    assert_eq!(names.len(), covered.len());
}

#[test]
fn open_mpi_merged_streams_match_osu_stdout() {
    merged_matches_osu(Mpi::OpenMpi, MERGED);
}

#[test]
fn mpich_merged_streams_match_osu_stdout() {
    require_mpich!();
    // A point-to-point, a windowed and a collective benchmark.
    let some: Vec<_> =
        MERGED.iter().filter(|c| ["osu_latency", "osu_mbw_mr", "osu_allgather"].contains(&c.0)).copied().collect();
    merged_matches_osu(Mpi::Mpich, &some);
}

/// A real misplacement (every rank squeezed onto core 0) is warned about
/// among the rows; the loose regex still finds exactly the size rows, in
/// whichever order the launcher interleaved the two streams.
#[test]
fn a_misplacement_warning_never_reads_as_a_row() {
    let _g = mpi_lock();
    if Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("SKIPPED: taskset is not installed");
        return;
    }
    // Each job squeezed onto one core, two jobs at once on different cores
    // where the machine has two (jobs taken in turn from the list).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let mut runs = Vec::new();
    for (bench, np, args) in [
        ("osu_latency", 2, &["-m", "1:1024", "-i", "50", "-x", "5"][..]),
        ("osu_allreduce", 4, &["-m", "1:1024", "-i", "20", "-x", "2", "-f"][..]),
    ] {
        for round in 0..3 {
            runs.push((bench, np, args, round, (runs.len() % cores).to_string()));
        }
    }
    each_at_once(&runs, cores, |(bench, np, args, round, core)| {
        let cwd = tempfile::tempdir().unwrap();
        let mut c = Command::new("taskset");
        c.args(["-c", core, "mpirun", "-np", &np.to_string(), "--oversubscribe", "--bind-to", "none"]);
        c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        c.arg(bin(Mpi::OpenMpi, bench)).args(*args).current_dir(cwd.path());
        let run = run_cmd(merged(c), Duration::from_secs(120));
        assert_eq!(run.code, Some(0), "{bench} round {round}: {run:?}");
        let text = &run.stdout;
        let warnings: Vec<&str> = text.lines().filter(|l| l.starts_with("# warning: ")).collect();
        assert!(!warnings.is_empty(), "{bench}: no misplacement warning in\n{text}");
        assert_eq!(table_rows(text).len(), 11, "{bench}: {text}");
        let what = format!("{bench} round {round}");
        assert_regex_sees_only_rows(text, |l| l.starts_with("# warning: "), &what);
    });
}

/// ReFrame's OSU checks pass `D D` (or `H D`) even on CPU nodes; an OSU
/// build without GPU support runs them on host memory, and so do we, with
/// OSU's stdout and the run record saying what happened.
#[test]
fn buffer_locations_run_on_host_memory_and_are_recorded() {
    let _g = mpi_lock();
    for (bench, golden_name, np, args, words) in [
        ("osu_latency", "latency_m64", 2, &["-m", "64", "-i", "100", "-x", "10"][..], ["D", "D"]),
        ("osu_bw", "bw_m64", 2, &["-m", "64", "-i", "20", "-x", "2"][..], ["H", "D"]),
        ("osu_mbw_mr", "mbw_mr_np2", 2, &["-m", "64", "-i", "20", "-x", "2"][..], ["MD", "MH"]),
        ("osu_allreduce", "allreduce_m64", 2, &["-m", "64", "-i", "20", "-x", "2"][..], ["D", "D"]),
        ("osu_latency", "latency_m64", 2, &["-m", "64", "-i", "100", "-x", "10"][..], ["H", "H"]),
    ] {
        let cwd = tempfile::tempdir().unwrap();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(words);
        let run = merged_run(Mpi::OpenMpi, np, bench, &all, cwd.path(), &[("OMPI_MCA_op", "^avx")]);
        assert_eq!(mask(&run.stdout), mask(&golden(golden_name)), "{bench} {all:?}");
        let json = files_with_ext(&cwd.path().join("results"), "json");
        let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
        let b = &record["buffers"];
        let given = words.join(" ");
        assert_eq!((b["memory"].as_str(), b["requested"].as_str()), (Some("host"), Some(given.as_str())), "{b}");
        if given == "H H" {
            assert!(b["note"].is_null(), "{b}");
        } else {
            let note = b["note"].as_str().unwrap();
            assert!(note.contains(&format!("'{given}' asked for device or managed buffers")), "{note}");
            assert!(note.contains("run on host memory"), "{note}");
        }
    }
}

/// The lines a successful run printed on stderr (launcher banners aside).
fn stderr_lines(run: &Run) -> Vec<String> {
    run.our_stderr_lines().iter().map(|s| s.to_string()).collect()
}

fn osu_latency_in(cwd: &Path, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut args = vec!["-m", "1:16", "-i", "20", "-x", "2"];
    args.extend(extra);
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    launch(Mpi::OpenMpi, 2, "osu_latency", &args, &Launch { cwd: Some(cwd.into()), env, ..Launch::default() })
}

fn assert_table_and_one_warning(run: &Run, what: &str, reason: &str) {
    assert_eq!(run.code, Some(0), "{what}: {run:?}");
    assert_eq!(mask(&run.stdout), mask(&golden_prefix("latency_m64", 16)), "{what}");
    let lines = stderr_lines(run);
    assert_eq!(lines.len(), 1, "{what}: {lines:?}");
    assert!(lines[0].starts_with("osu_latency: warning: no CSV or run record for this run: "), "{what}: {lines:?}");
    assert!(lines[0].contains(reason), "{what}: {lines:?}");
}

/// OSU's latency table up to `max` bytes, from a golden file going further.
fn golden_prefix(name: &str, max: usize) -> String {
    golden(name)
        .lines()
        .filter(|l| {
            !l.starts_with(|c: char| c.is_ascii_digit())
                || l.split_whitespace().next().unwrap().parse::<usize>().unwrap() <= max
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Results in the default place that cannot be written cost one warning,
/// never the table; a place the user chose is an error.
#[test]
fn unwritable_default_results_place_costs_a_warning_not_the_table() {
    let _g = mpi_lock();
    // ./results is a plain file.
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("results"), "not a directory").unwrap();
    let run = osu_latency_in(cwd.path(), &[], &[]);
    assert_table_and_one_warning(&run, "results is a file", "cannot write results to 'results'");

    // The same place named by the user is an error, on every rank.
    let run = osu_latency_in(cwd.path(), &["--results-dir", "results"], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stdout, "");
    let run = osu_latency_in(cwd.path(), &[], &[("COMMBENCH_RESULTS_DIR", "results")]);
    assert_eq!(run.code, Some(1), "{run:?}");

    // A read-only working directory and a full one (a private mount
    // namespace: root can write anywhere a permission bit says not to).
    if !Command::new("unshare").args(["-m", "true"]).status().is_ok_and(|s| s.success()) {
        panic!("unshare -m is not available: the read-only and full-disk cases need it (util-linux, root)");
    }
    let ro = tempfile::tempdir().unwrap();
    let dir = ro.path().display().to_string();
    let run = in_namespace(&format!("mount --bind {dir} {dir} && mount -o remount,ro,bind {dir}"), ro.path());
    assert_table_and_one_warning(&run, "read-only cwd", "Read-only file system");

    let full = tempfile::tempdir().unwrap();
    let dir = full.path().display().to_string();
    let setup = format!(
        "mount -t tmpfs -o size=64k tmpfs {dir} && mkdir {dir}/results && \
         (dd if=/dev/zero of={dir}/fill bs=1k count=128 2>/dev/null; true)"
    );
    let run = in_namespace(&setup, full.path());
    assert_table_and_one_warning(&run, "full disk", "No space left on device");
}

/// Runs osu_latency in `cwd` inside a private mount namespace prepared by
/// `setup`; reports what was left in `cwd/results` on stdout's tail.
fn in_namespace(setup: &str, cwd: &Path) -> Run {
    let launcher = launcher(Mpi::OpenMpi, 2);
    let mut line = format!("{setup} && cd {} && exec {}", cwd.display(), launcher.get_program().to_string_lossy());
    for a in launcher.get_args() {
        line.push(' ');
        line.push_str(&a.to_string_lossy());
    }
    line.push_str(&format!(" {} -m 1:16 -i 20 -x 2", bin(Mpi::OpenMpi, "osu_latency").display()));
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", &line]);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    run_cmd(c, Duration::from_secs(120))
}

/// `--verbose` brings back the placement table and the results line.
#[test]
fn verbose_shows_placement_and_results() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let quiet = osu_latency_in(cwd.path(), &[], &[]);
    assert_eq!((quiet.code, stderr_lines(&quiet)), (Some(0), vec![]), "{quiet:?}");
    let run = osu_latency_in(cwd.path(), &["--verbose"], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = stderr_lines(&run);
    assert!(lines[0].starts_with("# placement: --bind none, 2 rank(s) on 1 host(s)"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("# rank  host")), "{lines:?}");
    // The results line comes before the first row; after it, only the
    // noise verdicts of sizes that were flagged (`# noise: ...`).
    let at = lines.iter().position(|l| l.starts_with("osu_latency: results in results/")).expect("results line");
    assert!(lines[at].contains("(run record results/"), "{}", lines[at]);
    assert!(lines[at + 1..].iter().all(|l| l.starts_with("# noise: osu_latency ")), "{lines:?}");
    assert_eq!(files_with_ext(&cwd.path().join("results"), "json").len(), 2);
}

/// A usage error's line gets out even when the launcher tears the job
/// down at the first non-zero exit: ranks other than the leader give the
/// leader's line time to be forwarded.
#[test]
fn a_usage_error_line_always_gets_out() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let rounds: Vec<usize> = (0..8).collect();
    each_at_once(&rounds, REFUSALS_AT_ONCE, |round| {
        let o = Launch { cwd: Some(cwd.path().into()), timeout: Some(Duration::from_secs(30)), ..Launch::default() };
        let run = launch(Mpi::OpenMpi, 4, "osu_allreduce", &["-x", "oops"], &o);
        assert_eq!(run.code, Some(1), "round {round}: {run:?}");
        assert_eq!(stderr_lines(&run), ["Invalid Number of Warmup Iterations [-x oops]"], "round {round}: {run:?}");
        assert!(run.elapsed < under_load(Duration::from_secs(5)), "round {round}: took {:?}", run.elapsed);
    });
}

/// A `D D` run here ran on host memory (its run record says so), so
/// compare will not judge it against a CUDA `D D` reference unless told.
#[test]
fn a_host_run_given_d_d_is_not_judged_against_a_device_reference() {
    let o = {
        let _g = mpi_lock();
        run_with_results(Mpi::OpenMpi, 2, "osu_bw", &["-i", "20", "-x", "2", "D", "D"])
    };
    assert_eq!(o.record["buffers"]["memory"], "host", "{}", o.record);
    let reference = repo_root().join("tests/data/compare/published/osu_bw_7.2_eessi716-ompi415-cuda-DD.txt");
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.arg("compare").arg(&reference).arg(&o.csv_path);
    let r = run_cmd(c, Duration::from_secs(60));
    assert_eq!(r.code, Some(2), "{r:?}");
    let lines = r.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(lines[0].contains("host memory") && lines[0].contains("--allow-memory-mismatch"), "{}", lines[0]);
}

/// A refused option is followed by the usage on stdout, as in OSU: OSU's
/// `osu_put_latency -c` prints its `-h` text there
/// (tests/golden/put_latency_c.txt) after `Invalid option [-c]` on
/// stderr; ours prints our `-h` text, byte for byte, whose frame is OSU's:
/// the `Usage:` and `Options:` lines and each of OSU's options under its
/// letter and long name, in OSU's order (the descriptions are our own
/// words; we list `-d` and commbench's options too).
#[test]
fn a_refused_option_is_followed_by_the_usage_as_in_osu() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let (run, codes) = launch_recorded(Mpi::OpenMpi, Mpi::OpenMpi, 2, "osu_put_latency", &["-c"], cwd.path());
    assert!(codes.iter().all(|&c| c == 1), "rank exit statuses {codes:?}: {}", run.stderr);
    assert_eq!(run.our_stderr_lines(), ["Invalid option [-c]"], "{}", run.stderr);
    let help = launch(Mpi::OpenMpi, 2, "osu_put_latency", &["-h"], &Launch::default());
    assert_eq!(help.code, Some(0), "{help:?}");
    assert_eq!(run.stdout, help.stdout);
    let osu = golden("put_latency_c");
    // An entry's head: `  -w, --win-options         ` (28 columns).
    let heads = |text: &str| -> Vec<String> {
        text.lines().filter(|l| l.starts_with("  -")).map(|l| l.chars().take(28).collect()).collect()
    };
    let osu_heads = heads(&osu);
    let ours: Vec<String> = heads(&run.stdout).into_iter().filter(|h| osu_heads.contains(h)).collect();
    assert_eq!(ours, osu_heads, "OSU's options, under OSU's letters and names, in OSU's order");
    let first_two = |text: &str| text.lines().take(2).map(String::from).collect::<Vec<_>>();
    assert_eq!(first_two(&run.stdout), first_two(&osu));
}
