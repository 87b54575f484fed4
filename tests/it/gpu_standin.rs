//! The GPU stand-in's own tests (tests/support/gpu_standin: a CUDA driver
//! and an NCCL double in C, for running commbench's GPU paths without a
//! GPU): that it exports what commbench calls, pretends to be the
//! described machines, keeps CUDA's asynchrony and synchronisation rules,
//! models copy and NCCL times from the description, refuses what a GPU
//! refuses, and injects the faults it is asked for. The scenarios are C
//! programs (tests/support/gpu_standin/tests) built against the stand-in
//! and run here.
//!
//! Run with `cargo test --test gpu_standin -- --test-threads=1`; about
//! 15 s on two shared cores, most of it in the multi-process NCCL value
//! checks and the 1 GiB broadcast, where the host really moves and sums
//! every byte.

use crate::common;

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use commbench::topo::describe::{self, GpuLinkKind, GpuModel};
use common::standin::{self, StandIn};
use common::{run_cmd, Run};

fn program(name: &str) -> PathBuf {
    standin::c_program(&standin::source_dir().join("tests").join(format!("{name}.c")))
}

/// Runs a check program on `gpu` with extra variables; the stand-in's own
/// variables that the test process may have are cleared first.
fn check(gpu: &StandIn, prog: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(program(prog));
    cmd.args(args);
    for var in [
        "CUDA_VISIBLE_DEVICES",
        "COMMBENCH_STANDIN_TIME_SCALE",
        "COMMBENCH_STANDIN_CUDA_FAIL",
        "COMMBENCH_STANDIN_CORRUPT",
        "COMMBENCH_STANDIN_NCCL_CORRUPT",
        "COMMBENCH_STANDIN_NCCL_FAIL",
        "COMMBENCH_STANDIN_TRACE",
    ] {
        cmd.env_remove(var);
    }
    gpu.apply(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_cmd(cmd, Duration::from_secs(60))
}

/// `check` that must succeed.
fn ok(gpu: &StandIn, prog: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let r = check(gpu, prog, args, env);
    assert!(!r.timed_out, "{prog} {args:?} timed out:\n{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.code, Some(0), "{prog} {args:?} {env:?} failed:\nstdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    r
}

/// The line of `text` that starts with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line '{prefix}...' in:\n{text}"))
}

/// The number after `key ` in `text`'s line that starts with `key `.
fn number(text: &str, key: &str) -> f64 {
    let l = line(text, &format!("{key} "));
    l[key.len() + 1..].split_whitespace().next().and_then(|w| w.parse().ok()).unwrap_or_else(|| panic!("{l}"))
}

fn model(machine: &str) -> GpuModel {
    describe::load_gpu_model(&standin::description(machine)).unwrap()
}

/// The described link between two machine GPUs.
fn link(m: &GpuModel, a: usize, b: usize) -> Option<GpuLinkKind> {
    let (a, b) = (a.min(b), a.max(b));
    m.links.iter().find(|l| l.a == a && l.b == b).map(|l| l.kind)
}

fn assert_close(got: f64, want: f64, tolerance: f64, what: &str) {
    assert!(((got - want) / want).abs() <= tolerance, "{what}: {got} is not within {tolerance} of {want}");
}

// ------------------------------------------------------------ exports

/// The driver call behind each of cudarc's `result` functions that
/// src/ uses (cudarc 0.19's result.rs).
const RESULT_CALLS: &[(&str, &str)] = &[
    ("init", "cuInit"),
    ("device::get_count", "cuDeviceGetCount"),
    ("device::get", "cuDeviceGet"),
    ("device::get_name", "cuDeviceGetName"),
    ("device::total_mem", "cuDeviceTotalMem_v2"),
    ("device::get_attribute", "cuDeviceGetAttribute"),
    ("primary_ctx::retain", "cuDevicePrimaryCtxRetain"),
    ("primary_ctx::release", "cuDevicePrimaryCtxRelease_v2"),
    ("ctx::set_current", "cuCtxSetCurrent"),
    ("ctx::get_current", "cuCtxGetCurrent"),
    ("ctx::synchronize", "cuCtxSynchronize"),
    ("malloc_sync", "cuMemAlloc_v2"),
    ("mem_get_info", "cuMemGetInfo_v2"),
    ("malloc_managed", "cuMemAllocManaged"),
    ("malloc_host", "cuMemHostAlloc"),
    ("free_sync", "cuMemFree_v2"),
    ("free_host", "cuMemFreeHost"),
    ("memset_d8_sync", "cuMemsetD8_v2"),
    ("memset_d8_async", "cuMemsetD8Async"),
    ("memcpy_htod_sync", "cuMemcpyHtoD_v2"),
    ("memcpy_dtoh_sync", "cuMemcpyDtoH_v2"),
    ("memcpy_dtod_sync", "cuMemcpyDtoD_v2"),
    ("memcpy_htod_async", "cuMemcpyHtoDAsync_v2"),
    ("memcpy_dtoh_async", "cuMemcpyDtoHAsync_v2"),
    ("memcpy_dtod_async", "cuMemcpyDtoDAsync_v2"),
    ("memcpy_peer_async", "cuMemcpyPeerAsync"),
    ("stream::create", "cuStreamCreate"),
    ("stream::destroy", "cuStreamDestroy_v2"),
    ("stream::synchronize", "cuStreamSynchronize"),
    ("stream::query", "cuStreamQuery"),
    ("stream::wait_event", "cuStreamWaitEvent"),
    ("stream::launch_host_function", "cuLaunchHostFunc"),
    ("stream::begin_capture", "cuStreamBeginCapture_v2"),
    ("stream::end_capture", "cuStreamEndCapture"),
    ("graph::instantiate", "cuGraphInstantiateWithFlags"),
    ("graph::launch", "cuGraphLaunch"),
    ("graph::exec_destroy", "cuGraphExecDestroy"),
    ("graph::destroy", "cuGraphDestroy"),
    ("event::create", "cuEventCreate"),
    ("event::record", "cuEventRecord"),
    ("event::synchronize", "cuEventSynchronize"),
    ("event::query", "cuEventQuery"),
    ("event::elapsed", "cuEventElapsedTime"),
    ("event::destroy", "cuEventDestroy_v2"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The driver calls src/ makes: direct `sys::cu*` calls, and those behind
/// the cudarc `result` functions it uses (through `result::` or the
/// `cu::` alias). Panics on a `result` function the table lacks, so that
/// a new one cannot slip past the stand-in.
fn driver_calls_in_src() -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut calls: Vec<String> = Vec::new();
    let mut add = |c: &str| {
        if !calls.iter().any(|x| x == c) {
            calls.push(c.to_string());
        }
    };
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (at, _) in text.match_indices("::") {
            let before = &text[..at];
            let module = &before[before.trim_end_matches(ident).len()..];
            let after = &text[at + 2..];
            let name: String = after.chars().take_while(|&c| ident(c)).collect();
            if (module == "sys" || module == "cusys") && name.starts_with("cu") {
                add(&name);
            }
            if module != "result" && module != "cu" {
                continue;
            }
            let mut path = name.clone();
            if ["device", "primary_ctx", "ctx", "stream", "event", "graph"].contains(&name.as_str()) {
                let rest = &after[name.len()..];
                let Some(rest) = rest.strip_prefix("::") else { continue };
                let second: String = rest.chars().take_while(|&c| ident(c)).collect();
                if !second.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue; // a type, such as stream::StreamKind
                }
                path = format!("{name}::{second}");
            } else if !name.starts_with(|c: char| c.is_ascii_lowercase()) || name == "self" {
                continue; // result::DriverError, result::{...}
            }
            match RESULT_CALLS.iter().find(|(r, _)| *r == path) {
                Some((_, call)) => add(call),
                None => panic!("{} uses cudarc's result::{path}: add its driver call to RESULT_CALLS", f.display()),
            }
        }
    }
    calls
}

#[test]
fn exports_what_commbench_calls() {
    let libs = standin::libraries();
    // SAFETY: the stand-in's initialisers do nothing; symbols are only
    // looked up, never called.
    let (cuda, nccl) =
        unsafe { (libloading::Library::new(&libs.libcuda).unwrap(), libloading::Library::new(&libs.libnccl).unwrap()) };
    let mut driver: Vec<String> = [
        "cuInit",
        "cuDriverGetVersion",
        "cuDeviceGetCount",
        "cuDeviceGet",
        "cuDeviceGetName",
        "cuDeviceGetAttribute",
        "cuDeviceGetPCIBusId",
        "cuDeviceTotalMem_v2",
        "cuDeviceCanAccessPeer",
        "cuDeviceGetP2PAttribute",
        "cuDevicePrimaryCtxRetain",
        "cuDevicePrimaryCtxRelease_v2",
        "cuCtxSetCurrent",
        "cuCtxGetCurrent",
        "cuCtxGetDevice",
        "cuCtxSynchronize",
        "cuCtxEnablePeerAccess",
        "cuCtxDisablePeerAccess",
        "cuMemAlloc_v2",
        "cuMemAllocManaged",
        "cuMemFree_v2",
        "cuMemHostAlloc",
        "cuMemFreeHost",
        "cuMemsetD8_v2",
        "cuMemsetD8Async",
        "cuMemcpyHtoD_v2",
        "cuMemcpyDtoH_v2",
        "cuMemcpyDtoD_v2",
        "cuMemcpyHtoDAsync_v2",
        "cuMemcpyDtoHAsync_v2",
        "cuMemcpyDtoDAsync_v2",
        "cuMemcpyPeerAsync",
        "cuMemcpyAsync",
        "cuStreamCreate",
        "cuStreamDestroy_v2",
        "cuStreamSynchronize",
        "cuStreamQuery",
        "cuStreamWaitEvent",
        "cuLaunchHostFunc",
        "cuEventCreate",
        "cuEventDestroy_v2",
        "cuEventRecord",
        "cuEventSynchronize",
        "cuEventQuery",
        "cuEventElapsedTime",
        "cuGetErrorName",
        "cuGetErrorString",
        // nccl-tests' -G: the timed calls captured into a graph, replayed.
        "cuStreamBeginCapture_v2",
        "cuStreamEndCapture",
        "cuGraphInstantiateWithFlags",
        "cuGraphLaunch",
        "cuGraphExecDestroy",
        "cuGraphDestroy",
    ]
    .map(String::from)
    .to_vec();
    let found = driver_calls_in_src();
    assert!(found.len() >= 35, "too few driver calls found in src/: {found:?}");
    driver.extend(found);
    // SAFETY (both loops): a lookup only reads the symbol table.
    let missing: Vec<&String> =
        driver.iter().filter(|n| unsafe { cuda.get::<*const ()>(n.as_bytes()) }.is_err()).collect();
    assert!(missing.is_empty(), "libcuda stand-in lacks {missing:?}");
    let nccl_calls = [
        "ncclGetVersion",
        "ncclGetUniqueId",
        "ncclCommInitRank",
        "ncclCommInitRankConfig",
        "ncclCommDestroy",
        "ncclCommAbort",
        "ncclCommGetAsyncError",
        "ncclGetErrorString",
        "ncclGetLastError",
        "ncclAllReduce",
        "ncclAllGather",
        "ncclReduceScatter",
        "ncclBroadcast",
        "ncclReduce",
        "ncclSend",
        "ncclRecv",
        "ncclGroupStart",
        "ncclGroupEnd",
        "ncclCommCount",
        "ncclCommUserRank",
        "ncclCommCuDevice",
        "ncclRedOpCreatePreMulSum",
        "ncclRedOpDestroy",
        "ncclAlltoAll",
        "ncclGather",
        "ncclScatter",
        "ncclMemAlloc",
        "ncclMemFree",
        "ncclCommRegister",
        "ncclCommDeregister",
        "ncclCommWindowRegister",
        "ncclCommWindowDeregister",
    ];
    let missing: Vec<&&str> =
        nccl_calls.iter().filter(|n| unsafe { nccl.get::<*const ()>(n.as_bytes()) }.is_err()).collect();
    assert!(missing.is_empty(), "libnccl stand-in lacks {missing:?}");
    // And commbench's own NCCL loader accepts it.
    let env = commbench::gpu::nccl_lib::SearchEnv {
        override_file: Some(libs.libnccl.clone()),
        ..commbench::gpu::nccl_lib::SearchEnv::default()
    };
    let lib = commbench::gpu::nccl_lib::NcclLib::open(commbench::gpu::nccl_lib::find_in(&env).unwrap()).unwrap();
    assert_eq!(lib.version(), (2, 21, 5));
    assert_eq!(lib.error_string(5), "invalid usage");
}

// ----------------------------------------------------- described machines

/// What `cuda_check info` says, by GPU and by ordered pair.
struct Info {
    count: usize,
    gpus: Vec<HashMap<String, String>>,
    peers: HashMap<(usize, usize), HashMap<String, String>>,
}

fn fields(words: &str) -> HashMap<String, String> {
    let (head, name) = words.split_once(" name=").map_or((words, None), |(h, n)| (h, Some(n)));
    let mut f: HashMap<String, String> = head
        .split_whitespace()
        .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    if let Some(n) = name {
        f.insert("name".into(), n.to_string());
    }
    f
}

fn info(gpu: &StandIn, env: &[(&str, &str)]) -> Info {
    let r = ok(gpu, "cuda_check", &["info"], env);
    let count = number(&r.stdout, "count") as usize;
    let mut gpus = Vec::new();
    let mut peers = HashMap::new();
    for l in r.stdout.lines() {
        let mut w = l.splitn(4, ' ');
        match w.next() {
            Some("gpu") => gpus.push(fields(l.splitn(3, ' ').nth(2).unwrap_or(""))),
            Some("peer") => {
                let a: usize = w.next().and_then(|x| x.parse().ok()).unwrap();
                let b: usize = w.next().and_then(|x| x.parse().ok()).unwrap();
                peers.insert((a, b), fields(w.next().unwrap_or("")));
            }
            _ => {}
        }
    }
    assert_eq!(gpus.len(), count);
    assert_eq!(number(&r.stdout, "driver"), 12080.0);
    Info { count, gpus, peers }
}

/// What CUDA says of GPU `ordinal` is what the description says of
/// machine GPU `index`.
fn assert_gpu_matches(
    machine: &commbench::topo::machine::Machine,
    m: &GpuModel,
    got: &HashMap<String, String>,
    i: usize,
) {
    let g = &machine.gpus[i];
    let sysfs = commbench::gpu::cuda::sysfs_bus_id(&got["bus"]);
    assert_eq!(sysfs, g.pci_bus_id, "GPU {i}'s bus id joins the described topology");
    assert_eq!(got["bus"], format!("00000000:{:02X}:00.0", i + 1), "the driver's own form");
    assert_eq!(got.get("name"), g.name.as_ref());
    assert_eq!(got["mem"], m.gpus[i].memory_bytes.unwrap().to_string());
    let (major, minor) = m.gpus[i].compute_capability.unwrap();
    assert_eq!(got["cc"], format!("{major}.{minor}"));
    assert_eq!(got["numa"], g.numa.unwrap().to_string());
    assert_eq!(got["pcibus"], (i + 1).to_string());
}

#[test]
fn configs_of_both_machines_are_what_the_stand_in_reports() {
    for (machine, links) in [("dgx1", 16), ("dgx-h100", 28)] {
        let text = standin::config_text(&standin::description(machine)).unwrap();
        assert_eq!(text.lines().filter(|l| l.starts_with("link=")).count(), links, "{machine}:\n{text}");
        assert!(text.contains("\ngpus=8\n"), "{text}");
        let gpu = standin::stand_in(machine);
        let described = describe::load(&standin::description(machine)).unwrap();
        let m = model(machine);
        let got = info(&gpu, &[]);
        assert_eq!(got.count, 8);
        for i in 0..8 {
            assert_gpu_matches(&described, &m, &got.gpus[i], i);
        }
        assert_eq!(got.peers.len(), 56);
        for ((a, b), p) in &got.peers {
            let l = link(&m, *a, *b);
            let yes = |v: bool| if v { "1" } else { "0" };
            assert_eq!(p["can"], yes(l.is_some()), "{machine} {a}->{b}");
            assert_eq!(p["access"], yes(l.is_some()), "{machine} {a}->{b}");
            let nvlink = matches!(l, Some(GpuLinkKind::NvLink(_)));
            assert_eq!(p["atomics"], yes(nvlink), "{machine} {a}->{b}");
            assert_eq!(p["array"], yes(nvlink), "{machine} {a}->{b}");
            assert_eq!(p["rank"], "0", "{machine} {a}->{b}");
        }
    }
    // DGX-1's cube mesh, spot checks against the brief's table.
    let m = model("dgx1");
    assert_eq!(link(&m, 0, 3), Some(GpuLinkKind::NvLink(2)));
    assert_eq!(link(&m, 6, 2), Some(GpuLinkKind::NvLink(1)));
    assert_eq!(link(&m, 0, 5), None);
    assert!(model("dgx-h100").links.iter().all(|l| l.kind == GpuLinkKind::NvLink(18)));
    // A description without GPU rates cannot be a stand-in machine.
    let e = standin::config_text(&standin::description("epyc-hdr")).unwrap_err();
    assert!(e.ends_with("epyc-hdr.json has no gpu_rates"), "{e}");
}

#[test]
fn visible_devices_renumber_and_no_machine_means_no_device() {
    let gpu = standin::stand_in("dgx1");
    let described = describe::load(&standin::description("dgx1")).unwrap();
    let m = model("dgx1");
    let got = info(&gpu, &[("CUDA_VISIBLE_DEVICES", "5,2")]);
    assert_eq!(got.count, 2);
    assert_gpu_matches(&described, &m, &got.gpus[0], 5);
    assert_gpu_matches(&described, &m, &got.gpus[1], 2);
    assert_eq!(got.peers[&(0, 1)]["can"], "0", "5 and 2 are on different sockets without a link");
    let got = info(&gpu, &[("CUDA_VISIBLE_DEVICES", "7, 3")]);
    assert_eq!(got.peers[&(1, 0)]["can"], "1", "3-7 is an NVLink");
    assert_eq!(info(&gpu, &[("CUDA_VISIBLE_DEVICES", "1,x,2")]).count, 1, "the list stops at what is not a GPU");
    assert_eq!(info(&gpu, &[("CUDA_VISIBLE_DEVICES", "4,4")]).count, 1, "and at a repeat");
    assert_eq!(info(&gpu, &[("CUDA_VISIBLE_DEVICES", "2,9,1")]).count, 1, "and at a GPU the machine lacks");
    let none = ok(&gpu, "cuda_check", &["init"], &[("CUDA_VISIBLE_DEVICES", "")]);
    assert_eq!(none.stdout.trim(), "init 100 CUDA_ERROR_NO_DEVICE count -1");
    assert_eq!(none.stderr, "");
    let absent = ok(&gpu, "cuda_check", &["init"], &[(standin::MACHINE_VAR, "")]);
    assert_eq!(absent.stdout.trim(), "init 100 CUDA_ERROR_NO_DEVICE count -1");
    let unreadable = ok(&gpu, "cuda_check", &["init"], &[(standin::MACHINE_VAR, "/nonexistent/machine.conf")]);
    assert_eq!(unreadable.stdout.trim(), "init 100 CUDA_ERROR_NO_DEVICE count -1");
    assert_eq!(
        unreadable.stderr.trim(),
        "cuda stand-in: cannot read the machine file /nonexistent/machine.conf (COMMBENCH_STANDIN_MACHINE): No such \
         file or directory"
    );
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "gpus=1\nrate.warp_gbs=3\n").unwrap();
    let r = ok(&gpu, "cuda_check", &["init"], &[(standin::MACHINE_VAR, bad.path().to_str().unwrap())]);
    assert!(r.stderr.trim().ends_with(":2: unknown key 'rate.warp_gbs'"), "{}", r.stderr);
}

// ----------------------------------------------------------------- memory

#[test]
fn device_pointers_fault_on_the_host() {
    let gpu = standin::stand_in("dgx1");
    let mut cmd = Command::new(program("cuda_check"));
    cmd.arg("deref");
    gpu.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("device pointer 0x4"), "{stdout}");
    assert!(!stdout.contains("the host read device memory"), "{stdout}");
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{:?}: {stdout}", out.status);
}

#[test]
fn copies_are_bounds_checked_and_memory_is_capped() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["bounds"], &[]);
    assert_eq!(r.stdout.trim(), "bounds ok");
    let r = ok(&gpu, "cuda_check", &["oom"], &[]);
    assert_eq!(number(&r.stdout, "oom total"), (16u64 << 30) as f64);
    let h100 = standin::stand_in("dgx-h100");
    let r = ok(&h100, "cuda_check", &["oom"], &[]);
    assert_eq!(number(&r.stdout, "oom total"), (80u64 << 30) as f64);
}

// ------------------------------------------------------------- streams

#[test]
fn streams_reorder_as_cuda_allows_and_no_more() {
    let gpu = standin::stand_in("dgx1");
    // A large time scale fixes each race's outcome (see cmd_order).
    let r = ok(&gpu, "cuda_check", &["order"], &[("COMMBENCH_STANDIN_TIME_SCALE", "1000")]);
    let stale = |what: &str| number(&r.stdout, &format!("stale {what}")) as u32;
    // Missing synchronisation shows: a non-blocking stream reads before
    // the legacy stream's work has landed (at least once in three).
    assert!(stale("htod-pageable then non-blocking") >= 1, "{}", r.stdout);
    assert!(stale("memset then non-blocking") >= 1, "{}", r.stdout);
    assert!(stale("non-blocking then legacy") >= 1, "{}", r.stdout);
    // What CUDA orders stays ordered.
    assert_eq!(stale("htod-pageable synchronised"), 0, "{}", r.stdout);
    assert_eq!(stale("memset then blocking"), 0, "{}", r.stdout);
    assert_eq!(stale("blocking then legacy"), 0, "{}", r.stdout);
    assert_eq!(stale("across an event"), 0, "{}", r.stdout);
    assert_eq!(line(&r.stdout, "query"), "query busy 600 600 idle 0 0");
    assert_eq!(r.stderr, "");
}

/// Work that waits for other work starts, on the event clock, where that
/// work ended, also when it was done before the wait was queued (a busy
/// host queues late). Found by gpu-bw's two-way timing on a loaded
/// machine: its second stream, once ahead of the timing stream's clock,
/// added the difference to the timing.
#[test]
fn waits_order_the_event_clock_even_after_the_work_is_done() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["clock"], &[]);
    assert_eq!(r.stdout, "wait-done 0.000\nwait-pending 0.000\nlegacy-done 0.000\n");
    assert_eq!(r.stderr, "");
}

#[test]
fn copy_rates_follow_the_description() {
    let gpu = standin::stand_in("dgx1");
    let rates = model("dgx1").rates.unwrap();
    let n = (32u64 << 20) as f64;
    // GB/s of one copy of n bytes at `rate`, its launch latency included.
    let modelled = |rate: f64| n / (rates.copy_latency_us * 1e3 + n / rate);
    for scale in [1.0, 3.0] {
        let s = scale.to_string();
        let r = ok(&gpu, "cuda_check", &["timing"], &[("COMMBENCH_STANDIN_TIME_SCALE", &s)]);
        let got = |k: &str| number(&r.stdout, k);
        assert_close(got("h2d_pinned_gbs"), rates.h2d_pinned_gbs / scale, 0.01, "H2D pinned, event-timed");
        for (key, rate) in [
            ("h2d_pinned_gbs", rates.h2d_pinned_gbs),
            ("d2h_pinned_gbs", rates.d2h_pinned_gbs),
            ("d2d_gbs", rates.d2d_gbs),
            ("peer_0_3_off_gbs", rates.staged_peer_gbs),
            ("peer_0_3_on_gbs", 2.0 * rates.nvlink_gbs),
        ] {
            assert_close(got(key), modelled(rate) / scale, 0.002, key);
        }
        // Host-timed synchronous copies are never faster than the model.
        let at_least = |key: &str, rate: f64| {
            let model_s = scale * (rates.copy_latency_us * 1e-6 + n / (rate * 1e9));
            assert!(got(key) >= model_s, "{key}: {} s is faster than the modelled {model_s} s", got(key));
        };
        at_least("host_h2d_pinned_s", rates.h2d_pinned_gbs);
        at_least("host_h2d_pageable_s", rates.h2d_pageable_gbs);
        at_least("host_d2h_pageable_s", rates.d2h_pageable_gbs);
        assert_eq!(got("peer_0_5_enable"), 217.0, "GPUs 0 and 5 have no peer access");
        assert_eq!(
            r.stderr.trim(),
            "cuda stand-in: cuMemcpyDtoDAsync: the stream belongs to GPU 0's context but GPU 3's is current"
        );
    }
}

/// Stream capture and graph replay (nccl-tests' `-G`): captured work runs
/// only when launched, once per launch, each launch taking the model's
/// time; what CUDA forbids during a capture is refused and invalidates it,
/// and what the stand-in does not model says so.
#[test]
fn captured_graphs_replay_only_when_launched() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["capture"], &[]);
    let out = &r.stdout;
    // Nothing ran at capture; each launch memsets and copies again.
    assert_eq!(line(out, "before "), "before 1 1 2 2", "{out}");
    assert_eq!(line(out, "first "), "first 7 7", "{out}");
    assert_eq!(line(out, "second "), "second 7 7 7 7", "{out}");
    assert_eq!(line(out, "hostfn "), "hostfn 0 3", "{out}");
    // Between an event recorded before the capture and one after the
    // second launch, the stream's clock moved by two runs of a 32 MiB
    // memset and a 32 MiB copy within the GPU: the capture took none.
    let rates = model("dgx1").rates.unwrap();
    let one_ns = rates.copy_latency_us * 1e3 + (32u64 << 20) as f64 / rates.d2d_gbs;
    assert_close(number(out, "graph_ms"), 2.0 * 2.0 * one_ns / 1e6, 0.001, "two launches of the graph");
    let refusals = [
        "legacy_begin 900",
        "sync 900 query 900 then 901 end 901 graph null",
        "wrong_thread 908 end 0",
        "relaxed_other_thread 0",
        "end_without_begin 401",
        "double_begin 401 end 0",
        "alloc 900 end 901",
        "alloc_other_thread 0 end 0",
        "alloc_other_thread_global 900 end 901",
        "alloc_relaxed 0 end 0",
        "ctx_sync 900 end 901",
        "legacy_work 900 end 901",
        "legacy_work_non_blocking 0 end 0",
        "record 900 then 901 end 901",
        "pageable 900 end 901",
        "launch_other_gpu 1 into_capture 900 end 901",
        "destroy_capturing 0 end 400",
        "empty 0",
        "handles 1 1 1 1 1 1 1",
    ];
    for want in refusals {
        let key = want.split_whitespace().next().unwrap();
        assert_eq!(line(out, &format!("{key} ")), want, "{out}");
    }
    for want in [
        "error 401 CUDA_ERROR_ILLEGAL_STATE: the operation cannot be performed in the present state",
        "error 900 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: operation not permitted when stream is capturing",
        "error 901 CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation failed due to a previous error during capture",
        "error 908 CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: attempt to terminate a thread-local capture sequence from \
         another thread",
    ] {
        assert!(out.lines().any(|l| l == want), "no '{want}' in:\n{out}");
    }
    // One line per invalidating refusal, misuse or what is not modelled,
    // in order; none for the rest.
    let said: Vec<&str> = r.stderr.lines().collect();
    let expected = [
        "cuStreamSynchronize: not permitted on a capturing stream",
        "cuStreamQuery: not permitted on a capturing stream",
        "cuMemAlloc: not permitted while this thread captures a stream",
        "cuMemAlloc: not permitted while this thread captures a stream",
        "cuCtxSynchronize: not permitted while this thread captures a stream",
        "work queued on GPU 0's legacy stream would synchronise with a capturing blocking stream",
        "cuEventRecord: an event record is not modelled in a stream capture",
        "a copy involving pageable host memory (staged, or waited for) is not modelled in a stream capture",
        "cuGraphLaunch: the graph was captured on GPU 0's context but the stream belongs to GPU 1's",
        "cuGraphLaunch: a graph in a graph is not modelled in a stream capture",
        "a stream of GPU 0 was destroyed while capturing",
    ];
    assert_eq!(said.len(), expected.len(), "{}", r.stderr);
    for (got, want) in said.iter().zip(expected) {
        assert!(got.starts_with(&format!("cuda stand-in: {want}")), "'{got}' does not start with '{want}'");
    }
}

#[test]
fn cuda_failure_injection_is_sticky() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["sticky"], &[("COMMBENCH_STANDIN_CUDA_FAIL", "after=3")]);
    assert_eq!(r.stdout.trim(), "sticky 719 CUDA_ERROR_LAUNCH_FAILED query 719 sync 719 ctx 719 alloc 719");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("cuda stand-in: injected failure (COMMBENCH_STANDIN_CUDA_FAIL)"), "{}", r.stderr);
    let r = ok(&gpu, "cuda_check", &["sticky"], &[("COMMBENCH_STANDIN_CUDA_FAIL", "after=3,code=700")]);
    assert!(r.stdout.starts_with("sticky 700 CUDA_ERROR_ILLEGAL_ADDRESS query 700"), "{}", r.stdout);
}

/// Modules define only what their image defines and the stand-in knows;
/// a kernel's out-of-range pointer is CUDA_ERROR_ILLEGAL_ADDRESS at the
/// next synchronisation (the launch itself succeeds) and sticks.
#[test]
fn kernel_modules_and_launch_faults() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["kernels"], &[]);
    assert_eq!(
        r.stdout.trim(),
        "unknown 500\nundefined 500\nblock 1025 1\noverrun launch 0 sync 700 after 700",
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("commbench_copy_simple's dst") && r.stderr.contains("CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{}",
        r.stderr
    );
}

/// The occupancy calculator (cuOccupancyMaxPotentialBlockSize) on a V100
/// of 80 SMs: 1024-thread blocks, two per SM, fill it; a block limit of
/// 100 ends at 64-thread blocks, 32 per SM (the slot limit); 40,000 bytes
/// of shared memory per block still fit two 1024-thread blocks in 96 KiB;
/// 64 bytes per thread (asked per block size) keep three quarters of the
/// threads at best, first reached with 768-thread blocks; over 48 KiB per
/// block nothing runs; a handle that is no function is 400.
#[test]
fn the_occupancy_calculator_fills_the_sms() {
    let gpu = standin::stand_in("dgx1");
    let r = ok(&gpu, "cuda_check", &["occupancy"], &[]);
    assert_eq!(
        r.stdout.trim(),
        "plain 160 1024\nlimit 100 2560 64\nsmem 40000 160 1024\nsmem per thread 160 768\nsmem 60000 0 0\n\
         bad handle 400 null 1",
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr, "");
}

/// A malformed COMMBENCH_STANDIN_CORRUPT is one line and corrupts
/// nothing (tests/it/kernels.rs runs copies under it).
#[test]
fn a_malformed_corrupt_switch_is_one_line() {
    let gpu = standin::stand_in("dgx1");
    for bad in ["0", "x", "1,2"] {
        let r = ok(&gpu, "cuda_check", &["init"], &[("COMMBENCH_STANDIN_CORRUPT", bad)]);
        assert_eq!(
            r.stderr.trim(),
            format!(
                "cuda stand-in: COMMBENCH_STANDIN_CORRUPT={bad}: expected a copy's number N (1 or more); nothing \
                 corrupted"
            )
        );
    }
}

// ------------------------------------------------------------------ NCCL

fn nccl(gpu: &StandIn, what: &str, ranks: usize, env: &[(&str, &str)]) -> Run {
    let r = ok(gpu, "nccl_check", &[what, &ranks.to_string()], env);
    assert_eq!(line(&r.stdout, "version"), format!("version 22105 ranks {ranks} ok"));
    r
}

/// Lines `rank R <key> ...` of every rank, by rank (without `rank R `).
fn per_rank<'a>(r: &'a Run, key: &str) -> Vec<(usize, &'a str)> {
    let mut v: Vec<(usize, &str)> = r
        .stdout
        .lines()
        .filter_map(|l| {
            let (rank, tail) = l.strip_prefix("rank ")?.split_once(' ')?;
            if !tail.starts_with(key) {
                return None;
            }
            Some((rank.parse().ok()?, tail))
        })
        .collect();
    v.sort();
    v
}

/// The described peer rate between two machine GPUs in GB/s, as the
/// stand-in models NCCL's traffic: the NVLinks', PCIe's, or staged.
fn pair_gbs(m: &GpuModel, a: usize, b: usize) -> f64 {
    let r = m.rates.as_ref().unwrap();
    match link(m, a, b) {
        Some(GpuLinkKind::NvLink(n)) => f64::from(n) * r.nvlink_gbs,
        Some(GpuLinkKind::Pcie) => r.pcie_peer_gbs,
        None => r.staged_peer_gbs,
    }
}

#[test]
fn nccl_computes_every_collective_across_processes() {
    // Three ranks on DGX-H100 with each rank alone on its GPU through
    // CUDA_VISIBLE_DEVICES (ordinal 0 everywhere): NCCL tells the GPUs
    // apart by the machine's numbering.
    for ranks in 1..=4 {
        let (machine, env): (&str, &[(&str, &str)]) =
            if ranks == 3 { ("dgx-h100", &[("STANDIN_VISIBLE_PER_RANK", "1")]) } else { ("dgx1", &[]) };
        let r = nccl(&standin::stand_in(machine), "values", ranks, env);
        let checked = per_rank(&r, "checked");
        assert_eq!(checked.len(), ranks, "{}", r.stdout);
        assert_eq!(r.stderr, "", "no noise from correct use");
    }
}

#[test]
fn nccl_times_give_the_slowest_ring_link_as_busbw() {
    // (machine, the machine GPUs of ranks 0.., bytes, R: the slowest link
    // between ring neighbours in GB/s)
    let cases: [(&str, &[usize], &str, f64); 3] = [
        ("dgx1", &[0, 1, 2, 3], "8388608", 25.0), // 0-1 has one NVLink, the rest of the ring two
        ("dgx1", &[0, 5], "8388608", 8.0),        // across the sockets: staged through the host
        ("dgx-h100", &[4, 6], "33554432", 450.0), // NVSwitch: 18 links of 25 GB/s
    ];
    for (machine, gpus, bytes, ring) in cases {
        let gpu = standin::stand_in(machine);
        let m = model(machine);
        let lat = m.rates.as_ref().unwrap().nccl_latency_us * 1e-6;
        let ranks = gpus.len();
        let slowest = (0..ranks).map(|i| pair_gbs(&m, gpus[i], gpus[(i + 1) % ranks])).fold(f64::MAX, f64::min);
        assert_eq!(slowest, ring, "{machine} {gpus:?}");
        let visible: Vec<String> = gpus.iter().map(|g| g.to_string()).collect();
        let visible = visible.join(",");
        let r = nccl(&gpu, "busbw", ranks, &[("CUDA_VISIBLE_DEVICES", &visible), ("STANDIN_BYTES", bytes)]);
        let n = ranks as f64;
        for (kind, link_factor) in [
            ("allreduce", 2.0 * (n - 1.0) / n),
            ("allgather", (n - 1.0) / n),
            ("reduce_scatter", (n - 1.0) / n),
            ("broadcast", 1.0),
            ("reduce", 1.0),
            ("alltoall", (n - 1.0) / n),
        ] {
            let lines = per_rank(&r, &format!("busbw {kind} "));
            assert_eq!(lines.len(), ranks, "{}", r.stdout);
            for (rank, l) in &lines {
                let w: Vec<&str> = l.split_whitespace().collect();
                let (busbw, size): (f64, f64) = (w[2].parse().unwrap(), w[4].parse().unwrap());
                // The model: NCCL's latency plus the bytes on a rank's
                // link over R, so that with nccl-tests' bus factor busbw
                // is R but for the latency's share. An all-to-all sends a
                // block to each peer over its own pair's rate; the
                // slowest rank sets the pace.
                let link_s = if kind == "alltoall" {
                    (0..ranks)
                        .map(|me| {
                            (0..ranks)
                                .filter(|&p| p != me)
                                .map(|p| size / n / (pair_gbs(&m, gpus[me], gpus[p]) * 1e9))
                                .sum::<f64>()
                        })
                        .fold(0.0, f64::max)
                } else {
                    size * link_factor / (ring * 1e9)
                };
                let want = size * link_factor / (link_s + lat) / 1e9;
                assert_close(busbw, want, 0.002, &format!("{machine} {kind} rank {rank}"));
                if kind != "alltoall" {
                    // Without NCCL's latency, busbw is R itself.
                    let seconds: f64 = w[6].parse().unwrap();
                    let bare = size * link_factor / (seconds - lat) / 1e9;
                    assert_close(bare, ring, 0.002, &format!("{machine} {kind} rank {rank}, latency aside"));
                }
            }
        }
    }
    // Host-timed, slowed a thousand times (so that a host that did not wait
    // for the modelled end would be far faster): never faster than the
    // rate over the scale. On an idle machine it is that rate to within a
    // few percent; load only lowers it, so nothing is asked from below.
    let gpu = standin::stand_in("dgx1");
    let r = nccl(
        &gpu,
        "busbw",
        2,
        &[("STANDIN_BYTES", "1048576"), ("COMMBENCH_STANDIN_TIME_SCALE", "1000"), ("STANDIN_HOST_TIMED", "1")],
    );
    for (rank, l) in per_rank(&r, "hostbw allreduce") {
        let busbw: f64 = l.split_whitespace().nth(2).unwrap().parse().unwrap();
        let link_s = 1048576.0 / 25e9;
        let want = 25.0 / 1000.0 * link_s / (link_s + 12e-6);
        assert!(busbw <= want * 1.001, "rank {rank}: host-timed {busbw} GB/s, faster than the model's {want}");
    }
}

#[test]
fn nccl_corruption_is_injected_where_asked() {
    let gpu = standin::stand_in("dgx1");
    let r = nccl(&gpu, "corrupt", 2, &[("COMMBENCH_STANDIN_NCCL_CORRUPT", "rank=1,op=2")]);
    let wrong = per_rank(&r, "op ");
    let want: Vec<(usize, &str)> = vec![
        (0, "op 1 wrong 0"),
        (0, "op 2 wrong 0"),
        (0, "op 3 wrong 0"),
        (1, "op 1 wrong 0"),
        (1, "op 2 wrong 1"),
        (1, "op 3 wrong 1"),
    ];
    assert_eq!(wrong, want, "{}", r.stdout);
}

#[test]
fn nccl_failure_hangs_its_stream_until_abort() {
    let gpu = standin::stand_in("dgx1");
    let r = nccl(&gpu, "fail", 2, &[("COMMBENCH_STANDIN_NCCL_FAIL", "rank=1,op=2")]);
    // The failed rank: busy, an asynchronous system error saying it was
    // injected; its peer: waiting for it, no error, as on NCCL.
    assert_eq!(per_rank(&r, "busy"), vec![(0, "busy 600 async 0 injected 0"), (1, "busy 600 async 2 injected 1")]);
    for (rank, l) in per_rank(&r, "drained") {
        let s: f64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
        // A hang limit (the stand-in looks for an abort every 20 ms).
        let limit = common::under_load(Duration::from_secs(1)).as_secs_f64();
        assert!(s < limit, "rank {rank}'s stream took {s} s to drain after ncclCommAbort");
    }
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("nccl stand-in: injected failure (COMMBENCH_STANDIN_NCCL_FAIL=rank=1,op=2)"));
}

#[test]
fn nccl_refuses_misuse_as_nccl_does() {
    let gpu = standin::stand_in("dgx1");
    // Two ranks on one GPU.
    let r = nccl(&gpu, "dup", 2, &[("STANDIN_GPU_MAP", "0,0")]);
    assert_eq!(per_rank(&r, "init"), vec![(0, "init 5 duplicate 1"), (1, "init 5 duplicate 1")]);
    assert!(r.stderr.contains("duplicate GPU: ranks 0 and 1 are both on GPU 0 (0000:01:00.0)"), "{}", r.stderr);
    // Mismatched collectives: both ranks hold an error naming both calls,
    // and the communicator refuses further work.
    let r = nccl(&gpu, "mismatch", 2, &[]);
    assert_eq!(
        per_rank(&r, "collective"),
        vec![(0, "collective async 5 names 1 next 5"), (1, "collective async 5 names 1 next 5")]
    );
    assert!(
        r.stderr.contains(
            "rank 0 called ncclAllReduce(count 1024, int32, sum) but rank 1 called ncclBroadcast(count 1024, int32, \
             root 0)"
        ),
        "{}",
        r.stderr
    );
    // A send and a receive of different sizes.
    let r = nccl(&gpu, "p2p-mismatch", 2, &[]);
    assert_eq!(per_rank(&r, "p2p"), vec![(0, "p2p async 5 sizes 1"), (1, "p2p async 5 sizes 1")]);
    // Call-time checks: too small, host memory, bad type, root, peer,
    // allgather output too small; ncclGroupEnd alone; count 0 is a no-op.
    let r = nccl(&gpu, "args", 2, &[]);
    for (_, l) in per_rank(&r, "args") {
        assert_eq!(l, "args 4 4 4 4 4 4 5 0");
    }
    assert_eq!(r.stderr.lines().filter(|l| l.starts_with("nccl stand-in: ")).count(), 14, "{}", r.stderr);
}

/// NCCL calls captured into a graph (nccl-tests' `-G`) run on every
/// launch, matched across ranks as called: K = 3 captured in-place sums
/// launched L = 2 times are six sums. The call log has each call once and
/// each replay once per launch; the graph's templates let
/// ncclCommDestroy go quietly once destroyed.
#[test]
fn nccl_calls_captured_in_a_graph_replay_on_every_launch() {
    let gpu = standin::stand_in("dgx1");
    for ranks in [2usize, 4] {
        let log = tempfile::NamedTempFile::new().unwrap();
        let path = log.path().to_str().unwrap();
        let r = nccl(&gpu, "graph", ranks, &[("COMMBENCH_STANDIN_NCCL_CALLS", path)]);
        let n = ranks as f64;
        let want = n * (n + 1.0) / 2.0 * n.powi(5);
        let got = per_rank(&r, "graph");
        assert_eq!(got.len(), ranks, "{}", r.stdout);
        for (rank, l) in got {
            assert_eq!(l, format!("graph {want}"), "rank {rank}");
        }
        assert_eq!(r.stderr, "", "no noise from correct use");
        let text = std::fs::read_to_string(log.path()).unwrap();
        for rank in 0..ranks {
            let of = |kind: &str| -> Vec<String> {
                let mut v: Vec<String> = text
                    .lines()
                    .filter_map(|l| l.strip_prefix(&format!("nccl stand-in: {kind}: ")))
                    .filter(|l| l.split_whitespace().nth(3) == Some(&rank.to_string()))
                    .map(String::from)
                    .collect();
                v.dedup();
                v
            };
            let (calls, replays) = (of("call"), of("replay"));
            let count = |kind: &str| {
                text.lines()
                    .filter(|l| {
                        l.starts_with(&format!("nccl stand-in: {kind}: "))
                            && l.contains(&format!(" rank {rank} ncclAllReduce float32 count 4096 "))
                    })
                    .count()
            };
            assert_eq!((count("call"), count("replay")), (3, 6), "rank {rank}:\n{text}");
            // A replay logs what its call logged.
            assert_eq!(calls, replays, "rank {rank}:\n{text}");
        }
    }
}

#[test]
fn nccl_moves_a_gibibyte_through_bounded_shared_memory() {
    let gpu = standin::stand_in("dgx1");
    let r = nccl(&gpu, "big", 2, &[]);
    assert_eq!(per_rank(&r, "big"), vec![(0, "big ok"), (1, "big ok")]);
}

#[test]
fn stand_in_env_points_at_the_build() {
    let gpu = standin::stand_in("dgx-h100");
    let env: HashMap<String, String> = gpu.env().into_iter().collect();
    assert!(env["LD_LIBRARY_PATH"].starts_with(gpu.libraries.dir.to_str().unwrap()));
    assert!(Path::new(&env["COMMBENCH_NCCL"]).ends_with("libnccl.so.2"));
    assert!(Path::new(&env[standin::MACHINE_VAR]).exists());
    assert!(gpu.libraries.dir.join("libcuda.so").exists() && gpu.libraries.dir.join("libnccl.so").exists());
}
