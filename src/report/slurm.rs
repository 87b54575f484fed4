//! What Slurm says about the job a run belongs to (job id and name, node
//! list, task layout, step, partition, submit directory), read from the
//! SLURM_* variables that sbatch, salloc and srun set, for the run record
//! and the suite's summary.

use serde::{Deserialize, Serialize};

/// The job as Slurm describes it. Every field is what the variable said,
/// trimmed; counts are parsed where Slurm gives a plain number.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct SlurmInfo {
    pub job_id: String,
    pub job_name: Option<String>,
    /// Compressed host list, e.g. `node[01-04]`.
    pub node_list: Option<String>,
    pub num_nodes: Option<usize>,
    pub ntasks: Option<usize>,
    /// Tasks on each node in Slurm's compressed form, e.g. `2(x3),1`.
    pub tasks_per_node: Option<String>,
    /// What `--ntasks-per-node` asked for, if it was given.
    pub ntasks_per_node: Option<usize>,
    pub cpus_on_node: Option<usize>,
    /// The job step (absent in the batch script itself, outside srun).
    pub step_id: Option<String>,
    pub partition: Option<String>,
    pub submit_dir: Option<String>,
    pub cluster_name: Option<String>,
}

impl SlurmInfo {
    /// Reads the variables through `get`; None outside a Slurm job (no
    /// SLURM_JOB_ID, or an empty one).
    pub(crate) fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Option<SlurmInfo> {
        let text =
            |keys: &[&str]| keys.iter().find_map(|k| get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()));
        let count = |keys: &[&str]| text(keys).and_then(|v| v.parse::<usize>().ok());
        let job_id = text(&["SLURM_JOB_ID", "SLURM_JOBID"])?;
        Some(SlurmInfo {
            job_id,
            job_name: text(&["SLURM_JOB_NAME"]),
            node_list: text(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"]),
            num_nodes: count(&["SLURM_JOB_NUM_NODES", "SLURM_NNODES"]),
            ntasks: count(&["SLURM_NTASKS", "SLURM_NPROCS"]),
            tasks_per_node: text(&["SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"]),
            ntasks_per_node: count(&["SLURM_NTASKS_PER_NODE"]),
            cpus_on_node: count(&["SLURM_CPUS_ON_NODE"]),
            step_id: text(&["SLURM_STEP_ID", "SLURM_STEPID"]),
            partition: text(&["SLURM_JOB_PARTITION"]),
            submit_dir: text(&["SLURM_SUBMIT_DIR"]),
            cluster_name: text(&["SLURM_CLUSTER_NAME"]),
        })
    }

    /// Reads this process's environment.
    pub(crate) fn from_env() -> Option<SlurmInfo> {
        Self::from_lookup(&|k| std::env::var(k).ok())
    }

    /// Tasks on the first node, from `--ntasks-per-node` or the first entry
    /// of SLURM_TASKS_PER_NODE (`4(x2)` gives 4).
    #[cfg(test)]
    pub fn tasks_on_first_node(&self) -> Option<usize> {
        self.ntasks_per_node.or_else(|| {
            let first = self.tasks_per_node.as_deref()?.split(',').next()?;
            first.split('(').next()?.trim().parse().ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn info(pairs: &[(&str, &str)]) -> Option<SlurmInfo> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        SlurmInfo::from_lookup(&|k| m.get(k).cloned())
    }

    #[test]
    fn outside_slurm_is_none() {
        assert_eq!(info(&[("SLURM_NTASKS", "2")]), None);
        assert_eq!(info(&[("SLURM_JOB_ID", " ")]), None);
    }

    #[test]
    fn batch_job_fields() {
        let s = info(&[
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_JOB_NAME", "commbench-pt2pt"),
            ("SLURM_JOB_NODELIST", "node[01-02]"),
            ("SLURM_JOB_NUM_NODES", "2"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_TASKS_PER_NODE", "1(x2)"),
            ("SLURM_NTASKS_PER_NODE", "1"),
            ("SLURM_CPUS_ON_NODE", "64"),
            ("SLURM_JOB_PARTITION", "debug"),
            ("SLURM_SUBMIT_DIR", "/home/u/commbench"),
            ("SLURM_CLUSTER_NAME", "bench"),
        ])
        .unwrap();
        assert_eq!(s.job_id, "4242");
        assert_eq!(s.job_name.as_deref(), Some("commbench-pt2pt"));
        assert_eq!(s.node_list.as_deref(), Some("node[01-02]"));
        assert_eq!((s.num_nodes, s.ntasks, s.ntasks_per_node, s.cpus_on_node), (Some(2), Some(2), Some(1), Some(64)));
        assert_eq!(s.tasks_per_node.as_deref(), Some("1(x2)"));
        assert_eq!(s.step_id, None, "the batch script is not a step");
        assert_eq!(s.partition.as_deref(), Some("debug"));
        assert_eq!(s.submit_dir.as_deref(), Some("/home/u/commbench"));
        assert_eq!(s.cluster_name.as_deref(), Some("bench"));
    }

    #[test]
    fn older_names_and_steps() {
        let s = info(&[
            ("SLURM_JOBID", "7"),
            ("SLURM_NODELIST", "n1"),
            ("SLURM_NNODES", "1"),
            ("SLURM_NPROCS", "4"),
            ("SLURM_STEP_ID", "3"),
            ("SLURM_CPUS_ON_NODE", "many"),
        ])
        .unwrap();
        assert_eq!(s.job_id, "7");
        assert_eq!((s.node_list.as_deref(), s.num_nodes, s.ntasks), (Some("n1"), Some(1), Some(4)));
        assert_eq!(s.step_id.as_deref(), Some("3"));
        assert_eq!(s.cpus_on_node, None, "not a number is left out");
    }

    #[test]
    fn first_node_tasks() {
        let s = info(&[("SLURM_JOB_ID", "1"), ("SLURM_TASKS_PER_NODE", "4(x2),3")]).unwrap();
        assert_eq!(s.tasks_on_first_node(), Some(4));
        let s = info(&[("SLURM_JOB_ID", "1"), ("SLURM_TASKS_PER_NODE", "2"), ("SLURM_NTASKS_PER_NODE", "8")]).unwrap();
        assert_eq!(s.tasks_on_first_node(), Some(8));
        assert_eq!(info(&[("SLURM_JOB_ID", "1")]).unwrap().tasks_on_first_node(), None);
    }
}
