//! Copy series timed as CUDA's bandwidthTest times them, for its drop-in
//! (`crate::gpu_bw::bandwidth_test`): buffers made for the one series,
//! no untimed round and no gate, so a small copy's time holds what the
//! sample's holds (the host queueing the copies). Pinned-memory and
//! on-GPU copies are queued back to back between two events (or, with
//! the host's clock, timed from before the first event to the end of
//! the last copy); pageable copies each on the host's clock, a large
//! buffer written between them so every copy meets cold CPU caches.

use std::time::Instant;

use super::{events_around, host_memory_error, pageable_buffer, Lane};
use crate::gpu_bw::driver::{
    copy_dtod_async, copy_dtoh_async, copy_dtoh_pageable, copy_htod_async, copy_htod_pageable, CudaError, DeviceBuffer,
    PinnedBuffer,
};

/// Which copy a series makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

/// The host side of a host<->GPU copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostSide {
    Pinned { write_combined: bool },
    Pageable,
}

/// The buffer written between pageable copies: 256 MB, as bandwidthTest
/// writes, made on first use.
#[derive(Default)]
pub(crate) struct Flush(Vec<u8>);

/// bandwidthTest's flush size.
pub(crate) const FLUSH_BYTES: usize = 256 * 1024 * 1024;

impl Flush {
    fn write(&mut self, gpu: usize, value: u8) -> Result<(), CudaError> {
        if self.0.is_empty() {
            self.0 = pageable_buffer(FLUSH_BYTES).map_err(|e| host_memory_error(gpu, FLUSH_BYTES, e))?;
        }
        self.0.fill(value);
        // Written to be seen: nothing reads it, which must not let the
        // writes go.
        std::hint::black_box(&mut self.0);
        Ok(())
    }
}

/// Milliseconds, as the float the sample keeps, of `reps` copies of
/// `bytes` in `dir` on `lane`'s GPU; `host` is the host side of a
/// host<->GPU copy, `host_clock` times pinned and on-GPU series on the
/// host instead of by events (bandwidthTest's `--cputiming`).
pub(crate) fn series_ms(
    lane: &Lane,
    dir: Direction,
    host: HostSide,
    bytes: usize,
    reps: usize,
    host_clock: bool,
    flush: &mut Flush,
) -> Result<f32, CudaError> {
    let g = lane.dev.ordinal;
    let s = &lane.streams[0];
    let dev_a = DeviceBuffer::new(lane.dev, bytes)?;
    if dir == Direction::DeviceToDevice {
        let dev_b = DeviceBuffer::new(lane.dev, bytes)?;
        return between_events(lane, host_clock, || {
            (0..reps).try_for_each(|_| copy_dtod_async(&dev_b, &dev_a, bytes, s))
        });
    }
    match host {
        HostSide::Pinned { write_combined } => {
            let pinned = PinnedBuffer::with_write_combining(lane.dev, bytes, write_combined)?;
            between_events(lane, host_clock, || {
                (0..reps).try_for_each(|_| match dir {
                    Direction::HostToDevice => copy_htod_async(&dev_a, &pinned, bytes, s),
                    _ => copy_dtoh_async(&pinned, &dev_a, bytes, s),
                })
            })
        }
        HostSide::Pageable => {
            let mut buf = pageable_buffer(bytes).map_err(|e| host_memory_error(g, bytes, e))?;
            lane.dev.make_current()?;
            let mut ms = 0.0f32;
            for i in 0..reps {
                let t = Instant::now();
                match dir {
                    Direction::HostToDevice => copy_htod_pageable(&dev_a, &buf)?,
                    _ => copy_dtoh_pageable(&mut buf, &dev_a)?,
                }
                ms += (t.elapsed().as_secs_f64() * 1e3) as f32;
                flush.write(g, i as u8)?;
            }
            Ok(ms)
        }
    }
}

/// The milliseconds of what `enqueue` queues on `lane`'s first stream:
/// between a start and a stop event, or on the host's clock from before
/// the start event until the stop event has happened.
fn between_events(
    lane: &Lane,
    host_clock: bool,
    enqueue: impl FnOnce() -> Result<(), CudaError>,
) -> Result<f32, CudaError> {
    let t = events_around(lane, false, enqueue)?;
    Ok(if host_clock { (t.done_secs * 1e3) as f32 } else { t.gpu_ms })
}

/// GB/s of `reps` copies of `bytes` in `ms`, in the sample's arithmetic
/// (its float products and quotients, so its last digit is ours): the
/// bytes moved, twice the copy within a GPU (read and written), over
/// the time.
pub(crate) fn gb_per_s(dir: Direction, bytes: u32, reps: usize, ms: f32) -> f32 {
    let time_s = f64::from(ms) / 1e3;
    let moved = if dir == Direction::DeviceToDevice { 2.0f32 * bytes as f32 } else { bytes as f32 } * reps as f32;
    let gb = (f64::from(moved) / 1e9) as f32;
    (f64::from(gb) / time_s) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 MB a hundred times in 265.3 ms is 12.06 GB/s; within a GPU
    /// twice as many bytes count; the float rounding of a size above
    /// 2^24 is the sample's.
    #[test]
    fn bandwidth_is_the_sample_s_arithmetic() {
        let g = gb_per_s(Direction::HostToDevice, 32_000_000, 100, 265.3);
        assert!((f64::from(g) - 3.2 / 0.2653).abs() < 1e-5, "{g}");
        let d = gb_per_s(Direction::DeviceToDevice, 32_000_000, 100, 265.3);
        assert_eq!(d, 2.0 * g);
        // 16777217 bytes is no float: the product rounds it to 2^24.
        assert_eq!(
            gb_per_s(Direction::HostToDevice, 16_777_217, 1, 1000.0),
            gb_per_s(Direction::HostToDevice, 16_777_216, 1, 1000.0)
        );
    }
}
