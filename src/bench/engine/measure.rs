//! The measurement of one benchmark run on every rank, over any transport:
//! the datatype, size and window loops around the shared timed loop, the
//! counts of each size, validation verdicts agreed across ranks, and the
//! row every output gets (on rank 0). The process around it (options,
//! start-up, files, run record, exit) is the runner's.

use std::io;

use crate::backend::{Control, ReduceOp, Transport};
pub(crate) use crate::bench::engine::plan::Plan;
use crate::bench::engine::timed_loop::{self, LoopOutcome};
use crate::bench::{engine::validation, Kernel, Metric, SizeCase};
use crate::job::watchdog::{Progress, Step};
use crate::job::{everywhere, say, Ending};
use crate::report::sinks::Sinks;
use crate::report::time::Utc;
use crate::report::{PrecisionStop, Row, Sink};
use crate::spec::MetricKind;
use crate::stats::noise::NoiseThresholds;
use crate::stats::spread::spread;
use crate::stats::{osu_tails, Samples, Summary};

/// Runs every size of the plan. `sinks` are rank 0's outputs (None
/// elsewhere); `on_row` is called after each row reached them. Err only
/// on rank 0, when an output cannot be written: the caller ends the job.
///
/// With `--format nccl-tests` each size is measured twice, out of place
/// then in place, and wrong data does not stop the sweep (nccl-tests counts
/// it and goes on); the run still ends as a validation failure at the
/// first size that had some. With `--min-busbw`, a run whose average
/// busbw over every row is below it ends [`Ending::BelowMinimum`].
pub fn run<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    plan: &Plan,
    program: &str,
    mut sinks: Option<&mut Sinks>,
    progress: &Progress,
    mut on_row: impl FnMut(),
) -> io::Result<Ending> {
    let opts = plan.opts;
    let groups = plan.groups();
    let max_iters = groups.iter().flat_map(|g| &g.points).map(|p| p.iterations).max().unwrap_or(1);
    let mut samples = Samples::with_capacity(max_iters);
    let validating = opts.validation.is_some();
    let nccl_tests = opts.format.counts_wrong_elements();
    let mut first_wrong: Option<usize> = None;
    let mut busbw = (0.0f64, 0usize);
    // Rows name their operation where the run sweeps several.
    let sweeps_operations = plan.sweeps_operations();
    // -M: what the measurement leaves held on the GPU.
    let free_before = opts.memory_report.then(|| t.device_free()).flatten();
    for group in &groups {
        t.use_datatype(group.datatype);
        emit(&mut sinks, &mut |s| s.begin_datatype(group.datatype))?;
        emit(&mut sinks, &mut |s| s.begin_operation(group.reduction, group.root))?;
        kernel.set_operation(group.reduction, group.root);
        // nccl-tests' warm-up, once before the sweep, out of place.
        for case in &group.warmup {
            kernel.set_in_place(false);
            progress.enter(Step::Setup, Some(case.datatype), case.size);
            if everywhere(t.world(), program, kernel.prepare(t, case)).is_none() {
                return Ok(Ending::Error { detail: format!("could not set up message size {} to warm up", case.size) });
            }
            timed_loop::warm_up(t, kernel, case, progress);
        }
        // nccl-tests' -N 0: the group's sweep again and again until the
        // job is stopped (a signal, the watchdog), every pass in the
        // outputs.
        let passes = if opts.sweep.is_some_and(|s| s.forever()) { usize::MAX } else { 1 };
        for point in group.points.iter().cycle().take(group.points.len().saturating_mul(passes)) {
            let size = point.size;
            // The point's rows, one per cell, for the outputs at once.
            let mut rows = Vec::with_capacity(point.cells.len());
            let mut failed = false;
            for &cell in &point.cells {
                let case = point.case(cell);
                let checked = match cell.in_place {
                    Some(ip) => validating && kernel.set_in_place(ip).unwrap_or(true),
                    None => validating,
                };
                progress.enter(Step::Setup, Some(case.datatype), size);
                if everywhere(t.world(), program, kernel.prepare(t, &case)).is_none() {
                    emit_point(&mut sinks, &rows, opts.verbose, program, &mut on_row)?;
                    return Ok(Ending::Error { detail: format!("could not set up message size {size}") });
                }
                if kernel.sync_before_size() {
                    t.world().barrier();
                }
                // Most kernels time one pass; the non-blocking collectives
                // two (pure communication, then overlap), each of the
                // whole count (the plan gives them no stopping rule).
                let phases = kernel.phases();
                let mut outcome = LoopOutcome::default();
                for phase in 0..phases {
                    if phase > 0 {
                        kernel.begin_phase(t, &case, phase, &samples);
                    }
                    outcome.merge(timed_loop::run(
                        t,
                        kernel,
                        &case,
                        checked.then_some(opts.validation_warmup),
                        &mut samples,
                        progress,
                        opts.tails.is_some(),
                        // nccl-tests' table: nccl-tests' check.
                        nccl_tests,
                        point.rule.as_ref().filter(|_| phases == 1),
                    ));
                }
                kernel.end_size(t, &case);
                // What ran: fewer than the count where --precision stopped
                // early (every rank alike), so the metric divides by what
                // was timed.
                let case = SizeCase { iterations: outcome.iterations_run, ..case };
                progress.set_step(Step::Results);
                let metric = kernel.metric(t, &case, &samples);
                let passed = checked.then(|| verdict(t, plan, program, &case, &outcome, kernel.phases()));
                let wrong = (checked && nccl_tests).then(|| t.world().allreduce_sum_u64(outcome.wrong_elements));
                let per_iteration = opts.iteration_events.and_then(|skip| {
                    per_iteration(t.world(), outcome.event_secs.take().unwrap_or_default(), opts.lanes(), skip)
                });
                if let Some((_, b)) = metric.algbw_busbw {
                    busbw = (busbw.0 + b, busbw.1 + 1);
                }
                if sinks.is_some() {
                    let mut row = row(kernel, plan, &case, metric, passed, &samples, outcome.batched);
                    row.in_place = cell.in_place;
                    row.wrong_elements = wrong;
                    row.reduction = sweeps_operations.then_some(group.reduction);
                    row.root = group.root;
                    row.issue_us = outcome.issue_secs.map(|secs| secs * 1e6);
                    row.per_iteration = per_iteration;
                    row.precision = point.rule.zip(outcome.stop_reason).map(|(r, reason)| PrecisionStop {
                        ceiling: r.ceiling as usize,
                        reason,
                        drift_holds: outcome.drift_holds,
                    });
                    rows.push(row);
                }
                if passed == Some(false) {
                    if !nccl_tests {
                        failed = true;
                        break;
                    }
                    first_wrong.get_or_insert(size);
                }
            }
            emit_point(&mut sinks, &rows, opts.verbose, program, &mut on_row)?;
            // What competed with this rank, between sizes: never timed.
            crate::procs::load::note_size(size);
            if failed {
                return Ok(Ending::ValidationFailed { size });
            }
        }
        emit(&mut sinks, &mut |s| s.end_datatype())?;
    }
    if opts.memory_report {
        let usage = memory_usage(t, free_before);
        emit(&mut sinks, &mut |s| s.memory_usage(&usage))?;
    }
    emit(&mut sinks, &mut |s| s.finish())?;
    if let Some(size) = first_wrong {
        return Ok(Ending::ValidationFailed { size });
    }
    if let Some(min) = opts.min_busbw {
        // Rank 0 holds the averages over ranks; every rank ends alike.
        let avg = t.world().bcast_u64((busbw.0 / busbw.1.max(1) as f64).to_bits());
        let avg = f64::from_bits(avg);
        if avg < min {
            return Ok(Ending::BelowMinimum { avg_busbw: avg, min_busbw: min });
        }
    }
    Ok(Ending::Complete)
}

/// Gives every output (on rank 0) the rows of one size point, cell by
/// cell; `on_row` counts each, and `--verbose` says each noisy one. A
/// point cut short (a failed check, a size that could not be set up)
/// passes the rows it has.
fn emit_point(
    sinks: &mut Option<&mut Sinks>,
    rows: &[Row],
    verbose: bool,
    name: &str,
    on_row: &mut impl FnMut(),
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    emit(sinks, &mut |s| s.point(rows))?;
    if sinks.is_some() {
        for row in rows {
            if verbose {
                if let Some(line) = noise_line(name, row) {
                    crate::diag::say(&line);
                }
            }
            on_row();
        }
    }
    Ok(())
}

/// Sends something to every output, where there are outputs (rank 0).
fn emit(sinks: &mut Option<&mut Sinks>, f: &mut dyn FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
    match sinks {
        Some(s) => s.each(f),
        None => Ok(()),
    }
}

/// nccl-tests' `-M 1`: the device memory the transport's setup and the
/// measurement (from `free_before` to now) took, each the most over every
/// rank, at rank 0; collective.
fn memory_usage<T: Transport>(t: &T, free_before: Option<u64>) -> crate::report::MemoryUsage {
    let (init, buffers) = t.setup_memory().unwrap_or((0, 0));
    let collective = crate::backend::used_between(free_before, t.device_free());
    // Whole bytes, far below 2^53: exact as doubles.
    let most = t.world().reduce_f64_slice(&[init as f64, buffers as f64, collective as f64], ReduceOp::Max);
    let at = |i: usize| most.get(i).map_or(0, |&v| v as i64);
    crate::report::MemoryUsage { init: at(0), buffers: at(1), collective: at(2) }
}

/// nccl-tests' `-I 1`: every rank's device time per iteration (`mine`,
/// each rank's as long as the others') at rank 0, as the most over each
/// process's `lanes` GPUs and then over processes, its summary leaving
/// out the first `skip`; None elsewhere, and where no time was taken.
fn per_iteration(
    world: &impl Control,
    mine: Vec<f64>,
    lanes: usize,
    skip: usize,
) -> Option<crate::stats::iterations::PerIteration> {
    let n = mine.len();
    let all = world.gather_f64_slice(&mine);
    if n == 0 || all.is_empty() {
        return None;
    }
    let ranks: Vec<Vec<f64>> = all.chunks(n).map(<[f64]>::to_vec).collect();
    Some(crate::stats::iterations::PerIteration::of_ranks(&ranks, lanes, skip))
}

/// Combines every rank's checks; a rank that saw wrong data says where.
fn verdict<T: Transport>(
    t: &T,
    plan: &Plan,
    program: &str,
    case: &SizeCase,
    outcome: &LoopOutcome,
    passes: usize,
) -> bool {
    if let Some((iteration, m)) = &outcome.first_mismatch {
        let rank = t.world().rank();
        say(&format!(
            "{program}: validation failed on rank {rank}: {}; {} of {} iterations wrong",
            validation::describe_mismatch(case, *iteration, m),
            outcome.errors,
            (case.iterations + case.warmup) * passes,
        ));
        if let Some(dir) = plan.opts.validation.as_ref().and_then(|v| v.log_dir.as_ref()) {
            validation::write_log(dir, rank, case, *iteration, m);
        }
    }
    t.world().allreduce_sum_u64(outcome.errors) == 0
}

/// `--verbose`'s line for a size whose noise verdict is not `ok` (None for
/// a quiet size or one without a spread): what was flagged and the number
/// behind each flag, e.g. `# noise: osu_latency MPI_CHAR size 8: drift
/// (second half +12.0%)`. Made row-safe, as it sits among the table's
/// rows in a merged stdout and stderr.
pub(crate) fn noise_line(benchmark: &str, row: &Row) -> Option<String> {
    let noise = &row.iter_spread.as_ref()?.noise;
    if noise.is_ok() {
        return None;
    }
    let mut what = String::from(benchmark);
    if let Some(dt) = row.datatype {
        what = format!("{what} {}", dt.mpi_name());
    }
    what = format!("{what} size {}", row.size);
    if let Some(w) = row.window {
        what = format!("{what} window {w}");
    }
    if let Some(ip) = row.in_place {
        what = format!("{what} {}", if ip { "in-place" } else { "out-of-place" });
    }
    Some(crate::diag::row_safe(&format!("# noise: {what}: {}", noise.explain())))
}

/// The thresholds behind every row's noise verdict; the run record keeps
/// them (`noise_thresholds`) so that a verdict can be read later.
pub(crate) fn noise_thresholds() -> NoiseThresholds {
    NoiseThresholds::default()
}

/// The row of one size, as every output gets it.
///
/// The spread columns come from the same per-iteration series as `iter`
/// (rank 0's own times, or for collectives each iteration's average over
/// ranks, whose mean is exactly OSU's average), scaled as `iter` is. For a
/// latency or a collective the interval of that mean is the interval of
/// the reported value itself; for a bandwidth or a message rate (bytes or
/// messages over the mean time) its relative half-width is that of the
/// reported value to first order, which is what `ci95_rel_pct` states. A
/// batch timed as one (`batched`) has no per-iteration times: no spread.
fn row<T: Transport, K: Kernel<T>>(
    kernel: &K,
    plan: &Plan,
    case: &SizeCase,
    metric: Metric,
    passed: Option<bool>,
    samples: &Samples,
    batched: bool,
) -> Row {
    let (spec, opts) = (plan.spec, plan.opts);
    let secs = metric.iteration_secs.as_deref().unwrap_or(samples.as_slice());
    let scale = kernel.iteration_time_scale();
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
        | MetricKind::Hello
        | MetricKind::Overlap
        | MetricKind::OverlapBarrier => (Some(metric.value), None),
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
        wrong_elements: None,
        in_place: None,
        overlap: metric.overlap,
        tails,
        iter: Summary::from_secs(secs, scale),
        iterations_run: (!secs.is_empty()).then_some(secs.len()),
        iter_spread: if batched { None } else { spread(secs, scale * 1e6, &noise_thresholds()) },
        precision: None,
        finished_utc: Utc::now().rfc3339(),
        reduction: None,
        root: None,
        issue_us: None,
        time_us: metric.time_us,
        per_iteration: None,
    }
}

#[cfg(test)]
mod tests;
