//! `commbench suite --one-launch`: consecutive benchmarks that need the
//! same job (the same ranks, placement, `--timeout`, GPU and backend:
//! [`crate::runner::sequence::job_needs`]) run in one launch of `commbench
//! suite-worker`, so MPI starts once for them. The launch's stdout is cut
//! at the worker's marks into each benchmark's `<bench>.txt` as it lands
//! (echoed as a launch of its own would be), its stderr into each one's
//! `<bench>.stderr` once it ended, and each benchmark gets the exit status
//! its mark carries: the run directory holds what separate launches leave.
//! A benchmark that ends the launch (its watchdog, an abort, a rank lost)
//! is recorded as it would be alone, and the suite starts the rest on a
//! new launch.

use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Job;
use crate::launch::exec::{self, Ended, Split, Status};
use crate::launch::progress::Progress;
use crate::report::safe_file;
use crate::runner::sequence::{job_needs, Mark, Planned, SharedPlan};

/// One launch several benchmarks shared, for the summary.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SharedLaunch {
    /// The benchmarks it ran (began), in order.
    pub benchmarks: Vec<String>,
    /// The benchmarks it was to run.
    pub planned: usize,
    pub command: Vec<String>,
    pub duration_s: f64,
    /// How the launch itself ended (its last benchmark's end aside).
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The runs of consecutive benchmarks that can share a launch, in order
/// (a benchmark that cannot share, or whose binary is missing, is a run of
/// its own).
pub(super) fn groups(jobs: &[Job]) -> Vec<Range<usize>> {
    let needs: Vec<_> =
        jobs.iter().map(|j| j.binary.is_file().then(|| job_needs(j.spec.name, &j.args)).flatten()).collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < jobs.len() {
        let mut end = k + 1;
        if needs[k].is_some() {
            while end < jobs.len() && jobs[end].layout == jobs[k].layout && needs[end] == needs[k] {
                end += 1;
            }
        }
        out.push(k..end);
        k = end;
    }
    out
}

/// What one shared launch gave: each benchmark it began, by its index in
/// the suite, with how it ended; and the launch itself.
pub(super) struct Ran {
    pub ended: Vec<(usize, Ended)>,
    pub launch: SharedLaunch,
}

/// The launcher's command line for a layout running a program with
/// arguments.
type CommandFor<'a> = dyn Fn(&crate::launch::Layout, &Path, &[String]) -> Vec<String> + 'a;

/// How the suite starts things, for [`run`].
pub(super) struct Start<'a> {
    /// The commbench that runs the worker (beside the benchmarks).
    pub worker: &'a Path,
    /// The launcher's command line for `layout` running `program args`.
    pub command: &'a CommandFor<'a>,
    /// Each benchmark's own command line (for its progress line).
    pub alone: &'a dyn Fn(&Job) -> Vec<String>,
    pub env: &'a [(String, String)],
    pub dir: &'a Path,
    pub echo: bool,
    pub max_time: Option<f64>,
    /// Which shared launch of the suite this is (from 1), for its files
    /// while it runs.
    pub number: usize,
}

/// Runs `jobs[range]` in one launch.
pub(super) fn run(jobs: &[Job], range: Range<usize>, st: &Start, progress: &mut Progress) -> Ran {
    let dir = st.dir;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let marker = format!("##commbench-one-launch-{}-{}-{nanos}##", std::process::id(), st.number);
    let group = &jobs[range.clone()];
    let benchmarks: Vec<Planned> = group
        .iter()
        .map(|j| {
            let mut argv = vec![j.binary.display().to_string()];
            argv.extend(j.args.iter().cloned());
            argv.extend(["--csv".to_string(), dir.join(format!("{}.csv", j.spec.name)).display().to_string()]);
            Planned { name: j.spec.name.to_string(), argv }
        })
        .collect();
    let plan = SharedPlan { marker: marker.clone(), benchmarks };
    let json = serde_json::to_string(&plan).unwrap_or_default();
    let argv = (st.command)(&group[0].layout, st.worker, &["suite-worker".to_string(), json]);
    let out = dir.join(format!(".one-launch-{}.stdout", st.number));
    let err = dir.join(format!(".one-launch-{}.stderr", st.number));
    let mut cut = Cut {
        marker: marker.clone(),
        dir: dir.to_path_buf(),
        names: group.iter().map(|j| j.spec.name).collect(),
        commands: group.iter().map(|j| crate::launch::shell_line(&(st.alone)(j))).collect(),
        first: range.start,
        echo: st.echo,
        before: Vec::new(),
        file: None,
        current: None,
        began: vec![None; group.len()],
        ended: vec![None; group.len()],
        record: None,
        last_mark: None,
    };
    let o = exec::Output { out: &out, err: &err, echo: false, record: None };
    let stop = exec::Stop { max_time: st.max_time, grace: exec::STOP_GRACE };
    let launch = exec::run_split(&argv, st.env, &o, stop, progress, &mut cut);
    drop(cut.file.take());

    let err_text = std::fs::read_to_string(&err).unwrap_or_default();
    let parts = cut_stderr(&err_text, &marker, group.len());
    let mut ended = Vec::new();
    // Where the launch ended, when a benchmark did not.
    let mut inside = None;
    for (i, began) in cut.began.iter().enumerate() {
        let Some(began) = began else { break };
        let name = group[i].spec.name;
        let text = parts[i].clone().unwrap_or_default();
        let _ = safe_file::write_new(&dir.join(format!("{name}.stderr")), text.as_bytes());
        let e = match cut.ended[i] {
            Some((code, took)) => exec::ended_with(code, took, &text),
            None => {
                // The launch ended inside this benchmark: its status is
                // the launch's, as its own launch's would have been.
                let took = began.elapsed();
                progress.finish(launch.status.word(), took);
                inside = Some(name);
                Ended {
                    status: if launch.status == Status::Passed { Status::Failed } else { launch.status },
                    exit_code: launch.exit_code.filter(|&c| c != 0).or(Some(1)),
                    took,
                    detail: exec::failure_reason(&text)
                        .or_else(|| launch.detail.clone())
                        .or_else(|| Some("the shared launch ended before this benchmark did".into())),
                }
            }
        };
        ended.push((range.start + i, e));
    }
    if ended.is_empty() {
        // Nothing began: what the launch said is kept in the suite's own
        // line (the benchmarks then run one launch each, and say theirs).
        let said = exec::failure_reason(&err_text).or_else(|| launch.detail.clone()).unwrap_or_default();
        crate::say!(
            "suite: the shared launch ended before its first benchmark ({}{}); running them one launch each",
            launch.exit_code.map_or_else(|| launch.status.word().to_string(), |c| format!("exit {c}")),
            if said.is_empty() { String::new() } else { format!(": {said}") }
        );
    }
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    let detail = match (inside, ended.is_empty()) {
        (Some(name), _) => Some(format!("ended inside {name}")),
        // Its stderr without the marks: what the job said.
        (None, true) => exec::failure_reason(&err_text).or(launch.detail),
        (None, false) => None,
    };
    let benchmarks = ended.iter().map(|(k, _)| jobs[*k].spec.name.to_string()).collect();
    let launch = SharedLaunch {
        benchmarks,
        planned: group.len(),
        command: argv,
        duration_s: launch.took.as_secs_f64(),
        status: launch.status,
        detail,
    };
    Ran { ended, launch }
}

/// Cuts a shared launch's stdout into its benchmarks' `<bench>.txt` as it
/// lands. What comes before the first benchmark (the job's start) goes at
/// the head of the first one's file; what comes after a benchmark's end
/// (the launcher's last words) to the end of the last one's, as each
/// benchmark's own launch would have had it.
struct Cut {
    marker: String,
    dir: PathBuf,
    names: Vec<&'static str>,
    commands: Vec<String>,
    /// The suite's index of the first benchmark.
    first: usize,
    echo: bool,
    before: Vec<u8>,
    /// The last begun benchmark's file.
    file: Option<File>,
    current: Option<usize>,
    began: Vec<Option<Instant>>,
    ended: Vec<Option<(i32, Duration)>>,
    /// The run record watched: the last begun benchmark's, kept after its
    /// end, so that a launcher that outlives the last one is stopped as a
    /// launcher that outlives its one benchmark is.
    record: Option<PathBuf>,
    /// The last mark: `--max-time` counts from it (a benchmark's time is
    /// from its begin; the time between two benchmarks, from the end).
    last_mark: Option<Instant>,
}

impl Cut {
    fn begin(&mut self, i: usize, progress: &mut Progress) {
        let path = self.dir.join(format!("{}.txt", self.names[i]));
        self.file = match safe_file::create_new_readable(&path) {
            Ok(f) => Some(f),
            Err(e) => {
                crate::say!("suite: cannot create {}: {e}", path.display());
                None
            }
        };
        if self.began.iter().all(Option::is_none) {
            let head = std::mem::take(&mut self.before);
            if let Some(f) = self.file.as_mut() {
                let _ = f.write_all(&head);
            }
        }
        self.current = Some(i);
        self.began[i] = Some(Instant::now());
        self.last_mark = self.began[i];
        self.record = Some(self.dir.join(format!("{}.json", self.names[i])));
        progress.start(self.first + i, self.names[i], &self.commands[i]);
    }

    fn end(&mut self, i: usize, code: i32, progress: &mut Progress) {
        let took = self.began[i].map_or(Duration::ZERO, |t| t.elapsed());
        self.ended[i] = Some((code, took));
        self.current = None;
        self.last_mark = Some(Instant::now());
        progress.finish(exec::ended_with(code, took, "").status.word(), took);
    }
}

impl Split for Cut {
    fn stdout(&mut self, lines: &[u8], progress: &mut Progress) {
        let mut echo = Vec::new();
        for line in lines.split_inclusive(|&b| b == b'\n') {
            let text = String::from_utf8_lossy(line);
            match Mark::parse(text.trim_end_matches('\n'), &self.marker) {
                Some(Mark::Begin(i)) if i < self.names.len() && self.began[i].is_none() => {
                    progress.echo(&std::mem::take(&mut echo));
                    self.begin(i, progress);
                }
                Some(Mark::End(i, code)) if self.current == Some(i) => {
                    progress.echo(&std::mem::take(&mut echo));
                    self.end(i, code, progress);
                }
                Some(_) => {}
                None => {
                    match self.file.as_mut() {
                        Some(f) => {
                            let _ = f.write_all(line);
                        }
                        None => self.before.extend_from_slice(line),
                    }
                    if self.echo {
                        echo.extend_from_slice(line);
                    }
                }
            }
        }
        progress.echo(&echo);
    }

    fn record(&self) -> Option<&Path> {
        self.record.as_deref()
    }

    fn since(&self) -> Option<Instant> {
        self.last_mark
    }
}

/// A shared launch's stderr, cut at its marks: each begun benchmark's
/// part (None for those that never began). The job's start goes with the
/// first; what follows a benchmark's end goes with it until the next
/// begins.
fn cut_stderr(text: &str, marker: &str, n: usize) -> Vec<Option<String>> {
    let mut parts: Vec<Option<String>> = vec![None; n];
    let mut before = String::new();
    let mut last: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        match Mark::parse(line.trim_end_matches('\n'), marker) {
            Some(Mark::Begin(i)) if i < n && parts[i].is_none() => {
                parts[i] = Some(if last.is_none() { std::mem::take(&mut before) } else { String::new() });
                last = Some(i);
            }
            Some(_) => {}
            None => match last.and_then(|i| parts[i].as_mut()) {
                Some(p) => p.push_str(line),
                None => before.push_str(line),
            },
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch's stdout cut as it lands, in pieces that split lines.
    #[test]
    fn stdout_is_cut_at_the_marks_into_each_benchmarks_file() {
        let d = tempfile::tempdir().unwrap();
        let m = "##m##";
        let mut cut = Cut {
            marker: m.into(),
            dir: d.path().to_path_buf(),
            names: vec!["osu_latency", "osu_bw", "osu_barrier"],
            commands: vec!["a".into(), "b".into(), "c".into()],
            first: 3,
            echo: false,
            before: Vec::new(),
            file: None,
            current: None,
            began: vec![None; 3],
            ended: vec![None; 3],
            record: None,
            last_mark: None,
        };
        let mut progress = Progress::with_output(6, false, Box::new(std::io::sink()));
        let text = format!("warning at start\n{m} begin 0\n# OSU MPI Latency Test\n1 0.2\n{m} end 0 0\n{m} begin 1\n# bw\n{m} end 1 1\n");
        let mut lines = crate::launch::exec::LineBuffer::default();
        for piece in text.as_bytes().chunks(7) {
            cut.stdout(&lines.push(piece), &mut progress);
            if cut.current == Some(0) {
                assert_eq!(cut.record(), Some(d.path().join("osu_latency.json").as_path()));
            }
        }
        // The launcher's last words go with the last benchmark begun.
        cut.stdout(b"mpirun: bye\n", &mut progress);
        drop(cut.file.take());
        let read = |n: &str| std::fs::read_to_string(d.path().join(n)).unwrap();
        assert_eq!(read("osu_latency.txt"), "warning at start\n# OSU MPI Latency Test\n1 0.2\n");
        assert_eq!(read("osu_bw.txt"), "# bw\nmpirun: bye\n");
        assert!(!d.path().join("osu_barrier.txt").exists());
        assert_eq!(cut.ended[0].map(|e| e.0), Some(0));
        assert_eq!(cut.ended[1].map(|e| e.0), Some(1));
        assert!(cut.began[2].is_none() && cut.current.is_none());
        // --max-time counts from the last mark, not the launch's start.
        assert!(cut.since().is_some_and(|t| t >= cut.began[1].unwrap()));
        assert_eq!(cut.record(), Some(d.path().join("osu_bw.json").as_path()));
    }

    #[test]
    fn stderr_goes_to_the_benchmark_it_came_in() {
        let m = "##m##";
        let text = format!(
            "start warning\n{m} begin 0\n{m} end 0 0\n{m} begin 1\nosu_bw: bad\n{m} end 1 1\nlate line\n{m} begin \
             2\n{m} end 2 0\n{m} done\nlauncher: bye\n"
        );
        let parts = cut_stderr(&text, m, 4);
        assert_eq!(
            parts,
            vec![
                Some("start warning\n".into()),
                Some("osu_bw: bad\nlate line\n".into()),
                Some("launcher: bye\n".into()),
                None
            ]
        );
        // A launch that died before its first mark: nothing began.
        assert_eq!(cut_stderr("mpirun: no\n", m, 2), vec![None, None]);
    }
}
