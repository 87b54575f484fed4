//! osu_bw_fan_in and osu_bw_fan_out across network-namespace "hosts"
//! (tests/it/common/netns.rs: each has its own host name, which is how these
//! benchmarks tell nodes apart): stdout against OSU 7.4's own output
//! (tests/golden, captured the same way, values masked), the CSV against
//! stdout, and the node rules. One node is refused in tests/it/bad_input.rs.

use crate::common;

use common::netns::Hosts;
use common::*;
use std::process::Output;

fn skip() -> bool {
    if !Hosts::available() {
        eprintln!("SKIPPED: needs root, ip, tc and unshare for network-namespace hosts");
        return true;
    }
    false
}

/// Runs `bench` with `per_host` ranks on each host (a list: one count per
/// host) and `args`.
fn run(hosts: &Hosts, per_host: &[usize], bench: &str, args: &[&str]) -> Output {
    let np: usize = per_host.iter().sum();
    let mut la = hosts.launcher_args(1);
    let at = la.iter().position(|a| a == "--host").unwrap() + 1;
    la[at] = hosts.addrs.iter().zip(per_host).map(|(a, n)| format!("{a}:{n}")).collect::<Vec<_>>().join(",");
    let mut c = launcher(Mpi::OpenMpi, np);
    c.args(la).arg(bin(Mpi::OpenMpi, bench)).args(args).args(["--timeout", "60"]);
    let _tmpdir = own_tmpdir(&mut c);
    c.output().expect("mpirun")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (golden file, benchmark, ranks per host, arguments), as captured from
/// OSU's binaries.
const GOLDEN: &[(&str, &str, &[usize], &[&str])] = &[
    ("bw_fan_in_m64", "osu_bw_fan_in", &[1, 1], &["-m", "64", "-i", "20", "-x", "2"]),
    ("bw_fan_out_z", "osu_bw_fan_out", &[1, 1], &["-m", "16", "-i", "10", "-x", "1", "-z"]),
    ("bw_fan_in_ppn2", "osu_bw_fan_in", &[2, 2], &["-m", "16", "-i", "10", "-x", "1", "-W", "8"]),
    ("bw_fan_out_3nodes_T_all", "osu_bw_fan_out", &[1, 1, 1], &["-m", "16", "-i", "10", "-x", "1", "-T", "all"]),
];

#[test]
fn layout_matches_osu_across_hosts() {
    if skip() {
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(3, 11).expect("network namespaces");
    let dir = tempfile::tempdir().unwrap();
    for (name, bench, per_host, args) in GOLDEN {
        let mut all = args.to_vec();
        let rd = dir.path().join(name);
        let rd = rd.display().to_string();
        all.extend(["--results-dir", &rd]);
        let out = run(&hosts, per_host, bench, &all);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{bench} {args:?}: {stderr}\n{stdout}");
        // Nothing beside OSU's table, for harnesses that merge the streams
        // (but mpirun's warning of a harmless race, which load brings out).
        assert_eq!(without_launcher_races(&stderr), "", "{bench} {args:?}");
        assert_eq!(mask(&stdout), mask(&golden(name)), "{bench} {args:?} differs from OSU's {name}.txt");
        // The CSV holds what stdout shows.
        let csvs = files_with_ext(std::path::Path::new(&rd), "csv");
        let csv = read_csv(&csvs[0]);
        let rows = osu_rows(&stdout);
        assert_eq!(rows.len(), csv.len(), "{name}");
        let np: usize = per_host.iter().sum();
        let pairs = np - per_host[0];
        for (row, rec) in rows.iter().zip(&csv) {
            assert_eq!(row[0], rec["size_bytes"]);
            assert_eq!(row[1], two_decimals(&rec["bw_MBps"]), "{name} at size {}", row[0]);
            assert_eq!((rec["np"].clone(), rec["pairs"].clone()), (np.to_string(), pairs.to_string()));
            assert_eq!(rec["avg_lat_us"], "");
        }
        if args.contains(&"-z") {
            assert!(csv.iter().all(|r| r["osu_tails"].starts_with("P50=")), "{csv:?}");
        }
        // OSU's output does not say fan-in or fan-out: compare takes the
        // name our CSV gives and judges every row against it (the values
        // are another run's, so only the pairing is checked here).
        let osu_txt = repo_root().join(format!("tests/golden/{name}.txt"));
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_commbench"));
        let csv_path = csvs[0].display().to_string();
        c.args(["compare", &osu_txt.display().to_string(), &csv_path, "--tolerance", "99%", "--format", "json"]);
        let r = c.output().expect("commbench compare");
        let (out, err) = (text(&r.stdout), text(&r.stderr));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out}\n{err}"));
        assert_eq!(v["summary"]["unmatched"], 0, "{name}: {out}\n{err}");
        assert_eq!(v["summary"]["points"], csv.len(), "{name}: every CSV row is judged: {err}");
        assert!(err.contains(&format!("compared as {bench}")), "{name}: {err}");
    }
}

#[test]
fn uneven_nodes_are_refused() {
    if skip() {
        return;
    }
    let _g = mpi_lock();
    let hosts = Hosts::up_salted(2, 12).expect("network namespaces");
    let out = run(&hosts, &[2, 1], "osu_bw_fan_out", &["-m", "8", "--no-results"]);
    assert!(!out.status.success());
    assert_eq!(text(&out.stdout), "");
    let h = (hosts.ns(1), hosts.ns(2));
    let want =
        format!("Please run this benchmark with same ppn for all nodes (processes per node: {} 2, {} 1)", h.0, h.1);
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().filter(|l| l.starts_with("Please run")).collect::<Vec<_>>(), [want.as_str()], "{stderr}");
}
