//! The timings of `gpu-bw`: per GPU, host-to-GPU and GPU-to-host copies
//! (pinned and pageable host memory) and copies within the GPU; per pair
//! of GPUs, one-way and two-way bandwidth and small-copy latency with peer
//! access off and on. Each event-timed measurement is: one untimed round
//! of the same copies, then a gate holding the stream, a start event, the
//! copies, a stop event, the gate opened, and the GPU time between the
//! events. Results come back as [`Measurement`]s; nothing here formats.

use std::time::Instant;

pub(crate) mod concurrent;
pub(crate) mod peer_matrix;
pub(crate) mod series;

use super::driver::Device;
use super::driver::{
    copy_dtod_async, copy_dtoh_async, copy_dtoh_pageable, copy_htod_async, copy_htod_pageable, CudaError, DeviceBuffer,
    Event, Gate, PeerAccess, PinnedBuffer, Stream,
};
use super::options::{Config, Test};
use super::results::{Clock, HostMemory, Kind, Measurement};

/// What one GPU times with: two streams (the second for the other
/// direction of a two-way copy within the GPU) and three events.
pub(crate) struct Lane<'d> {
    pub dev: &'d Device,
    streams: [Stream<'d>; 2],
    start: Event<'d>,
    stop: Event<'d>,
    /// Marks the end of the other direction's copies in a two-way timing.
    joined: Event<'d>,
}

impl<'d> Lane<'d> {
    pub fn new(dev: &'d Device) -> Result<Lane<'d>, CudaError> {
        Ok(Lane {
            dev,
            streams: [Stream::new(dev)?, Stream::new(dev)?],
            start: Event::new(dev)?,
            stop: Event::new(dev)?,
            joined: Event::new(dev)?,
        })
    }
}

/// Counts timings whose stream started before all copies were queued.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    pub gate_timeouts: usize,
    /// One line per thing worth telling (peer access refused ...).
    pub lines: Vec<String>,
}

/// What one event timing on a lane's first stream gave.
pub(crate) struct EventTiming {
    /// Between the start and stop events, as the driver gives it.
    pub gpu_ms: f32,
    /// Host seconds spent queueing the work (after the start event).
    pub queue_secs: f64,
    /// Host seconds from before the start event until the stop event.
    pub done_secs: f64,
    /// Whether the stream passed a gate before it was opened.
    pub held_too_long: bool,
}

/// What `enqueue` queues on `lane`'s first stream (and on others that
/// wait for `lane.start` and end with an event the first waits for),
/// between its start and stop events, behind a gate (opened once all is
/// queued) where `gated`; waits for the stop event.
pub(crate) fn events_around(
    lane: &Lane,
    gated: bool,
    enqueue: impl FnOnce() -> Result<(), CudaError>,
) -> Result<EventTiming, CudaError> {
    let s = &lane.streams[0];
    lane.dev.make_current()?;
    let gate = if gated { Some(Gate::close(s)?) } else { None };
    let began = Instant::now();
    lane.start.record(s)?;
    let queueing = Instant::now();
    enqueue()?;
    let queue_secs = queueing.elapsed().as_secs_f64();
    lane.dev.make_current()?;
    lane.stop.record(s)?;
    if let Some(g) = &gate {
        g.open();
    }
    lane.stop.synchronize()?;
    let done_secs = began.elapsed().as_secs_f64();
    let held_too_long = gate.is_some_and(|g| g.held_too_long());
    Ok(EventTiming { gpu_ms: lane.start.ms_until(&lane.stop)?, queue_secs, done_secs, held_too_long })
}

/// GPU seconds of the copies `enqueue(n)` queues on `lane`'s first stream
/// (and, for two-way timings, on other streams that wait for `lane.start`
/// and end with an event `lane`'s first stream waits for), after one
/// untimed round of a single copy. Only the timed round is gated: the
/// untimed one just wakes the copy engines and the path between the GPUs.
fn timed<'d>(
    lane: &Lane<'d>,
    reps: usize,
    notes: &mut Notes,
    mut enqueue: impl FnMut(usize) -> Result<(), CudaError>,
) -> Result<f64, CudaError> {
    events_around(lane, false, || enqueue(1))?;
    let t = events_around(lane, true, || enqueue(reps))?;
    if t.held_too_long {
        notes.gate_timeouts += 1;
    }
    Ok(f64::from(t.gpu_ms) / 1e3)
}

/// Host seconds of `reps` synchronous copies, each timed on its own and
/// summed, after one untimed copy.
fn host_timed(reps: usize, mut copy: impl FnMut() -> Result<(), CudaError>) -> Result<f64, CudaError> {
    copy()?;
    let mut total = 0.0;
    for _ in 0..reps {
        let t = Instant::now();
        copy()?;
        total += t.elapsed().as_secs_f64();
    }
    Ok(total)
}

/// Host-to-GPU, GPU-to-host and within-GPU copies on one GPU, as `cfg`
/// asks; buffers live only for this call.
pub(crate) fn single_gpu(lane: &Lane, cfg: &Config, notes: &mut Notes) -> Result<Vec<Measurement>, CudaError> {
    let (bytes, reps) = (cfg.host_bytes, cfg.host_reps);
    let g = lane.dev.ordinal;
    let s = &lane.streams[0];
    let mut out = Vec::new();
    let dev_a = DeviceBuffer::new(lane.dev, bytes)?;
    let shape = (bytes as u64, reps, 1);
    let bw = |kind, src, dst, mem, secs, clock| Measurement::bandwidth(kind, src, dst, mem, None, shape, secs, clock);
    if cfg.runs(Test::H2d) || cfg.runs(Test::D2h) {
        let pinned = PinnedBuffer::new(lane.dev, bytes)?;
        let mut pageable = pageable_buffer(bytes).map_err(|e| host_memory_error(g, bytes, e))?;
        if cfg.runs(Test::H2d) {
            let secs =
                timed(lane, reps, notes, |n| (0..n).try_for_each(|_| copy_htod_async(&dev_a, &pinned, bytes, s)))?;
            out.push(bw(Kind::H2d, None, Some(g), Some(HostMemory::Pinned), secs, Clock::GpuEvents));
            lane.dev.make_current()?;
            let secs = host_timed(reps, || copy_htod_pageable(&dev_a, &pageable))?;
            out.push(bw(Kind::H2d, None, Some(g), Some(HostMemory::Pageable), secs, Clock::HostClock));
        }
        if cfg.runs(Test::D2h) {
            let secs =
                timed(lane, reps, notes, |n| (0..n).try_for_each(|_| copy_dtoh_async(&pinned, &dev_a, bytes, s)))?;
            out.push(bw(Kind::D2h, Some(g), None, Some(HostMemory::Pinned), secs, Clock::GpuEvents));
            lane.dev.make_current()?;
            let secs = host_timed(reps, || copy_dtoh_pageable(&mut pageable, &dev_a))?;
            out.push(bw(Kind::D2h, Some(g), None, Some(HostMemory::Pageable), secs, Clock::HostClock));
        }
        s.synchronize()?;
    }
    if cfg.runs(Test::D2d) {
        let dev_b = DeviceBuffer::new(lane.dev, bytes)?;
        let secs = timed(lane, reps, notes, |n| (0..n).try_for_each(|_| copy_dtod_async(&dev_b, &dev_a, bytes, s)))?;
        out.push(bw(Kind::D2d, Some(g), Some(g), None, secs, Clock::GpuEvents));
        s.synchronize()?;
    }
    Ok(out)
}

/// Ordinary process memory of `bytes`, every page touched, or the
/// allocation error (instead of the abort a plain `vec!` would give).
fn pageable_buffer(bytes: usize) -> Result<Vec<u8>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes)?;
    v.resize(bytes, 0x3c);
    Ok(v)
}

fn host_memory_error(gpu: usize, bytes: usize, e: std::collections::TryReserveError) -> CudaError {
    CudaError {
        place: format!("GPU {gpu}"),
        call: "allocating pageable host memory",
        name: format!("{bytes} bytes"),
        text: e.to_string(),
    }
}

/// Two buffers per GPU for copies between GPUs (source A, destination B).
pub(crate) struct PairBuffers<'d> {
    a: DeviceBuffer<'d>,
    b: DeviceBuffer<'d>,
}

impl<'d> PairBuffers<'d> {
    pub fn new(dev: &'d Device, bytes: usize) -> Result<PairBuffers<'d>, CudaError> {
        Ok(PairBuffers { a: DeviceBuffer::new(dev, bytes)?, b: DeviceBuffer::new(dev, bytes)? })
    }
}

/// The GPUs taking part in pair timings, with their buffers.
pub(crate) struct PairRig<'r, 'd> {
    pub lanes: &'r [Lane<'d>],
    pub bufs: &'r [PairBuffers<'d>],
}

impl PairRig<'_, '_> {
    /// One-way copies from GPU `i` to `j` (positions in `lanes`), queued on
    /// the source GPU's stream.
    fn one_way(&self, i: usize, j: usize, bytes: usize, reps: usize, notes: &mut Notes) -> Result<f64, CudaError> {
        let (src, dst) = (&self.bufs[i].a, &self.bufs[j].b);
        let s = &self.lanes[i].streams[0];
        timed(&self.lanes[i], reps, notes, |n| (0..n).try_for_each(|_| copy_dtod_async(dst, src, bytes, s)))
    }

    /// Copies both ways at once: `i` -> `j` on `i`'s first stream, `j` ->
    /// `i` on `j`'s second stream, which starts at `i`'s start event and
    /// ends with `j`'s joined event that `i`'s stream waits for before its
    /// stop event.
    fn two_way(&self, i: usize, j: usize, bytes: usize, reps: usize, notes: &mut Notes) -> Result<f64, CudaError> {
        let (li, lj) = (&self.lanes[i], &self.lanes[j]);
        let (si, sj) = (&li.streams[0], &lj.streams[1]);
        let (fwd_src, fwd_dst) = (&self.bufs[i].a, &self.bufs[j].b);
        let (back_src, back_dst) = (&self.bufs[j].a, &self.bufs[i].b);
        timed(li, reps, notes, |n| {
            lj.dev.make_current()?;
            sj.wait(&li.start)?;
            (0..n).try_for_each(|_| copy_dtod_async(back_dst, back_src, bytes, sj))?;
            lj.joined.record(sj)?;
            li.dev.make_current()?;
            (0..n).try_for_each(|_| copy_dtod_async(fwd_dst, fwd_src, bytes, si))?;
            si.wait(&lj.joined)
        })
    }

    /// The timings of ordered pair (i, j) that `cfg` asks for, with peer
    /// access as it is now (`peer`: None within one GPU).
    fn directed(
        &self,
        i: usize,
        j: usize,
        peer: Option<bool>,
        cfg: &Config,
        notes: &mut Notes,
    ) -> Result<Vec<Measurement>, CudaError> {
        let (gi, gj) = (self.lanes[i].dev.ordinal, self.lanes[j].dev.ordinal);
        let mut out = Vec::new();
        if cfg.runs(Test::P2p) {
            let (bytes, reps) = (cfg.peer_bytes, cfg.peer_reps);
            let shape = |dirs| (bytes as u64, reps, dirs);
            let secs = self.one_way(i, j, bytes, reps, notes)?;
            out.push(Measurement::bandwidth(
                Kind::P2pUni,
                Some(gi),
                Some(gj),
                None,
                peer,
                shape(1),
                secs,
                Clock::GpuEvents,
            ));
            let secs = self.two_way(i, j, bytes, reps, notes)?;
            out.push(Measurement::bandwidth(
                Kind::P2pBidir,
                Some(gi),
                Some(gj),
                None,
                peer,
                shape(2),
                secs,
                Clock::GpuEvents,
            ));
        }
        if cfg.runs(Test::Latency) {
            let (bytes, reps) = (cfg.latency_bytes, cfg.latency_reps);
            let secs = self.one_way(i, j, bytes, reps, notes)?;
            out.push(Measurement::latency(gi, gj, peer, bytes as u64, reps, secs));
        }
        for l in [&self.lanes[i], &self.lanes[j]] {
            for s in &l.streams {
                s.synchronize()?;
            }
        }
        Ok(out)
    }

    /// Copies within GPU `i` (the matrices' diagonal).
    pub fn diagonal(&self, i: usize, cfg: &Config, notes: &mut Notes) -> Result<Vec<Measurement>, CudaError> {
        self.directed(i, i, None, cfg, notes)
    }

    /// Both directions of pair {i, j} with peer access off, then on where
    /// both GPUs can map each other's memory; access is off again after.
    pub fn pair(&self, i: usize, j: usize, cfg: &Config, notes: &mut Notes) -> Result<Vec<Measurement>, CudaError> {
        let (di, dj) = (self.lanes[i].dev, self.lanes[j].dev);
        let mut out = self.directed(i, j, Some(false), cfg, notes)?;
        out.extend(self.directed(j, i, Some(false), cfg, notes)?);
        if di.can_access_peer(dj) != Some(true) || dj.can_access_peer(di) != Some(true) {
            return Ok(out);
        }
        let access = match PeerAccess::enable(di, dj).and_then(|a| Ok((a, PeerAccess::enable(dj, di)?))) {
            Ok(a) => a,
            Err(e) => {
                notes.lines.push(format!("no P2P=Enabled timings for GPUs {} and {}: {e}", di.ordinal, dj.ordinal));
                return Ok(out);
            }
        };
        out.extend(self.directed(i, j, Some(true), cfg, notes)?);
        out.extend(self.directed(j, i, Some(true), cfg, notes)?);
        drop(access);
        Ok(out)
    }
}
