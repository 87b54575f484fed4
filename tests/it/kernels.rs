//! The SM copy and latency kernels (src/gpu/kernels.cu): compiled by the
//! real NVRTC for every architecture we claim, each PTX checked by the
//! real ptxas (both from pip's wheels in target/cuda-venv, which
//! scripts/setup.sh installs), the library search that finds them, and
//! the kernels run end to end by `gpu_bw::kernels::Kernels` on the GPU
//! stand-in: the real NVRTC compiles, the stand-in loads the image and
//! runs each launch's semantics on host memory with a modelled (virtual,
//! exact) device clock.
//!
//! The end-to-end checks need the stand-in as this process's libcuda,
//! which the dynamic loader only takes from `LD_LIBRARY_PATH` at start:
//! each runs in a child process of this test binary (an ignored test,
//! started by its parent with the stand-in's variables).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use commbench::gpu::lib_search::SearchEnv;
use commbench::gpu::nvrtc_lib::{self, CompiledImage, NVRTC_LIBRARY};
use commbench::gpu_bw::driver::{self, Device, DeviceBuffer, Event, PeerAccess, PinnedBuffer, Stream};
use commbench::gpu_bw::kernels::{Kernels, ENTRY_POINTS, SOURCE, SOURCE_NAME};

use crate::common::run_cmd;
use crate::common::standin;

/// The virtual environment scripts/setup.sh fills with the NVRTC and nvcc
/// wheels (`COMMBENCH_CUDA_VENV` moves it, as in setup.sh).
fn cuda_venv() -> PathBuf {
    std::env::var_os("COMMBENCH_CUDA_VENV")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/cuda-venv"))
}

/// `<venv>/lib/python3*/site-packages/<below>`, which must exist: else the
/// test fails saying to run scripts/setup.sh (CI runs it first).
fn in_venv(below: &str) -> PathBuf {
    let venv = cuda_venv();
    let found = std::fs::read_dir(venv.join("lib"))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages").join(below))
        .find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!(
            "{below} is not in {} (lib/python3*/site-packages): run scripts/setup.sh, which installs pip's \
             nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12 there (COMMBENCH_CUDA_VENV moves it)",
            venv.display()
        )
    })
}

pub(crate) fn libnvrtc() -> PathBuf {
    in_venv("nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
}

fn ptxas() -> PathBuf {
    in_venv("nvidia/cuda_nvcc/bin/ptxas")
}

/// A search environment with nothing but what the test names: no system
/// places (they are below an empty scratch root).
fn bare(t: &Path) -> SearchEnv {
    SearchEnv { root: t.join("empty-root"), ..SearchEnv::default() }
}

#[test]
fn the_search_finds_the_wheels_nvrtc_in_a_virtual_environment() {
    let lib = libnvrtc();
    let t = tempfile::tempdir().unwrap();
    let env = SearchEnv { virtual_env: Some(cuda_venv()), ..bare(t.path()) };
    let nvrtc = nvrtc_lib::find_in(&env).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(nvrtc.path(), lib);
    assert_eq!(nvrtc.version(), (12, 9));
    // And through $PYTHONPATH naming the site-packages directory.
    let site = lib.ancestors().nth(4).unwrap().to_path_buf();
    let env = SearchEnv { pythonpath: Some(site.into_os_string()), ..bare(t.path()) };
    assert_eq!(nvrtc_lib::find_in(&env).unwrap().path(), lib);
}

#[test]
fn commbench_nvrtc_naming_a_missing_file_is_one_line() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("no/libnvrtc.so.12");
    // The venv would have it: the override is used alone.
    let env = SearchEnv { override_file: Some(missing.clone()), virtual_env: Some(cuda_venv()), ..bare(t.path()) };
    let e = nvrtc_lib::find_in(&env).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.starts_with(&format!("NVRTC is not available: COMMBENCH_NVRTC={} does not load (", missing.display())),
        "{e}"
    );
    // The snapshot reads COMMBENCH_NVRTC, and NCCL's variables do not count.
    let vars = [("COMMBENCH_NVRTC", "/x/libnvrtc.so.12"), ("COMMBENCH_NCCL", "/y"), ("NCCL_HOME", "/n")];
    let env = SearchEnv::from_vars(&NVRTC_LIBRARY, |n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.into()));
    assert_eq!(env.override_file, Some(PathBuf::from("/x/libnvrtc.so.12")));
    assert_eq!(env.library_home, None);
}

/// `.entry NAME` lines of a PTX text.
fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.split(".entry").nth(1))
        .map(|rest| rest.trim().trim_end_matches('(').trim().to_string())
        .collect()
}

#[test]
fn the_kernels_compile_for_every_architecture_and_ptxas_accepts_them() {
    let t = tempfile::tempdir().unwrap();
    let env = SearchEnv { override_file: Some(libnvrtc()), ..bare(t.path()) };
    let nvrtc = nvrtc_lib::find_in(&env).unwrap_or_else(|e| panic!("{e}"));
    let archs = nvrtc.supported_archs().expect("NVRTC 12.9 lists its architectures");
    let ptxas = ptxas();
    for cc in [70, 80, 90] {
        assert!(archs.contains(&cc), "{archs:?}");
        let ptx = match nvrtc.compile(SOURCE, SOURCE_NAME, &[format!("-arch=compute_{cc}").as_str()]) {
            Ok(CompiledImage::Ptx(p)) => p,
            other => panic!("compute_{cc}: {other:?}"),
        };
        assert_eq!(ptx.last(), Some(&0), "PTX is NUL-terminated for cuModuleLoadData");
        let text = String::from_utf8(ptx[..ptx.len() - 1].to_vec()).unwrap();
        let mut entries = ptx_entries(&text);
        entries.sort();
        let mut want: Vec<String> = ENTRY_POINTS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(entries, want, "compute_{cc}");
        let file = t.path().join(format!("kernels_{cc}.ptx"));
        std::fs::write(&file, &text).unwrap();
        let out = Command::new(&ptxas)
            .arg(format!("-arch=sm_{cc}"))
            .arg(&file)
            .args(["-o", "/dev/null"])
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", ptxas.display()));
        assert!(out.status.success(), "ptxas sm_{cc}: {}", String::from_utf8_lossy(&out.stderr));

        let cubin = match nvrtc.compile(SOURCE, SOURCE_NAME, &[format!("-arch=sm_{cc}").as_str()]) {
            Ok(CompiledImage::Cubin(c)) => c,
            other => panic!("sm_{cc}: {other:?}"),
        };
        assert_eq!(&cubin[..4], b"\x7fELF", "sm_{cc}");
        for name in ENTRY_POINTS {
            let z = format!("\0{name}\0");
            assert!(cubin.windows(z.len()).any(|w| w == z.as_bytes()), "sm_{cc} lacks {name}");
        }
    }
    // A compile error is one line: the log's first error.
    let e = nvrtc.compile("extern \"C\" __global__ void k() { undefined_thing(); }", "bad.cu", &[]).unwrap_err();
    let line = e.to_string();
    assert!(line.starts_with("NVRTC could not compile bad.cu: ") && line.contains("undefined_thing"), "{line}");
    assert!(!line.contains('\n') && e.log().is_some_and(|l| l.contains("error")), "{line}");
}

// ------------------------------------------------------------- end to end

/// Runs the ignored test `name` of this binary in a child process with
/// the stand-in (dgx1: V100s, 80 SMs) as its libcuda and the wheel's
/// NVRTC, plus `env`; its output on failure.
fn child(name: &str, env: &[(&str, &str)]) {
    let gpu = standin::stand_in("dgx1");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([&format!("kernels::{name}"), "--exact", "--ignored", "--nocapture", "--test-threads=1"]);
    for var in [
        "CUDA_VISIBLE_DEVICES",
        "COMMBENCH_STANDIN_TIME_SCALE",
        "COMMBENCH_STANDIN_CUDA_FAIL",
        "COMMBENCH_STANDIN_CORRUPT",
    ] {
        cmd.env_remove(var);
    }
    gpu.apply(&mut cmd);
    cmd.env("COMMBENCH_NVRTC", libnvrtc());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert!(
        !r.timed_out && r.code == Some(0) && r.stdout.contains("1 passed"),
        "{name} failed:\nstdout:\n{}\nstderr:\n{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn kernels_copy_fill_count_and_chase_on_the_standin() {
    child("standin_kernels", &[]);
    // A malformed corruption switch corrupts nothing: every check holds.
    child("standin_kernels", &[("COMMBENCH_STANDIN_CORRUPT", "first")]);
}

#[test]
fn a_corrupted_copy_is_counted_as_one_wrong_word() {
    // The first copy is a copy kernel, the second a driver copy, the
    // fourth the grid-stride kernel.
    child("standin_corrupt", &[("COMMBENCH_STANDIN_CORRUPT", "1")]);
    child("standin_corrupt", &[("COMMBENCH_STANDIN_CORRUPT", "2")]);
    child("standin_corrupt", &[("COMMBENCH_STANDIN_CORRUPT", "4")]);
}

/// Opens GPU `ordinal` of the stand-in (the child's libcuda).
fn open(ordinal: usize) -> Device {
    assert!(driver::driver_present(), "the stand-in's libcuda did not load");
    driver::init().unwrap();
    Device::open(ordinal).unwrap()
}

/// `n` bytes of a pattern seeded by `seed`.
fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8).collect()
}

fn upload(dev: &Device, buf: &DeviceBuffer, data: &[u8]) {
    dev.make_current().unwrap();
    driver::copy_htod_pageable(buf, data).unwrap();
}

fn download(dev: &Device, buf: &DeviceBuffer) -> Vec<u8> {
    dev.make_current().unwrap();
    let mut out = vec![0u8; buf.bytes];
    driver::copy_dtoh_pageable(&mut out, buf).unwrap();
    out
}

/// The modelled nanoseconds between two events around `queue`.
fn timed(dev: &Device, s: &Stream, queue: impl FnOnce()) -> f64 {
    let (a, b) = (Event::new(dev).unwrap(), Event::new(dev).unwrap());
    a.record(s).unwrap();
    queue();
    b.record(s).unwrap();
    b.synchronize().unwrap();
    f64::from(a.ms_until(&b).unwrap()) * 1e6
}

/// A ring of `nodes` pointers, one every 256 bytes from `base`, each
/// naming the next, as bytes.
fn ring(base: u64, nodes: usize) -> Vec<u8> {
    let mut v = vec![0u8; nodes * 256];
    for i in 0..nodes {
        let next = base + ((i + 1) % nodes * 256) as u64;
        v[i * 256..i * 256 + 8].copy_from_slice(&next.to_le_bytes());
    }
    v
}

#[test]
#[ignore = "run by kernels_copy_fill_count_and_chase_on_the_standin in a process with the stand-in loaded"]
fn standin_kernels() {
    let dev = open(0);
    let k = Kernels::load(&dev).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(k.multiprocessors(), 80);
    let s = Stream::new(&dev).unwrap();

    // The simple kernel: 1 MiB + 48 B copies whole blocks only (1 MiB),
    // and nothing past them; at the d2d rate (380 GB/s) per loop.
    let asked = (1 << 20) + 48;
    let src = DeviceBuffer::new(&dev, asked + 4096).unwrap();
    let dst = DeviceBuffer::new(&dev, asked + 4096).unwrap();
    let data = bytes(src.bytes, 7);
    upload(&dev, &src, &data);
    assert_eq!(k.copy_size(asked), 1 << 20);
    let mut moved = 0;
    let ns = timed(&dev, &s, || moved = k.copy(&s, dst.ptr(), src.ptr(), asked, 2).unwrap());
    assert_eq!(moved, 1 << 20);
    assert!((ns - (2.0 * (1 << 20) as f64 / 380.0).round()).abs() <= 1.0, "{ns} ns");
    let got = download(&dev, &dst);
    assert!(got[..moved] == data[..moved], "the copied bytes differ");
    assert!(got[moved..].iter().all(|&b| b == 0xa5), "bytes past copy_size were written");

    // The strided kernel from 64 MiB: SMs x 512 threads, elements rounded
    // down to a multiple of them.
    let big = 64 << 20;
    let threads = 80 * 512;
    let want = big / 16 / threads * threads * 16;
    assert_eq!(k.copy_size(big), want);
    assert!(want < big && big - want < threads * 16);
    let src = DeviceBuffer::new(&dev, big).unwrap();
    let dst = DeviceBuffer::new(&dev, big).unwrap();
    let data = bytes(big, 3);
    upload(&dev, &src, &data);
    assert_eq!(k.copy(&s, dst.ptr(), src.ptr(), big, 1).unwrap(), want);
    s.synchronize().unwrap();
    let got = download(&dev, &dst);
    assert!(got[..want] == data[..want], "the strided copy's bytes differ");
    assert!(got[want..].iter().all(|&b| b == 0xa5), "the strided copy wrote past its elements");

    // Split warps: odd warps copy b -> a, even ones a -> b; the tail
    // stays. Then the even warps' elements of a are cleared.
    let (a, b) = (DeviceBuffer::new(&dev, asked).unwrap(), DeviceBuffer::new(&dev, asked).unwrap());
    let (da, db) = (bytes(asked, 1), bytes(asked, 2));
    upload(&dev, &a, &da);
    upload(&dev, &b, &db);
    let size = k.split_warp_copy(&s, a.ptr(), b.ptr(), asked, 1).unwrap();
    assert_eq!(size, k.split_warp_size(asked));
    assert_eq!(size, 1 << 20);
    s.synchronize().unwrap();
    let (ga, gb) = (download(&dev, &a), download(&dev, &b));
    for e in 0..asked / 16 {
        let r = e * 16..e * 16 + 16;
        let odd = (e / 32) % 2 == 1;
        let (want_a, want_b) = match (e * 16 < size, odd) {
            (false, _) => (&da[r.clone()], &db[r.clone()]),
            (true, true) => (&db[r.clone()], &db[r.clone()]),
            (true, false) => (&da[r.clone()], &da[r.clone()]),
        };
        assert!(ga[r.clone()] == *want_a && gb[r.clone()] == *want_b, "element {e}");
    }
    k.clear_warp_parity(&s, a.ptr(), asked, false).unwrap();
    s.synchronize().unwrap();
    let cleared = download(&dev, &a);
    for e in 0..asked / 16 {
        let r = e * 16..e * 16 + 16;
        let zero = e * 16 < size && (e / 32) % 2 == 0;
        assert!(
            if zero { cleared[r.clone()].iter().all(|&x| x == 0) } else { cleared[r.clone()] == ga[r] },
            "element {e}"
        );
    }

    // The grid-stride copy (p2pBandwidthLatencyTest --sm_copy): the
    // occupancy calculator's shape on a V100 (1024-thread blocks, two per
    // SM); any shape copies all the elements once and nothing past them,
    // at the d2d rate; none copies nothing.
    let shape = k.grid_stride_shape().unwrap();
    assert_eq!(shape, (160, 1024));
    let n = (1 << 16) + 3;
    let src = DeviceBuffer::new(&dev, n * 16 + 4096).unwrap();
    let data = bytes(src.bytes, 5);
    upload(&dev, &src, &data);
    for shape in [shape, (1, 32), (3, 7)] {
        let dst = DeviceBuffer::new(&dev, n * 16 + 4096).unwrap();
        let ns = timed(&dev, &s, || k.copy_grid_stride(&s, shape, dst.ptr(), src.ptr(), n).unwrap());
        assert!((ns - (n * 16) as f64 / 380.0).abs() <= 1.0, "{shape:?}: {ns} ns");
        let got = download(&dev, &dst);
        assert!(got[..n * 16] == data[..n * 16], "{shape:?}: the copied bytes differ");
        assert!(got[n * 16..].iter().all(|&b| b == 0xa5), "{shape:?}: bytes past the elements were written");
    }
    let dst = DeviceBuffer::new(&dev, 16).unwrap();
    let ns = timed(&dev, &s, || k.copy_grid_stride(&s, shape, dst.ptr(), src.ptr(), 0).unwrap());
    assert!(ns.abs() < 1.0, "an empty copy: {ns} ns");
    assert!(download(&dev, &dst).iter().all(|&b| b == 0xa5));

    // Fill a pattern, count no mismatch; one word changed counts one.
    let pattern = DeviceBuffer::new(&dev, 12).unwrap();
    let words: Vec<u8> = [0x1111_1111u32, 0x2222_2222, 0x3333_3333].iter().flat_map(|w| w.to_le_bytes()).collect();
    upload(&dev, &pattern, &words);
    let buf = DeviceBuffer::new(&dev, asked).unwrap();
    let counter = DeviceBuffer::new(&dev, 8).unwrap();
    let count = |expect: u64| {
        upload(&dev, &counter, &[0; 8]);
        k.count_mismatches(&s, buf.ptr(), asked, pattern.ptr(), 12, counter.ptr()).unwrap();
        s.synchronize().unwrap();
        assert_eq!(u64::from_le_bytes(download(&dev, &counter).try_into().unwrap()), expect);
    };
    k.fill_pattern(&s, buf.ptr(), asked, pattern.ptr(), 12).unwrap();
    s.synchronize().unwrap();
    let filled = download(&dev, &buf);
    assert!(filled.chunks(4).enumerate().all(|(i, w)| w == &words[i % 3 * 4..i % 3 * 4 + 4]));
    count(0);
    let mut spoiled = filled.clone();
    spoiled[4000] ^= 1;
    upload(&dev, &buf, &spoiled);
    count(1);
    assert!(k.fill_pattern(&s, buf.ptr(), asked, pattern.ptr(), 3).unwrap_err().to_string().contains("INVALID_VALUE"));

    // Pointer chase: accesses x the latency of where the ring lives, in
    // the stand-in's event time (exact); only the target block chases.
    let nodes = DeviceBuffer::new(&dev, 64 * 256).unwrap();
    upload(&dev, &nodes, &ring(nodes.ptr(), 64));
    let ns = timed(&dev, &s, || k.pointer_chase(&s, nodes.ptr(), 1000, 3, 8).unwrap());
    assert!((ns - 1000.0 * 500.0).abs() < 1.0, "device: {ns} ns");
    let ns = timed(&dev, &s, || k.pointer_chase(&s, nodes.ptr(), 1000, 8, 8).unwrap());
    assert!(ns.abs() < 1.0, "no block is the target: {ns} ns");
    let pinned = PinnedBuffer::new(&dev, 64 * 256).unwrap();
    pinned.write(&ring(pinned.ptr(), 64));
    let ns = timed(&dev, &s, || k.pointer_chase(&s, pinned.ptr(), 1000, 0, 1).unwrap());
    assert!((ns - 1000.0 * 900.0).abs() < 1.0, "pinned host: {ns} ns");
    let peer = open(1);
    let far = DeviceBuffer::new(&peer, 64 * 256).unwrap();
    upload(&peer, &far, &ring(far.ptr(), 64));
    {
        let _access = PeerAccess::enable(&dev, &peer).unwrap();
        let ns = timed(&dev, &s, || k.pointer_chase(&s, far.ptr(), 1000, 0, 1).unwrap());
        assert!((ns - 1000.0 * 1200.0).abs() < 1.0, "peer: {ns} ns");
    }
    // The grid-stride copy from GPU 1: into GPU 0's memory at the NVLink's
    // rate with peer access (one lane, 25 GB/s), a fault without it; on
    // GPU 2, a copy one element past its buffer's end faults too.
    let kp = Kernels::load(&peer).unwrap_or_else(|e| panic!("{e}"));
    let sp = Stream::new(&peer).unwrap();
    let near = DeviceBuffer::new(&dev, 4096).unwrap();
    {
        let _access = PeerAccess::enable(&peer, &dev).unwrap();
        let ns = timed(&peer, &sp, || kp.copy_grid_stride(&sp, (2, 64), near.ptr(), far.ptr(), 256).unwrap());
        assert!((ns - 4096.0 / 25.0).abs() <= 1.0, "peer write: {ns} ns");
    }
    kp.copy_grid_stride(&sp, (2, 64), near.ptr(), far.ptr(), 256).unwrap();
    let e = sp.synchronize().unwrap_err();
    assert_eq!(e.name, "CUDA_ERROR_ILLEGAL_ADDRESS", "{e}");
    let third = open(2);
    let k3 = Kernels::load(&third).unwrap_or_else(|e| panic!("{e}"));
    let s3 = Stream::new(&third).unwrap();
    let (a3, b3) = (DeviceBuffer::new(&third, 4096).unwrap(), DeviceBuffer::new(&third, 4096).unwrap());
    k3.copy_grid_stride(&s3, (1, 1024), a3.ptr(), b3.ptr(), 257).unwrap();
    let e = s3.synchronize().unwrap_err();
    assert_eq!(e.name, "CUDA_ERROR_ILLEGAL_ADDRESS", "{e}");

    // Without peer access the chase faults the context, as on a GPU.
    k.pointer_chase(&s, far.ptr(), 10, 0, 1).unwrap();
    let e = s.synchronize().unwrap_err();
    assert_eq!(e.name, "CUDA_ERROR_ILLEGAL_ADDRESS", "{e}");
}

#[test]
#[ignore = "run by a_corrupted_copy_is_counted_as_one_wrong_word in a process with COMMBENCH_STANDIN_CORRUPT=1"]
fn standin_corrupt() {
    let dev = open(0);
    let k = Kernels::load(&dev).unwrap_or_else(|e| panic!("{e}"));
    let s = Stream::new(&dev).unwrap();
    let n = 1 << 20;
    let pattern = DeviceBuffer::new(&dev, 8).unwrap();
    upload(&dev, &pattern, &[1, 2, 3, 4, 5, 6, 7, 8]);
    let (src, dst) = (DeviceBuffer::new(&dev, n).unwrap(), DeviceBuffer::new(&dev, n).unwrap());
    let counter = DeviceBuffer::new(&dev, 8).unwrap();
    k.fill_pattern(&s, src.ptr(), n, pattern.ptr(), 8).unwrap();
    let wrong = |buf: &DeviceBuffer| {
        upload(&dev, &counter, &[0; 8]);
        k.count_mismatches(&s, buf.ptr(), n, pattern.ptr(), 8, counter.ptr()).unwrap();
        s.synchronize().unwrap();
        u64::from_le_bytes(download(&dev, &counter).try_into().unwrap())
    };
    assert_eq!(wrong(&src), 0);
    let nth: u64 = std::env::var("COMMBENCH_STANDIN_CORRUPT").unwrap().parse().unwrap();
    // Copy 1 (a kernel): one wrong word when it is the N-th.
    assert_eq!(k.copy(&s, dst.ptr(), src.ptr(), n, 1).unwrap(), n);
    assert_eq!(wrong(&dst), u64::from(nth == 1));
    // Copy 2 (the driver's, host to device): its middle word, when N is 2.
    let data = bytes(n, 9);
    upload(&dev, &dst, &data);
    let got = download(&dev, &dst);
    let differ: Vec<usize> = (0..n / 4).filter(|&w| got[w * 4..w * 4 + 4] != data[w * 4..w * 4 + 4]).collect();
    assert_eq!(differ, if nth == 2 { vec![n / 8] } else { vec![] });
    // Copy 3 is that download; copy 4, the grid-stride kernel: one wrong
    // word when N is 4.
    k.copy_grid_stride(&s, k.grid_stride_shape().unwrap(), dst.ptr(), src.ptr(), n / 16).unwrap();
    assert_eq!(wrong(&dst), u64::from(nth == 4));
    // Copy 5: never.
    assert_eq!(k.copy(&s, dst.ptr(), src.ptr(), n, 1).unwrap(), n);
    assert_eq!(wrong(&dst), 0);
}
