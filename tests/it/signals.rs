//! A run's end is always recorded, on real jobs: SIGTERM and SIGINT to the
//! launcher mid-run, a rank killed outright, a watchdog that fires on rank 1
//! only, and `commbench suite` signalled, killed or out of --max-time. The
//! record must not stay `running`, finished CSV rows stay whole, and
//! nothing of the job is left behind. Under MPICH, whose launcher kills
//! every rank with SIGKILL when one dies or it is killed itself, no rank
//! survives to end the record: the next reader (compare, the suite) that
//! finds them all gone ends it `killed`.

use crate::common;
use crate::common::OwnSession;

use common::jobs::*;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct LongRun {
    child: Child,
    group: i32,
    pids: Vec<i32>,
    record: std::path::PathBuf,
    csv: std::path::PathBuf,
    _dir: tempfile::TempDir,
    _tmpdir: tempfile::TempDir,
}

/// A long osu_latency under `mpi` with 2 ranks, running with rows written
/// ([`long_iterations`] round trips a size: the first row comes within a
/// second on an idle machine and within the wait's limit on a loaded one,
/// and the sizes up to 4 MiB still take long).
fn long_latency(mpi: Mpi, extra: &[&str]) -> LongRun {
    long_run(mpi, "osu_latency", extra, 1)
}

/// [`long_latency`] of `bench`, once the record lists the ranks and the
/// CSV has `rows` rows.
fn long_run(mpi: Mpi, bench: &str, extra: &[&str], rows: usize) -> LongRun {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let record = dir.path().join("s.json");
    let mut c = launcher(mpi, 2);
    c.arg(bin(mpi, bench))
        .args(["-i", long_iterations(mpi), "-x", "10", "--csv", &csv.display().to_string()])
        .args(extra)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .own_session();
    let tmpdir = own_tmpdir(&mut c);
    let start = Instant::now();
    let child = c.spawn().unwrap();
    let group = child.id() as i32;
    let pids = wait_started(&record, &csv, 2, rows, start);
    LongRun { child, group, pids, record, csv, _dir: dir, _tmpdir: tmpdir }
}

fn launcher_signal(mpi: Mpi, sig: i32) {
    let mut r = long_latency(mpi, &[]);
    signal(r.child.id() as i32, sig);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    clean_up(r.group, &r.pids);
    let code = code.expect("the job did not end after the signal");
    // The launcher's own status is its choice: MPICH's mpiexec, leading
    // its own process group, exits 0 after forwarding SIGTERM even though
    // the ranks exit 143 (the record's exit_code, checked below).
    if mpi == Mpi::OpenMpi {
        assert_ne!(code, Some(0), "{mpi:?}");
    }
    let v = read_json(&r.record).unwrap();
    assert_eq!(v["status"], "interrupted", "{mpi:?}: {v}");
    // Open MPI's mpirun ends its ranks with SIGTERM whatever it got.
    let code = v["exit_code"].as_i64().unwrap() as i32;
    assert!(code == 128 + sig || code == 128 + libc::SIGTERM, "{mpi:?}: {v}");
    let detail = v["status_detail"].as_str().unwrap();
    assert!(detail.contains("at message size ") && detail.contains("step: "), "{detail}");
    assert!(v["end_utc"].is_string());
    csv_intact(&r.csv);
    assert!(!read_csv(&r.csv).is_empty());
}

#[test]
fn sigterm_to_mpirun_is_recorded() {
    let _g = mpi_lock();
    launcher_signal(Mpi::OpenMpi, libc::SIGTERM);
}

#[test]
fn sigint_to_mpirun_is_recorded() {
    let _g = mpi_lock();
    launcher_signal(Mpi::OpenMpi, libc::SIGINT);
}

#[test]
fn sigterm_to_mpiexec_mpich_is_recorded() {
    require_mpich!();
    let _g = mpi_lock();
    launcher_signal(Mpi::Mpich, libc::SIGTERM);
}

/// A rank killed outright: rank 0 sees it gone, the record says so, and
/// the job ends within a bound.
#[test]
fn a_killed_rank_ends_the_job_and_is_recorded() {
    let _g = mpi_lock();
    let mut r = long_latency(Mpi::OpenMpi, &[]);
    let killed = Instant::now();
    signal(r.pids[1], libc::SIGKILL);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    let took = killed.elapsed();
    clean_up(r.group, &r.pids);
    let code = code.expect("the job did not end after a rank was killed");
    assert_ne!(code, Some(0));
    assert!(took < under_load(Duration::from_secs(15)), "took {took:?}");
    let v = read_json(&r.record).unwrap();
    assert_ne!(v["status"], "running", "{v}");
    assert_eq!(v["status"], "rank_failed", "{v}");
    assert!(v["status_detail"].as_str().unwrap().contains("rank 1 (pid "), "{v}");
    csv_intact(&r.csv);
}

/// Rank 0 itself killed (as when an MPI error aborts it): the launcher
/// ends rank 1, which finds rank 0 gone and ends the record for it.
#[test]
fn rank_zero_killed_is_recorded_by_rank_one() {
    let _g = mpi_lock();
    let mut r = long_latency(Mpi::OpenMpi, &[]);
    let killed = Instant::now();
    signal(r.pids[0], libc::SIGKILL);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    let took = killed.elapsed();
    clean_up(r.group, &r.pids);
    assert_ne!(code.expect("the job did not end after rank 0 was killed"), Some(0));
    assert!(took < under_load(Duration::from_secs(15)), "took {took:?}");
    let v = read_json(&r.record).unwrap();
    assert_eq!(v["status"], "rank_failed", "{v}");
    assert_eq!(v["ended_by_rank"], 1, "{v}");
    let detail = v["status_detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("rank 0 (pid {} on ", r.pids[0])), "{detail}");
    assert!(detail.contains("rank 1 was at message size "), "{detail}");
    csv_intact(&r.csv);
}

/// Rank 0 frozen: only rank 1's watchdog fires, and rank 1 ends the record
/// `timeout` (rank 0 cannot); rank 0, continued and then ended by the
/// launcher, keeps that first-hand timeout rather than its own view (a
/// rank gone).
#[test]
fn a_watchdog_on_rank_one_is_recorded_as_timeout() {
    let _g = mpi_lock();
    let mut r = long_latency(Mpi::OpenMpi, &["--timeout", "2"]);
    signal(r.pids[0], libc::SIGSTOP);
    // Rank 1's watchdog ends it after 2 s; then rank 0 may go on.
    let start = Instant::now();
    while alive(r.pids[1]) && start.elapsed() < under_load(Duration::from_secs(15)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(r.pids[0], libc::SIGCONT);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    clean_up(r.group, &r.pids);
    let code = code.expect("the job did not end after rank 1's watchdog fired");
    assert_ne!(code, Some(0));
    let v = read_json(&r.record).unwrap();
    assert_eq!(v["status"], "timeout", "{v}");
    assert!(v["status_detail"].as_str().unwrap().contains("rank 1 on "), "{v}");
    assert!(v["status_detail"].as_str().unwrap().contains("no progress"), "{v}");
    assert_eq!(v["ended_by_rank"], 1, "{v}");
    csv_intact(&r.csv);
}

/// `commbench suite` running `benches` into `results`, osu_latency with
/// `latency` (its options), in a process group of its own, output to
/// /dev/null.
fn suite_command(benches: &str, latency: &str, results: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--bench", benches, "-q", "--bench-args", &format!("latency={latency}"), "--results-dir"])
        .arg(results)
        .args(extra)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .own_session();
    c
}

/// `commbench suite` with a long osu_latency and osu_bw after it.
fn suite(benches: &str, extra: &[&str]) -> (Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let child = suite_command(benches, "-i 2000000 -x 10", dir.path(), extra).spawn().unwrap();
    (child, dir)
}

fn run_dir(results: &Path) -> std::path::PathBuf {
    let start = Instant::now();
    loop {
        if let Some(d) =
            std::fs::read_dir(results).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).find(|p| p.is_dir())
        {
            return d;
        }
        assert!(start.elapsed() < under_load(Duration::from_secs(30)), "no run directory");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_to_the_suite_ends_its_job() {
    let _g = mpi_lock();
    let (mut child, results) = suite("latency,bw", &[]);
    let group = child.id() as i32;
    let dir = run_dir(results.path());
    let pids = wait_started(&dir.join("osu_latency.json"), &dir.join("osu_latency.csv"), 2, 1, Instant::now());
    signal(child.id() as i32, libc::SIGTERM);
    let code = wait_for(&mut child, under_load(Duration::from_secs(25)));
    let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    clean_up(group, &pids);
    assert_eq!(code.expect("the suite did not end"), Some(143));
    assert!(left.is_empty(), "ranks left running: {left:?}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**INTERRUPTED**"), "{summary}");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("suite.json")).unwrap()).unwrap();
    let statuses: Vec<&str> =
        suite["benchmarks"].as_array().unwrap().iter().map(|b| b["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["interrupted", "interrupted"]);
    let v = read_json(&dir.join("osu_latency.json")).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    csv_intact(&dir.join("osu_latency.csv"));
}

#[test]
fn suite_max_time_leaves_no_running_record() {
    let _g = mpi_lock();
    let (mut child, results) = suite("latency", &["--max-time", "4"]);
    let group = child.id() as i32;
    let code = wait_for(&mut child, under_load(Duration::from_secs(40)));
    clean_up(group, &[]);
    assert_eq!(code.expect("the suite did not end"), Some(1));
    let dir = run_dir(results.path());
    let v = read_json(&dir.join("osu_latency.json")).unwrap();
    assert!(v["status"] == "interrupted" || v["status"] == "timeout", "{v}");
    for p in v["ranks"].as_array().unwrap() {
        assert!(!alive(p["pid"].as_i64().unwrap() as i32), "rank left running: {p}");
    }
}

/// An MPICH job faulted by `fault` (given the launcher's pid and the
/// ranks'), then its launcher and ranks gone: the record as it was left.
fn mpich_fault(fault: impl FnOnce(i32, &[i32])) -> (LongRun, Value) {
    let mut r = long_latency(Mpi::Mpich, &[]);
    fault(r.child.id() as i32, &r.pids);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    let start = Instant::now();
    while r.pids.iter().any(|&p| alive(p)) && start.elapsed() < under_load(Duration::from_secs(10)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = r.pids.iter().copied().filter(|&p| alive(p)).collect();
    clean_up(r.group, &r.pids);
    assert!(code.is_some(), "the launcher did not end");
    assert!(left.is_empty(), "ranks left running: {left:?}");
    csv_intact(&r.csv);
    let v = read_json(&r.record).unwrap();
    (r, v)
}

/// A record MPICH's SIGKILLs left `running`: `commbench compare` finds its
/// ranks gone, says so, ends it `killed` and fails the run.
fn compare_ends_it(r: &LongRun) {
    let refdir = tempfile::tempdir().unwrap();
    let reference = refdir.path().join("ref.csv");
    std::fs::copy(&r.csv, &reference).unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("compare").arg(&reference).arg(&r.csv);
    let run = run_cmd(c, Duration::from_secs(20));
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let note = format!("commbench compare: note: {}: running, but its processes are gone (", r.record.display());
    assert!(run.stderr.starts_with(&note), "{}", run.stderr);
    assert!(run.stderr.contains("the run record says 'killed'"), "{}", run.stderr);
    let v = read_json(&r.record).unwrap();
    assert_eq!(v["status"], "killed", "{v}");
    assert!(v["ended_by"].as_str().unwrap().starts_with("commbench compare (pid "), "{v}");
    let detail = v["status_detail"].as_str().unwrap();
    let pids = format!("pids {}, {} on ", r.pids[0], r.pids[1]);
    assert!(detail.starts_with("running, but its processes are gone: all 2 ranks (") && detail.contains(&pids));
}

fn mpich() -> bool {
    let have = have_mpich();
    if !have {
        eprintln!("SKIPPED: mpiexec.mpich is not installed");
    }
    have
}

/// kill -9 of rank 1, of rank 0 or of mpiexec: MPICH's launcher SIGKILLs
/// every rank at once (its strace shows it), so the record is left
/// `running` for a reader to end. Three MPICH jobs, one per fault: about
/// 2 s each here.
///
/// When rank 1 is killed, rank 0's signal thread may see it gone before
/// the launcher's SIGKILL reaches rank 0 (it polls the peers' pids): it
/// then ends the record `rank_failed` itself, naming rank 1. That race is
/// the launcher's to win or lose (CI saw both), and either end is right.
#[test]
fn mpich_sigkills_are_ended_by_the_next_reader() {
    if !mpich() {
        return;
    }
    let _g = mpi_lock();
    for (what, which) in [("rank 1", Some(1)), ("rank 0", Some(0)), ("the launcher", None)] {
        let (r, v) = mpich_fault(|launcher, pids| signal(which.map_or(launcher, |i| pids[i]), libc::SIGKILL));
        if which == Some(1) && v["status"] == "rank_failed" {
            let detail = v["status_detail"].as_str().unwrap();
            let gone = format!("rank 1 (pid {} on ", r.pids[1]);
            assert!(detail.starts_with(&gone) && detail.contains("had ended when rank 0 looked"), "{detail}");
            assert_eq!(v["exit_code"], 1, "{v}");
            continue;
        }
        assert_eq!(v["status"], "running", "{what}: {v}");
        compare_ends_it(&r);
    }
}

/// SIGTERM to one MPICH rank: the launcher SIGKILLs rank 0 as soon as
/// rank 1 exits, so rank 1 ends the record itself before it exits.
#[test]
fn sigterm_to_one_mpich_rank_is_recorded_by_that_rank() {
    if !mpich() {
        return;
    }
    let _g = mpi_lock();
    let (_r, v) = mpich_fault(|_, pids| signal(pids[1], libc::SIGTERM));
    assert_eq!(v["status"], "interrupted", "{v}");
    assert_eq!((v["ended_by_rank"].as_u64(), v["exit_code"].as_i64()), (Some(1), Some(143)), "{v}");
    let detail = v["status_detail"].as_str().unwrap();
    assert!(detail.starts_with("interrupted: SIGTERM came to rank 1 alone (it was at message size "), "{detail}");
}

/// `commbench suite` killed with SIGKILL: its launcher gets one SIGTERM
/// at once (from the suite's keeper), ends its ranks, and they end their
/// record `interrupted`; nothing lives on. The launcher writes its stdout
/// file itself, so what the job printed is there whole. This failed about
/// one try in two while the launcher could get two SIGTERMs (see
/// `the_suites_death_reaches_the_launcher_once`).
#[test]
fn sigkill_to_the_suite_ends_its_job() {
    let _g = mpi_lock();
    // Twenty million round trips: rows are seconds apart, the job is
    // mid-run when the suite dies.
    let work = tempfile::tempdir().unwrap();
    let results = work.path().join("res");
    std::fs::create_dir(&results).unwrap();
    // (the TMPDIR the suite makes mpirun's inside stays behind when the
    // suite is killed: here, in the test's own directory)
    let mut c = suite_command("latency", "-i 20000000 -x 10", &results, &[]);
    let mut child = c.env("TMPDIR", work.path()).spawn().unwrap();
    let group = child.id() as i32;
    let dir = run_dir(&results);
    let record = dir.join("osu_latency.json");
    let pids = wait_started(&record, &dir.join("osu_latency.csv"), 2, 0, Instant::now());
    let killed = Instant::now();
    signal(child.id() as i32, libc::SIGKILL);
    let _ = child.wait();
    while pids.iter().any(|&p| alive(p)) && killed.elapsed() < under_load(Duration::from_secs(15)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = killed.elapsed();
    let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    clean_up(group, &pids);
    assert!(left.is_empty(), "ranks left running {took:?} after the suite was killed: {left:?}");
    assert!(took < under_load(Duration::from_secs(5)), "{took:?}");
    let v = read_json(&record).unwrap();
    let detail = v["status_detail"].as_str().unwrap_or_default();
    assert_eq!(v["status"], "interrupted", "{v}");
    assert!(detail.contains("SIGTERM came"), "{v}");
    csv_intact(&dir.join("osu_latency.csv"));
    let text = std::fs::read_to_string(dir.join("osu_latency.txt")).unwrap();
    assert!(text.contains("# OSU MPI Latency Test v7.4\n"), "{text}");
}

/// The suite's death reaches its launcher as exactly one SIGTERM, for a
/// suite of more than one thread too: the kernel sends a parent-death
/// signal each time the child passes from a dying thread of its parent to
/// another, and Open MPI's mpirun takes a second SIGTERM as "stop at once"
/// (it then leaves its ranks to exit without ending their record). The
/// launcher here (`--launcher .../mpirun.openmpi`) is a Python script that
/// notes each SIGTERM as it is delivered (its C-level handler writes one
/// byte per delivery to a wake-up pipe), and its end, so that the test
/// waits for it rather than guess. Five tries: each failed about one in
/// two before the suite had its keeper.
#[test]
fn the_suites_death_reaches_the_launcher_once() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let launcher = dir.path().join("mpirun.openmpi");
    let script = format!(
        r#"#!/usr/bin/env python3
import os, select, signal, sys, time
notes = {notes:?}
def note(what):
    with open(notes, "a") as f:
        f.write(what + "\n")
r, w = os.pipe()
os.set_blocking(w, False)
signal.signal(signal.SIGTERM, lambda *_: None)
signal.set_wakeup_fd(w)
note("started")
first = None
while True:
    if select.select([r], [], [], 0.02)[0]:
        for b in os.read(r, 64):
            if b == signal.SIGTERM:
                note("TERM")
                first = first or time.monotonic()
    if first and time.monotonic() - first > 0.3:
        note("end")
        sys.exit(143)
"#,
        notes = notes.display().to_string()
    );
    std::fs::write(&launcher, script).unwrap();
    std::fs::set_permissions(&launcher, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let results = dir.path().join("res");
    let launcher_arg = launcher.display().to_string();
    for attempt in 1..=5 {
        let _ = std::fs::remove_file(&notes);
        let mut c = suite_command("latency", "-i 10", &results, &["--launcher", &launcher_arg]);
        // (the TMPDIR the suite makes its launcher's stays behind when the
        // suite is killed: here, in the test's own directory)
        let mut child = c.env("TMPDIR", dir.path()).spawn().unwrap();
        let text = || std::fs::read_to_string(&notes).unwrap_or_default();
        let start = Instant::now();
        while !text().contains("started") {
            assert!(start.elapsed() < under_load(Duration::from_secs(10)), "the stand-in launcher never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        signal(child.id() as i32, libc::SIGKILL);
        let _ = child.wait();
        let killed = Instant::now();
        while !text().contains("end") {
            assert!(killed.elapsed() < under_load(Duration::from_secs(5)), "try {attempt}: {:?}", text());
            std::thread::sleep(Duration::from_millis(10));
        }
        let got = text();
        assert_eq!(got.lines().filter(|l| *l == "TERM").count(), 1, "try {attempt}: the launcher noted {got:?}");
    }
}

/// The suite running MPICH's binaries when a rank is killed: the launcher
/// exits, the record still says `running`, and the suite ends it `killed`
/// at once, in one line and in the benchmark's detail.
#[test]
fn the_suite_ends_a_record_mpich_left_running() {
    if !mpich() {
        return;
    }
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = bin(Mpi::Mpich, "osu_latency").parent().unwrap().display().to_string();
    let mut c = suite_command("latency", "-i 2000000 -x 10", dir.path(), &["--bin-dir", &bin_dir]);
    let mut child = c.stderr(Stdio::piped()).spawn().unwrap();
    let group = child.id() as i32;
    let run = run_dir(dir.path());
    let record = run.join("osu_latency.json");
    let pids = wait_started(&record, &run.join("osu_latency.csv"), 2, 1, Instant::now());
    signal(pids[1], libc::SIGKILL);
    let code = wait_for(&mut child, under_load(Duration::from_secs(20)));
    clean_up(group, &pids);
    assert_eq!(code.expect("the suite did not end"), Some(1));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let line = format!("suite: {}: running, but its processes are gone (", record.display());
    assert!(stderr.lines().any(|l| l.starts_with(&line) && l.ends_with("): ended as `killed`")), "{stderr}");
    let v = read_json(&record).unwrap();
    assert_eq!(v["status"], "killed", "{v}");
    assert!(v["status_detail"].as_str().unwrap().ends_with("; the launcher exited with status 9"), "{v}");
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(run.join("suite.json")).unwrap()).unwrap();
    let detail = suite["benchmarks"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.ends_with("its run record said `running`, but its processes are gone"), "{detail}");
}

/// The processes whose parent is `pid` (from /proc).
fn children_of(pid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // The field after the state, past the name in parentheses.
            let after = stat.rsplit(')').next().unwrap_or("");
            after.split_whitespace().nth(1).and_then(|w| w.parse::<i32>().ok()) == Some(pid)
        })
        .collect()
}

/// osu_latency_mp's forked processes end with their rank: rank 0 ended by
/// SIGTERM while its 127 sleepers (`-t 127:127`) have most of their two
/// seconds left, none of them outlives the job (they had slept on after
/// it ended, holding nothing but their time).
#[test]
fn latency_mp_leaves_no_forked_process_behind() {
    let _g = mpi_lock();
    let mut r = long_run(Mpi::OpenMpi, "osu_latency_mp", &["-t", "127:127"], 0);
    let forked = children_of(r.pids[0]);
    signal(r.pids[0], libc::SIGTERM);
    let code = wait_for(&mut r.child, under_load(Duration::from_secs(20)));
    let left: Vec<i32> = forked.iter().copied().filter(|&p| alive(p)).collect();
    clean_up(r.group, &r.pids);
    for &p in &left {
        signal(p, libc::SIGKILL);
    }
    assert!(code.is_some(), "the job did not end after SIGTERM to rank 0");
    // Found within the two seconds they sleep (the record comes right
    // after the fork): else there is nothing to check.
    assert!(!forked.is_empty(), "rank 0 (pid {}) had no forked process when the record appeared", r.pids[0]);
    assert!(left.is_empty(), "{} of {} forked processes outlived the job: {left:?}", left.len(), forked.len());
}

/// A rank never outlives its launcher: MPICH's proxy (the process that
/// started the ranks and waits for them) killed with SIGKILL mid-run, the
/// ranks, which spin in MPI over shared memory where nothing tells them
/// the proxy is gone, end at once (they had run on, orphaned, at full
/// speed) and rank 0 ends the run record.
#[test]
fn ranks_end_when_their_launcher_is_killed() {
    if !mpich() {
        return;
    }
    let _g = mpi_lock();
    let mut r = long_latency(Mpi::Mpich, &[]);
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", r.pids[0])).unwrap();
    let proxy: i32 = stat.rsplit(')').next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_ne!(proxy, r.child.id() as i32, "rank 0's parent is mpiexec itself, not its proxy");
    signal(proxy, libc::SIGKILL);
    let start = Instant::now();
    while r.pids.iter().any(|&p| alive(p)) && start.elapsed() < under_load(Duration::from_secs(10)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = r.pids.iter().copied().filter(|&p| alive(p)).collect();
    clean_up(r.group, &r.pids);
    let _ = wait_for(&mut r.child, under_load(Duration::from_secs(10)));
    assert!(left.is_empty(), "ranks outlived their launcher: {left:?}");
    csv_intact(&r.csv);
    let v = read_json(&r.record).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    assert!(v["status_detail"].as_str().unwrap().starts_with("interrupted: SIGTERM came at message size "), "{v}");
}
