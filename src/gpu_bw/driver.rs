//! The CUDA driver calls `gpu-bw` makes (through cudarc's `result` and
//! `sys` layers), each resource behind a small owner that frees it: a
//! device with its retained primary context, device and pinned host
//! buffers, non-blocking streams, timing events, peer access that is
//! switched off again, and a gate that holds a stream until every copy of
//! a timing is queued. Nothing here runs without libcuda: callers check
//! [`driver_present`] before anything else, because cudarc panics when
//! the library cannot be loaded.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys;

/// A driver call that failed: which call, the driver's error name and its
/// description, and where (a GPU or pair), read when the error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaError {
    /// "GPU 1", "GPU 0 -> GPU 1", or empty.
    pub place: String,
    pub call: &'static str,
    /// `CUDA_ERROR_OUT_OF_MEMORY`.
    pub name: String,
    /// `out of memory`.
    pub text: String,
}

impl CudaError {
    /// Reads the name and text of `err` from the driver (which is loaded:
    /// it just returned this error).
    pub(crate) fn new(call: &'static str, err: DriverError) -> CudaError {
        let name =
            err.error_name().map(|c| c.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", err.0));
        let text = err.error_string().map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
        CudaError { place: String::new(), call, name, text }
    }

    /// The same error, said to have happened at `place`.
    pub fn at(mut self, place: impl Into<String>) -> CudaError {
        if self.place.is_empty() {
            self.place = place.into();
        }
        self
    }

    /// Whether the driver said there is no usable GPU.
    pub(crate) fn is_no_device(&self) -> bool {
        self.name == "CUDA_ERROR_NO_DEVICE"
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.place.is_empty() {
            write!(f, "{}: ", self.place)?;
        }
        write!(f, "{} failed: {}", self.call, self.name)?;
        if !self.text.is_empty() {
            write!(f, " ({})", self.text)?;
        }
        Ok(())
    }
}

impl std::error::Error for CudaError {}

/// Names the call a driver result came from.
pub(crate) trait During<T> {
    fn during(self, call: &'static str) -> Result<T, CudaError>;
}

impl<T> During<T> for Result<T, DriverError> {
    fn during(self, call: &'static str) -> Result<T, CudaError> {
        self.map_err(|e| CudaError::new(call, e))
    }
}

pub use crate::gpu::cuda::driver_present;
pub(crate) use crate::gpu::cuda::load_failure;

/// Initialises the driver (cuInit).
pub fn init() -> Result<(), CudaError> {
    result::init().during("cuInit")
}

/// The driver's CUDA version as `12.8`.
pub(crate) fn driver_version() -> Option<String> {
    let mut v: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    let rc = unsafe { sys::cuDriverGetVersion(&mut v) };
    rc.result().ok().map(|_| format!("{}.{}", v / 1000, v % 1000 / 10))
}

/// The driver's CUDA version as cuDriverGetVersion gives it (12040).
pub(crate) fn driver_version_code() -> Option<i32> {
    let mut v: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    let rc = unsafe { sys::cuDriverGetVersion(&mut v) };
    rc.result().ok().map(|_| v)
}

/// GPUs the driver shows (after CUDA_VISIBLE_DEVICES).
pub(crate) fn device_count() -> Result<usize, CudaError> {
    result::device::get_count().during("cuDeviceGetCount").map(|n| n.max(0) as usize)
}

/// Why the driver cannot be used, in one line naming the host (and
/// `CUDA_VISIBLE_DEVICES` where it is set), with the driver's error where
/// it gave one (none: libcuda.so.1 is not there).
pub(crate) struct StartFailure {
    pub line: String,
    pub error: Option<CudaError>,
}

/// Loads and starts the driver and counts the GPUs it shows on `host`:
/// what every GPU front end does first, said the same way by each.
pub(crate) fn start(host: &str) -> Result<usize, StartFailure> {
    if !driver_present() {
        let why = load_failure().unwrap_or_else(|| "not found under any name the loader tries".into());
        let line = format!("no CUDA driver on {host}: libcuda.so.1 cannot be loaded ({why})");
        return Err(StartFailure { line, error: None });
    }
    let visible = visible_devices();
    let failed = |line: String, e: CudaError| StartFailure { line, error: Some(e) };
    match init() {
        Err(e) if e.is_no_device() => return Err(failed(format!("no CUDA GPU on {host}{visible}: {e}"), e)),
        Err(e) => return Err(failed(format!("cannot start the CUDA driver on {host}: {e}"), e)),
        Ok(()) => {}
    }
    device_count().map_err(|e| failed(format!("on {host}: {e}"), e))
}

/// ` (CUDA_VISIBLE_DEVICES=...)` where the variable is set, for the lines
/// that say a GPU is missing.
pub(crate) fn visible_devices() -> String {
    std::env::var("CUDA_VISIBLE_DEVICES").map(|v| format!(" (CUDA_VISIBLE_DEVICES={v})")).unwrap_or_default()
}

/// One GPU with its primary context retained for as long as this lives.
pub struct Device {
    pub ordinal: usize,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

impl Device {
    /// Opens GPU `ordinal` and retains its primary context.
    pub fn open(ordinal: usize) -> Result<Device, CudaError> {
        let place = format!("GPU {ordinal}");
        let dev = result::device::get(ordinal as c_int).during("cuDeviceGet").map_err(|e| e.at(&place))?;
        // SAFETY: `dev` came from cuDeviceGet; the context is released in
        // Drop, once.
        let ctx =
            unsafe { result::primary_ctx::retain(dev) }.during("cuDevicePrimaryCtxRetain").map_err(|e| e.at(&place))?;
        Ok(Device { ordinal, dev, ctx })
    }

    pub(crate) fn place(&self) -> String {
        format!("GPU {}", self.ordinal)
    }

    /// One attribute of this GPU (cuDeviceGetAttribute).
    pub(crate) fn attribute(&self, attr: sys::CUdevice_attribute) -> Result<i32, CudaError> {
        // SAFETY: `dev` came from cuDeviceGet.
        unsafe { result::device::get_attribute(self.dev, attr) }
            .during("cuDeviceGetAttribute")
            .map_err(|e| e.at(self.place()))
    }

    /// Its streaming multiprocessors (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).
    pub fn multiprocessors(&self) -> Result<u32, CudaError> {
        let n = self.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        Ok(u32::try_from(n).unwrap_or(0))
    }

    /// Its compute capability as (major, minor), e.g. (9, 0).
    pub fn compute_capability(&self) -> Result<(u32, u32), CudaError> {
        use sys::CUdevice_attribute as A;
        let major = self.attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = self.attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        Ok((u32::try_from(major).unwrap_or(0), u32::try_from(minor).unwrap_or(0)))
    }

    /// Makes this GPU's context current on the calling thread.
    pub fn make_current(&self) -> Result<(), CudaError> {
        // SAFETY: the context is retained for the life of `self`.
        unsafe { result::ctx::set_current(self.ctx) }.during("cuCtxSetCurrent").map_err(|e| e.at(self.place()))
    }

    /// Waits until all work queued in this GPU's context is done (a copy
    /// from pageable memory may still be landing when its call returns).
    pub(crate) fn synchronize(&self) -> Result<(), CudaError> {
        self.make_current()?;
        result::ctx::synchronize().during("cuCtxSynchronize").map_err(|e| e.at(self.place()))
    }

    /// The product name.
    pub fn name(&self) -> String {
        result::device::get_name(self.dev).unwrap_or_else(|_| "unknown".into())
    }

    /// The PCI bus id as the driver writes it (`0000:3B:00.0`).
    pub fn pci_bus_id(&self) -> Option<String> {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the driver writes at most `len` bytes, NUL included,
        // into the buffer; it is read only after success.
        unsafe {
            sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as c_int, self.dev).result().ok()?;
            Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
        }
    }

    /// The NUMA node the driver says the GPU is nearest
    /// (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, CUDA 12.2 on); None where it does
    /// not say.
    pub(crate) fn host_numa_id(&self) -> Option<usize> {
        // SAFETY: `dev` came from cuDeviceGet.
        let v = unsafe {
            result::device::get_attribute(self.dev, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID)
        };
        v.ok().and_then(|n| usize::try_from(n).ok())
    }

    /// The PCI bus, device and domain numbers (0 where the driver does
    /// not say).
    pub(crate) fn pci_location(&self) -> (i32, i32, i32) {
        use sys::CUdevice_attribute as A;
        // SAFETY: `dev` came from cuDeviceGet.
        let get = |a| unsafe { result::device::get_attribute(self.dev, a) }.unwrap_or(0);
        (
            get(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
            get(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
            get(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
        )
    }

    /// Device memory in bytes.
    pub(crate) fn total_memory(&self) -> Option<u64> {
        // SAFETY: `dev` came from cuDeviceGet.
        unsafe { result::device::total_mem(self.dev) }.ok().map(|b| b as u64)
    }

    /// Whether this GPU can map `peer`'s memory (cuDeviceCanAccessPeer).
    pub(crate) fn can_access_peer(&self, peer: &Device) -> Option<bool> {
        let mut v: c_int = 0;
        // SAFETY: both devices came from cuDeviceGet; one int is written.
        let rc = unsafe { sys::cuDeviceCanAccessPeer(&mut v, self.dev, peer.dev) };
        rc.result().ok().map(|_| v != 0)
    }

    /// One peer attribute of this GPU towards `peer`.
    pub(crate) fn p2p_attribute(&self, peer: &Device, attr: sys::CUdevice_P2PAttribute) -> Option<i32> {
        let mut v: c_int = 0;
        // SAFETY: both devices came from cuDeviceGet; one int is written.
        let rc = unsafe { sys::cuDeviceGetP2PAttribute(&mut v, attr, self.dev, peer.dev) };
        rc.result().ok().map(|_| v)
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: releases the one reference `open` retained.
        let _ = unsafe { result::primary_ctx::release(self.dev) };
    }
}

/// Device memory on one GPU, filled once so its pages are mapped before
/// any timing.
pub struct DeviceBuffer<'d> {
    dev: &'d Device,
    ptr: sys::CUdeviceptr,
    pub bytes: usize,
}

impl<'d> DeviceBuffer<'d> {
    pub fn new(dev: &'d Device, bytes: usize) -> Result<DeviceBuffer<'d>, CudaError> {
        dev.make_current()?;
        // SAFETY: plain allocation in the current context; the memory is
        // only ever copied, never read as a typed value.
        let ptr = unsafe { result::malloc_sync(bytes) }.during("cuMemAlloc").map_err(|e| e.at(dev.place()))?;
        let buf = DeviceBuffer { dev, ptr, bytes };
        // SAFETY: `ptr` holds `bytes` bytes.
        unsafe { result::memset_d8_sync(ptr, 0xa5, bytes) }.during("cuMemsetD8").map_err(|e| e.at(dev.place()))?;
        // The memset may still be running on the legacy stream, which the
        // timing streams (non-blocking) would not wait for.
        result::ctx::synchronize().during("cuCtxSynchronize").map_err(|e| e.at(dev.place()))?;
        Ok(buf)
    }

    /// Its device address, as kernels take it.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
}

impl<'d> DeviceBuffer<'d> {
    /// The GPU the buffer is on.
    pub(crate) fn device_ref(&self) -> &'d Device {
        self.dev
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: allocated by cuMemAlloc in `new`, freed once; every
        // stream that used it was synchronised before its owner dropped it.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Page-locked host memory usable from every context (portable), not
/// write-combined (bandwidthTest's default pinned memory).
pub struct PinnedBuffer<'d> {
    dev: &'d Device,
    ptr: *mut c_void,
    pub bytes: usize,
}

impl<'d> PinnedBuffer<'d> {
    pub fn new(dev: &'d Device, bytes: usize) -> Result<PinnedBuffer<'d>, CudaError> {
        Self::with_write_combining(dev, bytes, false)
    }

    /// Pinned memory as [`PinnedBuffer::new`], write-combined where asked
    /// (bandwidthTest's `--wc`: the CPU writes it without caching, and a
    /// GPU reads it over PCIe without snooping the CPU's caches).
    pub fn with_write_combining(dev: &'d Device, bytes: usize, wc: bool) -> Result<PinnedBuffer<'d>, CudaError> {
        dev.make_current()?;
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | if wc { sys::CU_MEMHOSTALLOC_WRITECOMBINED } else { 0 };
        // SAFETY: allocation only; the flags ask for memory pinned for
        // all contexts (and write-combined).
        let ptr =
            unsafe { result::malloc_host(bytes, flags) }.during("cuMemHostAlloc").map_err(|e| e.at(dev.place()))?;
        // SAFETY: the driver returned `bytes` writable bytes at `ptr`.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0x5a, bytes) };
        Ok(PinnedBuffer { dev, ptr, bytes })
    }

    /// Its address, as kernels take it (the same on the host and, with
    /// unified addressing, on every GPU).
    pub fn ptr(&self) -> u64 {
        self.ptr as u64
    }

    /// Its bytes, read on the host (after the work writing them was
    /// synchronised).
    pub fn to_vec(&self) -> Vec<u8> {
        // SAFETY: the driver gave `bytes` readable bytes at `ptr`; the
        // caller synchronised the streams that write them.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.bytes) }.to_vec()
    }

    /// Writes `data` at its start, on the host.
    pub fn write(&self, data: &[u8]) {
        assert!(data.len() <= self.bytes, "{} bytes do not fit in {}", data.len(), self.bytes);
        // SAFETY: `ptr` holds `bytes` writable bytes; the caller keeps
        // streams off them meanwhile.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr as *mut u8, data.len()) };
    }
}

impl PinnedBuffer<'_> {
    /// The buffer's bytes, for the host to write or read while no stream
    /// is using it.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the driver gave `bytes` writable bytes at `ptr`, owned by
        // `self`; the caller's `&mut` excludes other host users, and it
        // holds no stream work on the buffer (the contract above).
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut u8, self.bytes) }
    }
}

impl Drop for PinnedBuffer<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once, after
        // the copies using it were synchronised.
        let _ = unsafe { result::free_host(self.ptr) };
    }
}

/// A non-blocking stream on one GPU.
pub struct Stream<'d> {
    pub dev: &'d Device,
    raw: sys::CUstream,
}

impl<'d> Stream<'d> {
    pub fn new(dev: &'d Device) -> Result<Stream<'d>, CudaError> {
        dev.make_current()?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .during("cuStreamCreate")
            .map_err(|e| e.at(dev.place()))?;
        Ok(Stream { dev, raw })
    }

    /// The driver's handle, for calls that queue work on it.
    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }

    /// Makes the stream wait for the last recording of `event`.
    pub fn wait(&self, event: &Event) -> Result<(), CudaError> {
        // SAFETY: both handles live as long as their owners.
        unsafe { result::stream::wait_event(self.raw, event.raw, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
            .during("cuStreamWaitEvent")
            .map_err(|e| e.at(self.dev.place()))
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: the stream lives as long as `self`.
        unsafe { result::stream::synchronize(self.raw) }
            .during("cuStreamSynchronize")
            .map_err(|e| e.at(self.dev.place()))
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: created in `new`, destroyed once, after its work ends.
        unsafe {
            let _ = result::stream::synchronize(self.raw);
            let _ = result::stream::destroy(self.raw);
        }
    }
}

/// An event with timing enabled (CU_EVENT_DEFAULT; cudarc's default
/// creates events without timing).
pub struct Event<'d> {
    dev: &'d Device,
    raw: sys::CUevent,
}

impl<'d> Event<'d> {
    pub fn new(dev: &'d Device) -> Result<Event<'d>, CudaError> {
        dev.make_current()?;
        let raw = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .during("cuEventCreate")
            .map_err(|e| e.at(dev.place()))?;
        Ok(Event { dev, raw })
    }

    /// Records the event on `stream` (of the same GPU).
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: both handles live as long as their owners.
        unsafe { result::event::record(self.raw, stream.raw) }
            .during("cuEventRecord")
            .map_err(|e| e.at(self.dev.place()))
    }

    /// Waits on the host until the event has happened.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        // SAFETY: the event lives as long as `self`.
        unsafe { result::event::synchronize(self.raw) }.during("cuEventSynchronize").map_err(|e| e.at(self.dev.place()))
    }

    /// Milliseconds from `self` to `later` as the driver gives them (a
    /// float).
    pub fn ms_until(&self, later: &Event) -> Result<f32, CudaError> {
        // SAFETY: both events were created with timing and recorded.
        unsafe { result::event::elapsed(self.raw, later.raw) }
            .during("cuEventElapsedTime")
            .map_err(|e| e.at(self.dev.place()))
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: created in `new`, destroyed once.
        let _ = unsafe { result::event::destroy(self.raw) };
    }
}

/// Peer access from one GPU's context to another's memory, switched off
/// again when dropped.
pub struct PeerAccess<'d> {
    from: &'d Device,
    to: &'d Device,
}

impl<'d> PeerAccess<'d> {
    /// Lets `from` map `to`'s memory (cuCtxEnablePeerAccess); access that
    /// is already on counts as on.
    pub fn enable(from: &'d Device, to: &'d Device) -> Result<PeerAccess<'d>, CudaError> {
        from.make_current()?;
        // SAFETY: both contexts are retained by their devices.
        let rc = unsafe { sys::cuCtxEnablePeerAccess(to.ctx, 0) };
        match rc {
            sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
                Ok(PeerAccess { from, to })
            }
            other => Err(CudaError::new("cuCtxEnablePeerAccess", DriverError(other))
                .at(format!("GPU {} -> GPU {}", from.ordinal, to.ordinal))),
        }
    }
}

impl Drop for PeerAccess<'_> {
    fn drop(&mut self) {
        let _ = self.from.make_current();
        // SAFETY: both contexts are retained by their devices; the copies
        // that used the access were synchronised before this drop.
        let _ = unsafe { sys::cuCtxDisablePeerAccess(self.to.ctx) };
    }
}

/// How long a gate holds its stream at most: if queueing the copies takes
/// longer (the queue is full, or the driver blocks the host thread), the
/// stream starts anyway and the timing is noted.
const GATE_LIMIT: Duration = Duration::from_millis(200);

struct GateState {
    open: AtomicBool,
    held_too_long: AtomicBool,
}

/// Runs on the driver's callback thread when the stream reaches the gate:
/// waits until the host opens it (or [`GATE_LIMIT`] passes).
///
/// # Safety
/// `arg` must come from `Arc::into_raw` of a `GateState`, given to this
/// callback once.
unsafe extern "C" fn hold_stream(arg: *mut c_void) {
    // SAFETY: per the contract above; this takes over that reference.
    let state = unsafe { Arc::from_raw(arg as *const GateState) };
    let began = Instant::now();
    while !state.open.load(Ordering::Acquire) {
        if began.elapsed() > GATE_LIMIT {
            state.held_too_long.store(true, Ordering::Release);
            break;
        }
        std::hint::spin_loop();
    }
}

/// Holds a stream (with a host function, cuLaunchHostFunc) until every
/// copy of a timing is queued behind it, so the timing measures the copies
/// and not the host queueing them: the role of the spin kernel in
/// p2pBandwidthLatencyTest, without a kernel.
pub(crate) struct Gate {
    state: Arc<GateState>,
}

impl Gate {
    /// Puts a closed gate on `stream`.
    pub fn close(stream: &Stream) -> Result<Gate, CudaError> {
        let state = Arc::new(GateState { open: AtomicBool::new(false), held_too_long: AtomicBool::new(false) });
        let arg = Arc::into_raw(state.clone()) as *mut c_void;
        stream.dev.make_current()?;
        // SAFETY: the callback takes over the reference passed in `arg`
        // and touches nothing else; it makes no CUDA call.
        let rc = unsafe { result::stream::launch_host_function(stream.raw, hold_stream, arg) };
        if let Err(e) = rc {
            // The callback will never run: take the reference back.
            // SAFETY: `arg` came from Arc::into_raw just above.
            drop(unsafe { Arc::from_raw(arg as *const GateState) });
            return Err(CudaError::new("cuLaunchHostFunc", e).at(stream.dev.place()));
        }
        Ok(Gate { state })
    }

    /// Lets the stream go.
    pub fn open(&self) {
        self.state.open.store(true, Ordering::Release);
    }

    /// Whether the stream started before the gate was opened. Meaningful
    /// once the stream has passed the gate (after a synchronisation).
    pub(crate) fn held_too_long(&self) -> bool {
        self.state.held_too_long.load(Ordering::Acquire)
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// Queues one host-to-device copy from pinned memory.
pub(crate) fn copy_htod_async(
    dst: &DeviceBuffer,
    src: &PinnedBuffer,
    bytes: usize,
    s: &Stream,
) -> Result<(), CudaError> {
    debug_assert!(bytes <= dst.bytes && bytes <= src.bytes);
    // SAFETY: both buffers hold at least `bytes` bytes and outlive the
    // stream's work (their owners synchronise before dropping them).
    unsafe { sys::cuMemcpyHtoDAsync_v2(dst.ptr, src.ptr, bytes, s.raw) }
        .result()
        .during("cuMemcpyHtoDAsync")
        .map_err(|e| e.at(s.dev.place()))
}

/// Queues one device-to-host copy into pinned memory.
pub(crate) fn copy_dtoh_async(
    dst: &PinnedBuffer,
    src: &DeviceBuffer,
    bytes: usize,
    s: &Stream,
) -> Result<(), CudaError> {
    debug_assert!(bytes <= dst.bytes && bytes <= src.bytes);
    // SAFETY: as in copy_htod_async.
    unsafe { sys::cuMemcpyDtoHAsync_v2(dst.ptr, src.ptr, bytes, s.raw) }
        .result()
        .during("cuMemcpyDtoHAsync")
        .map_err(|e| e.at(s.dev.place()))
}

/// Queues one device-to-device copy: within one GPU (cuMemcpyDtoDAsync)
/// or between two (cuMemcpyPeerAsync, direct with peer access, staged by
/// the driver without).
pub(crate) fn copy_dtod_async(
    dst: &DeviceBuffer,
    src: &DeviceBuffer,
    bytes: usize,
    s: &Stream,
) -> Result<(), CudaError> {
    debug_assert!(bytes <= dst.bytes && bytes <= src.bytes);
    let place = || format!("GPU {} -> GPU {}", src.dev.ordinal, dst.dev.ordinal);
    if std::ptr::eq(src.dev, dst.dev) {
        // SAFETY: as in copy_htod_async; both buffers are on this GPU.
        unsafe { result::memcpy_dtod_async(dst.ptr, src.ptr, bytes, s.raw) }.during("cuMemcpyDtoDAsync")
    } else {
        // SAFETY: as in copy_htod_async; each buffer belongs to the
        // context named with it.
        unsafe { result::memcpy_peer_async(dst.dev.ctx, dst.ptr, src.dev.ctx, src.ptr, bytes, s.raw) }
            .during("cuMemcpyPeerAsync")
    }
    .map_err(|e| e.at(place()))
}

/// Queues one copy between any two addresses the driver knows (device
/// or pinned host memory, cuMemcpyAsync), as nvbandwidth's copy-engine
/// copies are queued whatever their ends.
///
/// # Safety
/// `dst` and `src` must each hold `bytes` bytes of memory allocated by the
/// driver, and stay allocated until the stream's work is done.
pub(crate) unsafe fn copy_async(dst: u64, src: u64, bytes: usize, s: &Stream) -> Result<(), CudaError> {
    // SAFETY: per this function's contract.
    unsafe { sys::cuMemcpyAsync(dst, src, bytes, s.raw) }
        .result()
        .during("cuMemcpyAsync")
        .map_err(|e| e.at(s.dev.place()))
}

/// Copies host bytes to `dst` (device or pinned memory) and waits.
///
/// # Safety
/// `dst` must hold `src.len()` bytes of driver memory that no stream is
/// using.
pub(crate) unsafe fn write_to(dst: u64, src: &[u8]) -> Result<(), CudaError> {
    // SAFETY: per this function's contract.
    unsafe { result::memcpy_htod_sync(dst, src) }.during("cuMemcpyHtoD")
}

/// Copies `dst.len()` bytes from `src` (device or pinned memory) to the
/// host and waits.
///
/// # Safety
/// `src` must hold `dst.len()` bytes of driver memory that no stream is
/// writing.
pub(crate) unsafe fn read_from(dst: &mut [u8], src: u64) -> Result<(), CudaError> {
    // SAFETY: per this function's contract.
    unsafe { result::memcpy_dtoh_sync(dst, src) }.during("cuMemcpyDtoH")
}

/// One synchronous copy from ordinary (pageable) host memory, returned
/// once the GPU has the data (the copy and then cuCtxSynchronize).
pub fn copy_htod_pageable(dst: &DeviceBuffer, src: &[u8]) -> Result<(), CudaError> {
    debug_assert!(src.len() <= dst.bytes);
    // SAFETY: `dst` holds at least `src.len()` bytes; the current context
    // is `dst`'s (made so by the caller).
    unsafe { result::memcpy_htod_sync(dst.ptr, src) }.during("cuMemcpyHtoD").map_err(|e| e.at(dst.dev.place()))?;
    result::ctx::synchronize().during("cuCtxSynchronize").map_err(|e| e.at(dst.dev.place()))
}

/// One synchronous copy into ordinary (pageable) host memory.
pub fn copy_dtoh_pageable(dst: &mut [u8], src: &DeviceBuffer) -> Result<(), CudaError> {
    debug_assert!(dst.len() <= src.bytes);
    // SAFETY: `src` holds at least `dst.len()` bytes; the current context
    // is `src`'s (made so by the caller).
    unsafe { result::memcpy_dtoh_sync(dst, src.ptr) }.during("cuMemcpyDtoH").map_err(|e| e.at(src.dev.place()))?;
    result::ctx::synchronize().during("cuCtxSynchronize").map_err(|e| e.at(src.dev.place()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_one_line_with_their_place() {
        let e = CudaError {
            place: String::new(),
            call: "cuMemAlloc",
            name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            text: "out of memory".into(),
        };
        assert_eq!(e.to_string(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
        let at = e.clone().at("GPU 3").at("GPU 4");
        assert_eq!(at.to_string(), "GPU 3: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
        assert!(!at.is_no_device());
        let none = CudaError { name: "CUDA_ERROR_NO_DEVICE".into(), text: String::new(), ..e };
        assert!(none.is_no_device());
        assert_eq!(none.to_string(), "cuMemAlloc failed: CUDA_ERROR_NO_DEVICE");
    }

    /// On a machine without the driver, the loader's reason is read
    /// without touching cudarc (which would panic).
    #[test]
    fn load_failure_agrees_with_driver_present() {
        if !driver_present() {
            let why = load_failure().expect("libcuda.so.1 should not load when the driver is absent");
            assert!(!why.is_empty() && !why.contains('\n'), "{why}");
        }
    }
}
