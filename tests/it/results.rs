//! Result files from real runs: the CSV holds what stdout shows (to the
//! printed digit), one row per (datatype, size[, window]); the JSON run
//! record says what ran, where and how it ended; names never collide; a
//! killed job keeps every finished row.

use crate::common;

use common::*;
use serde_json::Value;
use std::time::Instant;

/// Checks that each stdout row's value columns equal the CSV's, rounded
/// as OSU prints them.
fn assert_csv_matches_stdout(o: &Outcome, main_col: &str, extra: &[&str], tails: usize) {
    let rows = osu_rows(&o.run.stdout);
    assert_eq!(rows.len(), o.csv.len(), "row count\n{}", o.run.stdout);
    for (row, rec) in rows.iter().zip(&o.csv) {
        assert_eq!(row[0], rec["size_bytes"]);
        assert_eq!(row[1], two_decimals(&rec[main_col]), "{main_col} at size {}", row[0]);
        let mut i = 2;
        for col in extra {
            let want = if *col == "validation" { rec[*col].clone() } else { two_decimals(&rec[*col]) };
            assert_eq!(row[i], want, "{col} at size {}", row[0]);
            i += 1;
        }
        let tail_vals: Vec<String> = rec["osu_tails"]
            .split(';')
            .filter(|s| !s.is_empty())
            .map(|t| two_decimals(t.split_once('=').unwrap().1))
            .collect();
        assert_eq!(tail_vals.len(), tails);
        assert_eq!(&row[i..], &tail_vals[..], "tails at size {}", row[0]);
        // per-iteration summary is always there
        let iter_cols: Vec<&str> =
            commbench::report::csv::COLUMNS.iter().copied().filter(|c| c.starts_with("iter_")).collect();
        assert_eq!(
            iter_cols,
            [
                "iter_min_us",
                "iter_mean_us",
                "iter_p50_us",
                "iter_p90_us",
                "iter_p99_us",
                "iter_max_us",
                "iter_stddev_us",
                "iter_p999_us"
            ]
        );
        for c in iter_cols {
            let v: f64 = rec[c].parse().unwrap_or_else(|_| panic!("{c} = '{}'", rec[c]));
            assert!(v.is_finite() && v >= 0.0, "{c} = {v}");
        }
        let [p50, p99, p999, max]: [f64; 4] =
            ["iter_p50_us", "iter_p99_us", "iter_p999_us", "iter_max_us"].map(|c| rec[c].parse().unwrap());
        assert!(p50 <= p99 * 1.001 && p99 <= p999 * 1.001 && p999 <= max * 1.001, "percentiles out of order: {rec:?}");
    }
}

/// `--format csv` puts the results file itself on stdout, byte for byte,
/// and nothing else, for a point-to-point and a collective benchmark.
#[test]
fn format_csv_is_the_results_file_on_stdout() {
    let _g = mpi_lock();
    for (bench, args) in
        [("osu_latency", &["-m", "1:64", "-i", "100", "-c"][..]), ("osu_allreduce", &["-m", "4:64", "-f"])]
    {
        let mut all = args.to_vec();
        all.extend(["--format", "csv"]);
        let o = run_with_results(Mpi::OpenMpi, 2, bench, &all);
        let file = std::fs::read_to_string(&o.csv_path).unwrap();
        assert_eq!(o.run.stdout, file, "{bench}");
        assert!(file.starts_with(&format!("{}\n", commbench::report::csv::COLUMNS.join(","))));
        assert_eq!(o.csv.len(), file.lines().count() - 1, "{bench}");
        assert!(o.csv.iter().all(|r| r["benchmark"] == bench));
    }
}

#[test]
fn latency_tails_csv_equals_stdout() {
    let _g = mpi_lock();
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_latency", &["-m", "1:64", "-z"]);
    assert!(o.run.stdout.contains("P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)"));
    assert_csv_matches_stdout(&o, "avg_lat_us", &[], 3);
    let sizes: Vec<&str> = o.csv.iter().map(|r| r["size_bytes"].as_str()).collect();
    assert_eq!(sizes, ["1", "2", "4", "8", "16", "32", "64"]);
    for r in &o.csv {
        assert_eq!(r["benchmark"], "osu_latency");
        assert_eq!(r["backend"], "mpi");
        assert_eq!(r["datatype"], "MPI_CHAR");
        assert_eq!((r["np"].as_str(), r["pairs"].as_str()), ("2", "1"));
        assert_eq!((r["iterations"].as_str(), r["warmup"].as_str()), ("10000", "100"));
        assert_eq!(r["window"], "");
        assert_eq!(r["bw_MBps"], "");
        // the mean of the per-iteration one-way latencies is the average
        let (avg, mean): (f64, f64) = (r["avg_lat_us"].parse().unwrap(), r["iter_mean_us"].parse().unwrap());
        assert!((avg - mean).abs() < 1e-6 * avg.max(1.0), "{avg} vs {mean}");
    }
}

#[test]
fn every_benchmark_csv_equals_stdout() {
    let _g = mpi_lock();
    let common_args = ["-m", "1:256", "-i", "50", "-x", "5", "-c", "-z"];
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_bw", &common_args);
    assert_csv_matches_stdout(&o, "bw_MBps", &["validation"], 3);
    assert!(o.csv.iter().all(|r| r["window"] == "64" && r["validation"] == "Pass"));
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_bibw", &common_args);
    assert_csv_matches_stdout(&o, "bw_MBps", &["validation"], 3);
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_mbw_mr", &common_args);
    assert_csv_matches_stdout(&o, "bw_MBps", &["msg_rate_per_s", "validation"], 3);
    let o = run_with_results(Mpi::OpenMpi, 4, "osu_multi_lat", &common_args);
    assert_csv_matches_stdout(&o, "avg_lat_us", &["validation"], 3);
    assert!(o.csv.iter().all(|r| r["np"] == "4" && r["pairs"] == "2"));
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_latency", &["-m", "1:64", "-i", "50", "-T", "all", "-c"]);
    assert_csv_matches_stdout(&o, "avg_lat_us", &["validation"], 0);
    let types: Vec<(&str, &str)> = o.csv.iter().map(|r| (r["datatype"].as_str(), r["elements"].as_str())).collect();
    assert_eq!(types.len(), 7 + 5 + 5);
    assert_eq!(types[7], ("MPI_INT", "1"));
    assert_eq!(types[16], ("MPI_FLOAT", "16"));
}

/// `-b multiple` gives every message in flight its own buffer (and its own
/// validation pattern); every benchmark must still pass validation.
#[test]
fn multiple_buffers_validate() {
    let _g = mpi_lock();
    for (bench, np) in [("osu_latency", 2), ("osu_bw", 2), ("osu_bibw", 2), ("osu_mbw_mr", 4), ("osu_multi_lat", 4)] {
        let run = launch(
            Mpi::OpenMpi,
            np,
            bench,
            &["-m", "1:16K", "-i", "20", "-x", "2", "-b", "multiple", "-c", "-u", "2", "-T", "all", "--no-results"],
            &Launch::default(),
        );
        assert_eq!(run.code, Some(0), "{bench}: {run:?}");
        let rows = osu_rows(&run.stdout);
        assert_eq!(rows.len(), 15 + 13 + 13, "{bench}");
        assert!(rows.iter().all(|r| r.contains(&"Pass".to_string())), "{bench}:\n{}", run.stdout);
    }
}

#[test]
fn varied_window_rows_carry_their_window() {
    let _g = mpi_lock();
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_mbw_mr", &["-m", "4", "-i", "10", "-x", "1", "-V"]);
    assert_eq!(o.csv.len(), 3 * 8);
    let lines: Vec<&str> = o.run.stdout.lines().collect();
    let bw_rows: Vec<Vec<&str>> = lines
        .iter()
        .skip_while(|l| !l.starts_with("# Uni-directional"))
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(bw_rows.len(), 3);
    for (k, rec) in o.csv.iter().enumerate() {
        let (size_row, w) = (k / 8, k % 8);
        assert_eq!(rec["window"], [1, 2, 4, 8, 16, 32, 64, 128][w].to_string());
        assert_eq!(rec["size_bytes"], bw_rows[size_row][0]);
        assert_eq!(two_decimals(&rec["bw_MBps"]), bw_rows[size_row][1 + w]);
    }
}

#[test]
fn run_record_describes_the_run() {
    let _g = mpi_lock();
    let args = ["-m", "1:8", "-i", "10", "-x", "1", "--timeout", "60"];
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_bw", &args);
    let r = &o.record;
    assert_eq!(r["schema"], "commbench-run-record/1");
    assert_eq!(r["benchmark"], "osu_bw");
    assert_eq!(r["title"], "# OSU MPI Bandwidth Test v7.4");
    assert_eq!(r["status"], "complete");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["commbench"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(r["commbench"]["osu_compatible"], "7.4");
    let commit = r["commbench"]["git_commit"].as_str().unwrap();
    assert!(!commit.is_empty());
    let cmd: Vec<&str> = r["command_line"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(cmd[0].ends_with("osu_bw"));
    assert_eq!(&cmd[1..9], &args);
    assert!(r["mpi"]["library_version"].as_str().unwrap().starts_with("Open MPI v"));
    assert_eq!(r["mpi"]["world_size"], 2);
    assert_eq!(r["launcher"]["kind"], "openmpi");
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for (i, rk) in ranks.iter().enumerate() {
        assert_eq!(rk["rank"], i);
        assert_eq!(rk["local_rank"], i);
        assert!(rk["pid"].as_u64().unwrap() > 0);
        assert!(!rk["cpus"].as_str().unwrap().is_empty());
        assert!(rk["cpu_count"].as_u64().unwrap() >= 1);
        assert!(r["hosts"].as_array().unwrap().contains(&rk["host"]));
        // What competed with the rank: this host's load and CPUs at its
        // start and end, its own switches, and a look between sizes after
        // each of the CSV's sizes, in order (procs::load).
        let load = &rk["load"];
        for s in [&load["before"], &load["after"]] {
            assert!(s["load1"].as_f64().is_some_and(|l| l >= 0.0), "{load}");
            assert!(s["online_cpus"].as_u64().is_some_and(|n| n >= 1), "{load}");
            assert!(s["cpu_ticks"].as_u64().is_some() && s["involuntary_switches"].as_u64().is_some(), "{load}");
            assert!(s["runq_wait_ns"].as_u64().is_some(), "{load}");
        }
        assert!(load["before"]["at_s"].as_f64() <= load["after"]["at_s"].as_f64(), "{load}");
        assert!(load["max_load1"].as_f64() >= load["before"]["load1"].as_f64(), "{load}");
        let seen: Vec<u64> = load["sizes"].as_array().unwrap().iter().map(|s| s["size"].as_u64().unwrap()).collect();
        let csv_sizes: Vec<u64> = o.csv.iter().map(|r| r["size_bytes"].parse().unwrap()).collect();
        assert_eq!(seen, csv_sizes, "{load}");
    }
    assert_eq!(r["environment"]["OMPI_COMM_WORLD_SIZE"], "2");
    assert_eq!(r["iteration_policy"]["small_iterations"], 10);
    assert_eq!(r["iteration_policy"]["large_above_bytes"], 8192);
    assert_eq!(r["iteration_policy"]["window"], 64);
    assert_eq!(r["results"]["rows"], o.csv.len());
    assert_eq!(r["results"]["csv"], o.csv_path.display().to_string());
    assert!(r["start_utc"].as_str().unwrap() <= r["end_utc"].as_str().unwrap());
    assert_eq!(r["options"]["max_size"], 8);
    assert_eq!(r["options"]["datatypes"], serde_json::json!(["MPI_CHAR"]));
    assert_eq!(r["options"]["timeout_s"], 60.0);
    assert_eq!(r["options"]["buffers"], "single");
    // The plan as resolved: every point the CSV has, its counts and cell,
    // and the memory estimate the run checked.
    let plan = &r["plan"];
    assert_eq!((plan["np"].as_u64(), plan["pairs"].as_u64(), plan["max_size"].as_u64()), (Some(2), Some(1), Some(8)));
    assert_eq!(plan["needs"], "point_to_point");
    // -i and -x for every size: one span of every size the CSV has.
    let spans = plan["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 1, "{plan}");
    let sizes: Vec<String> = spans[0]["sizes"].as_array().unwrap().iter().map(|s| s.to_string()).collect();
    assert_eq!(sizes, o.csv.iter().map(|r| r["size_bytes"].clone()).collect::<Vec<_>>());
    assert_eq!((spans[0]["iterations"].as_u64(), spans[0]["warmup"].as_u64()), (Some(10), Some(1)));
    assert_eq!(spans[0]["datatype"], "MPI_CHAR");
    assert_eq!(spans[0]["cells"], serde_json::json!([{ "window": 64, "in_place": null }]));
    let mem = &plan["memory"];
    assert!(mem["buffers"].as_u64().unwrap() >= 8 && mem["requests"].as_u64().unwrap() > 0, "{mem}");
    assert!(mem["expected_peak"].as_u64().unwrap() > mem["held_at_start"].as_u64().unwrap(), "{mem}");
    // A collective's names its operation.
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_iallgatherv", &["-m", "4:4", "-i", "3", "-x", "1"]);
    assert_eq!(
        (o.record["plan"]["needs"].as_str(), o.record["plan"]["collective"].as_str()),
        (Some("non_blocking_collectives"), Some("iallgatherv"))
    );
}

/// A rank sharing its CPU with a task that wants all of it waits for
/// whole scheduler slices, and its record says the host was busy, by the
/// waiting rule (procs::load), which judges a run of a fraction of a second
/// as well: here an osu_allreduce of about 0.1-0.2 s, too short for a
/// switch rate, beside a loop started just before it, when the load
/// average has not yet moved (measured: load 1.8 on 2 cores, rank 0 waited
/// 50%). One-sided: whatever else the machine runs only adds waiting.
#[test]
fn a_rank_sharing_its_cpu_is_recorded_waiting() {
    struct Spin(std::process::Child);
    impl Drop for Spin {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _g = mpi_lock();
    // On CPU 0, where `--bind-to hwthread` puts rank 0 (checked below).
    let spin = std::process::Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .map(Spin)
        .expect("taskset");
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("res");
    let rds = rd.display().to_string();
    let o = Launch { launcher_args: vec!["--bind-to".into(), "hwthread".into()], ..Launch::default() };
    let run = launch(Mpi::OpenMpi, 2, "osu_allreduce", &["--results-dir", &rds, "--timeout", "60"], &o);
    drop(spin);
    assert_eq!(run.code, Some(0), "{run:?}");
    let jsons = files_with_ext(&rd, "json");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&jsons[0]).unwrap()).unwrap();
    assert_eq!(r["ranks"][0]["cpus"], "0", "rank 0 must share CPU 0 with the loop");
    let load: commbench::procs::load::RankLoad = serde_json::from_value(r["ranks"][0]["load"].clone()).unwrap();
    let (pct, waited) = load.wait().expect("this kernel says how long a thread waited");
    assert!(
        pct > commbench::procs::load::WAIT_BUSY_PCT && waited >= commbench::procs::load::MIN_WAIT_S,
        "{pct}% {waited} s"
    );
    let line = commbench::procs::load::busy_line_of_record(&r).expect("a busy host");
    assert!(line.starts_with("the host was busy: ") && line.contains("waited for a CPU"), "{line}");
    // The samples between sizes carry the waiting too, and it only grows.
    let waits: Vec<u64> = load.sizes.iter().map(|s| s.runq_wait_ns.unwrap()).collect();
    assert!(waits.windows(2).all(|w| w[0] <= w[1]) && !waits.is_empty(), "{waits:?}");
}

#[test]
fn mpich_results() {
    require_mpich!();
    let _g = mpi_lock();
    // Few iterations: OSU's default 10000 per size are 80000 round trips,
    // each of which waits for the scheduler to run the partner on a busy
    // machine (MPICH's shared memory polls); the test reads the files, not
    // the timings.
    let o = run_with_results(Mpi::Mpich, 2, "osu_latency", &["-m", "1:64", "-z", "-c", "-i", "200", "-x", "20"]);
    assert_csv_matches_stdout(&o, "avg_lat_us", &["validation"], 3);
    assert!(o.record["mpi"]["library_version"].as_str().unwrap().starts_with("MPICH"));
    assert_eq!(o.record["launcher"]["kind"], "hydra");
    assert_eq!(o.record["ranks"].as_array().unwrap().len(), 2);
}

#[test]
fn names_never_collide_and_results_can_be_redirected_or_off() {
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let cwd = Launch { cwd: Some(dir.path().to_path_buf()), ..Launch::default() };
    // default: results/ under the working directory; three runs, three sets
    for _ in 0..3 {
        let run = launch(Mpi::OpenMpi, 2, "osu_latency", &["-m", "4", "-i", "10"], &cwd);
        assert_eq!(run.code, Some(0));
    }
    let res = dir.path().join("results");
    assert_eq!(files_with_ext(&res, "csv").len(), 3);
    assert_eq!(files_with_ext(&res, "json").len(), 3);
    // --csv FILE puts the record beside it
    let csv = dir.path().join("sub/mine.csv");
    let run = launch(Mpi::OpenMpi, 2, "osu_bw", &["-m", "4", "-i", "10", "--csv", &csv.display().to_string()], &cwd);
    assert_eq!(run.code, Some(0));
    assert_eq!(read_csv(&csv).len(), 3);
    assert!(dir.path().join("sub/mine.json").exists());
    // --no-results: stdout only
    let empty = tempfile::tempdir().unwrap();
    let run = launch(
        Mpi::OpenMpi,
        2,
        "osu_bw",
        &["-m", "4", "-i", "10", "--no-results"],
        &Launch { cwd: Some(empty.path().to_path_buf()), ..Launch::default() },
    );
    assert_eq!(run.code, Some(0));
    assert_eq!(osu_rows(&run.stdout).len(), 3);
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
    // COMMBENCH_RESULTS_DIR sets the default directory
    let envdir = dir.path().join("from-env");
    let run = launch(
        Mpi::OpenMpi,
        2,
        "osu_latency",
        &["-m", "4", "-i", "10"],
        &Launch { env: vec![("COMMBENCH_RESULTS_DIR".into(), envdir.display().to_string())], ..cwd.clone() },
    );
    assert_eq!(run.code, Some(0));
    assert_eq!(files_with_ext(&envdir, "csv").len(), 1);
}

/// A job killed mid-run keeps every row it finished, each complete. The
/// whole job is killed at once, as a scheduler ends a step: every rank and
/// then the launcher (Open MPI puts each rank in its own process group, so
/// killing the launcher's group alone leaves the ranks running on, to fail
/// their next write and end the record as an error).
#[test]
fn killed_job_keeps_finished_rows() {
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("k.csv");
    let record = dir.path().join("k.json");
    let mut c = launcher(Mpi::OpenMpi, 2);
    c.arg(bin(Mpi::OpenMpi, "osu_latency"))
        .args(["-i", "3000", "-x", "10", "--csv", &csv.display().to_string()])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    common::OwnSession::own_session(&mut c);
    let _tmpdir = own_tmpdir(&mut c);
    let mut child = c.spawn().unwrap();
    let pids = jobs::wait_started(&record, &csv, 2, 5, Instant::now());
    assert!(child.try_wait().unwrap().is_none(), "finished before it could be killed");
    for &p in &pids {
        jobs::signal(p, libc::SIGKILL);
    }
    jobs::signal(-(child.id() as i32), libc::SIGKILL);
    let _ = child.wait();
    let rows = read_csv(&csv);
    assert!(rows.len() >= 5 && rows.len() < 23, "{} rows", rows.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["size_bytes"], (1usize << i).to_string());
        assert!(r["avg_lat_us"].parse::<f64>().unwrap() > 0.0);
        assert!(!r["finished_utc"].is_empty());
    }
    let record: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("k.json")).unwrap()).unwrap();
    assert_eq!(record["status"], "running", "a killed run cannot claim to be complete");
}

/// `--format json`: stdout is JSON Lines only (a run object, one object
/// per row, an end object), each row's values the CSV's to the bit; a
/// collective's `-f` adds min and max over ranks.
#[test]
fn json_format_rows_equal_the_csv() {
    let _g = mpi_lock();
    // Every stdout line, as written and as parsed.
    let parse = |o: &Outcome| -> Vec<(String, Value)> {
        assert_eq!(o.run.code, Some(0), "{:?}", o.run);
        let lines = o.run.stdout.lines();
        lines
            .map(|l| match serde_json::from_str(l) {
                Ok(v) => (l.to_string(), v),
                Err(e) => panic!("not JSON ({e}): {l}\n{}", o.run.stdout),
            })
            .collect()
    };
    // The number as written, read back with Rust's correctly rounded
    // parser (serde_json's own may be a unit in the last place off).
    let same = |(line, _): &(String, Value), csv: &str, col: &str| {
        let want: f64 = csv.parse().unwrap_or_else(|_| panic!("{col}: CSV '{csv}'"));
        let written = regex::Regex::new(&format!(r#""{col}":([-+.0-9eE]+)[,}}]"#)).unwrap();
        let got = written.captures(line).unwrap_or_else(|| panic!("no {col}: {line}"))[1].parse::<f64>();
        assert_eq!(got, Ok(want), "{col}: {line}");
    };

    let args = ["--format", "json", "-m", "1:64", "-i", "10", "-x", "1"];
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_latency", &args);
    let lines = parse(&o);
    let run = &lines[0].1;
    assert_eq!(
        (run["type"].as_str(), run["benchmark"].as_str(), run["backend"].as_str(), run["np"].as_u64()),
        (Some("run"), Some("osu_latency"), Some("mpi"), Some(2))
    );
    assert_eq!(run["title"], "OSU MPI Latency Test v7.4");
    let end = &lines[lines.len() - 1].1;
    assert_eq!((end["type"].as_str(), end["rows"].as_u64()), (Some("end"), Some(7)));
    let rows = &lines[1..lines.len() - 1];
    assert_eq!(rows.len(), o.csv.len());
    for (row, rec) in rows.iter().zip(&o.csv) {
        let v = &row.1;
        assert_eq!((v["type"].as_str(), v["size_bytes"].to_string()), (Some("row"), rec["size_bytes"].clone()));
        assert_eq!((v["datatype"].as_str(), v["in_place"].as_bool()), (Some("MPI_CHAR"), Some(false)));
        assert_eq!((v["iterations"].as_u64(), v["warmup"].as_u64()), (Some(10), Some(1)));
        for col in ["avg_lat_us", "iterations_run", "ci95_rel_pct"] {
            same(row, &rec[col], col);
        }
    }
    let sizes: Vec<u64> = rows.iter().filter_map(|r| r.1["size_bytes"].as_u64()).collect();
    assert_eq!(sizes, [1, 2, 4, 8, 16, 32, 64]);

    let args = ["--format", "json", "-f", "-m", "4:16", "-i", "10", "-x", "1"];
    let o = run_with_results(Mpi::OpenMpi, 2, "osu_allreduce", &args);
    let lines = parse(&o);
    let rows = &lines[1..lines.len() - 1];
    assert_eq!((rows.len(), o.csv.len(), lines[4].1["type"].as_str()), (3, 3, Some("end")), "{}", o.run.stdout);
    for (row, rec) in rows.iter().zip(&o.csv) {
        for col in ["avg_lat_us", "min_lat_us", "max_lat_us", "algbw_GBps", "busbw_GBps"] {
            same(row, &rec[col], col);
        }
    }
}
