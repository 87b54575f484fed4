//! Drives one benchmark binary from argv to exit status: options, the
//! launcher and process-count checks, result files, the size and datatype
//! loops around the shared timed loop, validation verdicts, the rows for
//! every sink, the run record, and the exit path every rank takes.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::spec::{BenchSpec, MetricKind};
use super::timed_loop::{self, LoopOutcome};
use super::{counts, message_sizes, validation, Kernel, Metric, Setup, SizeCase};
use crate::backend::mpi::Mpi;
use crate::buffer::AllocError;
use crate::cli::{self, help, Options, Parsed};
use crate::launcher::{self, LauncherEnv};
use crate::report::csv::CsvSink;
use crate::report::files::{self, ResultFiles};
use crate::report::osu::{OsuTable, TableLayout, VARIED_WINDOWS};
use crate::report::record::{self, IterationPolicy, RankInfo, RunHeader, RunRecord};
use crate::report::time::Utc;
use crate::report::{Row, RunContext, Sink};
use crate::stats::{osu_tails, Samples, Summary};
use crate::topo::report::{RankPlacement, WarnContext};
use crate::topo::{self, affinity, cpuset, placement};
use crate::watchdog::{self, OnFire, Progress, Step};

/// Runs the benchmark and exits the process with its status.
pub fn main<K: Kernel>(spec: &'static BenchSpec, make: fn(&Setup) -> Result<K, AllocError>) -> ! {
    let code = run(spec, make);
    let _ = io::stdout().flush();
    std::process::exit(code)
}

/// One line on stderr (errors are always one line).
fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

pub(crate) fn install_panic_hook(name: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let loc = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        say(&format!("{name}: internal error: {msg}{loc} (please report this)"));
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: ends every rank; MPI is initialised and not finalised.
            unsafe { mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, 1) };
        }
        std::process::exit(1);
    }));
}

/// Everything rank 0 writes results to.
struct Outputs {
    table: OsuTable<io::Stdout>,
    csv: Option<CsvSink<std::fs::File>>,
}

impl Outputs {
    fn each(&mut self, f: &mut dyn FnMut(&mut dyn Sink) -> io::Result<()>) -> io::Result<()> {
        f(&mut self.table)?;
        if let Some(c) = &mut self.csv {
            f(c)?;
        }
        Ok(())
    }
}

fn run<K: Kernel>(spec: &'static BenchSpec, make: fn(&Setup) -> Result<K, AllocError>) -> i32 {
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let argv0 = argv.first().cloned().unwrap_or_else(|| spec.name.to_string());
    let env = launcher::detect();
    let leader = env.is_leader();
    let opts = match cli::parse(spec, argv.get(1..).unwrap_or(&[])) {
        Ok(Parsed::Help) => {
            if leader {
                print!("{}", help::text(spec));
            }
            return 0;
        }
        Ok(Parsed::Version) => {
            if leader {
                println!("{}", spec.title_line());
                println!("commbench {} (OSU {} compatible)", crate::VERSION, crate::OSU_VERSION);
            }
            return 0;
        }
        Err(e) => {
            if leader {
                say(&e.to_string());
            }
            return 1;
        }
        Ok(Parsed::Run(o)) => *o,
    };
    install_panic_hook(spec.name);

    let progress = Arc::new(Progress::default());
    let on_fire: Arc<Mutex<Option<OnFire>>> = Arc::new(Mutex::new(None));
    if let Some(t) = opts.timeout {
        let rank = env.rank.map(|r| r.to_string()).unwrap_or_else(|| "?".into());
        let who = format!("{} rank {rank} on {}", spec.name, topo::hostname());
        watchdog::start(progress.clone(), t, who, on_fire.clone());
    }

    let start = Utc::now();
    // Binding and NIC variables must be in place before MPI starts.
    let prepared = placement::prepare(&env, &opts.placement);
    let Some(mpi) = Mpi::init() else {
        say(&format!("{}: MPI was initialised before commbench could do it", spec.name));
        return 1;
    };
    let np = mpi.size() as usize;
    if let Some(msg) = env.mismatch(np, &mpi.library_version()) {
        if leader {
            say(&msg);
        }
        mpi.finalize();
        return 1;
    }
    let mut opts = opts;
    let pairs = match spec.check_run(np, &mut opts) {
        Ok((p, note)) => {
            if let (Some(note), 0) = (note, mpi.rank()) {
                say(&note);
            }
            p
        }
        Err(msg) => {
            if mpi.rank() == 0 {
                say(&msg);
            }
            mpi.finalize();
            return 1;
        }
    };
    let placement = match placement::confirm(&mpi, &env, prepared) {
        Ok(p) => p,
        Err(line) => {
            if let Some(line) = line {
                say(&format!("{}: {line}", spec.name));
            }
            mpi.finalize();
            return 1;
        }
    };
    Session { spec, opts, argv, argv0, env, mpi, pairs, placement, progress, on_fire, start }.run(make)
}

/// A run past the checks that need no communication.
struct Session {
    spec: &'static BenchSpec,
    opts: Options,
    argv: Vec<String>,
    argv0: String,
    env: LauncherEnv,
    mpi: Mpi,
    pairs: usize,
    placement: RankPlacement,
    progress: Arc<Progress>,
    on_fire: Arc<Mutex<Option<OnFire>>>,
    start: Utc,
}

/// How the size loop ended.
enum Ending {
    Complete,
    ValidationFailed {
        size: usize,
    },
    /// A rank could not set up a size (e.g. out of memory); said already.
    Failed {
        detail: String,
    },
}

impl Session {
    fn is_root(&self) -> bool {
        self.mpi.rank() == 0
    }

    /// Ends every rank at once after a failure only this rank knows about.
    fn abort(&self, line: &str) -> ! {
        say(line);
        let _ = io::stdout().flush();
        self.mpi.abort(1)
    }

    fn windows(&self) -> Vec<usize> {
        if !self.spec.windowed {
            vec![1]
        } else if self.opts.vary_window {
            VARIED_WINDOWS.to_vec()
        } else {
            vec![self.opts.window]
        }
    }

    /// Rank 0: prints the placement table and the misplacement warnings
    /// on stderr, and returns the warnings for the run record.
    fn placement_report(&self, ranks: &[RankInfo]) -> Vec<String> {
        let pairs = if self.spec.is_point_to_point() {
            (0..self.pairs).map(|i| (i, i + self.pairs)).collect()
        } else {
            Vec::new()
        };
        let ctx =
            WarnContext { benchmark: self.spec.name.into(), pairs, allocation_nodes: topo::report::allocation_nodes() };
        topo::report::print(ranks, &ctx)
    }

    /// Gathers every rank's placement at rank 0.
    fn gather_ranks(&self) -> Vec<RankInfo> {
        gather_ranks(&self.mpi, &self.env, Some(&self.placement))
    }

    fn new_record(&self, ranks: Vec<RankInfo>, files: &ResultFiles) -> RunRecord {
        let d = &self.spec.defaults;
        let o = &self.opts;
        RunRecord {
            schema: record::SCHEMA.into(),
            benchmark: self.spec.name.into(),
            title: self.spec.title_line(),
            run: RunHeader::running(self.argv.clone(), self.start.rfc3339(), &self.mpi, &self.env, ranks),
            options: serde_json::to_value(o).unwrap_or_default(),
            iteration_policy: IterationPolicy {
                small_iterations: o.iterations.unwrap_or(d.small_iterations),
                small_warmup: o.warmup.unwrap_or(d.small_warmup),
                large_iterations: o.iterations.unwrap_or(d.large_iterations),
                large_warmup: o.warmup.unwrap_or(d.large_warmup),
                large_above_bytes: self.spec.large_switch.then_some(super::spec::LARGE_MESSAGE_SIZE),
                window: self.spec.windowed.then_some(o.window),
                validation_warmup: o.validation_warmup,
                min_size: o.min_size,
                max_size: o.max_size,
            },
            results: record::ResultsInfo { csv: Some(files.csv_path.display().to_string()), rows: 0 },
            slurm: crate::report::slurm::SlurmInfo::from_env(),
        }
    }

    /// Refuses message sizes whose buffers cannot fit in this node's
    /// available memory together with the other ranks on the node, before
    /// anything is touched (the alternative is the kernel's OOM killer).
    fn memory_check(&self, max_window: usize) -> Result<(), String> {
        let need = super::buffer_bytes(self.spec, &self.opts, max_window, self.mpi.size() as usize);
        let (on_node, _) = self.mpi.node_ranks();
        match topo::available_memory() {
            Some(avail) if need * on_node as u128 > avail as u128 => Err(format!(
                "message buffers need {} per rank ({on_node} rank(s) on this node) but only {} of memory is \
                 available (lower -m or -W)",
                crate::report::human_bytes(need),
                crate::report::human_bytes(avail as u128)
            )),
            _ => Ok(()),
        }
    }

    /// Agrees across ranks on a step every rank takes (such as allocating
    /// buffers): Some on every rank if it worked everywhere; otherwise None
    /// everywhere, with one line from rank 0 (its own error, or how many
    /// ranks failed).
    fn everywhere<T, E: std::fmt::Display>(&self, r: Result<T, E>) -> Option<T> {
        let failed = self.mpi.allreduce_sum_u64(u64::from(r.is_err()));
        if failed == 0 {
            return r.ok();
        }
        if self.is_root() {
            match &r {
                Err(e) => say(&format!("{}: {e}", self.spec.name)),
                Ok(_) => say(&format!("{}: {failed} other rank(s) failed to set up (lower -m or -W)", self.spec.name)),
            }
        }
        None
    }

    /// Creates the result files on rank 0 and tells every rank whether
    /// that worked; on failure every rank returns the error line.
    fn open_results(&self) -> Result<Option<ResultFiles>, String> {
        let mut outcome = Ok(None);
        if self.is_root() {
            let job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
            outcome = files::create(&self.opts.results, self.spec.name, &self.start.compact(), job.as_deref())
                .map_err(|e| e.to_string());
        }
        let ok = self.mpi.bcast_u64(u64::from(outcome.is_ok()));
        match (ok, outcome) {
            (1, o) => o,
            (_, Err(e)) => Err(e),
            (_, Ok(_)) => Err(String::new()),
        }
    }

    fn run<K: Kernel>(self, make: fn(&Setup) -> Result<K, AllocError>) -> i32 {
        self.progress.set_step(Step::Startup);
        let windows = self.windows();
        let setup = Setup {
            mpi: &self.mpi,
            opts: &self.opts,
            pairs: self.pairs,
            max_window: windows.iter().copied().max().unwrap_or(1),
        };
        if self.everywhere(self.memory_check(setup.max_window)).is_none() {
            self.mpi.finalize();
            return 1;
        }
        let Some(mut kernel) = self.everywhere(make(&setup)) else {
            self.mpi.finalize();
            return 1;
        };
        let files = match self.open_results() {
            Ok(f) => f,
            Err(msg) => {
                if self.is_root() {
                    say(&format!("{}: {msg}", self.spec.name));
                }
                self.mpi.finalize();
                return 1;
            }
        };
        let ranks = self.gather_ranks();

        // Rank 0: run record, then the sinks.
        let mut record: Option<(Arc<Mutex<RunRecord>>, PathBuf)> = None;
        let mut outputs: Option<Outputs> = None;
        if self.is_root() {
            let warnings = self.placement_report(&ranks);
            let ctx = RunContext {
                benchmark: self.spec.name,
                backend: "mpi",
                np: self.mpi.size() as usize,
                pairs: self.spec.is_point_to_point().then_some(self.pairs),
            };
            let mut csv = None;
            if let Some(f) = files {
                let mut rec = self.new_record(ranks, &f);
                rec.run.placement_warnings = warnings;
                if let Err(e) = rec.write(&f.record_path) {
                    self.abort(&format!("{}: cannot write {}: {e}", self.spec.name, f.record_path.display()));
                }
                let rec = Arc::new(Mutex::new(rec));
                self.arm_watchdog_record(rec.clone(), f.record_path.clone());
                record = Some((rec, f.record_path.clone()));
                match CsvSink::new(f.csv, ctx.clone()) {
                    Ok(s) => csv = Some(s),
                    Err(e) => self.abort(&format!("{}: cannot write {}: {e}", self.spec.name, f.csv_path.display())),
                }
                say_results(self.spec.name, &f.csv_path, &f.record_path);
            }
            let layout = TableLayout {
                validation: self.opts.validation.is_some(),
                tails: self.opts.tails.clone().unwrap_or_default(),
                print_rate: self.opts.print_rate,
                vary_window: self.opts.vary_window,
                window: self.opts.window,
                pairs: self.pairs,
                full: self.opts.full,
            };
            let mut table = OsuTable::new(io::stdout(), self.spec, layout);
            if let Err(e) = table.preamble() {
                self.abort(&format!("{}: cannot write to stdout: {e}", self.spec.name));
            }
            outputs = Some(Outputs { table, csv });
        }

        let ending = self.size_loops(&mut kernel, &windows, &mut outputs, record.as_ref().map(|r| &r.0));

        self.progress.set_step(Step::Finish);
        let code = match ending {
            Ending::Complete => 0,
            Ending::ValidationFailed { .. } | Ending::Failed { .. } => 1,
        };
        if let Some((rec, path)) = &record {
            if let Ok(mut r) = rec.lock() {
                let (status, detail) = match ending {
                    Ending::Complete => (record::RunStatus::Complete, None),
                    Ending::ValidationFailed { size } => {
                        (record::RunStatus::ValidationFailed, Some(format!("validation failed at message size {size}")))
                    }
                    Ending::Failed { ref detail } => (record::RunStatus::Error, Some(detail.clone())),
                };
                r.run.end(status, detail, code);
                if let Err(e) = r.write(path) {
                    say(&format!("{}: cannot write {}: {e}", self.spec.name, path.display()));
                }
            }
        }
        let root = self.is_root();
        self.mpi.finalize();
        if let (Ending::ValidationFailed { size }, true) = (&ending, root) {
            println!("DATA VALIDATION ERROR: {} exited with status 1 on message size {size}.", self.argv0);
        }
        code
    }

    /// On rank 0, lets the watchdog mark the run record before it ends the
    /// job.
    fn arm_watchdog_record(&self, rec: Arc<Mutex<RunRecord>>, path: PathBuf) {
        if let Ok(mut slot) = self.on_fire.lock() {
            *slot = Some(record::timeout_marker(rec, path, |r| &mut r.run));
        }
    }

    fn size_loops<K: Kernel>(
        &self,
        kernel: &mut K,
        windows: &[usize],
        outputs: &mut Option<Outputs>,
        record: Option<&Arc<Mutex<RunRecord>>>,
    ) -> Ending {
        let sizes = message_sizes(self.spec, self.opts.min_size, self.opts.max_size);
        let max_iters = sizes.iter().map(|&s| counts(self.spec, &self.opts, s).0).max().unwrap_or(1);
        let mut samples = Samples::with_capacity(max_iters);
        let validating = self.opts.validation.is_some();
        for &dt in &self.opts.datatypes {
            self.emit(outputs, |s| s.begin_datatype(dt));
            for &size in &sizes {
                let count = size / dt.size();
                if count == 0 && self.spec.typed() {
                    continue;
                }
                let (iterations, warmup) = counts(self.spec, &self.opts, size);
                for &window in windows {
                    let case = SizeCase { datatype: dt, size, count, iterations, warmup, window };
                    self.progress.enter(Step::Setup, Some(dt), size);
                    if self.everywhere(kernel.prepare(&self.mpi, &case)).is_none() {
                        return Ending::Failed { detail: format!("could not set up message size {size}") };
                    }
                    if kernel.sync_before_size() {
                        self.mpi.barrier();
                    }
                    let outcome = timed_loop::run(
                        &self.mpi,
                        kernel,
                        &case,
                        validating,
                        self.opts.validation_warmup,
                        &mut samples,
                        &self.progress,
                    );
                    self.progress.set_step(Step::Results);
                    let metric = kernel.metric(&self.mpi, &case, &samples);
                    let passed = validating.then(|| self.verdict(&case, &outcome));
                    if outputs.is_some() {
                        let row = self.row(kernel, &case, metric, passed, &samples);
                        self.emit(outputs, |s| s.row(&row));
                        if let Some(rec) = record {
                            if let Ok(mut r) = rec.lock() {
                                r.results.rows += 1;
                            }
                        }
                    }
                    if passed == Some(false) {
                        return Ending::ValidationFailed { size };
                    }
                }
            }
            self.emit(outputs, |s| s.end_datatype());
        }
        Ending::Complete
    }

    /// Sends a row (or block boundary) to every sink on rank 0.
    fn emit(&self, outputs: &mut Option<Outputs>, mut f: impl FnMut(&mut dyn Sink) -> io::Result<()>) {
        if let Some(o) = outputs {
            if let Err(e) = o.each(&mut f) {
                self.abort(&format!("{}: cannot write results: {e}", self.spec.name));
            }
        }
    }

    /// Combines every rank's checks; a rank that saw wrong data says where.
    fn verdict(&self, case: &SizeCase, outcome: &LoopOutcome) -> bool {
        if let Some((iteration, m)) = &outcome.first_mismatch {
            let rank = self.mpi.rank();
            say(&format!(
                "{}: validation failed on rank {rank}: {}; {} of {} iterations wrong",
                self.spec.name,
                validation::describe_mismatch(case, *iteration, m),
                outcome.errors,
                case.iterations + case.warmup,
            ));
            if let Some(dir) = self.opts.validation.as_ref().and_then(|v| v.log_dir.as_ref()) {
                validation::write_log(dir, rank, case, *iteration, m);
            }
        }
        self.mpi.allreduce_sum_u64(outcome.errors) == 0
    }

    fn row<K: Kernel>(
        &self,
        kernel: &K,
        case: &SizeCase,
        metric: Metric,
        passed: Option<bool>,
        samples: &Samples,
    ) -> Row {
        let secs = metric.iteration_secs.as_deref().unwrap_or(samples.as_slice());
        let tails = match &self.opts.tails {
            Some(ps) => {
                let values: Vec<f64> = secs.iter().map(|&t| kernel.per_iteration(case, t)).collect();
                osu_tails(&values, ps)
            }
            None => Vec::new(),
        };
        let (avg_lat_us, bw_mbps) = match self.spec.metric {
            MetricKind::Bandwidth | MetricKind::MultiBandwidth => (None, Some(metric.value)),
            MetricKind::Latency | MetricKind::Collective | MetricKind::Barrier => (Some(metric.value), None),
        };
        Row {
            datatype: self.spec.typed().then_some(case.datatype),
            size: case.size,
            window: self.spec.windowed.then_some(case.window),
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
}

fn say_results(name: &str, csv: &std::path::Path, record: &std::path::Path) {
    say(&format!("{name}: results in {} (run record {})", csv.display(), record.display()));
}

/// Where this rank runs: host, pid, allowed cpus, local rank.
pub(crate) fn rank_info(mpi: &Mpi, env: &LauncherEnv, placement: Option<&RankPlacement>) -> RankInfo {
    let cpus = affinity::allowed_cpus();
    RankInfo {
        rank: mpi.rank() as usize,
        host: mpi.processor_name(),
        pid: std::process::id(),
        cpus: cpuset::format_list(&cpus),
        cpu_count: cpus.len(),
        local_rank: env.local_rank,
        placement: placement.cloned(),
    }
}

/// Every rank's placement, in rank order, at rank 0 (empty elsewhere).
pub(crate) fn gather_ranks(mpi: &Mpi, env: &LauncherEnv, placement: Option<&RankPlacement>) -> Vec<RankInfo> {
    let mine = serde_json::to_vec(&rank_info(mpi, env, placement)).unwrap_or_default();
    mpi.gather_bytes(&mine).iter().filter_map(|b| serde_json::from_slice(b).ok()).collect()
}
