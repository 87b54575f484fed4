//! CUDA through cudarc's driver API, opened at run time: whether this
//! node has a driver and a GPU, which GPU a rank uses and what it is, and
//! device memory with host staging.
//!
//! cudarc panics when libcuda cannot be loaded, so [`open`] asks
//! `is_culib_present` before its first driver call; every failure after
//! that is a driver status turned into one line.

use std::ffi::{c_char, c_int, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;
use serde::Serialize;

use crate::buffer::AllocError;

/// Why a rank cannot use a GPU; each is one line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GpuError {
    #[error(
        "no CUDA driver on {host}: libcuda.so.1 cannot be loaded (install the NVIDIA driver, or run on a GPU node)"
    )]
    NoDriver { host: String },
    #[error("no GPU on {host}: {why}")]
    NoDevice { host: String, why: String },
    /// `chosen`: `--gpu N`, or the GPU and the rule that chose it.
    #[error("{chosen}: {host} has {count} GPU(s) as CUDA numbers them (0-{last}){visible}")]
    OutOfRange { chosen: String, host: String, count: usize, last: usize, visible: String },
    #[error("CUDA on {host}: {call} failed: {text}")]
    Driver { host: String, call: &'static str, text: String },
}

/// The driver's words for a status.
pub(crate) fn status_text(e: DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{} ({name})", s.to_string_lossy()),
        Err(_) => name,
    }
}

/// Which GPU a rank uses and why: entry `local_rank mod len` of `--gpu`,
/// else `local_rank mod count` (OSU's rule), else, when the launcher did
/// not say the local rank, GPU 0.
/// A process that drives `lanes` GPUs (nccl-tests' `-t` x `-g`, more
/// than one) starts at `local_rank x lanes`, as nccl-tests does, with no
/// wrap-around: a node without that many GPUs is refused.
pub fn choose(gpu_option: Option<&[usize]>, local_rank: Option<usize>, count: usize, lanes: usize) -> (usize, String) {
    match (gpu_option.filter(|l| !l.is_empty()), local_rank) {
        (Some(list), lr) => {
            let i = lr.unwrap_or(0) % list.len();
            (list[i], format!("--gpu entry {i} for local rank {}", lr.map_or("?".into(), |r| r.to_string())))
        }
        (None, Some(lr)) if lanes > 1 => (lr * lanes, format!("local rank {lr} x {lanes} GPUs per process")),
        (None, Some(lr)) => (lr % count.max(1), format!("local rank {lr} mod {count} GPU(s)")),
        (None, None) => (0, "GPU 0: the launcher did not say the local rank".into()),
    }
}

/// What the run record says about a rank's GPU.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GpuInfo {
    /// CUDA's index (as `--gpu` and `CUDA_VISIBLE_DEVICES` number them).
    pub index: usize,
    pub name: String,
    /// `0000:1b:00.0`, the form sysfs and hwloc use.
    pub pci_bus_id: String,
    /// From sysfs, else the driver's host NUMA id; None where neither
    /// says.
    pub numa_node: Option<u32>,
    pub memory_bytes: usize,
    /// `9.0`.
    pub compute_capability: String,
    /// How the index was chosen.
    pub chosen_by: String,
    /// `CUDA_VISIBLE_DEVICES` as this rank saw it.
    pub visible_devices: Option<String>,
    /// The driver's CUDA version (`12.4`).
    pub driver_cuda_version: String,
}

impl GpuInfo {
    /// The compute capability's major version (`9` of `9.0`; 0 where the
    /// text says none).
    pub fn compute_major(&self) -> u32 {
        self.compute_capability.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
    }
}

/// A rank's GPU: its primary context is current on the thread that opened
/// it (the one that runs MPI and the timed loop).
pub struct Gpu {
    pub info: GpuInfo,
    dev: sys::CUdevice,
    /// Its primary context, retained.
    ctx: sys::CUcontext,
}

// SAFETY: a primary context is a process-wide handle the driver lets any
// thread make current; `Gpu` only ever retains, releases or sets it.
unsafe impl Send for Gpu {}
// SAFETY: as above; no method mutates through `&self`.
unsafe impl Sync for Gpu {}

impl Gpu {
    /// Makes this GPU's context current on the calling thread (a lane's,
    /// src/backend/team.rs).
    pub fn make_current(&self) -> Result<(), String> {
        // SAFETY: a context retained for this device until `self` drops.
        unsafe { result::ctx::set_current(self.ctx) }
            .map_err(|e| format!("cuCtxSetCurrent on GPU {} failed: {}", self.info.index, status_text(e)))
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: `dev` came from cuDeviceGet and its primary context was
        // retained once, in `open`.
        unsafe {
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

/// Whether libcuda can be loaded at all (cudarc's own search).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the candidate names.
    unsafe { sys::is_culib_present() }
}

/// Why the dynamic loader refuses `libcuda.so.1`, in its own words
/// ("cannot open shared object file: No such file or directory"), or
/// None when it loads.
pub(crate) fn load_failure() -> Option<String> {
    const NAME: &CStr = c"libcuda.so.1";
    // SAFETY: dlopen with a valid C string; a handle it returns is closed
    // at once; dlerror's text is copied before any other dl call.
    unsafe {
        let handle = libc::dlopen(NAME.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if !handle.is_null() {
            libc::dlclose(handle);
            return None;
        }
        let err = libc::dlerror();
        let text = if err.is_null() {
            "the dynamic loader gave no reason".to_string()
        } else {
            CStr::from_ptr(err).to_string_lossy().into_owned()
        };
        Some(text.trim_start_matches("libcuda.so.1: ").to_string())
    }
}

/// How many GPUs the CUDA driver shows this process; None where it
/// cannot be loaded or initialised.
pub fn device_count() -> Option<usize> {
    if !driver_present() {
        return None;
    }
    result::init().ok()?;
    result::device::get_count().ok().and_then(|n| usize::try_from(n).ok())
}

/// Opens the GPU this rank uses and makes its primary context current.
/// Runs before MPI starts, so a CUDA-aware MPI finds the device set.
/// With `lanes` above 1, also opens the GPUs after it that the process's
/// other lanes drive (their contexts retained, not made current: each
/// lane's thread does that, [`Gpu::make_current`]), returned after it.
pub fn open(gpu_option: Option<&[usize]>, local_rank: Option<usize>, lanes: usize) -> Result<Vec<Gpu>, GpuError> {
    let host = crate::topo::hostname();
    if !driver_present() {
        return Err(GpuError::NoDriver { host });
    }
    let driver = |call: &'static str| {
        let host = host.clone();
        move |e: DriverError| GpuError::Driver { host, call, text: status_text(e) }
    };
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    let visible_note = || visible.as_ref().map(|v| format!("; CUDA_VISIBLE_DEVICES={v}")).unwrap_or_default();
    if let Err(e) = result::init() {
        return Err(GpuError::NoDevice {
            host,
            why: format!("the CUDA driver says {}{}", status_text(e), visible_note()),
        });
    }
    let count = result::device::get_count().map_err(driver("cuDeviceGetCount"))?.max(0) as usize;
    if count == 0 {
        return Err(GpuError::NoDevice { host, why: format!("the CUDA driver sees none{}", visible_note()) });
    }
    let (first, chosen_by) = choose(gpu_option, local_rank, count, lanes);
    let mut gpus = Vec::with_capacity(lanes.max(1));
    for lane in 0..lanes.max(1) {
        let index = first + lane;
        if index >= count {
            let chosen = match gpu_option {
                Some(_) if lane == 0 => format!("--gpu {index}"),
                _ if lane == 0 => format!("GPU {index} ({chosen_by})"),
                _ => format!("GPU {index} (lane {lane} of the process: {chosen_by}, plus {lane})"),
            };
            return Err(GpuError::OutOfRange { chosen, host, count, last: count - 1, visible: visible_note() });
        }
        let dev = result::device::get(index as c_int).map_err(driver("cuDeviceGet"))?;
        // SAFETY: `dev` came from cuDeviceGet; the context is released in
        // Gpu's Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(driver("cuDevicePrimaryCtxRetain"))?;
        let why =
            if lane == 0 { chosen_by.clone() } else { format!("lane {lane} of the process: {chosen_by}, plus {lane}") };
        match describe(dev, index, why, visible.clone()) {
            Ok(info) => gpus.push(Gpu { info, dev, ctx }),
            Err(e) => {
                // SAFETY: retained just above.
                let _ = unsafe { result::primary_ctx::release(dev) };
                return Err(driver("cuDeviceGet*")(e));
            }
        }
    }
    // SAFETY: a context retained above for the first device.
    unsafe { result::ctx::set_current(gpus[0].ctx) }.map_err(driver("cuCtxSetCurrent"))?;
    Ok(gpus)
}

fn describe(
    dev: sys::CUdevice,
    index: usize,
    chosen_by: String,
    visible: Option<String>,
) -> Result<GpuInfo, DriverError> {
    let mut bus = [0 as c_char; 32];
    // SAFETY: the buffer's length is passed; the driver writes a
    // NUL-terminated id into it.
    unsafe { sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as c_int, dev).result()? };
    // SAFETY: NUL-terminated by the driver (and zero-filled before).
    let raw_bus = unsafe { CStr::from_ptr(bus.as_ptr()) }.to_string_lossy().into_owned();
    let pci_bus_id = sysfs_bus_id(&raw_bus);
    let attr = |a| {
        // SAFETY: `dev` came from cuDeviceGet.
        unsafe { result::device::get_attribute(dev, a) }
    };
    use sys::CUdevice_attribute::*;
    let (major, minor) =
        (attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?, attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?);
    let mut version: c_int = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version).result()? };
    // sysfs where it shows the device; else the driver's own answer
    // (CUDA 12.2 on), which containers without a PCI view still give.
    let numa = numa_node(Path::new("/sys/bus/pci/devices"), &pci_bus_id)
        .or_else(|| attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).ok().and_then(|n| u32::try_from(n).ok()));
    Ok(GpuInfo {
        index,
        name: result::device::get_name(dev)?,
        numa_node: numa,
        pci_bus_id,
        // SAFETY: `dev` came from cuDeviceGet.
        memory_bytes: unsafe { result::device::total_mem(dev)? },
        compute_capability: format!("{major}.{minor}"),
        chosen_by,
        visible_devices: visible,
        driver_cuda_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
    })
}

/// CUDA writes the PCI domain with 8 hex digits and upper case
/// (`00000000:1B:00.0`); sysfs and hwloc use 4 and lower case.
pub fn sysfs_bus_id(cuda: &str) -> String {
    let lower = cuda.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((domain, rest)) if domain.len() > 4 && domain[..domain.len() - 4].bytes().all(|b| b == b'0') => {
            format!("{}:{rest}", &domain[domain.len() - 4..])
        }
        _ => lower,
    }
}

/// The NUMA node sysfs gives a PCI device; None when it says -1 or
/// nothing.
pub fn numa_node(devices: &Path, bus_id: &str) -> Option<u32> {
    let text = std::fs::read_to_string(devices.join(bus_id).join("numa_node")).ok()?;
    text.trim().parse::<i64>().ok().filter(|n| *n >= 0).map(|n| n as u32)
}

/// Device memory (`cuMemAlloc`, or NCCL's `ncclMemAlloc` where the run
/// follows nccl-tests) or managed memory (`cuMemAllocManaged`) of the
/// current context, freed on drop (after any registration with a
/// communicator is undone).
pub(crate) struct DeviceBuf {
    /// The allocation's start.
    base: sys::CUdeviceptr,
    len: usize,
    /// Bytes allocated from `base` (`len`, the padding, at least one).
    allocated: usize,
    /// The NCCL that allocated it, None for the driver.
    nccl: Option<&'static crate::gpu::nccl_lib::NcclLib>,
    /// Its registration with a communicator (nccl-tests' `-R`), if any.
    registration: Option<Registration>,
    /// How far past `base` the buffer starts, bytes (nccl-tests' `-u`
    /// misalignment, which follows the datatype), shared with the memory
    /// that made it; within the allocation's padding, 0 where none.
    skew: Arc<AtomicUsize>,
}

// The buffer owns its allocation; CUDA pointers are valid from any thread
// with the context current.
unsafe impl Send for DeviceBuf {}

impl DeviceBuf {
    /// `len` zeroed bytes (at least one is allocated, so an empty message
    /// still has an address). `pad` more bytes are allocated after them, within which the
    /// buffer's start moves to `skew` bytes past the allocation's (the
    /// caller keeps `skew` at or below `pad`).
    /// With `nccl` (device memory only) the allocation is that library's
    /// `ncclMemAlloc`, as nccl-tests allocates from NCCL 2.19 on.
    pub(crate) fn zeroed(
        len: usize,
        managed: bool,
        pad: usize,
        skew: Arc<AtomicUsize>,
        nccl: Option<&'static crate::gpu::nccl_lib::NcclLib>,
    ) -> Result<DeviceBuf, AllocError> {
        let bytes = len.saturating_add(pad).max(1);
        let nccl = nccl.filter(|lib| !managed && lib.allocates());
        // SAFETY: allocation in the current context; the result is
        // checked, then every byte is set.
        unsafe {
            let ptr = match nccl.and_then(|lib| lib.mem_alloc(bytes)) {
                Some(made) => made.map(|p| p as usize as sys::CUdeviceptr).map_err(|_| AllocError { bytes: len })?,
                None if managed => result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
                    .map_err(|_| AllocError { bytes: len })?,
                None => result::malloc_sync(bytes).map_err(|_| AllocError { bytes: len })?,
            };
            let buf = DeviceBuf { base: ptr, len, allocated: bytes, nccl, registration: None, skew };
            // cuMemsetD8 on device memory may return before the bytes are
            // set (it runs on the legacy stream, which the transports'
            // non-blocking streams do not wait for): wait for it here.
            result::memset_d8_sync(ptr, 0, bytes).map_err(|_| AllocError { bytes: len })?;
            result::ctx::synchronize().map_err(|_| AllocError { bytes: len })?;
            Ok(buf)
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Registers the whole allocation with `comm` (nccl-tests' `-R`: a
    /// local registration, or with `window` a symmetric window), undone
    /// when the buffer is dropped. The communicator must outlive the
    /// buffer.
    pub(crate) fn register(
        &mut self,
        lib: &'static crate::gpu::nccl_lib::NcclLib,
        comm: cudarc::nccl::sys::ncclComm_t,
        window: bool,
    ) -> Result<(), crate::gpu::nccl_lib::NcclCallError> {
        let p = self.base as usize as *mut std::ffi::c_void;
        // SAFETY: the allocation is `allocated` bytes on this context's
        // device; Drop deregisters before it frees.
        let handle = unsafe { lib.register(comm, p, self.allocated, window) }?;
        self.registration = Some(Registration { lib, comm, handle, window });
        Ok(())
    }

    /// The buffer's device address.
    #[inline(always)]
    fn ptr(&self) -> sys::CUdeviceptr {
        self.base + self.skew.load(Ordering::Relaxed) as sys::CUdeviceptr
    }

    /// The device address, as MPI and NCCL take it.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr() as usize as *const u8
    }

    #[inline(always)]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr() as usize as *mut u8
    }

    /// Copies the buffer into `dst` (at most `dst.len()` bytes), waiting
    /// for the copy. The context is synchronised first: cuMemcpyDtoH runs
    /// on the legacy stream, which does not wait for a transport's
    /// non-blocking stream that may still be writing the buffer.
    pub(crate) fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), DriverError> {
        let n = dst.len().min(self.len);
        result::ctx::synchronize()?;
        // SAFETY: both ranges are n bytes long and valid.
        unsafe { result::memcpy_dtoh_sync(&mut dst[..n], self.ptr()) }
    }

    /// Copies `src` into the start of the buffer and waits until the data
    /// is there. From pageable memory cuMemcpyHtoD returns once the source
    /// is staged, possibly before the copy lands, and a non-blocking stream
    /// (NCCL's, a CUDA-aware MPI's) does not wait for it: so the context
    /// is synchronised after it (untimed; fills and checks only).
    pub(crate) fn copy_from_host(&mut self, src: &[u8]) -> Result<(), DriverError> {
        let n = src.len().min(self.len);
        // SAFETY: both ranges are n bytes long and valid.
        unsafe { result::memcpy_htod_sync(self.ptr(), &src[..n]) }?;
        result::ctx::synchronize()
    }
}

/// A buffer's registration with a communicator.
struct Registration {
    lib: &'static crate::gpu::nccl_lib::NcclLib,
    comm: cudarc::nccl::sys::ncclComm_t,
    handle: *mut std::ffi::c_void,
    window: bool,
}

impl Drop for DeviceBuf {
    fn drop(&mut self) {
        if let Some(r) = self.registration.take() {
            // SAFETY: registered by `register` on a communicator that
            // outlives the buffer; undone once, before the free below.
            let _ = unsafe { r.lib.deregister(r.comm, r.handle, r.window) };
        }
        // SAFETY: allocated by ncclMemAlloc or cuMemAlloc(Managed) and
        // freed once, by whichever made it.
        unsafe {
            match self.nccl {
                Some(lib) => {
                    let _ = lib.mem_free(self.base as usize as *mut std::ffi::c_void);
                }
                None => {
                    let _ = result::free_sync(self.base);
                }
            }
        }
    }
}

/// Whether the MPI library says it moves CUDA device memory: Open MPI's
/// (and MPICH's) `MPIX_Query_cuda_support`, else MPICH's
/// `MPIX_GPU_query_support(CUDA)`. None when the library has neither.
/// Call after MPI_Init.
pub fn mpi_cuda_support() -> Option<bool> {
    // SAFETY: dlsym on the process's global scope; the symbols, where
    // they exist, have these C signatures.
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"MPIX_Query_cuda_support".as_ptr());
        if !f.is_null() {
            let query: extern "C" fn() -> c_int = std::mem::transmute(f);
            return Some(query() != 0);
        }
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"MPIX_GPU_query_support".as_ptr());
        if !f.is_null() {
            // MPIX_GPU_SUPPORT_CUDA is 0 in MPICH's mpi.h.
            let query: extern "C" fn(c_int, *mut c_int) -> c_int = std::mem::transmute(f);
            let mut yes: c_int = 0;
            return (query(0, &mut yes) == 0).then_some(yes != 0);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_choice() {
        assert_eq!(choose(None, Some(5), 4, 1).0, 1);
        assert_eq!(choose(None, Some(0), 8, 1), (0, "local rank 0 mod 8 GPU(s)".to_string()));
        assert_eq!(choose(Some(&[3, 1]), Some(3), 8, 1).0, 1);
        assert_eq!(choose(Some(&[6]), Some(2), 2, 1).0, 6, "--gpu is taken as given; open() checks the range");
        assert_eq!(choose(None, None, 4, 1).0, 0);
        assert!(choose(None, None, 4, 1).1.contains("did not say the local rank"));
        // Several GPUs per process: nccl-tests' first GPU, no wrap-around.
        assert_eq!(choose(None, Some(3), 8, 2), (6, "local rank 3 x 2 GPUs per process".to_string()));
        assert_eq!(choose(None, Some(3), 4, 2).0, 6, "open() refuses a GPU past the last");
        assert_eq!(choose(Some(&[2]), Some(1), 8, 4).0, 2, "NCCL_TESTS_DEVICE: every process starts there");
    }

    #[test]
    fn bus_ids_in_sysfs_form() {
        assert_eq!(sysfs_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
        assert_eq!(sysfs_bus_id("0001:C3:00.0"), "0001:c3:00.0");
        assert_eq!(sysfs_bus_id("00010000:1B:00.0"), "00010000:1b:00.0");
    }

    #[test]
    fn numa_node_from_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        for (bus, text) in [("0000:1b:00.0", "1\n"), ("0000:1c:00.0", "-1\n")] {
            std::fs::create_dir_all(dir.path().join(bus)).unwrap();
            std::fs::write(dir.path().join(bus).join("numa_node"), text).unwrap();
        }
        assert_eq!(numa_node(dir.path(), "0000:1b:00.0"), Some(1));
        assert_eq!(numa_node(dir.path(), "0000:1c:00.0"), None);
        assert_eq!(numa_node(dir.path(), "0000:99:00.0"), None);
    }

    #[test]
    fn no_driver_here_is_one_line() {
        // This machine has no NVIDIA driver; on one that has, the check
        // says nothing about this path.
        if driver_present() {
            return;
        }
        let e = open(None, Some(0), 1).err().unwrap();
        assert!(matches!(e, GpuError::NoDriver { .. }));
        assert!(!e.to_string().contains('\n'));
    }
}
