//! GPU options on a machine without a GPU, under real mpirun and the real
//! dynamic loader: no driver at all, a driver that finds no device (a
//! stand-in libcuda the loader finds through LD_LIBRARY_PATH, as a
//! driver installed in a non-default place would be), and the options
//! that cannot go together. Each is one line and status 1 on every rank
//! within 5 s; `-v` names the accelerator as OSU's GPU builds do.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const QUICK: &[&str] = &["-m", "8", "-i", "10", "--no-results"];

fn has_real_driver() -> bool {
    ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/libcuda.so.1"]
        .iter()
        .any(|p| Path::new(p).exists())
}

#[test]
fn no_driver_is_one_line_everywhere() {
    if has_real_driver() {
        eprintln!("SKIPPED: this machine has an NVIDIA driver");
        return;
    }
    let _g = mpi_lock();
    let mut r = Refusals::new();
    let host = hostname();
    let no_driver = |bench: &'static str| {
        let host = host.clone();
        move |l: &str| {
            l == format!(
                "{bench}: no CUDA driver on {host}: libcuda.so.1 cannot be loaded (install the NVIDIA driver, or \
                 run on a GPU node)"
            )
        }
    };
    r.refused("osu_latency", &[QUICK, &["-d", "cuda", "D", "D"]].concat(), &[], no_driver("osu_latency"));
    r.refused("osu_bw", &[QUICK, &["-d", "managed", "H", "D"]].concat(), &[], no_driver("osu_bw"));
    r.refused("osu_allreduce", &[QUICK, &["-d", "cuda"]].concat(), &[], no_driver("osu_allreduce"));
    // -d alone, on a point-to-point benchmark, still needs the GPU open
    // (OSU initialises the device for it too).
    r.refused("osu_latency", &[QUICK, &["-d", "cuda"]].concat(), &[], no_driver("osu_latency"));
    // NCCL runs on the rank's GPU: the GPU is what is missing first.
    r.refused("osu_allreduce", &[QUICK, &["--backend", "nccl"]].concat(), &[], no_driver("osu_allreduce"));
    r.refused("osu_bw", &[QUICK, &["--backend", "nccl"]].concat(), &[], no_driver("osu_bw"));
    let table = ["--backend", "nccl", "--format", "nccl-tests", "--min-busbw", "100"];
    r.refused("osu_alltoall", &[QUICK, &table].concat(), &[], no_driver("osu_alltoall"));
    r.check();
}

/// OSU's NCCL binaries say `#Using NCCL` on every rank before MPI starts;
/// nccl-tests' table does not.
#[test]
fn nccl_runs_say_so_on_every_rank() {
    if has_real_driver() {
        eprintln!("SKIPPED: this machine has an NVIDIA driver");
        return;
    }
    let _g = mpi_lock();
    for (args, says) in
        [(&["--backend", "nccl"][..], 2), (&["--backend", "nccl", "--format", "nccl-tests"], 0), (&[], 0)]
    {
        let cwd = tempfile::tempdir().unwrap();
        let base = Launch { cwd: Some(cwd.path().to_path_buf()), ..Launch::default() };
        let all = [QUICK, args, &["-d", "cuda"]].concat();
        let (run, codes) = launch_recorded_with(Mpi::OpenMpi, Mpi::OpenMpi, 2, "osu_allreduce", &all, base);
        assert_eq!(codes, [1, 1], "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout.lines().filter(|l| *l == "#Using NCCL").count(), says, "{args:?}: {}", run.stdout);
        assert!(run.stdout.lines().all(|l| l == "#Using NCCL"), "{args:?}: {}", run.stdout);
    }
}

/// A stand-in libcuda.so.1 exporting the few driver calls made before a
/// device is used; `init` is what its cuInit returns and `devices` what
/// cuDeviceGetCount reports.
fn stand_in_driver(dir: &Path, init: i32, devices: i32) -> PathBuf {
    let src = dir.join("driver.c");
    std::fs::write(
        &src,
        format!(
            r#"
/* Only what commbench calls before it touches a device. */
int cuInit(unsigned int flags) {{ (void)flags; return {init}; }}
int cuDeviceGetCount(int *count) {{ *count = {devices}; return 0; }}
int cuDriverGetVersion(int *v) {{ *v = 12040; return 0; }}
int cuGetErrorName(int status, const char **name) {{
    *name = status == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}}
int cuGetErrorString(int status, const char **text) {{
    *text = status == 100 ? "no CUDA-capable device is detected" : "unknown error";
    return 0;
}}
"#
        ),
    )
    .unwrap();
    let lib = dir.join("libcuda.so.1");
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("cc");
    assert!(st.success(), "cc failed");
    std::os::unix::fs::symlink("libcuda.so.1", dir.join("libcuda.so")).unwrap();
    dir.to_path_buf()
}

#[test]
fn driver_without_a_gpu_is_one_line_everywhere() {
    if has_real_driver() {
        eprintln!("SKIPPED: this machine has an NVIDIA driver");
        return;
    }
    let _g = mpi_lock();
    let host = hostname();
    let none = tempfile::tempdir().unwrap();
    let path = stand_in_driver(none.path(), 100, 0);
    let env = [("LD_LIBRARY_PATH", path.to_str().unwrap())];
    refused("osu_latency", &[QUICK, &["-d", "cuda", "D", "D"]].concat(), &env, |l| {
        l == format!(
            "osu_latency: no GPU on {host}: the CUDA driver says no CUDA-capable device is detected \
             (CUDA_ERROR_NO_DEVICE)"
        )
    });
    // A driver that starts but lists no device, as with an empty
    // CUDA_VISIBLE_DEVICES: the line names the variable.
    let empty = tempfile::tempdir().unwrap();
    let path = stand_in_driver(empty.path(), 0, 0);
    let env = [("LD_LIBRARY_PATH", path.to_str().unwrap()), ("CUDA_VISIBLE_DEVICES", "")];
    refused("osu_allgather", &[QUICK, &["-d", "cuda"]].concat(), &env, |l| {
        l == format!("osu_allgather: no GPU on {host}: the CUDA driver sees none; CUDA_VISIBLE_DEVICES=")
    });
}

#[test]
fn options_that_do_not_go_together() {
    let _g = mpi_lock();
    let mut r = Refusals::new();
    r.refused("osu_latency", &[QUICK, &["-d", "rocm"]].concat(), &[], |l| {
        l.starts_with("Invalid Accel Type Specified [-d rocm] (commbench measures NVIDIA GPUs through CUDA;")
    });
    r.refused("osu_allreduce", &[QUICK, &["-d", "openacc"]].concat(), &[], |l| l.contains("OpenACC is not supported"));
    r.refused("osu_bw", &[QUICK, &["-d", "tpu"]].concat(), &[], |l| l == "Invalid Accel Type Specified [-d tpu]");
    r.refused("osu_barrier", &[QUICK, &["--backend", "nccl"]].concat(), &[], |l| {
        l.starts_with(
            "Invalid value [--backend nccl] (osu_barrier needs a barrier of its own, which NCCL does not have; \
             NCCL runs osu_latency, osu_bw,",
        )
    });
    r.refused("osu_allreduce", &[QUICK, &["--format", "nccl-tests"]].concat(), &[], |l| {
        l == "Invalid value [--format nccl-tests] (nccl-tests' table is for NCCL's collectives: add --backend nccl)"
    });
    r.refused("osu_bw", &[QUICK, &["--backend", "nccl", "--format", "nccl-tests"]].concat(), &[], |l| {
        l.starts_with("Invalid value [--format nccl-tests] (osu_bw is not one of")
    });
    r.refused("osu_bw", &[QUICK, &["--min-busbw", "5"]].concat(), &[], |l| {
        l.starts_with("Invalid option [--min-busbw] (osu_bw reports no bus bandwidth")
    });
    r.refused("osu_allgather", &[QUICK, &["--min-busbw", "x"]].concat(), &[], |l| {
        l == "Invalid value [--min-busbw x] (give a bus bandwidth in GB/s, e.g. 150)"
    });
    r.refused("osu_latency", &[QUICK, &["-d", "cuda", "--backend", "ucx", "D", "D"]].concat(), &[], |l| {
        l.starts_with("-d cuda cannot be combined with --backend ucx (")
    });
    r.check();
}

/// `-d cuda` and `-d managed` on the stand-in's GPUs (tests/it/common/
/// standin.rs: an 8-GPU NVSwitch box), as far as the MPI here allows:
/// neither Open MPI 4.1 nor MPICH 4.0 of Debian is CUDA-aware and both say
/// so when asked, so GPU buffers are refused in one line on every rank
/// (handing them device pointers would crash them), while `H H` runs with
/// every rank's GPU opened and described in the run record. A GPU the
/// driver does not have is one line naming what CUDA sees.
#[test]
fn gpu_buffers_go_as_far_as_the_mpi_allows_and_the_record_holds_the_gpus() {
    let _g = mpi_lock();
    let gpu = common::standin::stand_in("dgx-h100");
    let env: Vec<(String, String)> = gpu.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let o =
        run_with_results_env(Mpi::OpenMpi, 2, "osu_latency", &["-d", "cuda", "-m", "8", "-i", "10", "H", "H"], &env);
    assert_eq!(o.run.code, Some(0), "{:?}", o.run);
    assert_eq!(o.run.stdout.lines().nth(1), Some("# OSU MPI-CUDA Latency Test v7.4"), "{}", o.run.stdout);
    let details = &o.record["backend_details"];
    assert_eq!(details["mpi_cuda_support"], false, "{details}");
    let ranks = details["ranks"].as_array().expect("ranks");
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["buffers"], "host", "{rank}");
        let g = &rank["gpu"];
        assert_eq!(g["index"], r, "{rank}");
        assert_eq!(g["name"], "H100 80GB HBM3", "{rank}");
        assert_eq!(g["pci_bus_id"], format!("0000:{:02x}:00.0", r + 1), "{rank}");
        assert_eq!(g["memory_bytes"], 80u64 << 30, "{rank}");
        assert_eq!(g["compute_capability"], "9.0", "{rank}");
        assert_eq!(g["numa_node"], 0, "{rank}");
        assert_eq!(g["chosen_by"], format!("local rank {r} mod 8 GPU(s)"), "{rank}");
    }
    let not_aware = |place: &'static str| {
        move |l: &str| {
            l == format!(
                "osu_latency: this MPI library cannot move CUDA memory (asked with MPIX_Query_cuda_support or \
                 MPIX_GPU_query_support, it says no): run a CUDA-aware MPI build, or leave the {place} buffers on \
                 the host (H H)"
            )
        }
    };
    let mut r = Refusals::new();
    for mpi in [Mpi::OpenMpi, Mpi::Mpich] {
        r.refused_under(mpi, "osu_latency", &[QUICK, &["-d", "cuda", "D", "D"]].concat(), &env, not_aware("device"));
        r.refused_under(
            mpi,
            "osu_latency",
            &[QUICK, &["-d", "managed", "D", "D"]].concat(),
            &env,
            not_aware("managed"),
        );
    }
    r.refused("osu_allreduce", &[QUICK, &["-d", "cuda"]].concat(), &env, |l| {
        l.starts_with("osu_allreduce: this MPI library cannot move CUDA memory")
    });
    // Where hwloc sees no GPU the number is CUDA's, checked by the driver.
    r.refused("osu_latency", &[QUICK, &["-d", "cuda", "--gpu", "9", "H", "H"]].concat(), &env, |l| {
        l == format!("osu_latency: --gpu 9: {} has 8 GPU(s) as CUDA numbers them (0-7)", hostname())
    });
    let visible = [env.as_slice(), &[("CUDA_VISIBLE_DEVICES", "1,2")]].concat();
    r.refused("osu_latency", &[QUICK, &["-d", "cuda", "--gpu", "2", "H", "H"]].concat(), &visible, |l| {
        l == format!(
            "osu_latency: --gpu 2: {} has 2 GPU(s) as CUDA numbers them (0-1); CUDA_VISIBLE_DEVICES=1,2",
            hostname()
        )
    });
    r.check();
}

#[test]
fn version_names_the_accelerator() {
    let out = |args: &[&str]| {
        let mut c = Command::new(bin(Mpi::OpenMpi, "osu_latency"));
        c.args(args);
        run_cmd(c, Duration::from_secs(20))
    };
    let r = out(&["-d", "cuda", "-v"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.lines().next(), Some("# OSU MPI-CUDA Latency Test v7.4"));
    let r = out(&["-v"]);
    assert_eq!(r.stdout.lines().next(), Some("# OSU MPI Latency Test v7.4"));
    let mut c = Command::new(bin(Mpi::OpenMpi, "osu_mbw_mr"));
    c.args(["-d", "cuda", "-v"]);
    let r = run_cmd(c, Duration::from_secs(20));
    assert_eq!(r.stdout.lines().next(), Some("# OSU MPI Multiple Bandwidth / Message Rate Test v7.4"));
}

fn hostname() -> String {
    let out = Command::new("hostname").output().expect("hostname");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
