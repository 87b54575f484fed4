//! Bad input under real launchers: one clear line on stderr from rank 0,
//! exit status 1 on every rank, no panic, within 5 s; on stdout the usage
//! (what -h prints) after a bad option, as OSU prints its usage, else
//! nothing.

use crate::common;

use common::*;
use std::path::Path;
use std::time::Duration;

struct Case {
    bench: &'static str,
    np: usize,
    args: &'static [&'static str],
    line: &'static str,
}

const fn case(bench: &'static str, np: usize, args: &'static [&'static str], line: &'static str) -> Case {
    Case { bench, np, args, line }
}

const CASES: &[Case] = &[
    case("osu_latency", 2, &["-q"], "Invalid option [-q]"),
    case("osu_bw", 2, &["--bogus"], "Invalid option [--bogus]"),
    case("osu_latency", 2, &["-f"], "Invalid option [-f]"),
    case("osu_latency", 2, &["-m"], "Option Missing Required Argument [-m]"),
    case("osu_mbw_mr", 2, &["-i"], "Option Missing Required Argument [-i]"),
    case("osu_latency", 2, &["-m", "1:2:3"], "Invalid Message Size [-m 1:2:3] (more than one ':')"),
    // (a lone ':' word would be MPICH mpiexec's program separator)
    case("osu_latency", 2, &["--message-size=:"], "Invalid Message Size [-m :] (give MIN:MAX, MIN: or :MAX)"),
    case("osu_bw", 2, &["-m", "abc"], "Invalid Message Size [-m abc] (not a size in bytes)"),
    case("osu_bw", 2, &["-m", "-8"], "Invalid Message Size [-m -8] (not a size in bytes)"),
    case("osu_bibw", 2, &["-m", "0"], "Invalid Message Size [-m 0] (the maximum must be at least 1 byte)"),
    case("osu_latency", 2, &["-m", "128:2"], "Invalid Message Size [-m 128:2] (minimum is larger than maximum)"),
    case("osu_mbw_mr", 2, &["-m", "8M:"], "Invalid Message Size [-m 8M:] (minimum is larger than maximum)"),
    case("osu_latency", 2, &["-i", "0"], "Invalid Number of Iterations [-i 0]"),
    case("osu_latency", 2, &["-x", "-1"], "Invalid Number of Warmup Iterations [-x -1]"),
    case("osu_bw", 2, &["-W", "0"], "Invalid Window Size [-W 0]"),
    case(
        "osu_latency",
        2,
        &["-T", "mpi_double"],
        "Invalid datatype [-T mpi_double] (use mpi_char, mpi_int, mpi_float or all)",
    ),
    case("osu_latency", 2, &["-z101"], "Percentile range must be in between 0 and 100 [-z 101]"),
    case("osu_bw", 2, &["-z50,-1"], "Percentile range must be in between 0 and 100 [-z 50,-1]"),
    case("osu_bibw", 2, &["-b", "double"], "Please use 'single' or 'multiple' for buffer type [-b double]"),
    case("osu_latency", 2, &["-m", "8", "foo"], "Unexpected argument [foo]"),
    case("osu_latency", 2, &["-m", "8", "D"], "Buffer locations come in pairs [D] (give SRC DST, e.g. H H or D D)"),
    case("osu_bw", 2, &["D", "D", "H"], "Too many buffer locations [D D H] (give SRC DST, e.g. H H or D D)"),
    case("osu_allreduce", 2, &["D", "X"], "Unexpected argument [X]"),
    case("osu_mbw_mr", 2, &["-R", "2"], "Invalid message rate option [-R 2] (use 0 or 1)"),
    case("osu_mbw_mr", 2, &["-V", "-W", "4"], "Window size (-W) cannot be combined with a varied window (-V)"),
    case(
        "osu_latency",
        2,
        &["--timeout", "soon"],
        "Invalid timeout [--timeout soon] (give 1 to 2592000 seconds, e.g. 60 or 5m, or 0 for no watchdog)",
    ),
    case(
        "osu_neighbor_alltoall",
        3,
        &["-N", "foo"],
        "Invalid topology type. Valid topology types[cart,graph] [-N foo]",
    ),
    case("osu_ineighbor_allgather", 3, &["-N", "cart:1"], "Please pass -Ncart:<dim:rad> [-N cart:1]"),
    case(
        "osu_neighbor_allgatherv",
        3,
        &["-N", "graph:/nonexistent/g"],
        "Unable to open graph adjacency list file [-N graph:/nonexistent/g] (No such file or directory (os error 2))",
    ),
    case(
        "osu_neighbor_alltoallw",
        2,
        &["-m", "8"],
        "Neighborhood radius too large [-N cart:1:1] (2 processes make a 2 grid, whose smallest dimension allows a \
         radius of at most 0; add processes or lower the dimensions or radius)",
    ),
    case("osu_latency", 3, &["-m", "8"], "This test requires exactly two processes"),
    case("osu_bw", 3, &["-m", "8"], "This test requires exactly two processes"),
    case("osu_bibw", 4, &["-m", "8"], "This test requires exactly two processes"),
    case("osu_latency", 1, &["-m", "8"], "This test requires exactly two processes"),
    case(
        "osu_mbw_mr",
        3,
        &["-m", "8"],
        "This test requires an even number of processes (rank i is paired with rank i + np/2), got 3",
    ),
    case(
        "osu_multi_lat",
        3,
        &["-m", "8"],
        "This test requires an even number of processes (rank i is paired with rank i + np/2), got 3",
    ),
    case("osu_multi_lat", 1, &["-m", "8"], "This test requires at least two processes"),
    case(
        "osu_get_mbw",
        3,
        &["-m", "8"],
        "This test requires an even number of processes (rank i is paired with rank i + np/2), got 3",
    ),
    case("osu_get_mbw", 1, &["-m", "8"], "This test requires at least two processes"),
    case(
        "osu_mbw_mr",
        4,
        &["-m", "8", "-p", "3"],
        "Invalid Number of Pairs [-p 3] (at most np/2 = 2 with 4 processes)",
    ),
    case("osu_latency", 2, &["--bind", "socket"], "Invalid value [--bind socket] (use none, core, nic or gpu)"),
    case(
        "osu_bw",
        2,
        &["--cpu-list", "0", "--bind", "core"],
        "--cpu-list already says where each rank runs; drop --bind core",
    ),
    case("osu_allreduce", 2, &["--gpu", "x"], "Invalid value [--gpu x] ('x' is not a GPU index (0, 1, ...))"),
    case("osu_gather", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_alltoallw", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_reduce_scatter_block", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_iallreduce", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_ibarrier", 1, &[], "This test requires at least two processes"),
    case("osu_iallreduce", 2, &["-t", "-1"], "Invalid Number of Probes [-t -1]"),
    case("osu_latency_mt", 2, &["-t", "0"], "Invalid Number of Threads [-t 0] (give R or S:R, each from 1 to 127)"),
    case("osu_latency_mt", 2, &["-t", "128"], "Invalid Number of Threads [-t 128] (give R or S:R, each from 1 to 127)"),
    case(
        "osu_latency_mt",
        2,
        &["-t", "2:3:4"],
        "Invalid Number of Threads [-t 2:3:4] (give R or S:R, each from 1 to 127)",
    ),
    case(
        "osu_latency_mt",
        2,
        &["-c", "-t", "3"],
        "Number of sender and receiver threads must be same when validation is enabled. Use option -t to set",
    ),
    case("osu_latency_mt", 3, &["-m", "8"], "This test requires exactly two processes"),
    case("osu_latency_mt", 2, &["-d", "cuda"], "Invalid option [-d]"),
    case("osu_latency_mp", 2, &["-t", "2:0"], "Invalid Number of Processes [-t 2:0] (give R or S:R, each from 1 to 127)"),
    case("osu_latency_mp", 1, &["-m", "8"], "This test requires exactly two processes"),
    case("osu_ibarrier", 2, &["-c"], "Invalid option [-c]"),
    case("osu_ibarrier", 2, &["-a", "0"], "Invalid Device Array Size [-a 0]"),
    case("osu_ibcast", 2, &["-l"], "Invalid option [-l] (osu_ibcast has no in-place form)"),
    case("osu_ialltoall", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_igatherv", 1, &["-m", "8"], "This test requires at least two processes"),
    case("osu_ialltoallv", 2, &["-k", "rotate"], "Invalid option [-k]"),
    case("osu_ireduce_scatter", 2, &["-k", "fixed:0"], "Invalid option [-k]"),
    case(
        "osu_gatherv",
        3,
        &["-m", "8", "-k", "fixed:3"],
        "Invalid root rank [-k fixed:3] (the root must be a rank from 0 to 2 with 3 processes)",
    ),
    case(
        "osu_bw_fan_in",
        2,
        &["-m", "8"],
        "Please run this benchmark on more than 1 node (all 2 processes are on one node)",
    ),
    case("osu_bw_fan_out", 1, &["-m", "8"], "Please run this benchmark on more than 1 node (all 1 processes are on one node)"),
    case("osu_bw_fan_in", 2, &["-c"], "Invalid option [-c]"),
    // OSU's osu_init runs whatever its options; commbench ignores OSU's
    // other letters with a warning (tests/it/startup.rs) but refuses
    // letters OSU has not.
    case("osu_init", 2, &["-q"], "Invalid option [-q]"),
    case("osu_hello", 1, &["-Q"], "Invalid option [-Q]"),
    case("osu_init", 2, &["-I"], "MPI-4 session initialisation is not supported by commbench [-I]"),
    case(
        "osu_init",
        2,
        &["--backend", "ucx"],
        "Invalid value [--backend ucx] (osu_init measures MPI's own start-up: only mpi applies)",
    ),
    case(
        "osu_scatter",
        2,
        &["-m", "8", "-k", "fixed:2"],
        "Invalid root rank [-k fixed:2] (the root must be a rank from 0 to 1 with 2 processes)",
    ),
    case(
        "osu_gather",
        2,
        &["-m", "1M", "-M", "1048576"],
        "Memory limit too low [-M 1048576] (the largest message needs 2097152-byte buffers with 2 processes; raise -M or \
         lower -m)",
    ),
    // The default limit would lower the largest size below the smallest:
    // no row, which once ended 0 with the record `complete`.
    case(
        "osu_allgather",
        3,
        &["-m", "1G:1G"],
        "Memory limit too low [-M 536870912, the default] (the smallest message, 1073741824 bytes, needs \
         3221225472-byte buffers with 3 processes; raise -M or lower -m)",
    ),
];

/// Checks one bad-input case twice, both jobs at once: with every rank's
/// status recorded, and as a user runs it (the launcher's own status must
/// say failure).
fn check_case(launcher_mpi: Mpi, built: Mpi, np: usize, bench: &str, args: &[&str], cwd: &Path, line: &str) {
    let what = format!("{launcher_mpi:?} launching {built:?} build, np={np} {bench} {args:?}");
    let plain = std::thread::scope(|s| {
        let plain = s.spawn(|| {
            let o = Launch {
                cwd: Some(cwd.to_path_buf()),
                timeout: Some(Duration::from_secs(30)),
                launcher_args: no_kill_grace(launcher_mpi),
                ..Launch::default()
            };
            launch_with(launcher_mpi, built, np, bench, args, &o)
        });
        let (run, codes) = launch_recorded(launcher_mpi, built, np, bench, args, cwd);
        assert!(codes.iter().all(|&c| c == 1), "{what}: rank exit statuses {codes:?}");
        check_output(&run, bench, args, line, &what);
        plain.join().expect("the plain launch")
    });
    assert_eq!(plain.code, Some(1), "{what}: launcher status; {plain:?}");
    check_output(&plain, bench, args, line, &what);
}

fn check_output(run: &Run, bench: &str, args: &[&str], line: &str, what: &str) {
    assert!(!run.timed_out, "{what}: hung");
    run.assert_no_panic();
    assert!(run.elapsed < under_load(Duration::from_secs(5)), "{what}: took {:?}", run.elapsed);
    assert_eq!(run.our_stderr_lines(), vec![line], "{what}: stderr was:\n{}", run.stderr);
    assert_eq!(run.stdout, usage_after(bench, args), "{what}: stdout");
}

/// What stdout holds after `bench args` is refused: the usage (what -h
/// prints, once) where the options themselves are refused, nothing where
/// the job is (its size, the node's memory).
pub fn usage_after(bench: &str, args: &[&str]) -> String {
    let spec = commbench::bench::registry::lookup(bench).expect(bench).spec;
    let words: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    match commbench::cli::parse(spec, &words) {
        Err(_) => commbench::cli::help::text(spec),
        Ok(_) => String::new(),
    }
}

fn all_cases(mpi: Mpi) {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    each_at_once(CASES, CASES_AT_ONCE, |c| check_case(mpi, mpi, c.np, c.bench, c.args, cwd.path(), c.line));
    // No result files were left behind by any failed start.
    let results = cwd.path().join("results");
    assert!(!results.exists() || std::fs::read_dir(&results).unwrap().next().is_none());
}

#[test]
fn open_mpi_bad_input() {
    all_cases(Mpi::OpenMpi);
}

#[test]
fn mpich_bad_input() {
    require_mpich!();
    all_cases(Mpi::Mpich);
}

#[test]
fn unwritable_results_directory() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let target = file.join("results");
    let arg = target.display().to_string();
    for mpi in [Mpi::OpenMpi, Mpi::Mpich] {
        if mpi == Mpi::Mpich && !have_mpich() {
            continue;
        }
        let line = format!(
            "osu_latency: cannot write results to '{arg}': Not a directory (os error 20) (choose another place \
             with --results-dir DIR, or --no-results)"
        );
        check_case(mpi, mpi, 2, "osu_latency", &["-m", "8", "--results-dir", &arg], d.path(), &line);
    }
}

#[test]
fn existing_csv_is_not_overwritten() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("mine.csv");
    std::fs::write(&csv, "precious\n").unwrap();
    let arg = csv.display().to_string();
    let line = format!("osu_bw: '{arg}' already exists; commbench never overwrites results (choose a new --csv name)");
    check_case(Mpi::OpenMpi, Mpi::OpenMpi, 2, "osu_bw", &["-m", "8", "--csv", &arg], d.path(), &line);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "precious\n");
    // A CSV named like its own record once said it "already exists".
    let json = d.path().join("jj.json");
    let arg = json.display().to_string();
    let line = format!(
        "osu_bw: --csv '{arg}': the run record goes beside the CSV with the extension .json, which would be this \
         same file (give the CSV a name ending in .csv)"
    );
    check_case(Mpi::OpenMpi, Mpi::OpenMpi, 2, "osu_bw", &["-m", "8", "--csv", &arg], d.path(), &line);
    assert!(!json.exists());
}

#[test]
fn mismatched_launcher_is_named() {
    require_mpich!();
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    // An Open MPI binary under MPICH's launcher, and the other way round:
    // each rank comes up alone in a world of one.
    check_case(
        Mpi::Mpich,
        Mpi::OpenMpi,
        2,
        "osu_latency",
        &["-m", "8"],
        d.path(),
        "MPI started 1 process but the launcher (hydra) started 2: this binary was built against Open MPI v4.1.4 \
         and the launcher belongs to another MPI; use that MPI's mpirun (or srun --mpi=pmix / --mpi=pmi2 to \
         match), or rebuild commbench against the launcher's MPI",
    );
    check_case(
        Mpi::OpenMpi,
        Mpi::Mpich,
        2,
        "osu_bw",
        &["-m", "8"],
        d.path(),
        "MPI started 1 process but the launcher (openmpi) started 2: this binary was built against MPICH Version: \
         4.0.2 and the launcher belongs to another MPI; use that MPI's mpirun (or srun --mpi=pmix / --mpi=pmi2 \
         to match), or rebuild commbench against the launcher's MPI",
    );
}

/// The ranks of an Open MPI build under MPICH's launcher are singletons
/// that each make the same session directory, `ompi.<host>.<uid>` under
/// the one TMPDIR the launcher hands them all; the rank that loses that
/// race used to print Open MPI's own forty lines instead of ours. A file
/// planted at that name makes every rank lose, every time: with a session
/// directory of its own per process, each still says the one line, and
/// leaves nothing of its own behind in TMPDIR.
#[test]
fn mismatched_launcher_is_named_whatever_the_shared_session_directory() {
    require_mpich!();
    let _g = mpi_lock();
    let tmp = tempfile::tempdir().unwrap();
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let planted = tmp.path().join(format!("ompi.{}.{uid}", commbench::topo::hostname()));
    std::fs::write(&planted, "").unwrap();
    let mut c = launcher(Mpi::Mpich, 2);
    c.args(no_kill_grace(Mpi::Mpich)).arg(bin(Mpi::OpenMpi, "osu_latency")).args(["-m", "8"]);
    c.current_dir(tmp.path()).env("TMPDIR", tmp.path());
    let run = run_cmd(c, Duration::from_secs(30));
    let line = "MPI started 1 process but the launcher (hydra) started 2: this binary was built against Open MPI \
                v4.1.4 and the launcher belongs to another MPI; use that MPI's mpirun (or srun --mpi=pmix / \
                --mpi=pmi2 to match), or rebuild commbench against the launcher's MPI";
    check_output(&run, "osu_latency", &["-m", "8"], line, "an Open MPI build under hydra, session directory taken");
    assert_eq!(run.code, Some(1), "{run:?}");
    let left: Vec<String> =
        std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left, vec![planted.file_name().unwrap().to_string_lossy().into_owned()], "left in TMPDIR");
}

#[test]
fn help_and_version_exit_zero_and_print_once() {
    let _g = mpi_lock();
    let o = Launch::default();
    let run = launch(Mpi::OpenMpi, 2, "osu_latency", &["-h"], &o);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.starts_with("Usage: osu_latency [options]\nOptions:\n"));
    assert_eq!(run.stdout.matches("Usage:").count(), 1, "only rank 0 prints help");
    // Every benchmark of the registry is built and says what it is.
    for e in commbench::bench::registry::BENCHMARKS {
        let run = launch(Mpi::OpenMpi, 1, e.name(), &["--version"], &o);
        assert_eq!(run.code, Some(0), "{}: {run:?}", e.name());
        assert_eq!(run.stdout.lines().next(), Some(e.spec.title_line().as_str()), "{}", e.name());
    }
    let run = launch(Mpi::OpenMpi, 2, "osu_mbw_mr", &["-v"], &o);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout,
        format!(
            "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\ncommbench {} (OSU 7.4 compatible)\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn buffers_larger_than_memory_are_refused_before_touching_it() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    // 64 messages of 1 GiB in flight: 64 GiB a rank (each rank is one side).
    let (run, codes) =
        launch_recorded(Mpi::OpenMpi, Mpi::OpenMpi, 2, "osu_bw", &["-m", "1G:1G", "-b", "multiple"], d.path());
    assert!(codes.iter().all(|&c| c == 1), "{codes:?}");
    run.assert_no_panic();
    assert!(run.elapsed < under_load(Duration::from_secs(5)), "{:?}", run.elapsed);
    let lines = run.our_stderr_lines();
    let re = regex::Regex::new(
        r"^osu_bw: this run needs about 64\.0 GiB more memory per rank: buffers 64\.0 GiB, requests [0-9.]+ KiB, MPI temporaries 0 B, samples [0-9.]+ (?:B|KiB|MiB) \(2 rank\(s\) on this node\) but only [0-9.]+ [KMGT]iB is available \(lower -m, -W or -i\)$",
    )
    .unwrap();
    assert!(lines.len() == 1 && re.is_match(lines[0]), "{}", run.stderr);
    assert_eq!(run.stdout, "");
}

/// Placement requests this machine cannot satisfy: the line names the
/// machine's real cpus and devices (read from `commbench topo`).
#[test]
fn impossible_placement() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let topo =
        std::process::Command::new(bin(Mpi::OpenMpi, "commbench")).args(["topo", "--format", "json"]).output().unwrap();
    let map: serde_json::Value = serde_json::from_slice(&topo.stdout).unwrap();
    let host = map["machine"]["hostname"].as_str().unwrap().to_string();
    let mut cpus: Vec<u64> = map["machine"]["cores"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["pus"].as_array().unwrap().clone())
        .map(|v| v.as_u64().unwrap())
        .collect();
    cpus.sort_unstable();
    let have = if cpus.windows(2).all(|w| w[1] == w[0] + 1) {
        format!("{}-{}", cpus[0], cpus[cpus.len() - 1])
    } else {
        eprintln!("SKIPPED part: cpus are not contiguous here");
        return;
    };
    let missing = (cpus[cpus.len() - 1] + 5).to_string();
    let nics: Vec<String> =
        map["machine"]["nics"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap().to_string()).collect();
    let found = if nics.is_empty() { "none".to_string() } else { nics.join(", ") };
    let mut cases: Vec<(&str, Vec<&str>, String)> = vec![
        (
            "osu_latency",
            vec!["--cpu-list", &missing],
            format!("osu_latency: --cpu-list {missing}: cpu {missing} does not exist on {host} (it has cpus {have})"),
        ),
        (
            "osu_bw",
            vec!["--nic", "nosuch0:1"],
            format!("osu_bw: --nic nosuch0:1: no such network device on {host} (found: {found})"),
        ),
    ];
    if map["machine"]["gpus"].as_array().unwrap().is_empty() {
        cases.push((
            "osu_allreduce",
            vec!["--bind", "gpu"],
            format!("osu_allreduce: --bind gpu: {host} has no GPU that hwloc can see"),
        ));
    }
    let mpis = if have_mpich() { &[Mpi::OpenMpi, Mpi::Mpich][..] } else { &[Mpi::OpenMpi] };
    let runs: Vec<_> = mpis.iter().flat_map(|mpi| cases.iter().map(move |c| (*mpi, c))).collect();
    each_at_once(&runs, CASES_AT_ONCE, |(mpi, (bench, args, line))| {
        let mut all = vec!["-m", "8"];
        all.extend(args.iter().copied());
        check_case(*mpi, *mpi, 2, bench, &all, d.path(), line);
    });
}
