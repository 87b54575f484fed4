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
    pub fn of(mpi: &crate::backend::mpi::Mpi) -> MpiInfo {
        MpiInfo {
            library_version: mpi.library_version(),
            standard_version: mpi.standard_version(),
            world_size: mpi.size() as usize,
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

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub schema: String,
    pub benchmark: String,
    pub title: String,
    /// running, complete, validation_failed, timeout or error.
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
    pub options: serde_json::Value,
    pub iteration_policy: IterationPolicy,
    /// Environment of rank 0 (see ENV_PREFIXES for what is kept).
    pub environment: BTreeMap<String, String>,
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

    #[test]
    fn env_filter() {
        std::env::set_var("UCX_TLS_COMMBENCH_TEST", "rc");
        std::env::set_var("HOME_COMMBENCH_TEST", "x");
        let env = relevant_environment();
        assert_eq!(env.get("UCX_TLS_COMMBENCH_TEST").map(String::as_str), Some("rc"));
        assert!(!env.contains_key("HOME_COMMBENCH_TEST"));
    }
}
