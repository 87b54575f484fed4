//! What one run will do, resolved once from the benchmark's spec, the
//! options as parsed (never changed afterwards) and the job's size: the
//! pairs that communicate, the message sizes (OSU's default memory limit
//! may lower the largest), the windows, and each size's counts; or why the
//! run cannot go ahead on a job of this size. The runner, the kernels'
//! set-up, the memory estimate and the measurement loop all read it.

use crate::backend::Capability;
use crate::bench::registry::Entry;
use crate::bench::{counts, message_sizes, Calls, SizeCase};
use crate::datatype::{Datatype, Reduction};
use crate::options::{Backend, Options, RootRank};
use crate::report::osu::{TableLayout, VARIED_WINDOWS};
use crate::report::RunLayout;
use crate::spec::{BenchSpec, CollectiveCall, JobShapeError, MetricKind, ProcRule, DEFAULT_MEM_LIMIT};
use crate::stats::precision::{suggested_floor, StoppingRule};

/// One run of one benchmark on a job of a given size.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    pub spec: &'static BenchSpec,
    pub opts: &'a Options,
    /// Ranks that send (and as many that receive).
    pub pairs: usize,
    /// The largest message that runs: `-m`'s, or lowered to keep the
    /// buffers within OSU's default memory limit (as OSU does).
    pub max_size: usize,
    /// Why `max_size` is below `-m`'s (rank 0 says it before the table).
    pub note: Option<String>,
    /// What the benchmark needs of a transport (None: osu_init, osu_hello).
    pub needs: Option<Capability>,
    /// The collective operation it times, if it is a collective.
    pub collective: Option<CollectiveCall>,
    /// The job's ranks.
    pub ranks: usize,
    /// nccl-tests' sweep as it runs: the options', its largest size
    /// lowered where the GPUs' memory cannot hold it
    /// ([`Plan::within_gpu_memory`]).
    pub sweep: Option<crate::options::Sweep>,
    /// The types that run, in order: the options', less those the job's
    /// GPUs cannot reduce where nccl-tests leaves them out of `-d all`
    /// ([`Plan::reducible_on`]).
    pub datatypes: Vec<Datatype>,
}

impl<'a> Plan<'a> {
    /// The run of `spec` with `opts` on `np` ranks, or why it cannot run:
    /// the process count, the number of pairs (`-p`), the root rank (`-k`),
    /// `--min-busbw` on one rank, and the memory limit (`-M`; without it,
    /// OSU's default lowers the largest size, and an explicit one too
    /// small is an error).
    pub(crate) fn resolve(entry: Entry, opts: &'a Options, np: usize) -> Result<Plan<'a>, JobShapeError> {
        let Entry { spec, needs, collective } = entry;
        // NCCL's collectives run on one GPU too (nccl-tests' single-GPU
        // sweep; NCCL refuses two ranks on one GPU).
        let one_gpu = np == 1 && opts.backend == Backend::Nccl && !spec.is_point_to_point();
        let pairs = if one_gpu { 0 } else { spec.pairs_for(np, opts.pairs)? };
        // nccl-tests' own floor (NCCL_TESTS_MIN_BW, with its sweep) fails
        // such a run as nccl-tests does, after it; OSU's --min-busbw is
        // refused before.
        if let (true, Some(_), None) = (one_gpu, opts.min_busbw, opts.sweep) {
            let coll = collective.and_then(crate::report::nccl_tests::Collective::of_call);
            if let Some(c) = coll.filter(|c| c.bus_factor(1) == 0.0) {
                let factor = if c == crate::report::nccl_tests::Collective::AllReduce { "2(n-1)/n" } else { "(n-1)/n" };
                return Err(JobShapeError::MinBusbwOneRank { name: spec.name, factor });
            }
        }
        let unequal = opts.workers.is_some_and(|w| w.sender != Some(w.receiver));
        if spec.workers == Some(crate::spec::Workers::Threads) && opts.validation.is_some() && unequal {
            // OSU checks each message in the thread that received it.
            return Err(JobShapeError::ValidationThreads);
        }
        if let RootRank::Fixed(root) = opts.root {
            if root >= np {
                return Err(JobShapeError::Root { root, np });
            }
        }
        if spec.takes('N') {
            crate::bench::neighborhood::fits(&opts.neighborhood, np)?;
        }
        let mut plan = Plan {
            spec,
            opts,
            pairs,
            max_size: opts.max_size,
            note: None,
            needs,
            collective,
            ranks: np,
            sweep: opts.sweep,
            datatypes: opts.datatypes.clone(),
        };
        if let (Some(traffic), Some(sweep)) = (&opts.traffic, opts.sweep) {
            // nccl-tests' alltoallv: a matrix needs as many rows as ranks,
            // and -e must hold its busiest rank's side.
            if let Some(line) = traffic.misfit(np, sweep.max) {
                return Err(JobShapeError::Traffic(line));
            }
        }
        if let Some(sweep) = opts.sweep {
            // nccl-tests' sweep, whole (OSU's default memory limit is
            // OSU's, not its).
            return Ok(plan.with_sweep(sweep));
        }
        if !spec.is_point_to_point() && spec.typed() {
            let per = if spec.buffer_times_np { np } else { 1 };
            let need = opts.max_size.saturating_mul(per);
            let with = if per > 1 { format!(" with {np} processes") } else { String::new() };
            match opts.mem_limit {
                Some(limit) if need > limit => {
                    return Err(JobShapeError::MemoryLimit { limit, need, with });
                }
                None if DEFAULT_MEM_LIMIT / per < opts.min_size => {
                    let (limit, min) = (DEFAULT_MEM_LIMIT, opts.min_size);
                    return Err(JobShapeError::DefaultMemoryLimit { limit, min, need: min.saturating_mul(per), with });
                }
                None if need > DEFAULT_MEM_LIMIT => {
                    plan.max_size = DEFAULT_MEM_LIMIT / per;
                    plan.note = Some(format!(
                        "{}: largest message limited to {} bytes to keep buffers within the default memory limit \
                         of {DEFAULT_MEM_LIMIT} bytes (raise it with -M)",
                        spec.name, plan.max_size
                    ));
                }
                _ => {}
            }
        }
        Ok(plan)
    }

    /// The plan running nccl-tests' `sweep`: the kernel's buffers hold its
    /// last size, or the warm-up's last where that is larger (doubling
    /// can pass the sweep's own last size: `-b 8 -e 64K -f 8` measures up
    /// to 32K and warms up at 64K), in one-byte elements, the most any
    /// type's rounding leaves.
    fn with_sweep(self, sweep: crate::options::Sweep) -> Plan<'a> {
        let last = sweep.last().max(sweep.warmup_sizes().last());
        let max_size = last.map_or(0, |last| self.kernel_size(last, 1));
        Plan { sweep: Some(sweep), max_size, ..self }
    }

    /// nccl-tests' sweep within GPUs of `gpu_bytes` each (the smallest
    /// of the job's): as nccl-tests does, a largest size its buffers
    /// cannot hold there is lowered to the most they can
    /// ([`crate::report::nccl_tests::gpu_max_bytes`]), and the smallest
    /// with it if it was above. Unchanged without a sweep or where it fits.
    pub(crate) fn within_gpu_memory(self, gpu_bytes: u64) -> Plan<'a> {
        let Some(mut sweep) = self.sweep else { return self };
        let check = self.opts.validation.is_some();
        match crate::report::nccl_tests::gpu_max_bytes(gpu_bytes, check) {
            Some(most) if sweep.max > most => {
                sweep.max = most;
                sweep.min = sweep.min.min(most);
                self.with_sweep(sweep)
            }
            _ => self,
        }
    }

    /// nccl-tests' `-d all` on GPUs whose least compute capability is
    /// `major`: below 9 it leaves out the fp8 types, which NCCL reduces
    /// only from Hopper on (for every test, reducing or not). A run of one
    /// type keeps it (a reducing one is refused where it cannot run).
    pub(crate) fn reducible_on(self, major: u32) -> Plan<'a> {
        if self.datatypes.len() < 2 {
            return self;
        }
        let datatypes = self.datatypes.iter().copied().filter(|&d| crate::backend::nccl::reduces_on(d, major));
        Plan { datatypes: datatypes.collect(), ..self }
    }

    /// Where nccl-tests' sweep was lowered to fit the GPUs' memory: its
    /// largest size now, for the line nccl-tests prints.
    pub(crate) fn lowered_max_bytes(&self) -> Option<u64> {
        match (self.opts.sweep, self.sweep) {
            (Some(asked), Some(runs)) if runs.max < asked.max => Some(runs.max),
            _ => None,
        }
    }

    /// The same plan with `pairs` communicating (osu_bw_fan_in/out count
    /// theirs from the ranks' nodes, which only the job knows).
    pub(crate) fn with_pairs(self, pairs: usize) -> Plan<'a> {
        Plan { pairs, ..self }
    }

    /// A plan for the unit tests: `spec` with `opts` on `np` ranks, which
    /// must be a job it can run on.
    #[cfg(test)]
    pub(crate) fn for_test(spec: &'static BenchSpec, opts: &'a Options, np: usize) -> Plan<'a> {
        Plan::resolve(entry_of(spec), opts, np).unwrap_or_else(|e| panic!("{} on {np} ranks: {e}", spec.name))
    }

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

    pub(crate) fn max_window(&self) -> usize {
        self.windows().into_iter().max().unwrap_or(1)
    }

    /// The message sizes, ascending (one datatype's; the one-sided atomics
    /// narrow them per datatype, `rma::Rules::sizes`).
    /// With nccl-tests' sweep, its sizes in one-byte elements (each
    /// datatype's rounding is [`Plan::groups`]').
    pub fn sizes(&self) -> Vec<usize> {
        if let Some(sweep) = self.sweep {
            return sweep.sizes().map(|b| self.kernel_size(b, 1)).collect();
        }
        message_sizes(self.spec, self.opts.min_size, self.max_size)
    }

    /// The size the kernel takes (OSU's: one rank's block for allgather,
    /// alltoall, gather and scatter, the whole buffer otherwise) for a
    /// size of nccl-tests' sweep, `bytes` as its size column shows it, in
    /// elements of `elt_size` bytes. As nccl-tests does, the bytes become
    /// whole elements, and the per-rank collectives' elements a whole
    /// number per rank (reduce-scatter's buffer that many times the ranks).
    pub(crate) fn kernel_size(&self, bytes: u64, elt_size: usize) -> usize {
        use crate::report::nccl_tests::Collective as C;
        let elt = elt_size.max(1);
        let count = usize::try_from(bytes).unwrap_or(usize::MAX) / elt;
        let ranks = self.ranks.max(1);
        match self.collective.and_then(C::of_call) {
            Some(C::AllGather | C::AllToAll | C::Gather | C::Scatter | C::HyperCube) => count / ranks * elt,
            Some(C::ReduceScatter) => count / ranks * ranks * elt,
            // alltoallv: one rank's even share per peer, in whole 16-byte
            // units (a matrix's sizes are its own: 0).
            Some(C::AllToAllV) => match &self.opts.traffic {
                Some(t) => t.per_peer_count(count, elt, ranks) * elt,
                None => count / ranks * elt,
            },
            _ => count.saturating_mul(elt),
        }
    }

    /// Timed iterations and warm-up of a size.
    pub fn counts(&self, size: usize) -> (usize, usize) {
        counts(self.spec, self.opts, size)
    }

    /// Whether OSU's nodes rule decides the pairs (osu_bw_fan_in/out).
    pub(crate) fn pairs_from_nodes(&self) -> bool {
        self.spec.procs == ProcRule::Nodes
    }

    /// The passes of every size: nccl-tests' table times each size out of
    /// place then in place; OSU's one pass has no such switch.
    pub fn passes(&self) -> &'static [Option<bool>] {
        self.opts.format.passes()
    }

    /// `--precision`'s stopping rule for a size of `iterations` (OSU's
    /// count or `-i`, the ceiling); None for OSU's fixed counts, and for
    /// kernels of two passes (the non-blocking collectives), whose overlap
    /// needs both passes' full count.
    pub(crate) fn stopping_rule(&self, iterations: usize) -> Option<StoppingRule> {
        let target = self.opts.precision.filter(|_| !self.spec.is_overlap())?;
        let ceiling = iterations as u64;
        let floor = self.opts.min_iterations.unwrap_or_else(|| suggested_floor(ceiling));
        Some(StoppingRule::new(target, floor, ceiling, self.opts.max_time_per_size))
    }

    /// How every size's timed calls are issued (nccl-tests' `-m`, `-z`).
    pub fn calls(&self) -> Calls {
        Calls {
            grouped: self.opts.aggregate.max(1),
            blocking: self.opts.blocking,
            host_time: self.opts.cputime,
            events: self.opts.iteration_events.is_some(),
            checks: usize::try_from(self.opts.check_rounds).unwrap_or(0),
            graph_launches: self.opts.graph_launches,
        }
    }

    /// Everything the run measures, in order: per datatype (`-T`), each
    /// message size with its counts, and each size's cells (its windows
    /// and passes). Every output sees the run in this shape.
    pub fn groups(&self) -> Vec<Group> {
        if !self.runs_at_this_size() {
            return Vec::new();
        }
        let sizes = self.sizes();
        let windows = self.windows();
        // OSU's NCCL latency test measures empty messages too, and
        // nccl-tests' sweep every size it reaches, counts of 0 included.
        let keep_empty =
            self.sweep.is_some() || (self.opts.backend == Backend::Nccl && self.spec.metric == MetricKind::Latency);
        let cells: Vec<Cell> = windows
            .iter()
            .flat_map(|&window| self.passes().iter().map(move |&in_place| Cell { window, in_place }))
            .collect();
        self.axes()
            .into_iter()
            .map(|(datatype, reduction, root)| {
                let dt_sizes = match (self.sweep, self.spec.one_sided) {
                    (Some(sweep), _) => sweep.sizes().map(|b| self.kernel_size(b, datatype.size())).collect(),
                    // fop and cas: one element of the datatype, whatever -m says.
                    (None, Some(rules)) => rules.sizes(datatype, &sizes),
                    (None, None) => sizes.clone(),
                };
                let points = dt_sizes
                    .into_iter()
                    .filter_map(|size| {
                        let count = size / datatype.size();
                        if count == 0 && self.spec.typed() && !keep_empty {
                            return None;
                        }
                        let (iterations, warmup) = self.counts(size);
                        // nccl-tests warms up once before the sweep
                        // ([`Group::warmup`]), not before each size.
                        let warmup = if self.sweep.is_some() { 0 } else { warmup };
                        // Each of nccl-tests' `-n` iterations is `-m` calls.
                        let calls = self.calls();
                        let iterations = iterations * calls.grouped;
                        let rule = self.stopping_rule(iterations);
                        Some(Point { datatype, size, count, iterations, warmup, rule, cells: cells.clone(), calls })
                    })
                    .collect();
                Group { datatype, reduction, root, warmup: self.warmup_sweep(datatype), points }
            })
            .collect()
    }

    /// Whether the collective can run on the job's ranks: nccl-tests'
    /// hypercube needs a power of two of them, and runs nothing otherwise
    /// (its table says so: [`crate::report::nccl_tests::skipped_line`]).
    pub(crate) fn runs_at_this_size(&self) -> bool {
        self.collective.is_none_or(|c| c.op != crate::spec::Op::HyperCube || self.ranks.is_power_of_two())
    }

    /// Whether the run has a sweep per operation: nccl-tests' `-o all` on
    /// a test that loops over operations.
    pub(crate) fn sweeps_operations(&self) -> bool {
        let coll = self.collective.and_then(crate::report::nccl_tests::Collective::of_call);
        !self.opts.reductions.is_empty() && coll.is_some_and(|c| c.loops_over_operations())
    }

    /// Whether the run has a sweep per root: nccl-tests' `-r -1` on a
    /// rooted test.
    pub(crate) fn sweeps_roots(&self) -> bool {
        let coll = self.collective.and_then(crate::report::nccl_tests::Collective::of_call);
        self.opts.every_root && coll.is_some_and(|c| c.loops_over_roots())
    }

    /// Each sweep's type, operation and root, in nccl-tests' order (types
    /// outermost, then operations, then roots): one per type, unless
    /// nccl-tests' `-o all` or `-r -1` multiplies them on the tests that
    /// loop over operations or roots (`None`: the options' root rule).
    fn axes(&self) -> Vec<(Datatype, Reduction, Option<usize>)> {
        let ops = if self.sweeps_operations() { self.opts.reductions.clone() } else { vec![self.opts.reduction] };
        let roots: Vec<Option<usize>> =
            if self.sweeps_roots() { (0..self.ranks).map(Some).collect() } else { vec![None] };
        let mut all = Vec::new();
        for &dt in &self.datatypes {
            for &op in &ops {
                all.extend(roots.iter().map(|&root| (dt, op, root)));
            }
        }
        all
    }

    /// nccl-tests' warm-up before a sweep of `datatype`: `-w` calls at
    /// each size from the smallest, doubling up to the largest; none for
    /// OSU's runs, which warm up before each size.
    fn warmup_sweep(&self, datatype: Datatype) -> Vec<SizeCase> {
        let Some(sweep) = self.sweep else {
            return Vec::new();
        };
        sweep
            .warmup_sizes()
            .map(|bytes| {
                let size = self.kernel_size(bytes, datatype.size());
                let (_, warmup) = self.counts(size);
                let count = size / datatype.size();
                SizeCase { datatype, size, count, iterations: 0, warmup, window: 1, calls: Calls::ALONE }
            })
            .filter(|case| case.warmup > 0)
            .collect()
    }
}

impl Plan<'_> {
    /// What the outputs need of this run on `np` ranks, as a value: OSU's
    /// table layout with the one-sided choice made, the options and the
    /// largest size.
    pub fn layout(&self, np: usize) -> RunLayout<'_> {
        let (spec, opts) = (self.spec, self.opts);
        let table = TableLayout {
            validation: opts.validation.is_some(),
            tails: opts.tails.clone().unwrap_or_default(),
            print_rate: opts.print_rate,
            vary_window: opts.vary_window,
            window: opts.window,
            pairs: self.pairs,
            full: opts.full,
            accel: opts.accel,
            backend: opts.backend,
            np,
            one_sided: spec.one_sided.map(|_| crate::bench::rma::choice(spec, opts)),
            workers: spec.workers.zip(opts.workers),
        };
        RunLayout {
            spec,
            opts,
            max_size: self.max_size,
            collective: self.collective,
            table,
            lowered_max_bytes: self.lowered_max_bytes(),
        }
    }
}

/// One datatype's sizes ([`Plan::groups`]).
#[derive(Clone, Debug)]
pub struct Group {
    pub datatype: Datatype,
    /// The operation its reductions apply.
    pub reduction: Reduction,
    /// Its root, where it has one of its own (nccl-tests' `-r -1`); None:
    /// the options' rule.
    pub root: Option<usize>,
    /// Sizes warmed up before the group's first point (nccl-tests' way;
    /// empty for OSU's, whose points warm up themselves).
    pub warmup: Vec<SizeCase>,
    pub points: Vec<Point>,
}

/// One message size of one datatype: its counts, `--precision`'s rule and
/// the cells it runs.
#[derive(Clone, Debug)]
pub struct Point {
    pub datatype: Datatype,
    /// Bytes.
    pub size: usize,
    /// Elements per message.
    pub count: usize,
    pub iterations: usize,
    pub warmup: usize,
    pub rule: Option<StoppingRule>,
    pub cells: Vec<Cell>,
    /// How the timed calls are issued (`Options::aggregate`, `blocking`).
    pub calls: Calls,
}

impl Point {
    /// What the kernel runs for `cell` of this size.
    pub fn case(&self, cell: Cell) -> SizeCase {
        SizeCase {
            datatype: self.datatype,
            size: self.size,
            count: self.count,
            iterations: self.iterations,
            warmup: self.warmup,
            window: cell.window,
            calls: self.calls,
        }
    }
}

/// One timed loop of a size: its window (1 without one) and its pass
/// (`Some(in_place)` for nccl-tests' two, None for OSU's one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub window: usize,
    pub in_place: Option<bool>,
}

/// The registry's entry of `spec` (the unit tests name benchmarks by
/// their specs).
#[cfg(test)]
fn entry_of(spec: &'static BenchSpec) -> Entry {
    *crate::bench::registry::lookup(spec.name).expect("every benchmark is in the registry")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::collective::allgather::SPEC as ALLGATHER;
    use crate::bench::collective::allreduce::SPEC as ALLREDUCE;
    use crate::bench::collective::alltoall::SPEC as ALLTOALL;
    use crate::bench::collective::barrier::SPEC as BARRIER;
    use crate::bench::collective::bcast::SPEC as BCAST;
    use crate::bench::collective::reduce::SPEC as REDUCE;
    use crate::cli::test_options as opts;

    /// The plan's pairs, lowered largest size and note, or the line rank 0
    /// prints.
    fn resolved(spec: &'static BenchSpec, np: usize, o: &Options) -> Result<(usize, usize, Option<String>), String> {
        Plan::resolve(entry_of(spec), o, np).map(|p| (p.pairs, p.max_size, p.note)).map_err(|e| e.to_string())
    }

    /// busbw is 0 by definition on one rank for the collectives whose factor
    /// has n-1 in it: a floor on it can only fail, so it is refused before
    /// anything runs. Broadcast and reduce (factor 1) keep it.
    #[test]
    fn min_busbw_on_one_rank_is_refused_where_busbw_is_zero() {
        let nccl = ["--backend", "nccl", "--min-busbw", "1"];
        assert_eq!(
            resolved(&ALLREDUCE, 1, &opts(&ALLREDUCE, &nccl)),
            Err("Invalid option [--min-busbw] (osu_allreduce on one rank moves nothing between GPUs: its bus \
                 bandwidth is 0 by definition, nccl-tests' factor 2(n-1)/n; run two or more ranks, or leave \
                 --min-busbw out)"
                .into())
        );
        for spec in [&ALLGATHER, &ALLTOALL] {
            let o = opts(spec, &nccl);
            assert!(resolved(spec, 1, &o).unwrap_err().contains("factor (n-1)/n"), "{}", spec.name);
            assert!(resolved(spec, 2, &o).is_ok(), "{}", spec.name);
        }
        for spec in [&BCAST, &REDUCE] {
            assert!(resolved(spec, 1, &opts(spec, &nccl)).is_ok(), "{}", spec.name);
        }
        assert!(resolved(&ALLREDUCE, 1, &opts(&ALLREDUCE, &["--backend", "nccl"])).is_ok());
    }

    #[test]
    fn root_rank_and_memory_limit() {
        let o = opts(&REDUCE, &["-k", "fixed:3"]);
        assert_eq!(resolved(&REDUCE, 4, &o), Ok((2, o.max_size, None)));
        assert_eq!(
            resolved(&REDUCE, 3, &o),
            Err("Invalid root rank [-k fixed:3] (the root must be a rank from 0 to 2 with 3 processes)".into())
        );
        assert_eq!(
            resolved(&ALLTOALL, 2, &opts(&ALLTOALL, &["-M", "1048576"])),
            Err("Memory limit too low [-M 1048576] (the largest message needs 2097152-byte buffers with 2 \
                 processes; raise -M or lower -m)"
                .into())
        );
        assert!(resolved(&ALLREDUCE, 2, &opts(&ALLREDUCE, &["-M", "1048576"])).is_ok());
        // The default limit lowers the largest size, as OSU does; the
        // options stay as given.
        let o = opts(&ALLGATHER, &[]);
        let (_, max, note) = resolved(&ALLGATHER, 1024, &o).unwrap();
        assert_eq!((max, o.max_size), (524288, 1 << 20));
        assert!(note.unwrap().contains("largest message limited to 524288 bytes"));
        assert!(resolved(&BARRIER, 2, &opts(&BARRIER, &["-M", "1"])).is_ok());
        // Lowered below the smallest size, no size would run: an error.
        assert_eq!(
            resolved(&ALLGATHER, 3, &opts(&ALLGATHER, &["-m", "1G:1G"])),
            Err("Memory limit too low [-M 536870912, the default] (the smallest message, 1073741824 bytes, needs \
                 3221225472-byte buffers with 3 processes; raise -M or lower -m)"
                .into())
        );
        // Lowered, and the smallest still fits: the sizes up to the limit run.
        let o = opts(&ALLGATHER, &["-m", "1M:1G"]);
        let plan = Plan::resolve(entry_of(&ALLGATHER), &o, 3).unwrap();
        assert!(plan.note.is_some());
        assert_eq!((plan.sizes()[0], plan.max_size), (1 << 20, DEFAULT_MEM_LIMIT / 3));
        assert_eq!(plan.sizes().last(), Some(&(1 << 27)));
    }

    #[test]
    fn one_rank_runs_only_nccl_collectives() {
        assert!(resolved(&ALLREDUCE, 1, &opts(&ALLREDUCE, &[])).is_err(), "MPI collectives need two ranks, as in OSU");
        assert_eq!(resolved(&ALLREDUCE, 1, &opts(&ALLREDUCE, &["--backend", "nccl"])).map(|r| r.0), Ok(0));
        let latency = &crate::bench::pt2pt::latency::SPEC;
        assert!(resolved(latency, 1, &opts(latency, &["--backend", "nccl"])).is_err());
    }

    /// nccl-tests' sweep: every size it reaches, 64-bit sizes far above
    /// OSU's 2 GiB - 1 and its default memory limit, each as the kernel
    /// takes it (whole elements; the per-rank collectives a whole number
    /// of them per rank), zero-count sizes included.
    #[test]
    fn a_sweep_runs_every_size_as_nccl_tests_rounds_it() {
        use crate::bench::collective::reduce_scatter::SPEC as REDUCE_SCATTER;
        use crate::options::{Sweep, SweepStep};
        let swept = |spec: &'static BenchSpec, np: usize, sweep: Sweep, dt: Datatype| {
            let mut o = opts(spec, &["--backend", "nccl"]);
            o.sweep = Some(sweep);
            o.datatypes = vec![dt];
            let plan = Plan::resolve(entry_of(spec), &o, np).unwrap();
            let sizes: Vec<usize> = plan.groups()[0].points.iter().map(|p| p.size).collect();
            (plan.max_size, plan.note.is_none(), sizes)
        };
        let to_8g = Sweep { min: 8, max: 8 << 30, step: SweepStep::Factor(2), cycles: 1 };
        let (max, no_note, sizes) = swept(&ALLREDUCE, 4, to_8g, Datatype::Float);
        assert_eq!((max, no_note, sizes.len()), (8 << 30, true, 31));
        assert_eq!((sizes[0], sizes[30]), (8, 8 << 30));
        // Per rank: one rank's block, a whole number of elements.
        let (max, _, sizes) = swept(&ALLGATHER, 3, to_8g, Datatype::Float);
        assert_eq!(max, (8usize << 30) / 3);
        assert_eq!(&sizes[..4], &[0, 4, 8, 20]);
        // Reduce-scatter: the whole buffer, the ranks' blocks whole.
        let (_, _, sizes) = swept(&REDUCE_SCATTER, 3, to_8g, Datatype::Float);
        assert_eq!(&sizes[..4], &[0, 12, 24, 60]);
        // A linear step, and bytes that are not whole elements; the
        // buffers hold the warm-up's 28 bytes (7, doubling), above 23.
        let linear = Sweep { min: 7, max: 30, step: SweepStep::Bytes(8), cycles: 1 };
        let (max, _, sizes) = swept(&ALLREDUCE, 2, linear, Datatype::Float);
        assert_eq!((max, sizes), (28, vec![4, 12, 20]));
        let (_, _, sizes) = swept(&ALLREDUCE, 2, linear, Datatype::Char);
        assert_eq!(sizes, vec![7, 15, 23]);
        // -N: the whole sweep again, its largest size the same.
        let (max, _, sizes) = swept(&ALLREDUCE, 2, Sweep { cycles: 2, ..linear }, Datatype::Char);
        assert_eq!((max, sizes), (28, vec![7, 15, 23, 7, 15, 23]));
    }

    /// nccl-tests warms up once before a sweep: `-w` calls at each size
    /// from the smallest, doubling, whatever the sweep's step, up to its
    /// largest; its sizes then run without warm-up of their own. OSU's
    /// runs warm up before each size, as before.
    #[test]
    fn a_sweep_warms_up_once_doubling_before_its_sizes() {
        use crate::options::{Sweep, SweepStep};
        let mut o = opts(&ALLREDUCE, &["--backend", "nccl", "-x", "3"]);
        o.datatypes = vec![Datatype::Float];
        o.sweep = Some(Sweep { min: 1000, max: 9000, step: SweepStep::Bytes(4000), cycles: 2 });
        let plan = Plan::resolve(entry_of(&ALLREDUCE), &o, 2).unwrap();
        let g = &plan.groups()[0];
        let warm: Vec<(usize, usize, usize)> = g.warmup.iter().map(|c| (c.size, c.warmup, c.iterations)).collect();
        assert_eq!(warm, [(1000, 3, 0), (2000, 3, 0), (4000, 3, 0), (8000, 3, 0)]);
        let points: Vec<(usize, usize)> = g.points.iter().map(|p| (p.size, p.warmup)).collect();
        assert_eq!(points, [(1000, 0), (5000, 0), (9000, 0), (1000, 0), (5000, 0), (9000, 0)]);
        // From 0 bytes: 0, then 1 byte (as a float, no element), 2, 4, ...
        o.sweep = Some(Sweep { min: 0, max: 10, step: SweepStep::Bytes(5), cycles: 1 });
        let plan = Plan::resolve(entry_of(&ALLREDUCE), &o, 2).unwrap();
        let warm: Vec<usize> = plan.groups()[0].warmup.iter().map(|c| c.size).collect();
        assert_eq!(warm, [0, 0, 0, 4, 8]);
        // The warm-up can pass the sweep's last size; the buffers hold it.
        o.sweep = Some(Sweep { min: 8, max: 64 << 10, step: SweepStep::Factor(8), cycles: 1 });
        let plan = Plan::resolve(entry_of(&ALLREDUCE), &o, 2).unwrap();
        let g = &plan.groups()[0];
        assert_eq!(
            (g.points.last().map(|p| p.size), g.warmup.last().map(|c| c.size)),
            (Some(32 << 10), Some(64 << 10))
        );
        assert_eq!(plan.max_size, 64 << 10);
        // -w 0: nothing to warm up.
        let mut none = opts(&ALLREDUCE, &["--backend", "nccl", "-x", "0"]);
        none.sweep = o.sweep;
        let plan = Plan::resolve(entry_of(&ALLREDUCE), &none, 2).unwrap();
        assert!(plan.groups()[0].warmup.is_empty());
        // OSU's way: each size its own warm-up.
        let osu = opts(&ALLREDUCE, &["--backend", "nccl", "-m", "4:16", "-x", "3"]);
        let plan = Plan::resolve(entry_of(&ALLREDUCE), &osu, 2).unwrap();
        let g = &plan.groups()[0];
        assert!(g.warmup.is_empty());
        assert!(g.points.iter().all(|p| p.warmup == 3), "{:?}", g.points);
    }

    /// nccl-tests' memory rule lowers the largest size of a sweep a GPU
    /// cannot hold, and the smallest with it when it is above; the options
    /// keep the sweep asked for.
    #[test]
    fn a_gpu_too_small_lowers_the_sweep() {
        use crate::options::{Sweep, SweepStep};
        const GIB: u64 = 1 << 30;
        let mut o = opts(&ALLREDUCE, &["--backend", "nccl", "-c"]);
        o.datatypes = vec![Datatype::Float];
        o.sweep = Some(Sweep { min: 1 << 20, max: 16 * GIB, step: SweepStep::Factor(4), cycles: 1 });
        let plan = |gpu: u64| Plan::resolve(entry_of(&ALLREDUCE), &o, 2).unwrap().within_gpu_memory(gpu);
        // 16 GiB with the check: 14 GiB over three buffers.
        let small = plan(16 * GIB);
        assert_eq!(small.lowered_max_bytes(), Some(5_010_795_178));
        // The buffers hold the last size the sweep reaches below it.
        assert_eq!(small.max_size, 1 << 32);
        let sizes: Vec<usize> = small.groups()[0].points.iter().map(|p| p.size).collect();
        assert_eq!(sizes.last(), Some(&(1usize << 32)), "{sizes:?}");
        assert_eq!(o.sweep.unwrap().max, 16 * GIB);
        // 80 GiB holds 25 GiB per buffer: nothing changes.
        let big = plan(80 * GIB);
        assert_eq!((big.lowered_max_bytes(), big.max_size), (None, 16usize << 30));
        // 2 GiB leaves nothing: one size of 0 bytes.
        let none = plan(2 * GIB);
        assert_eq!(none.sweep.map(|s| (s.min, s.max)), Some((0, 0)));
        assert_eq!(none.groups()[0].points.iter().map(|p| p.size).collect::<Vec<_>>(), vec![0]);
    }
}
