//! The JSON run record of `commbench pairs`: the shared pieces of the OSU
//! binaries' record (tool, MPI, launcher, ranks, environment) plus what a
//! pairs run adds (configuration, schedule, output files, the measured
//! paths with their peaks and sources, verdict with the failing pairs and
//! the per-host summary).

use std::collections::BTreeMap;

use serde::Serialize;

use super::blame::{Blame, Cause, EndpointSummary};
use super::criteria::{Evaluation, Failure};
use super::options::Config;
use super::paths::PathGroup;
use super::results::PairRow;
use crate::report::record::RunHeader;

pub(crate) const SCHEMA: &str = "commbench-pairs-record/1";

#[derive(Clone, Debug, Serialize)]
pub(crate) struct PairsRecord {
    pub schema: String,
    pub command: String,
    #[serde(flatten)]
    pub run: RunHeader,
    pub transport: String,
    pub config: Config,
    pub schedule: ScheduleInfo,
    /// Output files by kind (measurements, bw_matrix, bw_heatmap, ...).
    pub files: BTreeMap<String, String>,
    /// The measured directions by path: each path's peak, the figures it
    /// comes from, and the share of it reached (each rank's own end is in
    /// `ranks[].path_end`). Filled in as the run ends.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathGroup>,
    pub outcome: Option<Outcome>,
    /// What the backend says about itself (UCX: version, UCX_TLS,
    /// UCX_NET_DEVICES, each rank's endpoint lanes); absent for MPI.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_details: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ScheduleInfo {
    pub rounds: usize,
    /// Directions measured over all rounds.
    pub directions: usize,
}

/// The verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Null when no criterion was given: nothing was judged.
    pub passed: Option<bool>,
    /// `pass`, `fail`, or `measured, no criteria`.
    pub verdict: String,
    pub pairs: usize,
    pub failing_pairs: usize,
    pub median_bw_mbps: Option<f64>,
    /// Worst first.
    pub failing: Vec<FailingPair>,
    pub bad_hosts: Vec<String>,
    pub bad_ranks: Vec<usize>,
    pub hosts: Vec<EndpointSummary>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FailingPair {
    pub round: usize,
    pub a: usize,
    pub b: usize,
    pub host_a: String,
    pub host_b: String,
    pub bw_ab_mbps: Option<f64>,
    pub bw_ba_mbps: Option<f64>,
    pub latency_us: Option<f64>,
    pub failures: Vec<Failure>,
    pub cause: Option<Cause>,
}

impl Outcome {
    /// `criteria`: whether any criterion was given.
    pub fn new(rows: &[PairRow], eval: &Evaluation, blame: &Blame, hosts: &[String], criteria: bool) -> Outcome {
        let host = |x: usize| hosts.get(x).cloned().unwrap_or_default();
        // Without criteria nothing is judged, except that a direction the
        // scheme should have measured and did not still fails.
        let judged = criteria || !eval.passed();
        let verdict = match (judged, eval.passed()) {
            (false, _) => super::report::NO_CRITERIA,
            (true, true) => "pass",
            (true, false) => "fail",
        };
        Outcome {
            passed: judged.then(|| eval.passed()),
            verdict: verdict.to_string(),
            pairs: rows.len(),
            failing_pairs: eval.failing.len(),
            median_bw_mbps: eval.median_bw.map(|m| m / 1e6),
            failing: eval
                .failing
                .iter()
                .map(|&k| {
                    let r = &rows[k];
                    FailingPair {
                        round: r.round,
                        a: r.a,
                        b: r.b,
                        host_a: host(r.a),
                        host_b: host(r.b),
                        bw_ab_mbps: r.ab.map(|v| v / 1e6),
                        bw_ba_mbps: r.ba.map(|v| v / 1e6),
                        latency_us: r.latency.map(|v| v * 1e6),
                        failures: eval.failures[k].clone(),
                        cause: blame.causes.get(k).cloned().flatten(),
                    }
                })
                .collect(),
            bad_hosts: blame.hosts.iter().filter(|h| h.bad).map(|h| h.name.clone()).collect(),
            bad_ranks: blame.ranks.iter().filter(|r| r.bad).flat_map(|r| r.ranks.clone()).collect(),
            hosts: blame.hosts.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::options::{parse, Parsed};
    use crate::report::record::{samples, RunStatus};

    /// A pairs record carries the same header as the OSU binaries' record,
    /// flat at its top level, and reads back as that header; its status
    /// words are `passed`, `failed` and `error`.
    #[test]
    fn header_reads_back() {
        let Ok(Parsed::Run(config)) = parse(&["--no-results".to_string()]) else { panic!("pairs options") };
        for (status, word) in
            [(RunStatus::Passed, "passed"), (RunStatus::Failed, "failed"), (RunStatus::Error, "error")]
        {
            let mut run = samples::header();
            run.end(status, None, 1);
            let rec = PairsRecord {
                schema: SCHEMA.into(),
                command: "pairs".into(),
                run: run.clone(),
                transport: "mpi".into(),
                config: (*config).clone(),
                schedule: ScheduleInfo { rounds: 1, directions: 2 },
                files: BTreeMap::new(),
                paths: Vec::new(),
                outcome: None,
                backend_details: None,
            };
            let v = serde_json::to_value(&rec).unwrap();
            assert_eq!((v["status"].as_str(), v["transport"].as_str()), (Some(word), Some("mpi")));
            assert_eq!(serde_json::from_value::<RunHeader>(v).unwrap(), run);
        }
    }
}
