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
/// machine (mpirun's start across the namespaces included; 4 s with the
/// slowed host).
const BOUND_S: u64 = 8;

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
    under_load(Duration::from_secs(7 * (BOUND_S + 2 + 3)))
}

fn locate(hosts: &Hosts, results: &std::path::Path) -> (Run, Value) {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("locate")
        .args(["--hosts", &hosts.addrs.join(","), "--bound", &BOUND_S.to_string(), "--size", "4KB"])
        // Four spinning ranks on two cores make directions vary 2-40 fold
        // here (38 MB/s the lowest seen), so the median is no steady
        // reference; the slowed host gives 2-3 MB/s.
        .args(["--min-fraction-of-median", "10%", "--min-bw", "10MB/s"])
        .arg("--results-dir")
        .arg(results)
        .arg("--")
        .args(hosts.base_args());
    let run = run_cmd(c, search_bound() + Duration::from_secs(30));
    run.assert_no_panic();
    let dir = std::fs::read_dir(results)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_str().unwrap().ends_with("_locate") && p.join("locate.json").is_file())
        .max()
        .unwrap_or_else(|| panic!("no locate record: {run:?}"));
    let v = read_json(&dir.join("locate.json")).unwrap();
    (run, v)
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
    assert!(run.stdout.contains("nothing found: all 4 hosts ran pairs together within the 8 s bound"), "{run:?}");
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
    // Every probe with the cut-off host failed, every one without passed.
    for p in probes {
        let with = p["hosts"].as_array().unwrap().iter().any(|h| h == &hosts.addrs[1]);
        let ok = p["outcome"] == "passed";
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

/// A host whose processes are all frozen hangs a 4-host allreduce at
/// start; the suite stops it at --max-time, then searches the hostfile's
/// hosts and names that host alone in its output, summary.md and
/// suite.json. About 36 s here: three probes and the benchmark wait for the
/// frozen host to their 8 s bound, as a real hang would.
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
        .args(["--max-time", &BOUND_S.to_string(), "--locate-on-hang", "-q"])
        .arg("--hostfile")
        .arg(&hostfile)
        .arg("--results-dir")
        .arg(dir.path())
        .arg("--")
        .args(hosts.base_args());
    let limit = search_bound() + under_load(Duration::from_secs(BOUND_S + 10 + 10));
    let run = run_cmd(c, limit);
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{run:?}");
    let frozen = &hosts.addrs[2];
    let lines = found_lines(&run);
    assert_eq!(
        lines,
        [format!("found: host {frozen} fails alone (probe 4: had not ended after the 8 s bound)")]
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
