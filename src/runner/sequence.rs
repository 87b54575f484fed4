//! Several benchmarks on one job: `commbench suite --one-launch` starts
//! `commbench suite-worker PLAN` once through its launcher instead of one
//! launch per benchmark, so MPI starts once. The worker starts the job as
//! a benchmark binary would ([`Job::start`]), then runs each planned
//! benchmark on it in turn exactly as its binary runs it alone: its own
//! command line through the same options, plan, measurement and closing
//! lines ([`super::resolve_plan`], [`super::measure_and_conclude`]), with
//! fresh buffers, windows and communicators (each measurement makes and
//! drops its own), its own run record, watchdog position and load trace
//! ([`Job::next_benchmark`]).
//!
//! Between benchmarks rank 0 writes a [`Mark`] line on stdout and on
//! stderr, after a barrier, so that the suite can cut the launch's two
//! streams into each benchmark's files and know each one's exit status.
//! A benchmark that ends the job (an abort, its watchdog, a rank lost)
//! ends the launch; the suite then runs the rest again on a new one.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::{job_config, measure_and_conclude, resolve_plan, Front, Runs, RUNS};
use crate::backend::Control;
use crate::cli::{self, Parsed};
use crate::job::{say, Job};
use crate::options::{Backend, Options};

/// What the suite hands its worker: one argument, JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SharedPlan {
    /// Starts every [`Mark`] line: made by the suite for this launch, so
    /// no benchmark's output is taken for one.
    pub marker: String,
    pub benchmarks: Vec<Planned>,
}

/// One benchmark of a shared launch: its name and the command line its
/// binary would have been started with (the binary's path first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Planned {
    pub name: String,
    pub argv: Vec<String>,
}

/// A line rank 0 writes between benchmarks (after the plan's marker).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Benchmark `i` of the plan starts: what follows is its output.
    Begin(usize),
    /// Benchmark `i` ended with this exit status (its binary's).
    End(usize, i32),
    /// Every benchmark ran; the job ends.
    Done,
}

impl Mark {
    pub fn line(self, marker: &str) -> String {
        match self {
            Mark::Begin(i) => format!("{marker} begin {i}"),
            Mark::End(i, code) => format!("{marker} end {i} {code}"),
            Mark::Done => format!("{marker} done"),
        }
    }

    /// The mark `line` is (without its newline), if it is one.
    pub fn parse(line: &str, marker: &str) -> Option<Mark> {
        let rest = line.strip_prefix(marker)?.strip_prefix(' ')?;
        let words: Vec<&str> = rest.split(' ').collect();
        match words[..] {
            ["begin", i] => Some(Mark::Begin(i.parse().ok()?)),
            ["end", i, code] => Some(Mark::End(i.parse().ok()?, code.parse().ok()?)),
            ["done"] => Some(Mark::Done),
            _ => None,
        }
    }
}

/// What a benchmark's options ask of the job it runs on. Benchmarks share
/// a launch only where these are equal, since they are fixed when MPI
/// starts: the `--timeout` watchdog, placement, the GPU, the thread level
/// MPI is started with, and the backend (UCX quiets its log for the whole
/// process).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JobNeeds {
    timeout: Option<std::time::Duration>,
    placement: crate::topo::request::PlacementRequest,
    gpu: bool,
    threads: crate::backend::world::ThreadLevel,
    backend: Backend,
}

impl JobNeeds {
    fn of(spec: &crate::spec::BenchSpec, o: &Options) -> JobNeeds {
        JobNeeds {
            timeout: o.timeout,
            placement: o.placement.clone(),
            gpu: o.accel.is_some(),
            threads: spec.thread_level(),
            backend: o.backend,
        }
    }
}

/// What benchmark `name` run with `args` needs of a shared job, or None
/// when it runs alone: options that do not make a run (its binary says
/// why, alone, as it would), NCCL (its binaries say `#Using NCCL` on every
/// rank before MPI starts) or more than one GPU per process.
pub(crate) fn job_needs(name: &str, args: &[String]) -> Option<JobNeeds> {
    let runs = RUNS.iter().find(|r| r.entry.name() == name)?;
    match cli::parse(runs.entry.spec, args) {
        Ok(Parsed::Run(o)) => shares(runs.entry.spec, &o),
        _ => None,
    }
}

/// [`job_needs`] of options already parsed.
fn shares(spec: &crate::spec::BenchSpec, o: &Options) -> Option<JobNeeds> {
    (o.backend != Backend::Nccl && o.lanes() == 1 && !o.dry_run).then(|| JobNeeds::of(spec, o))
}

/// Entry point of `commbench suite-worker PLAN` (started by the suite on
/// every rank; not for use by hand). Exit 0 once every benchmark ran,
/// whatever each one's status (the marks carry those); 2 for a plan it
/// cannot run; a start-up failure's status as a binary's.
pub fn main(args: &[String]) -> i32 {
    crate::topo::hwloc::skip_unused_plugins();
    let env = crate::job::launcher::detect();
    if env.rank.is_some() {
        crate::job::signals::end_with_launcher(libc::SIGKILL);
    }
    let leader = env.is_leader();
    let refuse = |why: String| {
        if leader {
            say(&format!("commbench suite-worker: {why}"));
        }
        2
    };
    let plan: SharedPlan = match args {
        [one] => match serde_json::from_str(one) {
            Ok(p) => p,
            Err(e) => return refuse(format!("not a plan: {e}")),
        },
        _ => return refuse("usage: commbench suite-worker PLAN (started by `commbench suite --one-launch`)".into()),
    };
    let mut items: Vec<(Runs, &Planned, Options)> = Vec::new();
    for b in &plan.benchmarks {
        let Some(runs) = RUNS.iter().find(|r| r.entry.name() == b.name) else {
            return refuse(format!("no benchmark named {}", crate::diag::printable(&b.name)));
        };
        match cli::parse(runs.entry.spec, b.argv.get(1..).unwrap_or(&[])) {
            Ok(Parsed::Run(o)) if shares(runs.entry.spec, &o).is_some() => items.push((*runs, b, *o)),
            _ => return refuse(format!("{}'s options do not let it share a launch", b.name)),
        }
    }
    let Some((first, first_opts)) = items.first().map(|(r, _, o)| (r.entry.spec, o)) else {
        return refuse("the plan names no benchmark".into());
    };
    let needs = JobNeeds::of(first, first_opts);
    if let Some((r, _, _)) = items.iter().find(|(r, _, o)| JobNeeds::of(r.entry.spec, o) != needs) {
        return refuse(format!(
            "{} needs another job than {} (placement, --timeout, -d or backend)",
            r.entry.name(),
            first.name
        ));
    }
    let placement = first_opts.placement.clone();
    let cfg = job_config(Front::Osu, first.name, first, first_opts, &placement);
    if first_opts.backend == Backend::Ucx {
        crate::backend::quiet_ucx_by_default();
    }
    let mut job = match Job::start(cfg, env, |_, _| Ok::<(), String>(())) {
        Ok(j) => j,
        Err(code) => return code,
    };
    for (i, (runs, planned, opts)) in items.iter().enumerate() {
        mark(&job, &plan.marker, Mark::Begin(i));
        let spec = runs.entry.spec;
        job.next_benchmark(spec.name, planned.argv.clone());
        if job.is_root() {
            // As its binary says it, before MPI starts there.
            super::say_ignored(spec, opts);
        }
        let gpu = job.gpu.as_ref().map(|g| g.info.clone());
        let code = match resolve_plan(Front::Osu, runs.entry, opts, &job.world, gpu.as_ref()) {
            Ok(plan) => {
                measure_and_conclude(Front::Osu, &job, spec.name, &planned.argv, opts, &plan, spec, runs.measure)
            }
            Err(e) => {
                if job.is_root() {
                    say(&e.to_string());
                }
                job.setup_exit
            }
        };
        mark(&job, &plan.marker, Mark::End(i, code));
    }
    mark(&job, &plan.marker, Mark::Done);
    job.finish(0);
    0
}

/// Every rank's output so far written, then `m` from rank 0 on stdout and
/// on stderr (a collective call).
fn mark(job: &Job, marker: &str, m: Mark) {
    let _ = io::stdout().flush();
    let _ = io::stderr().flush();
    job.world.barrier();
    if job.is_root() {
        let line = m.line(marker);
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
        let mut err = io::stderr().lock();
        let _ = writeln!(err, "{line}").and_then(|()| err.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_back_and_nothing_else_is_one() {
        let m = "##cb-one-launch-42##";
        for k in [Mark::Begin(0), Mark::Begin(17), Mark::End(3, 0), Mark::End(4, 124), Mark::End(1, -1), Mark::Done] {
            assert_eq!(Mark::parse(&k.line(m), m), Some(k));
        }
        for line in [
            "# OSU MPI Latency Test v7.4",
            "##cb-one-launch-41## done",
            "##cb-one-launch-42## begin x",
            "##cb-one-launch-42##done",
            "",
        ] {
            assert_eq!(Mark::parse(line, m), None, "{line}");
        }
    }

    #[test]
    fn which_runs_share_a_job() {
        let v = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let lat = job_needs("osu_latency", &v(&["-m", "1:64"])).unwrap();
        let allreduce = job_needs("osu_allreduce", &v(&["-i", "10"])).unwrap();
        assert_eq!(lat, allreduce);
        // The thread level MPI starts with is the job's.
        assert_ne!(job_needs("osu_latency_mt", &[]), Some(lat.clone()));
        assert_ne!(job_needs("osu_latency", &v(&["--timeout", "30"])), Some(lat.clone()));
        // Help, bad options and a dry run run alone.
        assert_eq!(job_needs("osu_latency", &v(&["-h"])), None);
        assert_eq!(job_needs("osu_latency", &v(&["-m", "x"])), None);
        assert_eq!(job_needs("osu_nothing", &[]), None);
    }
}
