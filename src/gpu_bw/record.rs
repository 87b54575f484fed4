//! The JSON run record of `commbench gpu-bw`: the fields every commbench
//! record starts with that apply without MPI (status, tool, command line,
//! times, environment), then the configuration, the counting conventions,
//! the driver, each GPU's facts, each pair's path, the files written and
//! the verdict. Written when the run starts and rewritten whole at its end.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::efficiency;
use super::options::Config;
use super::report::Verdict;
use super::survey::Survey;
use crate::report::record::{relevant_environment, write_json, write_json_with_room, LocalRun, RunStatus};

pub(crate) const SCHEMA: &str = "commbench-gpu-bw-record/1";

/// How the numbers are counted, in words, so a reader of the record alone
/// can compare them with other tools.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Conventions {
    pub bandwidth: &'static str,
    pub within_one_gpu: &'static str,
    pub bidirectional: &'static str,
    pub latency: &'static str,
    pub timing: &'static str,
    pub matrices: &'static str,
}

pub(crate) const CONVENTIONS: Conventions = Conventions {
    bandwidth: "GB/s = counted bytes / seconds / 1e9",
    within_one_gpu: "a copy within one GPU counts its bytes twice (read and write), as CUDA's bandwidthTest and \
                     p2pBandwidthLatencyTest count it",
    bidirectional: "both directions' bytes added; the two directions run at once on two streams",
    latency: "GPU event time of reps small copies divided by reps, in microseconds",
    timing: "one untimed round first; then CUDA events around reps asynchronous copies on a non-blocking stream \
             held by a host-function gate until every copy is queued; pageable host memory: each synchronous \
             copy (with cuCtxSynchronize) timed by the host clock, summed",
    matrices: "row = source GPU, column = destination GPU, one-way copies queued on the source GPU's stream; \
               P2P=Enabled only where both GPUs can map each other's memory, peer access switched off again after \
               each pair",
};

/// Efficiency against each path's peak: the judged rows, the pair classes
/// and what `--min-efficiency` said.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Efficiency {
    pub rows: Vec<efficiency::Row>,
    pub classes: Vec<efficiency::ClassSummary>,
    /// `--min-efficiency`'s failing lines (empty when it held or was not
    /// asked).
    pub failing: Vec<String>,
    pub passed: Option<bool>,
}

/// The verdict of `--min-bw`.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub min_bw_gbps: f64,
    pub passed: bool,
    pub pairs_judged: usize,
    /// `[src, dst, GB/s or null]`, worst first.
    pub failing: Vec<(usize, usize, Option<f64>)>,
}

impl Outcome {
    pub fn of(v: &Verdict) -> Outcome {
        let mut failing: Vec<_> = v.failing.iter().map(|f| (f.src, f.dst, f.gbps)).collect();
        failing.sort_by(|a, b| a.2.unwrap_or(-1.0).total_cmp(&b.2.unwrap_or(-1.0)));
        Outcome { min_bw_gbps: v.min_gbps, passed: v.passed(), pairs_judged: v.judged, failing }
    }
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct GpuBwRecord {
    pub schema: &'static str,
    pub command: &'static str,
    #[serde(flatten)]
    pub run: LocalRun,
    pub config: Config,
    pub conventions: Conventions,
    /// CUDA version the driver supports (`12.8`).
    pub driver_version: Option<String>,
    /// GPUs the driver shows (measured or not).
    pub devices: usize,
    /// The measured GPUs, their pairs' paths and their PCIe links.
    #[serde(flatten)]
    pub survey: Survey,
    pub efficiency: Option<Efficiency>,
    /// Timings whose stream started before all their copies were queued.
    pub gate_timeouts: usize,
    pub notes: Vec<String>,
    /// Output files by kind.
    pub files: BTreeMap<String, String>,
    pub outcome: Option<Outcome>,
    pub environment: BTreeMap<String, String>,
}

impl GpuBwRecord {
    /// A run that starts now.
    pub fn running(config: Config, host: String, command_line: Vec<String>) -> GpuBwRecord {
        GpuBwRecord {
            schema: SCHEMA,
            command: "gpu-bw",
            run: LocalRun::starting(host, command_line),
            config,
            conventions: CONVENTIONS,
            driver_version: None,
            devices: 0,
            survey: Survey::default(),
            efficiency: None,
            gate_timeouts: 0,
            notes: Vec::new(),
            files: BTreeMap::new(),
            outcome: None,
            environment: relevant_environment(),
        }
    }

    /// Marks the run ended now.
    pub fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        self.run.end(status, detail, exit_code);
    }

    /// Writes the record of a run that starts to `path`, with room for its
    /// end, which a disk that fills up during the run then cannot refuse.
    pub(crate) fn write_running(&self, path: &Path) -> std::io::Result<()> {
        write_json_with_room(self, path)
    }

    /// Writes the record whole to `path` (temporary file and rename; on a
    /// full disk, over the old one in place, within its room).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        write_json(self, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::options::ResultsDest;
    use crate::gpu_bw::options::Test;
    use crate::gpu_bw::report::Shortfall;

    #[test]
    fn record_round_trip() {
        let cfg = Config {
            tests: vec![Test::P2p],
            gpus: Some(vec![0, 1]),
            host_bytes: 1,
            host_reps: 2,
            peer_bytes: 3,
            peer_reps: 4,
            latency_bytes: 16,
            latency_reps: 100,
            min_bw: Some(300e9),
            min_efficiency: Some(80.0),
            results: ResultsDest::Off,
            machine: None,
        };
        let mut r = GpuBwRecord::running(cfg, "node1".into(), vec!["commbench".into(), "gpu-bw".into()]);
        let v = Verdict {
            min_gbps: 300.0,
            judged: 2,
            failing: vec![Shortfall { src: 0, dst: 1, gbps: Some(250.0) }, Shortfall { src: 1, dst: 0, gbps: None }],
        };
        r.outcome = Some(Outcome::of(&v));
        r.end(RunStatus::Failed, None, 1);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.json");
        r.write(&p).unwrap();
        let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(j["schema"], SCHEMA);
        assert_eq!(j["status"], "failed");
        assert_eq!(j["exit_code"], 1);
        assert_eq!(j["config"]["tests"], serde_json::json!(["p2p"]));
        assert_eq!(j["config"]["min_bw_bytes_per_s"], 300e9);
        assert_eq!(j["config"]["results"], "off");
        assert_eq!(j["outcome"]["failing"], serde_json::json!([[1, 0, null], [0, 1, 250.0]]));
        assert!(j["conventions"]["within_one_gpu"].as_str().unwrap().contains("twice"));
        assert!(j["end_utc"].is_string());
    }
}
