//! The measurement loop shared by every benchmark: warm-up and timed
//! iterations, the untimed start and end of each (where OSU's validation
//! repetitions `-u` and synchronisations go), checking, and recording each
//! timed iteration. Nothing here allocates, prints or locks between the
//! timer reads, which the kernel's `step` owns.

use super::{Kernel, SizeCase};
use crate::backend::Transport;
use crate::buffer::Mismatch;
use crate::stats::Samples;
use crate::watchdog::{Progress, Step};

/// What the loop saw besides the timings.
#[derive(Debug, Default)]
pub struct LoopOutcome {
    /// Iterations whose received data was wrong on this rank.
    pub errors: u64,
    /// The first wrong element and the iteration it was seen in.
    pub first_mismatch: Option<(usize, Mismatch)>,
}

/// Runs warm-up plus timed iterations of `kernel` for one size, recording
/// this rank's timed iterations into `samples`.
pub fn run<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    case: &SizeCase,
    validating: bool,
    validation_warmup: usize,
    samples: &mut Samples,
    progress: &Progress,
) -> LoopOutcome {
    let mut out = LoopOutcome::default();
    samples.reset(case.iterations);
    let validation = validating.then_some(validation_warmup);
    progress.set_step(if case.warmup > 0 { Step::Warmup } else { Step::Timed });
    for i in 0..case.warmup + case.iterations {
        if i == case.warmup {
            progress.set_step(Step::Timed);
        }
        kernel.begin_iteration(t, case, i, validation);
        let elapsed = kernel.step(t, case);
        kernel.end_iteration(t, case);
        if i >= case.warmup {
            if let Some(t) = elapsed {
                samples.push(t);
            }
        }
        if validating {
            if let Some(m) = kernel.check(t, case, i) {
                out.errors += 1;
                if out.first_mismatch.is_none() {
                    out.first_mismatch = Some((i, m));
                }
            }
        }
        progress.iteration(i);
    }
    out
}
