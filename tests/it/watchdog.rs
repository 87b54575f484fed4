//! The --timeout watchdog on a real hang: one rank is frozen with SIGSTOP
//! in the middle of a run; rank 0 must stop waiting within the timeout,
//! ask every rank where it is (out of band: MPI is what hangs), name the
//! frozen rank as the one that did not answer and where the others wait,
//! put every rank's answer in the run record, and the whole job must end
//! non-zero.

use crate::common;

use commbench::job::watchdog::Step;
use common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn freeze_rank_one(mpi: Mpi, np: usize, bench: &str) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    let record = dir.path().join("w.json");
    let mut c = launcher(mpi, np);
    c.arg(bin(mpi, bench))
        .args(["-i", jobs::long_iterations(mpi), "-x", "10", "--timeout", "2", "--csv", &csv.display().to_string()])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    common::OwnSession::own_session(&mut c);
    let _tmpdir = own_tmpdir(&mut c);
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
        assert!(start.elapsed() < under_load(Duration::from_secs(60)), "no rows appeared");
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
    // The timeout, then at most the 2 s rank 0 waits for rank 1's answer.
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
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with(&format!("{bench}:"))).collect();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let host = v["ranks"][1]["host"].as_str().unwrap().to_string();
    let first =
        format!("{bench}: no progress on any rank for 2s; ending the job (--timeout): rank 1 on {host} did not answer");
    assert_eq!(lines.first(), Some(&first.as_str()), "{mpi:?} stderr:\n{stderr}");
    assert_eq!(lines.get(1), Some(&format!("{bench}:   rank 1 on {host}: no answer (no answer within 2s)").as_str()));
    // The others, wherever the freeze left them, at a size and a step.
    let re = regex::Regex::new(&format!(
        r"^{bench}:   ranks? [0-9,-]+ on {host}: at message size \d+ \(MPI_CHAR\), step: ({})( after iteration \d+)?( \(behind\))?$",
        steps.join("|")
    ))
    .unwrap();
    assert!(lines.len() >= 3 && lines[2..].iter().all(|l| re.is_match(l)), "{mpi:?} stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"));
    assert_eq!(v["status"], "timeout");
    assert_eq!(v["exit_code"], 124);
    assert_eq!(v["status_detail"].as_str(), Some(first.as_str()));
    // The record has every rank's answer, and the lines said.
    let hang = &v["hang"];
    assert_eq!(hang["ranks"].as_array().map(Vec::len), Some(np), "{hang}");
    assert_eq!(hang["ranks"][1]["answered"], false, "{hang}");
    for r in (0..np).filter(|&r| r != 1) {
        assert!(hang["ranks"][r]["still_ms"].as_u64().unwrap() >= 2000, "rank {r} was still: {hang}");
    }
    assert_eq!(hang["summary"].as_array().map(Vec::len), Some(lines.len()), "{hang}");
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
    // Four ranks of a collective: three wait, one is frozen.
    freeze_rank_one(Mpi::OpenMpi, 4, "osu_allreduce");
}

#[test]
fn mpich_hang_is_ended() {
    require_mpich!();
    let _g = mpi_lock();
    freeze_rank_one(Mpi::Mpich, 2, "osu_latency");
}
