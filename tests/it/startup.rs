//! osu_init and osu_hello against OSU 7.4's own output (tests/golden, the
//! milliseconds masked), on one rank and several, under Open MPI and MPICH,
//! with stdout and stderr merged as harnesses read them (so nothing else is
//! printed); the CSV row against the printed line; the run record.

use crate::common;

use common::*;

/// osu_init's measured milliseconds become `#`.
fn mask_ms(text: &str) -> String {
    regex::Regex::new(r"\d+ ms").expect("regex").replace_all(text, "# ms").into_owned()
}

/// The numbers of osu_init's line: nprocs, min, max, avg.
fn init_line(stdout: &str) -> [u64; 4] {
    let re = regex::Regex::new(r"(?m)^nprocs: (\d+), min: (\d+) ms, max: (\d+) ms, avg: (\d+) ms$").unwrap();
    let c = re.captures(stdout).unwrap_or_else(|| panic!("no osu_init line in\n{stdout}"));
    [1, 2, 3, 4].map(|i| c[i].parse().unwrap())
}

fn layouts(mpi: Mpi) {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    for np in [1, 2, 3] {
        let o = Launch { cwd: Some(cwd.path().to_path_buf()), merge_streams: true, ..Launch::default() };
        let run = launch(mpi, np, "osu_init", &[], &o);
        assert_eq!(run.code, Some(0), "{mpi:?} osu_init np={np}: {run:?}");
        run.assert_no_panic();
        let want = mask_ms(&golden("init")).replace("nprocs: 2", &format!("nprocs: {np}"));
        assert_eq!(mask_ms(&run.stdout), want, "{mpi:?} osu_init np={np}");
        let run = launch(mpi, np, "osu_hello", &[], &o);
        assert_eq!(run.code, Some(0), "{mpi:?} osu_hello np={np}: {run:?}");
        let want = golden("hello_np1").replace("with 1 processes", &format!("with {np} processes"));
        assert_eq!(run.stdout, want, "{mpi:?} osu_hello np={np}");
    }
    assert_eq!(golden("hello_np2"), golden("hello_np1").replace("with 1 ", "with 2 "));
}

#[test]
fn open_mpi_startup_matches_osu() {
    layouts(Mpi::OpenMpi);
}

#[test]
fn mpich_startup_matches_osu() {
    require_mpich!();
    layouts(Mpi::Mpich);
}

/// The CSV row carries the printed values (whole milliseconds, in
/// microseconds) and the exact per-rank times; the record lists every rank.
#[test]
fn init_csv_equals_stdout() {
    let _g = mpi_lock();
    for bench in ["osu_init", "osu_hello"] {
        let o = run_with_results(Mpi::OpenMpi, 3, bench, &[]);
        assert_eq!(o.csv.len(), 1, "{bench}");
        let r = &o.csv[0];
        assert_eq!((r["benchmark"].as_str(), r["np"].as_str(), r["size_bytes"].as_str()), (bench, "3", "0"));
        let us = |c: &str| -> f64 { r[c].parse().unwrap_or_else(|_| panic!("{bench} {c} = '{}'", r[c])) };
        let (min, max, avg) = (us("min_lat_us"), us("max_lat_us"), us("avg_lat_us"));
        if bench == "osu_init" {
            let [np, pmin, pmax, pavg] = init_line(&o.run.stdout);
            assert_eq!(np, 3);
            assert_eq!([min, max, avg], [pmin, pmax, pavg].map(|v| v as f64 * 1e3));
        }
        // exact per-rank times: whole milliseconds truncate them
        let (emin, emax) = (us("iter_min_us"), us("iter_max_us"));
        assert_eq!(((emin / 1e3).floor() * 1e3, (emax / 1e3).floor() * 1e3), (min, max), "{bench}");
        assert!(min <= avg && avg <= max, "{bench}: {r:?}");
        assert!(emin > 0.0, "{bench}: MPI_Init took no time? {r:?}");
        assert_eq!(o.record["status"], "complete", "{bench}");
        assert_eq!(o.record["results"]["rows"], 1, "{bench}");
        assert_eq!(o.record["ranks"].as_array().map(Vec::len), Some(3), "{bench}");
    }
}

/// `-h` and `-v` answer as every commbench binary does (OSU's osu_init
/// ignores its options; see docs/osu-binaries.md).
#[test]
fn help_and_version() {
    let _g = mpi_lock();
    let o = Launch::default();
    let run = launch(Mpi::OpenMpi, 1, "osu_init", &["-v"], &o);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.starts_with("# OSU MPI Init Test v7.4\ncommbench "), "{}", run.stdout);
    let run = launch(Mpi::OpenMpi, 1, "osu_hello", &["-h"], &o);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("any number of processes"), "{}", run.stdout);
}

/// What a job costs rank 0 grows linearly with np: at 32 ranks, the bytes
/// rank 0 gathers about the ranks at start-up are no more per rank than at
/// 4 (a quarter more at most: host names and cpu lists differ in length),
/// and each rank added to the run record costs what it cost from 4 to 8
/// ranks (the record's fixed part taken out by the difference). A step
/// that gathers np items from every rank, or a record that lists every
/// rank in every rank's entry, grows 5- to 8-fold per rank between the two
/// and fails here. About 2 s: three short jobs, the largest 32 ranks on two
/// cores (8 would be too few to tell a quadratic step from per-rank noise).
#[test]
fn start_up_costs_grow_linearly_to_32_ranks() {
    let _g = mpi_lock();
    let cost = |np: usize| {
        let o = run_with_results(Mpi::OpenMpi, np, "osu_barrier", &["-i", "5", "-x", "1"]);
        let st = &o.record["startup"];
        let (bytes, gathers) = (st["gathered_bytes"].as_u64().unwrap(), st["gathers"].as_u64().unwrap());
        assert_eq!(o.record["ranks"].as_array().unwrap().len(), np);
        (bytes as f64, gathers, serde_json::to_string(&o.record).unwrap().len() as f64)
    };
    let (b4, g4, r4) = cost(4);
    let (_, _, r8) = cost(8);
    let (b32, g32, r32) = cost(32);
    assert!(b4 > 0.0, "rank 0 gathered nothing at start-up");
    assert_eq!(g4, g32, "the number of start-up gathers depends on np");
    let (per4, per32) = (b4 / 4.0, b32 / 32.0);
    assert!(per32 <= 1.25 * per4, "start-up gathers per rank: {per4:.0} B at np 4, {per32:.0} B at np 32");
    let (early, late) = ((r8 - r4) / 4.0, (r32 - r8) / 24.0);
    assert!(
        late <= 1.25 * early,
        "run record per added rank: {early:.0} B from 4 to 8 ranks, {late:.0} B from 8 to 32"
    );
}

/// OSU's benchmark options given to osu_init and osu_hello (Ramble's stock
/// osu-micro-benchmarks workload passes `-x 10 -i 100` to every program):
/// both run and print OSU's lines, with one warning from rank 0 naming
/// what was ignored, which the run record keeps (OSU's osu_init warns and
/// runs; its osu_hello reads no option). They had refused with `Invalid
/// option [-x]` and exit 1.
#[test]
fn osu_benchmark_options_are_ignored_with_a_warning() {
    let _g = mpi_lock();
    for (bench, want) in [("osu_init", mask_ms(&golden("init"))), ("osu_hello", golden("hello_np2"))] {
        let o = run_with_results(Mpi::OpenMpi, 2, bench, &["-x", "10", "-i", "100", "-m", "8"]);
        assert_eq!(mask_ms(&o.run.stdout), want, "{bench}");
        let warning = format!(
            "{bench}: warning: ignoring -x 10 -i 100 -m 8 (it starts MPI once and repeats nothing: OSU's benchmark \
             options do not apply)"
        );
        assert_eq!(o.run.our_stderr_lines(), [warning.as_str()], "{bench}: {}", o.run.stderr);
        assert_eq!(o.record["options"]["ignored"], serde_json::json!(["-x 10", "-i 100", "-m 8"]), "{bench}");
        assert_eq!(o.record["status"], "complete", "{bench}");
    }
}
