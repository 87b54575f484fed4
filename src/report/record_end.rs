//! The run record on disk as the place where every rank can say how the
//! job ended. Rank 0 owns the record and ends it (see [`crate::job::signals`]),
//! but some ends only another rank sees: its own `--timeout` watchdog
//! firing while rank 0 still waits, or rank 0 itself gone with its host.
//! Rank 0 tells every rank where its record is ([`RecordPlace`], sent once
//! after the record is written); where the file can be seen (results on a
//! shared file system, or the same node), another rank then ends a record
//! that still says `running`, naming itself in `ended_by_rank`.
//!
//! Some ends nobody sees: every rank killed outright (SIGKILL; MPICH's
//! launcher kills every rank so when one dies, when it is killed itself,
//! or when a rank exits after a signal). The record then says `running`
//! with no process left to end it. The next reader on its host that finds
//! every rank gone ends it `killed` ([`settle_if_gone`]): compare, plot and
//! the suite do, saying `running, but its processes are gone`.
//!
//! Rank 0 reads the file before it ends the record itself: a `timeout` that
//! another rank wrote is first-hand (that rank's watchdog fired), and so is
//! an `error` (that rank met the failure that ended the job, e.g. a failed
//! NCCL call, and ended the record before MPI_Abort), so rank 0 keeps it
//! rather than its own guess; any other status another rank wrote is only
//! a fallback, and rank 0's own judgement replaces it.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::record::RunStatus;

/// Largest run record another rank reads back (a record lists every rank;
/// a few hundred bytes each).
const READ_CAP: u64 = 256 << 20;

/// Where rank 0's record is, and whose it is: what rank 0 sends to every
/// rank once the record exists.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RecordPlace {
    /// Absolute path (rank 0's working directory joined).
    pub path: PathBuf,
    pub host: String,
    pub pid: u32,
}

impl RecordPlace {
    /// Rank 0's record at `path`.
    pub(crate) fn of_rank0(path: &Path) -> RecordPlace {
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
        };
        RecordPlace { path, host: crate::topo::hostname(), pid: std::process::id() }
    }

    /// The bytes sent (empty for no record).
    pub(crate) fn encode(place: Option<&RecordPlace>) -> Vec<u8> {
        place.and_then(|p| serde_json::to_vec(p).ok()).unwrap_or_default()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<RecordPlace> {
        serde_json::from_slice(bytes).ok()
    }
}

/// How another rank ended the record on disk.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EndedElsewhere {
    pub status: RunStatus,
    pub detail: Option<String>,
    pub exit_code: Option<i32>,
    pub by_rank: usize,
}

fn read(path: &Path) -> io::Result<Value> {
    let bytes = crate::input_file::read_capped(path, READ_CAP)?;
    serde_json::from_slice(&bytes).map_err(io::Error::other)
}

fn status_of(v: &Value) -> Option<RunStatus> {
    serde_json::from_value(v.get("status")?.clone()).ok()
}

/// Ends the record at `path` as rank `by_rank` saw the job end, if it still
/// says `running`. Ok(true) when this call ended it; Ok(false) when it had
/// ended already.
pub(crate) fn end_on_disk(
    path: &Path,
    status: RunStatus,
    detail: &str,
    exit_code: i32,
    by_rank: usize,
) -> io::Result<bool> {
    end_fields(path, status, detail, exit_code, Some(by_rank))
}

/// Rank 0's own end of its record at `path`, when the disk had no room
/// for the whole of it: only the status, detail, exit status and end time
/// are put into the record as it was written while running, which the
/// room it was written with holds. Ok(false) when it had ended already.
pub(crate) fn end_what_fits(path: &Path, status: RunStatus, detail: &str, exit_code: i32) -> io::Result<bool> {
    end_fields(path, status, detail, exit_code, None)
}

fn end_fields(
    path: &Path,
    status: RunStatus,
    detail: &str,
    exit_code: i32,
    by_rank: Option<usize>,
) -> io::Result<bool> {
    let mut v = read(path)?;
    if status_of(&v) != Some(RunStatus::Running) {
        return Ok(false);
    }
    let Some(obj) = v.as_object_mut() else {
        return Err(io::Error::other("the run record is not a JSON object"));
    };
    obj.insert("status".into(), serde_json::to_value(status).map_err(io::Error::other)?);
    obj.insert("status_detail".into(), detail.into());
    obj.insert("exit_code".into(), exit_code.into());
    obj.insert("end_utc".into(), super::time::Utc::now().rfc3339().into());
    if let Some(rank) = by_rank {
        obj.insert("ended_by_rank".into(), rank.into());
    }
    let mut text = serde_json::to_string_pretty(&v).map_err(io::Error::other)?;
    text.push('\n');
    super::safe_file::replace_or_overwrite(path, text.as_bytes(), b' ')?;
    Ok(true)
}

/// The record's status and detail as the file at `path` says now (None
/// when it cannot be read): how the suite sees that a run has ended while
/// its launcher still waits.
pub(crate) fn status_on_disk(path: &Path) -> Option<(RunStatus, Option<String>)> {
    let v = read(path).ok()?;
    Some((status_of(&v)?, v.get("status_detail").and_then(|d| d.as_str()).map(str::to_string)))
}

/// A record left `running` that a reader ended (see [`settle_if_gone`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settled {
    /// What the reader says, starting `running, but its processes are
    /// gone`.
    pub line: String,
    /// Why the record could not be rewritten, when it could not.
    pub unwritten: Option<String>,
}

/// How much later than the record's start a process may have started and
/// still be the rank it names (the boot time /proc gives is in seconds).
const START_SLACK_S: f64 = 2.0;

/// A host name without its domain, so that `node1` and `node1.cluster`
/// (MPI's processor name and gethostname may differ so) are one host.
fn short_host(h: &str) -> &str {
    h.split('.').next().unwrap_or(h)
}

/// The ranks a record lists, as (rank, host, pid); None when it lists none
/// or one cannot be read. A run on one host without MPI (gpu-bw, the GPU
/// drop-ins: [`super::record::LocalRun`]) lists no ranks: its one
/// process, its `host` and `pid`, is its rank 0.
fn ranks_of(v: &Value) -> Option<Vec<(u64, String, u32)>> {
    let Some(ranks) = v.get("ranks") else {
        let pid = u32::try_from(v.get("pid")?.as_u64()?).ok()?;
        return Some(vec![(0, v.get("host")?.as_str()?.to_string(), pid)]);
    };
    let ranks = ranks.as_array()?;
    let mut out = Vec::new();
    for r in ranks {
        let pid = u32::try_from(r.get("pid")?.as_u64()?).ok()?;
        out.push((r.get("rank")?.as_u64()?, r.get("host")?.as_str()?.to_string(), pid));
    }
    (!out.is_empty()).then_some(out)
}

/// `ranks 0-1 (pids 10, 11 on vm)`, at most a few pids shown.
fn describe_ranks(ranks: &[(u64, String, u32)]) -> String {
    const SHOWN: usize = 4;
    let mut pids: Vec<String> = ranks.iter().take(SHOWN).map(|r| r.2.to_string()).collect();
    if ranks.len() > SHOWN {
        pids.push(format!("... {} more", ranks.len() - SHOWN));
    }
    let host = ranks.first().map(|r| r.1.as_str()).unwrap_or_default();
    let which = match ranks.len() {
        1 => format!("rank {}", ranks[0].0),
        n => format!("all {n} ranks"),
    };
    format!("{which} (pid{} {} on {host})", if ranks.len() == 1 { "" } else { "s" }, pids.join(", "))
}

/// [`settle_if_gone`] for a reader that has just seen the job's launcher
/// exit: a rank the launcher killed may still be on its way out (a process
/// that has taken SIGKILL stays in /proc, not yet a zombie, while the
/// kernel frees its memory), so while the record says `running` the ranks
/// get up to `grace` to be gone.
pub(crate) fn settle_after_launcher(
    path: &Path,
    reader: &str,
    why: Option<&str>,
    grace: std::time::Duration,
) -> Option<Settled> {
    let deadline = std::time::Instant::now() + grace;
    loop {
        if let Some(s) = settle_if_gone(path, reader, why) {
            return Some(s);
        }
        let running = read(path).ok().is_some_and(|v| status_of(&v) == Some(RunStatus::Running));
        if !running || std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The record at `path`, if it still says `running` while every rank it
/// lists is gone from this host, ended `killed` by `reader` (e.g.
/// `commbench compare`), `why` (what the reader knows of the end, e.g. the
/// launcher's exit) in its detail; None when it is not `running`, cannot
/// be read, lists a rank of another host (which cannot be seen from
/// here), or has a rank still running. A pid now held by a process that
/// started after the record did is not that rank.
pub(crate) fn settle_if_gone(path: &Path, reader: &str, why: Option<&str>) -> Option<Settled> {
    let mut v = read(path).ok()?;
    if status_of(&v) != Some(RunStatus::Running) {
        return None;
    }
    let ranks = ranks_of(&v)?;
    let here = crate::topo::hostname();
    if ranks.iter().any(|r| short_host(&r.1) != short_host(&here)) {
        return None;
    }
    let since = v.get("start_utc").and_then(Value::as_str).and_then(super::time::unix_seconds);
    if ranks.iter().any(|r| crate::procs::still_running(r.2, since, START_SLACK_S)) {
        return None;
    }
    let gone = describe_ranks(&ranks);
    let now = super::time::Utc::now().rfc3339();
    let mut detail = format!(
        "running, but its processes are gone: {gone} had ended without ending the record, found by {reader} at \
         {now}: the job was killed outright (SIGKILL to a rank or to its launcher, a launcher that ends every \
         rank with SIGKILL when one fails, the OOM killer)"
    );
    if let Some(why) = why {
        detail.push_str(&format!("; {why}"));
    }
    let line = format!("running, but its processes are gone ({gone}): ended as `killed`");
    let obj = v.as_object_mut()?;
    obj.insert("status".into(), serde_json::to_value(RunStatus::Killed).ok()?);
    obj.insert("status_detail".into(), detail.into());
    obj.insert("end_utc".into(), now.into());
    obj.insert("ended_by".into(), format!("{reader} (pid {})", std::process::id()).into());
    let written = serde_json::to_string_pretty(&v)
        .map_err(io::Error::other)
        .and_then(|t| super::safe_file::replace_or_overwrite(path, format!("{t}\n").as_bytes(), b' '));
    Some(Settled { line, unwritten: written.err().map(|e| e.to_string()) })
}

/// What rank 0 should keep from the record at `path`: what another rank
/// saw first-hand and wrote (see the module's note): its watchdog's
/// `timeout`, or the `error` of a failure it met mid-run (a failed NCCL or
/// CUDA call) just before it ended the job. Else None.
pub(crate) fn first_hand_from_another_rank(path: &Path) -> Option<EndedElsewhere> {
    let v = read(path).ok()?;
    let by_rank = v.get("ended_by_rank")?.as_u64()? as usize;
    let status = status_of(&v).filter(|s| matches!(s, RunStatus::Timeout | RunStatus::Error))?;
    Some(EndedElsewhere {
        status,
        detail: v.get("status_detail").and_then(|d| d.as_str()).map(str::to_string),
        exit_code: v.get("exit_code").and_then(|c| c.as_i64()).map(|c| c as i32),
        by_rank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dir: &Path, status: &str) -> PathBuf {
        let p = dir.join("r.json");
        let v = serde_json::json!({"schema": "x", "status": status, "status_detail": null, "exit_code": null,
            "end_utc": null, "ranks": [{"rank": 0}], "results": {"rows": 3}});
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        p
    }

    #[test]
    fn another_rank_ends_a_running_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = record(dir.path(), "running");
        assert!(end_on_disk(&p, RunStatus::Timeout, "rank 1: no progress", 124, 1).unwrap());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["status"], "timeout");
        assert_eq!(v["ended_by_rank"], 1);
        assert_eq!(v["exit_code"], 124);
        assert!(v["end_utc"].is_string());
        // Everything else is kept.
        assert_eq!(v["results"]["rows"], 3);
        // A second rank leaves it alone.
        assert!(!end_on_disk(&p, RunStatus::RankFailed, "x", 143, 2).unwrap());
        let kept = first_hand_from_another_rank(&p).unwrap();
        assert_eq!(
            kept,
            EndedElsewhere {
                status: RunStatus::Timeout,
                detail: Some("rank 1: no progress".into()),
                exit_code: Some(124),
                by_rank: 1
            }
        );
    }

    /// Rank 0's own short end (a full disk): the status fields only, no
    /// `ended_by_rank`, the rest kept; an ended record is left alone.
    #[test]
    fn rank_zero_ends_what_fits() {
        let dir = tempfile::tempdir().unwrap();
        let p = record(dir.path(), "running");
        assert!(end_what_fits(&p, RunStatus::Error, "no room", 2).unwrap());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(
            (v["status"].as_str(), v["status_detail"].as_str(), v["exit_code"].as_i64()),
            (Some("error"), Some("no room"), Some(2))
        );
        assert!(v.get("ended_by_rank").is_none() && v["end_utc"].is_string(), "{v}");
        assert_eq!(v["results"]["rows"], 3);
        assert!(!end_what_fits(&p, RunStatus::Complete, "x", 0).unwrap());
    }

    #[test]
    fn only_first_hand_ends_from_another_rank_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = record(dir.path(), "running");
        assert!(end_on_disk(&p, RunStatus::RankFailed, "rank 0 did not end it", 143, 3).unwrap());
        assert_eq!(first_hand_from_another_rank(&p), None);
        // Rank 0's own timeout has no ended_by_rank.
        let own = record(dir.path(), "timeout");
        assert_eq!(first_hand_from_another_rank(&own), None);
        // A failure another rank met mid-run is kept.
        let failed = dir.path().join("failed");
        std::fs::create_dir(&failed).unwrap();
        let p = record(&failed, "running");
        assert!(end_on_disk(&p, RunStatus::Error, "NCCL failed on rank 2", 1, 2).unwrap());
        let kept = first_hand_from_another_rank(&p).unwrap();
        assert_eq!((kept.status, kept.by_rank, kept.exit_code), (RunStatus::Error, 2, Some(1)));
    }

    #[test]
    fn ended_records_and_bad_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = record(dir.path(), "complete");
        assert!(!end_on_disk(&p, RunStatus::Timeout, "x", 124, 1).unwrap());
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\"status\": \"runn").unwrap();
        assert!(end_on_disk(&bad, RunStatus::Timeout, "x", 124, 1).is_err());
        assert!(end_on_disk(&dir.path().join("none.json"), RunStatus::Timeout, "x", 124, 1).is_err());
        assert_eq!(status_on_disk(&p), Some((RunStatus::Complete, None)));
        assert_eq!(status_on_disk(&bad), None);
    }

    /// A record of ranks on this host: `pids` as its ranks 0, 1 ...,
    /// started at `start`.
    fn record_of(dir: &Path, pids: &[u32], host: &str, start: &str) -> PathBuf {
        let p = dir.join("k.json");
        let ranks: Vec<Value> =
            pids.iter().enumerate().map(|(i, pid)| serde_json::json!({"rank": i, "host": host, "pid": pid})).collect();
        let v = serde_json::json!({"status": "running", "status_detail": null, "exit_code": null,
            "start_utc": start, "end_utc": null, "ranks": ranks});
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        p
    }

    /// A process that has ended (reaped), for a pid no process holds.
    fn ended_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    /// A record whose ranks are all gone from this host is ended `killed`,
    /// once, naming the reader; one with a rank still running, of another
    /// host, or already ended is left as it is.
    #[test]
    fn a_reader_ends_a_record_whose_ranks_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let here = crate::topo::hostname();
        let start = super::super::time::Utc::now().rfc3339();
        let (a, b) = (ended_pid(), ended_pid());
        let p = record_of(dir.path(), &[a, b], &here, &start);
        let s = settle_if_gone(&p, "commbench compare", Some("the launcher exited with status 9")).unwrap();
        assert_eq!(s.unwritten, None);
        assert_eq!(
            s.line,
            format!("running, but its processes are gone (all 2 ranks (pids {a}, {b} on {here})): ended as `killed`")
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(v["status"], "killed");
        let detail = v["status_detail"].as_str().unwrap();
        assert!(detail.starts_with("running, but its processes are gone: all 2 ranks"), "{detail}");
        assert!(detail.ends_with("; the launcher exited with status 9"), "{detail}");
        assert!(v["end_utc"].is_string() && v["exit_code"].is_null());
        assert_eq!(v["ended_by"], format!("commbench compare (pid {})", std::process::id()));
        assert_eq!(settle_if_gone(&p, "x", None), None, "ended already");

        // This process is alive: its record is left running.
        let me = record_of(dir.path(), &[a, std::process::id()], &here, &start);
        assert_eq!(settle_if_gone(&me, "x", None), None);
        assert_eq!(status_on_disk(&me), Some((RunStatus::Running, None)));
        // ... unless the record is older than this process: its pid is a rank's no more.
        let old = record_of(dir.path(), &[std::process::id()], &here, "2001-01-01T00:00:00.000Z");
        assert!(settle_if_gone(&old, "x", None).is_some());
        // Ranks of another host cannot be seen from here.
        let far = record_of(dir.path(), &[a], "no-such-host-commbench", &start);
        assert_eq!(settle_if_gone(&far, "x", None), None);
        // A record without ranks says nothing about its processes.
        std::fs::write(dir.path().join("k.json"), r#"{"status": "running"}"#).unwrap();
        assert_eq!(settle_if_gone(&dir.path().join("k.json"), "x", None), None);
    }

    /// A run on one host without MPI (LocalRun: gpu-bw, nvbandwidth)
    /// names its one process by `host` and `pid`: gone, its record is
    /// ended `killed`; alive, it is left running.
    #[test]
    fn a_local_runs_record_is_ended_when_its_process_is_gone() {
        use crate::report::record::{write_json, LocalRun};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.json");
        let mut run = LocalRun::starting(crate::topo::hostname(), vec!["commbench".into(), "gpu-bw".into()]);
        write_json(&run, &p).unwrap();
        assert_eq!(settle_if_gone(&p, "x", None), None, "this process is alive");
        run.pid = ended_pid();
        write_json(&run, &p).unwrap();
        let s = settle_if_gone(&p, "commbench history", None).unwrap();
        assert!(s.line.contains(&format!("rank 0 (pid {} on ", run.pid)), "{}", s.line);
        assert_eq!(status_on_disk(&p).map(|s| s.0), Some(RunStatus::Killed));
    }

    /// Just after the launcher: a rank still on its way out is waited for
    /// (within the grace), an ended record is not, and a rank that stays
    /// keeps the record running once the grace is over.
    #[test]
    fn after_the_launcher_a_rank_on_its_way_out_is_waited_for() {
        use std::time::{Duration, Instant};
        let dir = tempfile::tempdir().unwrap();
        let here = crate::topo::hostname();
        let start = super::super::time::Utc::now().rfc3339();
        let mut child = std::process::Command::new("sleep").arg("0.3").spawn().unwrap();
        let pid = child.id();
        let p = record_of(dir.path(), &[ended_pid(), pid], &here, &start);
        // Reaped as soon as it ends, as the rank's parent would.
        let reaper = std::thread::spawn(move || child.wait());
        let s = settle_after_launcher(&p, "commbench suite", None, Duration::from_secs(10));
        assert!(s.is_some(), "not settled");
        // Settled once the rank ended, not before (an order, not a time,
        // which no load can upset).
        let running = crate::procs::state(pid).is_some_and(|st| st.running);
        assert!(!running, "settled while the rank still ran");
        reaper.join().unwrap().unwrap();
        let t = Instant::now();
        assert_eq!(settle_after_launcher(&p, "x", None, Duration::from_secs(10)), None, "ended already");
        assert!(t.elapsed() < crate::procs::under_load(Duration::from_secs(1)));
        let me = record_of(dir.path(), &[std::process::id()], &here, &start);
        assert_eq!(settle_after_launcher(&me, "x", None, Duration::from_millis(100)), None);
        assert_eq!(status_on_disk(&me), Some((RunStatus::Running, None)));
    }

    #[test]
    fn place_round_trips_and_is_absolute() {
        let p = RecordPlace::of_rank0(Path::new("results/x.json"));
        assert!(p.path.is_absolute());
        assert_eq!(RecordPlace::decode(&RecordPlace::encode(Some(&p))), Some(p));
        assert_eq!(RecordPlace::decode(&RecordPlace::encode(None)), None);
    }
}
