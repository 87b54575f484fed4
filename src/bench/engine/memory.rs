//! What a run will hold in memory on each rank, estimated before anything
//! is allocated, so that a run that cannot fit is refused in one line
//! instead of ending under the kernel's OOM killer: the memory the process
//! already holds (the program and the MPI library after MPI_Init), the
//! message buffers, the request state of windowed benchmarks (our
//! MPI_Request array and the MPI library's own per-request memory), the
//! MPI library's temporary buffers inside collectives, and the sample
//! array sized by the iteration count.
//!
//! The MPI library's shares are measured, not documented: Open MPI 4.1
//! (ob1 over the shared-memory and TCP transports) on x86-64, with peaks
//! read from VmHWM (`scripts/check-memory.sh`). Other libraries are close
//! enough for a refusal, which only has to be right about runs far beyond
//! the node.

use crate::bench::engine::plan::Plan;
use crate::options::{Backend, BufferMode, RootRank};
use crate::spec::{CollectiveCall, Op};

/// Bytes one outstanding non-blocking request costs: our MPI_Request
/// handle (8 bytes) plus the MPI library's request object and its
/// matching state, measured with `osu_bw -W 64K` and `-W 16K` at 1 B, 4 KiB,
/// 8 KiB and 64 KiB (about 950 bytes on the sender, 820 on the receiver,
/// whatever the message size).
pub(crate) const REQUEST_BYTES: u128 = 8 + 1000;

/// Memory MPI maps lazily on the first messages between ranks (shared
/// memory segments, fragment pools), beyond what MPI_Init has touched.
pub(crate) const MPI_FIRST_TRAFFIC: u128 = 1 << 20;

/// One rank's estimate, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// What the process holds now (VmRSS), after MPI_Init.
    pub held: u128,
    pub buffers: u128,
    pub requests: u128,
    pub mpi_temporaries: u128,
    /// Message buffers in GPU memory (NCCL's): not host memory, so not
    /// in [`Estimate::more`]; `buffers` is then 0.
    pub gpu_buffers: u128,
    /// The host memory fills and checks of GPU buffers pass through: the
    /// largest buffer, staged one at a time.
    pub staging: u128,
    /// The per-iteration times, and the copies a row's spread works on
    /// while it is computed (see [`SAMPLE_COPIES`]).
    pub samples: u128,
}

impl Estimate {
    /// What the run will add to what it holds now.
    pub fn more(&self) -> u128 {
        MPI_FIRST_TRAFFIC + self.buffers + self.staging + self.requests + self.mpi_temporaries + self.samples
    }

    /// The expected peak resident size (to compare with VmHWM).
    pub fn peak(&self) -> u128 {
        self.held + self.more()
    }

    /// The parts in words, for the refusal line.
    pub fn parts(&self) -> String {
        let h = crate::bytes::human_bytes;
        if self.gpu_buffers > 0 {
            return format!(
                "staging of the GPU buffers {}, requests {}, samples {}",
                h(self.staging),
                h(self.requests),
                h(self.samples)
            );
        }
        format!(
            "buffers {}, requests {}, MPI temporaries {}, samples {}",
            h(self.buffers),
            h(self.requests),
            h(self.mpi_temporaries),
            h(self.samples)
        )
    }
}

/// Rounds a heap or mapped buffer up to what it occupies in pages.
fn pages(bytes: u128) -> u128 {
    bytes.div_ceil(4096).max(1) * 4096
}

/// The estimate for rank `rank` of the run `plan` on `np` ranks (None: the
/// rank that holds the most, for the dry run, which speaks for every
/// rank); `buffers` is the benchmark's own message-buffer memory
/// ([`crate::bench::Bench::message_bytes`]).
pub fn estimate(plan: &Plan, np: usize, rank: Option<usize>, buffers: u128) -> Estimate {
    let (spec, opts) = (plan.spec, plan.opts);
    let max = plan.max_size as u128;
    let w = plan.max_window() as u128;
    let requests = if spec.windowed {
        // bibw posts a window each way; bw and mbw_mr one.
        let per_side = if duplex(plan) { 2 } else { 1 };
        per_side * w * REQUEST_BYTES
    } else {
        0
    };
    let max_iters = opts.iterations.unwrap_or(spec.defaults.small_iterations.max(spec.defaults.large_iterations));
    let samples = SAMPLE_COPIES * 8 * max_iters as u128;
    if opts.backend == Backend::Nccl {
        // Every buffer is on the GPU and NCCL's collectives hold no MPI
        // temporaries (NCCL's own buffers are NCCL's, on the GPU).
        let staging = largest_buffer(plan, np).min(buffers);
        return Estimate { held: held_now(), gpu_buffers: buffers, staging, requests, samples, ..Estimate::default() };
    }
    Estimate {
        held: held_now(),
        buffers,
        requests,
        mpi_temporaries: plan.collective.map_or(0, |c| mpi_temporaries(c, max, np, rank, opts.root)),
        gpu_buffers: 0,
        staging: 0,
        samples,
    }
}

/// The largest single message buffer of one rank: a collective's whole
/// gathered (or scattered) vector, `np` blocks of the largest size, where
/// its buffer holds one per rank; the largest size otherwise.
fn largest_buffer(plan: &Plan, np: usize) -> u128 {
    let max = plan.max_size as u128;
    match plan.collective {
        Some(c) if c.op.block_per_rank() => max * np as u128,
        _ => max,
    }
}

/// f64s held per timed iteration at a row's peak: the samples, and the
/// scaled, sorted and deviation copies the spread statistics
/// (`stats::spread`) work on (measured: osu_latency -i 1M peaks 29 MB
/// above the 25 MB the samples alone were thought to need).
pub(crate) const SAMPLE_COPIES: u128 = 4;

/// The MPI library's own buffers inside one collective call with
/// `max`-byte messages on `np` ranks, on rank `rank` (None: the rank that
/// holds the most) when the root is `root`.
///
/// The blocking collectives (Open MPI's tuned component, whose algorithm
/// changes with the message size and the process count) are the most any
/// rank holds, on every rank. The non-blocking reductions (libnbc, one
/// algorithm for large messages) are per rank.
fn mpi_temporaries(call: CollectiveCall, max: u128, np: usize, rank: Option<usize>, root: RootRank) -> u128 {
    let heaviest = rank.is_none();
    match (call.op, call.nonblocking) {
        // Measured at 32 MiB on 2 and 4 ranks: allreduce holds half the
        // vector more, reduce_scatter one and a half; reduce's root one
        // once it has more than one child (np > 2), none on 2 ranks;
        // allgather and alltoall none (measured at 32 and 128 MiB).
        (Op::Allreduce, false) => max / 2,
        (Op::ReduceScatter, false) => 3 * max / 2,
        (Op::Reduce, false) if np > 2 => max,
        // Measured at 256 MiB on 2 ranks and 64 MiB on 4: Open MPI reduces
        // the whole vector to rank 0 and scatters it from there, which
        // holds one vector more there, two beyond 2 ranks. The other
        // vector collectives hold none (gatherv, scatterv, allgatherv,
        // alltoallv and alltoallw measured at 32 and 128 MiB).
        (Op::ReduceScatterBlock, false) if np > 2 => 2 * max,
        (Op::ReduceScatterBlock, false) => max,
        // libnbc reduces the whole vector to rank 0 over a binomial tree
        // and scatters it from there: a rank receives a vector in each
        // round until it sends its own, and its first two receives take
        // a vector each (later ones reuse them). Measured at 32 and 64
        // MiB on 2 to 8 ranks: 2 vectors on rank 0 beyond 2 ranks, 1 on
        // the ranks with one child (rank 2 of 4), none on the leaves.
        (Op::ReduceScatter | Op::ReduceScatterBlock, true) => binomial_receives(rank.unwrap_or(0), np).min(2) * max,
        // Measured at 32 and 64 MiB on 3 to 8 ranks: half a vector on the
        // root, one and a half on every other rank (none on 2 ranks). With
        // `-k rotate` every rank is the root in some iterations only.
        (Op::Reduce, true) if np > 2 => {
            let is_root = matches!((rank, root), (Some(r), RootRank::Fixed(f)) if r == f);
            if is_root {
                max / 2
            } else {
                3 * max / 2
            }
        }
        // A binomial tree below 4 ranks (rank 0 takes its second child's
        // vector into a buffer of its own: a vector there on 3 ranks,
        // none on 2), a ring from 4 (half a vector on every rank):
        // measured at 32 and 64 MiB on 2 to 8 ranks.
        (Op::Allreduce, true) if np == 3 && (heaviest || rank == Some(0)) => max,
        (Op::Allreduce, true) if np > 3 => max / 2,
        _ => 0,
    }
}

/// How many vectors rank `rank` receives in a binomial reduction to rank
/// 0 over `np` ranks: in round r (a step of 2^(r-1)) a rank that is a
/// multiple of 2^r receives from `rank + 2^(r-1)` where that rank exists;
/// any other rank sends to `rank - 2^(r-1)` and is done.
fn binomial_receives(rank: usize, np: usize) -> u128 {
    let (mut received, mut step) = (0, 1usize);
    while step < np && rank % (2 * step) == 0 {
        if rank + step < np {
            received += 1;
        }
        step *= 2;
    }
    received
}

/// Whether the benchmark keeps a window in flight each way (osu_bibw).
fn duplex(plan: &Plan) -> bool {
    plan.spec.duplex
}

/// Message buffers of a point-to-point benchmark on one rank: a window of
/// buffers with `-b multiple`, one otherwise; bibw and the latency family
/// hold a send and a receive side, bw and mbw_mr one side per rank.
pub(crate) fn pt2pt_buffers(plan: &Plan) -> u128 {
    let spec = plan.spec;
    let max = plan.max_size as u128;
    let multiple = spec.windowed && plan.opts.buffers == BufferMode::Multiple;
    let one = if multiple { plan.max_window() as u128 * pages(max) } else { pages(max) };
    let sides = if spec.windowed && !duplex(plan) { 1 } else { 2 };
    sides * one
}

/// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`).
pub(crate) fn proc_status(field: &str) -> Option<u128> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn held_now() -> u128 {
    proc_status("VmRSS").unwrap_or(0)
}

/// Set to anything, every rank says its estimate and its VmHWM at the
/// end of the run (for `scripts/check-memory.sh`; not a user option).
pub(crate) const REPORT_ENV: &str = "COMMBENCH_MEMORY_REPORT";

/// The line [`REPORT_ENV`] asks for.
pub(crate) fn report_line(name: &str, rank: usize, est: &Estimate) -> String {
    format!(
        "{name}: memory rank {rank} estimate {} vmhwm {} held {} buffers {} requests {} temporaries {} samples {} \
         staging {} gpu {}",
        est.peak(),
        proc_status("VmHWM").unwrap_or(0),
        est.held,
        est.buffers,
        est.requests,
        est.mpi_temporaries,
        est.samples,
        est.staging,
        est.gpu_buffers
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::pt2pt::bibw::SPEC as BIBW;
    use crate::bench::pt2pt::bw::SPEC as BW;
    use crate::bench::pt2pt::latency::SPEC as LATENCY;
    use crate::cli::test_options as opts;
    use crate::spec::BenchSpec;

    /// The plan of `spec` with `args` on two ranks (options kept for the
    /// test's length).
    fn plan(spec: &'static BenchSpec, args: &[&str]) -> Plan<'static> {
        Plan::for_test(spec, Box::leak(Box::new(opts(spec, args))), 2)
    }

    #[test]
    fn buffers_per_side_and_mode() {
        assert_eq!(pt2pt_buffers(&plan(&BW, &["-m", "1M"])), 1 << 20);
        assert_eq!(pt2pt_buffers(&plan(&BW, &["-m", "1M", "-b", "multiple"])), 64 << 20);
        assert_eq!(pt2pt_buffers(&plan(&BIBW, &["-m", "1M", "-b", "multiple"])), 128 << 20);
        assert_eq!(pt2pt_buffers(&plan(&LATENCY, &["-m", "1M", "-b", "multiple"])), 2 << 20);
        // Small messages in their own buffers still take a page each.
        assert_eq!(pt2pt_buffers(&plan(&BW, &["-m", "8", "-b", "multiple", "-W", "1000"])), 1000 * 4096);
    }

    #[test]
    fn requests_and_samples_count() {
        let e = estimate(&plan(&BW, &["-m", "1", "-W", "1M", "-i", "1000000"]), 2, Some(0), 0);
        assert_eq!(e.requests, (1 << 20) * REQUEST_BYTES);
        assert_eq!(e.samples, SAMPLE_COPIES * 8_000_000);
        // The largest count the options allow cannot overflow the sum.
        let p = plan(&BW, &["-m", "2147483647", "-W", "2147483647", "-i", "2147483647", "-b", "multiple"]);
        let e = estimate(&p, 2, None, pt2pt_buffers(&p));
        assert!(e.peak() > 1 << 60);
    }

    /// The non-blocking reductions hold what libnbc's schedules need
    /// (measured with scripts/check-memory.sh at 64 MiB on 2 to 4 ranks;
    /// the estimate had been 0.62 to 0.69 of the peak without them), on
    /// the ranks that hold it (the heaviest rank's on every rank had been
    /// 1.63 times the peak of the leaves of ireduce_scatter).
    #[test]
    fn nonblocking_reductions_count_mpi_temporaries_per_rank() {
        let m = 64u128 << 20;
        // Through the registry: each benchmark's operation, as its kernel
        // declares it; rank None is the heaviest.
        let on = |name: &str, np: usize, rank: Option<usize>, root: RootRank| {
            let call = crate::bench::registry::lookup(name).and_then(|e| e.collective).expect(name);
            mpi_temporaries(call, m, np, rank, root)
        };
        let of = |name: &str, np: usize| on(name, np, None, RootRank::Fixed(0));
        let ranks = |name: &str, np: usize, root: RootRank| -> Vec<u128> {
            (0..np).map(|r| on(name, np, Some(r), root) * 2 / m).collect()
        };
        for name in ["osu_ireduce_scatter", "osu_ireduce_scatter_block"] {
            assert_eq!((of(name, 2), of(name, 4)), (m, 2 * m), "{name}");
            // Half vectors: 2 on rank 0 beyond 2 ranks, 1 on a rank with
            // one child, none on the leaves.
            assert_eq!(ranks(name, 2, RootRank::Fixed(0)), [2, 0], "{name}");
            assert_eq!(ranks(name, 3, RootRank::Fixed(0)), [4, 0, 0], "{name}");
            assert_eq!(ranks(name, 4, RootRank::Fixed(0)), [4, 0, 2, 0], "{name}");
            assert_eq!(ranks(name, 8, RootRank::Fixed(0)), [4, 0, 2, 0, 4, 0, 2, 0], "{name}");
        }
        assert_eq!((of("osu_ireduce", 2), of("osu_ireduce", 3)), (0, 3 * m / 2));
        assert_eq!(ranks("osu_ireduce", 3, RootRank::Fixed(0)), [1, 3, 3]);
        assert_eq!(ranks("osu_ireduce", 4, RootRank::Fixed(2)), [3, 3, 1, 3]);
        assert_eq!(ranks("osu_ireduce", 4, RootRank::Rotate), [3, 3, 3, 3]);
        assert_eq!(ranks("osu_ireduce", 2, RootRank::Fixed(0)), [0, 0]);
        assert_eq!((of("osu_iallreduce", 2), of("osu_iallreduce", 3), of("osu_iallreduce", 4)), (0, m, m / 2));
        assert_eq!(ranks("osu_iallreduce", 3, RootRank::Fixed(0)), [2, 0, 0]);
        assert_eq!(ranks("osu_iallreduce", 5, RootRank::Fixed(0)), [1, 1, 1, 1, 1]);
        assert_eq!(of("osu_ibcast", 4), 0);
        assert_eq!((of("osu_allreduce", 2), of("osu_reduce_scatter", 2)), (m / 2, 3 * m / 2));
        assert_eq!((of("osu_reduce", 2), of("osu_reduce", 3), of("osu_gather", 4)), (0, m, 0));
        // The blocking ones: the heaviest rank's on every rank.
        assert_eq!(ranks("osu_reduce_scatter_block", 4, RootRank::Fixed(0)), [4, 4, 4, 4]);
    }

    #[test]
    fn reads_its_own_status() {
        assert!(proc_status("VmRSS").is_some_and(|b| b > 0));
        assert!(proc_status("VmHWM").is_some_and(|b| b > 0));
        assert_eq!(proc_status("NoSuchField"), None);
    }
}
