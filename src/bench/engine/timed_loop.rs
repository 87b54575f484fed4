//! The measurement loop shared by every benchmark: warm-up and timed
//! iterations, the untimed start and end of each (where OSU's validation
//! repetitions `-u` and synchronisations go), checking, and recording each
//! timed iteration. Nothing here allocates, prints or locks between the
//! timer reads, which the kernel's `step` owns.

use std::time::Duration;

use crate::backend::{Control, Transport};
use crate::bench::{Calls, Kernel, SizeCase};
use crate::buffer::Mismatch;
use crate::job::watchdog::{Progress, Step};
use crate::options::Blocking;
use crate::stats::precision::{Decision, StopReason, StoppingRule};
use crate::stats::Samples;

/// What the loop saw besides the timings.
#[derive(Debug, Default)]
pub(crate) struct LoopOutcome {
    /// Iterations whose received data was wrong on this rank.
    pub errors: u64,
    /// Wrong elements over every checked iteration on this rank.
    pub wrong_elements: u64,
    /// The first wrong element and the iteration it was seen in.
    pub first_mismatch: Option<(usize, Mismatch)>,
    /// The timed iterations ran as one batch without device timestamps:
    /// each sample is the batch's mean, not an iteration's own time.
    pub batched: bool,
    /// Timed iterations run, on every rank alike: the size's count, or
    /// fewer where `--precision` stopped early.
    pub iterations_run: usize,
    /// Why `--precision` stopped the size (rank 0, which decides; None on
    /// the other ranks and without the option).
    pub stop_reason: Option<StopReason>,
    /// How many times `--precision`'s drift test held the size back after
    /// its interval was met (rank 0; 0 elsewhere and without the option).
    pub drift_holds: u64,
    /// A batch's host time per call up to its last completion, on this
    /// rank, where asked ([`Calls::host_time`], nccl-tests' `-C 1`).
    pub issue_secs: Option<f64>,
    /// Each group's device time per call, seconds, in order, where asked
    /// ([`Calls::events`], nccl-tests' `-I 1`).
    pub event_secs: Option<Vec<f64>>,
}

impl LoopOutcome {
    /// Adds the outcome of a later pass over the same size.
    pub fn merge(&mut self, later: LoopOutcome) {
        self.errors += later.errors;
        self.wrong_elements += later.wrong_elements;
        if self.first_mismatch.is_none() {
            self.first_mismatch = later.first_mismatch;
        }
        // The last pass's count and form are what the row reports.
        self.iterations_run = later.iterations_run;
        self.batched = later.batched;
        self.stop_reason = later.stop_reason;
        self.drift_holds = later.drift_holds;
        self.issue_secs = later.issue_secs;
        self.event_secs = later.event_secs;
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
/// transport batches. `check_once` validates as nccl-tests does, one more
/// iteration after the timed ones, instead of every iteration as OSU does
/// (a batched loop always checks once).
///
/// With a stopping `rule` (`--precision`; `case.iterations` is then its
/// ceiling) the timed iterations run in batches. Between two batches,
/// outside any timed region, rank 0 hands the rule its times as it
/// recorded them, the batch's and (for the rule's drift test, which reads
/// them in place) every earlier one (its own series: for a point-to-point
/// benchmark rank 0 is the side OSU times; for a collective, whose
/// reported value is the average over ranks, rank 0's own times stand in
/// for it, so that no reduction runs per batch) and broadcasts the rule's
/// answer, so that
/// every rank runs the same iterations and stops together. A batched
/// transport's timing has no per-iteration values; the options refuse
/// `--precision` there.
#[allow(clippy::too_many_arguments)] // the loop's inputs, each of them needed
pub fn run<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    case: &SizeCase,
    validation: Option<usize>,
    samples: &mut Samples,
    progress: &Progress,
    per_iteration: bool,
    check_once: bool,
    rule: Option<&StoppingRule>,
) -> LoopOutcome {
    if T::BATCHED && kernel.batchable() && (!per_iteration || t.device_marks(case.iterations)) {
        return run_batched(t, kernel, case, validation, samples, progress, per_iteration);
    }
    // OSU checks every iteration; nccl-tests (`check_once`) one more after.
    let every = validation.filter(|_| !check_once);
    let mut out = LoopOutcome::default();
    samples.reset(case.iterations);
    progress.set_step(if case.warmup > 0 { Step::Warmup } else { Step::Timed });
    let mut iteration = |i: usize, out: &mut LoopOutcome, samples: &mut Samples| {
        if i == case.warmup {
            progress.set_step(Step::Timed);
        }
        kernel.begin_iteration(t, case, i, every);
        let elapsed = kernel.step(t, case);
        kernel.end_iteration(t, case);
        if i >= case.warmup {
            if let Some(t) = elapsed {
                samples.push(t);
            }
        }
        if every.is_some() {
            out.check(t, kernel, case, i);
        }
        progress.iteration(i);
    };
    out.iterations_run = match rule {
        None => {
            for i in 0..case.warmup + case.iterations {
                iteration(i, &mut out, samples);
            }
            case.iterations
        }
        Some(rule) => under_rule(t, case, rule, &mut out, samples, &mut iteration),
    };
    if check_once {
        check_after(t, kernel, case, validation, &mut out);
    }
    out
}

/// The iterations of a size under a stopping rule: the warm-up, then
/// batches until rank 0's rule says stop (see [`run`]); returns how many
/// timed iterations ran.
fn under_rule<T: Transport>(
    t: &T,
    case: &SizeCase,
    rule: &StoppingRule,
    out: &mut LoopOutcome,
    samples: &mut Samples,
    iteration: &mut impl FnMut(usize, &mut LoopOutcome, &mut Samples),
) -> usize {
    for i in 0..case.warmup {
        iteration(i, out, samples);
    }
    let rule = StoppingRule::new(rule.target, rule.floor, case.iterations as u64, rule.max_time);
    let mut state = rule.start();
    let root = t.world().rank() == 0;
    let (mut done, mut next) = (0usize, rule.floor.max(1) as usize);
    loop {
        let batch_start = t.now();
        let end = (done + next).min(case.iterations);
        for i in case.warmup + done..case.warmup + end {
            iteration(i, out, samples);
        }
        let batch_secs = t.now() - batch_start;
        done = end;
        // Untimed: rank 0 decides, every rank follows (0 = stop).
        let mine = if root {
            let took = Duration::from_secs_f64(batch_secs.max(0.0));
            // Every sample so far: the rule takes the new ones as the
            // batch, and its drift test reads them all.
            let decision = state.record_values(samples.as_slice(), took);
            out.drift_holds = state.drift_holds();
            match decision {
                Decision::Continue(n) if done < case.iterations => n.max(1),
                Decision::Continue(_) => {
                    out.stop_reason = Some(StopReason::Ceiling);
                    0
                }
                Decision::Stop(reason) => {
                    out.stop_reason = Some(reason);
                    0
                }
            }
        } else {
            0
        };
        next = t.world().bcast_u64(mine) as usize;
        if next == 0 {
            break;
        }
    }
    done
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
    // Device timestamps give each iteration its own time; a plain batch
    // has only its mean.
    let mut out = LoopOutcome { batched: !per_iteration, iterations_run: case.iterations, ..LoopOutcome::default() };
    samples.reset(case.iterations);
    progress.set_step(if case.warmup > 0 { Step::Warmup } else { Step::Timed });
    warm_up_each(t, kernel, case, progress);
    progress.set_step(Step::Timed);
    // nccl-tests' `-m`: the calls go in groups of `grouped`, each group
    // one issue (a timestamp between groups, not inside one); its `-z`:
    // a wait (and a barrier) after each call, or after each group.
    let Calls { grouped, blocking, host_time, events, .. } = case.calls;
    let grouped = grouped.max(1);
    let groups = case.iterations / grouped;
    let untimed_barriers = blocking == Blocking::WaitEachGroupBarrierUntimed;
    // `-I 1`: an event before each group and one after the last (with
    // `-z 3`, one before and one after each group, so that the untimed
    // barrier stays outside), made before the timed region.
    let events = events && !per_iteration && t.device_marks(if untimed_barriers { 2 * groups } else { groups });
    t.world().barrier();
    let mut issue_group = |g: usize| {
        let first = case.warmup + g * grouped;
        if grouped > 1 {
            t.begin_group();
        }
        for i in first..first + grouped {
            kernel.issue(t, case, i);
            if !blocking.is_none() {
                t.complete();
            }
            if blocking == Blocking::WaitAndBarrier {
                t.world().barrier();
            }
        }
        if grouped > 1 {
            t.end_group();
        }
    };
    if per_iteration {
        t.mark(0);
        for g in 0..groups {
            issue_group(g);
            t.mark(g + 1);
        }
        t.complete();
        if grouped == 1 {
            t.mark_intervals(case.iterations, samples);
        } else {
            // A group has one time: each of its calls gets its share.
            let mut each_group = Samples::with_capacity(groups);
            t.mark_intervals(groups, &mut each_group);
            for &secs in each_group.as_slice() {
                for _ in 0..grouped {
                    samples.push(secs / grouped as f64);
                }
            }
        }
    } else {
        // `-G N`: the groups are recorded into a graph, not run, and the
        // timed span is N launches of it, from a barrier after the graph
        // is made (nccl-tests' command line leaves neither `-z 3` nor
        // `-I` beside `-G`, and refuses the other waits inside it).
        let graph = case.calls.graph_launches > 0 && t.begin_capture();
        let mut t0 = t.now();
        // `-z 3`: only the groups' own spans, each up to its completion
        // (the clock read only there).
        let mut spans = 0.0;
        for g in 0..groups {
            let g0 = if untimed_barriers { t.now() } else { 0.0 };
            if events {
                t.mark(if untimed_barriers { 2 * g } else { g });
            }
            issue_group(g);
            if untimed_barriers {
                t.complete();
                if events {
                    t.mark(2 * g + 1);
                }
                spans += t.now() - g0;
                t.world().barrier();
            }
        }
        if events && !untimed_barriers {
            t.mark(groups);
        }
        let launches = if graph { case.calls.graph_launches } else { 1 };
        if graph {
            t.end_capture();
            t.world().barrier();
            t0 = t.now();
            for _ in 0..launches {
                t.launch_capture();
            }
        }
        // -C: the host's part, everything issued and nothing more waited
        // for (with -z 3, the groups' spans alone, as the time); the clock
        // is read for it only when asked. Under `-G` it spans every
        // launch and is still divided by the calls of one, as nccl-tests
        // divides it.
        let issued = match (host_time, untimed_barriers) {
            (false, _) => None,
            (true, true) => Some(spans),
            (true, false) => Some(t.now() - t0),
        };
        // Calls waited for one by one are complete already (nccl-tests
        // then skips the last wait too).
        if blocking.is_none() || grouped > 1 {
            t.complete();
        }
        let secs = if untimed_barriers { spans } else { (t.now() - t0) / launches as f64 };
        if graph {
            t.free_capture();
        }
        out.issue_secs = issued.map(|secs| secs / case.iterations.max(1) as f64);
        if events {
            out.event_secs = Some(group_event_times(t, groups, grouped, untimed_barriers));
        }
        let each = secs / case.iterations.max(1) as f64;
        for _ in 0..case.iterations {
            samples.push(each);
        }
    }
    progress.iteration((case.warmup + case.iterations).saturating_sub(1));
    check_after(t, kernel, case, validation, &mut out);
    t.world().barrier();
    out
}

/// Each group's time per call between its events (see [`run_batched`]),
/// read once the last is complete: consecutive events, or with `paired`
/// (`-z 3`) each group's own two, leaving the barriers between out.
fn group_event_times<T: Transport>(t: &T, groups: usize, grouped: usize, paired: bool) -> Vec<f64> {
    // Calls waited for one by one leave the last event still to complete.
    t.complete();
    let marks = if paired { (2 * groups).saturating_sub(1) } else { groups };
    let mut between = Samples::with_capacity(marks);
    t.mark_intervals(marks, &mut between);
    let step = if paired { 2 } else { 1 };
    between.as_slice().iter().step_by(step).map(|secs| secs / grouped as f64).collect()
}

/// nccl-tests' warm-up at one size, before a sweep: `case.warmup` calls
/// back to back and one completion where the kernel batches, else one
/// iteration at a time as the timed loop's own warm-up.
pub fn warm_up<T: Transport, K: Kernel<T>>(t: &T, kernel: &mut K, case: &SizeCase, progress: &Progress) {
    progress.set_step(Step::Warmup);
    if T::BATCHED && kernel.batchable() {
        for i in 0..case.warmup {
            kernel.issue(t, case, i);
        }
        t.complete();
        progress.iteration(case.warmup.saturating_sub(1));
    } else {
        warm_up_each(t, kernel, case, progress);
    }
}

/// `case.warmup` untimed iterations, each begun, stepped (completed) and
/// ended as the timed ones are.
fn warm_up_each<T: Transport, K: Kernel<T>>(t: &T, kernel: &mut K, case: &SizeCase, progress: &Progress) {
    for i in 0..case.warmup {
        kernel.begin_iteration(t, case, i, None);
        kernel.step(t, case);
        kernel.end_iteration(t, case);
        progress.iteration(i);
    }
}

/// Validation as nccl-tests does it: one more iteration after the timed
/// ones, untimed, filled and checked (nothing when not validating).
fn check_after<T: Transport, K: Kernel<T>>(
    t: &T,
    kernel: &mut K,
    case: &SizeCase,
    validation: Option<usize>,
    out: &mut LoopOutcome,
) {
    if validation.is_none() {
        return;
    }
    // nccl-tests' -c N: the same checked call again, up to N times, until
    // one is wrong on some rank (every rank agrees, untimed, before the
    // next; none to agree on after the last).
    let last = case.warmup + case.iterations;
    let rounds = case.calls.checks;
    for round in 0..rounds {
        let before = out.errors;
        kernel.begin_iteration(t, case, last, validation);
        // Under `-G` the checked call goes through a graph of its own,
        // launched once, as the timed ones did.
        if case.calls.graph_launches > 0 && kernel.batchable() && t.begin_capture() {
            kernel.issue(t, case, last);
            t.end_capture();
            t.launch_capture();
            t.complete();
            t.free_capture();
        } else {
            kernel.step(t, case);
        }
        kernel.end_iteration(t, case);
        out.check(t, kernel, case, last);
        if round + 1 < rounds && t.world().allreduce_sum_u64(out.errors - before) > 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::mock::{self, MockTransport, Model};
    use crate::bench::{collective::allreduce, collective::barrier, collective::reduce, Bench, BenchOn, Setup};
    use crate::cli::test_options;
    use crate::datatype::Datatype;

    /// 64 bytes of ints, 20 timed calls after 3 warm-up ones, issued as
    /// `calls` says.
    fn case_64(calls: Calls) -> SizeCase {
        SizeCase { datatype: Datatype::Int, size: 64, count: 16, iterations: 20, warmup: 3, window: 1, calls }
    }

    /// Runs benchmark `B`'s kernel for one size on `np` mock ranks, once
    /// OSU's way and once as a batch; returns rank 0's samples of each and
    /// the batch's outcome.
    fn both<B: BenchOn<MockTransport>>(np: usize, validating: bool) -> (Vec<f64>, Vec<f64>, u64, bool) {
        let mut out = mock::run(np, Model::default(), |t| {
            // Validation repetitions write into the warm-up buffer, which
            // only a validating run (-c) has.
            let opts = test_options(B::SPEC, if validating { &["-m", "64:64", "-c"] } else { &["-m", "64:64"] });
            let plan = crate::bench::engine::plan::Plan::for_test(B::SPEC, &opts, np);
            let setup = Setup { max_window: 1, ..Setup::new(t, &plan) };
            let mut k = B::kernel(&setup).expect("buffers");
            let case = case_64(Calls::ALONE);
            k.prepare(t, &case).expect("prepare");
            let progress = Progress::default();
            let mut each = Samples::with_capacity(20);
            let validation = validating.then_some(2);
            run(t, &mut k, &case, validation, &mut each, &progress, false, false, None);
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

    /// OSU checks every iteration, warm-up included; nccl-tests' way
    /// (`check_once`, its table) one more iteration after the timed ones.
    /// Every allreduce result on rank 0 is corrupted here, so each check
    /// made is an error counted.
    #[test]
    fn osu_checks_every_iteration_nccl_tests_once_after() {
        for (once, checks) in [(false, 23), (true, 1)] {
            let out = mock::run_with(2, Model::default(), Some(mock::Fault::CorruptTo { to: 0 }), |t| {
                let opts = test_options(allreduce::Allreduce::SPEC, &["-m", "64:64"]);
                let plan = crate::bench::engine::plan::Plan::for_test(allreduce::Allreduce::SPEC, &opts, 2);
                let setup = Setup { max_window: 1, ..Setup::new(t, &plan) };
                let mut k = allreduce::Allreduce::kernel(&setup).expect("buffers");
                let case = case_64(Calls::ALONE);
                k.prepare(t, &case).expect("prepare");
                let mut samples = Samples::with_capacity(20);
                let o = run(t, &mut k, &case, Some(0), &mut samples, &Progress::default(), false, once, None);
                (o.errors, samples.len(), o.first_mismatch.map(|(i, _)| i))
            });
            let first = if once { 23 } else { 0 };
            assert_eq!(out[0], (checks, 20, Some(first)), "check_once {once}");
            assert_eq!(out[1], (0, 20, None), "check_once {once}: rank 1's results are right");
        }
    }

    /// osu_reduce's barrier before each call is OSU's way; in a batch
    /// (nccl-tests' reduce_perf) its calls go back to back like every
    /// other collective's, each with its iteration's root.
    #[test]
    fn every_collective_but_the_barrier_batches() {
        let (each, batch, errors, batchable) = both::<reduce::Reduce>(3, true);
        assert!(batchable, "osu_reduce");
        assert_eq!((batch.len(), errors), (20, 0));
        let (sum_each, sum_batch): (f64, f64) = (each.iter().sum(), batch.iter().sum());
        assert!(sum_batch > 0.0 && sum_each > 0.0);
        assert!(!both::<barrier::Barrier>(2, false).3);
    }

    /// nccl-tests' `-m`: the timed calls go in groups, one issue each,
    /// and the samples still count calls. Its `-z`, through the mock's
    /// virtual time: a wait after each call costs nothing where calls
    /// complete as they return; `-z 1`'s barrier after each call is timed,
    /// `-z 3`'s after each group is not.
    #[test]
    fn grouped_calls_are_issued_in_groups_and_counted_as_calls() {
        let cases = [(4, false, Blocking::None), (4, true, Blocking::None), (1, false, Blocking::None)];
        let blocking = [Blocking::WaitAndBarrier, Blocking::Wait, Blocking::WaitEachGroupBarrierUntimed];
        let cases = cases.into_iter().chain(blocking.into_iter().flat_map(|b| [(1, false, b), (4, false, b)]));
        let mut totals = std::collections::HashMap::new();
        for (grouped, marks, blocking) in cases {
            let out = mock::run(2, Model::default(), |t| {
                let opts = test_options(allreduce::Allreduce::SPEC, &["-m", "64:64", "-c"]);
                let plan = crate::bench::engine::plan::Plan::for_test(allreduce::Allreduce::SPEC, &opts, 2);
                let setup = Setup { max_window: 1, ..Setup::new(t, &plan) };
                let mut k = allreduce::Allreduce::kernel(&setup).expect("buffers");
                let case =
                    case_64(Calls { grouped, blocking, host_time: false, events: false, checks: 1, graph_launches: 0 });
                k.prepare(t, &case).expect("prepare");
                let mut samples = Samples::with_capacity(20);
                assert!(!marks || t.device_marks(case.iterations));
                let o = run_batched(t, &mut k, &case, Some(0), &mut samples, &Progress::default(), marks);
                (t.groups_closed(), samples.len(), samples.total(), o.errors)
            });
            let (groups, n, total, errors) = out[0];
            let what = format!("-m {grouped} {blocking:?} marks {marks}");
            assert_eq!((groups, n, errors), (if grouped > 1 { 20 / grouped } else { 0 }, 20, 0), "{what}");
            assert!(total > 0.0, "{what}");
            if !marks {
                totals.insert((grouped, blocking), total);
            }
        }
        let barrier = Model::default().barrier(2);
        for grouped in [1, 4] {
            let plain = totals[&(grouped, Blocking::None)];
            let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
            assert!(near(totals[&(grouped, Blocking::Wait)], plain), "{totals:?}");
            assert!(near(totals[&(grouped, Blocking::WaitEachGroupBarrierUntimed)], plain), "{totals:?}");
            assert!(near(totals[&(grouped, Blocking::WaitAndBarrier)], plain + 20.0 * barrier), "{totals:?}");
        }
    }

    /// nccl-tests' `-G N`: the timed calls are captured once and the
    /// graph launched N times, and the checked call gets a graph launched
    /// once; in the mock's virtual time a call takes what it takes issued
    /// directly, whatever N, grouped or not, and the results check.
    /// `-C`'s host time spans all N launches over one launch's calls, as
    /// nccl-tests divides it.
    #[test]
    fn a_graph_is_captured_once_and_each_launch_timed() {
        let mut per_call = std::collections::HashMap::new();
        for grouped in [1, 4] {
            for graph_launches in [0, 1, 5] {
                let out = mock::run(2, Model::default(), |t| {
                    let opts = test_options(allreduce::Allreduce::SPEC, &["-m", "64:64", "-c"]);
                    let plan = crate::bench::engine::plan::Plan::for_test(allreduce::Allreduce::SPEC, &opts, 2);
                    let setup = Setup { max_window: 1, ..Setup::new(t, &plan) };
                    let mut k = allreduce::Allreduce::kernel(&setup).expect("buffers");
                    let calls = Calls { grouped, host_time: true, graph_launches, ..Calls::ALONE };
                    let case = case_64(calls);
                    k.prepare(t, &case).expect("prepare");
                    let mut samples = Samples::with_capacity(20);
                    let o = run_batched(t, &mut k, &case, Some(0), &mut samples, &Progress::default(), false);
                    (t.launches.get(), t.groups_closed(), samples.len(), samples.total(), o.errors, o.issue_secs)
                });
                let (launches, groups, n, total, errors, issued) = out[0];
                let what = format!("-m {grouped} -G {graph_launches}");
                let checked = usize::from(graph_launches > 0);
                let want_groups = if grouped > 1 { 20 / grouped } else { 0 };
                assert_eq!((launches, groups, n, errors), (graph_launches + checked, want_groups, 20, 0), "{what}");
                let each = total / 20.0;
                let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
                assert!(near(issued.unwrap(), each * graph_launches.max(1) as f64), "{what}: {issued:?} {each}");
                per_call.insert((grouped, graph_launches), each);
            }
        }
        for grouped in [1, 4] {
            let plain = per_call[&(grouped, 0)];
            assert!(plain > 0.0);
            for g in [1, 5] {
                assert!((per_call[&(grouped, g)] - plain).abs() <= 1e-9 * plain, "-m {grouped} -G {g}: {per_call:?}");
            }
        }
    }

    /// nccl-tests' `-I 1`: one device time per group (per call within it),
    /// in the mock's virtual time, which add up to the host's time: the
    /// barrier after each call inside (`-z 1`), the one after each group
    /// outside (`-z 3`), as the host's time has them.
    #[test]
    fn event_times_are_each_group_s_and_add_up_to_the_host_s() {
        let blocking = [Blocking::None, Blocking::WaitAndBarrier, Blocking::WaitEachGroupBarrierUntimed];
        for (grouped, blocking) in blocking.into_iter().flat_map(|b| [(1, b), (4, b)]) {
            let out = mock::run(2, Model::default(), |t| {
                let opts = test_options(allreduce::Allreduce::SPEC, &["-m", "64:64", "-c"]);
                let plan = crate::bench::engine::plan::Plan::for_test(allreduce::Allreduce::SPEC, &opts, 2);
                let setup = Setup { max_window: 1, ..Setup::new(t, &plan) };
                let mut k = allreduce::Allreduce::kernel(&setup).expect("buffers");
                let case =
                    case_64(Calls { grouped, blocking, host_time: false, events: true, checks: 1, graph_launches: 0 });
                k.prepare(t, &case).expect("prepare");
                let mut samples = Samples::with_capacity(20);
                let o = run_batched(t, &mut k, &case, Some(0), &mut samples, &Progress::default(), false);
                (samples.total(), o.event_secs.expect("event times"), o.batched)
            });
            let (host, events, batched) = &out[0];
            let what = format!("-m {grouped} {blocking:?}");
            assert!(batched, "{what}: the samples stay the host's mean");
            assert_eq!(events.len(), 20 / grouped, "{what}");
            assert!(events.iter().all(|&e| e > 0.0), "{what}: {events:?}");
            let device: f64 = events.iter().sum::<f64>() * grouped as f64;
            assert!((device - host).abs() <= 1e-9 * host, "{what}: device {device} host {host}");
        }
    }

    /// Every rank runs the iterations rank 0's rule asks for and stops
    /// with it, on noisy collectives: no rank times an iteration the
    /// others do not.
    #[test]
    fn every_rank_stops_together_under_a_precision_rule() {
        use crate::stats::precision::{parse_precision, StoppingRule};
        let model = Model { jitter_s: 1e-6, ..Model::default() };
        for (target, ceiling) in [("3%", 4000), ("0.01%", 300), ("50%", 4000)] {
            let out = mock::run(3, model, |t| {
                let opts = test_options(allreduce::Allreduce::SPEC, &["-m", "64:64"]);
                let setup = Setup { t, opts: &opts, pairs: 0, max_window: 1, max_size: opts.max_size };
                let mut k = allreduce::Allreduce::kernel(&setup).expect("buffers");
                let case = SizeCase {
                    datatype: Datatype::Int,
                    size: 64,
                    count: 16,
                    iterations: ceiling,
                    warmup: 3,
                    window: 1,
                    calls: Calls::ALONE,
                };
                k.prepare(t, &case).expect("prepare");
                let rule = StoppingRule::new(parse_precision(target).unwrap(), 40, ceiling as u64, None);
                let mut samples = Samples::with_capacity(ceiling);
                let o = run(t, &mut k, &case, None, &mut samples, &Progress::default(), false, false, Some(&rule));
                (o.iterations_run, samples.len())
            });
            let n = out[0].0;
            assert!(out.iter().all(|&(runs, timed)| runs == n && timed == n), "{target}: {out:?}");
            match target {
                "0.01%" => assert_eq!(n, ceiling, "noise this target never meets: the ceiling"),
                "50%" => assert_eq!(n, 40, "a target met at once: the floor"),
                _ => assert!(40 < n && n < ceiling, "{target}: {n}"),
            }
        }
    }
}
