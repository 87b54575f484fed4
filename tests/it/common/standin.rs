//! The GPU stand-in for integration tests: a test double of the CUDA
//! driver (`libcuda.so.1`), of NCCL (`libnccl.so.2`) and of NVML's NVLink
//! calls (`libnvidia-ml.so.1`) in C
//! (tests/support/gpu_standin), pretending to be a machine described in
//! tests/machines. Its timings are a model: never report them as
//! measurements.
//!
//! [`libraries`] compiles both libraries with the system C compiler `cc`,
//! once per test process, into a directory under the cargo target dir
//! named by a hash of the sources (so test processes share a build).
//! [`stand_in`] adds the machine file the stand-in reads, written from a
//! description ([`config_text`]); [`StandIn::env`] is what a command needs
//! to find and use it:
//!
//! ```ignore
//! let gpu = common::standin::stand_in("dgx1");
//! let mut cmd = Command::new(bin(Mpi::OpenMpi, "osu_allreduce"));
//! gpu.apply(&mut cmd); // LD_LIBRARY_PATH, COMMBENCH_NCCL, COMMBENCH_STANDIN_MACHINE
//! ```
//!
//! The stand-in also reads, when set: `CUDA_VISIBLE_DEVICES`,
//! `COMMBENCH_STANDIN_TIME_SCALE` (multiplies every modelled duration),
//! `COMMBENCH_STANDIN_CUDA_FAIL=after=K[,code=C]`, `COMMBENCH_STANDIN_CORRUPT=N`,
//! `COMMBENCH_STANDIN_NCCL_CORRUPT=rank=R[,op=K]`,
//! `COMMBENCH_STANDIN_NCCL_FAIL=rank=R[,op=K]`,
//! `COMMBENCH_STANDIN_NCCL_JOIN_TIMEOUT_S` and `COMMBENCH_STANDIN_TRACE=1` (or `=FILE`)
//! (see tests/support/gpu_standin/README.md).
#![allow(dead_code)]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use commbench::topo::describe::{self, GpuLinkKind};

/// The variable naming the stand-in's machine file.
pub const MACHINE_VAR: &str = "COMMBENCH_STANDIN_MACHINE";

/// The compiled stand-in.
#[derive(Debug)]
pub struct Libraries {
    /// Holds `libcuda.so.1` and `libnccl.so.2` (and `libcuda.so`,
    /// `libnccl.so` links): the directory for `LD_LIBRARY_PATH`.
    pub dir: PathBuf,
    pub libcuda: PathBuf,
    /// The file for `COMMBENCH_NCCL`.
    pub libnccl: PathBuf,
    /// NVML (`libnvidia-ml.so.1`), found by the loader in `dir`.
    pub libnvml: PathBuf,
}

/// The stand-in's sources.
pub fn source_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/gpu_standin")
}

/// Where builds go: under the cargo target dir.
fn build_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gpu-standin")
}

const CFLAGS: &[&str] = &["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-pthread"];

/// FNV-1a, stable across Rust versions (unlike `DefaultHasher`).
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs `cc` with `args`, panicking with its output when it fails.
fn cc(args: &[&std::ffi::OsStr]) {
    let out = Command::new("cc")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("the C compiler `cc` is needed to build the GPU stand-in: {e}"));
    assert!(out.status.success(), "cc {:?} failed:\n{}", args, String::from_utf8_lossy(&out.stderr));
}

/// Builds into `<root>/<name>` through a temporary directory renamed into
/// place, so that test processes racing to build share one result.
fn build_once(name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let root = build_root();
    let dir = root.join(name);
    if dir.join("done").exists() {
        return dir;
    }
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
    let tmp = root.join(format!("{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("cannot create {}: {e}", tmp.display()));
    build(&tmp);
    std::fs::write(tmp.join("done"), b"").unwrap_or_else(|e| panic!("cannot write in {}: {e}", tmp.display()));
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another process got there first; its build is the same.
        let _ = std::fs::remove_dir_all(&tmp);
        assert!(dir.join("done").exists(), "{} was not built", dir.display());
    }
    dir
}

/// The stand-in libraries, compiled on first use in this process.
pub fn libraries() -> &'static Libraries {
    static LIBS: OnceLock<Libraries> = OnceLock::new();
    LIBS.get_or_init(|| {
        let src = source_dir();
        let (cuda, nccl, header) = (src.join("cuda.c"), src.join("nccl.c"), src.join("standin.h"));
        let nvml = src.join("nvml.c");
        let hash = fnv(&[&read(&cuda), &read(&nccl), &read(&nvml), &read(&header), CFLAGS.join(" ").as_bytes()]);
        let dir = build_once(&format!("lib-{hash:016x}"), |tmp| {
            let lib = |name: &str| tmp.join(name).into_os_string();
            let libcuda = lib("libcuda.so.1");
            let mut args: Vec<std::ffi::OsString> = CFLAGS.iter().map(Into::into).collect();
            args.extend(["-fPIC", "-shared", "-fvisibility=hidden"].map(Into::into));
            let mut a = args.clone();
            a.extend(["-Wl,-soname,libcuda.so.1".into(), "-o".into(), libcuda.clone(), cuda.clone().into()]);
            cc(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
            // NCCL and NVML both link against the CUDA stand-in, whose
            // machine file they read.
            for (soname, source) in [("libnccl.so.2", &nccl), ("libnvidia-ml.so.1", &nvml)] {
                let mut a = args.clone();
                a.extend([
                    format!("-Wl,-soname,{soname}").into(),
                    "-o".into(),
                    lib(soname),
                    source.clone().into(),
                    libcuda.clone(),
                    "-Wl,-rpath,$ORIGIN".into(),
                    "-lm".into(),
                ]);
                cc(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
            }
            for (link, target) in [("libcuda.so", "libcuda.so.1"), ("libnccl.so", "libnccl.so.2")] {
                std::os::unix::fs::symlink(target, tmp.join(link))
                    .unwrap_or_else(|e| panic!("cannot link {link} in {}: {e}", tmp.display()));
            }
        });
        Libraries {
            libcuda: dir.join("libcuda.so.1"),
            libnccl: dir.join("libnccl.so.2"),
            libnvml: dir.join("libnvidia-ml.so.1"),
            dir,
        }
    })
}

/// A C program linked against the stand-in (with
/// tests/support/gpu_standin/tests on its include path), built once per
/// process; its path.
pub fn c_program(source: &Path) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<PathBuf, PathBuf>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(source) {
        return p.clone();
    }
    let libs = libraries();
    let include = source_dir().join("tests");
    let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "program".into());
    let hash = fnv(&[&read(source), &read(&include.join("api.h")), libs.dir.as_os_str().as_encoded_bytes()]);
    let dir = build_once(&format!("{stem}-{hash:016x}"), |tmp| {
        let exe = tmp.join(&stem);
        let mut args: Vec<std::ffi::OsString> = CFLAGS.iter().map(Into::into).collect();
        args.push(format!("-I{}", include.display()).into());
        args.extend(["-o".into(), exe.into_os_string(), source.as_os_str().to_owned()]);
        args.push(format!("-L{}", libs.dir.display()).into());
        args.extend(["-l:libcuda.so.1", "-l:libnccl.so.2"].map(Into::into));
        args.push(format!("-Wl,-rpath,{}", libs.dir.display()).into());
        args.push("-lm".into());
        cc(&args.iter().map(|s| s.as_os_str()).collect::<Vec<_>>());
    });
    let exe = dir.join(&stem);
    built.insert(source.to_path_buf(), exe.clone());
    exe
}

/// The stand-in's machine file for a description: GPU names, memory,
/// compute capability, PCI bus ids and NUMA nodes as the description gives
/// them (bus ids as src/topo/describe.rs numbers described GPUs), rates,
/// and one `link=` line per linked pair. Err when the description lacks
/// what the stand-in needs.
pub fn config_text(description: &Path) -> Result<String, String> {
    let machine = describe::load(description).map_err(|e| e.to_string())?;
    let model = describe::load_gpu_model(description).map_err(|e| e.to_string())?;
    let origin = description.display();
    let rates = model.rates.as_ref().ok_or_else(|| format!("{origin} has no gpu_rates"))?;
    let mut t = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(t, "# GPU stand-in machine, written by tests/common/standin.rs from {origin}");
    let _ = writeln!(t, "machine={}", machine.hostname);
    let _ = writeln!(t, "gpus={}", machine.gpus.len());
    for (g, spec) in machine.gpus.iter().zip(&model.gpus) {
        let i = g.index;
        let memory = spec.memory_bytes.ok_or_else(|| format!("{origin}: GPU {i} has no memory_gib"))?;
        let (major, minor) =
            spec.compute_capability.ok_or_else(|| format!("{origin}: GPU {i} has no compute_capability"))?;
        let name = g.name.clone().unwrap_or_else(|| format!("Stand-in GPU {i}"));
        if name.contains('\n') {
            return Err(format!("{origin}: GPU {i}'s name spans lines"));
        }
        let _ = writeln!(t, "gpu.{i}.name={name}");
        let _ = writeln!(t, "gpu.{i}.memory_bytes={memory}");
        let _ = writeln!(t, "gpu.{i}.compute_capability={major}.{minor}");
        let _ = writeln!(t, "gpu.{i}.pci_bus_id={}", g.pci_bus_id);
        if let Some(numa) = g.numa {
            let _ = writeln!(t, "gpu.{i}.numa={numa}");
        }
    }
    for (key, value) in [
        ("rate.h2d_pinned_gbs", rates.h2d_pinned_gbs),
        ("rate.h2d_pageable_gbs", rates.h2d_pageable_gbs),
        ("rate.d2h_pinned_gbs", rates.d2h_pinned_gbs),
        ("rate.d2h_pageable_gbs", rates.d2h_pageable_gbs),
        ("rate.d2d_gbs", rates.d2d_gbs),
        ("rate.nvlink_gbs", rates.nvlink_gbs),
        ("rate.pcie_peer_gbs", rates.pcie_peer_gbs),
        ("rate.staged_peer_gbs", rates.staged_peer_gbs),
        ("latency.copy_us", rates.copy_latency_us),
        ("latency.nccl_us", rates.nccl_latency_us),
    ] {
        let _ = writeln!(t, "{key}={value}");
    }
    if let Some(v) = model.nvlink_version {
        let _ = writeln!(t, "nvlink.version={v}");
    }
    if model.nvswitch {
        let _ = writeln!(t, "nvlink.switch=1");
    }
    for l in &model.links {
        match l.kind {
            GpuLinkKind::NvLink(n) => {
                let _ = writeln!(t, "link={},{},nvlink,{n}", l.a, l.b);
            }
            GpuLinkKind::Pcie => {
                let _ = writeln!(t, "link={},{},pcie", l.a, l.b);
            }
        }
    }
    Ok(t)
}

/// Writes the machine file for `description` to `out` (through a
/// temporary file renamed into place).
pub fn write_config(description: &Path, out: &Path) -> Result<(), String> {
    let text = config_text(description)?;
    let tmp = out.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, out).map_err(|e| format!("cannot rename {} into place: {e}", tmp.display()))
}

/// tests/machines/`name`.json.
pub fn description(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/machines").join(format!("{name}.json"))
}

/// The stand-in pretending to be a machine of tests/machines.
#[derive(Debug, Clone)]
pub struct StandIn {
    pub libraries: &'static Libraries,
    /// The machine file, for `COMMBENCH_STANDIN_MACHINE`.
    pub config: PathBuf,
}

/// The stand-in as tests/machines/`machine`.json (`"dgx1"`,
/// `"dgx-h100"`): the libraries built and the machine file written, once
/// per process each.
pub fn stand_in(machine: &str) -> StandIn {
    static CONFIGS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let libraries = libraries();
    let mut configs = CONFIGS.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|e| e.into_inner());
    let config = configs
        .entry(machine.to_string())
        .or_insert_with(|| {
            let dir = build_root().join("machines");
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
            let out = dir.join(format!("{machine}.conf"));
            write_config(&description(machine), &out).unwrap_or_else(|e| panic!("{e}"));
            out
        })
        .clone();
    StandIn { libraries, config }
}

impl StandIn {
    /// The variables a command needs: `LD_LIBRARY_PATH` with the
    /// libraries first, `COMMBENCH_NCCL` naming the NCCL stand-in, and
    /// `COMMBENCH_STANDIN_MACHINE` naming the machine file.
    pub fn env(&self) -> Vec<(String, String)> {
        let dir = self.libraries.dir.display().to_string();
        let path = match std::env::var("LD_LIBRARY_PATH") {
            Ok(old) if !old.is_empty() => format!("{dir}:{old}"),
            _ => dir,
        };
        vec![
            ("LD_LIBRARY_PATH".into(), path),
            ("COMMBENCH_NCCL".into(), self.libraries.libnccl.display().to_string()),
            (MACHINE_VAR.into(), self.config.display().to_string()),
        ]
    }

    /// Sets [`StandIn::env`] on `cmd`.
    pub fn apply(&self, cmd: &mut Command) {
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
    }
}

/// A sysfs tree holding a PCIe link for every GPU of `machine`'s
/// description (the stand-in's bus ids), as COMMBENCH_SYSFS_ROOT reads it.
pub fn sysfs_fixture(machine: &str, speed: &str, width: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let m = describe::load(&description(machine)).unwrap();
    for g in &m.gpus {
        let dev = root.path().join("bus/pci/devices").join(&g.pci_bus_id);
        std::fs::create_dir_all(&dev).unwrap();
        std::fs::write(dev.join("current_link_speed"), format!("{speed}\n")).unwrap();
        std::fs::write(dev.join("current_link_width"), format!("{width}\n")).unwrap();
    }
    root
}
