//! The machine's own copy rate, the peak of a path through shared memory:
//! one core copies the benchmark's largest message from one buffer to
//! another (memcpy, as a single-copy transfer between ranks does), a few
//! times, before anything is timed. Every rank measures at once, so ranks
//! that share a memory system share it here too.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Below this a copy says more about the timer than the memory system.
pub(crate) const MIN_BYTES: usize = 256 << 10;
/// Above this the rate no longer changes, and the buffers would cost
/// more than the measurement is worth.
pub(crate) const MAX_BYTES: usize = 64 << 20;
const MIN_COPIES: usize = 5;
const MAX_COPIES: usize = 50;
/// Copies stop after this much copying (once MIN_COPIES are done).
const BUDGET: Duration = Duration::from_millis(20);

/// A measured copy rate and how it was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyRate {
    /// 10^6 bytes per second: bytes over the fastest copy's time.
    pub mbps: f64,
    pub bytes: usize,
    pub copies: usize,
    /// How, in words, for the run record.
    pub method: String,
}

/// The size copied for a benchmark whose largest message is `largest`.
pub(crate) fn bytes_for(largest: usize) -> usize {
    largest.clamp(MIN_BYTES, MAX_BYTES)
}

/// Copies `bytes` on this thread's core; None when the memory cannot be had
/// or the clock saw no time pass.
pub fn measure(bytes: usize) -> Option<CopyRate> {
    let mut src: Vec<u8> = Vec::new();
    let mut dst: Vec<u8> = Vec::new();
    src.try_reserve_exact(bytes).ok()?;
    dst.try_reserve_exact(bytes).ok()?;
    // Every page written before the first copy, so none faults in a timed one.
    src.resize(bytes, 0xa5);
    dst.resize(bytes, 0);
    dst.copy_from_slice(&src);
    let started = Instant::now();
    let mut best = Duration::MAX;
    let mut copies = 0;
    while copies < MAX_COPIES && (copies < MIN_COPIES || started.elapsed() < BUDGET) {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed());
        copies += 1;
    }
    let secs = best.as_secs_f64();
    (secs > 0.0).then(|| CopyRate {
        mbps: bytes as f64 / secs / 1e6,
        bytes,
        copies,
        method: format!(
            "memcpy of {} on one core, the fastest of {copies} copies, every rank at once before timing",
            crate::bytes::exact_label(bytes as u64)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_clamped() {
        assert_eq!(bytes_for(8), MIN_BYTES);
        assert_eq!(bytes_for(4 << 20), 4 << 20);
        assert_eq!(bytes_for(1 << 30), MAX_BYTES);
    }

    /// A real copy on this machine: some hundreds of MB/s at the very
    /// least, and no memory system moves a terabyte a second.
    #[test]
    fn this_machine_copies() {
        let r = measure(MIN_BYTES).unwrap();
        assert!(r.mbps > 100.0 && r.mbps < 1e6, "{r:?}");
        assert!((MIN_COPIES..=MAX_COPIES).contains(&r.copies), "{r:?}");
        assert!(r.method.starts_with("memcpy of 256 KiB on one core, the fastest of"), "{}", r.method);
    }
}
