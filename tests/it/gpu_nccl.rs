//! `--backend nccl` end to end on the GPU stand-in (tests/it/common/standin.rs):
//! real mpirun, the real binaries, and in place of the CUDA driver and NCCL
//! the stand-in's libcuda.so.1 and libnccl.so.2, which compute every
//! collective on host memory standing in for device memory, across the
//! ranks' processes, and take the time a described machine's links would
//! (tests/machines/dgx1.json, dgx-h100.json). The stand-in's figures are
//! a model: these tests check that commbench reports the model's time and
//! nccl-tests' bandwidths of it, never that any GPU is fast.
//!
//! Two clocks, checked two ways. With `-z` a batched collective's times are
//! CUDA events, which the stand-in keeps on its event clock: device time,
//! which no host delay moves (a rank descheduled before a call, a machine
//! shared with other builds), so they must be the model's exactly, whatever
//! this machine's load. Every other time is the host's clock around the
//! calls and their completion, which load can only lengthen: it must never
//! be below the model (the stand-in cannot be faster than its
//! description), which is what a missing wait for completion, or a call
//! left out of the time, would break. No check here has an upper bound on
//! a host-timed figure, and none is tried again.
//!
//! This file takes about 60 s on an idle machine: every NCCL collective at
//! 1 to 4 ranks, in both layouts (48 launches of about a second), is what
//! the GPU issue asks for.

use crate::common;

use commbench::topo::describe::{self, GpuLinkKind, GpuModel};
use common::standin::{self, StandIn};
use common::*;
use std::path::Path;
use std::time::Duration;

/// The machine a description file names, as the stand-in models it.
struct Model {
    model: GpuModel,
}

impl Model {
    fn of(machine: &str) -> Model {
        let model = describe::load_gpu_model(&standin::description(machine)).expect("a GPU model");
        Model { model }
    }

    fn rates(&self) -> &describe::GpuRates {
        self.model.rates.as_ref().expect("gpu_rates")
    }

    /// Bytes per second between GPUs `a` and `b` as the description says:
    /// NVLinks times a link's rate, PCIe peer access, else staged through
    /// the host.
    fn pair_rate(&self, a: usize, b: usize) -> f64 {
        let r = self.rates();
        let link = self.model.links.iter().find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a));
        1e9 * match link.map(|l| l.kind) {
            Some(GpuLinkKind::NvLink(n)) => n as f64 * r.nvlink_gbs,
            Some(GpuLinkKind::Pcie) => r.pcie_peer_gbs,
            None => r.staged_peer_gbs,
        }
    }

    /// The slowest link of the ring of `gpus` in rank order.
    fn ring_rate(&self, gpus: &[usize]) -> f64 {
        (0..gpus.len()).map(|i| self.pair_rate(gpus[i], gpus[(i + 1) % gpus.len()])).fold(f64::INFINITY, f64::min)
    }

    /// Seconds of one operation moving `link_bytes` over each rank's ring
    /// link, NCCL's fixed cost included.
    fn op_seconds(&self, link_bytes: f64, ring: f64) -> f64 {
        self.rates().nccl_latency_us * 1e-6 + link_bytes / ring
    }
}

/// nccl-tests' bus-bandwidth factor of a collective on `n` ranks, which
/// is also the share of the table's size each rank puts on its ring link
/// in a ring algorithm (the whole size for broadcast and reduce).
fn factor(program: &str, n: usize) -> f64 {
    let n = n as f64;
    match program {
        "osu_allreduce" => 2.0 * (n - 1.0) / n,
        "osu_bcast" | "osu_reduce" => 1.0,
        _ => (n - 1.0) / n,
    }
}

/// The GPUs each job size runs on, chosen so that the rings differ: two
/// NVLinks, a ring with one CPU-crossing pair, a ring whose slowest pair
/// has one NVLink (DGX-1's cube mesh).
fn dgx1_gpus(np: usize) -> Vec<usize> {
    match np {
        1 => vec![2],
        2 => vec![0, 3],
        3 => vec![0, 4, 7],
        _ => vec![0, 3, 2, 1],
    }
}

fn list(gpus: &[usize]) -> String {
    gpus.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(",")
}

/// The stand-in's environment plus `extra`, for a launch.
fn env(gpu: &StandIn, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut e = gpu.env();
    e.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    e
}

/// A launch with the stand-in, results in `dir`.
fn nccl_run(gpu: &StandIn, np: usize, bench: &str, args: &[&str], extra: &[(&str, &str)], dir: &Path) -> Run {
    let mut all: Vec<&str> = args.to_vec();
    let rd = dir.join("res");
    let rd = rd.to_str().unwrap().to_string();
    all.extend(["--results-dir", &rd]);
    let o = Launch {
        cwd: Some(dir.to_path_buf()),
        env: env(gpu, extra),
        timeout: Some(Duration::from_secs(60)),
        ..Launch::default()
    };
    launch(Mpi::OpenMpi, np, bench, &all, &o)
}

/// A time CUDA events measured (the stand-in's event clock): the model's,
/// to the digits printed. A wrong traffic factor, byte count or iteration
/// count is off by far more.
fn is_the_model(got_us: f64, want_us: f64) -> bool {
    close_printed(got_us, want_us, 1e-4)
}

/// A time the host's clock measured: never below the model (to the digits
/// printed), however much more the host's own delays add.
fn not_below_the_model(got_us: f64, want_us: f64) -> bool {
    got_us >= want_us * (1.0 - 1e-4) - 0.006
}

/// A bandwidth from the host's clock: never above the model's (the
/// mirror of [`not_below_the_model`]).
fn not_above_the_model(got: f64, want: f64) -> bool {
    got <= want * (1.0 + 1e-4) + 0.006
}

/// One cell of nccl-tests' table: time us, algbw, busbw, #wrong as printed.
type Cell = (f64, f64, f64, String);

/// One data row of nccl-tests' table: size, count, then the out-of-place
/// and in-place cells (time us, algbw, busbw, #wrong as printed).
#[derive(Debug)]
struct TableRow {
    size: usize,
    count: usize,
    cells: [Cell; 2],
}

fn table_rows(stdout: &str) -> Vec<TableRow> {
    nccl_tests_rows(stdout)
        .into_iter()
        .map(|t| {
            let num = |i: usize| t[i].parse::<f64>().unwrap_or_else(|_| panic!("{t:?}: column {i}"));
            let cell = |at: usize| (num(at), num(at + 1), num(at + 2), t[at + 3].clone());
            TableRow { size: t[0].parse().unwrap(), count: t[1].parse().unwrap(), cells: [cell(5), cell(9)] }
        })
        .collect()
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

/// `close` for a figure printed with two decimals (nccl-tests' columns):
/// within `rel`, or within the rounding of the last digit.
fn close_printed(got: f64, want: f64, rel: f64) -> bool {
    close(got, want, rel) || (got - want).abs() <= 0.006
}

/// Every collective NCCL takes, at 1 to 4 ranks, in nccl-tests' table
/// (which checks the data of every cell) with `-z`: every cell right, the
/// count column one rank's share where nccl-tests says so, and time, algbw
/// and busbw those of the described ring (its slowest link) with
/// nccl-tests' factors, or with one rank a copy within the GPU (none in
/// place); then in OSU's layout with `-c`, every size passing. The batched
/// collectives' times are CUDA events, so they are the model's exactly;
/// osu_reduce keeps OSU's barrier before every call and is timed call by
/// call on the host's clock (bench/collective: not batchable), so its time
/// is never below the model. Alltoall runs on the NVSwitch box, whose links
/// are all alike (the stand-in times a rank's grouped sends over each
/// peer's own link).
#[test]
fn every_collective_at_np_1_to_4_is_right_and_takes_the_described_time() {
    let _g = mpi_lock();
    let collectives =
        ["osu_allreduce", "osu_allgather", "osu_reduce_scatter", "osu_bcast", "osu_reduce", "osu_alltoall"];
    for bench in collectives {
        let machine = if bench == "osu_alltoall" { "dgx-h100" } else { "dgx1" };
        let (gpu, model) = (standin::stand_in(machine), Model::of(machine));
        let host_timed = bench == "osu_reduce";
        for np in 1..=4 {
            let gpus = if machine == "dgx1" { dgx1_gpus(np) } else { (0..np).collect() };
            let g = list(&gpus);
            // Sizes every np from 1 to 4 divides (1.5 and 3 MiB): an uneven
            // reduce-scatter is one reduce per block, timed as such.
            let sizes = "1572864:3145728";
            let args = ["--backend", "nccl", "--format", "nccl-tests", "-m", sizes, "-i", "10", "-x", "1", "-z"];
            let what = format!("{bench} at np {np} on {machine} GPUs {g}");
            let ring = model.ring_rate(&gpus);
            // The model's time of one call (microseconds): on one rank a
            // copy within the GPU, or nothing to do in place.
            let want_us = |size: usize, in_place: bool| {
                let s = match (np, in_place) {
                    // (a broadcast out of place copies the root's input
                    // within the GPU, as nccl-tests' does; an all-to-all's
                    // sends to itself cost nothing)
                    (1, true) => model.rates().nccl_latency_us * 1e-6,
                    (1, false) if bench == "osu_alltoall" => model.rates().nccl_latency_us * 1e-6,
                    (1, false) => model.rates().nccl_latency_us * 1e-6 + size as f64 / (model.rates().d2d_gbs * 1e9),
                    _ => model.op_seconds(factor(bench, np) * size as f64, ring),
                };
                s * 1e6
            };
            let dir = tempfile::tempdir().unwrap();
            let run = nccl_run(&gpu, np, bench, &[&args[..], &["--gpu", &g]].concat(), &[], dir.path());
            assert_eq!(run.code, Some(0), "{what}: {}\n{}", run.stdout, run.stderr);
            run.assert_no_panic();
            assert!(run.stdout.contains("# Out of bounds values : 0 OK\n"), "{what}: {}", run.stdout);
            let rows = table_rows(&run.stdout);
            assert_eq!(rows.len(), 2, "{what}: {}", run.stdout);
            for row in &rows {
                let share = matches!(bench, "osu_allgather" | "osu_reduce_scatter" | "osu_alltoall");
                assert_eq!(row.count, row.size / 4 / if share { np } else { 1 }, "{what}: {row:?}");
                for (i, (time_us, algbw, busbw, wrong)) in row.cells.iter().enumerate() {
                    let unchecked = bench == "osu_alltoall" && i == 1;
                    assert_eq!(wrong, if unchecked { "N/A" } else { "0" }, "{what}: {row:?}");
                    assert!(close_printed(*algbw, row.size as f64 / 1e3 / time_us, 0.01), "{what}: {row:?}");
                    let f = factor(bench, np);
                    assert!(close_printed(*busbw, algbw * f, 0.01), "{what}: {row:?}");
                    let want_us = want_us(row.size, i == 1);
                    let fits = if host_timed { not_below_the_model } else { is_the_model };
                    assert!(fits(*time_us, want_us), "{what}: {time_us} us, the model says {want_us}: {row:?}");
                }
            }
            let (record, csv) = run_results(dir.path());
            assert_eq!(record["status"], "complete", "{what}");
            assert_eq!(record["options"]["backend"], "nccl", "{what}");
            assert_eq!(csv.len(), 4, "{what}: both cells of every size");

            // OSU's own layout at the same job size, every size checked.
            let dir = tempfile::tempdir().unwrap();
            let args = ["--backend", "nccl", "-m", "4:4096", "-i", "3", "-x", "1", "-c", "--gpu", &g];
            let run = nccl_run(&gpu, np, bench, &args, &[], dir.path());
            assert_eq!(run.code, Some(0), "{what}, OSU's layout: {}\n{}", run.stdout, run.stderr);
            assert_eq!(run.stdout.lines().filter(|l| *l == "#Using NCCL").count(), np, "{what}: {}", run.stdout);
            let rows = osu_rows(&run.stdout);
            assert_eq!(rows.len(), 11, "{what}: {}", run.stdout);
            assert!(rows.iter().all(|r| r.last().map(String::as_str) == Some("Pass")), "{what}: {}", run.stdout);
        }
    }
}

/// OSU's own layout under NCCL: `#Using NCCL` from every rank, the NCCL
/// title, a Validation column that passes; the CSV's bandwidths are the
/// model's (CUDA events, exactly); the run record names the library that
/// ran, its version, and each rank's GPU as the stand-in describes it.
#[test]
fn osu_format_validates_and_records_the_gpus_and_the_library() {
    let _g = mpi_lock();
    let (gpu, model) = (standin::stand_in("dgx1"), Model::of("dgx1"));
    let gpus = dgx1_gpus(4);
    let args = ["--backend", "nccl", "-m", "4:4194304", "-i", "10", "-x", "1", "-c", "-z", "--gpu", "0,3,2,1"];
    let dir = tempfile::tempdir().unwrap();
    let run = nccl_run(&gpu, 4, "osu_allreduce", &args, &[], dir.path());
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let (record, csv) = run_results(dir.path());
    let last = csv.iter().find(|r| r["size_bytes"] == "4194304").expect("the 4 MiB row");
    let busbw: f64 = last["busbw_GBps"].parse().unwrap();
    let seconds = model.op_seconds(1.5 * 4194304.0, model.ring_rate(&gpus));
    let want = factor("osu_allreduce", 4) * 4194304.0 / seconds / 1e9;
    assert!(close(busbw, want, 1e-4), "busbw {busbw}, the model says {want}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.iter().filter(|l| **l == "#Using NCCL").count(), 4, "{}", run.stdout);
    assert!(lines.contains(&"# OSU NCCL-CUDA Allreduce Latency Test v7.4"), "{}", run.stdout);
    let rows = osu_rows(&run.stdout);
    assert_eq!(rows.len(), 21, "{}", run.stdout);
    assert!(rows.iter().all(|r| r[2] == "Pass"), "{}", run.stdout);
    let nccl = &record["backend_details"]["nccl"];
    assert_eq!(nccl["library"], standin::libraries().libnccl.display().to_string(), "{nccl}");
    assert!(nccl["version"].as_str().is_some_and(|v| v.starts_with("2.")), "{nccl}");
    let ranks = record["backend_details"]["ranks"].as_array().expect("ranks").clone();
    assert_eq!(ranks.len(), 4);
    for (r, g) in ranks.iter().zip(&gpus) {
        let info = &r["gpu"];
        assert_eq!(info["index"], *g, "{r}");
        assert_eq!(info["name"], "Tesla V100-SXM2-16GB", "{r}");
        assert_eq!(info["pci_bus_id"], format!("0000:{:02x}:00.0", g + 1), "{r}");
        assert_eq!(info["compute_capability"], "7.0", "{r}");
        assert_eq!(info["memory_bytes"], 16u64 << 30, "{r}");
        assert_eq!(r["buffers"], "device", "{r}");
        // From the driver (no sysfs knows the stand-in's bus ids).
        assert_eq!(info["numa_node"], if *g < 4 { 0 } else { 1 }, "{r}");
    }
}

/// Without `-z` the time is the host's clock around a batch and one
/// completion, as nccl-tests takes it: never below the model, whose calls
/// the stand-in completes no sooner than their modelled end (slowed fifty
/// times here, so that a clock stopped before the calls completed would
/// show far below it). On an idle machine it is the model's to within a
/// few percent; load only adds to it.
#[test]
fn host_clock_times_are_never_below_the_model() {
    let _g = mpi_lock();
    let (gpu, model) = (standin::stand_in("dgx1"), Model::of("dgx1"));
    // 4 MiB over two NVLinks: about 100 us at scale 1, 5 ms at 50.
    let args = ["--backend", "nccl", "--format", "nccl-tests", "-m", "4M:4M", "-i", "10", "-x", "1", "--gpu", "0,3"];
    let want_us = 50.0 * model.op_seconds(4194304.0, model.ring_rate(&[0, 3])) * 1e6;
    let dir = tempfile::tempdir().unwrap();
    let scale = [("COMMBENCH_STANDIN_TIME_SCALE", "50")];
    let run = nccl_run(&gpu, 2, "osu_allreduce", &args, &scale, dir.path());
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let rows = table_rows(&run.stdout);
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    for (time_us, ..) in &rows[0].cells {
        assert!(not_below_the_model(*time_us, want_us), "{time_us} us, the model says {want_us}: {}", run.stdout);
    }
}

/// Corrupted results (one element of every output on rank 1) are counted
/// in `#wrong`, the footer fails, every rank exits 1 and the record says
/// validation_failed; OSU's layout says Fail.
#[test]
fn a_corrupted_result_is_counted_and_fails_the_run() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let corrupt = [("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1")];
    let dir = tempfile::tempdir().unwrap();
    let args = ["--backend", "nccl", "--format", "nccl-tests", "-m", "1K:4K", "-i", "5", "-x", "1"];
    let run = nccl_run(&gpu, 2, "osu_allreduce", &args, &corrupt, dir.path());
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    run.assert_no_panic();
    let rows = table_rows(&run.stdout);
    assert_eq!(rows.len(), 3);
    for row in &rows {
        for cell in &row.cells {
            assert!(cell.3.parse::<u64>().unwrap() > 0, "{row:?}");
        }
    }
    assert!(run.stdout.contains("# Out of bounds values : 6 FAILED\n"), "{}", run.stdout);
    let (record, _) = run_results(dir.path());
    assert_eq!(record["status"], "validation_failed");
    // The sweep goes on through wrong data: a line per failing check, each
    // from rank 1, naming the size and the first wrong element.
    let lines = run.our_stderr_lines();
    assert!(!lines.is_empty(), "{}", run.stderr);
    for l in &lines {
        assert!(l.starts_with("osu_allreduce: validation failed on rank 1: size "), "{l}");
        assert!(l.contains("element 0 expected "), "{l}");
    }
    assert!(run.stdout.contains("DATA VALIDATION ERROR: "), "{}", run.stdout);

    let dir = tempfile::tempdir().unwrap();
    let args = ["--backend", "nccl", "-m", "4:64", "-i", "5", "-x", "1", "-c"];
    let run = nccl_run(&gpu, 2, "osu_allgather", &args, &corrupt, dir.path());
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(osu_rows(&run.stdout).iter().any(|r| r.last().map(String::as_str) == Some("Fail")), "{}", run.stdout);
}

/// `--min-busbw` both ways (the footer's verdict, the exit status, the
/// line and the record), and refused on one rank where busbw is 0.
#[test]
fn min_busbw_passes_above_and_fails_below() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let base =
        ["--backend", "nccl", "--format", "nccl-tests", "-m", "1M:1M", "-i", "5", "-x", "1", "-z", "--gpu", "0,3"];
    let dir = tempfile::tempdir().unwrap();
    let run = nccl_run(&gpu, 2, "osu_allgather", &[&base[..], &["--min-busbw", "1"]].concat(), &[], dir.path());
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("# Avg bus bandwidth    : ") && l.ends_with(" OK")),
        "{}",
        run.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let run = nccl_run(&gpu, 2, "osu_allgather", &[&base[..], &["--min-busbw", "1000"]].concat(), &[], dir.path());
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.lines().any(|l| l.starts_with("# Avg bus bandwidth    : ") && l.ends_with(" FAILED")));
    let lines = run.our_stderr_lines();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].starts_with("osu_allgather: average bus bandwidth ")
            && lines[0].ends_with(" is below --min-busbw 1000 GB/s")
    );
    let (record, _) = run_results(dir.path());
    assert_eq!(record["status"], "failed");

    let mut cmd = std::process::Command::new(bin(Mpi::OpenMpi, "osu_allreduce"));
    cmd.args(["--backend", "nccl", "--min-busbw", "5", "--no-results"]);
    gpu.apply(&mut cmd);
    let r = run_cmd(cmd, Duration::from_secs(20));
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr.starts_with("Invalid option [--min-busbw] (osu_allreduce on one rank moves nothing"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// A rank whose NCCL operation fails (the stand-in reports an
/// asynchronous error on rank 1 and never completes the operation, as a
/// real failed peer leaves it) ends the whole job: one line from that
/// rank naming itself, the call and NCCL's words, a non-zero exit, and the
/// record ended `error` by rank 1, within seconds.
#[test]
fn a_failed_nccl_rank_ends_the_job_in_one_line_with_the_record_ended() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let args = ["--backend", "nccl", "--format", "nccl-tests", "-m", "4K:64K", "-i", "5", "-x", "1"];
    let fail = [("COMMBENCH_STANDIN_NCCL_FAIL", "rank=1,op=9")];
    let run = nccl_run(&gpu, 2, "osu_allreduce", &args, &fail, dir.path());
    assert!(matches!(run.code, Some(c) if c != 0), "{run:?}");
    assert!(run.elapsed < under_load(Duration::from_secs(10)), "took {:?}", run.elapsed);
    run.assert_no_panic();
    let ours: Vec<&str> = run.our_stderr_lines().into_iter().filter(|l| l.starts_with("osu_allreduce:")).collect();
    assert_eq!(ours.len(), 1, "{}", run.stderr);
    // Seen by polling the communicator's error, or by the next call, which
    // NCCL fails once the communicator has one.
    assert!(ours[0].starts_with("osu_allreduce: NCCL failed on rank 1 (last call ncclAllReduce): "), "{}", ours[0]);
    assert!(ours[0].contains(" failed with NCCL error 2: "), "{}", ours[0]);
    assert!(ours[0].contains("injected failure"), "NCCL's last error is in the line: {}", ours[0]);
    let (record, _) = run_results(dir.path());
    assert_eq!(record["status"], "error");
    assert_eq!(record["status_detail"], ours[0]);
    assert_eq!(record["ended_by_rank"], 1);
}

/// A sticky CUDA error on one rank (every call fails from then on, as after
/// a GPU fault) ends the job in one line naming CUDA's words, not as an
/// internal error of commbench, with the record ended.
#[test]
fn a_sticky_cuda_error_on_one_rank_ends_the_job_in_one_line() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("rank1-fails.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\n[ \"$OMPI_COMM_WORLD_RANK\" = 1 ] && export COMMBENCH_STANDIN_CUDA_FAIL=after=40\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let rd = dir.path().join("res");
    let args =
        ["--backend", "nccl", "-m", "4K:64K", "-i", "20", "-x", "1", "-c", "--results-dir", rd.to_str().unwrap()];
    let o = Launch {
        cwd: Some(dir.path().to_path_buf()),
        env: gpu.env().into_iter().collect(),
        wrapper: Some(wrapper),
        timeout: Some(Duration::from_secs(60)),
        ..Launch::default()
    };
    let run = launch(Mpi::OpenMpi, 2, "osu_allreduce", &args, &o);
    assert!(matches!(run.code, Some(c) if c != 0), "{run:?}");
    assert!(run.elapsed < under_load(Duration::from_secs(10)), "took {:?}", run.elapsed);
    run.assert_no_panic();
    let ours: Vec<&str> = run.our_stderr_lines().into_iter().filter(|l| l.starts_with("osu_allreduce:")).collect();
    assert_eq!(ours.len(), 1, "{}", run.stderr);
    assert!(ours[0].contains("CUDA failed on "), "{}", ours[0]);
    assert!(ours[0].contains("CUDA_ERROR_LAUNCH_FAILED"), "{}", ours[0]);
    assert!(!ours[0].contains("internal error"), "{}", ours[0]);
    let (record, _) = run_results(dir.path());
    assert_eq!(record["status"], "error");
    assert_eq!(record["status_detail"], ours[0]);
}

/// Fills go through a staging copy that returns before the data lands
/// (pageable memory); NCCL's non-blocking stream does not wait for it.
/// With slow modelled copies the old code validated stale buffers and
/// failed; every row must pass.
#[test]
fn fills_have_landed_before_nccl_reads_them() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let scale = [("COMMBENCH_STANDIN_TIME_SCALE", "1000")];
    for bench in ["osu_allreduce", "osu_bcast"] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--backend", "nccl", "-m", "4:1024", "-i", "2", "-x", "0", "-c", "-u", "0"];
        let run = nccl_run(&gpu, 2, bench, &args, &scale, dir.path());
        assert_eq!(run.code, Some(0), "{bench}: {}\n{}", run.stdout, run.stderr);
        let rows = osu_rows(&run.stdout);
        assert_eq!(rows.len(), 9, "{}", run.stdout);
        assert!(rows.iter().all(|r| r.last().map(String::as_str) == Some("Pass")), "{bench}: {}", run.stdout);
    }
}

/// A fill or check stages only the bytes its message size uses, not the
/// whole buffer (sized for the largest message): a sweep to 1 GiB on a GPU
/// once staged 1 GiB each way for every check of every size, minutes of
/// copies. osu_reduce, batched like every NCCL collective, checks one more
/// call after the timed ones; the stand-in's trace lists every copy with
/// its bytes.
#[test]
fn fills_and_checks_stage_only_the_size_s_bytes() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let args = ["--backend", "nccl", "-m", "8:1048576", "-i", "3", "-x", "1", "-c"];
    // The trace in a file: whole lines, where two ranks' stderr forwarded
    // by the launcher can be cut and interleaved (seen on a loaded machine).
    let trace = dir.path().join("trace");
    let env = [("COMMBENCH_STANDIN_TRACE", trace.to_str().unwrap())];
    let run = nccl_run(&gpu, 2, "osu_reduce", &args, &env, dir.path());
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(osu_rows(&run.stdout).len(), 18, "{}", run.stdout);
    let traced = std::fs::read_to_string(&trace).unwrap();
    let copies: Vec<usize> = traced
        .lines()
        .filter(|l| l.contains(": trace: ") && l.contains(" copy "))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let at = t.iter().position(|w| *w == "copy").unwrap();
            t[at + 1].parse().unwrap()
        })
        .collect();
    let of = |bytes: usize| copies.iter().filter(|&&b| b == bytes).count();
    // Per rank: the first fills (three buffers there and back), then at
    // the largest size the checked call's two fills there and back and
    // its check (every rank reads; the root judges). Staging whole
    // buffers made 732 when each of four iterations was checked.
    assert!(of(1048576) <= 2 * (3 * 2 + 5), "{} copies of the whole buffer: {copies:?}", of(1048576));
    assert!(of(8) >= 2 * 4, "the 8-byte size's fills are 8 bytes: {copies:?}");
    assert!(copies.iter().all(|&b| b <= 1048576), "{copies:?}");
}

/// `-u N` queues N untimed steps before each timed one where every call
/// is checked (osu_latency's ping-pong: a send and a receive per rank);
/// on a stream they must be done before the clock starts, so that the
/// time does not grow with N. The stand-in's trace says when each NCCL
/// call was queued and when it was done, on one clock for every process:
/// each timed step is queued only once the three untimed ones before it
/// are done (with the clock started while they were still queued, it
/// would follow them at once, long before: each message takes 6 ms here).
/// An order of events, so no load can fail it; the time itself is never
/// below the model's one message.
#[test]
fn untimed_validation_calls_stay_out_of_the_time() {
    let _g = mpi_lock();
    let (gpu, model) = (standin::stand_in("dgx1"), Model::of("dgx1"));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let env = [("COMMBENCH_STANDIN_TIME_SCALE", "500"), ("COMMBENCH_STANDIN_TRACE", trace.to_str().unwrap())];
    let args = ["--backend", "nccl", "-m", "4:4", "-i", "3", "-x", "0", "-c", "-u", "3"];
    let run = nccl_run(&gpu, 2, "osu_latency", &args, &env, dir.path());
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let time: f64 = osu_rows(&run.stdout)[0][1].parse().unwrap();
    let want_us = 500.0 * model.op_seconds(4.0, model.pair_rate(0, 1)) * 1e6;
    assert!(not_below_the_model(time, want_us), "{time} us, the model says {want_us}: {}", run.stdout);
    // Each rank's NCCL calls in stream order: (queued, done), in ms.
    let mut calls: std::collections::BTreeMap<String, Vec<(f64, f64)>> = Default::default();
    let traced = std::fs::read_to_string(&trace).unwrap();
    for l in traced.lines().filter(|l| l.contains(": trace: ") && l.contains(" custom ")) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let at = |key: &str| -> f64 {
            let i = w.iter().position(|x| *x == key).unwrap_or_else(|| panic!("no {key} in {l}"));
            w[i + 1].parse().unwrap_or_else(|_| panic!("{key} in {l}"))
        };
        calls.entry(at("pid").to_string()).or_default().push((at("queued"), at("done")));
    }
    assert_eq!(calls.len(), 2, "{traced}");
    for (pid, c) in &calls {
        // Three iterations of three untimed steps and the timed one, each
        // step a send and a receive.
        assert_eq!(c.len(), 24, "rank pid {pid}: {c:?}");
        for k in 0..3 {
            let (untimed, timed) = (c[8 * k + 5], c[8 * k + 6]);
            assert!(
                timed.0 >= untimed.1,
                "rank pid {pid}, iteration {k}: timed call queued before -u's were done: {c:?}"
            );
        }
    }
}

/// NCCL's point-to-point benchmarks between two GPUs with two NVLinks:
/// osu_bw's window is one group of sends, so its rate is at most the
/// link's; the latency is at least half a round trip of two modelled
/// messages; osu_bibw (OSU's osu_xccl_bibw) moves a window each way in one
/// group, at most twice osu_bw's rate. Host-clock times (these benchmarks
/// are timed call by call), so never faster than the model; on an idle
/// machine they are the model's to within a few percent.
#[test]
fn point_to_point_over_nccl_takes_the_link_s_time() {
    let _g = mpi_lock();
    let (gpu, model) = (standin::stand_in("dgx1"), Model::of("dgx1"));
    // Slow enough that a clock stopped before the messages landed would
    // show far faster than the model.
    let scale = [("COMMBENCH_STANDIN_TIME_SCALE", "200")];
    let link = model.pair_rate(0, 3);
    let window = 64.0 * 1048576.0;
    // One benchmark's single row: (stdout, value), checked by `fits`
    // against `want`.
    let measure = |bench: &str, iterations: &str, want: f64, fits: fn(f64, f64) -> bool| {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--backend", "nccl", "-m", "1M:1M", "-i", iterations, "-x", "1", "--gpu", "0,3"];
        let run = nccl_run(&gpu, 2, bench, &args, &scale, dir.path());
        assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
        assert_eq!(osu_rows(&run.stdout).len(), 1, "{}", run.stdout);
        let got: f64 = osu_rows(&run.stdout)[0][1].parse().unwrap();
        assert!(fits(got, want), "{bench}: {got}, the model says {want}: {}", run.stdout);
        run.stdout
    };
    let bw_want = window / (200.0 * model.op_seconds(window, link)) / 1e6;
    let bw_stdout = measure("osu_bw", "3", bw_want, not_above_the_model);
    measure("osu_latency", "5", 200.0 * model.op_seconds(1048576.0, link) * 1e6, not_below_the_model);
    // osu_bibw: both windows in one group, each way on its own direction
    // of the link at once: twice osu_bw's bytes in osu_bw's time.
    let bibw = measure("osu_bibw", "3", 2.0 * bw_want, not_above_the_model);
    // osu_bw's layout over NCCL: its preamble and header lines, one row
    let comments = |out: &str| out.lines().filter(|l| l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(comments(&bibw), comments(&bw_stdout), "{bibw}");
}

/// What `--backend nccl` takes follows from what the NCCL transport
/// implements (its Collectives and one-way point-to-point), not from a
/// list: so osu_gather and osu_scatter (grouped sends and receives) and
/// osu_mbw_mr and osu_multi_lat (one window, or one message, each way in
/// turn) run over it too. Each runs here on the stand-in with `-c`, in OSU's
/// layout and, for the rooted two, in nccl-tests' table (whose cells check
/// the data); osu_bibw's two windows go in one group (two groups in turn
/// on one stream would wait on each other, and the stand-in would hang).
/// About 7 s: seven short launches.
#[test]
fn what_the_nccl_transport_implements_is_what_it_runs() {
    let _g = mpi_lock();
    let gpu = standin::stand_in("dgx1");
    let dir = tempfile::tempdir().unwrap();
    let quick = ["--backend", "nccl", "-m", "1:4096", "-i", "5", "-x", "1"];
    for (bench, np, extra) in [
        ("osu_gather", 3, &["-c"][..]),
        ("osu_scatter", 3, &["-c"][..]),
        ("osu_mbw_mr", 4, &[][..]),
        ("osu_multi_lat", 4, &[][..]),
        ("osu_bibw", 2, &["-c"][..]),
    ] {
        let args = [&quick[..], extra].concat();
        let run = nccl_run(&gpu, np, bench, &args, &[], dir.path());
        assert_eq!(run.code, Some(0), "{bench}\n{}\n{}", run.stdout, run.stderr);
        let rows = osu_rows(&run.stdout);
        assert_eq!(rows.len(), 13, "{bench}: {}", run.stdout);
        if !extra.is_empty() {
            assert!(rows.iter().all(|r| r.last().map(String::as_str) == Some("Pass")), "{bench}: {}", run.stdout);
        }
        let _ = std::fs::remove_dir_all(dir.path().join("res"));
    }
    for bench in ["osu_gather", "osu_scatter"] {
        let args = [&quick[..], &["--format", "nccl-tests"]].concat();
        let run = nccl_run(&gpu, 2, bench, &args, &[], dir.path());
        assert_eq!(run.code, Some(0), "{bench}\n{}\n{}", run.stdout, run.stderr);
        let rows = table_rows(&run.stdout);
        assert!(!rows.is_empty(), "{bench}: {}", run.stdout);
        assert!(rows.iter().all(|r| r.cells.iter().all(|c| c.3 == "0")), "{bench}: {}", run.stdout);
        let _ = std::fs::remove_dir_all(dir.path().join("res"));
    }
}

/// GPU buffers' paths, read as on a real node (crate::peak::gpu): each
/// rank's GPU's PCIe link from sysfs (a fixture tree of gen3 x16 links,
/// 15.75 GB/s), its NVLinks from NVML (the stand-in answers from the
/// DGX-1's description). osu_bw from GPU 0 to GPU 3 is bound by their two
/// NVLinks 2.0 (50 GB/s), from GPU 0 to GPU 5 (no NVLink) by PCIe; a
/// collective by the GPU with the fewest NVLinks to the job's other GPUs.
/// Every row's efficiency is its bandwidth over that peak, which the
/// model's rate gives too; `--min-efficiency` names the GPU path.
#[test]
fn gpu_paths_take_their_peaks_from_nvml_and_sysfs() {
    let _g = mpi_lock();
    let (gpu, model) = (standin::stand_in("dgx1"), Model::of("dgx1"));
    let sys = standin::sysfs_fixture("dgx1", "8.0 GT/s PCIe", "16");
    let sys = sys.path().to_str().unwrap().to_string();
    let pcie = 8.0 * 16.0 * 128.0 / 130.0 / 8.0 * 1e3;
    // Each window of 64 x 256 KiB slowed so that this machine keeps up
    // (0.07 s over the NVLinks, 0.2 s staged through the host).
    let window = 64.0 * 262144.0;
    for (gpus, a, b, peak, class, scale) in
        [("0,3", 0, 3, 50_000.0, "NVLink x2 50.00 GB/s", 200.0), ("0,5", 0, 5, pcie, "PCIe 15.75 GB/s", 50.0)]
    {
        let scale_text = scale.to_string();
        let extra = [("COMMBENCH_STANDIN_TIME_SCALE", scale_text.as_str()), ("COMMBENCH_SYSFS_ROOT", sys.as_str())];
        let args = [
            "--backend",
            "nccl",
            "-m",
            "256K:256K",
            "-i",
            "3",
            "-x",
            "1",
            "--gpu",
            gpus,
            "--min-efficiency",
            "50",
            "--verbose",
        ];
        // The share is host-timed: never above the model's (load only
        // lowers it), so --min-efficiency 50 fails either way (the model's,
        // slowed as it is, is far below).
        let want = 100.0 * window / (scale * model.op_seconds(window, model.pair_rate(a, b))) / 1e6 / peak;
        let dir = tempfile::tempdir().unwrap();
        let run = nccl_run(&gpu, 2, "osu_bw", &args, &extra, dir.path());
        let (_, csv) = run_results(dir.path());
        let eff: f64 = csv[0]["efficiency_pct"].parse().unwrap();
        assert!(not_above_the_model(eff, want), "{gpus}: {eff}% of the path, the model says {want}%");
        assert_eq!(run.code, Some(1), "{gpus}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(osu_rows(&run.stdout).len(), 1, "the table is whole: {}", run.stdout);
        let (record, csv) = run_results(dir.path());
        let host = record["ranks"][0]["host"].as_str().unwrap().to_string();
        let label = format!("GPU {a} (0000:0{}:00.0) -> GPU {b} (0000:0{}:00.0) on {host}", a + 1, b + 1);
        let path = &record["paths"]["run"];
        assert_eq!((path["label"].as_str(), path["class"].as_str()), (Some(label.as_str()), Some("gpu")), "{path}");
        assert!((path["peak_mbps"].as_f64().unwrap() - peak).abs() < 1.0, "{path}");
        assert_eq!(path["rate_text"], class, "{path}");
        let sources: Vec<&str> = path["sources"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        if b == 3 {
            assert_eq!(sources, ["GPU 0 (0000:01:00.0): NVML: 2 active NVLinks to GPU 3, version 2.0"]);
        } else {
            assert_eq!(sources.len(), 2, "{sources:?}");
            assert!(sources[0].contains(&format!("{sys}/bus/pci/devices/0000:01:00.0/current_link_")), "{sources:?}");
        }
        // What each rank read of its GPU.
        let end = &record["ranks"][0]["path_end"]["gpu"];
        assert_eq!((end["index"].as_u64(), end["buffers"].as_str()), (Some(0), Some("device")), "{end}");
        assert!((end["pcie"]["mbps"].as_f64().unwrap() - pcie).abs() < 1.0, "{end}");
        assert_eq!(end["nvlinks"].as_array().unwrap().len(), 6, "GPU 0 has six links up: {end}");
        // The row's share is its bandwidth over the peak, as the model's.
        let row = &csv[0];
        let (mbs, eff): (f64, f64) = (row["bw_MBps"].parse().unwrap(), row["efficiency_pct"].parse().unwrap());
        assert_eq!(row["path"], label);
        assert!((eff - 100.0 * mbs / peak).abs() < 1e-6 * eff, "{row:?}");
        // One line names the path; --verbose says the peak after the table.
        let lines = run.our_stderr_lines();
        let verdict: Vec<&&str> = lines.iter().filter(|l| l.contains("--min-efficiency")).collect();
        assert_eq!(verdict.len(), 1, "{lines:?}");
        assert!(verdict[0].starts_with(&format!("osu_bw: below --min-efficiency 50%: {label}: ")), "{lines:?}");
        assert!(verdict[0].contains(&format!("of {class} (")), "{lines:?}");
        assert_eq!(record["status"], "failed");
        let verbose = format!("osu_bw: path {label}: peak {class} = {peak:.0} MB/s (");
        assert!(lines.iter().any(|l| l.starts_with(&verbose)), "{verbose}\n{lines:?}");
    }

    // Collectives: GPUs 0,3,2,1 each have four or five NVLinks to the
    // others (GPU 0 four: two to 3, one each to 2 and 1); GPUs 0,4,7 leave
    // GPU 0 and GPU 7 two each.
    for (gpus, np, links) in [("0,3,2,1", 4, 4.0), ("0,4,7", 3, 2.0)] {
        let dir = tempfile::tempdir().unwrap();
        let args = ["--backend", "nccl", "-m", "1M:1M", "-i", "3", "-x", "1", "--gpu", gpus];
        let scale = [("COMMBENCH_STANDIN_TIME_SCALE", "20"), ("COMMBENCH_SYSFS_ROOT", sys.as_str())];
        let run = nccl_run(&gpu, np, "osu_allreduce", &args, &scale, dir.path());
        assert_eq!(run.code, Some(0), "{gpus}: {}\n{}", run.stdout, run.stderr);
        let (record, csv) = run_results(dir.path());
        let host = record["ranks"][0]["host"].as_str().unwrap().to_string();
        let path = &record["paths"]["run"];
        assert_eq!(path["label"], format!("GPU 0 (0000:01:00.0) on {host}"), "{path}");
        assert_eq!(path["peak_mbps"].as_f64(), Some(links * 25_000.0), "{path}");
        assert_eq!(path["rate_text"], format!("NVLink x{links} {:.2} GB/s", links * 25.0), "{path}");
        let row = &csv[0];
        let (busbw, eff): (f64, f64) = (row["busbw_GBps"].parse().unwrap(), row["efficiency_pct"].parse().unwrap());
        assert!((eff - 100.0 * busbw * 1e3 / (links * 25_000.0)).abs() < 1e-6 * eff, "{row:?}");
    }
}
