//! The JSON run record written beside the CSV: what was run (command line,
//! options, iteration policy), with what (commbench version and commit, MPI
//! library), where (hosts, each rank's host, pid and cpus), under which
//! environment, when, and how it ended.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub(crate) const SCHEMA: &str = "commbench-run-record/1";

/// Environment variable prefixes worth recording: they change what MPI,
/// UCX, NCCL or the launcher do.
pub(crate) const ENV_PREFIXES: &[&str] = &[
    "UCX_",
    "OMPI_MCA_",
    "OMPI_COMM_WORLD_",
    "PMIX_MCA_",
    "PRTE_MCA_",
    "MPICH_",
    "MPIR_CVAR_",
    "HYDRA_",
    "I_MPI_",
    "MV2_",
    "FI_",
    "NCCL_",
    "HCOLL_",
    "SHARP_",
    "SLURM_",
    "CUDA_VISIBLE_DEVICES",
    "OMP_",
    "COMMBENCH_",
    "HWLOC_",
];

/// The recorded environment of this process.
pub(crate) fn relevant_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect()
}

/// commbench itself.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub version: String,
    pub git_commit: String,
    pub osu_compatible: String,
}

impl ToolInfo {
    pub fn current() -> ToolInfo {
        ToolInfo {
            version: crate::VERSION.to_string(),
            git_commit: crate::GIT_COMMIT.to_string(),
            osu_compatible: crate::OSU_VERSION.to_string(),
        }
    }
}

/// What the record of a run on one host without MPI starts with
/// (`commbench gpu-bw`, the GPU drop-ins): how it ended, what ran, where
/// and when. Flattened into each such record, so its fields sit at the
/// top level, as a [`RunHeader`]'s do.
#[derive(Clone, Debug, Serialize)]
pub struct LocalRun {
    pub status: RunStatus,
    pub status_detail: Option<String>,
    pub exit_code: Option<i32>,
    pub commbench: ToolInfo,
    pub command_line: Vec<String>,
    pub working_dir: String,
    pub host: String,
    /// The measuring process, so that a reader on `host` can end the
    /// record `killed` when the process is gone and the record still says
    /// `running` ([`super::record_end::settle_if_gone`]).
    pub pid: u32,
    pub start_utc: String,
    pub end_utc: Option<String>,
}

impl LocalRun {
    /// A run on `host` that starts now.
    pub fn starting(host: String, command_line: Vec<String>) -> LocalRun {
        LocalRun {
            status: RunStatus::Running,
            status_detail: None,
            exit_code: None,
            commbench: ToolInfo::current(),
            command_line,
            working_dir: std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
            host,
            pid: std::process::id(),
            start_utc: crate::report::time::Utc::now().rfc3339(),
            end_utc: None,
        }
    }

    /// Marks the run ended now.
    pub fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        self.status = status;
        self.status_detail = detail;
        self.exit_code = Some(exit_code);
        self.end_utc = Some(crate::report::time::Utc::now().rfc3339());
    }
}

/// The MPI library the run used.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MpiInfo {
    pub library_version: String,
    pub standard_version: String,
    pub world_size: usize,
    /// Resolution of MPI_Wtime in seconds.
    pub wtick_s: f64,
}

impl MpiInfo {
    /// The running library, as every run record describes it.
    pub fn of(mpi: &crate::backend::world::World) -> MpiInfo {
        use crate::backend::Control;
        MpiInfo {
            library_version: mpi.library_version(),
            standard_version: mpi.standard_version(),
            world_size: mpi.size(),
            wtick_s: mpi.wtick(),
        }
    }
}

/// Where one rank ran.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RankInfo {
    pub rank: usize,
    pub host: String,
    pub pid: u32,
    /// CPUs the rank may run on (sched_getaffinity), as a list like "0-3,8".
    pub cpus: String,
    pub cpu_count: usize,
    /// Local rank as the launcher announced it, if it did.
    pub local_rank: Option<usize>,
    /// NUMA nodes, cores, NIC, GPU and how they were chosen. Absent in
    /// records written before placement was reported.
    #[serde(default)]
    pub placement: Option<crate::topo::report::RankPlacement>,
    /// What the rank knows of its end of the measured paths (its NIC's
    /// link, its core's copy rate), for a run that reports a bandwidth
    /// (crate::peak). Absent otherwise and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_end: Option<crate::peak::RankEnd>,
    /// Where the process drives several GPUs (nccl-tests' `-t` x `-g`),
    /// the ends of its other GPUs' ranks, in lane order (`path_end` is
    /// its first's); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lane_ends: Vec<crate::peak::RankEnd>,
    /// What competed with the rank for its CPUs: the host's load, steal,
    /// the rank's involuntary switches and migrations, at its start,
    /// between sizes and at its end (crate::procs::load). `after` is
    /// filled when the run measured to its end; absent in older records
    /// and where the host does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::procs::load::RankLoad>,
}

/// Iteration counts and thresholds in force.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct IterationPolicy {
    pub small_iterations: usize,
    pub small_warmup: usize,
    pub large_iterations: usize,
    pub large_warmup: usize,
    /// Sizes strictly above this use the large counts (None: never switch).
    pub large_above_bytes: Option<usize>,
    pub window: Option<usize>,
    pub validation_warmup: usize,
    pub min_size: usize,
    pub max_size: usize,
}

/// Files of this run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub(crate) struct ResultsInfo {
    pub csv: Option<String>,
    /// Complete rows in the CSV.
    pub rows: usize,
    /// Why the CSV lacks rows the run measured (a write failed), if it
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// How the launcher describes the job.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LauncherInfo {
    pub kind: String,
    pub size: Option<usize>,
    /// Where MPI saw this process alone though the launcher started
    /// several (a launcher of another MPI), which ran anyway (the
    /// nccl-tests binaries, as nccl-tests' copies run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_of_one: Option<WorldOfOne>,
}

/// A process MPI saw alone though its launcher started `copies`: each
/// copy ran its own one-rank test.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WorldOfOne {
    /// How many copies the launcher started, and this one's rank among
    /// them (where it said).
    pub copies: usize,
    pub copy: Option<usize>,
    pub launcher: String,
    /// The MPI this binary was built with (`Open MPI v4.1.4`).
    pub mpi_library: String,
    /// The GPU this copy ran on: CUDA's index and its PCI bus id.
    pub device: Option<usize>,
    pub pci_bus_id: Option<String>,
}

impl WorldOfOne {
    /// The one line that says so.
    pub fn line(&self) -> String {
        let copy = self.copy.map_or(String::new(), |r| format!(" (this is copy {r})"));
        let device = match (self.device, &self.pci_bus_id) {
            (Some(d), Some(bus)) => format!(" on device {d} [{bus}]"),
            _ => String::new(),
        };
        format!(
            "world of one: the launcher ({}) started {} copies but this binary's MPI ({}) sees each alone, so \
             each runs a test of its own{device}{copy}, not one test of {} ranks; start it with {}'s launcher",
            self.launcher, self.copies, self.mpi_library, self.copies, self.mpi_library
        )
    }
}

/// How a run stands: `running` from start-up until it ends, then how it
/// ended. The OSU binaries end `complete`, `validation_failed` or `error`;
/// `commbench pairs` ends `passed`, `failed` or `error`; the watchdog ends
/// either `timeout`; a signal to rank 0 (the launcher's, after Ctrl-C, a
/// Slurm cancel, the suite's `--max-time`) ends it `interrupted`, and a
/// rank seen to die first ends it `rank_failed`; when rank 0 itself is gone
/// another rank ends it (see [`super::record_end`]). A job killed outright
/// everywhere (SIGKILL to every rank, which MPICH's launcher sends them
/// all when one rank dies or it is killed itself) leaves it `running`
/// until a reader on its host (compare, plot, the suite) finds every rank
/// gone and ends it `killed` ([`super::record_end::settle_if_gone`]).
/// Records written before the last three existed read as they did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    ValidationFailed,
    Passed,
    Failed,
    Timeout,
    Error,
    Interrupted,
    RankFailed,
    /// Left `running` by a job none of whose processes could end it, and
    /// ended by a reader that found them all gone.
    Killed,
}

/// What every run record of commbench starts with, whichever program wrote
/// it (an OSU binary or `commbench pairs`): how the run ended, what ran,
/// with which MPI and launcher, where its ranks were, and the environment.
/// Flattened into each record, so its fields sit at the top level.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunHeader {
    pub status: RunStatus,
    pub status_detail: Option<String>,
    pub exit_code: Option<i32>,
    pub commbench: ToolInfo,
    pub command_line: Vec<String>,
    pub working_dir: String,
    pub start_utc: String,
    pub end_utc: Option<String>,
    /// The rank other than 0 that ended the record, when rank 0 could not
    /// (see [`super::record_end`]); absent when rank 0 ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by_rank: Option<usize>,
    /// The program that ended the record when no rank could (`commbench
    /// compare (pid 4711)`: see [`RunStatus::Killed`]); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    pub mpi: MpiInfo,
    pub launcher: LauncherInfo,
    pub hosts: Vec<String>,
    pub ranks: Vec<RankInfo>,
    /// Misplacement found after start-up (also printed on stderr). Absent
    /// in records written before placement was reported.
    #[serde(default)]
    pub placement_warnings: Vec<String>,
    /// Where every rank was when the watchdog ended a hung job (rank 0's
    /// survey: each rank's step, size, iteration and how long it had been
    /// still, or why it did not answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hang: Option<serde_json::Value>,
    /// What rank 0 had gathered about the ranks when the run started
    /// (placement, the watchdog's endpoints, ...): it grows with np, never
    /// faster (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<StartupCost>,
    /// Environment of rank 0 (see ENV_PREFIXES for what is kept).
    pub environment: BTreeMap<String, String>,
}

/// Rank 0's share of the job's start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartupCost {
    /// Bytes rank 0 received in the start-up gathers.
    pub gathered_bytes: u64,
    pub gathers: u64,
}

impl RunHeader {
    /// A run that has just started on `mpi`, with every rank's placement.
    pub fn running(
        command_line: Vec<String>,
        start_utc: String,
        mpi: &crate::backend::world::World,
        launcher: LauncherInfo,
        ranks: Vec<RankInfo>,
    ) -> RunHeader {
        RunHeader {
            status: RunStatus::Running,
            status_detail: None,
            exit_code: None,
            commbench: ToolInfo::current(),
            command_line,
            working_dir: std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
            start_utc,
            end_utc: None,
            ended_by_rank: None,
            ended_by: None,
            mpi: MpiInfo::of(mpi),
            launcher,
            hosts: distinct_hosts(&ranks),
            ranks,
            placement_warnings: Vec::new(),
            hang: None,
            startup: Some(crate::backend::world::gathered())
                .filter(|_| crate::backend::Control::rank(mpi) == 0)
                .map(|(gathered_bytes, gathers)| StartupCost { gathered_bytes, gathers }),
            environment: relevant_environment(),
        }
    }

    /// Keeps what each rank saw competing with it over the run (in rank
    /// order, as gathered at its end: crate::procs::load::finish), over
    /// what the ranks said at the start.
    pub fn keep_loads(&mut self, loads: Vec<Option<crate::procs::load::RankLoad>>) {
        for (r, load) in self.ranks.iter_mut().zip(loads) {
            if load.is_some() {
                r.load = load;
            }
        }
    }

    /// Drops the ranks' load samples taken between sizes, or (`all`) every
    /// load fact, so that an end fits the room a record kept on a full
    /// disk; true when something was dropped.
    pub(crate) fn shed_loads(&mut self, all: bool) -> bool {
        let mut dropped = false;
        for r in &mut self.ranks {
            if all {
                dropped |= r.load.take().is_some();
            } else if let Some(l) = r.load.as_mut().filter(|l| !l.sizes.is_empty()) {
                l.sizes.clear();
                dropped = true;
            }
        }
        dropped
    }

    /// The line that says the run's host was busy during it (the busiest
    /// host, named where the run had several), by crate::procs::load's
    /// rule; None for a quiet run or a record without loads.
    pub fn busy_line(&self) -> Option<String> {
        let ranks = self.ranks.iter().filter_map(|r| Some((r.rank, r.host.as_str(), r.load.as_ref()?)));
        crate::procs::load::busiest(ranks).map(|b| b.line(self.hosts.len() > 1))
    }

    /// Marks the run ended now (a timeout ended here keeps this process's
    /// hang table, [`keep_hang_table`]).
    pub fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        if status == RunStatus::Timeout {
            self.hang = HANG.get().cloned();
        }
        self.status = status;
        self.status_detail = detail;
        self.exit_code = Some(exit_code);
        self.end_utc = Some(super::time::Utc::now().rfc3339());
    }
}

/// Where every rank was when this process's watchdog ended a hung job
/// (rank 0): kept here, once, for the record to take when it ends as
/// timed out.
static HANG: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();

/// Keeps the watchdog's hang table for the record (the first one only).
pub(crate) fn keep_hang_table(table: serde_json::Value) {
    let _ = HANG.set(table);
}

/// Ends the shared record with a status, a detail and an exit status, and
/// rewrites it at `path`: what the watchdog and the signal thread do before
/// the process ends. It waits at most half a second for a record that is
/// being written (the main thread holds it only to count a row or end it),
/// and leaves alone a record that has already ended. True when the record
/// now says what this call gave; false when it had ended already, another
/// rank's first-hand end was kept (that rank said why), or it could not be
/// had in time.
pub(crate) type EndMarker = Box<dyn Fn(RunStatus, &str, i32) -> bool + Send + Sync>;

/// An [`EndMarker`] over `record` at `path`; `header` finds the header.
pub(crate) fn end_marker<R: Serialize + Send + 'static>(
    record: std::sync::Arc<std::sync::Mutex<R>>,
    path: std::path::PathBuf,
    header: fn(&mut R) -> &mut RunHeader,
) -> EndMarker {
    Box::new(move |status: RunStatus, msg: &str, code: i32| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
        loop {
            if let Ok(mut r) = record.try_lock() {
                let h = header(&mut r);
                if h.status != RunStatus::Running {
                    return false;
                }
                // Another rank saw the hang or the failure first-hand.
                let mine = match super::record_end::first_hand_from_another_rank(&path) {
                    Some(e) => {
                        h.end(e.status, e.detail, e.exit_code.unwrap_or(code));
                        h.ended_by_rank = Some(e.by_rank);
                        false
                    }
                    None => {
                        h.end(status, Some(msg.to_string()), code);
                        true
                    }
                };
                let _ = write_json(&*r, &path);
                return mine;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    })
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunRecord {
    pub schema: String,
    pub benchmark: String,
    pub title: String,
    #[serde(flatten)]
    pub run: RunHeader,
    pub options: serde_json::Value,
    pub iteration_policy: IterationPolicy,
    pub results: ResultsInfo,
    /// The Slurm job this run belongs to (None outside Slurm). Absent in
    /// records written before Slurm facts were recorded.
    #[serde(default)]
    pub slurm: Option<super::slurm::SlurmInfo>,
    /// Where the message buffers were (absent in records written before
    /// buffer locations were accepted).
    #[serde(default)]
    pub buffers: Option<BufferInfo>,
    /// What the backend says about itself beyond its name: for UCX, the
    /// library version, `UCX_TLS` / `UCX_NET_DEVICES` as used and the
    /// lanes (transport/device) of every rank's endpoints. Absent for MPI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_details: Option<serde_json::Value>,
    /// The thresholds behind the CSV's `noise` verdicts (stats::noise), so
    /// that a verdict can be read without the version that wrote it.
    /// Absent in records written before rows carried a verdict.
    #[serde(default)]
    pub noise_thresholds: Option<crate::stats::noise::NoiseThresholds>,
    /// What the run was to measure, as its plan resolved it (bench::engine::plan),
    /// and one rank's memory estimate. Absent in records written before
    /// plans were recorded, and for osu_init and osu_hello.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRecord>,
    /// The paths the measured bytes took and their peaks (crate::peak),
    /// for a run that reports a bandwidth. Absent otherwise and in older
    /// records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<crate::peak::RunPaths>,
}

/// A run's plan (`bench::engine::plan::Plan`) as the record keeps it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct PlanRecord {
    pub np: usize,
    /// Ranks that send (and as many that receive).
    pub pairs: usize,
    /// The largest message run (below `-m`'s when OSU's default memory
    /// limit lowered it: `note` says so).
    pub max_size: usize,
    pub note: Option<String>,
    /// What the kernel needed of the transport (`collectives`,
    /// `point_to_point`, ...).
    pub needs: Option<String>,
    /// The collective operation timed (`allreduce`, `igatherv`, ...).
    pub collective: Option<String>,
    /// Every size point in the order measured, consecutive sizes with the
    /// same datatype, counts and cells in one span (a plan's record stays
    /// small however many sizes it has).
    pub spans: Vec<PlanSpan>,
    /// One rank's memory estimate, bytes, as checked before allocation.
    pub memory: Option<MemoryRecord>,
}

/// Consecutive size points of a plan alike but for their size.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct PlanSpan {
    pub datatype: Option<String>,
    /// Bytes, ascending.
    pub sizes: Vec<usize>,
    /// Timed iterations (the ceiling under `--precision`).
    pub iterations: usize,
    pub warmup: usize,
    /// `--precision`'s floor, if the size runs under it.
    pub min_iterations: Option<u64>,
    /// Each timed loop of the size: its window and pass.
    pub cells: Vec<PlanCell>,
}

/// One cell of a size point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct PlanCell {
    pub window: Option<usize>,
    pub in_place: Option<bool>,
}

/// One rank's memory estimate by part (bench::engine::memory::Estimate), bytes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct MemoryRecord {
    pub held_at_start: u64,
    pub buffers: u64,
    pub requests: u64,
    pub mpi_temporaries: u64,
    pub samples: u64,
    /// Host memory that fills and checks of GPU buffers pass through.
    #[serde(default)]
    pub host_staging: u64,
    /// Message buffers in GPU memory (not in `expected_peak`, which is
    /// the host's).
    #[serde(default)]
    pub gpu_buffers: u64,
    pub expected_peak: u64,
}

/// Where a run's message buffers lived, and what was asked for.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct BufferInfo {
    /// `host` (or, with a GPU transport, `device`).
    pub memory: String,
    /// OSU's positional `SRC DST` as given (`D D`), if any.
    pub requested: Option<String>,
    /// Why `memory` differs from what was requested, if it does.
    pub note: Option<String>,
}

impl BufferInfo {
    /// Buffers in `memory`, given OSU's positional locations `requested`.
    pub fn new(memory: &str, requested: Option<&crate::options::BufferLocations>) -> BufferInfo {
        let note = requested.filter(|b| b.asks_for_device() && memory == "host").map(|b| {
            format!(
                "'{}' asked for device or managed buffers but no device was requested (-d): run on host memory, \
                 as an OSU build without GPU support does",
                b.words()
            )
        });
        BufferInfo { memory: memory.into(), requested: requested.map(|b| b.words()), note }
    }
}

impl RunRecord {
    /// Writes the record to `path` through a temporary file and a rename,
    /// so a reader never sees half a record.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        write_json(self, path)
    }

    /// Reads a record back as the struct that wrote it. Records of earlier
    /// commbench versions read too (fields added since carry
    /// `#[serde(default)]`), and so does the record of a run killed before
    /// it ended (status `running`, no end time or exit code).
    pub fn read(path: &Path) -> Result<RunRecord, RecordError> {
        let text = fs::read_to_string(path).map_err(|source| RecordError::Io { path: path.into(), source })?;
        RunRecord::parse(&text).map_err(|reason| RecordError::Invalid { path: path.into(), reason })
    }

    /// The record in `text`; the error says what does not fit.
    pub fn parse(text: &str) -> Result<RunRecord, String> {
        #[derive(Deserialize)]
        struct Schema {
            schema: String,
        }
        let found = serde_json::from_str::<Schema>(text).map_err(|e| e.to_string())?.schema;
        if found != SCHEMA {
            return Err(format!("schema '{found}', expected '{SCHEMA}'"));
        }
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// Why a run record could not be read back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    #[error("cannot read run record {}: {source}", path.display())]
    Io { path: std::path::PathBuf, source: io::Error },
    #[error("{} is not a commbench run record: {reason}", path.display())]
    Invalid { path: std::path::PathBuf, reason: String },
}

/// Writes `value` as pretty JSON to `path` through a temporary file and a
/// rename, so a reader never sees half a file; on a disk with no room for
/// the new copy, over the old one in place, within the room it was written
/// with ([`write_json_with_room`]), so that a run still ends its record.
pub(crate) fn write_json<T: Serialize>(value: &T, path: &Path) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    super::safe_file::replace_or_overwrite(path, text.as_bytes(), b' ')
}

/// Room a run record keeps after its JSON while it runs (spaces, which
/// JSON allows after a value): what its end adds, the end time, the exit
/// status and a line or two of detail, fits in it, so the end can still be
/// written when the disk filled up during the run.
pub(crate) const END_ROOM: usize = 2048;

/// [`write_json`] for a record that will be rewritten when the run ends:
/// [`END_ROOM`] bytes of spaces after it.
pub(crate) fn write_json_with_room<T: Serialize>(value: &T, path: &Path) -> io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    let bytes = super::safe_file::with_room(text.into_bytes(), END_ROOM, b' ');
    super::safe_file::replace(path, &bytes)
}

/// After a record's whole end could not be written (`e`, from
/// [`write_json`]: an end that outgrew the room the record was written
/// with, on a full disk), the end that fits
/// ([`super::record_end::end_what_fits`]): `error`, `exit_code` and a detail
/// naming how the run had ended (`ended`), so that the record never stays
/// `running`. True when that end was written.
pub(crate) fn end_on_full_disk(path: &Path, e: &io::Error, ended: RunStatus, exit_code: i32) -> bool {
    if !super::safe_file::is_full(e) {
        return false;
    }
    let word = serde_json::to_value(ended).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let detail = format!(
        "the disk had no room for the run record's whole end ({e}): the run had ended `{word}`; its outcome and \
         files are not in this record"
    );
    super::record_end::end_what_fits(path, RunStatus::Error, &detail, exit_code).unwrap_or(false)
}

/// Distinct hosts in order of first appearance.
pub(crate) fn distinct_hosts(ranks: &[RankInfo]) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for r in ranks {
        if !hosts.contains(&r.host) {
            hosts.push(r.host.clone());
        }
    }
    hosts
}

/// Records for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod samples {
    use super::*;

    /// A header of a run that has just started on two ranks of host `a`.
    pub(crate) fn header() -> RunHeader {
        RunHeader {
            status: RunStatus::Running,
            status_detail: None,
            exit_code: None,
            commbench: ToolInfo::current(),
            command_line: vec!["osu_bw".into()],
            working_dir: "/tmp".into(),
            start_utc: "2026-11-30T00:00:00Z".into(),
            end_utc: None,
            ended_by_rank: None,
            ended_by: None,
            mpi: MpiInfo { library_version: "x".into(), standard_version: "3.1".into(), world_size: 2, wtick_s: 1e-9 },
            launcher: LauncherInfo { kind: "openmpi".into(), size: Some(2), world_of_one: None },
            hosts: vec!["a".into()],
            ranks: vec![rank(0, "a", "0"), rank(1, "a", "1")],
            placement_warnings: vec!["w".into()],
            hang: None,
            startup: None,
            environment: BTreeMap::from([("UCX_TLS".to_string(), "rc".to_string())]),
        }
    }

    pub(crate) fn rank(rank: usize, host: &str, cpus: &str) -> RankInfo {
        RankInfo {
            rank,
            host: host.into(),
            pid: 100 + rank as u32,
            cpus: cpus.into(),
            cpu_count: 1,
            local_rank: Some(rank),
            placement: None,
            path_end: None,
            lane_ends: Vec::new(),
            load: None,
        }
    }

    /// A whole record of an osu_bw run holding the header.
    pub(crate) fn record(run: RunHeader) -> RunRecord {
        RunRecord {
            schema: SCHEMA.into(),
            benchmark: "osu_bw".into(),
            title: "OSU MPI Bandwidth Test".into(),
            run,
            options: serde_json::json!({"min_size": 1, "max_size": 8}),
            iteration_policy: IterationPolicy {
                small_iterations: 10000,
                small_warmup: 1000,
                large_iterations: 1000,
                large_warmup: 100,
                large_above_bytes: Some(8192),
                window: Some(64),
                validation_warmup: 5,
                min_size: 1,
                max_size: 8,
            },
            results: ResultsInfo { csv: Some("osu_bw.csv".into()), rows: 4, incomplete: None },
            slurm: None,
            buffers: None,
            backend_details: None,
            noise_thresholds: Some(crate::stats::noise::NoiseThresholds::default()),
            plan: None,
            paths: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::samples::{header, rank, record};
    use super::*;
    use crate::topo::machine::NicKind;
    use crate::topo::report::{BoundBy, EnvSetting, GpuSource, NicInfo, NicSource, RankPlacement, SetBy, TopoGpu};
    use crate::topo::request::BindPolicy;

    /// Every value a record or `history export` writes reads back to the
    /// same double: serde_json parses exactly only with its
    /// `float_roundtrip` feature (without it, 22446.440000000002 read back
    /// as 22446.44 and a history test failed on that one value).
    #[test]
    fn json_numbers_read_back_to_the_same_double() {
        let x: f64 = serde_json::from_str("22446.440000000002").unwrap();
        assert_eq!(x.to_bits(), 0x40d5_eb9c_28f5_c290, "one unit in the last place above 22446.44");
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // Values like the tables': two decimals, or any bit pattern.
            let two_decimals = ((state >> 20) % 10_000_000_000) as f64 / 100.0;
            let any = f64::from_bits(state >> 2);
            for v in [two_decimals, (two_decimals + 1.37) / 2.0, any] {
                let back: f64 = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
                assert_eq!(back.to_bits(), v.to_bits(), "{v:?}");
            }
        }
    }

    #[test]
    fn hosts_in_order() {
        assert_eq!(distinct_hosts(&[rank(0, "b", "0"), rank(1, "a", "0"), rank(2, "b", "1")]), vec!["b", "a"]);
    }

    /// The header's fields sit at the top level of any record holding it,
    /// and an end marker ends the run as timed out on disk.
    #[test]
    fn header_is_flat_and_the_timeout_marker_rewrites_the_record() {
        #[derive(Serialize)]
        struct Rec {
            schema: String,
            #[serde(flatten)]
            run: RunHeader,
            extra: u32,
        }
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("r.json");
        let rec = std::sync::Arc::new(std::sync::Mutex::new(Rec { schema: "s".into(), run: header(), extra: 7 }));
        let marker = end_marker(rec.clone(), path.clone(), |r| &mut r.run);
        assert!(marker(RunStatus::Timeout, "no progress for 2s", 124));
        let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["status"], "timeout");
        assert_eq!(v["status_detail"], "no progress for 2s");
        assert_eq!(v["exit_code"], 124);
        assert!(v["end_utc"].is_string());
        assert_eq!((v["hosts"][0].as_str(), v["extra"].as_u64()), (Some("a"), Some(7)));
        assert_eq!(v["placement_warnings"][0], "w");
        // The same file reads back as the header that wrote it.
        let back: RunHeader = serde_json::from_value(v).unwrap();
        assert_eq!(back, rec.lock().unwrap().run);
        assert_eq!(back.status, RunStatus::Timeout);
        let mut h = header();
        h.end(RunStatus::Complete, None, 0);
        assert_eq!((h.status, h.exit_code, h.end_utc.is_some()), (RunStatus::Complete, Some(0), true));
    }

    /// The loads gathered at the end land on their ranks, and the busy
    /// line names the host only where the run had several.
    #[test]
    fn loads_kept_and_the_busy_line() {
        use crate::procs::load::{RankLoad, Sample};
        let mut h = header();
        assert_eq!(h.busy_line(), None);
        let busy = RankLoad {
            before: Sample { load1: Some(8.2), online_cpus: Some(2), ..Sample::default() },
            ..RankLoad::default()
        };
        h.keep_loads(vec![None, Some(busy.clone())]);
        assert_eq!((h.ranks[0].load.as_ref(), h.ranks[1].load.as_ref()), (None, Some(&busy)));
        assert_eq!(h.busy_line().as_deref(), Some("the host was busy: load 8.2 on 2 cores during the run"));
        h.hosts.push("b".into());
        assert_eq!(h.busy_line().as_deref(), Some("the host a was busy: load 8.2 on 2 cores during the run"));
        // Through the record's JSON, as compare and history read it.
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(crate::procs::load::busy_line_of_record(&v), h.busy_line());
    }

    /// Every status keeps the word earlier records (and the tests, and
    /// users' scripts) use, both ways.
    #[test]
    fn status_words() {
        let words = [
            (RunStatus::Running, "running"),
            (RunStatus::Complete, "complete"),
            (RunStatus::ValidationFailed, "validation_failed"),
            (RunStatus::Passed, "passed"),
            (RunStatus::Failed, "failed"),
            (RunStatus::Timeout, "timeout"),
            (RunStatus::Error, "error"),
            (RunStatus::Interrupted, "interrupted"),
            (RunStatus::RankFailed, "rank_failed"),
            (RunStatus::Killed, "killed"),
        ];
        for (status, word) in words {
            assert_eq!(serde_json::to_value(status).unwrap(), word);
            assert_eq!(serde_json::from_value::<RunStatus>(word.into()).unwrap(), status);
        }
        assert!(serde_json::from_value::<RunStatus>("lost".into()).is_err());
        assert!(serde_json::from_value::<RunStatus>("Complete".into()).is_err());
    }

    /// A record with every part filled (placement of each kind, Slurm)
    /// reads back from its file as the struct that wrote it.
    #[test]
    fn record_round_trip() {
        let mut run = header();
        run.end(RunStatus::ValidationFailed, Some("validation failed at message size 8".into()), 1);
        run.ranks[0].placement = Some(RankPlacement {
            policy: BindPolicy::Nic,
            bound_by: BoundBy::Commbench,
            numa_nodes: vec![1],
            cores: vec![8],
            node_cores: 16,
            node_cpus: 32,
            nic: Some(NicInfo {
                name: "mlx5_2:1".into(),
                kind: Some(NicKind::RoCE),
                numa: Some(1),
                cpus: "8-15".into(),
                source: NicSource::NicOption,
            }),
            gpu: Some(TopoGpu {
                index: 3,
                pci_bus_id: "0000:41:00.0".into(),
                name: None,
                numa: Some(1),
                source: GpuSource::Policy,
            }),
            env: vec![EnvSetting {
                name: "UCX_NET_DEVICES".into(),
                value: "mlx5_0:1".into(),
                set_by: SetBy::User,
                commbench_choice: Some("mlx5_2:1".into()),
            }],
            notes: vec!["n".into()],
            topology: "hwloc 2.9.0".into(),
        });
        run.ranks[1].placement = Some(RankPlacement::default());
        let mut rec = record(run);
        rec.slurm = Some(crate::report::slurm::SlurmInfo { job_id: "42".into(), ..Default::default() });
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("osu_bw.json");
        rec.write(&path).unwrap();
        assert_eq!(RunRecord::read(&path).unwrap(), rec);
    }

    /// A record as the first commbench wrote it: no placement, no
    /// placement warnings, no Slurm facts.
    const FIRST_RECORD: &str = r#"{
  "schema": "commbench-run-record/1",
  "benchmark": "osu_latency",
  "title": "OSU MPI Latency Test",
  "status": "complete",
  "status_detail": null,
  "exit_code": 0,
  "commbench": { "version": "0.1.0", "git_commit": "bb2ae73", "osu_compatible": "7.4" },
  "command_line": ["osu_latency", "-m", "1:8"],
  "working_dir": "/work",
  "start_utc": "2026-11-30T10:00:00.000Z",
  "end_utc": "2026-11-30T10:00:01.000Z",
  "mpi": { "library_version": "Open MPI v4.1.4", "standard_version": "3.1", "world_size": 2, "wtick_s": 1e-9 },
  "launcher": { "kind": "openmpi", "size": 2 },
  "hosts": ["n1"],
  "ranks": [
    { "rank": 0, "host": "n1", "pid": 10, "cpus": "0-1", "cpu_count": 2, "local_rank": 0 },
    { "rank": 1, "host": "n1", "pid": 11, "cpus": "0-1", "cpu_count": 2, "local_rank": null }
  ],
  "options": { "min_size": 1, "max_size": 8 },
  "iteration_policy": {
    "small_iterations": 10000, "small_warmup": 100, "large_iterations": 1000, "large_warmup": 10,
    "large_above_bytes": 8192, "window": null, "validation_warmup": 5, "min_size": 1, "max_size": 8
  },
  "environment": { "OMPI_COMM_WORLD_RANK": "0" },
  "results": { "csv": "results/x.csv", "rows": 4 }
}"#;

    #[test]
    fn first_records_still_read() {
        let rec = RunRecord::parse(FIRST_RECORD).unwrap();
        assert_eq!(rec.run.status, RunStatus::Complete);
        assert_eq!(rec.run.hosts, ["n1"]);
        assert_eq!((rec.run.ranks[0].placement.as_ref(), rec.run.ranks[1].local_rank), (None, None));
        assert!(rec.run.placement_warnings.is_empty());
        assert_eq!(rec.slurm, None);
        assert_eq!(rec.run.commbench.git_commit, "bb2ae73");
        assert_eq!(rec.noise_thresholds, None);
    }

    /// The noise thresholds travel through the record and read back.
    #[test]
    fn noise_thresholds_round_trip() {
        let rec = record(RunRecord::parse(FIRST_RECORD).unwrap().run);
        let text = serde_json::to_string(&rec).unwrap();
        assert!(text.contains("\"noise_thresholds\":{\"max_rel_ci\":0.05"), "{text}");
        assert_eq!(RunRecord::parse(&text).unwrap(), rec);
    }

    /// A run killed before it ended leaves `running` with no end time and
    /// no exit code; optional fields may also be missing altogether.
    #[test]
    fn a_killed_run_reads_as_running() {
        let mut v: serde_json::Value = serde_json::from_str(FIRST_RECORD).unwrap();
        v["status"] = "running".into();
        v["exit_code"] = serde_json::Value::Null;
        let o = v.as_object_mut().unwrap();
        o.remove("end_utc");
        o.remove("status_detail");
        let rec = RunRecord::parse(&v.to_string()).unwrap();
        assert_eq!((rec.run.status, rec.run.exit_code, rec.run.end_utc), (RunStatus::Running, None, None));
    }

    #[test]
    fn what_is_not_a_run_record_says_why() {
        let e = RunRecord::parse(&FIRST_RECORD.replace("commbench-run-record/1", "commbench-pairs-record/1"));
        assert_eq!(e.unwrap_err(), "schema 'commbench-pairs-record/1', expected 'commbench-run-record/1'");
        let e = RunRecord::parse(&FIRST_RECORD.replace("\"hosts\"", "\"host_names\"")).unwrap_err();
        assert!(e.contains("missing field `hosts`"), "{e}");
        let e = RunRecord::parse(&FIRST_RECORD.replace("\"complete\"", "\"finished\"")).unwrap_err();
        assert!(e.contains("unknown variant `finished`"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let e = RunRecord::read(&d.path().join("none.json")).unwrap_err();
        assert!(e.to_string().starts_with("cannot read run record "), "{e}");
    }

    #[test]
    fn env_filter() {
        std::env::set_var("UCX_TLS_COMMBENCH_TEST", "rc");
        std::env::set_var("HOME_COMMBENCH_TEST", "x");
        let env = relevant_environment();
        assert_eq!(env.get("UCX_TLS_COMMBENCH_TEST").map(String::as_str), Some("rc"));
        assert!(!env.contains_key("HOME_COMMBENCH_TEST"));
    }
}
