//! `commbench gpu-bw`: copy bandwidth and latency of the CUDA GPUs of one
//! node, as CUDA's bandwidthTest (host<->GPU, within a GPU) and
//! p2pBandwidthLatencyTest (GPU-by-GPU matrices, peer access off and on)
//! measure them. Options (`options`), driver calls (`driver`), timings
//! (`measure`), results and their arithmetic (`results`), what lies
//! between GPUs (`topology`), text (`report`), files (`output`) and the run
//! record (`record`).
//!
//! Exit status: 0 measured (and every pair passes `--min-bw`), 1 a pair
//! fails `--min-bw`, or there is no CUDA driver or GPU, or a CUDA call
//! fails, 2 bad options or result files that cannot be written.

pub mod bandwidth_test;
pub(crate) mod cells;
pub mod driver;
pub mod efficiency;
pub mod kernels;
pub mod measure;
pub mod nvbandwidth;
pub mod options;
pub mod output;
pub mod p2p_test;
pub mod peaks;
pub mod record;
pub mod report;
pub mod results;
pub(crate) mod sample_args;
pub(crate) mod survey;
pub mod topology;

use std::io::{self, Write};

use crate::diag::say;
use crate::matrix::heatmap::HeatmapSpec;
use crate::report::record::RunStatus;
use crate::report::time::Utc;
use driver::{CudaError, Device};
use measure::{Lane, Notes, PairBuffers, PairRig};
use options::{Config, Parsed, Test};
use output::GpuBwFiles;
use record::{GpuBwRecord, Outcome};
use results::{Kind, MatrixId, Measurement};
use topology::GpuFacts;

pub(crate) const EXIT_OK: i32 = 0;
pub(crate) const EXIT_FAIL: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;

const NAME: &str = "commbench gpu-bw";

/// Writes `text` to stdout at once (the GPU front ends' output).
fn out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = o.write_all(text.as_bytes());
    let _ = o.flush();
}

/// Entry point: the arguments after `gpu-bw`; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let cfg = match options::parse(args) {
        Ok(Parsed::Run(c)) => *c,
        Ok(Parsed::Help(text)) => {
            out(&text);
            return EXIT_OK;
        }
        Err(e) => {
            say(&format!("{NAME}: {e}"));
            return EXIT_USAGE;
        }
    };
    crate::job::install_panic_hook(NAME);
    let described = match cfg.machine.as_deref().map(crate::topo::describe::load).transpose() {
        Ok(m) => m,
        Err(e) => {
            say(&format!("{NAME}: --machine: {e}"));
            return EXIT_USAGE;
        }
    };
    let host = crate::topo::hostname();
    let command_line: Vec<String> =
        ["commbench".to_string(), "gpu-bw".to_string()].into_iter().chain(args.iter().cloned()).collect();
    let (devices, count) = match open_gpus(&cfg, &host) {
        Ok(d) => d,
        Err((line, code)) => {
            say(&format!("{NAME}: {line}"));
            return code;
        }
    };
    let mut rec = GpuBwRecord::running(cfg.clone(), host.clone(), command_line);
    rec.devices = count;
    rec.driver_version = driver::driver_version();
    rec.survey = survey::Survey::of(&devices, described);
    let job = std::env::var("SLURM_JOB_ID").ok().filter(|j| !j.is_empty());
    let mut files = match GpuBwFiles::create(&cfg.results, &Utc::now().compact(), job.as_deref()) {
        Ok(f) => f,
        Err(e) => {
            say(&format!("{NAME}: {e}"));
            return EXIT_USAGE;
        }
    };
    if let Some(f) = files.as_mut() {
        rec.files = f.written.clone();
        if let Err(e) = rec.write_running(&f.record_path) {
            say(&format!("{NAME}: cannot write {}: {e}", f.record_path.display()));
            // A run that never started leaves no file behind.
            if let Some(f) = files.take() {
                f.discard();
            }
            return EXIT_USAGE;
        }
        say(&format!(
            "{NAME}: results in {} and its siblings (run record {})",
            f.csv_path.display(),
            f.record_path.display()
        ));
    }
    out(&report::gpu_list(&host, rec.driver_version.as_deref(), &rec.survey.gpus));
    out(&report::path_table(&rec.survey.paths.pairs));

    let mut session =
        Session { cfg: &cfg, devices: &devices, count, files: files.as_mut(), notes: Notes::default(), ms: Vec::new() };
    let measured = session.run();
    let Session { notes, ms, .. } = session;
    rec.gate_timeouts = notes.gate_timeouts;
    rec.notes = notes.lines.clone();
    for line in &notes.lines {
        say(&format!("{NAME}: {line}"));
    }
    if notes.gate_timeouts > 0 {
        say(&format!(
            "{NAME}: {} timings started before all their copies were queued (their time may include the host's)",
            notes.gate_timeouts
        ));
    }
    let (mut status, mut detail, mut code) = match measured {
        Err(stop) => {
            let (line, code) = match stop {
                Stop::Cuda(e) => (e.to_string(), EXIT_FAIL),
                Stop::Write(line) => (line, EXIT_USAGE),
            };
            say(&format!("{NAME}: {line}"));
            (RunStatus::Error, Some(line), code)
        }
        Ok(()) => {
            let gpus: Vec<usize> = devices.iter().map(|d| d.ordinal).collect();
            let eff = efficiency_of(&cfg, &mut rec, &ms);
            let verdict = cfg.min_bw.map(|floor| report::judge(floor, &gpus, &ms, count));
            if let Some(v) = &verdict {
                out(&report::verdict_text(v, &rec.survey.paths.pairs));
                rec.outcome = Some(Outcome::of(v));
            }
            // Each asked verdict: None when nothing was judged.
            let floor = verdict.as_ref().and_then(|v| (v.judged > 0).then(|| v.passed()));
            let verdicts: Vec<bool> = [floor, eff].into_iter().flatten().collect();
            match verdicts.as_slice() {
                [] => (RunStatus::Complete, None, EXIT_OK),
                v if v.iter().all(|p| *p) => (RunStatus::Passed, None, EXIT_OK),
                _ => (RunStatus::Failed, None, EXIT_FAIL),
            }
        }
    };
    if let Some(f) = files.as_mut() {
        if let Err(e) = write_matrices(f, &cfg, &rec.survey.gpus, count, &ms) {
            say(&format!("{NAME}: cannot write results: {e}"));
            status = RunStatus::Error;
            detail = Some(e.to_string());
            code = EXIT_USAGE;
        }
        rec.files = f.written.clone();
        rec.end(status, detail, code);
        if let Err(e) = rec.write(&f.record_path) {
            say(&format!("{NAME}: cannot write {}: {e}", f.record_path.display()));
            code = EXIT_USAGE;
            // The end that fits, so that it does not stay `running`.
            crate::report::record::end_on_full_disk(&f.record_path, &e, status, code);
        }
    }
    drop(devices);
    code
}

/// Checks the driver and opens the GPUs to measure; the error is one line
/// and an exit status.
fn open_gpus(cfg: &Config, host: &str) -> Result<(Vec<Device>, usize), (String, i32)> {
    let count = driver::start(host).map_err(|f| (f.line, EXIT_FAIL))?;
    let visible = driver::visible_devices;
    if count == 0 {
        return Err((format!("no CUDA GPU on {host}{}: the driver shows none", visible()), EXIT_FAIL));
    }
    let wanted: Vec<usize> = cfg.gpus.clone().unwrap_or_else(|| (0..count).collect());
    if let Some(&bad) = wanted.iter().find(|&&g| g >= count) {
        let shown = if count == 1 { "1 GPU (0)".to_string() } else { format!("{count} GPUs (0-{})", count - 1) };
        return Err((format!("--gpus: there is no GPU {bad}: {host} shows {shown}{}", visible()), EXIT_USAGE));
    }
    let devices = wanted.iter().map(|&g| Device::open(g)).collect::<Result<Vec<_>, _>>();
    devices.map(|d| (d, count)).map_err(|e| (format!("on {host}: {e}"), EXIT_FAIL))
}

/// Prints each bandwidth against its path's peak and judges
/// `--min-efficiency`; Some(passed) when it was asked and judged anything.
fn efficiency_of(cfg: &Config, rec: &mut GpuBwRecord, ms: &[Measurement]) -> Option<bool> {
    let host = |g: usize| rec.survey.host_peak(g);
    let rows = efficiency::rows(ms, &rec.survey.paths.pairs, &host);
    let classes = efficiency::classes(&rows);
    out(&efficiency::text(&rows, &classes, cfg.peer_bytes));
    let mut e = record::Efficiency { rows, classes, ..Default::default() };
    let mut passed = None;
    if let Some(pct) = cfg.min_efficiency {
        e.failing = efficiency::judge(pct, &e.rows);
        out(&efficiency::verdict_text(pct, e.rows.len(), &e.failing));
        if !e.rows.is_empty() {
            passed = Some(e.failing.is_empty());
        }
        e.passed = passed;
    }
    rec.efficiency = Some(e);
    passed
}

/// A run in progress: the timings so far, appended to the CSV as they come.
struct Session<'a, 'd> {
    cfg: &'a Config,
    devices: &'d [Device],
    count: usize,
    files: Option<&'a mut GpuBwFiles>,
    notes: Notes,
    ms: Vec<Measurement>,
}

/// Why a run stopped early.
enum Stop {
    /// A CUDA call failed (exit status 1).
    Cuda(CudaError),
    /// The CSV could not be written (exit status 2).
    Write(String),
}

impl From<CudaError> for Stop {
    fn from(e: CudaError) -> Stop {
        Stop::Cuda(e)
    }
}

impl Session<'_, '_> {
    /// Appends new timings to the CSV and keeps them.
    fn keep(&mut self, new: Vec<Measurement>) -> Result<(), Stop> {
        if let Some(f) = self.files.as_mut() {
            if let Err(e) = f.append(&new) {
                return Err(Stop::Write(format!("cannot write {}: {e}", f.csv_path.display())));
            }
        }
        self.ms.extend(new);
        Ok(())
    }

    fn run(&mut self) -> Result<(), Stop> {
        let cfg = self.cfg;
        let lanes = self.devices.iter().map(Lane::new).collect::<Result<Vec<_>, _>>()?;
        let gpus: Vec<usize> = self.devices.iter().map(|d| d.ordinal).collect();
        if [Test::H2d, Test::D2h, Test::D2d].iter().any(|&t| cfg.runs(t)) {
            for lane in &lanes {
                let new = measure::single_gpu(lane, cfg, &mut self.notes)?;
                self.keep(new)?;
            }
            out(&report::single_gpu_table(cfg, &gpus, &self.ms));
        }
        if cfg.runs(Test::P2p) || cfg.runs(Test::Latency) {
            let bytes = cfg.peer_bytes.max(cfg.latency_bytes);
            let bufs = self.devices.iter().map(|d| PairBuffers::new(d, bytes)).collect::<Result<Vec<_>, _>>()?;
            let rig = PairRig { lanes: &lanes, bufs: &bufs };
            for i in 0..lanes.len() {
                let new = rig.diagonal(i, cfg, &mut self.notes)?;
                self.keep(new)?;
                for j in i + 1..lanes.len() {
                    let new = rig.pair(i, j, cfg, &mut self.notes)?;
                    self.keep(new)?;
                }
            }
            out(&report::pair_section(cfg, self.count, &gpus, &self.ms));
        }
        Ok(())
    }
}

/// Every GPU-by-GPU matrix that holds a value, as CSV and heatmap; the
/// heatmap's lines separate NUMA nodes.
fn write_matrices(
    f: &mut GpuBwFiles,
    cfg: &Config,
    gpus: &[GpuFacts],
    count: usize,
    ms: &[Measurement],
) -> io::Result<()> {
    let groups: Vec<String> = (0..count)
        .map(|o| match gpus.iter().find(|g| g.index == o) {
            Some(g) => g.numa_node.map_or("numa?".into(), |n| format!("numa{n}")),
            None => "unmeasured".into(),
        })
        .collect();
    let floor = cfg.min_bw.map(|b| b / 1e9);
    for id in MatrixId::ALL {
        let m = id.matrix(count, ms);
        if m.is_empty() {
            continue;
        }
        let latency = id.kind == Kind::P2pLatency;
        let subtitle = if latency {
            format!("{} bytes x {} copies per timing, GPU event time per copy", cfg.latency_bytes, cfg.latency_reps)
        } else {
            format!("{} bytes x {} copies per timing; the diagonal is left out", cfg.peer_bytes, cfg.peer_reps)
        };
        let judged = floor.filter(|_| id == MatrixId { kind: Kind::P2pUni, peer_access: true });
        let failed = |r: usize, c: usize| judged.is_some_and(|fl| m.get(r, c).is_some_and(|v| v < fl));
        let spec = HeatmapSpec {
            title: &id.title(),
            subtitle: &subtitle,
            axes: "row: source GPU, column: destination GPU; lines between NUMA nodes",
            unit: if latency { "us" } else { "GB/s" },
            scale: 1.0,
            higher_is_better: !latency,
            hosts: &groups,
            failed: &failed,
        };
        f.write_matrix(id, &m, &spec)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
