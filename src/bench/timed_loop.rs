//! The measurement loop shared by every benchmark: warm-up and timed
//! iterations, the untimed start and end of each (where OSU's validation
//! repetitions `-u` and synchronisations go), checking, and recording each
//! timed iteration. Nothing here allocates, prints or locks between the
//! timer reads, which the kernel's `step` owns.

use super::{Kernel, SizeCase};
use crate::backend::{Control, Transport};
use crate::buffer::Mismatch;
use crate::stats::Samples;
use crate::watchdog::{Progress, Step};

/// What the loop saw besides the timings.
#[derive(Debug, Default)]
pub struct LoopOutcome {
    /// Iterations whose received data was wrong on this rank.
    pub errors: u64,
    /// Wrong elements over every checked iteration on this rank.
    pub wrong_elements: u64,
    /// The first wrong element and the iteration it was seen in.
    pub first_mismatch: Option<(usize, Mismatch)>,
}

impl LoopOutcome {
    /// Adds the outcome of a later pass over the same size.
    pub fn merge(&mut self, later: LoopOutcome) {
        self.errors += later.errors;
        self.wrong_elements += later.wrong_elements;
        if self.first_mismatch.is_none() {
            self.first_mismatch = later.first_mismatch;
        }
    }

    /// Validation after iteration `i` (untimed): counts a wrong result and
    /// keeps the first.
    fn check<T: Transport, K: Kernel<T>>(&mut self, t: &T, kernel: &K, case: &SizeCase, i: usize) {
        if let Some(m) = kernel.check(t, case, i) {
            self.errors += 1;
            self.wrong_elements += m.count.max(1) as u64;
            self.first_mismatch.get_or_insert((i, m));
        }
    }
}

/// Runs warm-up plus timed iterations of `kernel` for one size, recording
/// this rank's timed iterations into `samples`. `validation` is the number
/// of untimed validation repetitions (`-u`) when validating (`-c`).
/// `per_iteration` asks for each iteration's own time (`-z`) even where the
/// transport batches.
pub fn run<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    case: &SizeCase,
    validation: Option<usize>,
    samples: &mut Samples,
    progress: &Progress,
    per_iteration: bool,
) -> LoopOutcome {
    if T::BATCHED && kernel.batchable() && (!per_iteration || t.device_marks(case.iterations)) {
        return run_batched(t, kernel, case, validation, samples, progress, per_iteration);
    }
    let mut out = LoopOutcome::default();
    samples.reset(case.iterations);
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
        if validation.is_some() {
            out.check(t, kernel, case, i);
        }
        progress.iteration(i);
    }
    out
}

/// nccl-tests' timing: the warm-up one operation at a time, then every
/// rank starts together and the timed iterations are issued back to back
/// between one clock read and one completion plus a read, so nothing but
/// the operations is inside. Each timed iteration is recorded as the
/// batch's mean, or, with `per_iteration` (`-z`) on a transport with
/// device timestamps, as the time between the timestamps recorded before
/// and after it on the device (their sum spans the same calls as the
/// batch). Validation runs afterwards, untimed, on one more iteration.
fn run_batched<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    case: &SizeCase,
    validation: Option<usize>,
    samples: &mut Samples,
    progress: &Progress,
    per_iteration: bool,
) -> LoopOutcome {
    let mut out = LoopOutcome::default();
    samples.reset(case.iterations);
    progress.set_step(if case.warmup > 0 { Step::Warmup } else { Step::Timed });
    for i in 0..case.warmup {
        kernel.begin_iteration(t, case, i, None);
        kernel.step(t, case);
        kernel.end_iteration(t, case);
        progress.iteration(i);
    }
    progress.set_step(Step::Timed);
    t.world().barrier();
    if per_iteration {
        t.mark(0);
        for (k, i) in (case.warmup..case.warmup + case.iterations).enumerate() {
            kernel.issue(t, case, i);
            t.mark(k + 1);
        }
        t.complete();
        t.mark_intervals(case.iterations, samples);
    } else {
        let t0 = t.now();
        for i in case.warmup..case.warmup + case.iterations {
            kernel.issue(t, case, i);
        }
        t.complete();
        let secs = t.now() - t0;
        let each = secs / case.iterations.max(1) as f64;
        for _ in 0..case.iterations {
            samples.push(each);
        }
    }
    let last = case.warmup + case.iterations;
    progress.iteration(last.saturating_sub(1));
    if validation.is_some() {
        kernel.begin_iteration(t, case, last, validation);
        kernel.step(t, case);
        kernel.end_iteration(t, case);
        out.check(t, kernel, case, last);
    }
    t.world().barrier();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{self, Model};
    use crate::bench::{allreduce, barrier, reduce, Bench, Setup};
    use crate::cli::test_options;
    use crate::datatype::Datatype;

    /// Runs benchmark `B`'s kernel for one size on `np` mock ranks, once
    /// OSU's way and once as a batch; returns rank 0's samples of each and
    /// the batch's outcome.
    fn both<B: Bench>(np: usize, validating: bool) -> (Vec<f64>, Vec<f64>, u64, bool) {
        let mut out = mock::run(np, Model::default(), |t| {
            let mut opts = test_options(B::SPEC, &["-m", "64:64"]);
            let (pairs, _) = B::SPEC.check_run(np, &mut opts).expect("job size");
            let setup = Setup { t, opts: &opts, pairs, max_window: 1 };
            let mut k = B::kernel(&setup).expect("buffers");
            let case = SizeCase { datatype: Datatype::Int, size: 64, count: 16, iterations: 20, warmup: 3, window: 1 };
            k.prepare(t, &case).expect("prepare");
            let progress = Progress::default();
            let mut each = Samples::with_capacity(20);
            let validation = validating.then_some(2);
            run(t, &mut k, &case, validation, &mut each, &progress, false);
            let mut batch = Samples::with_capacity(20);
            let o = run_batched(t, &mut k, &case, validation, &mut batch, &progress, false);
            let mut marked = Samples::with_capacity(20);
            assert!(t.device_marks(case.iterations));
            run_batched(t, &mut k, &case, None, &mut marked, &progress, true);
            // Device timestamps between the calls: the same calls, each
            // with its own time.
            assert_eq!(marked.len(), 20);
            assert!(
                (marked.total() - batch.total()).abs() <= 1e-12 * batch.total(),
                "{} vs {}",
                marked.total(),
                batch.total()
            );
            (each.as_slice().to_vec(), batch.as_slice().to_vec(), o.errors, k.batchable())
        });
        out.swap_remove(0)
    }

    #[test]
    fn a_batch_times_the_same_calls_with_one_completion() {
        let (each, batch, errors, batchable) = both::<allreduce::Allreduce>(3, true);
        assert!(batchable);
        assert_eq!(batch.len(), 20);
        assert!(batch.iter().all(|&s| s == batch[0]), "every iteration records the batch's mean");
        // The mock's clock only moves for the calls: a batch of them takes
        // exactly what the calls took one at a time.
        let (sum_each, sum_batch): (f64, f64) = (each.iter().sum(), batch.iter().sum());
        assert!((sum_each - sum_batch).abs() <= 1e-12 * sum_each, "{sum_each} vs {sum_batch}");
        assert_eq!(errors, 0, "validation after the batch passes");
    }

    #[test]
    fn only_collectives_without_a_barrier_before_each_call_batch() {
        assert!(!both::<reduce::Reduce>(2, false).3, "osu_reduce: barrier before each call, rotating root");
        assert!(!both::<barrier::Barrier>(2, false).3);
    }
}
