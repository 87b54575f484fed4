//! `--dry-run[=NP]`: what a run would do on NP ranks, printed as one table
//! before anything starts (no MPI_Init, no traffic): every size point of
//! the plan with its cells and counts, the memory estimate of one rank
//! (bench/engine/memory.rs, the same figures the run checks before it allocates),
//! and an estimated duration.
//!
//! The duration is a model, and says so: each iteration costs a latency
//! per message step plus the bytes one rank's busiest link carries over a
//! link rate (`--dry-run` assumes [`ASSUMED`]; the suite's dry run prints
//! the same). The steps and link bytes of a collective follow the ring
//! algorithms nccl-tests' bus bandwidth describes: allreduce `2(n-1)`
//! steps carrying `2(n-1)/n` of the vector, reduce-scatter `n-1` and
//! `(n-1)/n`, allgather, alltoall, gather and scatter `n-1` steps of one
//! rank's block each, bcast and reduce `log2 n` steps of the vector,
//! barrier `log2 n` empty steps. Point-to-point iterations are a round
//! trip (latency), or a window of messages and its acknowledgement.
//! Non-blocking collectives run two passes, the second with computation
//! as long as the communication: three times the blocking cost.
//! Validation repeats each iteration `-u` times more. Untimed work
//! between sizes (barriers, fills, start-up) is left out.

use crate::backend::Capability;
use crate::bench::engine::plan::{Cell, Plan, Point};
use crate::bytes::human_bytes;
use crate::spec::{MetricKind, Op};

/// The link a dry run's duration assumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LinkModel {
    /// Microseconds per message step.
    pub latency_us: f64,
    /// GB/s (10^9 bytes per second) one rank's link carries.
    pub gbs: f64,
}

/// 1 us per message and 10 GB/s: a 100 Gb/s network, or a slow
/// shared-memory copy.
pub(crate) const ASSUMED: LinkModel = LinkModel { latency_us: 1.0, gbs: 10.0 };

/// The ranks a dry run plans for: `--dry-run=NP`, else the launcher's job
/// size when started by one, else 2.
pub fn ranks(given: Option<usize>, launched: Option<usize>) -> usize {
    given.or(launched).unwrap_or(2).max(1)
}

/// Message steps and bytes on one rank's busiest link of one iteration of
/// a `size`-byte operation on `np` ranks.
fn collective_cost(op: Op, size: f64, np: usize) -> (f64, f64) {
    let n = np.max(1) as f64;
    let log = n.log2().ceil().max(1.0);
    match op {
        Op::Barrier => (log, 0.0),
        Op::Bcast | Op::Reduce => (log, size),
        Op::Allreduce => (2.0 * (n - 1.0), 2.0 * (n - 1.0) / n * size),
        Op::ReduceScatter | Op::ReduceScatterBlock => (n - 1.0, (n - 1.0) / n * size),
        // One block out to the next rank while one comes in.
        Op::SendRecv => (1.0, size),
        // log2(n) exchanges, each twice the last: every other rank's
        // block in the end.
        Op::HyperCube => (log, (n - 1.0) * size),
        // Each rank exchanges with its neighbours only: two on OSU's
        // default ring (-N cart:1:1), fewer on a smaller job.
        Op::NeighborAllgather
        | Op::NeighborAllgatherv
        | Op::NeighborAlltoall
        | Op::NeighborAlltoallv
        | Op::NeighborAlltoallw => {
            let k = (n - 1.0).min(2.0);
            (k, k * size)
        }
        // The rest move a block to or from every other rank.
        op => {
            debug_assert!(op.block_per_rank(), "{op:?}");
            (n - 1.0, (n - 1.0) * size)
        }
    }
}

/// Seconds the model gives one iteration of `point` with `window`.
fn iteration_secs(plan: &Plan, np: usize, point: &Point, window: usize, link: LinkModel) -> f64 {
    let size = point.size as f64;
    let w = window as f64;
    let (steps, bytes, passes) = match plan.collective {
        Some(call) => {
            let (steps, bytes) = collective_cost(call.op, size, np);
            (steps, bytes, if call.nonblocking { 3.0 } else { 1.0 })
        }
        None => match plan.spec.metric {
            MetricKind::Latency => (2.0, 2.0 * size, 1.0),
            MetricKind::Bandwidth | MetricKind::MultiBandwidth => {
                let both = if plan.spec.duplex { 2.0 } else { 1.0 };
                (w + 1.0, both * w * size, 1.0)
            }
            // One-sided latencies: one message each way at most.
            _ if plan.needs == Some(Capability::OneSided) => (w.max(1.0), w.max(1.0) * size, 1.0),
            _ => (1.0, 0.0, 1.0),
        },
    };
    passes * (steps * link.latency_us * 1e-6 + bytes / (link.gbs * 1e9))
}

/// The modelled seconds of one size point: each cell's warm-up and timed
/// iterations, each `reps` times (validation repeats them).
fn point_secs(plan: &Plan, np: usize, p: &Point, reps: usize, link: LinkModel) -> f64 {
    p.cells
        .iter()
        .map(|c| ((p.iterations + p.warmup) * reps) as f64 * iteration_secs(plan, np, p, c.window, link))
        .sum()
}

/// The modelled seconds of the whole plan on `np` ranks: every point, and
/// nccl-tests' warm-up before each group's sweep.
pub(crate) fn duration_secs(plan: &Plan, np: usize, link: LinkModel) -> f64 {
    let reps = 1 + if plan.opts.validation.is_some() { plan.opts.validation_warmup } else { 0 };
    let groups = plan.groups();
    let points: f64 = groups.iter().flat_map(|g| &g.points).map(|p| point_secs(plan, np, p, reps, link)).sum();
    let warmups: f64 = groups
        .iter()
        .flat_map(|g| &g.warmup)
        .map(|c| {
            let cells = vec![Cell { window: 1, in_place: Some(false) }];
            let p = Point {
                size: c.size,
                datatype: c.datatype,
                count: c.count,
                iterations: 0,
                warmup: c.warmup,
                rule: None,
                cells,
                calls: c.calls,
            };
            point_secs(plan, np, &p, 1, link)
        })
        .sum();
    points + warmups
}

/// Seconds in words: `850 us`, `12.3 ms`, `4.2 s`, `3 min 20 s`, `2 h 5 min`.
pub(crate) fn human_secs(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} us", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{} min {} s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!("{} h {} min", (s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64)
    }
}

/// [`human_secs`] read back (the suite adds its benchmarks' totals).
pub(crate) fn parse_human_secs(text: &str) -> Option<f64> {
    let w: Vec<&str> = text.split_whitespace().collect();
    let unit = |n: &str, u: &str| -> Option<f64> {
        let n: f64 = n.parse().ok()?;
        Some(match u {
            "us" => n * 1e-6,
            "ms" => n * 1e-3,
            "s" => n,
            "min" => n * 60.0,
            "h" => n * 3600.0,
            _ => return None,
        })
    };
    match w.as_slice() {
        [n, u] => unit(n, u),
        [n, u, m, v] => Some(unit(n, u)? + unit(m, v)?),
        _ => None,
    }
}

/// The dry run's lines: a header naming the run, one line per size point
/// (datatype, size, cells, iterations and warm-up, modelled seconds), then
/// the memory of one rank and the modelled total. `program` names the
/// run (the OSU benchmark, or the nccl-tests program over it); `buffers`
/// is the benchmark's message-buffer bytes on one rank
/// (`Bench::message_bytes`). In nccl-tests' layout the sizes and types are
/// the ones its table would show (the whole buffer, `float`), not the
/// OSU kernel's (one rank's block, `MPI_FLOAT`).
pub fn lines(plan: &Plan, program: &str, np: usize, buffers: u128, link: LinkModel) -> Vec<String> {
    let spec = plan.spec;
    let mut out =
        vec![format!("# {program} dry run on {np} rank{}: nothing is started or sent", if np == 1 { "" } else { "s" })];
    let nccl_tests = (plan.opts.format == crate::options::Format::NcclTests)
        .then(|| plan.collective.and_then(crate::report::nccl_tests::Collective::of_call))
        .flatten();
    if let Some(note) = &plan.note {
        out.push(format!("# {note}"));
    }
    let mut rows = vec![["# datatype", "size", "cells", "iterations", "warm-up", "model time"].map(String::from)];
    for g in plan.groups() {
        for p in &g.points {
            let secs = point_secs(plan, np, p, 1, link);
            let cells = p
                .cells
                .iter()
                .map(|c| {
                    let w = if spec.windowed { format!("W{}", c.window) } else { String::new() };
                    let ip = match c.in_place {
                        Some(true) => "in-place",
                        Some(false) => "out-of-place",
                        None => "",
                    };
                    let both = [w.as_str(), ip].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>();
                    if both.is_empty() {
                        "1".to_string()
                    } else {
                        both.join(" ")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            let ceiling = if p.rule.is_some() { " at most" } else { "" };
            let (type_name, size) = match nccl_tests {
                Some(coll) => (
                    g.datatype.nccl_name(),
                    coll.row_columns(p.size, g.datatype.size(), np, plan.opts.traffic.as_ref()).0,
                ),
                None => (g.datatype.mpi_name(), p.size),
            };
            rows.push([
                if spec.typed() { type_name.to_string() } else { "-".into() },
                if spec.typed() { size.to_string() } else { "-".into() },
                cells,
                format!("{}{ceiling}", p.iterations),
                p.warmup.to_string(),
                human_secs(secs),
            ]);
        }
    }
    out.extend(crate::text::aligned_columns(&rows));
    let est = crate::bench::engine::memory::estimate(plan, np, None, buffers);
    out.push(format!(
        "# memory of one rank: {} beyond the process ({}; MPI's first traffic {})",
        human_bytes(est.more()),
        est.parts(),
        human_bytes(crate::bench::engine::memory::MPI_FIRST_TRAFFIC)
    ));
    if est.gpu_buffers > 0 {
        // nccl-tests' sweep is lowered on GPUs too small for its rule.
        let lowered = plan.sweep.map(|sweep| {
            let need = crate::report::nccl_tests::gpu_bytes_needed(sweep.max, plan.opts.validation.is_some());
            format!(
                "; on GPUs of less than {} the largest size is lowered, as nccl-tests does",
                human_bytes(u128::from(need))
            )
        });
        out.push(format!(
            "# GPU memory of one rank: {} of message buffers (NCCL's own buffers not counted){}",
            human_bytes(est.gpu_buffers),
            lowered.unwrap_or_default()
        ));
    }
    // -N 0: the sweep above repeats until the job is stopped.
    let per_pass = if plan.sweep.is_some_and(|s| s.forever()) { " per pass (-N 0: passes until stopped)" } else { "" };
    out.push(format!(
        "# estimated duration: {}{per_pass} of timed and warm-up iterations, modelled at {} us per message step and \
         {} GB/s per rank's link (a model, not a measurement; set-up between sizes not counted)",
        human_secs(duration_secs(plan, np, link)),
        link.latency_us,
        link.gbs
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::engine::plan::Plan;
    use crate::cli::test_options as opts;

    #[test]
    fn ranks_come_from_the_option_then_the_launcher() {
        assert_eq!((ranks(Some(512), Some(4)), ranks(None, Some(4)), ranks(None, None)), (512, 4, 2));
    }

    #[test]
    fn collective_costs_follow_the_ring() {
        assert_eq!(collective_cost(Op::Allreduce, 8.0, 4), (6.0, 12.0));
        assert_eq!(collective_cost(Op::Alltoall, 8.0, 4), (3.0, 24.0));
        assert_eq!(collective_cost(Op::Bcast, 8.0, 5), (3.0, 8.0));
        assert_eq!(collective_cost(Op::Barrier, 0.0, 2), (1.0, 0.0));
    }

    /// osu_latency at 8 bytes, one size: 10000 + 100 round trips of 2 us
    /// and 16 bytes at 10 GB/s.
    #[test]
    fn latency_duration_is_its_round_trips() {
        let spec = &crate::bench::pt2pt::latency::SPEC;
        let o = opts(spec, &["-m", "8:8"]);
        let plan = Plan::for_test(spec, &o, 2);
        let want = 10100.0 * (2e-6 + 16.0 / 1e10);
        assert!((duration_secs(&plan, 2, ASSUMED) - want).abs() < 1e-9, "{}", duration_secs(&plan, 2, ASSUMED));
    }

    /// A 512-rank alltoall's table: every size, its counts, and a total
    /// that grows with the ranks.
    #[test]
    fn a_large_alltoall_is_planned_without_ranks() {
        let spec = &crate::bench::collective::alltoall::SPEC;
        let o = opts(spec, &["-m", "1:1024"]);
        let plan = Plan::for_test(spec, &o, 512);
        let text = lines(&plan, plan.spec.name, 512, 2048, ASSUMED);
        assert_eq!(text[0], "# osu_alltoall dry run on 512 ranks: nothing is started or sent");
        assert_eq!(
            text[1].split_whitespace().collect::<Vec<_>>(),
            ["#", "datatype", "size", "cells", "iterations", "warm-up", "model", "time"]
        );
        assert_eq!(text.len(), 2 + 11 + 2, "{text:#?}");
        assert!(
            text[2].starts_with("MPI_CHAR") && text[2].contains(" 1000 ") && text[2].contains(" 100 "),
            "{}",
            text[2]
        );
        assert!(text.last().unwrap().starts_with("# estimated duration: "), "{text:#?}");
        let small = duration_secs(&Plan::for_test(spec, &o, 2), 2, ASSUMED);
        assert!(duration_secs(&plan, 512, ASSUMED) > 100.0 * small);
    }

    #[test]
    fn nccl_tests_cells_and_windows_are_named() {
        let spec = &crate::bench::pt2pt::mbw_mr::SPEC;
        let o = opts(spec, &["-m", "4:4", "-V"]);
        let plan = Plan::for_test(spec, &o, 2);
        let text = lines(&plan, plan.spec.name, 2, 0, ASSUMED);
        assert!(text[2].contains("W1, W2, W4, W8, W16, W32, W64, W128"), "{}", text[2]);
    }

    #[test]
    fn seconds_read_as_words() {
        assert_eq!(human_secs(0.00085), "850 us");
        assert_eq!(human_secs(0.0123), "12.3 ms");
        assert_eq!(human_secs(4.24), "4.2 s");
        assert_eq!(human_secs(200.0), "3 min 20 s");
        assert_eq!(human_secs(7500.0), "2 h 5 min");
        for s in [0.00085, 0.0123, 4.2, 200.0, 7500.0] {
            let back = parse_human_secs(&human_secs(s)).unwrap();
            assert!((back - s).abs() <= 0.05 * s, "{s} -> {back}");
        }
    }
}
