//! What an nvbandwidth run leaves besides its stdout, as every commbench
//! run does: `<UTC stamp>_nvbandwidth[_job<id>].csv`, one row per
//! measured cell (appended whole after each case, so a run cut short
//! keeps the cases it finished), and `.json`, the run record (the
//! command, the options, the driver, each GPU with its NUMA node and the
//! CPUs its host memory was allocated from, how each case ended, the
//! files), written when the run starts and rewritten whole at its end.
//! They go to `results/` or `$COMMBENCH_RESULTS_DIR`; where the default
//! place cannot be written the run goes on with one warning.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde::Serialize;

use super::cases::{Case, Engine, Shape};
use super::output::Matrix;
use crate::options::ResultsDest;
use crate::report::files::{self, ResultsError};
use crate::report::record::{relevant_environment, write_json, write_json_with_room, LocalRun, RunStatus};
use crate::report::safe_file::RowFile;
use crate::report::time::Utc;

pub(crate) const SCHEMA: &str = "commbench-nvbandwidth-record/1";

/// Columns of the CSV.
pub const COLUMNS: &[&str] = &[
    "case_index",
    "case",
    "engine",
    "matrix",
    "row",
    "column",
    "from",
    "to",
    "buffer_bytes",
    "loops",
    "samples",
    "statistic",
    "value",
    "unit",
    "finished_utc",
];

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
    pub cases: Vec<CaseEnd>,
    /// Samples whose streams started before all their copies were queued.
    pub gate_timeouts: usize,
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
            cases: Vec::new(),
            gate_timeouts: 0,
            files: BTreeMap::new(),
            environment: relevant_environment(),
        }
    }

    pub fn end(&mut self, status: RunStatus, detail: Option<String>, exit_code: i32) {
        self.run.end(status, detail, exit_code);
    }
}

/// The run's two files.
pub(crate) struct NvbFiles {
    pub record_path: PathBuf,
    pub csv_path: PathBuf,
    rows: RowFile,
}

/// Where results go: `$COMMBENCH_RESULTS_DIR` (chosen: a failure there
/// stops the run), else `results/`.
pub(crate) fn destination() -> (ResultsDest, bool) {
    match std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()) {
        Some(d) => (ResultsDest::Dir(PathBuf::from(d)), true),
        None => (ResultsDest::Dir(PathBuf::from("results")), false),
    }
}

impl NvbFiles {
    /// Creates both files; Err is one line in this tool's terms (it has
    /// no option for the place: `$COMMBENCH_RESULTS_DIR` chooses it).
    pub fn create(dest: &ResultsDest, job: Option<&str>) -> Result<Option<NvbFiles>, String> {
        let header = COLUMNS.join(",") + "\n";
        let stamp = Utc::now().compact();
        let made = files::create_with_header(dest, "nvbandwidth", &stamp, job, header.as_bytes());
        let made = made.map_err(|e| match e {
            ResultsError::Create { path, source } => format!(
                "cannot write results to '{}': {source} (COMMBENCH_RESULTS_DIR chooses another place)",
                path.display()
            ),
            other => other.to_string(),
        })?;
        let Some(f) = made else {
            return Ok(None);
        };
        Ok(Some(NvbFiles { record_path: f.record_path, csv_path: f.csv_path, rows: f.rows }))
    }

    /// The record, written with room for its end.
    pub fn start(&self, rec: &NvbRecord) -> io::Result<()> {
        write_json_with_room(rec, &self.record_path)
    }

    pub fn finish(&self, rec: &NvbRecord) -> io::Result<()> {
        write_json(rec, &self.record_path)
    }

    /// Appends a case's cells as whole rows.
    pub fn append(&mut self, index: usize, case: &Case, mats: &[Matrix], run: &RowContext) -> io::Result<()> {
        let rows = csv_rows(index, case, mats, run)?;
        self.rows.append(&rows)
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

fn csv_rows(index: usize, case: &Case, mats: &[Matrix], run: &RowContext) -> io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let finished = Utc::now().rfc3339();
    let engine = match case.engine {
        Engine::Ce => "ce",
        Engine::Sm => "sm",
    };
    for (k, m) in mats.iter().enumerate() {
        for r in 0..m.rows {
            for c in 0..m.cols {
                let Some(v) = m.get(r, c) else { continue };
                let (from, to) = ends(case, k, r, c);
                let latency = m.latency;
                w.write_record([
                    index.to_string(),
                    case.key.to_string(),
                    engine.to_string(),
                    m.key.clone(),
                    r.to_string(),
                    c.to_string(),
                    from,
                    to,
                    if latency { (super::sm::LATENCY_BYTES as u64).to_string() } else { run.buffer_bytes.to_string() },
                    if latency { String::new() } else { run.loops.to_string() },
                    if latency { String::new() } else { run.samples.to_string() },
                    if latency { String::new() } else { run.statistic.to_string() },
                    format!("{v}"),
                    if latency { "ns" } else { "GB/s" }.to_string(),
                    finished.clone(),
                ])
                .map_err(io::Error::other)?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error())
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
        let mut m = Matrix::new("k", "t", 1, 2, false);
        m.set(0, 1, 12.5);
        let ctx = RowContext { buffer_bytes: 1 << 20, loops: 16, samples: 3, statistic: "median" };
        let rows = String::from_utf8(csv_rows(0, &CASES[0], &[m], &ctx).unwrap()).unwrap();
        assert!(
            rows.starts_with("0,host_to_device_memcpy_ce,ce,k,0,1,host,gpu1,1048576,16,3,median,12.5,GB/s,"),
            "{rows}"
        );
        assert_eq!(rows.lines().count(), 1);
    }
}
