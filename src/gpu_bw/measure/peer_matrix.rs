//! GPU-to-GPU matrices timed as CUDA's p2pBandwidthLatencyTest times
//! them, for its drop-in (`crate::gpu_bw::p2p_test`): for each ordered
//! pair, row by row, peer access turned on both ways for the pair alone
//! (in the P2P=Enabled matrices, where the GPUs can map each other's
//! memory) and off again after; the stream held by a gate while the
//! copies are queued (the sample's spin kernel), no untimed round first;
//! the diagonal copies within the GPU. Bandwidth: 5 copies of the
//! sample's buffer one way, or both ways at once (the two directions'
//! bytes added); latency: 100 copies of 16 bytes, in GPU time and in the
//! host's time to queue them.
//!
//! Copies go by the copy engines, or (the sample's `--sm_copy`,
//! [`Engine::Sm`]) by its grid-stride copy kernel wherever the pair has
//! peer access on: in the `P2P=Enabled` matrices, off the diagonal. The
//! kernel runs on the GPU whose stream queues the copy, so it writes to
//! the peer, or reads from it in the reads matrices; the two directions of
//! a two-way pair each run on their own GPU. Copies within a GPU, and
//! between GPUs without peer access, stay the copy engines' (the sample
//! does the same); the arithmetic is the same for both.

use super::{events_around, Lane, PairBuffers};
use crate::gpu_bw::driver::{copy_dtod_async, CudaError, DeviceBuffer, PeerAccess, Stream};
use crate::gpu_bw::kernels::Kernels;

/// Copies per bandwidth timing.
pub(crate) const BANDWIDTH_REPS: usize = 5;
/// Copies per latency timing, and their size.
pub(crate) const LATENCY_REPS: usize = 100;
pub(crate) const LATENCY_BYTES: usize = 16;

/// Which way a one-way copy between two GPUs goes, as the sample names
/// it from the row's GPU: it writes into the column's GPU, or reads from
/// it (the copy queued on the row's GPU either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transfer {
    Write,
    Read,
}

/// What moves the copies between GPUs with peer access on.
#[derive(Clone, Copy)]
pub(crate) enum Engine<'r, 'd> {
    /// The copy engines (cuMemcpyPeerAsync), as the sample by default.
    Copy,
    /// The sample's copy kernel (`--sm_copy`): each GPU's loaded kernels,
    /// in the order of the lanes.
    Sm(&'r [Kernels<'d>]),
}

/// The GPUs with the sample's two buffers each.
pub(crate) struct PeerMatrix<'r, 'd> {
    pub lanes: &'r [Lane<'d>],
    pub bufs: &'r [PairBuffers<'d>],
    /// Bytes per bandwidth copy.
    pub bytes: usize,
    pub engine: Engine<'r, 'd>,
}

/// A row-major square matrix of values.
pub(crate) type Grid = Vec<Vec<f64>>;

impl PeerMatrix<'_, '_> {
    /// Runs `f` for every ordered pair, with peer access on both ways for
    /// the pair while it runs where `p2p` asks and both GPUs allow it
    /// (`f`'s third argument: whether it is on; never on the diagonal).
    fn each_pair<T>(
        &self,
        p2p: bool,
        mut f: impl FnMut(usize, usize, bool) -> Result<T, CudaError>,
    ) -> Result<Vec<Vec<T>>, CudaError> {
        let n = self.lanes.len();
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let (di, dj) = (self.lanes[i].dev, self.lanes[j].dev);
                        let access = p2p && i != j && di.can_access_peer(dj) == Some(true);
                        let _on = if access {
                            Some((PeerAccess::enable(di, dj)?, PeerAccess::enable(dj, di)?))
                        } else {
                            None
                        };
                        f(i, j, access)
                    })
                    .collect()
            })
            .collect()
    }

    /// The source and destination of a one-way copy in row `i`, column
    /// `j` (within a GPU, its second buffer into its first).
    fn ends(&self, i: usize, j: usize, way: Transfer) -> (&DeviceBuffer<'_>, &DeviceBuffer<'_>) {
        if i == j {
            return (&self.bufs[i].b, &self.bufs[i].a);
        }
        match way {
            Transfer::Write => (&self.bufs[i].a, &self.bufs[j].a),
            Transfer::Read => (&self.bufs[j].a, &self.bufs[i].a),
        }
    }

    /// Queues `reps` copies of `bytes` from `src` to `dst` on `s`, lane
    /// `lane`'s stream: by the copy kernel of that lane's GPU where copies
    /// go by kernel and `access` (the pair's peer access) is on, its
    /// launch shape asked once for the lot, as the sample asks it once per
    /// timing; else by the copy engines.
    #[allow(clippy::too_many_arguments)]
    fn copies(
        &self,
        lane: usize,
        access: bool,
        s: &Stream,
        dst: &DeviceBuffer,
        src: &DeviceBuffer,
        bytes: usize,
        reps: usize,
    ) -> Result<(), CudaError> {
        match self.engine {
            Engine::Sm(kernels) if access => {
                let k = &kernels[lane];
                let shape = k.grid_stride_shape()?;
                (0..reps).try_for_each(|_| k.copy_grid_stride(s, shape, dst.ptr(), src.ptr(), bytes / 16))
            }
            _ => (0..reps).try_for_each(|_| copy_dtod_async(dst, src, bytes, s)),
        }
    }

    /// Milliseconds (the driver's float) between the start and stop events
    /// of row `i`'s stream around what `enqueue` queues behind a gate, and
    /// the host's milliseconds to queue it.
    fn gated(&self, i: usize, enqueue: impl FnOnce() -> Result<(), CudaError>) -> Result<(f32, f64), CudaError> {
        let l = &self.lanes[i];
        l.dev.make_current()?;
        l.streams[0].synchronize()?;
        let t = events_around(l, true, enqueue)?;
        Ok((t.gpu_ms, t.queue_secs * 1e3))
    }

    /// One-way bandwidth, GB/s: 5 copies, the diagonal's bytes counted
    /// twice (read and written).
    pub fn one_way(&self, p2p: bool, way: Transfer) -> Result<Grid, CudaError> {
        self.each_pair(p2p, |i, j, access| {
            let (src, dst) = self.ends(i, j, way);
            let s = &self.lanes[i].streams[0];
            let (ms, _) = self.gated(i, || self.copies(i, access, s, dst, src, self.bytes, BANDWIDTH_REPS))?;
            let gb = (self.bytes * BANDWIDTH_REPS) as f64 / 1e9 * if i == j { 2.0 } else { 1.0 };
            Ok(gb / (f64::from(ms) / 1e3))
        })
    }

    /// Bandwidth both ways at once, GB/s: row `i` -> column `j` on `i`'s
    /// first stream and back on `j`'s second (within a GPU, its two
    /// buffers into each other), the second stream starting at the
    /// first's start event and the first's stop event waiting for it;
    /// both directions' bytes added (the diagonal's twice over).
    pub fn two_way(&self, p2p: bool) -> Result<Grid, CudaError> {
        self.each_pair(p2p, |i, j, access| {
            let (li, lj) = (&self.lanes[i], &self.lanes[j]);
            let (si, sj) = (&li.streams[0], &lj.streams[1]);
            let (fwd_src, fwd_dst, back_src, back_dst) = if i == j {
                (&self.bufs[i].b, &self.bufs[i].a, &self.bufs[i].a, &self.bufs[i].b)
            } else {
                (&self.bufs[i].a, &self.bufs[j].a, &self.bufs[j].a, &self.bufs[i].a)
            };
            // Both streams idle, and the first to go on only after the
            // second's last work: nothing on a GPU, whose streams share one
            // clock; the stand-in keeps one per stream, which this aligns.
            lj.dev.make_current()?;
            sj.synchronize()?;
            lj.joined.record(sj)?;
            li.dev.make_current()?;
            si.wait(&lj.joined)?;
            let (ms, _) = self.gated(i, || {
                lj.dev.make_current()?;
                sj.wait(&li.start)?;
                self.copies(j, access, sj, back_dst, back_src, self.bytes, BANDWIDTH_REPS)?;
                lj.joined.record(sj)?;
                li.dev.make_current()?;
                self.copies(i, access, si, fwd_dst, fwd_src, self.bytes, BANDWIDTH_REPS)?;
                si.wait(&lj.joined)
            })?;
            sj.synchronize()?;
            let gb = 2.0 * (self.bytes * BANDWIDTH_REPS) as f64 / 1e9 * if i == j { 2.0 } else { 1.0 };
            Ok(gb / (f64::from(ms) / 1e3))
        })
    }

    /// Latency, microseconds per copy of [`LATENCY_BYTES`] (this matrix's
    /// buffers are that small): the GPU's (between the events) and the
    /// host's (queueing the 100 copies).
    pub fn latency(&self, p2p: bool, way: Transfer) -> Result<(Grid, Grid), CudaError> {
        let both = self.each_pair(p2p, |i, j, access| {
            let (src, dst) = self.ends(i, j, way);
            let s = &self.lanes[i].streams[0];
            let (ms, host_ms) = self.gated(i, || self.copies(i, access, s, dst, src, LATENCY_BYTES, LATENCY_REPS))?;
            // The sample keeps the host's time as a float too.
            Ok((f64::from(ms) * 1e3 / LATENCY_REPS as f64, f64::from(host_ms as f32) * 1e3 / LATENCY_REPS as f64))
        })?;
        let gpu = both.iter().map(|row| row.iter().map(|c| c.0).collect()).collect();
        let cpu = both.iter().map(|row| row.iter().map(|c| c.1).collect()).collect();
        Ok((gpu, cpu))
    }
}
