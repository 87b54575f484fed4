//! `commbench locate` and `suite --locate-on-hang` on four network-namespace
//! hosts (tests/it/common/netns.rs), each probe a real `commbench pairs`
//! job through mpirun: one host's link cut, one slowed (tc), one frozen
//! (SIGSTOP on everything it runs). Each time the search must name that
//! host and nothing else, within the bound it states: at most
//! 2*ceil(log2 n)+3 probes (7 for 4 hosts), each stopped at --bound.

use crate::common;

use common::jobs::read_json;
use common::netns::Hosts;
use common::*;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Each probe's bound here: a 4-host pairs probe takes 1-4 s on this
/// machine when idle (mpirun's start across the namespaces included; 4 s
/// with the slowed host), several times that with other builds on its two
/// cores, so 8 s stretched by the load ([`bound_s`]): a bound is a limit
/// on a hang, and a healthy probe stopped at it would be blamed on a host.
const BOUND_S: u64 = 8;

/// [`BOUND_S`] stretched by the load when the test starts (whole seconds,
/// the same for the whole test).
fn bound_s() -> u64 {
    static BOUND: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BOUND.get_or_init(|| under_load(Duration::from_secs(BOUND_S)).as_secs_f64().ceil() as u64)
}

fn skip() -> bool {
    if !Hosts::available() {
        eprintln!("SKIPPED: needs root, ip, tc and unshare for network-namespace hosts");
        return true;
    }
    false
}

/// The longest a search over 4 hosts may take: 7 probes, each its bound,
/// the 2 s between SIGTERM and SIGKILL of a stopped one, and 3 s to end.
fn search_bound() -> Duration {
    Duration::from_secs(7 * (bound_s() + 2)) + under_load(Duration::from_secs(7 * 3))
}

fn locate(hosts: &Hosts, results: &std::path::Path) -> (Run, Value) {
    locate_in(hosts, results, Command::new(bin(Mpi::OpenMpi, "commbench")))
}

/// [`locate`] through `c` (the commbench command, its environment set).
fn locate_in(hosts: &Hosts, results: &std::path::Path, mut c: Command) -> (Run, Value) {
    c.arg("locate")
        .args(["--hosts", &hosts.addrs.join(","), "--bound", &bound_s().to_string(), "--size", "4KB"])
        // Four spinning ranks on two cores make directions vary 2-40 fold
        // here (38 MB/s the lowest seen when idle, less when other jobs
        // share the cores), so the median is no steady reference: its floor
        // is 1%, and the absolute one judges. The slowed host gives 2-3
        // MB/s (tc's limit: load only lowers it), under 5 MB/s.
        .args(["--min-fraction-of-median", "1%", "--min-bw", "5MB/s"])
        .arg("--results-dir")
        .arg(results)
        .arg("--")
        .args(hosts.base_args());
    let before = entries(results);
    let run = run_cmd(c, search_bound() + Duration::from_secs(30));
    run.assert_no_panic();
    let v = locate_record(results, &before).unwrap_or_else(|| panic!("no locate record: {run:?}"));
    (run, v)
}

/// What `dir` holds now (nothing when it does not exist yet).
fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default()
}

fn found(v: &Value) -> Vec<(String, Vec<String>)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let hosts = f["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect();
            (f["kind"].as_str().unwrap().to_string(), hosts)
        })
        .collect()
}

fn found_lines(run: &Run) -> Vec<&str> {
    run.stdout.lines().filter(|l| l.starts_with("found: ")).collect()
}

/// Healthy hosts take one probe; a cut link names its host (probes that
/// include it fail at once or hang to the bound); a slowed host is named
/// slow from the first probe's pairs and its repeat. Three searches: about 11 s here
/// (the cut-off host fails its probes at once).
#[test]
fn locate_names_a_cut_off_host_and_a_slow_one() {
    if skip() {
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(4, 11).expect("network namespaces");
    let results = tempfile::tempdir().unwrap();

    let (run, v) = locate(&hosts, results.path());
    assert_eq!(run.code, Some(0), "{run:?}");
    let within = format!("nothing found: all 4 hosts ran pairs together within the {} s bound", bound_s());
    assert!(run.stdout.contains(&within), "{run:?}");
    // One probe, or two when noise flagged a pair the repeat did not.
    assert!(v["probes"].as_array().unwrap().len() <= 2, "{v}");
    assert_eq!(v["probe_bound"], 7, "{v}");
    assert!(v["probes"][0]["command"].as_str().unwrap().contains(" pairs --scheme all --size 4KB "), "{v}");

    assert!(hosts.link_down(2));
    let (run, v) = locate(&hosts, results.path());
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(found(&v), [("host".to_string(), vec![hosts.addrs[1].clone()])], "{v}");
    let lines = found_lines(&run);
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(lines[0].starts_with(&format!("found: host {} fails alone (probe ", hosts.addrs[1])), "{run:?}");
    let probes = v["probes"].as_array().unwrap();
    assert!(probes.len() <= 7, "{v}");
    assert!(run.elapsed < search_bound(), "took {:?}", run.elapsed);
    // Every probe with the cut-off host failed, every one without ran to
    // its end: passed, or `slow` when the loaded cores put a pair under
    // 10 MB/s (a verdict its repeat must confirm, checked above).
    for p in probes {
        let with = p["hosts"].as_array().unwrap().iter().any(|h| h == &hosts.addrs[1]);
        let ok = p["outcome"] == "passed" || p["outcome"] == "slow";
        assert_eq!(with, !ok, "{p}");
    }
    assert!(hosts.link_up(2));

    assert!(hosts.limit(4, "20mbit"));
    let (run, v) = locate(&hosts, results.path());
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(found(&v), [("slow_host".to_string(), vec![hosts.addrs[3].clone()])], "{v}");
    assert_eq!(v["probes"].as_array().unwrap().len(), 2, "{v}");
    let lines = found_lines(&run);
    assert_eq!(lines.len(), 1, "{run:?}");
    let slow =
        format!("found: host {} is slow: every pair through it is below the criteria (probe 2: fail: ", hosts.addrs[3]);
    assert!(lines[0].starts_with(&slow), "{run:?}");
}

/// Every probe's mpirun gets a TMPDIR of its own inside the user's, as
/// the suite's launchers do (docs/suite-and-slurm.md): here the user's
/// TMPDIR holds a plain file where Open MPI's session directory would go,
/// so a probe that used it would fail and the search would blame a host.
/// Healthy hosts, nothing found, nothing left there.
#[test]
fn locate_gives_mpirun_a_tmpdir_of_its_own() {
    if skip() {
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(2, 13).expect("network namespaces");
    let results = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join(crate::harness::open_mpi_session_dir_name());
    std::fs::write(&blocker, "").unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.env("TMPDIR", tmp.path());
    let (run, v) = locate_in(&hosts, results.path(), c);
    assert_eq!(run.code, Some(0), "{run:?}");
    let both = hosts.addrs.join(" ");
    assert!(run.stdout.contains(&format!("nothing found: {both} ran pairs together within")), "{run:?}");
    assert_eq!(v["probes"][0]["outcome"], "passed", "{v}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left, [blocker], "what the probes left in their TMPDIR");
}

/// A host whose processes are all frozen hangs a 4-host allreduce at
/// start; the suite stops it at --max-time, then searches the hostfile's
/// hosts and names that host alone in its output, summary.md and
/// suite.json. About 36 s here: three probes and the benchmark wait for the
/// frozen host to their 8 s bound, as a real hang would (several times
/// that on a loaded machine, where the bound stretches).
#[test]
fn suite_locates_a_frozen_host_after_a_hang() {
    if skip() {
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(4, 12).expect("network namespaces");
    let dir = tempfile::tempdir().unwrap();
    let hostfile = hosts.hostfile(dir.path(), 1);
    let _frozen = hosts.freeze(3);
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.args(["suite", "--bench", "allreduce", "--np", "4", "--ppn", "1", "-m", "1:64", "--timeout", "3"])
        .args(["--max-time", &bound_s().to_string(), "--locate-on-hang", "-q"])
        .arg("--hostfile")
        .arg(&hostfile)
        .arg("--results-dir")
        .arg(dir.path())
        .arg("--")
        .args(hosts.base_args());
    let limit = search_bound() + Duration::from_secs(bound_s()) + under_load(Duration::from_secs(10 + 10));
    let run = run_cmd(c, limit);
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let frozen = &hosts.addrs[2];
    let lines = found_lines(&run);
    assert_eq!(
        lines,
        [format!("found: host {frozen} fails alone (probe 4: had not ended after the {} s bound)", bound_s())]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        "{run:?}"
    );
    let suite_dir = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.join("suite.json").is_file())
        .expect("a suite run directory");
    let s = read_json(&suite_dir.join("suite.json")).unwrap();
    assert_eq!(s["benchmarks"][0]["status"], "timeout", "{s}");
    assert_eq!(s["locate"]["findings"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["locate"]["exit_code"], 1, "{s}");
    let v = read_json(&suite_dir.join("locate/locate.json")).unwrap();
    assert_eq!(found(&v), [("host".to_string(), vec![frozen.clone()])], "{v}");
    assert!(v["probes"].as_array().unwrap().len() <= 7, "{v}");
    let summary = std::fs::read_to_string(suite_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("## After the hang: commbench locate\n\n- host {frozen} fails alone")),
        "{summary}"
    );
}

/// `commbench locate ARGS --results-dir RESULTS` on this machine (no
/// network namespaces): what it did, and its record when it left one.
fn locate_here(args: &[&str], results: &std::path::Path, limit: Duration) -> (Run, Option<Value>) {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("locate").arg("--results-dir").arg(results).args(args);
    let before = entries(results);
    let run = run_cmd(c, limit);
    run.assert_no_panic();
    (run, locate_record(results, &before))
}

/// The record of the one run directory under `results` that is not in
/// `before`: two searches in the same second are `<stamp>_locate` and
/// `<stamp>_locate_2`, so the newest name is not always the newest search.
fn locate_record(results: &std::path::Path, before: &[std::path::PathBuf]) -> Option<Value> {
    let made: Vec<_> = entries(results).into_iter().filter(|p| !before.contains(p)).collect();
    assert!(made.len() <= 1, "run directories one search made: {made:?}");
    read_json(&made.first()?.join("locate.json"))
}

/// The one `unresolved: the probe itself failed (...)` line, and that no
/// host was named: exit 2.
fn assert_probe_failed(run: &Run, words: &str) {
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(found_lines(run).is_empty(), "a host was named: {run:?}");
    let lines: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("unresolved: ")).collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(lines[0].starts_with(&format!("unresolved: the probe itself failed ({words}")), "{run:?}");
    assert!(!run.stdout.contains("nothing found"), "{run:?}");
}

/// A launcher option the launcher refuses fails every probe the same way
/// at once: that is the probe's failure, never the hosts'. Under 2 s here
/// (each probe ends at once).
#[test]
fn a_launcher_that_refuses_its_options_blames_no_host() {
    let _g = mpi_lock();
    let results = tempfile::tempdir().unwrap();
    let args = ["--hosts", "localhost,127.0.0.1", "--bound", "30", "--", "--bogus-option"];
    let (run, v) = locate_here(&args, results.path(), Duration::from_secs(60));
    assert_probe_failed(&run, "mpirun: Error: unknown option \"--bogus-option\")");
    let v = v.expect("locate.json");
    assert_eq!(v["exit_code"], 2, "{v}");
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    assert_eq!(
        (findings[0]["kind"].as_str(), findings[0]["hosts"].as_array().map(Vec::len)),
        (Some("probe_failed"), Some(0))
    );
}

/// pairs refusing the arguments locate passes on (`--pairs-args`) is the
/// probe's failure, said in pairs' words, with no host named.
#[test]
fn pairs_refusing_its_arguments_blames_no_host() {
    let _g = mpi_lock();
    let results = tempfile::tempdir().unwrap();
    let args = ["--hosts", "localhost", "--bound", "30", "--pairs-args", "--bogus"];
    let (run, _) = locate_here(&args, results.path(), Duration::from_secs(60));
    assert_probe_failed(&run, "commbench pairs: unexpected argument '--bogus' found");
}

/// A probe passes only when its pairs record shows every direction
/// measured: a launcher that exits 0 having run nothing (`--version`) and
/// pairs printing its help are the probe's failure, not "nothing found".
#[test]
fn a_probe_that_measured_nothing_does_not_pass() {
    let _g = mpi_lock();
    let results = tempfile::tempdir().unwrap();
    let (run, _) = locate_here(
        &["--hosts", "localhost", "--bound", "30", "--", "--version"],
        results.path(),
        Duration::from_secs(60),
    );
    assert_probe_failed(&run, "the launcher exited 0 but left no pairs record");
    let (run, _) = locate_here(
        &["--hosts", "localhost", "--bound", "30", "--pairs-args", "--help"],
        results.path(),
        Duration::from_secs(60),
    );
    assert_probe_failed(&run, "the launcher exited 0 but left no pairs record");
}

/// A results place with no room: the probe cannot even be set up, which
/// is no host's fault. Locate runs in a private mount namespace on a full
/// 64 KiB tmpfs.
#[test]
fn a_full_results_disk_blames_no_host() {
    if !Command::new("unshare").args(["-m", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: needs unshare -m (root) for a full tmpfs");
        return;
    }
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let t = d.path().display().to_string();
    let line = format!(
        "mount -t tmpfs -o size=64k tmpfs {t} && (dd if=/dev/zero of={t}/fill bs=4k count=64 2>/dev/null; true) && \
         exec {} locate --hosts localhost,127.0.0.1 --bound 30 --results-dir {t}/results",
        bin(Mpi::OpenMpi, "commbench").display()
    );
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", &line]);
    let run = run_cmd(c, Duration::from_secs(60));
    run.assert_no_panic();
    assert_probe_failed(&run, "cannot make ");
    assert!(run.stdout.contains("No space left on device"), "{run:?}");
}

/// `--from` refuses what is not a regular file at once, and a record too
/// large to be one, in one line: a FIFO (or a run directory whose
/// suite.json is one) would block, /dev/zero would be read until memory
/// ran out.
#[test]
fn locate_from_a_fifo_a_device_or_a_huge_file_ends_at_once() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("rec.json");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    for p in [&fifo, &run_dir.join("suite.json")] {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    let huge = d.path().join("huge.json");
    std::fs::File::create(&huge).unwrap().set_len(200 << 20).unwrap();
    let cases = [
        (fifo.clone(), "a FIFO"),
        (run_dir.clone(), "a FIFO"),
        ("/dev/zero".into(), "a character device"),
        ("/dev/urandom".into(), "a character device"),
        (huge.clone(), "file too large"),
    ];
    for (path, why) in cases {
        let results = d.path().join("results");
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.arg("locate").arg("--from").arg(&path).arg("--results-dir").arg(&results);
        let run = run_cmd(c, Duration::from_secs(10));
        run.assert_no_panic();
        assert!(!run.timed_out, "{}: {run:?}", path.display());
        assert_eq!(run.code, Some(2), "{}: {run:?}", path.display());
        assert_eq!(run.stderr.lines().count(), 1, "{}: {run:?}", path.display());
        assert!(run.stderr.starts_with("commbench locate: cannot read ") && run.stderr.contains(why), "{run:?}");
        assert!(!results.exists(), "{}: a run directory was made", path.display());
    }
}

/// Host names that are no host names (an ssh option, a control character)
/// are refused in one line naming them, escaped, from --hosts and from a
/// hostfile, before any probe.
#[test]
fn locate_refuses_what_is_not_a_host_name() {
    let d = tempfile::tempdir().unwrap();
    let results = d.path().join("results");
    let hostfile = d.path().join("hosts");
    std::fs::write(&hostfile, "node01 slots=2\n-oProxyCommand=touch${IFS}/tmp/x slots=2\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--hosts", "node01,-oProxyCommand=sh"], "'-oProxyCommand=sh' is not a host name"),
        (&["--hosts", "a\x1b[31m"], "'a\\u{1b}[31m' is not a host name"),
        (&["--hosts", ".hidden"], "'.hidden' is not a host name"),
        (&["--hostfile", hostfile.to_str().unwrap()], "line 2: '-oProxyCommand=touch${IFS}/tmp/x' is not a host name"),
    ];
    for (args, words) in cases {
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.arg("locate").args(args).arg("--results-dir").arg(&results);
        let run = run_cmd(c, Duration::from_secs(10));
        run.assert_no_panic();
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {run:?}");
        assert!(run.stderr.starts_with("commbench locate: ") && run.stderr.contains(words), "{args:?}: {run:?}");
        assert!(!results.exists(), "{args:?}: a run directory was made");
    }
}

/// SIGTERM while a probe runs stops that probe and the search: locate says
/// it was interrupted and what it found so far, names no host for the
/// stopped probe, and starts no other. The probe is made long (10^9
/// ping-pongs); the signal goes once pairs has written its record.
#[test]
fn sigterm_stops_the_search_with_what_was_found() {
    let _g = mpi_lock();
    let results = tempfile::tempdir().unwrap();
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("locate")
        .args([
            "--hosts",
            "localhost",
            "--bound",
            "600",
            "--size",
            "4KB",
            "--pairs-args",
            "--latency --latency-iterations 1000000000",
        ])
        .arg("--results-dir")
        .arg(results.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // Until pairs' record is in the probe's folder (pairs is measuring).
    let started = std::time::Instant::now();
    let pairs_running = || -> Option<()> {
        let dirs = std::fs::read_dir(results.path()).ok()?;
        let run_dir = dirs.filter_map(|e| e.ok().map(|e| e.path())).next()?;
        let probe = std::fs::read_dir(run_dir.join("probe1")).ok()?;
        probe.filter_map(|e| e.ok()).find(|e| e.file_name().to_string_lossy().ends_with("_pairs.json")).map(|_| ())
    };
    while pairs_running().is_none() {
        assert!(started.elapsed() < under_load(Duration::from_secs(60)), "pairs never started");
        assert!(child.try_wait().unwrap().is_none(), "locate ended before its probe measured");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let signalled = std::time::Instant::now();
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let limit = under_load(Duration::from_secs(10));
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if signalled.elapsed() > limit {
            let _ = child.kill();
            panic!("locate had not ended {limit:?} after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{stdout}\n{stderr}");
    assert!(!stdout.lines().any(|l| l.starts_with("found: ")), "{stdout}");
    assert!(!stdout.contains("nothing found"), "{stdout}");
    assert!(
        stdout.lines().any(|l| l == "interrupted: SIGTERM stopped the search during probe 1; found so far: nothing"),
        "{stdout}"
    );
    let v = locate_record(results.path(), &[]).expect("locate.json");
    assert_eq!(v["probes"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["stopped"], "interrupted by SIGTERM", "{v}");
    assert_eq!(v["exit_code"], 128 + libc::SIGTERM, "{v}");
}
