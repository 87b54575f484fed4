//! Placement on the real machine: `commbench topo` (hwloc's map and the
//! planned placement), ranks really bound where the policy says (checked
//! with sched_getaffinity through the run record), the stderr summary, the
//! NIC variables and who set them, and misplacement warnings.

use crate::common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn topo(args: &[&str]) -> std::process::Output {
    Command::new(bin(Mpi::OpenMpi, "commbench")).arg("topo").args(args).output().unwrap()
}

fn topo_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend(args);
    let out = topo(&all);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// PU lists ("0" or "0,64") of the first allowed cores, as the policy
/// writes them.
fn first_cores(map: &serde_json::Value, n: usize) -> Vec<String> {
    let allowed: Vec<u64> =
        map["machine"]["allowed_cpus"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    map["machine"]["cores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["pus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .filter(|p| allowed.contains(p))
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.is_empty())
        .take(n)
        .map(|p| p.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
        .collect()
}

fn placement_rows(stderr: &str) -> Vec<Vec<String>> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<usize>().is_ok()))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn topo_prints_this_machine() {
    let out = topo(&[]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let map = topo_json(&[]);
    let host = map["machine"]["hostname"].as_str().unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(&format!("{host} (hwloc ")), "{text}");
    assert!(first.contains(" NUMA node") && first.contains(" cores, "), "{text}");
    assert!(text.contains("\nallowed cpus: "), "{text}");
    assert!(text.contains("\n  NUMA node 0: cpus "), "{text}");
    for nic in map["machine"]["nics"].as_array().unwrap() {
        assert!(text.contains(&format!("    NIC {}", nic["name"].as_str().unwrap())), "{text}");
    }
    // Where /sys says eth0 is a PCI device, it is in the map with its cpus.
    if std::path::Path::new("/sys/class/net/eth0/device").exists() {
        let eth0 = map["machine"]["nics"].as_array().unwrap().iter().find(|n| n["name"] == "eth0").expect("eth0");
        assert!(!eth0["cpus"].as_array().unwrap().is_empty());
    }
}

#[test]
fn topo_plans_core_placement() {
    let map = topo_json(&[]);
    let cores = first_cores(&map, 2);
    if cores.len() < 2 {
        eprintln!("SKIPPED: fewer than 2 cores allowed here");
        return;
    }
    let out = topo(&["--ranks-per-node", "2", "--bind", "core"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\nplacement of 2 ranks with --bind core:\n"), "{text}");
    let rows: Vec<Vec<&str>> =
        text.split("--bind core:\n").nth(1).unwrap().lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0][..2], ["0", cores[0].as_str()], "{text}");
    assert_eq!(rows[1][..2], ["1", cores[1].as_str()], "{text}");
    let planned = topo_json(&["--ranks-per-node", "2", "--bind", "core"]);
    assert_eq!(planned["policy"], "core");
    assert_eq!(planned["placement"][1]["cpus"], cores[1].as_str());
    // A described machine instead of this one.
    let m = repo_root().join("tests/machines/epyc-hdr.json");
    let out = topo(&["--machine", m.to_str().unwrap(), "--ranks-per-node", "1", "--bind", "nic"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("NIC mlx5_2 (ib0): InfiniBand, port 1 ACTIVE 200 Gb/s"), "{text}");
    assert!(text.contains("\n  0      80    5     mlx5_2:1  -\n"), "{text}");
    // Usage errors: one line, status 2.
    for (args, line) in [
        (&["--bind", "nic"][..], "commbench topo: placement options need --ranks-per-node N\n"),
        (&["--ranks-per-node", "2", "--bind", "rack"][..], "commbench topo: --bind rack: use none, core, nic or gpu\n"),
    ] {
        let out = topo(args);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&out.stderr), line);
    }
}

/// `--bind core` under both launchers, with the launcher's own binding off:
/// each rank on its own core, in the stderr table and the run record.
#[test]
fn bind_core_puts_ranks_on_distinct_cores() {
    let _g = mpi_lock();
    let cores = first_cores(&topo_json(&[]), 2);
    if cores.len() < 2 {
        eprintln!("SKIPPED: fewer than 2 cores allowed here");
        return;
    }
    for mpi in [Mpi::OpenMpi, Mpi::Mpich] {
        if mpi == Mpi::Mpich && !have_mpich() {
            eprintln!("SKIPPED for MPICH: mpiexec.mpich is not installed");
            continue;
        }
        let mut args = vec!["-m", "1:8", "-i", "20", "-x", "2", "--bind", "core", "--verbose"];
        let launcher_args: Vec<String> =
            if mpi == Mpi::OpenMpi { vec!["--bind-to".into(), "none".into()] } else { vec![] };
        let dir = tempfile::tempdir().unwrap();
        let rd = dir.path().join("res");
        let rd_s = rd.display().to_string();
        args.extend(["--results-dir", &rd_s]);
        let run = launch(mpi, 2, "osu_latency", &args, &Launch { launcher_args, ..Launch::default() });
        assert_eq!(run.code, Some(0), "{mpi:?}: {run:?}");
        let rows = placement_rows(&run.stderr);
        assert!(run.stderr.contains("# placement: --bind core, 2 rank(s) on 1 host(s)\n"), "{}", run.stderr);
        assert_eq!((rows[0][0].as_str(), rows[0][3].as_str()), ("0", cores[0].as_str()), "{}", run.stderr);
        assert_eq!((rows[1][0].as_str(), rows[1][3].as_str()), ("1", cores[1].as_str()), "{}", run.stderr);
        assert!(!run.stderr.contains("warning"), "{}", run.stderr);
        let json = files_with_ext(&rd, "json");
        let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
        for (i, core) in cores.iter().enumerate() {
            let r = &record["ranks"][i];
            assert_eq!(r["cpus"], core.as_str(), "{mpi:?} rank {i}: {r}");
            assert_eq!(r["placement"]["policy"], "core");
            assert_eq!(r["placement"]["bound_by"], "commbench");
            assert_eq!(r["placement"]["cores"].as_array().unwrap().len(), 1);
            assert!(r["placement"]["topology"].as_str().unwrap().starts_with("hwloc "));
        }
        assert_eq!(record["placement_warnings"], serde_json::json!([]));
    }
}

/// Both partners squeezed onto one core by the launcher's environment:
/// warned on stderr and in the run record.
#[test]
fn two_ranks_on_one_core_are_warned_about() {
    let _g = mpi_lock();
    if Command::new("taskset").arg("-V").output().is_err() {
        eprintln!("SKIPPED: taskset is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("res");
    let mut c = Command::new("taskset");
    c.args(["-c", "0", "mpirun", "-np", "2", "--bind-to", "none"]);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.arg(bin(Mpi::OpenMpi, "osu_latency")).args(["-m", "1:8", "-i", "20", "-x", "2", "--results-dir"]).arg(&rd);
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    let host = topo_json(&[])["machine"]["hostname"].as_str().unwrap().to_string();
    let warning = format!(
        "ranks 0-1 share one core (core 0) on {host}: osu_latency partners take turns on it instead of running at \
         the same time; give each rank its own core (--bind core, or the launcher's core binding)"
    );
    // Without --verbose the warning is all a successful run adds to stderr.
    assert_eq!(run.our_stderr_lines(), [format!("# warning: {warning}")], "{}", run.stderr);
    let json = files_with_ext(&rd, "json");
    let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    assert_eq!(record["placement_warnings"], serde_json::json!([warning]));
    assert_eq!(record["ranks"][1]["placement"]["bound_by"], "launcher");
}

/// The chosen NIC reaches UCX and NCCL through their variables; a value the
/// user set wins and the report says so.
#[test]
fn nic_choice_sets_transport_variables_and_user_wins() {
    let _g = mpi_lock();
    let map = topo_json(&[]);
    let Some(nic) = map["machine"]["nics"].as_array().unwrap().first().map(|n| n["name"].as_str().unwrap().to_string())
    else {
        eprintln!("SKIPPED: hwloc sees no network device here");
        return;
    };
    let args = ["-m", "8", "-i", "20", "-x", "2", "--nic", &nic, "--verbose"];
    let o = run_with_results_env(Mpi::OpenMpi, 2, "osu_bw", &args, &[]);
    assert_eq!(o.run.code, Some(0), "{:?}", o.run);
    let p = &o.record["ranks"][0]["placement"];
    assert_eq!(p["policy"], "nic");
    assert_eq!(p["nic"]["source"], "--nic");
    let ucx = p["env"].as_array().unwrap().iter().find(|e| e["name"] == "UCX_NET_DEVICES").unwrap();
    assert_eq!(ucx["set_by"], "commbench");
    assert!(ucx["value"].as_str().unwrap().starts_with(&nic), "{ucx}");
    assert!(placement_rows(&o.run.stderr).iter().all(|r| r[5].starts_with(&nic)), "{}", o.run.stderr);

    let o = run_with_results_env(Mpi::OpenMpi, 2, "osu_bw", &args, &[("UCX_NET_DEVICES", "lo")]);
    assert_eq!(o.run.code, Some(0), "{:?}", o.run);
    let p = &o.record["ranks"][1]["placement"];
    let ucx = p["env"].as_array().unwrap().iter().find(|e| e["name"] == "UCX_NET_DEVICES").unwrap();
    assert_eq!((ucx["value"].as_str(), ucx["set_by"].as_str()), (Some("lo"), Some("user")));
    assert!(ucx["commbench_choice"].as_str().unwrap().starts_with(&nic));
    assert_eq!(p["nic"]["name"], "lo");
    assert!(
        o.run.stderr.contains("# note: UCX_NET_DEVICES=lo was set by the user and wins over commbench's "),
        "{}",
        o.run.stderr
    );
}

/// `commbench pairs` takes the same placement options and reports the same
/// way.
#[test]
fn pairs_places_ranks_too() {
    let _g = mpi_lock();
    let cores = first_cores(&topo_json(&[]), 2);
    if cores.len() < 2 {
        eprintln!("SKIPPED: fewer than 2 cores allowed here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rd = dir.path().join("res");
    let rd_s = rd.display().to_string();
    let args =
        ["pairs", "--scheme", "all", "--size", "64K", "-i", "2", "-x", "1", "--bind", "core", "--results-dir", &rd_s];
    let o = Launch { launcher_args: vec!["--bind-to".into(), "none".into()], ..Launch::default() };
    let run = launch(Mpi::OpenMpi, 2, "commbench", &args, &o);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("# placement: --bind core, 2 rank(s) on 1 host(s)\n"), "{}", run.stderr);
    let json = files_with_ext(&rd, "json");
    let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    for (i, core) in cores.iter().enumerate() {
        assert_eq!(record["ranks"][i]["cpus"], core.as_str(), "{record}");
        assert_eq!(record["ranks"][i]["placement"]["bound_by"], "commbench");
    }
    assert_eq!(record["placement_warnings"], serde_json::json!([]));
}
