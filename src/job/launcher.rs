//! What the launcher (mpirun, mpiexec, srun) tells a process through its
//! environment before MPI starts: rank, job size and local rank. Used to
//! let only rank 0 print before MPI is initialised, and to notice a binary
//! started by a launcher of a different MPI (each rank then believes it is
//! alone).

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LauncherEnv {
    /// openmpi, hydra, mvapich, slurm, pmix, or none.
    pub kind: &'static str,
    pub rank: Option<usize>,
    pub size: Option<usize>,
    pub local_rank: Option<usize>,
    /// Ranks the launcher started on this node, if it says.
    pub local_size: Option<usize>,
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn num(get: Lookup, key: &str) -> Option<usize> {
    get(key).and_then(|v| v.trim().parse().ok())
}

/// Reads the launcher variables through `get` (testable without touching
/// the real environment).
pub(crate) fn detect_with(get: Lookup) -> LauncherEnv {
    let pick = |kind, rank: &str, size: &str, local: &str, local_size: &str| -> Option<LauncherEnv> {
        let r = num(get, rank)?;
        Some(LauncherEnv {
            kind,
            rank: Some(r),
            size: num(get, size),
            local_rank: num(get, local),
            local_size: num(get, local_size),
        })
    };
    pick(
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    )
    .or_else(|| {
        pick(
            "mvapich",
            "MV2_COMM_WORLD_RANK",
            "MV2_COMM_WORLD_SIZE",
            "MV2_COMM_WORLD_LOCAL_RANK",
            "MV2_COMM_WORLD_LOCAL_SIZE",
        )
    })
    .or_else(|| {
        let mut env = pick("hydra", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")?;
        env.local_rank = env.local_rank.or_else(|| num(get, "PMI_LOCAL_RANK"));
        env.local_size = env.local_size.or_else(|| num(get, "PMI_LOCAL_SIZE"));
        Some(env)
    })
    .or_else(|| {
        // srun sets SLURM_STEP_ID for a job step; a batch script alone
        // also has SLURM_PROCID=0 but is not a parallel launch.
        get("SLURM_STEP_ID")?;
        let mut env = pick("slurm", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "")?;
        if env.size.is_none() {
            env.size = num(get, "SLURM_NTASKS");
        }
        let per_node = get("SLURM_STEP_TASKS_PER_NODE").or_else(|| get("SLURM_TASKS_PER_NODE"));
        env.local_size = per_node.and_then(|t| slurm_tasks_on_node(&t, num(get, "SLURM_NODEID").unwrap_or(0)));
        Some(env)
    })
    .or_else(|| pick("pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"))
    .unwrap_or(LauncherEnv { kind: "none", rank: None, size: None, local_rank: None, local_size: None })
}

/// Tasks on node `node` from Slurm's compressed list: "2(x3),1" means
/// 2, 2, 2, 1.
pub(crate) fn slurm_tasks_on_node(list: &str, node: usize) -> Option<usize> {
    let mut seen = 0usize;
    for part in list.split(',') {
        let (count, repeat) = match part.split_once("(x") {
            Some((c, r)) => (c.trim().parse::<usize>().ok()?, r.trim_end_matches(')').parse::<usize>().ok()?),
            None => (part.trim().parse::<usize>().ok()?, 1),
        };
        if node < seen + repeat {
            return Some(count);
        }
        seen += repeat;
    }
    None
}

/// Reads the real environment.
pub(crate) fn detect() -> LauncherEnv {
    detect_with(&|k| std::env::var(k).ok())
}

impl LauncherEnv {
    /// Whether this process should print before MPI is up: rank 0, or any
    /// process when the launcher does not say.
    pub(crate) fn is_leader(&self) -> bool {
        self.rank.unwrap_or(0) == 0
    }

    /// Whether these are the variables of a launcher an Open MPI build
    /// cannot work with (MPICH's hydra, MVAPICH's): its processes would
    /// each start alone.
    pub(crate) fn is_foreign_to_open_mpi(&self) -> bool {
        matches!(self.kind, "hydra" | "mvapich")
    }

    /// The complaint when MPI sees one process but the launcher started
    /// more: the binary's MPI does not match the launcher.
    pub fn mismatch(&self, world_size: usize, mpi_library: &str) -> Option<String> {
        let size = self.size?;
        if world_size != 1 || size <= 1 {
            return None;
        }
        let lib = short_library_name(mpi_library);
        Some(format!(
            "MPI started 1 process but the launcher ({}) started {size}: this binary was built against \
             {lib} and the launcher belongs to another MPI; use that MPI's mpirun (or srun --mpi=pmix / \
             --mpi=pmi2 to match), or rebuild commbench against the launcher's MPI",
            self.kind
        ))
    }
}

/// "Open MPI v4.1.4" or "MPICH Version: 4.0.2" from a full
/// `MPI_Get_library_version` string.
pub(crate) fn short_library_name(full: &str) -> String {
    let first = full.lines().next().unwrap_or("");
    let head = first.split(',').next().unwrap_or("");
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> LauncherEnv {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        detect_with(&|k| m.get(k).cloned())
    }

    #[test]
    fn open_mpi() {
        let e =
            env(&[("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_LOCAL_RANK", "1")]);
        assert_eq!(
            e,
            LauncherEnv { kind: "openmpi", rank: Some(1), size: Some(4), local_rank: Some(1), local_size: None }
        );
        assert!(!e.is_leader());
    }

    #[test]
    fn hydra_and_slurm() {
        let e = env(&[("PMI_RANK", "0"), ("PMI_SIZE", "2"), ("MPI_LOCALRANKID", "0")]);
        assert_eq!(e.kind, "hydra");
        assert_eq!(e.size, Some(2));
        let s = env(&[("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "3"), ("SLURM_NTASKS", "8"), ("SLURM_LOCALID", "1")]);
        assert_eq!(
            s,
            LauncherEnv { kind: "slurm", rank: Some(3), size: Some(8), local_rank: Some(1), local_size: None }
        );
    }

    #[test]
    fn ranks_on_this_node() {
        let e = env(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_LOCAL_SIZE", "4")]);
        assert_eq!(e.local_size, Some(4));
        let e = env(&[("PMI_RANK", "0"), ("MPI_LOCALNRANKS", "2")]);
        assert_eq!(e.local_size, Some(2));
        let e = env(&[
            ("SLURM_STEP_ID", "0"),
            ("SLURM_PROCID", "7"),
            ("SLURM_NODEID", "3"),
            ("SLURM_STEP_TASKS_PER_NODE", "2(x3),1"),
        ]);
        assert_eq!(e.local_size, Some(1));
        assert_eq!(slurm_tasks_on_node("2(x3),1", 0), Some(2));
        assert_eq!(slurm_tasks_on_node("2(x3),1", 2), Some(2));
        assert_eq!(slurm_tasks_on_node("2(x3),1", 4), None);
        assert_eq!(slurm_tasks_on_node("junk", 0), None);
    }

    #[test]
    fn batch_script_is_not_a_launch() {
        let e = env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), ("SLURM_JOB_ID", "5")]);
        assert_eq!(e.kind, "none");
        assert!(e.is_leader());
        assert_eq!(e.mismatch(1, "x"), None);
    }

    #[test]
    fn library_names() {
        assert_eq!(short_library_name("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"), "Open MPI v4.1.4");
        assert_eq!(short_library_name("MPICH Version:\t4.0.2\nMPICH Release date: x"), "MPICH Version: 4.0.2");
        assert_eq!(short_library_name(""), "");
    }

    #[test]
    fn mismatch_message() {
        let e = env(&[("PMI_RANK", "1"), ("PMI_SIZE", "2")]);
        let m = e.mismatch(1, "Open MPI v4.1.4, package: Debian\n").unwrap();
        assert!(m.starts_with("MPI started 1 process but the launcher (hydra) started 2"), "{m}");
        assert!(m.contains("built against Open MPI v4.1.4 and the launcher"), "{m}");
        assert_eq!(e.mismatch(2, "x"), None);
    }
}
