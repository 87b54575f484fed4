//! The life of one commbench job on every rank, the same for the OSU
//! binaries and `commbench pairs`: the panic hook and the watchdog, placement
//! before and after MPI starts, the launcher and job-size checks, agreement
//! across ranks when a step fails, the memory check, the result files, the
//! run record (written at start, marked by the watchdog, ended with a
//! [`Ending`]), and the one-line messages on stderr.

pub mod launcher;
pub mod placement;
pub mod signals;
pub(crate) mod survey;
pub mod watchdog;

use std::fmt::Display;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::backend::world::ThreadLevel;
use crate::backend::world::World;
use crate::backend::{agree_failures, Control};
use crate::report::record::{self, RankInfo, RunHeader, RunStatus};
use crate::report::record_end::{self, RecordPlace};
use crate::report::time::Utc;
use crate::topo::report::RankPlacement;
use crate::topo::request::PlacementRequest;
use crate::topo::{self, affinity, cpuset};
use launcher::LauncherEnv;
use watchdog::{OnFire, Progress, Step};

pub use crate::diag::say;

/// How long a failing rank other than the leader waits before it exits
/// when it cannot know that the leader's line is out (MPI not usable, or
/// the leader never said so). Launchers tear the whole job down at the
/// first non-zero exit, and Open MPI can then drop output the leader wrote
/// but it had not yet forwarded: the one line that says what was wrong.
/// With the leader first, its line is out before anything is torn down.
pub(crate) const LEADER_FIRST: Duration = Duration::from_millis(1500);

/// How long a failing rank other than the leader waits once the leader has
/// told it, through MPI, that everything it had to say is written
/// ([`end_world`]): time for the leader's own exit to reach the launcher
/// first, and for its last output to be forwarded.
pub(crate) const LEADER_MARGIN: Duration = Duration::from_millis(100);

/// What this rank knows about the leader's output when it fails.
static LEADER_OUT: AtomicU8 = AtomicU8::new(UNKNOWN);
/// Nothing: wait [`LEADER_FIRST`].
const UNKNOWN: u8 = 0;
/// The leader said it is written: wait [`LEADER_MARGIN`].
const WRITTEN: u8 = 1;
/// This rank waited [`LEADER_FIRST`] for the leader already.
const WAITED: u8 = 2;

/// Ends the process with `code`, the leader first when it is a failure
/// (see [`LEADER_FIRST`]). A failure before MPI started (bad options)
/// starts it only to order the exits ([`end_world`]): a start is quicker
/// than [`LEADER_FIRST`], as OSU's binaries, which start MPI before they
/// read their options, end.
pub fn exit(code: i32) -> ! {
    let _ = io::stdout().flush();
    if code != 0 {
        let env = crate::job::launcher::detect();
        let others = env.size.unwrap_or(1) > 1;
        if others && LEADER_OUT.load(Ordering::SeqCst) == UNKNOWN && !mpi::environment::is_initialized() {
            if let Some(world) = World::init(env.is_foreign_to_open_mpi()) {
                end_world(world, code);
            }
        }
        if !env.is_leader() {
            match LEADER_OUT.load(Ordering::SeqCst) {
                WRITTEN => std::thread::sleep(LEADER_MARGIN),
                WAITED => {}
                _ => std::thread::sleep(LEADER_FIRST),
            }
        }
    }
    std::process::exit(code)
}

/// Ends MPI on this rank for a job whose exit status will be `code`. On a
/// failure, rank 0 first tells every other rank that its output is written
/// (bounded by [`LEADER_FIRST`], point-to-point, so ranks that parted ways
/// do not hang here), and [`exit`] then keeps the others only
/// [`LEADER_MARGIN`] behind it. A rank whose release did not complete
/// leaves without `MPI_Finalize`, which would wait for ranks that are not
/// coming.
pub(crate) fn end_world(world: World, code: i32) {
    if code == 0 {
        return world.finalize();
    }
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    // Only a world that holds the launcher's every rank has its leader in
    // it (under another MPI's launcher each process is alone).
    let whole = crate::job::launcher::detect().size.is_none_or(|n| n == world.size());
    if world.release_from_root(LEADER_FIRST) {
        LEADER_OUT.store(if whole { WRITTEN } else { UNKNOWN }, Ordering::SeqCst);
        world.finalize();
    } else {
        LEADER_OUT.store(WAITED, Ordering::SeqCst);
        world.abandon();
    }
}

/// Turns a panic into one line naming the program, ends the run record
/// `error` (where it exists) and ends every rank. A [`crate::fatal::Fatal`]
/// payload is a failure of the GPU or a library and is said as it is; any
/// other panic is a bug and says so.
pub(crate) fn install_panic_hook(name: &'static str) {
    crate::fatal::set_program(name);
    std::panic::set_hook(Box::new(move |info| {
        // The program running now (a shared launch runs several).
        let name = crate::fatal::program();
        let line = match info.payload().downcast_ref::<crate::fatal::Fatal>() {
            // A failure of the GPU or the library, not of commbench.
            Some(crate::fatal::Fatal(line)) => format!("{name}: {line}"),
            None => {
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                let loc = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                format!("{name}: internal error: {msg}{loc} (please report this)")
            }
        };
        say(&line);
        crate::fatal::end_record(&line, 1);
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: ends every rank; MPI is initialised and not finalised.
            unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 1) };
        }
        std::process::exit(1);
    }));
}

/// How a job ended. Maps to the run record's status and the exit status.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// Every size measured (OSU binaries).
    Complete,
    /// `-c` found wrong data at this message size.
    ValidationFailed { size: usize },
    /// Every pair met the criteria (`pairs`).
    Passed,
    /// Some pair failed the criteria (`pairs`).
    Failed,
    /// Every size measured, but the average bus bandwidth is below
    /// `--min-busbw` (GB/s).
    BelowMinimum { avg_busbw: f64, min_busbw: f64 },
    /// Every size measured, but the bandwidth's plateau is below
    /// `--min-efficiency` of its path's peak (or the peak is unknown):
    /// the line that says so (empty on ranks other than 0).
    BelowEfficiency { line: String },
    /// Something went wrong that was said already.
    Error { detail: String },
}

impl Ending {
    /// The run record's `status`.
    pub fn status(&self) -> RunStatus {
        match self {
            Ending::Complete => RunStatus::Complete,
            Ending::ValidationFailed { .. } => RunStatus::ValidationFailed,
            Ending::Passed => RunStatus::Passed,
            Ending::Failed | Ending::BelowMinimum { .. } | Ending::BelowEfficiency { .. } => RunStatus::Failed,
            Ending::Error { .. } => RunStatus::Error,
        }
    }

    /// The run record's `status_detail`.
    pub fn detail(&self) -> Option<String> {
        match self {
            Ending::ValidationFailed { size } => Some(format!("validation failed at message size {size}")),
            Ending::Error { detail } => Some(detail.clone()),
            Ending::BelowMinimum { avg_busbw, min_busbw } => Some(below_minimum(*avg_busbw, *min_busbw)),
            Ending::BelowEfficiency { line } => Some(line.clone()),
            _ => None,
        }
    }
}

/// The line (and record detail) of a run below `--min-busbw`.
pub(crate) fn below_minimum(avg_busbw: f64, min_busbw: f64) -> String {
    format!("average bus bandwidth {avg_busbw:.2} GB/s is below --min-busbw {min_busbw} GB/s")
}

/// What a program tells [`Job::start`].
pub struct JobConfig<'a> {
    /// Prefix of every line the job says (`osu_bw`, `commbench pairs`).
    pub name: &'static str,
    pub timeout: Option<Duration>,
    pub placement: &'a PlacementRequest,
    /// Exit status of a job that cannot start or be set up.
    pub setup_exit: i32,
    /// Whether lines about the job's shape (a launcher of another MPI)
    /// carry `name`: the OSU binaries print them bare, like OSU's own
    /// process-count lines.
    pub name_shape_lines: bool,
    /// Whether each rank opens its GPU (`-d`) before MPI starts, as a
    /// CUDA-aware MPI expects.
    pub gpu: bool,
    /// The thread support to ask of `MPI_Init_thread`.
    pub threads: ThreadLevel,
    /// GPUs each process drives, one thread apiece (nccl-tests' `-t` x
    /// `-g`; 1 elsewhere): with `gpu`, the job opens them all.
    pub lanes: usize,
    /// Whether a process that MPI sees alone while its launcher started
    /// several (a launcher of another MPI) runs anyway, as nccl-tests'
    /// copies do, saying so in one line and in the record; otherwise it
    /// is refused.
    pub alone_runs: bool,
}

/// A started job on one rank: MPI is up, the job size suits the program
/// and every rank is placed.
pub struct Job {
    pub name: &'static str,
    pub argv: Vec<String>,
    pub env: LauncherEnv,
    pub world: World,
    pub placement: RankPlacement,
    /// This node as hwloc showed it (or why it could not).
    pub machine: Result<crate::topo::machine::Machine, String>,
    pub progress: Arc<Progress>,
    pub start: Utc,
    /// How long MPI_Init took on this rank (monotonic clock).
    pub mpi_init: Duration,
    pub setup_exit: i32,
    on_fire: Arc<Mutex<Option<OnFire>>>,
    watch: Arc<signals::Watch>,
    /// The GPUs of this process's other lanes (src/backend/team.rs), in
    /// lane order from lane 1: empty unless [`JobConfig::lanes`] > 1.
    pub lane_gpus: Vec<crate::gpu::cuda::Gpu>,
    /// This rank's GPU, when the job asked for one (last, so that it is
    /// released after everything that used it).
    pub gpu: Option<crate::gpu::cuda::Gpu>,
    /// Set where this process runs alone though its launcher started
    /// several ([`JobConfig::alone_runs`]).
    pub alone: Option<record::WorldOfOne>,
}

/// The command line as given.
pub fn argv() -> Vec<String> {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect()
}

impl Job {
    /// Starts the job on this rank (`env`: what the launcher said, read
    /// before option parsing): panic hook and watchdog, placement
    /// before MPI_Init, MPI, the launcher check, the program's own check of
    /// the job (`check`, given the world and the GPU this rank opened: Err
    /// is the line rank 0 prints), and placement
    /// after MPI_Init. On failure, returns the exit status (the line has
    /// been said and MPI finalised).
    pub fn start<E: Display>(
        cfg: JobConfig,
        env: LauncherEnv,
        check: impl FnOnce(&World, Option<&crate::gpu::cuda::GpuInfo>) -> Result<(), E>,
    ) -> Result<Job, i32> {
        let name = cfg.name;
        install_panic_hook(name);
        let progress = Arc::new(Progress::default());
        let on_fire: Arc<Mutex<Option<OnFire>>> = Arc::new(Mutex::new(None));
        // Before any other thread starts (the watchdog's, MPI's), so that
        // only the signal thread takes them.
        let watch = Arc::new(signals::Watch::default());
        if signals::block() {
            signals::start(progress.clone(), cfg.timeout, watch.clone());
            if env.rank.is_some() {
                // The launcher's end now reaches the signal thread, which
                // ends the run record.
                signals::end_with_launcher(libc::SIGTERM);
            }
        }
        let survey = Arc::new(std::sync::OnceLock::new());
        if let Some(timeout) = cfg.timeout {
            let rank = env.rank.map(|r| r.to_string()).unwrap_or_else(|| "?".into());
            let whose = format!("rank {rank} on {}", topo::hostname());
            let (progress, on_fire, survey) = (progress.clone(), on_fire.clone(), survey.clone());
            watchdog::start(watchdog::Watch { progress, timeout, whose, on_fire, survey });
        }
        let start = Utc::now();
        // Binding and NIC variables must be in place before MPI starts.
        let prepared = placement::prepare(&env, cfg.placement);
        // The GPU too: a CUDA-aware MPI looks at the current device when
        // it starts.
        let gpu = cfg.gpu.then(|| crate::gpu::cuda::open(cfg.placement.gpu.as_deref(), env.local_rank, cfg.lanes));
        // osu_init reports this: the time MPI takes to start on this rank
        // (two clock reads around MPI_Init; every job keeps it, at no cost).
        let before_init = std::time::Instant::now();
        let world = World::init_with(cfg.threads, env.is_foreign_to_open_mpi());
        let mpi_init = before_init.elapsed();
        let Some(world) = world else {
            say(&format!("{name}: MPI was initialised before commbench could do it"));
            return Err(cfg.setup_exit);
        };
        let refuse = |world: World, line: Option<String>| {
            if let Some(line) = line {
                say(&line);
            }
            end_world(world, cfg.setup_exit);
            Err(cfg.setup_exit)
        };
        let mismatch = env.mismatch(world.size(), &world.library_version());
        if let (Some(msg), false) = (&mismatch, cfg.alone_runs) {
            let leader = env.is_leader();
            let line = if cfg.name_shape_lines { format!("{name}: {msg}") } else { msg.clone() };
            return refuse(world, leader.then_some(line));
        }
        // The GPU this rank opened, if it could (a failure is agreed
        // below, after the program's check).
        let opened = gpu.as_ref().and_then(|g| g.as_ref().ok()).and_then(|g| g.first()).map(|g| &g.info);
        if let Err(msg) = check(&world, opened) {
            let root = world.rank() == 0;
            return refuse(world, root.then(|| msg.to_string()));
        }
        let (placement, machine) = match placement::confirm(&world, &env, prepared) {
            Ok(p) => p,
            Err(line) => return refuse(world, line.map(|l| format!("{name}: {l}"))),
        };
        // The watchdog's way to ask every rank where it is when MPI hangs,
        // set up now, before anything is timed (one broadcast, one gather).
        if cfg.timeout.is_some() {
            let _ = survey.set(crate::job::survey::Survey::open(&world, &topo::hostname(), progress.clone()));
        }
        let (gpu, lane_gpus) = match gpu {
            None => (None, Vec::new()),
            Some(g) => match agree_failures(&world, g.as_ref().err().map(ToString::to_string).as_deref()) {
                Ok(()) => {
                    let mut all = g.unwrap_or_default().into_iter();
                    (all.next(), all.collect())
                }
                Err(line) => return refuse(world, line.map(|l| format!("{name}: {l}"))),
            },
        };
        // A copy that runs alone says so, naming its GPU (seed 000: eight
        // copies of one test, each believing it was the whole job).
        let alone = mismatch.map(|_| {
            let info = gpu.as_ref().map(|g| &g.info);
            let alone = record::WorldOfOne {
                copies: env.size.unwrap_or(1),
                copy: env.rank,
                launcher: env.kind.to_string(),
                mpi_library: launcher::short_library_name(&world.library_version()),
                device: info.map(|g| g.index),
                pci_bus_id: info.map(|g| g.pci_bus_id.clone()),
            };
            say(&format!("{name}: {}", alone.line()));
            alone
        });
        Ok(Job {
            name,
            argv: argv(),
            env,
            world,
            placement,
            machine,
            progress,
            start,
            mpi_init,
            setup_exit: cfg.setup_exit,
            on_fire,
            watch,
            lane_gpus,
            gpu,
            alone,
        })
    }

    pub(crate) fn is_root(&self) -> bool {
        self.world.rank() == 0
    }

    /// Ends every rank at once after a failure only this rank knows about.
    pub fn abort(&self, line: &str) -> ! {
        say(line);
        let _ = io::stdout().flush();
        self.world.abort(self.setup_exit)
    }

    /// Some on every rank if `r` is Ok everywhere; otherwise None
    /// everywhere, with one line from rank 0 naming the first failing rank
    /// and its error.
    pub fn everywhere<T, E: Display>(&self, r: Result<T, E>) -> Option<T> {
        everywhere(&self.world, self.name, r)
    }

    /// Refuses message buffers of `need` bytes per rank that cannot fit in
    /// this node's available memory together with the other ranks on the
    /// node, before anything is touched (the alternative is the kernel's
    /// OOM killer). `hint` says what to lower.
    pub(crate) fn memory_check(&self, need: u128, hint: &'static str) -> Result<(), MemoryError> {
        let (on_node, _) = self.world.node_ranks();
        match topo::available_memory() {
            Some(avail) if need.saturating_mul(on_node as u128) > avail as u128 => {
                Err(MemoryError { need, on_node, available: avail as u128, hint, parts: String::new() })
            }
            _ => Ok(()),
        }
    }

    /// [`Job::memory_check`] of `more` bytes named by `parts` (a
    /// benchmark's estimate: what it adds to what each rank holds now),
    /// the parts said in the refusal.
    pub(crate) fn memory_check_parts(&self, more: u128, parts: &str, hint: &'static str) -> Result<(), MemoryError> {
        self.memory_check(more, hint).map_err(|e| MemoryError { parts: format!(": {parts}"), ..e })
    }

    /// Creates the result files on rank 0 (`create`, None for no files)
    /// and tells every rank whether that worked; on failure every rank
    /// returns Err, carrying the error on rank 0 (None elsewhere).
    pub(crate) fn open_results<F, E>(
        &self,
        create: impl FnOnce() -> Result<Option<F>, E>,
    ) -> Result<Option<F>, Option<E>> {
        let mut outcome = Ok(None);
        if self.is_root() {
            outcome = create().map_err(Some);
        }
        match (self.world.bcast_u64(u64::from(outcome.is_ok())), outcome) {
            (1, o) => o,
            (_, Err(e)) => Err(e),
            (_, Ok(_)) => Err(None),
        }
    }

    /// Every rank's placement, in rank order, at rank 0 (empty elsewhere).
    pub fn gather_ranks(&self) -> Vec<RankInfo> {
        gather_ranks(&self.world, &self.env, Some(&self.placement), None, Vec::new())
    }

    /// [`Job::gather_ranks`] with each rank's end of the measured paths
    /// (its first GPU's, then its other GPUs' where it drives several).
    pub(crate) fn gather_ranks_with(
        &self,
        end: Option<crate::peak::RankEnd>,
        lane_ends: Vec<crate::peak::RankEnd>,
    ) -> Vec<RankInfo> {
        gather_ranks(&self.world, &self.env, Some(&self.placement), end, lane_ends)
    }

    /// This rank's end of the paths a run measures: its host, its NIC's
    /// link (placement's choice, else the node's only usable one), and
    /// with `copy_bytes` its core's copy rate, measured with every other
    /// rank's at once (a collective call: every rank passes the same).
    pub fn path_end(&self, copy_bytes: Result<usize, String>) -> crate::peak::RankEnd {
        use crate::peak::{copy_rate, link};
        let chosen = self.placement.nic.as_ref().map(|n| n.name.as_str());
        let nic = match &self.machine {
            Ok(m) => link::nic_link(m, chosen, std::path::Path::new("/sys")),
            Err(e) => Err(format!("no node map: {e}")),
        };
        let (copy, copy_unknown) = match copy_bytes {
            Ok(bytes) => {
                self.world.barrier();
                match copy_rate::measure(bytes) {
                    Some(c) => (Some(c), None),
                    None => (None, Some(format!("could not copy {bytes} bytes"))),
                }
            }
            Err(why) => (None, Some(why)),
        };
        let (nic, nic_unknown) = match nic {
            Ok(l) => (Some(l), None),
            Err(e) => (None, Some(e)),
        };
        let package = self.machine.as_ref().ok().and_then(|m| match m.packages_of(&affinity::allowed_cpus())[..] {
            [one] => Some(one),
            _ => None,
        });
        crate::peak::RankEnd {
            host: self.world.processor_name(),
            package,
            nic,
            nic_unknown,
            copy,
            copy_unknown,
            gpu: None,
        }
    }

    /// The run record's header for a run that has just started.
    pub fn header(&self, ranks: Vec<RankInfo>) -> RunHeader {
        RunHeader::running(
            self.argv.clone(),
            self.start.rfc3339(),
            &self.world,
            record::LauncherInfo { kind: self.env.kind.into(), size: self.env.size, world_of_one: self.alone.clone() },
            ranks,
        )
    }

    /// Writes `rec` to `path` (rank 0) and lets the watchdog mark it as
    /// timed out, and the signal thread as interrupted or failed, before
    /// they end the job (see [`crate::job::signals`]). `header` finds the header
    /// inside; the ranks it lists are the ones watched.
    pub fn record<R: Serialize + Send + 'static>(
        &self,
        mut rec: R,
        path: PathBuf,
        header: fn(&mut R) -> &mut RunHeader,
    ) -> io::Result<RecordFile<R>> {
        // With room for its end, which a full disk cannot then refuse.
        record::write_json_with_room(&rec, &path)?;
        let ranks = header(&mut rec).ranks.clone();
        let file = RecordFile { rec: Arc::new(Mutex::new(rec)), path, header };
        if let Ok(mut slot) = self.on_fire.lock() {
            *slot = Some(timeout_marker(file.rec.clone(), file.path.clone(), header));
        }
        self.watch.arm(record::end_marker(file.rec.clone(), file.path.clone(), header), &ranks);
        let mark = record::end_marker(file.rec.clone(), file.path.clone(), header);
        crate::fatal::set_record_end(Box::new(move |line: &str, code: i32| {
            mark(RunStatus::Error, line, code);
        }));
        Ok(file)
    }

    /// Tells every rank where rank 0's run record is (`path` on rank 0,
    /// None for no record; collective), so that another rank can end it
    /// when rank 0 cannot: its watchdog's `timeout`, or rank 0 gone after
    /// a signal (see [`crate::report::record_end`]).
    pub(crate) fn share_record(&self, path: Option<&Path>) {
        let place = path.filter(|_| self.is_root()).map(RecordPlace::of_rank0);
        let bytes = self.world.bcast_bytes(&RecordPlace::encode(place.as_ref()));
        let (_, local) = self.world.node_ranks();
        let rank = self.world.rank();
        let Some(place) = RecordPlace::decode(&bytes).filter(|_| rank != 0) else { return };
        let file = place.path.clone();
        if let Ok(mut slot) = self.on_fire.lock() {
            let file = file.clone();
            *slot = Some(Box::new(move |msg: &str| {
                let _ = record_end::end_on_disk(&file, RunStatus::Timeout, msg, watchdog::TIMEOUT_EXIT, rank);
            }));
        }
        {
            let file = file.clone();
            crate::fatal::set_record_end(Box::new(move |line: &str, code: i32| {
                let _ = record_end::end_on_disk(&file, RunStatus::Error, line, code, rank);
            }));
        }
        self.watch.follow(place, rank, local);
    }

    /// Readies the started job for the next benchmark of a shared launch
    /// (`commbench suite --one-launch`, src/runner/sequence.rs): its name in
    /// every line, its command line and start in its run record, the
    /// watchdog's position back at the start, this rank's load trace begun
    /// again, and nothing left that would end the previous benchmark's run
    /// record, which has ended. Every rank calls it.
    pub(crate) fn next_benchmark(&mut self, name: &'static str, argv: Vec<String>) {
        self.name = name;
        self.argv = argv;
        self.start = Utc::now();
        crate::fatal::set_program(name);
        crate::fatal::clear_record_end();
        if let Ok(mut slot) = self.on_fire.lock() {
            *slot = None;
        }
        self.watch.disarm();
        self.progress.enter(Step::Startup, None, 0);
        crate::procs::load::restart();
    }

    /// Marks the watchdog's position.
    pub fn step(&self, step: Step) {
        self.progress.set_step(step);
    }

    /// Finalises MPI for a job ending with exit status `code` (see
    /// [`end_world`]).
    pub fn finish(self, code: i32) {
        end_world(self.world, code);
    }
}

/// Message buffers that would not fit in the node's memory.
#[derive(Debug, thiserror::Error)]
#[error(
    "this run needs about {} more memory per rank{parts} ({on_node} rank(s) on this node) but only {} is available ({hint})",
    crate::bytes::human_bytes(*need),
    crate::bytes::human_bytes(*available)
)]
pub(crate) struct MemoryError {
    pub need: u128,
    pub on_node: usize,
    pub available: u128,
    /// What to lower (`lower -m or -W`).
    pub hint: &'static str,
    /// What the need is made of, when known (`: buffers 2 GiB, ...`).
    pub parts: String,
}

/// [`Job::everywhere`] over any control plane.
pub fn everywhere<C: Control, T, E: Display>(w: &C, name: &str, r: Result<T, E>) -> Option<T> {
    let mine = r.as_ref().err().map(|e| e.to_string());
    match agree_failures(w, mine.as_deref()) {
        Ok(()) => r.ok(),
        Err(line) => {
            if let Some(line) = line {
                say(&format!("{name}: {line}"));
            }
            None
        }
    }
}

/// The run record of a job on rank 0, shared with the watchdog.
pub struct RecordFile<R> {
    rec: Arc<Mutex<R>>,
    path: PathBuf,
    header: fn(&mut R) -> &mut RunHeader,
}

impl<R: Serialize> RecordFile<R> {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Changes the record in memory (written at the end, or by the
    /// watchdog).
    pub(crate) fn update(&self, f: impl FnOnce(&mut R)) {
        if let Ok(mut r) = self.rec.lock() {
            f(&mut r);
        }
    }

    /// Marks the run ended and rewrites the record, unless the watchdog or
    /// the signal thread ended it first (the process is then ending).
    pub fn end(&self, ending: &Ending, exit_code: i32) -> io::Result<()> {
        let Ok(mut r) = self.rec.lock() else { return Ok(()) };
        let h = (self.header)(&mut r);
        if h.status != RunStatus::Running {
            return Ok(());
        }
        h.end(ending.status(), ending.detail(), exit_code);
        let mut written = record::write_json(&*r, &self.path);
        // On a full disk the end must fit the room the record was written
        // with: the ranks' load samples are what it can spare, the
        // per-size ones first, then all (the record's other facts stay).
        for all in [false, true] {
            match &written {
                Err(e) if crate::report::safe_file::is_full(e) && (self.header)(&mut r).shed_loads(all) => {
                    written = record::write_json(&*r, &self.path);
                }
                _ => break,
            }
        }
        written
    }
}

/// Where this rank runs: host, pid, allowed cpus, local rank.
pub(crate) fn rank_info(world: &World, env: &LauncherEnv, placement: Option<&RankPlacement>) -> RankInfo {
    let cpus = affinity::allowed_cpus();
    RankInfo {
        rank: world.rank(),
        host: world.processor_name(),
        pid: std::process::id(),
        cpus: cpuset::format_list(&cpus),
        cpu_count: cpus.len(),
        local_rank: env.local_rank,
        placement: placement.cloned(),
        path_end: None,
        lane_ends: Vec::new(),
        load: Some(crate::procs::load::RankLoad { before: crate::procs::load::begin(), ..Default::default() }),
    }
}

/// Every rank's placement, in rank order, at rank 0 (empty elsewhere).
pub(crate) fn gather_ranks(
    world: &World,
    env: &LauncherEnv,
    placement: Option<&RankPlacement>,
    end: Option<crate::peak::RankEnd>,
    lane_ends: Vec<crate::peak::RankEnd>,
) -> Vec<RankInfo> {
    let mine = RankInfo { path_end: end, lane_ends, ..rank_info(world, env, placement) };
    let mine = serde_json::to_vec(&mine).unwrap_or_default();
    world.gather_bytes(&mine).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect()
}

/// What every rank saw competing with it over the run
/// (crate::procs::load), in rank order, at rank 0 (empty elsewhere;
/// collective): its last sample is taken now, after the last size.
pub(crate) fn gather_loads(world: &World) -> Vec<Option<crate::procs::load::RankLoad>> {
    let mine = serde_json::to_vec(&crate::procs::load::finish()).unwrap_or_default();
    world.gather_bytes(&mine).iter().map(|b| serde_json::from_slice(b).ok().flatten()).collect()
}

/// A watchdog action that marks the shared record as timed out and
/// rewrites it at `path` before the watchdog ends the job; `header` finds
/// the header inside the record. It does not wait for a record that is
/// being written.
fn timeout_marker<R: Serialize + Send + 'static>(
    record: std::sync::Arc<std::sync::Mutex<R>>,
    path: std::path::PathBuf,
    header: fn(&mut R) -> &mut RunHeader,
) -> watchdog::OnFire {
    let mark = record::end_marker(record, path, header);
    Box::new(move |msg: &str| {
        mark(RunStatus::Timeout, msg, watchdog::TIMEOUT_EXIT);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_as_recorded() {
        assert_eq!((Ending::Complete.status(), Ending::Complete.detail()), (RunStatus::Complete, None));
        let v = Ending::ValidationFailed { size: 64 };
        assert_eq!(
            (v.status(), v.detail().as_deref()),
            (RunStatus::ValidationFailed, Some("validation failed at message size 64"))
        );
        assert_eq!(Ending::Error { detail: "x".into() }.detail().as_deref(), Some("x"));
        assert_eq!((Ending::Passed.status(), Ending::Failed.status()), (RunStatus::Passed, RunStatus::Failed));
    }

    #[test]
    fn everywhere_agrees_on_mock_ranks() {
        use crate::backend::mock::{self, Model};
        use crate::backend::Transport;
        let out = mock::run(3, Model::default(), |t| {
            let r: Result<u32, String> = if t.world().rank() == 1 { Err("no memory".into()) } else { Ok(7) };
            everywhere(t.world(), "osu_x", r)
        });
        assert_eq!(out, vec![None, None, None]);
        let out = mock::run(2, Model::default(), |t| everywhere(t.world(), "osu_x", Ok::<u32, String>(7)));
        assert_eq!(out, vec![Some(7), Some(7)]);
    }
}
