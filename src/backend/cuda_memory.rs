//! GPU memory for a CUDA-aware MPI (`-d cuda`, `-d managed`): each rank's
//! buffers are device (or managed) memory of the GPU it opened before MPI
//! started, or host memory where OSU's `SRC DST` words put that rank's
//! buffers on the host. MPI is handed the device addresses; fills and
//! validation go through host staging copies, outside timed regions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::{Buffer, Control, HostMemory, Memory, RawBuffer};
use crate::buffer::{AlignedBuf, AllocError};
use crate::gpu::cuda::{self, DeviceBuf, GpuInfo};

/// The largest element of any datatype, bytes: `-u`'s padding per
/// element (as nccl-tests pads).
const MAX_ELEMENT: usize = 8;

/// Where one rank's buffers live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Host,
    Device,
    Managed,
}

impl Place {
    /// OSU's location letter (`H`, `D`, `M...`), with `-d managed` making
    /// a device buffer managed.
    pub(crate) fn from_word(word: &str, managed: bool) -> Place {
        match word.as_bytes().first() {
            Some(b'D') if managed => Place::Managed,
            Some(b'D') => Place::Device,
            Some(b'M') => Place::Managed,
            _ => Place::Host,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Place::Host => "host",
            Place::Device => "device",
            Place::Managed => "managed",
        }
    }
}

/// A message buffer of [`CudaMemory`].
pub(crate) enum GpuBuf {
    Host(AlignedBuf),
    Device(DeviceBuf),
}

impl Buffer for GpuBuf {
    #[inline(always)]
    fn len(&self) -> usize {
        match self {
            GpuBuf::Host(b) => b.len(),
            GpuBuf::Device(b) => b.len(),
        }
    }
}

impl RawBuffer for GpuBuf {
    #[inline(always)]
    fn as_ptr(&self) -> *const u8 {
        match self {
            GpuBuf::Host(b) => b.as_ptr(),
            GpuBuf::Device(b) => b.as_ptr(),
        }
    }

    #[inline(always)]
    fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            GpuBuf::Host(b) => b.as_mut_ptr(),
            GpuBuf::Device(b) => b.as_mut_ptr(),
        }
    }
}

/// This rank's buffer place and its GPU.
pub(crate) struct CudaMemory {
    place: Place,
    gpu: GpuInfo,
    /// Why the place is what it is, when that may surprise (`-d cuda`
    /// without `D` words on a point-to-point benchmark).
    note: Option<String>,
    /// nccl-tests' `-u`: every device buffer starts this many elements of
    /// the current datatype past its allocation ([`CudaMemory::use_datatype`]
    /// moves them all), within 8 bytes per element of padding.
    unalign: usize,
    skew: Arc<AtomicUsize>,
    /// The NCCL whose `ncclMemAlloc` makes the device buffers, if any.
    nccl: Option<&'static crate::gpu::nccl_lib::NcclLib>,
}

impl CudaMemory {
    pub fn new(place: Place, gpu: GpuInfo, note: Option<String>) -> CudaMemory {
        CudaMemory { place, gpu, note, unalign: 0, skew: Arc::new(AtomicUsize::new(0)), nccl: None }
    }

    /// The memory whose device buffers `lib` allocates (`ncclMemAlloc`,
    /// where it can), as nccl-tests' are.
    pub fn allocated_by(self, lib: &'static crate::gpu::nccl_lib::NcclLib) -> CudaMemory {
        CudaMemory { nccl: Some(lib), ..self }
    }

    /// The memory whose device buffers start `elements` elements past
    /// their allocations (nccl-tests' `-u`).
    pub fn unaligned(self, elements: usize) -> CudaMemory {
        CudaMemory { unalign: elements, ..self }
    }

    /// Moves every device buffer's start to `-u` elements of `elt_size`
    /// bytes past its allocation (nothing without `-u`). The buffers'
    /// contents do not move: a fill follows.
    pub fn use_datatype(&self, elt_size: usize) {
        self.skew.store(self.unalign * elt_size.min(MAX_ELEMENT), Ordering::Relaxed);
    }

    /// Refuses GPU buffers when the MPI library says it cannot move them
    /// (handing device pointers to such a library crashes it); an MPI
    /// that does not say is trusted, and the record says it did not.
    /// Call after MPI_Init.
    pub(crate) fn check_mpi(self) -> Result<CudaMemory, String> {
        match (self.place, cuda::mpi_cuda_support()) {
            (Place::Device | Place::Managed, Some(false)) => Err(format!(
                "this MPI library cannot move CUDA memory (asked with MPIX_Query_cuda_support or \
                 MPIX_GPU_query_support, it says no): run a CUDA-aware MPI build, or leave the {} buffers on the \
                 host (H H)",
                self.place.name()
            )),
            _ => Ok(self),
        }
    }
}

/// A staging copy failed: the GPU is gone or broken, which nothing later
/// in the run can survive. The job ends with this one line, the record
/// ended `error` (see [`crate::fatal`]).
#[cold]
fn staging_failed(what: &str, e: cudarc::driver::result::DriverError) -> ! {
    crate::fatal::raise(format!(
        "CUDA failed on {}: copy {what} for a fill or validation: {}",
        crate::topo::hostname(),
        cuda::status_text(e)
    ))
}

impl Memory for CudaMemory {
    type Buf = GpuBuf;
    const MEMORY: &'static str = "cuda";

    fn alloc(&self, bytes: usize) -> Result<GpuBuf, AllocError> {
        match self.place {
            Place::Host => AlignedBuf::zeroed(bytes).map(GpuBuf::Host),
            Place::Device | Place::Managed => {
                let pad = self.unalign.saturating_mul(MAX_ELEMENT);
                DeviceBuf::zeroed(bytes, self.place == Place::Managed, pad, self.skew.clone(), self.nccl)
                    .map(GpuBuf::Device)
            }
        }
    }

    fn write_host(&self, buf: &mut GpuBuf, bytes: usize, write: impl FnOnce(&mut [u8])) {
        match buf {
            GpuBuf::Host(b) => HostMemory.write_host(b, bytes, write),
            GpuBuf::Device(b) => {
                // The range goes through the host and back, so bytes the
                // writer leaves alone keep their value; bytes past it are
                // not touched (nor copied: a buffer sized for 1 GiB costs
                // an 8-byte fill 8 bytes each way).
                let mut stage = vec![0u8; bytes.min(b.len())];
                b.copy_to_host(&mut stage).unwrap_or_else(|e| staging_failed("to the host", e));
                write(&mut stage);
                b.copy_from_host(&stage).unwrap_or_else(|e| staging_failed("to the GPU", e));
            }
        }
    }

    fn read_host<R>(&self, buf: &GpuBuf, bytes: usize, read: impl FnOnce(&[u8]) -> R) -> R {
        match buf {
            GpuBuf::Host(b) => HostMemory.read_host(b, bytes, read),
            GpuBuf::Device(b) => {
                let mut stage = vec![0u8; bytes.min(b.len())];
                b.copy_to_host(&mut stage).unwrap_or_else(|e| staging_failed("to the host", e));
                read(&stage)
            }
        }
    }

    fn gpu_buffers(&self) -> Option<(&GpuInfo, &'static str)> {
        (self.place != Place::Host).then_some((&self.gpu, self.place.name()))
    }

    fn record_info<C: Control>(&self, w: &C) -> Option<serde_json::Value> {
        let mine = json!({"buffers": self.place.name(), "gpu": self.gpu});
        let all = w.gather_bytes(mine.to_string().as_bytes());
        let support = cuda::mpi_cuda_support();
        let ranks: Vec<serde_json::Value> = all
            .iter()
            .enumerate()
            .map(|(rank, b)| {
                let mut v: serde_json::Value = serde_json::from_slice(b).unwrap_or(serde_json::Value::Null);
                if let Some(o) = v.as_object_mut() {
                    o.insert("rank".into(), rank.into());
                }
                v
            })
            .collect();
        Some(json!({
            "mpi_cuda_support": match support {
                Some(yes) => json!(yes),
                None => json!("unknown: the MPI library has no MPIX_Query_cuda_support or MPIX_GPU_query_support"),
            },
            "note": self.note,
            "ranks": ranks,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_words() {
        assert_eq!(Place::from_word("D", false), Place::Device);
        assert_eq!(Place::from_word("D", true), Place::Managed);
        assert_eq!(Place::from_word("MD", false), Place::Managed);
        assert_eq!(Place::from_word("MH", false), Place::Managed);
        assert_eq!(Place::from_word("H", true), Place::Host);
    }
}
