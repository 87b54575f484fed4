//! The run record's `plan`: what the plan ran, as the record keeps it
//! (spans of sizes that run alike), built where the record is assembled.

use crate::bench::engine::memory::Estimate;
use crate::bench::engine::plan::Plan;
use crate::report::record::{MemoryRecord, PlanCell, PlanRecord, PlanSpan};

/// `plan` as the run record keeps it, on `np` ranks, with one rank's
/// memory estimate when there is one.
pub fn of(plan: &Plan, np: usize, memory: Option<&Estimate>) -> PlanRecord {
    let words = |s: String| {
        s.chars().fold(String::new(), |mut out, c| {
            if c.is_ascii_uppercase() && !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            out
        })
    };
    let mut spans: Vec<PlanSpan> = Vec::new();
    for p in plan.groups().into_iter().flat_map(|g| g.points) {
        let span = PlanSpan {
            datatype: plan.spec.typed().then(|| p.datatype.mpi_name().to_string()),
            sizes: vec![p.size],
            iterations: p.iterations,
            warmup: p.warmup,
            min_iterations: p.rule.map(|r| r.floor),
            cells: p
                .cells
                .iter()
                .map(|c| PlanCell { window: plan.spec.windowed.then_some(c.window), in_place: c.in_place })
                .collect(),
        };
        match spans.last_mut() {
            Some(last) if PlanSpan { sizes: last.sizes.clone(), ..span.clone() } == *last => last.sizes.push(p.size),
            _ => spans.push(span),
        }
    }
    let b = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    PlanRecord {
        np,
        pairs: plan.pairs,
        max_size: plan.max_size,
        note: plan.note.clone(),
        needs: plan.needs.map(|c| words(format!("{c:?}"))),
        collective: plan.collective.map(|c| {
            let op = words(format!("{:?}", c.op));
            if c.nonblocking {
                format!("i{op}")
            } else {
                op
            }
        }),
        spans,
        memory: memory.map(|e| MemoryRecord {
            held_at_start: b(e.held),
            buffers: b(e.buffers),
            requests: b(e.requests),
            mpi_temporaries: b(e.mpi_temporaries),
            samples: b(e.samples),
            host_staging: b(e.staging),
            gpu_buffers: b(e.gpu_buffers),
            expected_peak: b(e.peak()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_options as opts;

    /// The record keeps a plan in spans of sizes alike: osu_latency's
    /// small and large counts, one cell each.
    #[test]
    fn the_record_keeps_the_plan_in_spans() {
        let spec = &crate::bench::pt2pt::latency::SPEC;
        let o = opts(spec, &[]);
        let r = of(&Plan::for_test(spec, &o, 2), 2, None);
        assert_eq!(r.spans.len(), 2, "{r:?}");
        assert_eq!((r.spans[0].sizes.len(), r.spans[0].iterations, r.spans[0].warmup), (14, 10000, 100));
        assert_eq!((r.spans[1].sizes.len(), r.spans[1].iterations, r.spans[1].warmup), (9, 1000, 10));
        assert_eq!(*r.spans[1].sizes.last().unwrap(), 1 << 22);
        assert_eq!((r.needs.as_deref(), r.collective.as_deref(), r.memory), (Some("point_to_point"), None, None));
        let spec = &crate::bench::nonblocking::ireduce_scatter_block::SPEC;
        let o = opts(spec, &["-m", "4:8"]);
        assert_eq!(of(&Plan::for_test(spec, &o, 2), 2, None).collective.as_deref(), Some("ireduce_scatter_block"));
    }
}
