//! What an nvbandwidth run leaves besides its stdout, as every commbench
//! run does: `<UTC stamp>_nvbandwidth[_job<id>].csv`, one row per
//! measured cell in the GPU copy tools' schema ([`crate::gpu_bw::cells`];
//! appended whole after each case, so a run cut short keeps the cases it
//! finished), the peer cases' matrices as CSV and heatmap, and `.json`,
//! the run record (the command, the options, the driver, each GPU with
//! its NUMA node and the CPUs its host memory was allocated from, the
//! paths between GPUs and their peaks, each cell's share of its path, how
//! each case ended, the files), written when the run starts and rewritten
//! whole at its end. They go to `results/` or `$COMMBENCH_RESULTS_DIR`;
//! where the default place cannot be written the run goes on with one
//! warning.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cases::{Case, Engine, Shape};
use super::output::Matrix;
use crate::gpu_bw::cells::{Cell, CellRecord, Judgement, Unit};
use crate::gpu_bw::survey::Paths;
use crate::report::record::{relevant_environment, LocalRun, RunStatus};

pub(crate) const SCHEMA: &str = "commbench-nvbandwidth-record/1";

/// How the figures are counted, in words, for a reader of the record
/// alone.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Conventions {
    pub bandwidth: &'static str,
    pub timing: &'static str,
    pub latency: &'static str,
    pub verification: &'static str,
}

pub(crate) const CONVENTIONS: Conventions = Conventions {
    bandwidth: "nvbandwidth's: per sample, bytes moved per copy x loops x 10^6 / whole microseconds between the \
                copy's events (a both-ways kernel: half of that); the median of the samples (mean with -m), / 1e9; \
                all-to-one and one-to-all: every copy's bytes over the first start to the last end",
    timing: "per copy its own stream in the context nvbandwidth uses, held by a host-function gate while 4 warm-up \
             copies, the start events (each stream waiting for the first's) and the timed copies are queued",
    latency: "nanoseconds per load of a pointer chase over 2 MiB, 16 nodes (128 bytes) apart, one block of one \
              thread at a time, as many blocks as GPU 0 has SMs, a million loads in all",
    verification: "before each sample every source holds nvbandwidth's xorshift pattern (seed 0xBAADF00D) and \
                   every destination another (0xCAFEBABE); after it each destination is compared word by word with \
                   the source's (skipped with -s)",
};

/// The options that shape the figures.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Settings {
    pub buffer_mib: u64,
    pub loops: u64,
    pub samples: u32,
    pub statistic: &'static str,
    pub verify: bool,
    pub numa_affinity: bool,
    pub cases: Vec<String>,
}

/// One GPU as the run saw it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Gpu {
    pub index: usize,
    pub name: String,
    pub pci_bus_id: Option<String>,
    pub numa_node: Option<usize>,
    /// The CPUs its host memory was allocated from (unless `-d`).
    pub host_memory_bound_to: Option<String>,
}

/// How one case ended.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CaseEnd {
    pub case: String,
    /// `passed`, `waived`, `error` or `not_found`.
    pub status: &'static str,
    pub detail: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct NvbRecord {
    pub schema: &'static str,
    pub command: &'static str,
    #[serde(flatten)]
    pub run: LocalRun,
    /// The nvbandwidth release whose behaviour this follows.
    pub follows: &'static str,
    pub settings: Settings,
    pub conventions: Conventions,
    /// What cuDriverGetVersion says (12080).
    pub cuda_driver_version: i32,
    /// NVML's driver version.
    pub driver_version: String,
    pub gpus: Vec<Gpu>,
    /// How the kernels were had, or why not (None: no case needed them).
    pub kernels: Option<String>,
    /// Where the copied data was filled and checked.
    pub verification: String,
    pub cases: Vec<CaseEnd>,
    /// Samples whose streams started before all their copies were queued.
    pub gate_timeouts: usize,
    /// The paths between the GPUs and to host memory, with their peaks.
    #[serde(flatten)]
    pub paths: Paths,
    /// Each judged cell against its path, and `--min-efficiency`.
    pub efficiency: Option<Judgement>,
    pub files: BTreeMap<String, String>,
    pub environment: BTreeMap<String, String>,
}

impl NvbRecord {
    pub fn running(settings: Settings, host: String, command_line: Vec<String>) -> NvbRecord {
        NvbRecord {
            schema: SCHEMA,
            command: "nvbandwidth",
            run: LocalRun::starting(host, command_line),
            follows: super::output::NVBANDWIDTH_VERSION,
            settings,
            conventions: CONVENTIONS,
            cuda_driver_version: 0,
            driver_version: String::new(),
            gpus: Vec::new(),
            kernels: None,
            verification: String::new(),
            cases: Vec::new(),
            gate_timeouts: 0,
            paths: Paths::default(),
            efficiency: None,
            files: BTreeMap::new(),
            environment: relevant_environment(),
        }
    }

    /// Marks the run ended now.
    pub fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        self.run.end(status, detail, exit_code);
    }
}

impl CellRecord for NvbRecord {
    fn files_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.files
    }

    fn set_survey(&mut self, s: &crate::gpu_bw::survey::Survey) {
        self.paths = s.paths.clone();
    }

    fn set_efficiency(&mut self, j: Judgement) {
        self.efficiency = Some(j);
    }

    fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        NvbRecord::end(self, status, detail, exit_code);
    }
}

/// What every row of a run shares.
pub(crate) struct RowContext {
    pub buffer_bytes: u64,
    pub loops: u64,
    pub samples: u32,
    pub statistic: &'static str,
}

/// Where the data of cell (`row`, `col`) of a case's `matrix`-th matrix
/// goes from and to (`host`, `gpuN`, `peers`: the GPUs with peer access;
/// `both`: a two-way total), as the case measures it.
pub(crate) fn ends(case: &Case, matrix: usize, row: usize, col: usize) -> (String, String) {
    let gpu = |i: usize| format!("gpu{i}");
    let host = || "host".to_string();
    match case.shape {
        Shape::HostDevice { to_device, .. } => {
            if to_device {
                (host(), gpu(col))
            } else {
                (gpu(col), host())
            }
        }
        Shape::AllHost { to_host, .. } => {
            if to_host {
                (gpu(col), host())
            } else {
                (host(), gpu(col))
            }
        }
        Shape::Peer { read, both: false } => {
            if read {
                (gpu(col), gpu(row))
            } else {
                (gpu(row), gpu(col))
            }
        }
        // The first copy runs from the column's GPU into the row's, the
        // second back; the third matrix is their total.
        Shape::Peer { both: true, .. } => match matrix {
            0 => (gpu(col), gpu(row)),
            1 => (gpu(row), gpu(col)),
            _ => (format!("gpu{row}+gpu{col}"), "both".to_string()),
        },
        Shape::AllToOne { read } => {
            if read {
                (gpu(col), "peers".to_string())
            } else {
                ("peers".to_string(), gpu(col))
            }
        }
        Shape::OneToAll { read } => {
            if read {
                ("peers".to_string(), gpu(col))
            } else {
                (gpu(col), "peers".to_string())
            }
        }
        // Loads: by the row's GPU (the column's for host memory) from the
        // memory named second.
        Shape::HostLatency => (gpu(col), host()),
        Shape::PeerLatency => (gpu(row), gpu(col)),
        Shape::Local => (gpu(col), gpu(col)),
    }
}

/// A case's matrices as cells: each measured value with where its data
/// went, its bytes and how it was counted.
pub(crate) fn cells(case: &Case, mats: &[Matrix], run: &RowContext) -> Vec<Cell> {
    let engine = match case.engine {
        Engine::Ce => "ce",
        Engine::Sm => "sm",
    };
    let mut out = Vec::new();
    for (k, m) in mats.iter().enumerate() {
        let matrix = m.key.strip_prefix(case.key).map_or(m.key.as_str(), |r| r.trim_start_matches('_')).to_string();
        for r in 0..m.rows {
            for c in 0..m.cols {
                let Some(v) = m.get(r, c) else { continue };
                let (from, to) = ends(case, k, r, c);
                let latency = m.latency;
                let host = from == "host" || to == "host";
                out.push(Cell {
                    test: case.key.to_string(),
                    engine,
                    matrix: matrix.clone(),
                    row: Some(r),
                    column: Some(c),
                    from,
                    to,
                    host_memory: if host { "pinned" } else { "" },
                    peer_access: None,
                    bytes: if latency { super::sm::LATENCY_BYTES as u64 } else { run.buffer_bytes },
                    loops: (!latency).then_some(run.loops),
                    samples: (!latency).then_some(run.samples),
                    statistic: if latency { "" } else { run.statistic },
                    value: v,
                    unit: if latency { Unit::Ns } else { Unit::GBps },
                    both_ways: false,
                    judged: true,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu_bw::nvbandwidth::cases::{find, CASES};

    #[test]
    fn each_cell_names_where_its_data_goes() {
        let e = |key: &str, m, r, c| {
            let (f, t) = ends(find(key).unwrap(), m, r, c);
            format!("{f}>{t}")
        };
        assert_eq!(e("host_to_device_memcpy_ce", 0, 0, 3), "host>gpu3");
        assert_eq!(e("device_to_host_bidirectional_memcpy_sm", 0, 0, 1), "gpu1>host");
        assert_eq!(e("device_to_device_memcpy_read_ce", 0, 1, 2), "gpu2>gpu1");
        assert_eq!(e("device_to_device_memcpy_write_sm", 0, 1, 2), "gpu1>gpu2");
        assert_eq!(e("device_to_device_bidirectional_memcpy_read_ce", 1, 1, 2), "gpu1>gpu2");
        assert_eq!(e("all_to_one_write_ce", 0, 0, 2), "peers>gpu2");
        assert_eq!(e("one_to_all_read_sm", 0, 0, 2), "peers>gpu2");
        assert_eq!(e("host_device_latency_sm", 0, 0, 1), "gpu1>host");
        assert_eq!(e("device_local_copy", 0, 0, 1), "gpu1>gpu1");
        let mut m = Matrix::new("host_to_device_memcpy_ce", "t", 1, 2, false);
        m.set(0, 1, 12.5);
        let ctx = RowContext { buffer_bytes: 1 << 20, loops: 16, samples: 3, statistic: "median" };
        let got = cells(&CASES[0], &[m], &ctx);
        assert_eq!(got.len(), 1);
        let c = &got[0];
        assert_eq!(
            (c.test.as_str(), c.matrix.as_str(), c.row, c.column),
            ("host_to_device_memcpy_ce", "", Some(0), Some(1))
        );
        assert_eq!((c.from.as_str(), c.to.as_str(), c.host_memory, c.bytes), ("host", "gpu1", "pinned", 1 << 20));
        assert_eq!((c.loops, c.samples, c.statistic, c.value, c.unit), (Some(16), Some(3), "median", 12.5, Unit::GBps));
        let mut both: Vec<Matrix> = CASES[6].matrices().iter().map(|(k, t)| Matrix::new(k, t, 2, 2, false)).collect();
        both[2].set(0, 1, 40.0);
        let got = cells(&CASES[6], &both, &ctx);
        assert_eq!((got[0].matrix.as_str(), got[0].from.as_str(), got[0].to.as_str()), ("total", "gpu0+gpu1", "both"));
    }
}
