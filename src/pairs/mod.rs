//! `commbench pairs`: all-pairs and bisection bandwidth validation. Ranks
//! are paired by a scheme (`schedule`), every pair of a round is measured
//! at once in both directions (`measure`, over a `transport`), rank 0
//! collects each round (`results`), applies the PASS criteria
//! (`criteria`), locates failures (`blame`), prints the table (`report`)
//! and writes matrices, heatmaps, the host summary and the run record
//! (`output`, `matrix`, `heatmap`, `record`).
//!
//! Exit status: 0 every pair passes, 1 some pair fails, 2 bad options or a
//! run that could not be set up, 124 the --timeout watchdog fired.

pub mod blame;
pub mod criteria;
pub mod heatmap;
pub mod matrix;
pub mod measure;
pub mod options;
pub mod output;
pub mod record;
pub mod report;
pub mod results;
pub mod schedule;
pub mod transport;
pub mod units;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::backend::mpi::Mpi;
use crate::bench::runner;
use crate::launcher::{self, LauncherEnv};
use crate::report::record::{timeout_marker, write_json, RunHeader, RunStatus};
use crate::report::time::Utc;
use crate::topo::placement;
use crate::topo::report::{RankPlacement, WarnContext};
use crate::watchdog::{self, OnFire, Progress, Step};
use options::{Config, Parsed};
use output::PairsFiles;
use record::{Outcome, PairsRecord, ScheduleInfo};
use schedule::{Schedule, Scheme};
use transport::{BufferPlan, HostMpi, PairTransport};

pub const EXIT_PASS: i32 = 0;
pub const EXIT_FAIL: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

const NAME: &str = "commbench pairs";

/// Seconds between progress lines on stderr during long runs.
const PROGRESS_EVERY_S: u64 = 10;

fn say(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

fn out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Entry point: the arguments after `pairs`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let env = launcher::detect();
    let leader = env.is_leader();
    let cfg = match options::parse(args) {
        Ok(Parsed::Run(c)) => *c,
        Ok(Parsed::Help(text)) => {
            if leader {
                out(&text);
            }
            return EXIT_PASS;
        }
        Err(line) => {
            if leader {
                say(&format!("{NAME}: {line}"));
            }
            return EXIT_USAGE;
        }
    };
    runner::install_panic_hook(NAME);
    let progress = Arc::new(Progress::default());
    let on_fire: Arc<Mutex<Option<OnFire>>> = Arc::new(Mutex::new(None));
    if let Some(t) = cfg.timeout {
        let rank = env.rank.map(|r| r.to_string()).unwrap_or_else(|| "?".into());
        watchdog::start(
            progress.clone(),
            t,
            format!("{NAME} rank {rank} on {}", crate::topo::hostname()),
            on_fire.clone(),
        );
    }
    let start = Utc::now();
    // Binding and NIC variables must be in place before MPI starts.
    let prepared = placement::prepare(&env, &cfg.placement);
    let Some(mpi) = Mpi::init() else {
        say(&format!("{NAME}: MPI was initialised before commbench could do it"));
        return EXIT_USAGE;
    };
    let n = mpi.size() as usize;
    if let Some(msg) = env.mismatch(n, &mpi.library_version()) {
        if leader {
            say(&format!("{NAME}: {msg}"));
        }
        mpi.finalize();
        return EXIT_USAGE;
    }
    let placement = match placement::confirm(&mpi, &env, prepared) {
        Ok(p) => p,
        Err(line) => {
            if let Some(line) = line {
                say(&format!("{NAME}: {line}"));
            }
            mpi.finalize();
            return EXIT_USAGE;
        }
    };
    let schedule = match Schedule::new(cfg.scheme, n, cfg.random()) {
        Ok(r) => r,
        Err(e) => {
            if mpi.rank() == 0 {
                say(&format!("{NAME}: {e}"));
            }
            mpi.finalize();
            return EXIT_USAGE;
        }
    };
    let argv = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let session = Session { cfg, env, placement, schedule, progress, on_fire, start, argv };
    let code = session.run(&mpi);
    mpi.finalize();
    code
}

/// A run past the checks that need no communication.
struct Session {
    cfg: Config,
    env: LauncherEnv,
    placement: RankPlacement,
    schedule: Schedule,
    progress: Arc<Progress>,
    on_fire: Arc<Mutex<Option<OnFire>>>,
    start: Utc,
    argv: Vec<String>,
}

impl Session {
    /// Some on every rank when `r` is Ok everywhere; otherwise None on
    /// every rank, with the error said once.
    fn everywhere<T, E: std::fmt::Display>(&self, mpi: &Mpi, r: Result<T, E>) -> Option<T> {
        let failed = mpi.allreduce_sum_u64(u64::from(r.is_err()));
        if failed == 0 {
            return r.ok();
        }
        let root_failed = mpi.bcast_u64(u64::from(r.is_err())) == 1;
        match (&r, mpi.rank() == 0) {
            (Err(e), true) => say(&format!("{NAME}: {e}")),
            (Err(e), false) if !root_failed => say(&format!("{NAME}: rank {}: {e}", mpi.rank())),
            _ => {}
        }
        None
    }

    /// Refuses buffers that cannot fit beside the other ranks of the node.
    fn memory_check(&self, mpi: &Mpi) -> Result<(), String> {
        let lat = self.cfg.latency.map_or(0, |l| l.size_bytes);
        let need = (2 * self.cfg.size_bytes + lat) as u128;
        let (on_node, _) = mpi.node_ranks();
        match crate::topo::available_memory() {
            Some(avail) if need * on_node as u128 > avail as u128 => Err(format!(
                "message buffers need {} per rank ({on_node} rank(s) on this node) but only {} of memory is \
                 available (lower --size)",
                crate::report::human_bytes(need),
                crate::report::human_bytes(avail as u128)
            )),
            _ => Ok(()),
        }
    }

    /// Creates the result files on rank 0; every rank learns whether that
    /// worked.
    fn open_results(&self, mpi: &Mpi) -> Result<Option<PairsFiles>, String> {
        let mut outcome = Ok(None);
        if mpi.rank() == 0 {
            let job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
            outcome =
                PairsFiles::create(&self.cfg.results, &self.start.compact(), job.as_deref()).map_err(|e| e.to_string());
        }
        match (mpi.bcast_u64(u64::from(outcome.is_ok())), outcome) {
            (1, o) => o,
            (_, Err(e)) => Err(e),
            (_, Ok(_)) => Err(String::new()),
        }
    }

    fn new_record(&self, mpi: &Mpi, transport: &str, ranks: Vec<crate::report::record::RankInfo>) -> PairsRecord {
        PairsRecord {
            schema: record::SCHEMA.into(),
            command: "pairs".into(),
            run: RunHeader::running(self.argv.clone(), self.start.rfc3339(), mpi, &self.env, ranks),
            transport: transport.into(),
            config: self.cfg.clone(),
            schedule: ScheduleInfo { rounds: self.schedule.len(), directions: self.schedule.directions() },
            files: Default::default(),
            outcome: None,
        }
    }

    /// Lets the watchdog mark the record before it ends the job.
    fn arm_watchdog_record(&self, rec: Arc<Mutex<PairsRecord>>, path: std::path::PathBuf) {
        if let Ok(mut slot) = self.on_fire.lock() {
            *slot = Some(timeout_marker(rec, path, |r| &mut r.run));
        }
    }

    fn run(self, mpi: &Mpi) -> i32 {
        self.progress.set_step(Step::Startup);
        if self.everywhere(mpi, self.memory_check(mpi)).is_none() {
            return EXIT_USAGE;
        }
        let mut transport = HostMpi::new(mpi);
        let plan = BufferPlan {
            bytes: self.cfg.size_bytes,
            window: self.cfg.window,
            latency_bytes: self.cfg.latency.map_or(0, |l| l.size_bytes),
        };
        if self.everywhere(mpi, transport.prepare(plan)).is_none() {
            return EXIT_USAGE;
        }
        let mut files = match self.open_results(mpi) {
            Ok(f) => f,
            Err(msg) => {
                if mpi.rank() == 0 {
                    say(&format!("{NAME}: {msg}"));
                }
                return EXIT_USAGE;
            }
        };
        let ranks = runner::gather_ranks(mpi, &self.env, Some(&self.placement));
        let root = mpi.rank() == 0;
        let placement_warnings = if root {
            let ctx = WarnContext { benchmark: NAME.into(), pairs: Vec::new(), allocation_nodes: None };
            crate::topo::report::print(&ranks, &ctx)
        } else {
            Vec::new()
        };
        let n = mpi.size() as usize;
        let hosts: Vec<String> =
            (0..n).map(|r| ranks.iter().find(|x| x.rank == r).map(|x| x.host.clone()).unwrap_or("?".into())).collect();
        let mut rec = self.new_record(mpi, transport.name(), ranks);
        rec.run.placement_warnings = placement_warnings;
        let record = Arc::new(Mutex::new(rec));
        if let Some(f) = files.as_mut().filter(|_| root) {
            if let Ok(r) = record.lock() {
                if let Err(e) = write_json(&*r, &f.record_path) {
                    say(&format!("{NAME}: cannot write {}: {e}", f.record_path.display()));
                    mpi.abort(EXIT_USAGE);
                }
            }
            self.arm_watchdog_record(record.clone(), f.record_path.clone());
            say(&format!(
                "{NAME}: results in {} and its siblings (run record {})",
                f.measurements_path.display(),
                f.record_path.display()
            ));
        }
        if root {
            let idle = self.schedule.never_busy();
            out(&report::header(&self.cfg, n, self.schedule.len(), transport.name(), &idle));
        }

        let round_plan = measure::RoundPlan {
            bytes: self.cfg.size_bytes,
            window: self.cfg.window,
            iterations: self.cfg.iterations,
            warmup: self.cfg.warmup,
            latency_iterations: self.cfg.latency.map_or(0, |l| l.iterations),
            latency_warmup: self.cfg.latency.map_or(0, |l| l.warmup),
        };
        let me = mpi.rank() as usize;
        let mut m = results::Measurements::default();
        let began = Instant::now();
        let mut last_note = Instant::now();
        for i in 0..self.schedule.len() {
            let round = self.schedule.round(i);
            let flow = round.flows[me];
            let res = measure::run_round(mpi, &mut transport, me, flow, &round_plan, &self.progress);
            let gathered = mpi.gather_f64_slice(&results::encode(&res));
            if !root {
                continue;
            }
            let (before, lat_before) = (m.directed.len(), m.latency.len());
            m.add_round(i + 1, &round, &gathered);
            if let Some(f) = files.as_mut() {
                let counts = (self.cfg.size_bytes, self.cfg.window, self.cfg.iterations);
                if let Err(e) = f.append_round(&m.directed[before..], &m.latency[lat_before..], &hosts, counts) {
                    say(&format!("{NAME}: cannot write {}: {e}", f.measurements_path.display()));
                    mpi.abort(EXIT_USAGE);
                }
            }
            if last_note.elapsed().as_secs() >= PROGRESS_EVERY_S && i + 1 < self.schedule.len() {
                say(&format!(
                    "{NAME}: round {}/{} done ({:.0} s)",
                    i + 1,
                    self.schedule.len(),
                    began.elapsed().as_secs_f64()
                ));
                last_note = Instant::now();
            }
        }
        self.progress.set_step(Step::Finish);
        let code = if root { self.finish(&m, &hosts, files.as_mut(), &record, transport.name()) } else { 0 };
        mpi.bcast_u64(code as u64) as i32
    }

    /// Rank 0: verdict, stdout, matrices, heatmaps, host summary, record.
    fn finish(
        &self,
        m: &results::Measurements,
        hosts: &[String],
        files: Option<&mut PairsFiles>,
        record: &Arc<Mutex<PairsRecord>>,
        transport: &str,
    ) -> i32 {
        let n = hosts.len();
        let rows = m.pair_rows();
        let expect_both = matches!(self.cfg.scheme, Scheme::Shift(None)) || self.schedule.is_pairing();
        let eval = criteria::evaluate(&rows, &self.cfg.criteria, expect_both);
        let blame = blame::blame(&rows, &eval, hosts);
        let input = report::ReportInput {
            config: &self.cfg,
            np: n,
            rounds: self.schedule.len(),
            transport,
            hosts,
            rows: &rows,
            eval: &eval,
            blame: &blame,
        };
        out(&report::table(&input));
        out(&report::summary(&input));
        let mut code = if eval.passed() { EXIT_PASS } else { EXIT_FAIL };
        let mut detail = None;
        if let Some(f) = files {
            if let Err(e) = self.write_outputs(f, m, &eval, &rows, &blame, hosts) {
                say(&format!("{NAME}: cannot write results: {e}"));
                detail = Some(e.to_string());
                code = EXIT_USAGE;
            }
            if let Ok(mut r) = record.lock() {
                r.files = f.written.clone();
                r.outcome = Some(Outcome::new(&rows, &eval, &blame, hosts));
                let status = match code {
                    EXIT_PASS => RunStatus::Passed,
                    EXIT_FAIL => RunStatus::Failed,
                    _ => RunStatus::Error,
                };
                r.run.end(status, detail, code);
                if let Err(e) = write_json(&*r, &f.record_path) {
                    say(&format!("{NAME}: cannot write {}: {e}", f.record_path.display()));
                    code = EXIT_USAGE;
                }
            }
        }
        code
    }

    fn write_outputs(
        &self,
        f: &mut PairsFiles,
        m: &results::Measurements,
        eval: &criteria::Evaluation,
        rows: &[results::PairRow],
        blame: &blame::Blame,
        hosts: &[String],
    ) -> io::Result<()> {
        let n = hosts.len();
        // Directions and pairs that failed, for the heatmap outlines.
        let mut bad_dir = vec![false; n * n];
        let mut bad_lat = vec![false; n * n];
        for &k in &eval.failing {
            let r = &rows[k];
            for fail in &eval.failures[k] {
                match fail.measured {
                    criteria::Measured::Forward => bad_dir[r.a * n + r.b] = true,
                    criteria::Measured::Backward => bad_dir[r.b * n + r.a] = true,
                    criteria::Measured::Latency => {
                        bad_lat[r.a * n + r.b] = true;
                        bad_lat[r.b * n + r.a] = true;
                    }
                }
            }
        }
        let subtitle = format!(
            "scheme {}, {} messages, window {}, {} processes",
            self.cfg.scheme,
            units::size_text(self.cfg.size_bytes),
            self.cfg.window,
            n
        );
        let bw = matrix::Matrix::bandwidth(n, m);
        let failed_bw = |r: usize, c: usize| bad_dir[r * n + c];
        let spec = heatmap::HeatmapSpec {
            title: "Bandwidth by direction (MB/s)",
            subtitle: &subtitle,
            unit: "MB/s",
            scale: 1e-6,
            higher_is_better: true,
            hosts,
            failed: &failed_bw,
        };
        f.write_matrix("bw_MBps", &bw, "sender\\receiver", &spec)?;
        if let Some(l) = self.cfg.latency {
            let lat = matrix::Matrix::latency(n, m);
            let subtitle = format!(
                "scheme {}, {} byte ping-pong, {} round trips, {} processes",
                self.cfg.scheme, l.size_bytes, l.iterations, n
            );
            let failed_lat = |r: usize, c: usize| bad_lat[r * n + c];
            let spec = heatmap::HeatmapSpec {
                title: "Latency (us, half the round trip)",
                subtitle: &subtitle,
                unit: "us",
                scale: 1e6,
                higher_is_better: false,
                hosts,
                failed: &failed_lat,
            };
            f.write_matrix("lat_us", &lat, "rank\\rank", &spec)?;
        }
        f.write_hosts(blame)
    }
}
