//! Watching a long job from a test: its ranks' pids from the run record,
//! its first CSV rows, its end within a limit, and cleaning up after it.

use serde_json::Value;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use super::{under_load, Mpi};

/// Signals `pid` (a process this test started, or one of its job's ranks).
pub fn signal(pid: i32, sig: i32) {
    // SAFETY: sends a signal to a process of this test's own job.
    unsafe { libc::kill(pid, sig) };
}

pub fn alive(pid: i32) -> bool {
    // Zombies count as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

pub fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Waits for the run record to list every rank's pid, then for the CSV to
/// have `rows` data rows; returns the ranks' pids.
/// osu_latency's `-i` for a run that a test stops midway (signals,
/// watchdog): the first rows come soon, and many sizes remain long after.
/// Open MPI's waiting ranks yield, so 200000 round trips a size are quick
/// even beside other work; MPICH's spin, so two of them sharing a core
/// with other work pay a scheduler time slice per message (200000 round
/// trips of the first size took over 90 s beside two busy loops and a
/// build): a tenth of that for MPICH.
pub fn long_iterations(mpi: Mpi) -> &'static str {
    match mpi {
        Mpi::OpenMpi => "200000",
        Mpi::Mpich => "20000",
    }
}

pub fn wait_started(record: &Path, csv: &Path, np: usize, rows: usize, start: Instant) -> Vec<i32> {
    let pids = loop {
        assert!(start.elapsed() < under_load(Duration::from_secs(40)), "run record never appeared");
        if let Some(v) = read_json(record) {
            let pids: Vec<i32> = (0..np).filter_map(|r| v["ranks"][r]["pid"].as_i64().map(|p| p as i32)).collect();
            if pids.len() == np {
                break pids;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    while std::fs::read_to_string(csv).map(|t| t.lines().count()).unwrap_or(0) < rows + 1 {
        assert!(start.elapsed() < under_load(Duration::from_secs(40)), "no rows appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    pids
}

/// Waits for `child` up to `limit`: its exit code (None if it did not end).
pub fn wait_for(child: &mut Child, limit: Duration) -> Option<Option<i32>> {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st.code());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills whatever is left: the job's process group and the ranks.
pub fn clean_up(group: i32, pids: &[i32]) {
    signal(-group, libc::SIGKILL);
    for &p in pids {
        if alive(p) {
            signal(p, libc::SIGCONT);
            signal(p, libc::SIGKILL);
        }
    }
}

/// Every line of the CSV is whole (it ends with a newline and has the
/// header's number of fields).
pub fn csv_intact(csv: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    assert!(text.ends_with('\n'), "a cut line at the end of {text}");
    let mut lines = text.lines();
    let fields = lines.next().unwrap().split(',').count();
    for l in lines {
        assert_eq!(l.split(',').count(), fields, "incomplete row: {l}");
    }
}
