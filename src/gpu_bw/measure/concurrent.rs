//! Copies that run at the same time, timed as nvbandwidth times them: each
//! copy on a stream of its own in the context it is issued from; per
//! sample, both buffers of every copy filled with a known pattern, every
//! stream held by a gate while a warm-up of 4 copies, the start events
//! (the first stream's, then every other stream waiting for it and
//! recording its own), `loops` timed copies and an end event per stream
//! are queued, and where a total is asked the first stream waiting for
//! every other's end before a total end event; then the gates open, the
//! streams are waited for, and the destinations are checked against the
//! source pattern. Per copy and sample the bandwidth is nvbandwidth's
//! integer one: bytes x loops x 10^6 over the whole microseconds between
//! the copy's events (halved for a split copy, which moves data both
//! ways); the total is all copies' bytes over the time from the first
//! start to the total end. Device memory is filled and checked by the
//! GPU's own kernels where they could be compiled ([`DeviceCheck`]), as
//! nvbandwidth does, else through the host; pinned host memory by the
//! host.

use super::super::driver::{self, copy_async, CudaError, Device, DeviceBuffer, Event, Gate, PinnedBuffer, Stream};
use super::super::kernels::{simple_shape, Kernels};

/// Untimed copies before each sample's timed ones.
pub(crate) const WARMUP: u64 = 4;
/// The pattern's length: 2 MiB of 32-bit words, repeated over a buffer.
pub(crate) const PATTERN_BYTES: usize = 2 << 20;
/// The seeds of the two patterns: the source's, and the destination's
/// before the copy.
pub(crate) const SOURCE_SEED: u32 = 0xBAAD_F00D;
pub(crate) const DESTINATION_SEED: u32 = 0xCAFE_BABE;

/// One end of a copy: device memory of one GPU, or pinned host memory
/// (allocated in a GPU's context, usable from every one).
pub(crate) enum Mem<'d> {
    Device(DeviceBuffer<'d>),
    Host(PinnedBuffer<'d>),
}

impl<'d> Mem<'d> {
    pub fn device(dev: &'d Device, bytes: usize) -> Result<Mem<'d>, CudaError> {
        DeviceBuffer::new(dev, bytes).map(Mem::Device)
    }

    pub fn host(dev: &'d Device, bytes: usize) -> Result<Mem<'d>, CudaError> {
        PinnedBuffer::new(dev, bytes).map(Mem::Host)
    }

    pub fn addr(&self) -> u64 {
        match self {
            Mem::Device(b) => b.ptr(),
            Mem::Host(b) => b.ptr(),
        }
    }

    pub fn bytes(&self) -> usize {
        match self {
            Mem::Device(b) => b.bytes,
            Mem::Host(b) => b.bytes,
        }
    }

    /// The GPU whose memory this is (None: host memory).
    pub fn gpu(&self) -> Option<&'d Device> {
        match self {
            Mem::Device(b) => Some(b.device_ref()),
            Mem::Host(_) => None,
        }
    }

    /// `Host`, or `Device N`, as nvbandwidth names a buffer.
    pub fn label(&self) -> String {
        match self.gpu() {
            Some(d) => format!("Device {}", d.ordinal),
            None => "Host".to_string(),
        }
    }

    /// Device memory's address and its GPU's checker, where there is one.
    fn on_gpu<'c, 'k>(&self, check: Option<&'c DeviceCheck<'k, 'd>>) -> Option<(u64, &'c GpuCheck<'k, 'd>)> {
        match self {
            Mem::Device(b) => Some((b.ptr(), check?.on(self.gpu())?)),
            Mem::Host(_) => None,
        }
    }

    /// Writes `pattern` (the source's, or the destination's before the
    /// copy) over the first `bytes` bytes.
    fn fill(
        &mut self,
        pattern: &[u8],
        source: bool,
        bytes: usize,
        check: Option<&DeviceCheck>,
    ) -> Result<(), CudaError> {
        if let Some((ptr, gc)) = self.on_gpu(check) {
            return gc.fill(ptr, bytes, source);
        }
        match self {
            Mem::Host(b) => {
                let dst = &mut b.as_mut_slice()[..bytes];
                for chunk in dst.chunks_mut(PATTERN_BYTES) {
                    let n = chunk.len();
                    chunk.copy_from_slice(&pattern[..n]);
                }
                Ok(())
            }
            Mem::Device(b) => {
                b.device_ref().make_current()?;
                let mut at = 0;
                while at < bytes {
                    let n = (bytes - at).min(PATTERN_BYTES);
                    // SAFETY: the buffer holds `bytes` bytes; no stream is
                    // using it between samples.
                    unsafe { driver::write_to(b.ptr() + at as u64, &pattern[..n]) }?;
                    at += n;
                }
                // A copy from pageable memory returns once staged; the
                // timed streams do not wait for the legacy stream.
                b.device_ref().synchronize()
            }
        }
    }

    /// Zeroes the 16-byte elements of the warps (32 elements each) of one
    /// parity among those the split copy of `bytes` covers.
    fn clear_warps(&mut self, bytes: usize, odd: bool, check: Option<&DeviceCheck>) -> Result<(), CudaError> {
        if let Some((ptr, gc)) = self.on_gpu(check) {
            return gc.clear(ptr, bytes, odd);
        }
        let (grid, block) = simple_shape(bytes);
        let elements = grid * block;
        let zero = [0u8; 16 * 32];
        let mut warp = usize::from(odd);
        while warp * 32 < elements {
            let first = warp * 32;
            let n = (elements - first).min(32) * 16;
            match self {
                Mem::Host(b) => b.as_mut_slice()[first * 16..first * 16 + n].fill(0),
                Mem::Device(b) => {
                    b.device_ref().make_current()?;
                    // SAFETY: within the buffer's first `elements` x 16 bytes.
                    unsafe { driver::write_to(b.ptr() + (first * 16) as u64, &zero[..n]) }?;
                }
            }
            warp += 2;
        }
        match self {
            Mem::Device(b) => b.device_ref().synchronize(),
            Mem::Host(_) => Ok(()),
        }
    }

    /// How many 32-bit words of the first `bytes` bytes differ from the
    /// source's pattern.
    fn count_wrong(&mut self, pattern: &[u8], bytes: usize, check: Option<&DeviceCheck>) -> Result<u64, CudaError> {
        if let Some((ptr, gc)) = self.on_gpu(check) {
            return gc.count(ptr, bytes);
        }
        let words_differing = |got: &[u8], want: &[u8]| {
            got.chunks_exact(4).zip(want.chunks_exact(4)).filter(|(a, b)| a != b).count() as u64
        };
        match self {
            Mem::Host(b) => Ok(b.as_mut_slice()[..bytes]
                .chunks(PATTERN_BYTES)
                .map(|c| words_differing(c, &pattern[..c.len()]))
                .sum()),
            Mem::Device(b) => {
                b.device_ref().make_current()?;
                let mut got = vec![0u8; PATTERN_BYTES];
                let (mut at, mut wrong) = (0, 0);
                while at < bytes {
                    let n = (bytes - at).min(PATTERN_BYTES);
                    // SAFETY: within the buffer; its streams are done.
                    unsafe { driver::read_from(&mut got[..n], b.ptr() + at as u64) }?;
                    wrong += words_differing(&got[..n], &pattern[..n]);
                    at += n;
                }
                Ok(wrong)
            }
        }
    }
}

/// Fills and checks on the GPUs: each GPU's kernels, its copies of the
/// two patterns and a counter, and a stream of its own. A 512 MiB buffer
/// is then filled or checked in about a millisecond, where through the
/// host it takes some hundreds.
pub(crate) struct DeviceCheck<'k, 'd> {
    gpus: Vec<GpuCheck<'k, 'd>>,
}

struct GpuCheck<'k, 'd> {
    kernels: &'k Kernels<'d>,
    source: DeviceBuffer<'d>,
    before: DeviceBuffer<'d>,
    counter: DeviceBuffer<'d>,
    stream: Stream<'d>,
}

impl<'k, 'd> DeviceCheck<'k, 'd> {
    /// Puts the patterns on every GPU of `kernels` (one per GPU).
    pub fn new(kernels: &'k [Kernels<'d>]) -> Result<DeviceCheck<'k, 'd>, CudaError> {
        let (source_pattern, before_pattern) = (pattern(SOURCE_SEED), pattern(DESTINATION_SEED));
        let gpus = kernels
            .iter()
            .map(|k| {
                let dev = k.device();
                dev.make_current()?;
                let source = DeviceBuffer::new(dev, PATTERN_BYTES)?;
                let before = DeviceBuffer::new(dev, PATTERN_BYTES)?;
                let counter = DeviceBuffer::new(dev, 8)?;
                // SAFETY: each buffer holds what is written; nothing else
                // uses them yet.
                unsafe {
                    driver::write_to(source.ptr(), &source_pattern)?;
                    driver::write_to(before.ptr(), &before_pattern)?;
                }
                dev.synchronize()?;
                Ok(GpuCheck { kernels: k, source, before, counter, stream: Stream::new(dev)? })
            })
            .collect::<Result<Vec<_>, CudaError>>()?;
        Ok(DeviceCheck { gpus })
    }

    fn on(&self, dev: Option<&Device>) -> Option<&GpuCheck<'k, 'd>> {
        let dev = dev?;
        self.gpus.iter().find(|g| g.stream.dev.ordinal == dev.ordinal)
    }
}

impl GpuCheck<'_, '_> {
    fn fill(&self, buf: u64, bytes: usize, source: bool) -> Result<(), CudaError> {
        self.stream.dev.make_current()?;
        let pattern = if source { self.source.ptr() } else { self.before.ptr() };
        self.kernels.fill_pattern(&self.stream, buf, bytes, pattern, PATTERN_BYTES)?;
        self.stream.synchronize()
    }

    fn clear(&self, buf: u64, bytes: usize, odd: bool) -> Result<(), CudaError> {
        self.stream.dev.make_current()?;
        self.kernels.clear_warp_parity(&self.stream, buf, bytes, odd)?;
        self.stream.synchronize()
    }

    fn count(&self, buf: u64, bytes: usize) -> Result<u64, CudaError> {
        self.stream.dev.make_current()?;
        // SAFETY: the counter holds 8 bytes; its stream is idle.
        unsafe { driver::write_to(self.counter.ptr(), &[0u8; 8]) }?;
        self.kernels.count_mismatches(
            &self.stream,
            buf,
            bytes,
            self.source.ptr(),
            PATTERN_BYTES,
            self.counter.ptr(),
        )?;
        self.stream.synchronize()?;
        let mut got = [0u8; 8];
        // SAFETY: 8 bytes from the counter, its kernel done.
        unsafe { driver::read_from(&mut got, self.counter.ptr()) }?;
        Ok(u64::from_le_bytes(got))
    }
}

/// nvbandwidth's pattern: 2 MiB of 32-bit words from a xorshift generator
/// (shifts 13, 17, 5) started at `seed`, in the host's byte order.
pub(crate) fn pattern(seed: u32) -> Vec<u8> {
    let mut x = seed;
    let mut out = Vec::with_capacity(PATTERN_BYTES);
    for _ in 0..PATTERN_BYTES / 4 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.extend_from_slice(&x.to_ne_bytes());
    }
    out
}

/// How a copy is made: by the copy engine or by a kernel.
pub(crate) trait Copier {
    /// Bytes of a `bytes`-byte buffer that a copy issued from `ctx`
    /// checks after it (a kernel's copy may leave a tail uncopied).
    fn checked_bytes(&self, ctx: &Device, bytes: usize) -> usize;
    /// Queues `loops` copies of `bytes` from `src` to `dst` on `s`;
    /// returns the bytes one of them moves.
    fn queue(&self, s: &Stream, dst: u64, src: u64, bytes: usize, loops: u64) -> Result<usize, CudaError>;
    /// Whether one copy moves data both ways between its buffers (half
    /// the warps each way), so that each direction's bandwidth is half.
    fn both_ways(&self) -> bool {
        false
    }
}

/// Copy-engine copies: cuMemcpyAsync, once per loop.
pub(crate) struct EngineCopy;

impl Copier for EngineCopy {
    fn checked_bytes(&self, _ctx: &Device, bytes: usize) -> usize {
        bytes
    }

    fn queue(&self, s: &Stream, dst: u64, src: u64, bytes: usize, loops: u64) -> Result<usize, CudaError> {
        for _ in 0..loops {
            // SAFETY: both ends are `Mem` buffers of at least `bytes`
            // bytes, alive until the caller has synchronised the stream.
            unsafe { copy_async(dst, src, bytes, s) }?;
        }
        Ok(bytes)
    }
}

/// One of the copies that run together: from `src` to `dst`, issued in
/// `ctx`'s context.
pub(crate) struct Copy<'a, 'd> {
    pub src: &'a mut Mem<'d>,
    pub dst: &'a mut Mem<'d>,
    pub ctx: &'d Device,
}

/// What the samples of one set of copies gave.
#[derive(Debug, Default)]
pub(crate) struct Samples {
    /// Per copy, its bandwidth in each sample (bytes/s, nvbandwidth's
    /// integer arithmetic).
    pub per_copy: Vec<Vec<f64>>,
    /// Per sample, all copies' bytes over the time from the first start
    /// to the last end (where asked).
    pub total: Vec<f64>,
    /// Samples whose streams started before all their work was queued.
    pub gate_timeouts: usize,
}

/// A destination that did not hold the source's data after a sample.
#[derive(Debug)]
pub(crate) struct Corrupt {
    pub sample: u32,
    /// `Host -> Device 0`, as the verbose lines name the copy.
    pub copy: String,
    /// Which buffer was wrong: the copy's destination (or, for a copy
    /// both ways, its source).
    pub buffer: String,
    pub wrong_words: u64,
    pub words: u64,
}

pub(crate) enum Failure {
    Cuda(CudaError),
    Corrupt(Corrupt),
}

impl From<CudaError> for Failure {
    fn from(e: CudaError) -> Failure {
        Failure::Cuda(e)
    }
}

/// What one set of copies is timed with.
pub(crate) struct Plan<'c, 'k, 'd> {
    pub loops: u64,
    pub samples: u32,
    pub verify: bool,
    /// Fill and check device memory on the GPUs (else through the host).
    pub check: Option<&'c DeviceCheck<'k, 'd>>,
    /// Also time all the copies together (the first stream waits for the
    /// others).
    pub total: bool,
}

/// Times `copies` together, `plan.samples` times; `line` receives
/// nvbandwidth's verbose sample lines.
pub(crate) fn sample(
    copies: &mut [Copy],
    copier: &dyn Copier,
    plan: &Plan,
    line: &mut dyn FnMut(String),
) -> Result<Samples, Failure> {
    let n = copies.len();
    let mut out = Samples { per_copy: vec![Vec::new(); n], ..Samples::default() };
    if n == 0 {
        return Ok(out);
    }
    let mut streams = Vec::with_capacity(n);
    let mut starts = Vec::with_capacity(n);
    let mut ends = Vec::with_capacity(n);
    for c in copies.iter() {
        streams.push(Stream::new(c.ctx)?);
        starts.push(Event::new(c.ctx)?);
        ends.push(Event::new(c.ctx)?);
    }
    let total_end = Event::new(copies[0].ctx)?;
    let checked: Vec<usize> = copies.iter().map(|c| copier.checked_bytes(c.ctx, c.src.bytes())).collect();
    let source = pattern(SOURCE_SEED);
    let before = pattern(DESTINATION_SEED);
    let mut moved = vec![0usize; n];
    for sample in 0..plan.samples {
        for (c, &bytes) in copies.iter_mut().zip(&checked) {
            if copier.both_ways() {
                // Each buffer holds the pattern where the other direction
                // will write it, and zeros where this one will.
                c.dst.fill(&source, true, bytes, plan.check)?;
                c.src.fill(&source, true, bytes, plan.check)?;
                // The elements the split kernel's warps cover.
                c.dst.clear_warps(bytes, true, plan.check)?;
                c.src.clear_warps(bytes, false, plan.check)?;
            } else {
                c.dst.fill(&before, false, bytes, plan.check)?;
                c.src.fill(&source, true, bytes, plan.check)?;
            }
        }
        let mut gates = Vec::with_capacity(n);
        for (c, s) in copies.iter().zip(&streams) {
            gates.push(Gate::close(s)?);
            copier.queue(s, c.dst.addr(), c.src.addr(), c.src.bytes(), WARMUP)?;
        }
        copies[0].ctx.make_current()?;
        starts[0].record(&streams[0])?;
        for i in 1..n {
            copies[i].ctx.make_current()?;
            streams[i].wait(&starts[0])?;
            starts[i].record(&streams[i])?;
        }
        for (i, c) in copies.iter().enumerate() {
            c.ctx.make_current()?;
            moved[i] = copier.queue(&streams[i], c.dst.addr(), c.src.addr(), c.src.bytes(), plan.loops)?;
            ends[i].record(&streams[i])?;
            if plan.total && i != 0 {
                streams[0].wait(&ends[i])?;
            }
        }
        copies[0].ctx.make_current()?;
        total_end.record(&streams[0])?;
        gates.iter().for_each(Gate::open);
        for s in &streams {
            s.synchronize()?;
        }
        out.gate_timeouts += usize::from(gates.iter().any(Gate::held_too_long));
        if plan.verify {
            for (c, &bytes) in copies.iter_mut().zip(&checked) {
                let copy = format!("{} -> {}", c.src.label(), c.dst.label());
                let mut ends: Vec<&mut Mem> = vec![&mut *c.dst];
                if copier.both_ways() {
                    ends.push(&mut *c.src);
                }
                for m in ends {
                    let wrong = m.count_wrong(&source, bytes, plan.check)?;
                    if wrong > 0 {
                        return Err(Failure::Corrupt(Corrupt {
                            sample,
                            copy,
                            buffer: m.label(),
                            wrong_words: wrong,
                            words: (bytes / 4) as u64,
                        }));
                    }
                }
            }
        }
        for i in 0..n {
            let ms = starts[i].ms_until(&ends[i])?;
            let us = (f64::from(ms) * 1000.0) as u64;
            let mut bw = (moved[i] as u64).wrapping_mul(plan.loops).wrapping_mul(1_000_000) / us.max(1);
            if copier.both_ways() {
                bw /= 2;
            }
            out.per_copy[i].push(bw as f64);
            line(format!(
                "\tSample {sample}: {} -> {}: {:.2} GB/s\n",
                copies[i].src.label(),
                copies[i].dst.label(),
                bw as f64 * 1e-9
            ));
        }
        if plan.total {
            let ms = starts[0].ms_until(&total_end)?;
            let us = f64::from(ms) * 1000.0;
            let bytes: f64 = moved.iter().map(|&b| b as f64).sum();
            let bw = bytes * plan.loops as f64 * 1e6 / us;
            out.total.push(bw);
            line(format!("\tSample {sample}: Total Bandwidth : {:.2} GB/s\n", bw * 1e-9));
        }
    }
    Ok(out)
}

/// nvbandwidth's statistic of samples: the median (the mean of the middle
/// two for an even count, 0 for none), or the mean.
pub(crate) fn statistic(values: &[f64], mean: bool) -> f64 {
    if mean {
        return values.iter().sum::<f64>() / values.len() as f64;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 0 => (v[n / 2] + v[n / 2 - 1]) / 2.0,
        n => v[n / 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_xorshift_from_the_seed() {
        let p = pattern(1);
        let word = |i: usize| u32::from_ne_bytes(p[i * 4..i * 4 + 4].try_into().unwrap());
        // 1 -> 1^(1<<13) = 8193; ^(8193>>17)=8193; ^(8193<<5) = 8193^262176
        assert_eq!(word(0), 8193 ^ 262_176);
        assert_eq!(p.len(), PATTERN_BYTES);
        assert_ne!(pattern(SOURCE_SEED), pattern(DESTINATION_SEED));
    }

    #[test]
    fn median_and_mean() {
        assert_eq!(statistic(&[3.0, 1.0, 2.0], false), 2.0);
        assert_eq!(statistic(&[4.0, 1.0, 2.0, 3.0], false), 2.5);
        assert_eq!(statistic(&[], false), 0.0);
        assert_eq!(statistic(&[1.0, 2.0, 6.0], true), 3.0);
    }
}
