//! The --timeout watchdog on a real hang: one rank is frozen with SIGSTOP
//! in the middle of a run; its partner must stop waiting within the
//! timeout, say where it was stuck, mark the run record, and the whole
//! job must end non-zero.

use crate::common;

use commbench::watchdog::Step;
use common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn freeze_rank_one(mpi: Mpi) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    let record = dir.path().join("w.json");
    let mut c = launcher(mpi, 2);
    c.arg(bin(mpi, "osu_latency"))
        .args(["-i", "200000", "-x", "10", "--timeout", "2", "--csv", &csv.display().to_string()])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let start = Instant::now();
    let child = c.spawn().unwrap();
    let group = child.id() as i32;
    // The run record names each rank's pid once the run has started.
    let pid1 = loop {
        assert!(start.elapsed() < under_load(Duration::from_secs(30)), "run record never appeared");
        if let Ok(text) = std::fs::read_to_string(&record) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                if let Some(p) = v["ranks"][1]["pid"].as_i64() {
                    break p as i32;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let a few sizes finish, then freeze rank 1.
    while std::fs::read_to_string(&csv).map(|t| t.lines().count()).unwrap_or(0) < 3 {
        assert!(start.elapsed() < under_load(Duration::from_secs(30)), "no rows appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signals a rank process of the job this test started.
    unsafe { libc::kill(pid1, libc::SIGSTOP) };
    let frozen_at = Instant::now();
    let out = wait_with_limit(child, under_load(Duration::from_secs(20)));
    let waited = frozen_at.elapsed();
    // Clean up whatever is left of the job, by pid and process group.
    // SAFETY: as above.
    unsafe {
        libc::kill(pid1, libc::SIGKILL);
        libc::kill(-group, libc::SIGKILL);
    }
    let (code, stderr) = out.expect("the job did not end after the watchdog fired");
    assert!(waited < under_load(Duration::from_secs(12)), "{mpi:?}: took {waited:?} to end");
    assert!(waited >= Duration::from_secs(2), "{mpi:?}: ended before the timeout: {waited:?}");
    assert_ne!(code, Some(0), "{mpi:?}: {stderr}");
    // The freeze lands wherever rank 1 was: in a size's buffer set-up, its
    // warm-up, its timed loop or the gathering of its results (on a busy
    // machine any of them); rank 0 then waits in the same step. Each is a
    // step the watchdog can name at a message size; start-up and
    // finishing are not (rows were written and many sizes remain).
    let steps: Vec<String> =
        [Step::Setup, Step::Warmup, Step::Timed, Step::Results].iter().map(|s| regex::escape(s.describe())).collect();
    let re = regex::Regex::new(&format!(
        r"osu_latency rank 0 on \S+: no progress for 2s at message size \d+ \(MPI_CHAR\), step: ({})( after iteration \d+)?; ending the job \(--timeout\)",
        steps.join("|")
    ))
    .unwrap();
    assert!(re.is_match(&stderr), "{mpi:?} stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(v["status"], "timeout");
    assert_eq!(v["exit_code"], 124);
    assert!(v["status_detail"].as_str().unwrap().contains("no progress for 2s"));
    assert!(read_csv(&csv).len() >= 2, "finished rows are kept");
}

fn wait_with_limit(mut child: std::process::Child, limit: Duration) -> Option<(Option<i32>, String)> {
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut { err }, &mut s);
        s
    });
    let _out = child.stdout.take();
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some((st.code(), reader.join().unwrap_or_default()));
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn open_mpi_hang_is_ended() {
    let _g = mpi_lock();
    freeze_rank_one(Mpi::OpenMpi);
}

#[test]
fn mpich_hang_is_ended() {
    require_mpich!();
    let _g = mpi_lock();
    freeze_rank_one(Mpi::Mpich);
}
