//! The JSON run record written beside the CSV: what was run (command line,
//! options, iteration policy), with what (commbench version and commit, MPI
//! library), where (hosts, each rank's host, pid and cpus), under which
//! environment, when, and how it ended.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "commbench-run-record/1";

/// Environment variable prefixes worth recording: they change what MPI,
/// UCX, NCCL or the launcher do.
pub const ENV_PREFIXES: &[&str] = &[
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
];

/// The recorded environment of this process.
pub fn relevant_environment() -> BTreeMap<String, String> {
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
    /// NUMA nodes, cores, NIC, GPU and how they were chosen.
    #[serde(default)]
    pub placement: Option<crate::topo::report::RankPlacement>,
}

/// Iteration counts and thresholds in force.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IterationPolicy {
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
pub struct ResultsInfo {
    pub csv: Option<String>,
    pub rows: usize,
}

/// How the launcher describes the job.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LauncherInfo {
    pub kind: String,
    pub size: Option<usize>,
}

/// What every run record of commbench starts with, whichever program wrote
/// it (an OSU binary or `commbench pairs`): how the run ended, what ran,
/// with which MPI and launcher, where its ranks were, and the environment.
/// Flattened into each record, so its fields sit at the top level.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunHeader {
    /// running, then how the run ended (complete, validation_failed,
    /// passed, failed, timeout or error).
    pub status: String,
    pub status_detail: Option<String>,
    pub exit_code: Option<i32>,
    pub commbench: ToolInfo,
    pub command_line: Vec<String>,
    pub working_dir: String,
    pub start_utc: String,
    pub end_utc: Option<String>,
    pub mpi: MpiInfo,
    pub launcher: LauncherInfo,
    pub hosts: Vec<String>,
    pub ranks: Vec<RankInfo>,
    /// Misplacement found after start-up (also printed on stderr).
    #[serde(default)]
    pub placement_warnings: Vec<String>,
    /// Environment of rank 0 (see ENV_PREFIXES for what is kept).
    pub environment: BTreeMap<String, String>,
}

impl RunHeader {
    /// A run that has just started on `mpi`, with every rank's placement.
    pub fn running(
        command_line: Vec<String>,
        start_utc: String,
        mpi: &crate::backend::world::World,
        launcher: &crate::launcher::LauncherEnv,
        ranks: Vec<RankInfo>,
    ) -> RunHeader {
        RunHeader {
            status: "running".into(),
            status_detail: None,
            exit_code: None,
            commbench: ToolInfo::current(),
            command_line,
            working_dir: std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default(),
            start_utc,
            end_utc: None,
            mpi: MpiInfo::of(mpi),
            launcher: LauncherInfo { kind: launcher.kind.into(), size: launcher.size },
            hosts: distinct_hosts(&ranks),
            ranks,
            placement_warnings: Vec::new(),
            environment: relevant_environment(),
        }
    }

    /// Marks the run ended now.
    pub fn end(&mut self, status: &str, detail: Option<String>, exit_code: i32) {
        self.status = status.into();
        self.status_detail = detail;
        self.exit_code = Some(exit_code);
        self.end_utc = Some(super::time::Utc::now().rfc3339());
    }
}

/// A watchdog action that marks the shared record as timed out and
/// rewrites it at `path` before the watchdog ends the job; `header` finds
/// the header inside the record. It does not wait for a record that is
/// being written.
pub fn timeout_marker<R: Serialize + Send + 'static>(
    record: std::sync::Arc<std::sync::Mutex<R>>,
    path: std::path::PathBuf,
    header: fn(&mut R) -> &mut RunHeader,
) -> crate::watchdog::OnFire {
    Box::new(move |msg: &str| {
        if let Ok(mut r) = record.try_lock() {
            header(&mut r).end("timeout", Some(msg.to_string()), crate::watchdog::TIMEOUT_EXIT);
            let _ = write_json(&*r, &path);
        }
    })
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub schema: String,
    pub benchmark: String,
    pub title: String,
    #[serde(flatten)]
    pub run: RunHeader,
    pub options: serde_json::Value,
    pub iteration_policy: IterationPolicy,
    pub results: ResultsInfo,
    /// The Slurm job this run belongs to (None outside Slurm).
    #[serde(default)]
    pub slurm: Option<super::slurm::SlurmInfo>,
}

impl RunRecord {
    /// Writes the record to `path` through a temporary file and a rename,
    /// so a reader never sees half a record.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        write_json(self, path)
    }
}

/// Writes `value` as pretty JSON to `path` through a temporary file and a
/// rename, so a reader never sees half a file.
pub fn write_json<T: Serialize>(value: &T, path: &Path) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    let tmp = path.with_extension("json.tmp");
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.flush()?;
    }
    fs::rename(&tmp, path)
}

/// Distinct hosts in order of first appearance.
pub fn distinct_hosts(ranks: &[RankInfo]) -> Vec<String> {
    let mut hosts: Vec<String> = Vec::new();
    for r in ranks {
        if !hosts.contains(&r.host) {
            hosts.push(r.host.clone());
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_in_order() {
        let r = |rank, host: &str| RankInfo {
            rank,
            host: host.into(),
            pid: 1,
            cpus: "0".into(),
            cpu_count: 1,
            local_rank: None,
            placement: None,
        };
        assert_eq!(distinct_hosts(&[r(0, "b"), r(1, "a"), r(2, "b")]), vec!["b", "a"]);
    }

    fn header() -> RunHeader {
        RunHeader {
            status: "running".into(),
            status_detail: None,
            exit_code: None,
            commbench: ToolInfo::current(),
            command_line: vec!["osu_bw".into()],
            working_dir: "/tmp".into(),
            start_utc: "2026-11-30T00:00:00Z".into(),
            end_utc: None,
            mpi: MpiInfo { library_version: "x".into(), standard_version: "3.1".into(), world_size: 2, wtick_s: 1e-9 },
            launcher: LauncherInfo { kind: "openmpi".into(), size: Some(2) },
            hosts: vec!["a".into()],
            ranks: Vec::new(),
            placement_warnings: vec!["w".into()],
            environment: BTreeMap::new(),
        }
    }

    /// The header's fields sit at the top level of any record holding it,
    /// and the watchdog's marker ends the run as timed out on disk.
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
        let marker = timeout_marker(rec.clone(), path.clone(), |r| &mut r.run);
        marker("no progress for 2s");
        let v: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["status"], "timeout");
        assert_eq!(v["status_detail"], "no progress for 2s");
        assert_eq!(v["exit_code"], crate::watchdog::TIMEOUT_EXIT);
        assert!(v["end_utc"].is_string());
        assert_eq!((v["hosts"][0].as_str(), v["extra"].as_u64()), (Some("a"), Some(7)));
        assert_eq!(v["placement_warnings"][0], "w");
        let mut h = header();
        h.end("complete", None, 0);
        assert_eq!((h.status.as_str(), h.exit_code, h.end_utc.is_some()), ("complete", Some(0), true));
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
