//! `--backend ucx` under real mpirun: every point-to-point benchmark over
//! UCX's shared-memory transports and over TCP, and across two
//! network-namespace hosts, with validation passing, OSU's stdout layout
//! unchanged, `ucx` in the CSV and the record naming the UCX version, the
//! transport variables and the lanes UCX chose; bad UCX input ends every
//! rank with one line and status 1.

use crate::common;

use common::netns::Hosts;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const P2P: &[&str] = &["osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr", "osu_multi_lat"];

/// Small sizes and counts, validated.
const QUICK: &[&str] = &["-m", "1:4096", "-i", "40", "-x", "4", "-c"];

struct Outcome {
    run: Run,
    csv: Vec<std::collections::HashMap<String, String>>,
    record: Value,
}

fn run(bench: &str, args: &[&str], env: &[(&str, &str)], launcher_args: Vec<String>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let csv_arg = csv.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--csv", &csv_arg]);
    let o = Launch {
        cwd: Some(dir.path().to_path_buf()),
        env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        launcher_args,
        timeout: Some(Duration::from_secs(120)),
        ..Launch::default()
    };
    let run = launch(Mpi::OpenMpi, 2, bench, &all, &o);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{bench} {args:?} {env:?}: {run:?}");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    Outcome { run, csv: read_csv(&csv), record }
}

/// Every rank's lanes, as the record lists them.
fn lanes(record: &Value, rank: usize) -> Vec<String> {
    record["backend_details"]["endpoints"][rank]["lanes"]
        .as_array()
        .unwrap_or_else(|| panic!("no lanes for rank {rank}: {record}"))
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

fn check_ucx_run(bench: &str, o: &Outcome, tls: &str) {
    // OSU's layout, title included, exactly as over MPI.
    let mpi = launch(Mpi::OpenMpi, 2, bench, &[QUICK, &["--no-results"]].concat(), &Launch::default());
    assert_eq!(mask(&o.run.stdout), mask(&mpi.stdout), "{bench}");
    assert_eq!(o.run.our_stderr_lines(), Vec::<&str>::new(), "{bench}: {}", o.run.stderr);
    let rows = osu_rows(&o.run.stdout);
    assert!(!rows.is_empty(), "{bench}");
    assert!(rows.iter().all(|r| r.last().map(String::as_str) == Some("Pass")), "{bench}: {}", o.run.stdout);
    assert_eq!(o.csv.len(), rows.len(), "{bench}");
    assert!(o.csv.iter().all(|r| r["backend"] == "ucx" && r["validation"] == "Pass"), "{bench}: {:?}", o.csv[0]);
    let d = &o.record["backend_details"];
    assert!(d["version"].as_str().unwrap().starts_with("1."), "{d}");
    assert_eq!(d["tls"], tls, "{d}");
    assert_eq!(o.record["status"], "complete");
    assert_eq!(o.record["options"]["backend"], "ucx");
}

#[test]
fn every_point_to_point_benchmark_over_ucx_shared_memory() {
    let _g = mpi_lock();
    for bench in P2P {
        let args = [QUICK, &["--backend", "ucx"]].concat();
        let o = run(bench, &args, &[("UCX_TLS", "shm")], Vec::new());
        check_ucx_run(bench, &o, "shm");
        for rank in 0..2 {
            let l = lanes(&o.record, rank);
            assert!(!l.is_empty() && l.iter().all(|x| !x.contains("tcp/")), "{bench} rank {rank}: {l:?}");
            assert!(l.iter().all(|x| x.starts_with(&format!("peer {}: ", 1 - rank))), "{l:?}");
        }
    }
}

#[test]
fn latency_and_bandwidth_over_ucx_tcp() {
    let _g = mpi_lock();
    for bench in ["osu_latency", "osu_bw"] {
        let args = [QUICK, &["--backend", "ucx"]].concat();
        let o = run(bench, &args, &[("UCX_TLS", "tcp")], Vec::new());
        check_ucx_run(bench, &o, "tcp");
        let l = lanes(&o.record, 0);
        assert!(l.iter().any(|x| x.contains("tcp/")), "{l:?}");
    }
}

/// Two hosts whose devices have different names: one UCX_NET_DEVICES
/// naming both, each host using its own.
#[test]
fn across_two_network_namespace_hosts() {
    if !Hosts::available() {
        eprintln!("SKIPPED: needs root, ip, tc and unshare for network-namespace hosts");
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(2, 11).expect("network namespaces");
    let mut la = hosts.launcher_args(1);
    la.extend(["-x", "UCX_TLS", "-x", "UCX_NET_DEVICES"].map(String::from));
    for bench in ["osu_latency", "osu_bw"] {
        let args = [QUICK, &["--backend", "ucx"]].concat();
        let o = run(bench, &args, &[("UCX_TLS", "tcp"), ("UCX_NET_DEVICES", "eth1,eth2")], la.clone());
        let rows = osu_rows(&o.run.stdout);
        assert!(!rows.is_empty() && rows.iter().all(|r| r.last().map(String::as_str) == Some("Pass")));
        assert_eq!(o.record["hosts"].as_array().unwrap().len(), 2, "{}", o.record);
        assert_eq!(o.record["backend_details"]["net_devices"], "eth1,eth2");
        for (rank, dev) in [(0, "tcp/eth1"), (1, "tcp/eth2")] {
            let l = lanes(&o.record, rank);
            assert!(l.iter().any(|x| x.contains(dev)), "rank {rank}: {l:?}");
        }
    }
}

/// Placement feeds UCX: `--nic` becomes UCX_NET_DEVICES before the
/// context is made (both ranks on one namespace host, whose only network
/// device is eth1).
#[test]
fn nic_placement_feeds_ucx() {
    if !Hosts::available() {
        eprintln!("SKIPPED: needs root, ip, tc and unshare for network-namespace hosts");
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(1, 12).expect("network namespaces");
    let mut la = hosts.launcher_args(2);
    la.extend(["-x", "UCX_TLS"].map(String::from));
    let args = [QUICK, &["--backend", "ucx", "--nic", "eth1"]].concat();
    let o = run("osu_latency", &args, &[("UCX_TLS", "tcp")], la);
    assert_eq!(o.record["backend_details"]["net_devices"], "eth1", "{}", o.record);
    for rank in 0..2 {
        let l = lanes(&o.record, rank);
        assert!(!l.is_empty() && l.iter().all(|x| x.contains("tcp/eth1")), "rank {rank}: {l:?}");
    }
}

#[test]
fn bad_ucx_input_is_one_line_and_status_one_everywhere() {
    let _g = mpi_lock();
    let mut r = Refusals::new();
    let ucx = ["-m", "8", "-i", "10", "--backend", "ucx", "--no-results"];
    r.refused("osu_latency", &ucx, &[("UCX_TLS", "bogus")], |l| {
        l == "osu_latency: UCX context creation failed: No such device (check UCX_TLS and UCX_NET_DEVICES \
              against `ucx_info -d`)"
    });
    r.refused("osu_bw", &ucx, &[("UCX_NET_DEVICES", "nodev0")], |l| {
        l.starts_with("osu_bw: UCX device selection (UCX_NET_DEVICES) failed: UCX_NET_DEVICES names nodev0, none of which this host has (network interfaces: ")
    });
    r.refused("osu_allreduce", &["--backend", "ucx"], &[], |l| {
        l.starts_with(
            "Invalid value [--backend ucx] (osu_allreduce needs the collectives, which UCX does not have; UCX runs \
             osu_latency, osu_bw, osu_bibw, osu_mbw_mr, osu_bw_fan_in, osu_bw_fan_out, osu_multi_lat, osu_latency_mp)",
        )
    });
    r.refused("osu_latency", &["--backend", "verbs"], &[], |l| {
        l == "Invalid value [--backend verbs] (give mpi, ucx or nccl)"
    });
    r.check();
}

/// libucp unreadable (a bind mount over it, in a mount namespace of the
/// job's own): `--backend ucx` says so in one line; MPI still runs.
#[test]
fn ucx_missing_at_run_time() {
    // SAFETY: plain libc query.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/unshare").exists() {
        eprintln!("SKIPPED: needs root and unshare to hide libucp");
        return;
    }
    let Some(lib) = ["/usr/lib/x86_64-linux-gnu/libucp.so.0", "/usr/lib64/libucp.so.0", "/usr/lib/libucp.so.0"]
        .iter()
        .find_map(|p| std::fs::canonicalize(p).ok())
    else {
        eprintln!("SKIPPED: no libucp.so.0 in the usual places");
        return;
    };
    let _g = mpi_lock();
    let hidden = |args: &[&str]| -> Run {
        let mpirun = launcher(Mpi::OpenMpi, 2);
        let mut c = Command::new("unshare");
        c.args(["-m", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$@\""])
            .arg(&lib)
            .arg(mpirun.get_program())
            .args(mpirun.get_args())
            .arg(bin(Mpi::OpenMpi, "osu_latency"))
            .args(args);
        for (k, v) in mpirun.get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        run_cmd(c, Duration::from_secs(30))
    };
    let r = hidden(&["-m", "8", "-i", "10", "--no-results", "--backend", "ucx"]);
    assert_ne!(r.code, Some(0), "{r:?}");
    assert!(r.elapsed < under_load(Duration::from_secs(5)), "took {:?}", r.elapsed);
    let lines = r.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].starts_with("osu_latency: UCX is not available: cannot open libucp (libucp.so.0: "),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("install UCX (Debian: libucx0) or load its module"), "{}", lines[0]);
    // The MPI-only binaries do not need UCX to start.
    let r = hidden(&["-m", "8", "-i", "10", "--no-results"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(osu_rows(&r.stdout).last().map(|row| row[0].as_str()), Some("8"), "{}", r.stdout);
}
