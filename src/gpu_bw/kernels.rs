//! The SM (kernel) copies and latency kernels of src/gpu/kernels.cu, for
//! the nvbandwidth drop-in and `p2pBandwidthLatencyTest --sm_copy`:
//! compiled by NVRTC once per process and compute capability, loaded as a
//! module in a GPU's primary context and launched on a [`Stream`] with
//! their arguments laid out as the C signatures say.
//!
//! Pointers are device addresses (`CUdeviceptr`) as `u64`: device memory,
//! or pinned host memory, which unified addressing maps at its host
//! address. Sizes follow the kernels' shapes: a copy below 64 MiB runs the
//! simple kernel (one 16-byte element per thread, blocks of up to 1024
//! threads, as many whole blocks as fit, so a tail shorter than a block is
//! not copied), from 64 MiB the strided kernel over the GPU's SMs x 512
//! threads (elements rounded down to a multiple of that); the copy calls
//! return the bytes really moved per loop, for the bandwidth arithmetic.
//! The p2pBandwidthLatencyTest copy is the grid-stride kernel instead,
//! launched on the grid CUDA's occupancy calculator proposes
//! ([`Kernels::grid_stride_shape`]), which covers any number of elements.

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void, CString};
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys;

use super::driver::{CudaError, Device, During, Stream};
use crate::gpu::nvrtc_lib::{self, CompiledImage, NvrtcError};

/// The kernels' CUDA C, compiled at run time.
pub const SOURCE: &str = include_str!("../gpu/kernels.cu");

/// The name NVRTC gives the program in its messages.
pub const SOURCE_NAME: &str = "kernels.cu";

/// Every kernel of [`SOURCE`], in [`Fn`]'s order.
pub const ENTRY_POINTS: [&str; 8] = [
    "commbench_copy_simple",
    "commbench_copy_strided",
    "commbench_copy_split_warp",
    "commbench_pointer_chase",
    "commbench_fill_pattern",
    "commbench_count_mismatches",
    "commbench_clear_warp_parity",
    "commbench_copy_grid_stride",
];

/// Index of each kernel in [`ENTRY_POINTS`].
#[derive(Clone, Copy)]
enum Fn {
    CopySimple = 0,
    CopyStrided = 1,
    CopySplitWarp = 2,
    PointerChase = 3,
    FillPattern = 4,
    CountMismatches = 5,
    ClearWarpParity = 6,
    CopyGridStride = 7,
}

/// From this size on a copy runs the strided kernel.
pub const STRIDED_FROM: usize = 64 << 20;

/// Threads per SM of the strided kernel (its block size; one block per SM).
pub const STRIDED_THREADS_PER_SM: u32 = 512;

/// The most threads a block has.
const MAX_BLOCK: usize = 1024;

/// Why the kernels cannot be used: one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// NVRTC is missing or could not compile them.
    Nvrtc(NvrtcError),
    /// A driver call failed (loading the module, finding a function).
    Cuda(CudaError),
    /// NVRTC cannot compile for this GPU.
    Arch(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Nvrtc(e) => write!(f, "cannot build the SM copy kernels: {e}"),
            KernelError::Cuda(e) => write!(f, "cannot load the SM copy kernels: {e}"),
            KernelError::Arch(line) => f.write_str(line),
        }
    }
}

impl std::error::Error for KernelError {}

impl From<CudaError> for KernelError {
    fn from(e: CudaError) -> KernelError {
        KernelError::Cuda(e)
    }
}

impl From<NvrtcError> for KernelError {
    fn from(e: NvrtcError) -> KernelError {
        KernelError::Nvrtc(e)
    }
}

/// The NVRTC option choosing what to build for a GPU of compute
/// capability `cc` (as 90 for 9.0): CUBIN for `sm_<cc>` when NVRTC
/// supports that architecture, else PTX for the highest supported
/// `compute_XY` not above it (the driver compiles that for the GPU);
/// `supported` None (an NVRTC that cannot say) asks for `sm_<cc>`.
pub fn arch_option(cc: u32, supported: Option<&[u32]>) -> Result<String, String> {
    let Some(archs) = supported else {
        return Ok(format!("-arch=sm_{cc}"));
    };
    if archs.contains(&cc) {
        return Ok(format!("-arch=sm_{cc}"));
    }
    match archs.iter().copied().filter(|&a| a <= cc).max() {
        Some(a) => Ok(format!("-arch=compute_{a}")),
        None => Err(format!(
            "NVRTC cannot build the SM copy kernels for compute capability {}.{}: it supports {}",
            cc / 10,
            cc % 10,
            archs.iter().map(|a| format!("{}.{}", a / 10, a % 10)).collect::<Vec<_>>().join(", ")
        )),
    }
}

type ImageCache = Mutex<HashMap<u32, Result<Arc<CompiledImage>, KernelError>>>;

/// The image for compute capability `cc`, compiled on first use; the
/// outcome, failure included, is kept for the process.
fn image_for(cc: u32) -> Result<Arc<CompiledImage>, KernelError> {
    static CACHE: OnceLock<ImageCache> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(cc)
        .or_insert_with(|| {
            let nvrtc = nvrtc_lib::load()?;
            let option = arch_option(cc, nvrtc.supported_archs().as_deref()).map_err(KernelError::Arch)?;
            Ok(Arc::new(nvrtc.compile(SOURCE, SOURCE_NAME, &[option.as_str()])?))
        })
        .clone()
}

/// The kernels loaded on one GPU (a module in its primary context).
pub struct Kernels<'d> {
    dev: &'d Device,
    module: sys::CUmodule,
    fns: [sys::CUfunction; ENTRY_POINTS.len()],
    sms: u32,
}

/// The simple kernel's shape for `bytes`: (grid, block), both 0 when
/// nothing fits.
pub(crate) fn simple_shape(bytes: usize) -> (usize, usize) {
    let n16 = bytes / 16;
    if n16 == 0 {
        return (0, 0);
    }
    let block = n16.min(MAX_BLOCK);
    (n16 / block, block)
}

impl<'d> Kernels<'d> {
    /// The GPU they are loaded on.
    pub fn device(&self) -> &'d Device {
        self.dev
    }

    /// Compiles (once per process and compute capability) and loads the
    /// kernels on `dev`, looking every function up.
    pub fn load(dev: &'d Device) -> Result<Kernels<'d>, KernelError> {
        let (major, minor) = dev.compute_capability()?;
        let sms = dev.multiprocessors()?;
        if sms == 0 {
            return Err(KernelError::Arch(format!("{}: the driver reports no multiprocessors", dev.place())));
        }
        let image = image_for(major * 10 + minor)?;
        dev.make_current()?;
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the image is a complete PTX text (NUL-terminated) or
        // CUBIN from NVRTC, alive for the call; one handle is written.
        unsafe { sys::cuModuleLoadData(&mut module, image.bytes().as_ptr() as *const c_void) }
            .result()
            .during("cuModuleLoadData")
            .map_err(|e| e.at(dev.place()))?;
        let mut kernels = Kernels { dev, module, fns: [std::ptr::null_mut(); ENTRY_POINTS.len()], sms };
        for (slot, name) in kernels.fns.iter_mut().zip(ENTRY_POINTS) {
            let cname = CString::new(name).expect("entry names hold no NUL");
            // SAFETY: the module is loaded (and unloaded only by Drop); the
            // name is NUL-terminated; one handle is written.
            unsafe { sys::cuModuleGetFunction(slot, module, cname.as_ptr()) }
                .result()
                .during("cuModuleGetFunction")
                .map_err(|e| e.at(format!("{} ({name})", dev.place())))?;
        }
        Ok(kernels)
    }

    /// The GPU's streaming multiprocessors.
    pub fn multiprocessors(&self) -> u32 {
        self.sms
    }

    /// The strided kernel's threads: SMs x 512.
    fn strided_threads(&self) -> usize {
        self.sms as usize * STRIDED_THREADS_PER_SM as usize
    }

    /// The bytes one SM copy of `bytes` really moves per loop: below 64
    /// MiB the simple kernel's grid x block elements of 16 bytes (a tail
    /// short of a whole block is left), from 64 MiB the strided kernel's
    /// elements rounded down to a multiple of SMs x 512.
    pub fn copy_size(&self, bytes: usize) -> usize {
        if bytes < STRIDED_FROM {
            let (grid, block) = simple_shape(bytes);
            grid * block * 16
        } else {
            let threads = self.strided_threads();
            bytes / 16 / threads * threads * 16
        }
    }

    /// Queues an SM copy of `bytes` from `src` to `dst`, `loops` times;
    /// returns [`Kernels::copy_size`] (nothing is launched when it is 0).
    pub fn copy(&self, s: &Stream, dst: u64, src: u64, bytes: usize, loops: u64) -> Result<usize, CudaError> {
        let size = self.copy_size(bytes);
        if size == 0 {
            return Ok(0);
        }
        if bytes < STRIDED_FROM {
            let (grid, block) = simple_shape(bytes);
            let (mut loops, mut dst, mut src) = (loops, dst, src);
            self.launch(s, Fn::CopySimple, grid, block, &mut [arg(&mut loops), arg(&mut dst), arg(&mut src)])?;
        } else {
            let threads = self.strided_threads();
            let mut per_thread: usize = size / 16 / threads;
            let mut nthreads = threads as c_uint;
            let (mut loops, mut dst, mut src) = (loops, dst, src);
            self.launch(
                s,
                Fn::CopyStrided,
                self.sms as usize,
                STRIDED_THREADS_PER_SM as usize,
                &mut [arg(&mut nthreads), arg(&mut loops), arg(&mut dst), arg(&mut src), arg(&mut per_thread)],
            )?;
        }
        Ok(size)
    }

    /// The bytes a split-warp copy of `bytes` covers in each buffer: the
    /// simple kernel's grid x block x 16 (half of them move each way).
    pub fn split_warp_size(&self, bytes: usize) -> usize {
        let (grid, block) = simple_shape(bytes);
        grid * block * 16
    }

    /// Queues a bidirectional copy between `dst` and `src`: odd warps copy
    /// their elements from `src` to `dst`, even warps from `dst` to `src`,
    /// `loops` times; returns [`Kernels::split_warp_size`].
    pub fn split_warp_copy(
        &self,
        s: &Stream,
        dst: u64,
        src: u64,
        bytes: usize,
        loops: u64,
    ) -> Result<usize, CudaError> {
        let (grid, block) = simple_shape(bytes);
        if grid == 0 {
            return Ok(0);
        }
        let (mut loops, mut a, mut b) = (loops, dst, src);
        self.launch(s, Fn::CopySplitWarp, grid, block, &mut [arg(&mut loops), arg(&mut a), arg(&mut b)])?;
        Ok(grid * block * 16)
    }

    /// The grid-stride copy's launch shape on this GPU, (grid, block), as
    /// the CUDA runtime's `cudaOccupancyMaxPotentialBlockSize` gives it
    /// (here the driver's cuOccupancyMaxPotentialBlockSize, without
    /// dynamic shared memory or a block limit): the block size that keeps
    /// the most threads resident on an SM, and as many blocks as all the
    /// GPU's SMs hold at once at that size (blocks per SM x SMs).
    pub fn grid_stride_shape(&self) -> Result<(usize, usize), CudaError> {
        let (mut grid, mut block): (c_int, c_int) = (0, 0);
        self.dev.make_current()?;
        // SAFETY: the function belongs to this module, loaded in the
        // device's context (now current); two ints are written; no
        // callback is passed.
        unsafe {
            sys::cuOccupancyMaxPotentialBlockSize(
                &mut grid,
                &mut block,
                self.fns[Fn::CopyGridStride as usize],
                None,
                0,
                0,
            )
        }
        .result()
        .during("cuOccupancyMaxPotentialBlockSize")
        .map_err(|e| e.at(format!("{} ({})", self.dev.place(), ENTRY_POINTS[Fn::CopyGridStride as usize])))?;
        Ok((usize::try_from(grid).unwrap_or(0), usize::try_from(block).unwrap_or(0)))
    }

    /// Queues the grid-stride copy of `elements` 16-byte elements from
    /// `src` to `dst` on `shape` (grid, block; see
    /// [`Kernels::grid_stride_shape`]), once. Every element is copied
    /// whatever the shape; with none the kernel still runs, copying
    /// nothing (as the sample's does for fewer than four ints).
    pub fn copy_grid_stride(
        &self,
        s: &Stream,
        shape: (usize, usize),
        dst: u64,
        src: u64,
        elements: usize,
    ) -> Result<(), CudaError> {
        let (mut dst, mut src, mut n) = (dst, src, elements);
        self.launch(s, Fn::CopyGridStride, shape.0, shape.1, &mut [arg(&mut dst), arg(&mut src), arg(&mut n)])
    }

    /// The grid of a grid-stride kernel over `n` elements: 1024 threads a
    /// block, enough blocks for one element each up to SMs x 32 blocks.
    fn stride_grid(&self, n: u64) -> usize {
        let blocks = n.div_ceil(MAX_BLOCK as u64).max(1);
        blocks.min(u64::from(self.sms.max(1)) * 32) as usize
    }

    /// Queues `buf[i] = pattern[i % len]` over the 32-bit words of `bytes`,
    /// the pattern being `pattern_bytes` of device memory.
    pub fn fill_pattern(
        &self,
        s: &Stream,
        buf: u64,
        bytes: usize,
        pattern: u64,
        pattern_bytes: usize,
    ) -> Result<(), CudaError> {
        let (mut n, mut len) = self.words(bytes, pattern_bytes, "commbench_fill_pattern")?;
        let (mut buf, mut pattern) = (buf, pattern);
        let grid = self.stride_grid(n);
        self.launch(
            s,
            Fn::FillPattern,
            grid,
            MAX_BLOCK,
            &mut [arg(&mut buf), arg(&mut pattern), arg(&mut n), arg(&mut len)],
        )
    }

    /// Queues a count of the 32-bit words of `bytes` at `buf` that differ
    /// from the pattern, added to the `u64` at `counter` (device memory the
    /// caller zeroes before and reads after).
    pub fn count_mismatches(
        &self,
        s: &Stream,
        buf: u64,
        bytes: usize,
        pattern: u64,
        pattern_bytes: usize,
        counter: u64,
    ) -> Result<(), CudaError> {
        let (mut n, mut len) = self.words(bytes, pattern_bytes, "commbench_count_mismatches")?;
        let (mut buf, mut pattern, mut counter) = (buf, pattern, counter);
        let grid = self.stride_grid(n);
        self.launch(
            s,
            Fn::CountMismatches,
            grid,
            MAX_BLOCK,
            &mut [arg(&mut buf), arg(&mut pattern), arg(&mut n), arg(&mut len), arg(&mut counter)],
        )
    }

    /// Queues the zeroing of the elements of warps whose parity is `odd`,
    /// over the split-warp copy's shape for `bytes`.
    pub fn clear_warp_parity(&self, s: &Stream, buf: u64, bytes: usize, odd: bool) -> Result<(), CudaError> {
        let (grid, block) = simple_shape(bytes);
        if grid == 0 {
            return Ok(());
        }
        let (mut buf, mut odd) = (buf, i32::from(odd));
        self.launch(s, Fn::ClearWarpParity, grid, block, &mut [arg(&mut buf), arg(&mut odd)])
    }

    /// Queues a pointer chase: `blocks` blocks of one thread, of which
    /// `target_block` follows `accesses` pointers from `start`.
    pub fn pointer_chase(
        &self,
        s: &Stream,
        start: u64,
        accesses: u32,
        target_block: u32,
        blocks: u32,
    ) -> Result<(), CudaError> {
        let (mut start, mut accesses, mut target) = (start, accesses, target_block);
        self.launch(
            s,
            Fn::PointerChase,
            blocks as usize,
            1,
            &mut [arg(&mut start), arg(&mut accesses), arg(&mut target)],
        )
    }

    /// (words, pattern words) of a pattern kernel; an empty pattern is an
    /// invalid value, as the kernel would divide by zero.
    fn words(&self, bytes: usize, pattern_bytes: usize, call: &'static str) -> Result<(u64, c_uint), CudaError> {
        let len = pattern_bytes / 4;
        if len == 0 || len > c_uint::MAX as usize {
            return Err(CudaError {
                place: self.dev.place(),
                call,
                name: "CUDA_ERROR_INVALID_VALUE".into(),
                text: format!("a pattern of {pattern_bytes} bytes holds no whole 32-bit word (or too many)"),
            });
        }
        Ok(((bytes / 4) as u64, len as c_uint))
    }

    /// cuLaunchKernel of `f` with a 1-D grid and block, the parameters
    /// pointing at the caller's values (laid out as the C signature).
    fn launch(
        &self,
        s: &Stream,
        f: Fn,
        grid: usize,
        block: usize,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        let name = ENTRY_POINTS[f as usize];
        let too_big = |what: &str, v: usize| CudaError {
            place: self.dev.place(),
            call: "cuLaunchKernel",
            name: "CUDA_ERROR_INVALID_VALUE".into(),
            text: format!("{name}'s {what} of {v} does not fit the launch"),
        };
        let grid =
            c_uint::try_from(grid).ok().filter(|&g| g <= i32::MAX as c_uint).ok_or_else(|| too_big("grid", grid))?;
        let block = c_uint::try_from(block).map_err(|_| too_big("block", block))?;
        self.dev.make_current()?;
        // SAFETY: the function belongs to this module, loaded in the
        // device's context (now current); `params` holds one pointer per
        // parameter of the kernel, each to a value of the C type, alive
        // for the call (the driver copies them at launch); the addresses
        // they carry are the caller's to vouch for, as on a GPU (a bad one
        // faults the context, reported at the next synchronisation).
        unsafe {
            sys::cuLaunchKernel(
                self.fns[f as usize],
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                s.raw(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .during("cuLaunchKernel")
        .map_err(|e| e.at(format!("{} ({name})", self.dev.place())))
    }
}

/// A kernel parameter: a pointer to the caller's value.
fn arg<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}

impl Drop for Kernels<'_> {
    fn drop(&mut self) {
        let _ = self.dev.make_current();
        // SAFETY: loaded in `load`, unloaded once; the streams that ran its
        // kernels were synchronised by their owners before this drop.
        let _ = unsafe { sys::cuModuleUnload(self.module) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_supported_gpu_gets_cubin_else_the_nearest_ptx_below() {
        let archs = [50, 52, 60, 70, 75, 80, 86, 89, 90, 100, 120];
        assert_eq!(arch_option(90, Some(&archs)), Ok("-arch=sm_90".into()));
        assert_eq!(arch_option(87, Some(&archs)), Ok("-arch=compute_86".into()));
        assert_eq!(arch_option(130, Some(&archs)), Ok("-arch=compute_120".into()));
        assert_eq!(arch_option(70, None), Ok("-arch=sm_70".into()));
        let old = arch_option(35, Some(&archs)).unwrap_err();
        assert!(old.contains("3.5") && old.contains("5.0") && !old.contains('\n'), "{old}");
    }

    #[test]
    fn simple_shapes_copy_whole_blocks_only() {
        assert_eq!(simple_shape(0), (0, 0));
        assert_eq!(simple_shape(15), (0, 0));
        assert_eq!(simple_shape(16 * 100), (1, 100));
        // 1 MiB + 48 B: 65539 elements, 64 blocks of 1024; 3 left over.
        assert_eq!(simple_shape((1 << 20) + 48), (64, 1024));
        assert_eq!(simple_shape(16 * 2047), (1, 1024));
    }

    #[test]
    fn every_entry_point_is_defined_in_the_source() {
        for name in ENTRY_POINTS {
            assert!(SOURCE.contains(&format!("extern \"C\" __global__ void {name}(")), "{name}");
        }
        assert_eq!(SOURCE.matches("__global__").count(), ENTRY_POINTS.len());
    }
}
