//! nvbandwidth's kernel side: the SM copies (the copy kernels of
//! [`crate::gpu_bw::kernels`], one per GPU, compiled at run time) and the
//! pointer-chase latency, as the tool measures it: a 2 MiB buffer of
//! pointers each 16 nodes (128 bytes, a cache line) on from the last, a
//! kernel of one thread per block on as many blocks as GPU 0 has SMs,
//! launched once per block with only that block chasing a million / SMs
//! pointers, timed by events; the latency is the sum of those times over
//! a million accesses.

use super::output::Matrix;
use super::run::Bench;
use crate::gpu_bw::driver::{self, CudaError, Device, Event, Stream};
use crate::gpu_bw::kernels::Kernels;
use crate::gpu_bw::measure::concurrent::{Copier, Failure, Mem};

/// Pointer loads per latency figure, over all blocks.
const ACCESSES: u64 = 1_000_000;
/// Nodes from one pointer to the one it names.
const STRIDE: usize = 16;
/// The latency cases' buffer.
pub(crate) const LATENCY_BYTES: usize = 2 << 20;

/// The kernels of every GPU, loaded before any case runs.
pub(crate) struct SmKit<'d> {
    kernels: Vec<Kernels<'d>>,
    devs: &'d [Device],
}

/// SM copies: the copy kernel (or the split copy, half the warps each
/// way) of the GPU the copy is issued from.
pub(crate) struct KernelCopy<'a, 'd> {
    kit: &'a SmKit<'d>,
    split: bool,
}

impl Copier for KernelCopy<'_, '_> {
    fn checked_bytes(&self, ctx: &Device, bytes: usize) -> usize {
        self.kit.kernels[ctx.ordinal].copy_size(bytes)
    }

    fn queue(&self, s: &Stream, dst: u64, src: u64, bytes: usize, loops: u64) -> Result<usize, CudaError> {
        let k = &self.kit.kernels[s.dev.ordinal];
        if self.split {
            k.split_warp_copy(s, dst, src, bytes, loops)
        } else {
            k.copy(s, dst, src, bytes, loops)
        }
    }

    fn both_ways(&self) -> bool {
        self.split
    }
}

impl<'d> SmKit<'d> {
    /// Compiles and loads the kernels on every GPU; Err is one line.
    pub fn load(devs: &'d [Device]) -> Result<SmKit<'d>, String> {
        let kernels = devs.iter().map(Kernels::load).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
        Ok(SmKit { kernels, devs })
    }

    /// Every GPU's kernels, by ordinal.
    pub fn kernels(&self) -> &[Kernels<'d>] {
        &self.kernels
    }

    pub fn copier(&self, split: bool) -> KernelCopy<'_, 'd> {
        KernelCopy { kit: self, split }
    }

    /// Fills `m`: per GPU the latency of its loads from host memory, or
    /// (`peer`) per pair the latency of the row's GPU loading from the
    /// column's memory, where the row's GPU can map it.
    pub fn latency(&self, b: &Bench<'d>, peer: bool, m: &mut Matrix) -> Result<(), Failure> {
        let nodes = LATENCY_BYTES / 8;
        let chain = |base: u64| -> Vec<u8> {
            (0..nodes).flat_map(|i| (base + ((i + STRIDE) % nodes * 8) as u64).to_ne_bytes()).collect()
        };
        if !peer {
            for d in 0..self.devs.len() {
                let mut buf = b.host(d, LATENCY_BYTES)?;
                let Mem::Host(h) = &mut buf else { unreachable!("host memory") };
                let links = chain(h.ptr());
                h.as_mut_slice().copy_from_slice(&links);
                m.set(0, d, self.chase(d, buf.addr())?);
            }
            return Ok(());
        }
        for p in 0..self.devs.len() {
            let buf = b.device(p, LATENCY_BYTES)?;
            let links = chain(buf.addr());
            // SAFETY: the buffer holds LATENCY_BYTES bytes; no stream uses it yet.
            unsafe { driver::write_to(buf.addr(), &links) }?;
            self.devs[p].synchronize()?;
            for s in (0..self.devs.len()).filter(|&s| s != p) {
                if !b.peer(s, p)? {
                    continue;
                }
                m.set(s, p, self.chase(s, buf.addr())?);
            }
        }
        Ok(())
    }

    /// Nanoseconds per load of GPU `d` chasing pointers from `start`.
    fn chase(&self, d: usize, start: u64) -> Result<f64, CudaError> {
        // The tool sizes the grid by GPU 0's SMs, whichever GPU chases.
        let blocks = self.kernels[0].multiprocessors().max(1);
        let per_block = u32::try_from(ACCESSES / u64::from(blocks)).unwrap_or(u32::MAX);
        let dev = &self.devs[d];
        let s = Stream::new(dev)?;
        let (begin, end) = (Event::new(dev)?, Event::new(dev)?);
        let mut seconds = 0.0f64;
        for target in 0..blocks {
            begin.record(&s)?;
            self.kernels[d].pointer_chase(&s, start, per_block, target, blocks)?;
            end.record(&s)?;
            s.synchronize()?;
            // The tool adds each launch's milliseconds / 1000 in single
            // precision to a double.
            seconds += f64::from(begin.ms_until(&end)? / 1000.0);
        }
        Ok(seconds * 1e9 / ACCESSES as f64)
    }
}
