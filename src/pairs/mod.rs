//! `commbench pairs`: all-pairs and bisection bandwidth validation. Ranks
//! are paired by a scheme (`schedule`), every pair of a round is measured
//! at once in both directions (`measure`, over a `transport`), rank 0
//! collects each round (`results`), sets each direction against its
//! path's peak (`paths`, crate::peak), applies the PASS criteria
//! (`criteria`), locates failures (`blame`), prints the table (`report`)
//! and writes matrices, heatmaps, the host summary and the run record
//! (`output`, `matrix`, `record`; the matrix CSV and heatmap are the shared
//! `crate::matrix`).
//!
//! Exit status: 0 every pair passes, 1 some pair fails, 2 bad options or a
//! run that could not be set up, 124 the --timeout watchdog fired.

pub mod blame;
pub mod criteria;
pub mod matrix;
pub mod measure;
pub mod options;
pub mod output;
pub mod paths;
pub mod record;
pub mod report;
pub mod results;
pub mod schedule;
pub(crate) mod units;

use std::io::{self, Write};
use std::time::Instant;

use crate::backend::mpi_host::MpiHost;
use crate::backend::{Control, Memory, Transport};
use crate::job::watchdog::Step;
use crate::job::{say, Ending, Job, JobConfig, RecordFile};
use crate::matrix::heatmap::HeatmapSpec;
use crate::report::placement::WarnContext;
use crate::report::record::RankInfo;
use measure::{PairBuffers, RoundPlan};
use options::{Config, PairsBackend, Parsed};
use output::PairsFiles;
use paths::PairPeaks;
use record::{Outcome, PairsRecord, ScheduleInfo};
use schedule::{Schedule, Scheme};

pub(crate) const EXIT_PASS: i32 = 0;
pub(crate) const EXIT_FAIL: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;

const NAME: &str = "commbench pairs";

fn out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Entry point: the arguments after `pairs`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let env = crate::job::launcher::detect();
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
    let mut schedule = None;
    let job_cfg = JobConfig {
        name: NAME,
        timeout: cfg.timeout,
        placement: &cfg.placement,
        setup_exit: EXIT_USAGE,
        name_shape_lines: true,
        gpu: false,
        threads: crate::backend::world::ThreadLevel::Single,
        lanes: 1,
        alone_runs: false,
    };
    if cfg.backend == PairsBackend::Ucx {
        crate::backend::quiet_ucx_by_default();
    }
    let job = match Job::start(job_cfg, env, |world, _gpu| {
        schedule = Some(Schedule::new(cfg.scheme, world.size(), cfg.random()).map_err(|e| format!("{NAME}: {e}"))?);
        Ok::<(), String>(())
    }) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let Some(schedule) = schedule else { return EXIT_USAGE };
    let code = match cfg.backend {
        PairsBackend::Mpi => {
            let t = MpiHost::new(&job.world);
            Session { cfg, schedule, job: &job }.run(&t)
        }
        #[cfg(ucx)]
        PairsBackend::Ucx => match job.everywhere(crate::backend::ucx::Ucx::new(&job.world)) {
            Some(t) => Session { cfg, schedule, job: &job }.run(&t),
            None => EXIT_USAGE,
        },
        #[cfg(not(ucx))]
        PairsBackend::Ucx => {
            let _ = job.everywhere(Err::<(), _>(ucx_sys::LoadError::NotBuilt));
            EXIT_USAGE
        }
    };
    job.finish(code);
    code
}

/// A started job measuring pairs.
struct Session<'a> {
    cfg: Config,
    schedule: Schedule,
    job: &'a Job,
}

impl Session<'_> {
    fn round_plan(&self) -> RoundPlan {
        RoundPlan {
            bytes: self.cfg.size_bytes,
            window: self.cfg.window,
            iterations: self.cfg.iterations,
            warmup: self.cfg.warmup,
            latency_iterations: self.cfg.latency.map_or(0, |l| l.iterations),
            latency_warmup: self.cfg.latency.map_or(0, |l| l.warmup),
            latency_bytes: self.cfg.latency.map_or(0, |l| l.size_bytes),
        }
    }

    fn new_record(&self, transport: &str, ranks: Vec<RankInfo>) -> PairsRecord {
        PairsRecord {
            schema: record::SCHEMA.into(),
            command: "pairs".into(),
            run: self.job.header(ranks),
            transport: transport.into(),
            config: self.cfg.clone(),
            schedule: ScheduleInfo { rounds: self.schedule.len(), directions: self.schedule.directions() },
            files: Default::default(),
            paths: Vec::new(),
            outcome: None,
            backend_details: None,
        }
    }

    fn run<T: Transport>(self, t: &T) -> i32 {
        let job = self.job;
        let transport = format!("{}-{}", T::BACKEND, T::Mem::MEMORY);
        job.step(Step::Startup);
        let lat = self.cfg.latency.map_or(0, |l| l.size_bytes);
        // One send and one receive buffer, and a send and a receive request
        // for every message of the window (each with the MPI library's
        // request state), and what MPI maps on first traffic.
        use crate::bench::engine::memory::{MPI_FIRST_TRAFFIC, REQUEST_BYTES};
        let requests = 2 * self.cfg.window as u128 * REQUEST_BYTES;
        let need = (2 * self.cfg.size_bytes + lat) as u128 + requests + MPI_FIRST_TRAFFIC;
        if job.everywhere(job.memory_check(need, "lower --size or -W")).is_none() {
            return EXIT_USAGE;
        }
        // This rank's end of the paths, before the pair buffers exist so
        // the copy rate's buffers never add to them (every rank at once).
        let end = if T::Mem::MEMORY == "host" {
            job.path_end(Ok(crate::peak::copy_rate::bytes_for(self.cfg.size_bytes)))
        } else {
            let why = format!(
                "the buffers are in {} memory, whose paths' peaks commbench does not derive yet",
                T::Mem::MEMORY
            );
            job.path_end(Err(why))
        };
        let Some(mut bufs) = job.everywhere(PairBuffers::new(t, self.round_plan())) else {
            return EXIT_USAGE;
        };
        let mut files = match job.open_results(|| {
            let slurm_job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
            PairsFiles::create(&self.cfg.results, &job.start.compact(), slurm_job.as_deref())
        }) {
            Ok(f) => f,
            Err(e) => {
                if let Some(e) = e {
                    say(&format!("{NAME}: {e}"));
                }
                return EXIT_USAGE;
            }
        };
        let ranks = job.gather_ranks_with(Some(end), Vec::new());
        let root = job.is_root();
        let placement_warnings = if root {
            let ctx = WarnContext { benchmark: NAME.into(), pairs: Vec::new(), allocation_nodes: None };
            crate::report::placement::print(&ranks, &ctx, true)
        } else {
            Vec::new()
        };
        let n = job.world.size();
        let hosts: Vec<String> =
            (0..n).map(|r| ranks.iter().find(|x| x.rank == r).map(|x| x.host.clone()).unwrap_or("?".into())).collect();
        // Rank 0's: the others' ranks are empty.
        let peaks = if root { PairPeaks::from_ranks(n, &ranks) } else { PairPeaks::default() };
        let details = t.record_info();
        let mut rec = self.new_record(&transport, ranks);
        rec.backend_details = details;
        rec.run.placement_warnings = placement_warnings;
        let mut record = None;
        if let Some(path) = files.as_ref().filter(|_| root).map(|f| f.record_path.clone()) {
            match job.record(rec, path.clone(), |r| &mut r.run) {
                Ok(r) => record = Some(r),
                Err(e) => {
                    // A run that never started leaves no file behind.
                    if let Some(f) = files.take() {
                        f.discard();
                    }
                    job.abort(&format!("{NAME}: cannot write {}: {e}", path.display()))
                }
            }
            if let Some(f) = &files {
                say(&format!(
                    "{NAME}: results in {} and its siblings (run record {})",
                    f.measurements_path.display(),
                    f.record_path.display()
                ));
            }
        }
        job.share_record(record.as_ref().map(|r| r.path()));
        if root {
            let idle = self.schedule.never_busy();
            out(&report::header(&self.cfg, n, self.schedule.len(), &transport, &idle));
        }

        let me = job.world.rank();
        let mut m = results::Measurements::default();
        for i in 0..self.schedule.len() {
            let began = Instant::now();
            let round = self.schedule.round(i);
            let flow = round.flows[me];
            let res = measure::run_round(t, &mut bufs, me, flow, &job.progress);
            let gathered = job.world.gather_f64_slice(&results::encode(&res));
            if !root {
                continue;
            }
            let (before, lat_before) = (m.directed.len(), m.latency.len());
            m.add_round(i + 1, &round, &gathered);
            if let Some(f) = files.as_mut() {
                let counts = (self.cfg.size_bytes, self.cfg.window, self.cfg.iterations);
                let (directed, latency) = (&m.directed[before..], &m.latency[lat_before..]);
                if let Err(e) = f.append_round(directed, latency, &hosts, &peaks, counts) {
                    let line = format!("{NAME}: cannot write {}: {e}", f.measurements_path.display());
                    if let Some(r) = &record {
                        let _ = r.end(&Ending::Error { detail: line.clone() }, EXIT_USAGE);
                    }
                    job.abort(&line);
                }
            }
            // Live: one line per round as it ends (one write, flushed).
            out(&report::round_line(
                i + 1,
                self.schedule.len(),
                began.elapsed().as_secs_f64(),
                &m.directed[before..],
                &m.latency[lat_before..],
                &self.cfg.criteria,
            ));
        }
        job.step(Step::Finish);
        let code = if root { self.finish(&m, &hosts, &peaks, files.as_mut(), record.as_ref(), &transport) } else { 0 };
        job.world.bcast_u64(code as u64) as i32
    }

    /// Rank 0: verdict, stdout, matrices, heatmaps, host summary, record.
    fn finish(
        &self,
        m: &results::Measurements,
        hosts: &[String],
        peaks: &PairPeaks,
        files: Option<&mut PairsFiles>,
        record: Option<&RecordFile<PairsRecord>>,
        transport: &str,
    ) -> i32 {
        let n = hosts.len();
        let rows = m.pair_rows();
        let expect_both = matches!(self.cfg.scheme, Scheme::Shift(None)) || self.schedule.is_pairing();
        let eval = criteria::evaluate(&rows, &self.cfg.criteria, expect_both, &|s, d| peaks.peak_bps(s, d));
        let blame = blame::blame(&rows, &eval, hosts);
        let directions = rows.iter().flat_map(|r| [(r.a, r.b, r.ab), (r.b, r.a, r.ba)]);
        let groups = paths::group(peaks, directions.filter_map(|(s, d, v)| Some((s, d, v?))));
        let input = report::ReportInput {
            config: &self.cfg,
            np: n,
            rounds: self.schedule.len(),
            transport,
            hosts,
            rows: &rows,
            eval: &eval,
            blame: &blame,
            peaks,
            paths: &groups,
        };
        out(&report::table(&input));
        out(&report::summary(&input));
        let mut code = if eval.passed() { EXIT_PASS } else { EXIT_FAIL };
        let judged = self.cfg.criteria.any();
        let mut detail = None;
        if let Some(f) = files {
            if let Err(e) = self.write_outputs(f, m, &input) {
                say(&format!("{NAME}: cannot write results: {e}"));
                detail = Some(e.to_string());
                code = EXIT_USAGE;
            }
            if let Some(rec) = record {
                rec.update(|r| {
                    r.files = f.written.clone();
                    r.paths = groups.clone();
                    r.outcome = Some(Outcome::new(&rows, &eval, &blame, hosts, judged));
                });
                let ending = match code {
                    // Nothing was judged: complete, not passed.
                    EXIT_PASS if !judged => Ending::Complete,
                    EXIT_PASS => Ending::Passed,
                    EXIT_FAIL => Ending::Failed,
                    _ => Ending::Error { detail: detail.unwrap_or_default() },
                };
                if let Err(e) = rec.end(&ending, code) {
                    say(&format!("{NAME}: cannot write {}: {e}", rec.path().display()));
                    code = EXIT_USAGE;
                    // The end that fits, so that it does not stay `running`.
                    crate::report::record::end_on_full_disk(rec.path(), &e, ending.status(), code);
                }
            }
            if let Some(h) = &self.cfg.history {
                // After the record's end, so the history reads how the run
                // ended; its lines say what it took, the verdict stays.
                crate::history::add(h, std::slice::from_ref(&f.measurements_path), None, true);
            }
        }
        code
    }

    /// Matrices, heatmaps and the host summary, from what the report shows.
    fn write_outputs(
        &self,
        f: &mut PairsFiles,
        m: &results::Measurements,
        input: &report::ReportInput,
    ) -> io::Result<()> {
        let (eval, rows, hosts, peaks) = (input.eval, input.rows, input.hosts, input.peaks);
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
            crate::bytes::exact_label(self.cfg.size_bytes as u64),
            self.cfg.window,
            n
        );
        let bw = matrix::bandwidth(n, m);
        let failed_bw = |r: usize, c: usize| bad_dir[r * n + c];
        let spec = HeatmapSpec {
            title: "Bandwidth by direction (MB/s)",
            subtitle: &subtitle,
            axes: matrix::RANK_AXES,
            unit: "MB/s",
            scale: 1e-6,
            higher_is_better: true,
            hosts,
            failed: &failed_bw,
        };
        f.write_matrix("bw_MBps", &bw, "sender\\receiver", &spec)?;
        // Written when some direction's peak is known.
        let eff = matrix::efficiency(n, m, &|s, d| peaks.peak_bps(s, d));
        if !eff.is_empty() {
            let spec =
                HeatmapSpec { title: "Bandwidth by direction (% of the path's peak)", unit: "%", scale: 1.0, ..spec };
            f.write_matrix("eff_pct", &eff, "sender\\receiver", &spec)?;
        }
        if let Some(l) = self.cfg.latency {
            let lat = matrix::latency(n, m);
            let subtitle = format!(
                "scheme {}, {} byte ping-pong, {} round trips, {} processes",
                self.cfg.scheme, l.size_bytes, l.iterations, n
            );
            let failed_lat = |r: usize, c: usize| bad_lat[r * n + c];
            let spec = HeatmapSpec {
                title: "Latency (us, half the round trip)",
                subtitle: &subtitle,
                axes: matrix::RANK_AXES,
                unit: "us",
                scale: 1e6,
                higher_is_better: false,
                hosts,
                failed: &failed_lat,
            };
            f.write_matrix("lat_us", &lat, "rank\\rank", &spec)?;
        }
        f.write_hosts(input.blame)
    }
}
