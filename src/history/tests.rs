//! The GPU copy tools' results through `history add` and `history check`:
//! a gpu-bw run and an nvbandwidth cells CSV, each with the run record
//! its tool writes, stored in a real SQLite file and checked against it.

use std::path::{Path, PathBuf};

use super::{add, check, db};
use crate::compare::format::Format;
use crate::compare::tolerance::Rules;
use crate::gpu_bw::nvbandwidth::record::{NvbRecord, Settings};
use crate::gpu_bw::options::{Config, Test};
use crate::gpu_bw::record::GpuBwRecord;
use crate::gpu_bw::results::{Clock, HostMemory, Kind, Measurement};
use crate::options::ResultsDest;
use crate::report::record::RunStatus;

const HOST: &str = "gpunode7";

/// A gpu-bw run in `dir` as gpu-bw leaves it: the CSV (`p2p_gbps` for its
/// one GPU-to-GPU copy), a matrix CSV beside it and the record, ended
/// `complete` unless `ended` is false.
fn gpu_bw_run(dir: &Path, stamp: &str, p2p_gbps: f64, ended: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let ms = [
        Measurement::bandwidth(
            Kind::H2d,
            None,
            Some(0),
            Some(HostMemory::Pinned),
            None,
            (32_000_000, 100, 1),
            0.128,
            Clock::GpuEvents,
        ),
        // 160 MB five times at p2p_gbps.
        Measurement::bandwidth(
            Kind::P2pUni,
            Some(0),
            Some(1),
            None,
            Some(true),
            (160_000_000, 5, 1),
            0.8 / p2p_gbps,
            Clock::GpuEvents,
        ),
    ];
    let csv = dir.join(format!("{stamp}_gpu-bw.csv"));
    let rows = crate::gpu_bw::output::csv_rows(&ms).unwrap();
    let text = crate::gpu_bw::output::COLUMNS.join(",") + "\n" + std::str::from_utf8(&rows).unwrap();
    std::fs::write(&csv, text).unwrap();
    std::fs::write(dir.join(format!("{stamp}_gpu-bw_uni_p2p_on_GBps.csv")), "src\\dst (GB/s),0,1\n0,,200.00\n1,,\n")
        .unwrap();
    let cfg = Config {
        tests: vec![Test::H2d, Test::P2p],
        gpus: Some(vec![0, 1]),
        host_bytes: 32_000_000,
        host_reps: 100,
        peer_bytes: 160_000_000,
        peer_reps: 5,
        latency_bytes: 16,
        latency_reps: 100,
        min_bw: None,
        min_efficiency: None,
        results: ResultsDest::Dir(dir.to_path_buf()),
        machine: None,
    };
    let mut r = GpuBwRecord::running(cfg, HOST.into(), vec!["commbench".into(), "gpu-bw".into()]);
    r.run.start_utc = format!(
        "{}-{}-{}T{}:{}:{}.000Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    );
    if ended {
        r.end(RunStatus::Complete, None, 0);
    }
    r.write(&csv.with_extension("json")).unwrap();
    csv
}

/// An nvbandwidth cells CSV in `dir` with its record: one read matrix of
/// two GPUs and a latency, ended `complete` unless `ended` is false.
fn nvbandwidth_run(dir: &Path, ended: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let csv = dir.join("20261202T090000Z_nvbandwidth.csv");
    let text = "tool,test,engine,matrix,row,column,from,to,host_memory,peer_access,bytes,loops,samples,statistic,\
                value,unit,path,peak_GBps,efficiency_pct,finished_utc\n\
                nvbandwidth,device_to_device_memcpy_read_ce,ce,,0,1,gpu1,gpu0,,,536870912,16,3,median,250.5,GB/s,\
                NVLink x2,300,83.5,2026-12-02T09:00:01Z\n\
                nvbandwidth,device_to_device_memcpy_read_ce,ce,,1,0,gpu0,gpu1,,,536870912,16,3,median,249.5,GB/s,\
                NVLink x2,300,83.2,2026-12-02T09:00:01Z\n\
                nvbandwidth,host_device_latency_sm,sm,,0,0,gpu0,host,,,2097152,,,,800,ns,PCIe,,,2026-12-02T09:00:02Z\n";
    std::fs::write(&csv, text).unwrap();
    let settings = Settings {
        buffer_mib: 512,
        loops: 16,
        samples: 3,
        statistic: "median",
        verify: true,
        numa_affinity: true,
        cases: vec!["device_to_device_memcpy_read_ce".into(), "host_device_latency_sm".into()],
    };
    let mut r = NvbRecord::running(settings, HOST.into(), vec!["nvbandwidth".into()]);
    r.run.start_utc = "2026-12-02T09:00:00.000Z".into();
    if ended {
        r.end(RunStatus::Complete, None, 0);
    }
    crate::report::record::write_json(&r, &csv.with_extension("json")).unwrap();
    csv
}

/// The stored runs' key columns, in the order they were added.
fn stored(db: &Path) -> Vec<[String; 6]> {
    let c = db::open(db, db::Mode::Read).unwrap();
    let mut st =
        c.prepare("SELECT benchmark, datatype, backend, memory, system, options FROM runs ORDER BY id").unwrap();
    let rows = st
        .query_map([], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?]))
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap();
    rows
}

/// `history check` of `run` against `db` with the default tolerance.
fn check_run(db: &Path, run: &Path) -> i32 {
    let c = db::open(db, db::Mode::Read).unwrap();
    let r = check::Request {
        run,
        system: None,
        last: 10,
        since: None,
        rules: Rules::default(),
        format: Format::Text,
        sizes: &[],
        quiet: true,
    };
    check::run(&c, &r)
}

/// Each cell of each test is one series: benchmark `<tool> <test>`,
/// datatype the cell, backend `cuda` on device memory, the system the
/// record's one host, the options that change the numbers from the
/// record's `config` or `settings`. The matrix CSV beside gpu-bw's
/// results is passed over, not refused.
#[test]
fn gpu_copy_runs_are_added_and_checked() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    let first = d.path().join("first");
    gpu_bw_run(&first, "20261201T100000Z", 200.0, true);
    let nvb = nvbandwidth_run(&d.path().join("nvb"), true);
    assert_eq!(add(&db, &[first.clone(), nvb.clone()], None, true), 0);
    let s = |v: [&str; 6]| v.map(String::from);
    let want = [
        s(["gpu-bw h2d", "host -> gpu0 pinned", "cuda", "device", HOST, "{}"]),
        s(["gpu-bw p2p_uni", "gpu0 -> gpu1 peer on", "cuda", "device", HOST, "{}"]),
        s([
            "nvbandwidth device_to_device_memcpy_read_ce",
            "gpu1 -> gpu0",
            "cuda",
            "device",
            HOST,
            r#"{"numa_affinity":true,"statistic":"median"}"#,
        ]),
        s([
            "nvbandwidth device_to_device_memcpy_read_ce",
            "gpu0 -> gpu1",
            "cuda",
            "device",
            HOST,
            r#"{"numa_affinity":true,"statistic":"median"}"#,
        ]),
        s([
            "nvbandwidth host_device_latency_sm",
            "gpu0 -> host sm",
            "cuda",
            "device",
            HOST,
            r#"{"numa_affinity":true,"statistic":"median"}"#,
        ]),
    ];
    assert_eq!(stored(&db), want);
    // Added again: nothing new.
    assert_eq!(add(&db, &[first, nvb], None, true), 0);
    assert_eq!(stored(&db).len(), want.len());

    // A later run as fast passes against the first; one at half the
    // GPU-to-GPU bandwidth fails.
    let same = gpu_bw_run(&d.path().join("same"), "20261203T100000Z", 200.0, true);
    assert_eq!(check_run(&db, &same), 0);
    let slow = gpu_bw_run(&d.path().join("slow"), "20261204T100000Z", 100.0, true);
    assert_eq!(check_run(&db, &slow), 1);
}

/// A record still `running` (its tool did not end it) is an incomplete
/// run: `add` refuses it, `check` fails it; once its process is gone it is
/// ended `killed` first, as an MPI run's is. A CSV cut short is refused.
#[test]
fn gpu_copy_runs_not_ended_or_cut_short_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.sqlite");
    let running = gpu_bw_run(&d.path().join("running"), "20261201T100000Z", 200.0, false);
    assert_eq!(add(&db, std::slice::from_ref(&running), None, true), 2);
    let nvb = nvbandwidth_run(&d.path().join("nvb"), false);
    assert_eq!(add(&db, std::slice::from_ref(&nvb), None, true), 2);
    assert!(stored(&db).is_empty());
    assert_eq!(check_run(&db, &running), 1);
    // Its process gone (killed outright), the record is ended `killed`
    // first, and still refused.
    let record = running.with_extension("json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    v["pid"] = gone.id().into();
    gone.wait().unwrap();
    v["host"] = crate::topo::hostname().into();
    std::fs::write(&record, v.to_string()).unwrap();
    let mut notes = Vec::new();
    let refused = super::ingest::read(&running, None, &mut notes).unwrap_err();
    assert!(refused.incomplete && refused.line.ends_with("the run record says 'killed': the run did not complete"));
    assert!(notes[0].contains("running, but its processes are gone (rank 0 (pid "), "{notes:?}");

    let cut = nvbandwidth_run(&d.path().join("cut"), true);
    let text = std::fs::read_to_string(&cut).unwrap();
    std::fs::write(&cut, text.trim_end()).unwrap();
    let mut notes = Vec::new();
    let refused = super::ingest::read(&cut, None, &mut notes).unwrap_err();
    assert!(!refused.incomplete);
    assert!(
        refused.line.ends_with(
            ":4: the last line has no newline: the file was cut off in the middle of a row; a truncated results \
             file is not kept"
        ),
        "{refused}"
    );
    assert_eq!(add(&db, &[cut], None, true), 2);
    assert!(stored(&db).is_empty());
}
