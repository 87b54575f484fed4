//! scripts/gpu-check.sh, the prepared device check, run here on the GPU
//! stand-in (tests/it/common/standin.rs) as on a one-GPU machine with a MPI
//! that is not CUDA-aware (the GPU machine the project is lent): what
//! cannot run there is SKIPPED with its reason, what can run passes, and
//! the exit status is 1 only when something that could run broke. Its
//! side-by-side tables (scripts/gpu-side-by-side.py) are checked against
//! outputs in the reference tools' own formats.
//!
//! The three script runs take about 30 s together: each is the whole check
//! (eight launches) on sizes cut down to 64 KiB, or 12 s of it.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// gpu-check.sh on stand-in GPU 0 of the NVSwitch box, with `extra` in its
/// environment and its output folder `out`.
fn gpu_check(out: &Path, extra: &[(&str, &str)]) -> Run {
    let gpu = common::standin::stand_in("dgx-h100");
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/gpu-check.sh"));
    gpu.apply(&mut cmd);
    let bins = bin(Mpi::OpenMpi, "osu_latency");
    cmd.env("COMMBENCH_BIN", bins.parent().unwrap())
        .env("CUDA_VISIBLE_DEVICES", "0")
        .env("OUT", out)
        .env("GPU_CHECK_MAX_BYTES", "65536")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // nvbandwidth's kernel cases compile with the real NVRTC.
        .env("COMMBENCH_NVRTC", crate::kernels::libnvrtc());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    run_cmd(cmd, Duration::from_secs(300))
}

/// The summary's verdict for the step whose name starts with `name`.
fn verdict<'a>(stdout: &'a str, name: &str) -> &'a str {
    let summary = stdout.split("=== summary").nth(1).unwrap_or_else(|| panic!("no summary:\n{stdout}"));
    let line = summary
        .lines()
        .find(|l| l.len() > 9 && l[9..].starts_with(name))
        .unwrap_or_else(|| panic!("no step {name} in the summary:\n{summary}"));
    line.split_whitespace().next().unwrap()
}

#[test]
fn on_one_gpu_what_cannot_run_is_skipped_and_the_rest_passes() {
    let _g = mpi_lock();
    let out = tempfile::tempdir().unwrap();
    let run = gpu_check(out.path(), &[]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let s = &run.stdout;
    assert_eq!(verdict(s, "build the reference tools"), "SKIPPED");
    assert_eq!(verdict(s, "gpu-bw h2d,d2h,d2d"), "PASSED");
    assert_eq!(verdict(s, "p2pBandwidthLatencyTest"), "SKIPPED");
    assert_eq!(verdict(s, "commbench's nvbandwidth -b 1 -t 0 1 2 3 16 17 18 32 34"), "PASSED", "{s}");
    for mem in ["pinned", "pageable"] {
        assert_eq!(verdict(s, &format!("commbench's bandwidthTest --memory={mem} --csv")), "PASSED", "{s}");
    }
    for c in ["allreduce", "allgather", "reduce_scatter", "alltoall", "bcast", "reduce"] {
        assert_eq!(verdict(s, &format!("osu_{c} --backend nccl --format nccl-tests")), "PASSED", "{s}");
    }
    for p in [
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "broadcast",
        "reduce",
        "sendrecv",
        "gather",
        "scatter",
        "hypercube",
        "alltoallv",
    ] {
        assert_eq!(verdict(s, &format!("commbench's {p}_perf -g 1")), "PASSED", "{s}");
    }
    assert_eq!(verdict(s, "NCCL point-to-point"), "SKIPPED");
    assert_eq!(verdict(s, "osu_latency -d cuda D D"), "SKIPPED");
    assert!(s.contains("this MPI is not CUDA-aware (its own answer)"), "{s}");
    assert_eq!(verdict(s, "osu_latency -d cuda H H"), "PASSED");
    assert!(s.contains("gpu-check: nothing that could run failed"), "{s}");
    // The whole log is in the device tool's output folder too.
    let log = std::fs::read_to_string(out.path().join("gpu-check.log")).expect("gpu-check.log in $OUT");
    assert!(log.contains("=== summary"), "{log}");
}

#[test]
fn a_step_that_could_run_and_broke_fails_the_check() {
    let _g = mpi_lock();
    let out = tempfile::tempdir().unwrap();
    let run = gpu_check(out.path(), &[("COMMBENCH_STANDIN_NCCL_FAIL", "rank=0,op=3")]);
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(verdict(&run.stdout, "osu_allreduce --backend nccl"), "FAILED", "{}", run.stdout);
    assert_eq!(verdict(&run.stdout, "gpu-bw h2d,d2h,d2d"), "PASSED");
    assert!(run.stdout.contains("gpu-check: some step that could run failed"), "{}", run.stdout);
}

/// The whole check is bounded: steps the limit leaves no time for are
/// SKIPPED as such, and that fails the check (it did not do its job).
#[test]
fn the_check_keeps_within_its_limit() {
    let _g = mpi_lock();
    let out = tempfile::tempdir().unwrap();
    let run = gpu_check(out.path(), &[("GPU_CHECK_LIMIT", "12")]);
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("the script's 12 s ran out before it"), "{}", run.stdout);
    assert!(run.elapsed < under_load(Duration::from_secs(25)), "took {:?}", run.elapsed);
}

/// Writes `text` to `name` in `dir`; its path.
fn write_in(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    std::fs::write(dir.join(name), text).unwrap();
    dir.join(name)
}

fn side_by_side(args: &[&Path], mode: &str) -> String {
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/gpu-side-by-side.py"))
        .arg(mode)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// bandwidthTest's `--csv` lines and gpu-bw's long CSV; two nccl-tests
/// tables (commbench's and nccl-tests' own layout), per size.
#[test]
fn side_by_side_tables_read_both_tools_and_judge_the_targets() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let write = |name: &str, text: &str| write_in(p, name, text);
    let pinned = write(
        "bt-pinned.txt",
        "[CUDA Bandwidth Test] - Starting...\n\
         bandwidthTest-H2D-Pinned, Bandwidth = 55.1 GB/s, Time = 0.00058 s, Size = 32000000 bytes, NumDevsUsed = 1\n\
         bandwidthTest-D2H-Pinned, Bandwidth = 54.9 GB/s, Time = 0.00058 s, Size = 32000000 bytes, NumDevsUsed = 1\n\
         bandwidthTest-D2D, Bandwidth = 3900.0 GB/s, Time = 0.00002 s, Size = 32000000 bytes, NumDevsUsed = 1\n\
         Result = PASS\n",
    );
    let pageable = write(
        "bt-pageable.txt",
        "bandwidthTest-H2D-Paged, Bandwidth = 25.0 GB/s, Time = 0.00128 s, Size = 32000000 bytes, NumDevsUsed = 1\n\
         bandwidthTest-D2H-Paged, Bandwidth = 20.0 GB/s, Time = 0.0016 s, Size = 32000000 bytes, NumDevsUsed = 1\n",
    );
    let ours = write(
        "gpubw.csv",
        "test,src_gpu,dst_gpu,host_memory,peer_access,bytes,reps,bytes_counted,seconds,clock,value,unit\n\
         h2d,host,0,pinned,,32000000,100,3200000000,0.058,gpu_events,54.80,GB/s\n\
         h2d,host,0,pageable,,32000000,100,3200000000,0.128,host_clock,24.50,GB/s\n\
         d2h,0,host,pinned,,32000000,100,3200000000,0.058,gpu_events,50.00,GB/s\n\
         d2h,0,host,pageable,,32000000,100,3200000000,0.16,host_clock,19.80,GB/s\n\
         d2d,0,0,,,32000000,100,6400000000,0.0016,gpu_events,3800.00,GB/s\n",
    );
    let text = side_by_side(&[&ours, &pinned, &pageable], "copies");
    assert!(text.contains("h2d   pinned                 54.80               55.10   0.995  within 3%"), "{text}");
    assert!(text.contains("d2h   pinned                 50.00               54.90   0.911  OUTSIDE 3%"), "{text}");
    assert!(text.contains("copies: 2 of 3 pinned/D2D copies within 3% of bandwidthTest"), "{text}");

    let row = |size: usize, t: f64| {
        format!("{size:>12}  {:>12}     float     sum      -1  {t:>7.2}   1.00   1.00       0  {t:>7.2}   1.00   1.00       0\n", size / 4)
    };
    let head = "# Collective test starting: all_reduce_perf\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n";
    let mine = write("ours.txt", &format!("{head}{}{}{}", row(8, 10.5), row(1 << 20, 20.0), row(1 << 30, 5000.0)));
    let theirs = write("theirs.txt", &format!("{head}{}{}{}", row(8, 10.0), row(1 << 20, 20.1), row(1 << 30, 5300.0)));
    let text = side_by_side(&[&mine, &theirs], "nccl");
    assert!(text.lines().any(|l| l.starts_with("          8") && l.ends_with("within 1 us")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("    1048576") && l.ends_with("within 3%")), "{text}");
    assert!(text.lines().any(|l| l.starts_with(" 1073741824") && l.ends_with("OUTSIDE 3%")), "{text}");
    assert!(text.contains("nccl: 2 of 3 sizes within target"), "{text}");
}

/// A CUDA sample's two outputs, commbench's drop-in and the sample's:
/// bandwidthTest's CSV lines by copy and size, p2pBandwidthLatencyTest's
/// matrices cell by cell; bandwidths judged (3%), pageable copies and
/// latencies shown only.
#[test]
fn side_by_side_samples_compare_value_by_value() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let write = |name: &str, text: &str| write_in(p, name, text);
    let line = |cfg: &str, bw: f64| {
        format!(
            "bandwidthTest-{cfg}, Bandwidth = {bw:.1} GB/s, Time = 0.00058 s, Size = 32000000 bytes, NumDevsUsed = 1\n"
        )
    };
    let ours = write("ours.txt", &[line("H2D-Pinned", 55.0), line("D2H-Paged", 20.0), line("D2D", 3000.0)].concat());
    let theirs =
        write("theirs.txt", &[line("H2D-Pinned", 55.5), line("D2H-Paged", 25.0), line("D2D", 3200.0)].concat());
    let text = side_by_side(&[&ours, &theirs], "samples");
    assert!(text.lines().any(|l| l.starts_with("H2D-Pinned 32000000 ") && l.ends_with("0.991  within 3%")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("D2H-Paged 32000000 ") && l.ends_with("0.800  ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("D2D 32000000 ") && l.ends_with("OUTSIDE 3%")), "{text}");
    assert!(text.contains("samples: 1 of 2 bandwidths within 3% of the sample"), "{text}");

    let p2p = |cell: f64, cpu: f64| {
        format!(
            "P2P Connectivity Matrix\n     D\\D     0     1\n     0\t     1     1\n     1\t     1     1\n\
             Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1 \n     0 550.74 {cell:6.2} \n     1  10.00 550.74 \n\
             P2P=Disabled Latency Matrix (us)\n   GPU     0      1 \n     0   4.00   4.00 \n     1   4.00   4.00 \n\n\
             \x20  CPU     0      1 \n     0 {cpu:6.2}   0.20 \n     1   0.19   0.17 \n"
        )
    };
    let ours = write("p2p-ours.txt", &p2p(10.0, 0.31));
    let theirs = write("p2p-theirs.txt", &p2p(10.5, 0.50));
    let text = side_by_side(&[&ours, &theirs], "samples");
    let bw = "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)";
    assert!(text.lines().any(|l| l.starts_with(&format!("{bw} 0 1 ")) && l.ends_with("0.952  OUTSIDE 3%")), "{text}");
    assert!(text.lines().any(|l| l.starts_with(&format!("{bw} 1 0 ")) && l.ends_with("1.000  within 3%")), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("P2P=Disabled Latency Matrix (us) [CPU] 0 0 ") && l.ends_with("0.620  ")),
        "{text}"
    );
    assert!(text.contains("samples: 3 of 4 bandwidths within 3% of the sample"), "{text}");
}
