//! The measurement of one benchmark run on every rank, over any transport:
//! the datatype, size and window loops around the shared timed loop, the
//! counts of each size, validation verdicts agreed across ranks, and the
//! row every output gets (on rank 0). The process around it (options,
//! start-up, files, run record, exit) is the runner's.

use std::io;

use super::spec::{BenchSpec, MetricKind};
use super::timed_loop::{self, LoopOutcome};
use super::{counts, message_sizes, validation, Kernel, Metric, SizeCase};
use crate::backend::{Control, Transport};
use crate::cli::Options;
use crate::job::{everywhere, say, Ending};
use crate::report::osu::VARIED_WINDOWS;
use crate::report::sinks::Sinks;
use crate::report::time::Utc;
use crate::report::{Row, Sink};
use crate::stats::{osu_tails, Samples, Summary};
use crate::watchdog::{Progress, Step};

/// What to measure.
pub struct Plan<'a> {
    pub spec: &'static BenchSpec,
    pub opts: &'a Options,
}

impl Plan<'_> {
    /// The windows each size runs with: none, `-W`, or `-V`'s list.
    pub fn windows(&self) -> Vec<usize> {
        if !self.spec.windowed {
            vec![1]
        } else if self.opts.vary_window {
            VARIED_WINDOWS.to_vec()
        } else {
            vec![self.opts.window]
        }
    }

    pub fn max_window(&self) -> usize {
        self.windows().into_iter().max().unwrap_or(1)
    }
}

/// Runs every size of the plan. `sinks` are rank 0's outputs (None
/// elsewhere); `on_row` is called after each row reached them. Err only
/// on rank 0, when an output cannot be written: the caller ends the job.
pub fn run<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    plan: &Plan,
    mut sinks: Option<&mut Sinks>,
    progress: &Progress,
    mut on_row: impl FnMut(),
) -> io::Result<Ending> {
    let (spec, opts) = (plan.spec, plan.opts);
    let windows = plan.windows();
    let sizes = message_sizes(spec, opts.min_size, opts.max_size);
    let max_iters = sizes.iter().map(|&s| counts(spec, opts, s).0).max().unwrap_or(1);
    let mut samples = Samples::with_capacity(max_iters);
    let validating = opts.validation.is_some();
    for &dt in &opts.datatypes {
        emit(&mut sinks, &mut |s| s.begin_datatype(dt))?;
        for &size in &sizes {
            let count = size / dt.size();
            if count == 0 && spec.typed() {
                continue;
            }
            let (iterations, warmup) = counts(spec, opts, size);
            for &window in &windows {
                let case = SizeCase { datatype: dt, size, count, iterations, warmup, window };
                progress.enter(Step::Setup, Some(dt), size);
                if everywhere(t.world(), spec.name, kernel.prepare(t, &case)).is_none() {
                    return Ok(Ending::Error { detail: format!("could not set up message size {size}") });
                }
                if kernel.sync_before_size() {
                    t.world().barrier();
                }
                let outcome = timed_loop::run(
                    t,
                    kernel,
                    &case,
                    validating.then_some(opts.validation_warmup),
                    &mut samples,
                    progress,
                    opts.tails.is_some(),
                );
                progress.set_step(Step::Results);
                let metric = kernel.metric(t, &case, &samples);
                let passed = validating.then(|| verdict(t, plan, &case, &outcome));
                if sinks.is_some() {
                    let row = row(kernel, plan, &case, metric, passed, &samples);
                    emit(&mut sinks, &mut |s| s.row(&row))?;
                    on_row();
                }
                if passed == Some(false) {
                    return Ok(Ending::ValidationFailed { size });
                }
            }
        }
        emit(&mut sinks, &mut |s| s.end_datatype())?;
    }
    Ok(Ending::Complete)
}

/// Sends something to every output, where there are outputs (rank 0).
fn emit(sinks: &mut Option<&mut Sinks>, f: &mut dyn FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
    match sinks {
        Some(s) => s.each(f),
        None => Ok(()),
    }
}

/// Combines every rank's checks; a rank that saw wrong data says where.
fn verdict<T: Transport>(t: &T, plan: &Plan, case: &SizeCase, outcome: &LoopOutcome) -> bool {
    if let Some((iteration, m)) = &outcome.first_mismatch {
        let rank = t.world().rank();
        say(&format!(
            "{}: validation failed on rank {rank}: {}; {} of {} iterations wrong",
            plan.spec.name,
            validation::describe_mismatch(case, *iteration, m),
            outcome.errors,
            case.iterations + case.warmup,
        ));
        if let Some(dir) = plan.opts.validation.as_ref().and_then(|v| v.log_dir.as_ref()) {
            validation::write_log(dir, rank, case, *iteration, m);
        }
    }
    t.world().allreduce_sum_u64(outcome.errors) == 0
}

/// The row of one size, as every output gets it.
fn row<T: Transport, K: Kernel<T>>(
    kernel: &K,
    plan: &Plan,
    case: &SizeCase,
    metric: Metric,
    passed: Option<bool>,
    samples: &Samples,
) -> Row {
    let (spec, opts) = (plan.spec, plan.opts);
    let secs = metric.iteration_secs.as_deref().unwrap_or(samples.as_slice());
    let tails = match &opts.tails {
        Some(ps) => {
            let values: Vec<f64> = secs.iter().map(|&t| kernel.per_iteration(case, t)).collect();
            osu_tails(&values, ps)
        }
        None => Vec::new(),
    };
    let (avg_lat_us, bw_mbps) = match spec.metric {
        MetricKind::Bandwidth | MetricKind::MultiBandwidth => (None, Some(metric.value)),
        MetricKind::Latency
        | MetricKind::Collective
        | MetricKind::Barrier
        | MetricKind::Startup
        | MetricKind::Hello => (Some(metric.value), None),
    };
    Row {
        datatype: spec.typed().then_some(case.datatype),
        size: case.size,
        window: spec.windowed.then_some(case.window),
        iterations: case.iterations,
        warmup: case.warmup,
        avg_lat_us,
        bw_mbps,
        msg_rate: metric.msg_rate,
        spread: metric.spread,
        algbw_busbw: metric.algbw_busbw,
        validation: passed,
        tails,
        iter: Summary::from_secs(secs, kernel.iteration_time_scale()),
        finished_utc: Utc::now().rfc3339(),
    }
}

#[cfg(test)]
mod tests;
