//! Drives one OSU benchmark binary from argv to exit status: options, the
//! job's start-up (the shared lifecycle in [`crate::job`]), the memory
//! check, the kernel over its transport, result files and outputs, the
//! measurement ([`crate::bench::engine::measure`]), the run record's end, and OSU's last
//! line after a validation failure. The nccl-tests binaries (src/nccl_tests/run.rs)
//! read their own command line and join at [`run_options`], with their own exit
//! statuses and last lines ([`Front`]).

mod lanes;
mod plan_record;
pub mod sequence;

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::Arc;

use crate::backend::cuda_memory::{CudaMemory, Place};
use crate::backend::mpi_host::{Mpi, MpiHost};
use crate::backend::nccl::Nccl;
use crate::backend::{self, Control, Memory, Transport};
use crate::bench::engine::efficiency::{self, Curve};
use crate::bench::engine::measure;
use crate::bench::engine::plan::Plan;
use crate::bench::registry::{Entry, Registered};
use crate::bench::{engine::memory, needs, Bench, BenchOn, Kernel, Need, Pt2ptBench, Setup};
use crate::buffer::AllocError;
use crate::cli::{self, help, Parsed};
use crate::job::watchdog::Step;
use crate::job::{self, say, Ending, Job, JobConfig, RecordFile};
use crate::options::Backend;
use crate::options::Options;
use crate::peak::RunPaths;
use crate::report::files::{self, ResultFiles};
use crate::report::nccl_table::{device_text, parse_device};
use crate::report::nccl_tests::Device;
use crate::report::placement::WarnContext;
use crate::report::record::{self, BufferInfo, IterationPolicy, RankInfo, RunRecord};
use crate::report::sinks::Sinks;
use crate::report::RunContext;
use crate::topo;

/// Runs benchmark `B` and exits the process with its status.
pub fn main<B: Bench + Launch<<B as Bench>::Needs>>() -> ! {
    let code = run::<B>();
    let _ = io::stdout().flush();
    job::exit(code)
}

/// Runs benchmark `B` with the process's arguments over the transport its
/// options chose; returns the exit status.
pub fn run<B: Bench + Launch<<B as Bench>::Needs>>() -> i32 {
    run_with(Runs::bench::<B>())
}

/// What runs one benchmark on a started job: its entry, its buffer memory
/// on one rank for `--dry-run` ([`Bench::message_bytes`]), and its
/// measurement. Its binary runs it once ([`run_with`]); `commbench suite
/// --one-launch` runs several on one job (sequence.rs), from [`RUNS`].
#[derive(Clone, Copy)]
pub(crate) struct Runs {
    pub entry: Entry,
    pub message_bytes: fn(&Plan, usize) -> u128,
    pub measure: fn(&Session) -> Ending,
}

impl Runs {
    /// A [`Bench`], over the transport its options chose.
    const fn bench<B: Bench + Launch<<B as Bench>::Needs>>() -> Runs {
        Runs { entry: <B as Registered>::ENTRY, message_bytes: B::message_bytes, measure: B::measure }
    }

    /// A one-sided benchmark: MPI windows in host memory.
    const fn rma<B: crate::bench::rma::RmaBench + Registered>() -> Runs {
        Runs { entry: B::ENTRY, message_bytes: |p, _| crate::bench::rma::message_bytes(p), measure: measure_rma::<B> }
    }

    /// osu_init or osu_hello: the start-up row instead of a measurement.
    const fn startup<B: Registered>() -> Runs {
        Runs { entry: B::ENTRY, message_bytes: |_, _| 0, measure: |s: &Session| s.startup() }
    }
}

/// Makes [`RUNS`] from the benchmarks' one list.
macro_rules! runs {
    ($($kind:ident $($seg:ident)::+),* $(,)?) => {
        /// Every benchmark's [`Runs`], in [`crate::bench::BENCHMARKS`]' order.
        pub(crate) const RUNS: &[Runs] = &[$(Runs::$kind::<crate::bench::$($seg)::+>()),*];
    };
}
crate::bench::every_benchmark!(runs);

/// How a benchmark whose kernel needs `N` is run: over which transport for
/// each `--backend` that has `N`. Each implementation names a transport
/// only where the benchmark's kernel is built over it ([`BenchOn`]), so
/// which backends run a benchmark is what its transports implement;
/// [`BACKENDS_AGREE`] checks at compile time that [`backend::capabilities`],
/// from which the options refuse a backend, says the same.
pub trait Launch<N: Need>: Bench {
    /// The backends [`Launch::measure`] runs over.
    const BACKENDS: &'static [Backend];
    fn measure(s: &Session) -> Ending;
}

/// Point-to-point kernels: over MPI (host or GPU memory), UCX and NCCL.
impl<B> Launch<needs::PointToPoint> for B
where
    B: Pt2ptBench + for<'w> BenchOn<MpiHost<'w>> + for<'w> BenchOn<Mpi<'w, CudaMemory>>,
{
    const BACKENDS: &'static [Backend] = &[Backend::Mpi, Backend::Ucx, Backend::Nccl];

    fn measure(s: &Session) -> Ending {
        match s.opts.backend {
            Backend::Mpi => s.run_mpi::<B>(),
            Backend::Ucx => run_ucx::<B>(s),
            Backend::Nccl => s.run_nccl::<lanes::PointToPoint<B>>(B::message_bytes),
        }
    }
}

/// The collectives NCCL has too: over MPI and NCCL.
impl<B> Launch<needs::Collectives> for B
where
    B: for<'w> BenchOn<MpiHost<'w>> + for<'w> BenchOn<Mpi<'w, CudaMemory>> + for<'w> BenchOn<Nccl<'w>>,
{
    const BACKENDS: &'static [Backend] = &[Backend::Mpi, Backend::Nccl];

    fn measure(s: &Session) -> Ending {
        match s.opts.backend {
            Backend::Nccl => s.run_nccl::<lanes::Collective<B>>(B::message_bytes),
            Backend::Mpi => s.run_mpi::<B>(),
            // Not in BACKENDS: the options refuse it before a job starts.
            Backend::Ucx => unreachable!("--backend ucx has no collectives"),
        }
    }
}

/// Declares the [`Launch`] of a capability only MPI has.
macro_rules! mpi_only {
    ($($need:ident),*) => {$(
        impl<B> Launch<needs::$need> for B
        where
            B: for<'w> BenchOn<MpiHost<'w>> + for<'w> BenchOn<Mpi<'w, CudaMemory>>,
        {
            const BACKENDS: &'static [Backend] = &[Backend::Mpi];

            fn measure(s: &Session) -> Ending {
                s.run_mpi::<B>()
            }
        }
    )*};
}
mpi_only!(Barrier, VectorCollectives, NonBlockingCollectives, NeighborCollectives, PersistentPointToPoint);

/// MPI-4's persistent collectives: over MPI where the library has them;
/// elsewhere (an MPI-3 library) one line for every rank and exit 1, before
/// anything is bound, as OSU's configure leaves these programs out there.
impl<B> Launch<needs::PersistentCollectives> for B
where
    B: for<'w> BenchOn<MpiHost<'w>> + for<'w> BenchOn<Mpi<'w, CudaMemory>>,
{
    const BACKENDS: &'static [Backend] = &[Backend::Mpi];

    fn measure(s: &Session) -> Ending {
        use crate::backend::PersistentCollectives;
        let refusal = MpiHost::new(&s.job.world).persistent_refusal();
        if s.job.everywhere(refusal.map_or(Ok(()), Err)).is_none() {
            return setup_failed();
        }
        s.run_mpi::<B>()
    }
}

/// Kernels whose threads send and receive at once: MPI in host memory
/// (OSU's osu_latency_mt has no GPU form; the options refuse `-d`).
impl<B> Launch<needs::Threads> for B
where
    B: for<'w> BenchOn<MpiHost<'w>>,
{
    const BACKENDS: &'static [Backend] = &[Backend::Mpi];

    fn measure(s: &Session) -> Ending {
        s.run(&MpiHost::new(&s.job.world), B::message_bytes, <B as BenchOn<MpiHost>>::kernel)
    }
}

/// Whether each [`Launch`] runs over exactly the backends that
/// [`backend::capabilities`] gives its capability; a compile-time check
/// (`const _`), so the options' refusals and the dispatch cannot part.
pub(crate) const BACKENDS_AGREE: () = {
    agree::<needs::PointToPoint>(<crate::bench::pt2pt::latency::Latency as Launch<needs::PointToPoint>>::BACKENDS);
    agree::<needs::Threads>(<crate::bench::pt2pt::latency_mt::LatencyMt as Launch<needs::Threads>>::BACKENDS);
    agree::<needs::Collectives>(
        <crate::bench::collective::allreduce::Allreduce as Launch<needs::Collectives>>::BACKENDS,
    );
    agree::<needs::Barrier>(<crate::bench::collective::barrier::Barrier as Launch<needs::Barrier>>::BACKENDS);
    agree::<needs::VectorCollectives>(
        <crate::bench::collective::allgatherv::Allgatherv as Launch<needs::VectorCollectives>>::BACKENDS,
    );
    agree::<needs::NonBlockingCollectives>(
        <crate::bench::nonblocking::iallreduce::Iallreduce as Launch<needs::NonBlockingCollectives>>::BACKENDS,
    );
    agree::<needs::NeighborCollectives>(
        <crate::bench::neighborhood::neighbor_alltoall::NeighborAlltoall as Launch<needs::NeighborCollectives>>::BACKENDS,
    );
    agree::<needs::PersistentPointToPoint>(
        <crate::bench::pt2pt::latency_persistent::LatencyPersistent as Launch<needs::PersistentPointToPoint>>::BACKENDS,
    );
    agree::<needs::PersistentCollectives>(
        <crate::bench::persistent::allreduce_persistent::AllreducePersistent as Launch<needs::PersistentCollectives>>::BACKENDS,
    );
};
const _: () = BACKENDS_AGREE;

const fn agree<N: Need>(launched: &[Backend]) {
    let all = Backend::ALL;
    let mut i = 0;
    while i < all.len() {
        let b = all[i];
        let mut in_launch = false;
        let mut j = 0;
        while j < launched.len() {
            in_launch |= launched[j] as u8 == b as u8;
            j += 1;
        }
        if in_launch != backend::provides(b, N::CAPABILITY) {
            panic!("a Launch and backend::capabilities disagree on a backend");
        }
        i += 1;
    }
}

/// [`main`] for a one-sided benchmark (bench/rma/mod.rs).
pub fn main_rma<B: crate::bench::rma::RmaBench + Registered>() -> ! {
    let code = run_rma::<B>();
    let _ = io::stdout().flush();
    job::exit(code)
}

/// [`run`] for a one-sided benchmark: MPI windows in host memory (the
/// options refuse other backends and `-d`).
pub(crate) fn run_rma<B: crate::bench::rma::RmaBench + Registered>() -> i32 {
    run_with(Runs::rma::<B>())
}

/// A one-sided benchmark's measurement, once its library is known to
/// have the operation for the run's datatypes.
fn measure_rma<B: crate::bench::rma::RmaBench + Registered>(s: &Session) -> Ending {
    let refused = crate::bench::rma::library_refuses(B::OP, &s.opts.datatypes, &s.job.world.library_version());
    if s.job.everywhere(refused.map_or(Ok(()), Err)).is_none() {
        return setup_failed();
    }
    let t = MpiHost::new(&s.job.world);
    s.run(&t, |p, _| crate::bench::rma::message_bytes(p), crate::bench::rma::RmaKernel::new::<B>)
}

#[cfg(ucx)]
fn run_ucx<B: Pt2ptBench>(s: &Session) -> Ending {
    let Some(t) = s.job.everywhere(crate::backend::ucx::Ucx::new(&s.job.world)) else {
        return setup_failed();
    };
    s.run(&t, B::message_bytes, B::p2p_kernel)
}

/// Built without UCX headers: one line, on every rank's behalf.
#[cfg(not(ucx))]
fn run_ucx<B: Pt2ptBench>(s: &Session) -> Ending {
    let _ = s.job.everywhere(Err::<(), _>(ucx_sys::LoadError::NotBuilt));
    setup_failed()
}

/// Runs osu_init or osu_hello (`B`) and exits the process with its
/// status.
pub fn main_startup<B: Registered>() -> ! {
    let code = run_startup::<B>();
    let _ = io::stdout().flush();
    job::exit(code)
}

/// osu_init or osu_hello: the shared options and job start, then the
/// start-up row instead of a measurement (bench/startup/init.rs says why).
pub(crate) fn run_startup<B: Registered>() -> i32 {
    run_with(Runs::startup::<B>())
}

/// Options, the job's start-up, `measure` on a started session, and the
/// end: what every OSU binary does around its measurement. `message_bytes`
/// is the benchmark's buffer memory on one rank, for `--dry-run`.
fn run_with(runs: Runs) -> i32 {
    let Runs { entry, message_bytes, measure } = runs;
    let spec = entry.spec;
    topo::hwloc::skip_unused_plugins();
    let argv = job::argv();
    let env = crate::job::launcher::detect();
    if env.rank.is_some() {
        // Before the options: a rank whose launcher goes away while it
        // reads them (a graph file) ends with it.
        crate::job::signals::end_with_launcher(libc::SIGKILL);
    }
    let leader = env.is_leader();
    let opts = match cli::parse(spec, argv.get(1..).unwrap_or(&[])) {
        Ok(Parsed::Help) => {
            if leader {
                out(&help::text(spec));
            }
            return 0;
        }
        Ok(Parsed::Version(accel)) => {
            if leader {
                out(&format!(
                    "{}\ncommbench {} (OSU {} compatible)\n",
                    crate::report::osu::title_line(spec, accel, Backend::Mpi),
                    crate::VERSION,
                    crate::OSU_VERSION
                ));
            }
            return 0;
        }
        Err(e) => {
            if leader {
                say(&e.to_string());
                // Then the usage on stdout, as OSU's binaries print theirs
                // after a bad option: what -h prints.
                out(&help::text(spec));
            }
            return 1;
        }
        Ok(Parsed::Run(o)) => *o,
    };
    if leader {
        // Before MPI starts (only the leader says it), as OSU's osu_init
        // warns before it does.
        say_ignored(spec, &opts);
    }
    run_options(Front::Osu, entry, &argv, env, opts, message_bytes, measure)
}

/// The warning for options a start-up benchmark ignores (osu_init,
/// osu_hello), if it was given any.
pub(crate) fn say_ignored(spec: &crate::spec::BenchSpec, opts: &Options) {
    if !opts.ignored.is_empty() {
        say(&crate::diag::row_safe(&format!(
            "{}: warning: ignoring {} (it starts MPI once and repeats nothing: OSU's benchmark options do not apply)",
            spec.name,
            crate::diag::printable(&opts.ignored.join(" "))
        )));
    }
}

/// The program a run was started as: an OSU binary or a nccl-tests one
/// (`all_reduce_perf`, src/nccl_tests). It decides the exit statuses and
/// the closing lines; everything else is the same run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Front {
    Osu,
    NcclTests,
}

/// nccl-tests' exit status when a run's results fail it (wrong elements,
/// or an average bus bandwidth below 0.9 times `NCCL_TESTS_MIN_BW`): its
/// `testNumResults`.
pub(crate) const NCCL_TESTS_RESULTS_FAILED: i32 = 7;

impl Front {
    /// The exit status of a run that ended so: OSU's binaries give 0 only
    /// when every size was measured, else 1; nccl-tests' give 0, 7 when the
    /// results fail the run, and 1 for an error.
    fn exit_status(self, ending: &Ending) -> i32 {
        match (self, ending) {
            (_, Ending::Complete) => 0,
            (Front::Osu, _) => 1,
            (Front::NcclTests, Ending::Passed) => 0,
            (
                Front::NcclTests,
                Ending::ValidationFailed { .. }
                | Ending::BelowMinimum { .. }
                | Ending::Failed
                | Ending::BelowEfficiency { .. },
            ) => NCCL_TESTS_RESULTS_FAILED,
            (Front::NcclTests, Ending::Error { .. }) => 1,
        }
    }
}

/// A run from its options on: `--dry-run`, the job's start-up, `measure`
/// on the started session, the closing lines and the exit status. `argv`
/// is the program's, for the lines that name it.
pub(crate) fn run_options(
    front: Front,
    entry: Entry,
    argv: &[String],
    env: crate::job::launcher::LauncherEnv,
    opts: Options,
    message_bytes: fn(&Plan, usize) -> u128,
    measure: impl FnOnce(&Session) -> Ending,
) -> i32 {
    let spec = entry.spec;
    // The name the run's lines start with: the OSU benchmark's, or the
    // nccl-tests program's as started (without its directory), kept for
    // the process's life as the job's name.
    let program: &'static str = match front {
        Front::Osu => spec.name,
        Front::NcclTests => match argv.first().map(|a| program_name(a)).filter(|p| !p.is_empty()) {
            Some(p) => Box::leak(p.to_string().into_boxed_str()),
            None => spec.name,
        },
    };
    if opts.dry_run {
        return dry_run(entry, program, &opts, &env, message_bytes);
    }
    let placement = opts.placement.clone();
    let cfg = job_config(front, program, spec, &opts, &placement);
    if opts.backend == Backend::Ucx {
        crate::backend::quiet_ucx_by_default();
    }
    if opts.backend == Backend::Nccl && opts.format.osu_preamble() {
        // OSU's NCCL binaries say so on every rank before MPI starts.
        println!("#Using NCCL");
        let _ = io::stdout().flush();
    }
    let mut plan = None;
    let job = match Job::start(cfg, env, |world, gpu| {
        plan = Some(resolve_plan(front, entry, &opts, world, gpu)?);
        Ok::<(), crate::spec::JobShapeError>(())
    }) {
        Ok(j) => j,
        Err(code) => return code,
    };
    // Set by every start that succeeded.
    let Some(plan) = plan else { return 1 };
    let code = measure_and_conclude(front, &job, program, argv, &opts, &plan, spec, measure);
    job.finish(code);
    code
}

/// What a run of `spec` with `opts` asks of its job.
pub(crate) fn job_config<'a>(
    front: Front,
    program: &'static str,
    spec: &crate::spec::BenchSpec,
    opts: &Options,
    placement: &'a crate::topo::request::PlacementRequest,
) -> JobConfig<'a> {
    JobConfig {
        name: program,
        timeout: opts.timeout,
        placement,
        setup_exit: 1,
        name_shape_lines: false,
        gpu: opts.accel.is_some() || opts.backend == Backend::Nccl,
        threads: spec.thread_level(),
        lanes: opts.lanes(),
        // nccl-tests' copies run alone where their launcher is another
        // MPI's (seed 000); the OSU binaries refuse to.
        alone_runs: front == Front::NcclTests,
    }
}

/// The run's plan on a started world (every rank gets the same), or why
/// the job cannot run it: rank 0 says the line, every rank ends 1. `gpu`
/// is the GPU this rank opened.
pub(crate) fn resolve_plan<'a>(
    front: Front,
    entry: Entry,
    opts: &'a Options,
    world: &crate::backend::world::World,
    gpu: Option<&crate::gpu::cuda::GpuInfo>,
) -> Result<Plan<'a>, crate::spec::JobShapeError> {
    let spec = entry.spec;
    // A rank per GPU: nccl-tests' -t x -g of them per process, in
    // this process's communicator (NCCL_TESTS_SPLIT's, whose sizes may
    // differ: every one sweeps the same sizes in bytes, its counts its own).
    let group = opts.split.group_of(world.rank(), world.size()).1;
    let p = Plan::resolve(entry, opts, group * opts.lanes())?;
    // nccl-tests' sweep within the job's smallest GPU (every rank
    // agrees on it, so every rank runs the same sizes).
    let p = match (front, p.sweep) {
        (Front::NcclTests, Some(_)) => {
            // A rank without a GPU (its failure is agreed later)
            // limits nothing; the cast saturates.
            let mine = gpu.map_or(f64::INFINITY, |g| g.memory_bytes as f64);
            let least = world.bcast_u64(world.reduce_f64(mine, crate::backend::ReduceOp::Min) as u64);
            // And `-d all` as the job's oldest GPU allows.
            let major = gpu.map_or(f64::INFINITY, |g| f64::from(g.compute_major()));
            let oldest = world.bcast_u64(world.reduce_f64(major, crate::backend::ReduceOp::Min) as u64);
            p.within_gpu_memory(least).reducible_on(u32::try_from(oldest).unwrap_or(u32::MAX))
        }
        _ => p,
    };
    if world.threads() < spec.thread_level() {
        return Err(crate::spec::JobShapeError::ThreadMultiple);
    }
    let p = if p.pairs_from_nodes() {
        // Every rank off the parent node sends or receives: one pair
        // each (np/2 on two nodes).
        let layout = crate::bench::pt2pt::fan::FanLayout::of(world)?;
        p.with_pairs(world.size() - layout.ppn())
    } else {
        p
    };
    if let (Some(note), 0) = (&p.note, world.rank()) {
        say(note);
    }
    Ok(p)
}

/// `measure` on the started `job` with `plan`, then the run's closing
/// lines; returns the exit status (MPI still up: the caller ends the job,
/// or runs the next benchmark of a shared launch on it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure_and_conclude(
    front: Front,
    job: &Job,
    program: &str,
    argv: &[String],
    opts: &Options,
    plan: &Plan,
    spec: &'static crate::spec::BenchSpec,
    measure: impl FnOnce(&Session) -> Ending,
) -> i32 {
    let ending = measure(&Session { front, job, opts, plan, spec, paths: RefCell::new(None) });
    let root = job.is_root();
    let code = front.exit_status(&ending);
    // The last lines before MPI ends: a failing job's other ranks leave
    // once rank 0 has written everything (job::end_world).
    match front {
        Front::Osu => {
            if let (Ending::ValidationFailed { size }, true, true) = (&ending, root, opts.format.runner_lines()) {
                let argv0 = argv.first().cloned().unwrap_or_else(|| spec.name.to_string());
                println!("DATA VALIDATION ERROR: {argv0} exited with status 1 on message size {size}.");
            }
            if let (Ending::BelowMinimum { avg_busbw, min_busbw }, true) = (&ending, root) {
                say(&format!("{}: {}", spec.name, job::below_minimum(*avg_busbw, *min_busbw)));
            }
        }
        Front::NcclTests => {}
    }
    if let (Ending::BelowEfficiency { line }, true) = (&ending, root) {
        say(&format!("{program}: {line}"));
    }
    if front == Front::NcclTests && code == NCCL_TESTS_RESULTS_FAILED {
        // Every process of a failed nccl-tests run says so on stdout, in
        // its words up to the source place (ours has none), after rank 0
        // has written the footer that says why: the barrier, which every
        // rank reaches (the verdicts behind this status are agreed), and
        // before the job ends, since a launcher ends the other ranks once
        // one exits failing.
        job.world.barrier();
        let why = match &ending {
            Ending::BelowMinimum { avg_busbw, min_busbw } => {
                format!("average bus bandwidth {avg_busbw:.2} GB/s is below 0.9 x NCCL_TESTS_MIN_BW, {min_busbw} GB/s")
            }
            Ending::ValidationFailed { .. } => "out of bounds values".to_string(),
            e => e.detail().unwrap_or_default(),
        };
        println!(" .. {} pid {}: Test failure ({why})", crate::topo::hostname(), std::process::id());
    }
    code
}

/// A program's name as its lines show it: `argv0` without its directory.
pub(crate) fn program_name(argv0: &str) -> &str {
    argv0.rsplit('/').next().unwrap_or(argv0)
}

/// `--dry-run`: the plan's table on the leader (the launcher's rank 0, or
/// the only process), nothing started; 1 when the job could not run.
/// `program` names the run in what it prints.
fn dry_run(
    entry: Entry,
    program: &str,
    opts: &Options,
    env: &crate::job::launcher::LauncherEnv,
    message_bytes: fn(&Plan, usize) -> u128,
) -> i32 {
    // A rank per GPU: nccl-tests' -t x -g of them per process.
    let np = crate::bench::engine::dry_run::ranks(opts.dry_run_ranks, env.size) * opts.lanes();
    let plan = match Plan::resolve(entry, opts, np) {
        Ok(p) => p,
        Err(e) => {
            if env.is_leader() {
                say(&format!("{program} on {np} ranks: {e}"));
            }
            return 1;
        }
    };
    if env.is_leader() {
        let lines = crate::bench::engine::dry_run::lines(
            &plan,
            program,
            np,
            message_bytes(&plan, np),
            crate::bench::engine::dry_run::ASSUMED,
        );
        out(&format!("{}\n", lines.join("\n")));
    }
    0
}

/// Text on stdout that a reader may stop reading (`osu_x -h | head`): a
/// closed pipe ends nothing but the text.
fn out(text: &str) {
    let mut stdout = io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}

/// How a rank other than 0 ends when rank 0's run did not complete.
fn ending_elsewhere(ending: Ending) -> Ending {
    match ending {
        Ending::Complete => Ending::Error { detail: "rank 0 could not write its results".into() },
        e => e,
    }
}

/// A set-up step failed on some rank (and was said).
fn setup_failed() -> Ending {
    Ending::Error { detail: "the run could not be set up".into() }
}

/// A started job running one benchmark.
pub struct Session<'a> {
    /// The program the run was started as.
    front: Front,
    job: &'a Job,
    opts: &'a Options,
    /// What the run will do (its options are `opts`).
    plan: &'a Plan<'a>,
    spec: &'static crate::spec::BenchSpec,
    /// Rank 0, for a run that reports a bandwidth: its paths and the
    /// bandwidths measured so far (efficiency.rs).
    paths: RefCell<Option<(RunPaths, efficiency::Points)>>,
}

impl Session<'_> {
    /// With `-d`: where this rank's buffers go on its GPU. Collectives put
    /// every buffer there; point-to-point benchmarks follow OSU's `SRC DST`
    /// words, SRC for the first half of the ranks (the senders) and DST
    /// for the rest, and without the words stay on the host, as OSU does.
    fn cuda_memory(&self) -> Option<CudaMemory> {
        if self.opts.backend != Backend::Mpi {
            return None;
        }
        let gpu = self.job.gpu.as_ref()?;
        let managed = self.opts.accel == Some(crate::options::Accel::Managed);
        let (place, note) = if !self.spec.is_point_to_point() {
            (if managed { Place::Managed } else { Place::Device }, None)
        } else {
            match &self.opts.buffer_locations {
                Some(words) => {
                    let sender = self.job.world.rank() < self.job.world.size().div_ceil(2);
                    (Place::from_word(if sender { &words.send } else { &words.recv }, managed), None)
                }
                None => (
                    Place::Host,
                    Some(
                        "-d without SRC DST leaves point-to-point buffers on the host, as in OSU: give D D (or H D, \
                         D H) to put them on the GPU"
                            .to_string(),
                    ),
                ),
            }
        };
        Some(CudaMemory::new(place, gpu.info.clone(), note))
    }

    /// MPI over this rank's GPU memory, once every rank agrees the MPI
    /// library can move it.
    fn mpi_cuda(&self, mem: CudaMemory) -> Option<Mpi<'_, CudaMemory>> {
        let mem = self.job.everywhere(mem.check_mpi())?;
        Some(Mpi::with_memory(&self.job.world, mem))
    }

    /// Measures benchmark `B` over MPI: on host memory, or on the GPU's
    /// with `-d`.
    fn run_mpi<B>(&self) -> Ending
    where
        B: for<'w> BenchOn<MpiHost<'w>> + for<'w> BenchOn<Mpi<'w, CudaMemory>>,
    {
        match self.cuda_memory() {
            None => self.run(&MpiHost::new(&self.job.world), B::message_bytes, <B as BenchOn<MpiHost>>::kernel),
            Some(mem) => self
                .mpi_cuda(mem)
                .map_or_else(setup_failed, |t| self.run(&t, B::message_bytes, <B as BenchOn<Mpi<CudaMemory>>>::kernel)),
        }
    }

    /// Measures over transport `t`: `message_bytes` is the benchmark's
    /// [`Bench::message_bytes`], `kernel` builds its kernel over `T`.
    fn run<T: Transport, K: Kernel<T>>(
        &self,
        t: &T,
        message_bytes: fn(&Plan, usize) -> u128,
        kernel: impl FnOnce(&Setup<T>) -> Result<K, AllocError>,
    ) -> Ending {
        let (job, spec, plan) = (self.job, self.spec, self.plan);
        job.step(Step::Startup);
        let setup = Setup::new(t, plan);
        let buffers = message_bytes(plan, setup.np());
        let estimate = memory::estimate(plan, setup.np(), Some(setup.rank()), buffers);
        if job.everywhere(job.memory_check_parts(estimate.more(), &estimate.parts(), "lower -m, -W or -i")).is_none() {
            return setup_failed();
        }
        // Before the kernel's buffers exist, so the copy's never add to them.
        let end = efficiency::rank_end(job, spec, plan, t.memory().gpu_buffers());
        let Some(mut kernel) = job.everywhere(kernel(&setup)) else {
            return setup_failed();
        };
        let Some((sinks, record)) = self.open_outputs::<T>(t.record_info(), Some(&estimate), end) else {
            return setup_failed();
        };
        self.measure_and_end(t, &mut kernel, sinks, record, &estimate)
    }

    /// The measurement over `t` with its outputs (rank 0's), then how the
    /// run ended: judged against its paths' peaks, said, recorded.
    fn measure_and_end<T: Transport, K: Kernel<T>>(
        &self,
        t: &T,
        kernel: &mut K,
        mut sinks: Option<Sinks>,
        record: Option<RecordFile<RunRecord>>,
        estimate: &memory::Estimate,
    ) -> Ending {
        let job = self.job;
        let ending = self.measure(t, kernel, self.plan, sinks.as_mut(), record.as_ref());
        // Every rank's last look at what competed with it, outside any
        // timed loop (every rank gets here: a failed output aborted).
        let loads = job::gather_loads(&job.world);
        if let Some(r) = record.as_ref() {
            r.update(|r| r.run.keep_loads(loads));
        }
        let ending = self.judge_efficiency(ending, record.as_ref());
        job.step(Step::Finish);
        if std::env::var_os(memory::REPORT_ENV).is_some() {
            say(&memory::report_line(self.spec.name, job.world.rank(), estimate));
        }
        self.end_record(record.as_ref(), sinks.as_ref(), ending)
    }

    /// Result files on rank 0, the run record (every rank's placement) and
    /// the outputs, shared with every rank's watchdog; None (said) when a
    /// required one cannot be made. The sinks and the record are on rank 0
    /// only.
    #[allow(clippy::type_complexity)]
    fn open_outputs<T: Transport>(
        &self,
        details: Option<serde_json::Value>,
        estimate: Option<&memory::Estimate>,
        end: Option<crate::peak::RankEnd>,
    ) -> Option<(Option<Sinks>, Option<RecordFile<RunRecord>>)> {
        let (job, spec, opts) = (self.job, self.spec, self.opts);
        let files = match job.open_results(|| {
            let slurm_job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
            match files::create(&opts.results, spec.name, &job.start.compact(), slurm_job.as_deref()) {
                Err(e) if !opts.results_chosen => {
                    say(&format!("{}: warning: no CSV or run record for this run: {e}", job.name));
                    Ok(None)
                }
                r => r,
            }
        }) {
            Ok(f) => f,
            Err(e) => {
                if let Some(e) = e {
                    say(&format!("{}: {e}", job.name));
                }
                return None;
            }
        };
        let lane_ends = efficiency::lane_ends(&end, &job.lane_gpus);
        let ranks = job.gather_ranks_with(end, lane_ends);
        let devices = self.nccl_tests_devices();
        let (sinks, record) = if job.is_root() {
            let (sinks, record) = self.outputs::<T>(ranks, files, details, devices, estimate);
            (Some(sinks), record)
        } else {
            (None, None)
        };
        job.share_record(record.as_ref().map(|r| r.path()));
        Some((sinks, record))
    }

    /// Ends rank 0's run record with `ending` (a result lost on the way
    /// is said); returns how the run ended, an error if the chosen record
    /// could not be written.
    fn end_record(&self, record: Option<&RecordFile<RunRecord>>, sinks: Option<&Sinks>, mut ending: Ending) -> Ending {
        let opts = self.opts;
        if let Some(rec) = record {
            if let Some(lost) = sinks.and_then(|s| s.lost().borrow().clone()) {
                rec.update(|r| r.results.incomplete = Some(lost));
            }
            if let Err(e) = rec.end(&ending, self.front.exit_status(&ending)) {
                let path = rec.path().display();
                if opts.results_chosen {
                    // The place was chosen: a record that still says
                    // `running` is a result lost, and the status says so.
                    let line = format!("{}: cannot write the run record {path}: {e}", self.job.name);
                    say(&line);
                    if ending == Ending::Complete {
                        ending = Ending::Error { detail: line };
                    }
                } else {
                    say(&format!(
                        "{}: warning: the run record {path} does not say how the run ended: {e}",
                        self.job.name
                    ));
                }
            }
        }
        ending
    }

    /// osu_init and osu_hello (see bench/startup/init.rs): every rank's time in
    /// MPI_Init, measured by the job's start, gathered at rank 0 as one
    /// row through the usual outputs.
    fn startup(&self) -> Ending {
        let job = self.job;
        job.step(Step::Startup);
        let secs = job.world.gather_f64(job.mpi_init.as_secs_f64());
        let Some((mut sinks, record)) = self.open_outputs::<MpiHost>(None, None, None) else {
            return setup_failed();
        };
        let mut ending = Ending::Complete;
        if let Some(sinks) = sinks.as_mut() {
            let mut row = crate::bench::startup::init::row(&secs);
            row.finished_utc = crate::report::time::Utc::now().rfc3339();
            // The one row is every size: the outputs finish with it.
            match sinks.each(|s| s.row(&row).and_then(|()| s.finish())) {
                Ok(()) => {
                    if let (Some(r), false) = (&record, sinks.lost().borrow().is_some()) {
                        r.update(|r| r.results.rows += 1);
                    }
                }
                Err(e) => {
                    let line = format!("{}: {e}", self.job.name);
                    say(&line);
                    ending = Ending::Error { detail: line };
                }
            }
        }
        job.step(Step::Finish);
        let ending = self.end_record(record.as_ref(), sinks.as_ref(), ending);
        // Every rank ends as rank 0 did.
        if job.world.bcast_u64(u64::from(ending == Ending::Complete)) == 1 {
            Ending::Complete
        } else {
            ending_elsewhere(ending)
        }
    }

    /// A run that measured every size, judged against its paths' peaks:
    /// rank 0 concludes (the record's paths, `--verbose`'s lines) and with
    /// `--min-efficiency` every rank ends as its verdict says. Other
    /// endings pass through.
    fn judge_efficiency(&self, ending: Ending, record: Option<&RecordFile<RunRecord>>) -> Ending {
        let (job, spec, opts) = (self.job, self.spec, self.opts);
        if !efficiency::reports_bandwidth(spec) || !matches!(ending, Ending::Complete | Ending::BelowMinimum { .. }) {
            return ending;
        }
        let mut line = None;
        if let Some((mut paths, points)) = self.paths.borrow_mut().take() {
            line = efficiency::conclude(&mut paths, &points.borrow(), opts.min_efficiency);
            if opts.verbose {
                efficiency::verbose_lines(job.name, &paths).iter().for_each(|l| say(l));
            }
            if let Some(r) = record {
                r.update(|r| r.paths = Some(paths));
            }
        }
        if opts.min_efficiency.is_none() {
            return ending;
        }
        // Rank 0 holds the rows; every rank ends alike.
        let below = job.world.bcast_u64(u64::from(line.is_some())) == 1;
        match (below, ending) {
            (true, Ending::Complete) => Ending::BelowEfficiency { line: line.unwrap_or_default() },
            (true, other) => {
                if let Some(l) = line {
                    say(&format!("{}: {l}", job.name));
                }
                other
            }
            (false, other) => other,
        }
    }

    fn measure<T: Transport, K: Kernel<T>>(
        &self,
        t: &T,
        kernel: &mut K,
        plan: &Plan,
        sinks: Option<&mut Sinks>,
        record: Option<&RecordFile<RunRecord>>,
    ) -> Ending {
        // Rows count in the record while they reach the CSV.
        let lost = sinks.as_ref().map(|s| s.lost());
        let on_row = || {
            if let (Some(r), false) = (record, lost.as_ref().is_some_and(|l| l.borrow().is_some())) {
                r.update(|r| r.results.rows += 1);
            }
        };
        match measure::run(t, kernel, plan, self.job.name, sinks, &self.job.progress, on_row) {
            Ok(ending) => ending,
            Err(e) => {
                // A required output failed: the run ends non-zero, and the
                // record says why if it can still be written.
                let line = format!("{}: {e}", self.job.name);
                if let Some(r) = record {
                    let _ = r.end(&Ending::Error { detail: line.clone() }, 1);
                }
                self.job.abort(&line)
            }
        }
    }

    /// `--format nccl-tests`: every rank's GPU line at rank 0 (nothing
    /// elsewhere, and nothing for OSU's table).
    fn nccl_tests_devices(&self) -> Vec<Device> {
        let Some(gpu) = self.job.gpu.as_ref().filter(|_| self.opts.format == crate::options::Format::NcclTests) else {
            return Vec::new();
        };
        let host = crate::topo::hostname();
        // One line per GPU the process drives, in lane order (a rank each).
        let mine: Vec<String> = std::iter::once(gpu)
            .chain(&self.job.lane_gpus)
            .map(|g| device_text(std::process::id(), &host, g.info.index, &g.info.pci_bus_id, &g.info.name))
            .collect();
        let all = self.job.world.gather_bytes(mine.join("\n").as_bytes());
        let texts: Vec<String> = all
            .iter()
            .flat_map(|b| String::from_utf8_lossy(b).lines().map(str::to_string).collect::<Vec<_>>())
            .collect();
        // The Group column: each process's NCCL_TESTS_SPLIT colour.
        let lanes = self.opts.lanes().max(1);
        let group = |rank: usize| self.opts.split.color((rank / lanes) as i32);
        texts.iter().enumerate().map(|(rank, text)| Device { group: group(rank), ..parse_device(rank, text) }).collect()
    }

    /// Rank 0: the placement report, the run record and the outputs.
    fn outputs<T: Transport>(
        &self,
        ranks: Vec<RankInfo>,
        files: Option<ResultFiles>,
        backend_details: Option<serde_json::Value>,
        devices: Vec<Device>,
        estimate: Option<&memory::Estimate>,
    ) -> (Sinks, Option<RecordFile<RunRecord>>) {
        let (job, spec) = (self.job, self.spec);
        let warnings = self.placement_report(&ranks);
        // The paths between the ranks' GPUs, a process's own included.
        let paths = efficiency::run_paths(spec, self.plan, &ranks);
        let ctx = RunContext {
            benchmark: spec.name,
            backend: T::BACKEND,
            np: self.np(),
            pairs: spec.is_point_to_point().then_some(self.plan.pairs),
            path: paths.as_ref().map(|p| Arc::new(p.run.clone())),
        };
        let curve_ctx = ctx.clone();
        let mut record = None;
        let mut csv = None;
        let mut csv_path = None;
        if let Some(f) = files {
            let mut rec = self.new_record::<T>(ranks, &f);
            // osu_init and osu_hello have no plan of sizes to keep.
            rec.plan = estimate.map(|e| plan_record::of(self.plan, self.np(), Some(e)));
            rec.backend_details = backend_details;
            rec.run.placement_warnings = warnings;
            rec.paths = paths.clone();
            match job.record(rec, f.record_path.clone(), |r| &mut r.run) {
                Ok(r) => {
                    record = Some(r);
                    if self.opts.verbose {
                        say(&format!(
                            "{}: results in {} (run record {})",
                            job.name,
                            f.csv_path.display(),
                            f.record_path.display()
                        ));
                    }
                    csv_path = Some(f.csv_path.clone());
                    csv = Some((f.csv, f.csv_path));
                }
                Err(e) if !self.opts.results_chosen => {
                    // Results in the default place: the table goes on
                    // without them, and no empty file is left to be read.
                    let _ = std::fs::remove_file(&f.record_path);
                    let _ = std::fs::remove_file(&f.csv_path);
                    say(&format!(
                        "{}: warning: no CSV or run record for this run: cannot write {}: {e}",
                        job.name,
                        f.record_path.display()
                    ));
                }
                Err(e) => {
                    // Nothing of a run that never started is left behind.
                    let _ = std::fs::remove_file(&f.record_path);
                    let _ = std::fs::remove_file(&f.csv_path);
                    job.abort(&format!("{}: cannot write {}: {e}", job.name, f.record_path.display()))
                }
            }
        }
        match Sinks::for_run(&self.plan.layout(ctx.np), ctx, csv, devices) {
            Ok(mut s) => {
                if let Some(paths) = paths {
                    let (curve, points) = Curve::new(curve_ctx);
                    s.push(Box::new(curve));
                    *self.paths.borrow_mut() = Some((paths, points));
                }
                (s, record)
            }
            Err(e) => {
                let line = format!("{}: {e}", job.name);
                // A CSV that did not get its header (a full disk) is no
                // result: it goes, and the record says so.
                let empty = csv_path.filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == 0));
                if let Some(p) = &empty {
                    let _ = std::fs::remove_file(p);
                }
                if let Some(r) = &record {
                    if empty.is_some() {
                        r.update(|r| {
                            r.results.csv = None;
                            r.results.incomplete = Some(format!("no CSV: {e}"));
                        });
                    }
                    let _ = r.end(&Ending::Error { detail: line.clone() }, 1);
                }
                job.abort(&line)
            }
        }
    }

    /// Rank 0: prints the misplacement warnings on stderr (and the
    /// placement table with `--verbose`), and returns the warnings for the
    /// run record.
    fn placement_report(&self, ranks: &[RankInfo]) -> Vec<String> {
        let pairs = if self.spec.is_point_to_point() {
            (0..self.plan.pairs).map(|i| (i, i + self.plan.pairs)).collect()
        } else {
            Vec::new()
        };
        let ctx = WarnContext {
            benchmark: self.spec.name.into(),
            pairs,
            allocation_nodes: crate::report::placement::allocation_nodes(),
        };
        crate::report::placement::print(ranks, &ctx, self.opts.verbose)
    }

    fn new_record<T: Transport>(&self, ranks: Vec<RankInfo>, files: &ResultFiles) -> RunRecord {
        let d = &self.spec.defaults;
        let o = self.opts;
        RunRecord {
            schema: record::SCHEMA.into(),
            benchmark: self.spec.name.into(),
            title: crate::report::osu::title_line(self.spec, o.accel, o.backend),
            run: self.job.header(ranks),
            options: serde_json::to_value(o).unwrap_or_default(),
            iteration_policy: IterationPolicy {
                small_iterations: o.iterations.unwrap_or(d.small_iterations),
                small_warmup: o.warmup.unwrap_or(d.small_warmup),
                large_iterations: o.iterations.unwrap_or(d.large_iterations),
                large_warmup: o.warmup.unwrap_or(d.large_warmup),
                large_above_bytes: self.spec.large_switch.then_some(crate::spec::LARGE_MESSAGE_SIZE),
                window: self.spec.windowed.then_some(o.window),
                validation_warmup: o.validation_warmup,
                min_size: o.min_size,
                max_size: self.plan.max_size,
            },
            results: record::ResultsInfo { csv: Some(files.csv_path.display().to_string()), ..Default::default() },
            slurm: crate::report::slurm::SlurmInfo::from_env(),
            buffers: Some(BufferInfo::new(T::Mem::MEMORY, o.buffer_locations.as_ref())),
            backend_details: None,
            noise_thresholds: Some(crate::bench::engine::measure::noise_thresholds()),
            plan: None,
            paths: None,
        }
    }
}
