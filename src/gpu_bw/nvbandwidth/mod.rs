//! `nvbandwidth`, the drop-in for NVIDIA's tool of that name (v0.8): its
//! command line ([`args`]), its 35 single-node test cases by index and
//! name ([`cases`]), each measured its way ([`run`], over the shared
//! timing core [`crate::gpu_bw::measure::concurrent`]; copy kernels and
//! the pointer chase from [`sm`]), and its output, plain or `-j` JSON
//! ([`output`], [`json`]).
//!
//! Exit status as the tool's: 0 when the cases ran (a case it does not
//! know is reported and skipped), 1 for a refused command line, a CUDA
//! failure, or a copy whose data arrived wrong. Where the tool would die
//! (CUDA errors, wrong data) ours says one line on stderr (in JSON, the
//! document with its `error`) and exits 1 likewise. The multinode cases,
//! which need MPI and the driver's fabric memory handles, are not offered:
//! `-t` with one of their names says so in one line on stderr. Each run
//! also leaves a CSV of its cells, each against its path's peak, the peer
//! cases' heatmaps and a run record ([`record`],
//! [`crate::gpu_bw::cells`]); commbench's own `--min-efficiency PCT`
//! (not in the tool's help, as its `--loopCount` is not) names on stderr
//! every cell below that share of its path's peak and exits 1.

pub mod args;
pub mod cases;
pub mod json;
pub mod output;
pub(crate) mod record;
pub(crate) mod run;
pub(crate) mod sm;

use super::cells;
use super::driver::{self, Device};
use super::measure::concurrent::{DeviceCheck, Failure};
use super::survey::Survey;
use crate::report::record::RunStatus;
use cases::Case;
use output::Out;
use record::{CaseEnd, NvbRecord};

/// The run's record and files.
type Results = cells::Outputs<NvbRecord>;

/// Notes how case `key` ended in the record.
fn case_end(res: &mut Results, key: &str, status: &'static str, detail: Option<String>) {
    res.rec.cases.push(CaseEnd { case: key.to_string(), status, detail });
}

/// Ends the run's results: the exit status.
fn finish(res: &mut Results, status: RunStatus, detail: Option<String>, code: i32, min_pct: Option<f64>) -> i32 {
    let s = &res.rec.settings;
    let subtitle = format!(
        "{} MiB buffers, {} copies per sample, {} of {} samples",
        s.buffer_mib, s.loops, s.statistic, s.samples
    );
    res.end(status, detail, code, min_pct, &subtitle).1
}

const NAME: &str = "nvbandwidth";

/// The multinode cases' names (nvbandwidth built with MPI).
const MULTINODE: [&str; 13] = [
    "multinode_device_to_device_memcpy_read_ce",
    "multinode_device_to_device_memcpy_write_ce",
    "multinode_device_to_device_bidirectional_memcpy_read_ce",
    "multinode_device_to_device_bidirectional_memcpy_write_ce",
    "multinode_device_to_device_memcpy_read_sm",
    "multinode_device_to_device_memcpy_write_sm",
    "multinode_device_to_device_bidirectional_memcpy_read_sm",
    "multinode_device_to_device_bidirectional_memcpy_write_sm",
    "multinode_device_to_device_all_to_one_write_sm",
    "multinode_device_to_device_all_from_one_read_sm",
    "multinode_device_to_device_broadcast_one_to_all_sm",
    "multinode_device_to_device_broadcast_all_to_all_sm",
    "multinode_device_to_device_bisect_write_ce",
];

/// Entry point: the whole command line, program name first; returns the
/// exit status.
pub fn main(argv: &[String]) -> i32 {
    crate::job::install_panic_hook(NAME);
    let a = match args::parse(argv.get(1..).unwrap_or(&[])) {
        Ok(a) => a,
        Err(e) => {
            let mut out = Out::new(false, false, false);
            out.version();
            super::out(&format!("ERROR: Invalid Arguments \n{} :\n\n{}\n", argv.join(" ") + " ", args::help_text()));
            crate::diag::say(&format!("{NAME}: {e}"));
            return 1;
        }
    };
    let mut out = Out::new(a.json, a.verbose, a.perf_formatter);
    out.version();
    if a.help {
        if !out.is_json() {
            super::out(&format!("{}\n", args::help_text()));
        }
        return 0;
    }
    if a.list {
        if !out.is_json() {
            super::out(&cases::list_text());
        }
        return 0;
    }
    if !a.testcases.is_empty() && !a.prefixes.is_empty() {
        out.fatal(&format!("{NAME}: -t (--testcase) and -p (--testcasePrefixes) cannot be given together"));
        return 1;
    }
    if let Some(m) = a.testcases.iter().find(|t| MULTINODE.contains(&t.as_str())) {
        out.fatal(&format!(
            "{NAME}: {m} is a multinode case: it needs MPI and the driver's fabric memory handles, \
             which this build does not use; run it with NVIDIA's multinode nvbandwidth"
        ));
        return 1;
    }
    let host = crate::topo::hostname();
    let count = match driver::start(&host) {
        Ok(n) => n,
        Err(f) => {
            out.fatal(&format!("{NAME}: {}", f.line));
            return 1;
        }
    };
    let devs: Vec<Device> = match (0..count).map(Device::open).collect::<Result<_, _>>() {
        Ok(d) => d,
        Err(e) => {
            out.fatal(&format!("{NAME}: {e}"));
            return 1;
        }
    };
    if a.buffer_mib < args::DEFAULT_BUFFER_MIB {
        out.warning(&format!(
            "NOTE: the buffer size ({} MiB) is below the default of {} MiB; copies this small may not reach \
             the links' full bandwidth.",
            a.buffer_mib,
            args::DEFAULT_BUFFER_MIB
        ));
    }
    let driver_text = crate::gpu::nvml::driver_version().unwrap_or_else(|_| "unknown".into());
    out.cuda(driver::driver_version_code().unwrap_or(0), &driver_text);
    let names: Vec<String> = devs
        .iter()
        .map(|d| {
            let (bus, device, domain) = d.pci_location();
            format!("{} ({domain:08x}:{bus:02x}:{device:02x})", d.name())
        })
        .collect();
    out.devices(&host, &names);

    let settings = record::Settings {
        buffer_mib: a.buffer_mib,
        loops: a.loops,
        samples: a.samples,
        statistic: if a.use_mean { "mean" } else { "median" },
        verify: !a.skip_verification,
        numa_affinity: !a.disable_affinity,
        cases: Vec::new(),
    };
    let mut rec = NvbRecord::running(settings, host.clone(), argv.to_vec());
    rec.cuda_driver_version = driver::driver_version_code().unwrap_or(0);
    rec.driver_version = driver_text.clone();
    rec.gpus = devs
        .iter()
        .zip(&names)
        .map(|(d, n)| record::Gpu {
            index: d.ordinal,
            name: n.clone(),
            pci_bus_id: d.pci_bus_id(),
            numa_node: d.host_numa_id(),
            host_memory_bound_to: None,
        })
        .collect();
    let survey = Survey::of(&devs, None);
    let mut res = match Results::open(NAME, rec, survey) {
        Ok(r) => r,
        Err(line) => {
            out.fatal(&line);
            return 1;
        }
    };

    let ids: Vec<String> = if !a.prefixes.is_empty() {
        let found = cases::with_prefixes(&a.prefixes);
        if found.is_empty() {
            let line = format!("{NAME}: no test case name starts with {}", a.prefixes.join(" or "));
            out.fatal(&line);
            return finish(&mut res, RunStatus::Error, Some(line), 1, None);
        }
        found.iter().map(|c| c.key.to_string()).collect()
    } else if a.testcases.is_empty() {
        cases::CASES.iter().map(|c| c.key.to_string()).collect()
    } else {
        a.testcases.clone()
    };
    let wanted: Vec<&Case> = ids.iter().filter_map(|id| cases::find(id).ok()).collect();
    // Kernels are compiled and loaded on every GPU before any case runs
    // (as the tool preloads its own), where a case needs them or the data
    // is to be checked (the GPUs fill and check their own memory).
    let verify = !a.skip_verification;
    let needed = wanted.iter().any(|c| c.needs_kernels()) || (verify && !wanted.is_empty());
    let kit = if needed { Some(sm::SmKit::load(&devs)) } else { None };
    let (kit, no_kernels) = match kit {
        Some(Ok(k)) => (Some(k), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    res.rec.settings.cases = ids.clone();
    res.rec.kernels = match (&kit, &no_kernels) {
        (Some(_), _) => Some("compiled at run time by NVRTC and loaded on every GPU".into()),
        (None, Some(why)) => Some(why.clone()),
        (None, None) => None,
    };
    let Ok(bytes) = usize::try_from(a.buffer_mib.wrapping_mul(1 << 20)) else {
        let line = format!("{NAME}: a buffer of {} MiB cannot be addressed", a.buffer_mib);
        out.fatal(&line);
        return finish(&mut res, RunStatus::Error, Some(line), 1, None);
    };
    let check = match (&kit, verify) {
        (Some(k), true) => match DeviceCheck::new(k.kernels()) {
            Ok(c) => Some(c),
            Err(e) => {
                let line = format!("{NAME}: {e}");
                out.fatal(&line);
                return finish(&mut res, RunStatus::Error, Some(line), 1, None);
            }
        },
        _ => None,
    };
    res.rec.verification = match (verify, &check, &no_kernels) {
        (false, _, _) => "off (-s)".to_string(),
        (true, Some(_), _) => {
            "device memory filled and checked on its GPU by our kernels; host memory by the host".into()
        }
        (true, None, why) => format!(
            "filled and checked through the host{}",
            why.as_ref().map_or(String::new(), |w| format!(" (no kernels: {w})"))
        ),
    };
    let mut bench =
        run::Bench::new(&devs, bytes, a.loops, a.samples, verify, a.use_mean, !a.disable_affinity, kit.as_ref());
    bench.check = check.as_ref();
    let peers = (0..count).any(|i| (0..count).any(|j| i != j && devs[i].can_access_peer(&devs[j]) == Some(true)));
    let row_context = record::RowContext {
        buffer_bytes: bytes as u64,
        loops: a.loops,
        samples: a.samples,
        statistic: res.rec.settings.statistic,
    };
    let mut status = 0;
    for id in &ids {
        let case = match cases::find(id) {
            Ok(c) => c,
            Err(msg) => {
                out.status(id, "ERROR", &msg);
                case_end(&mut res, id, "not_found", Some(msg));
                continue;
            }
        };
        if case.needs_peers() && !peers {
            out.status(case.key, "Waived", "");
            case_end(&mut res, case.key, "waived", Some("no two GPUs can map each other's memory".into()));
            continue;
        }
        out.status(case.key, "Running", "");
        if let (true, Some(why)) = (case.needs_kernels(), &no_kernels) {
            crate::diag::say(&format!("{NAME}: {}: {why}", case.key));
            out.failed(case.key, why);
            case_end(&mut res, case.key, "error", Some(why.clone()));
            status = 1;
            continue;
        }
        let result = bench.run(case);
        for l in bench.lines.borrow_mut().drain(..) {
            out.verbose(&l);
        }
        res.rec.gate_timeouts = *bench.gate_timeouts.borrow();
        for (g, bound) in res.rec.gpus.iter_mut().zip(bench.bound.borrow().iter()) {
            g.host_memory_bound_to.clone_from(bound);
        }
        let line = match result {
            Ok(mats) => {
                mats.iter().for_each(|m| out.matrix(m));
                case_end(&mut res, case.key, "passed", None);
                res.add(record::cells(case, &mats, &row_context));
                continue;
            }
            Err(Failure::Cuda(e)) => format!("{NAME}: {}: {e}", case.key),
            Err(Failure::Corrupt(c)) => format!(
                "{NAME}: {}: data check failed in sample {}: after {}, {} of {} words of {} differ from the source",
                case.key, c.sample, c.copy, c.wrong_words, c.words, c.buffer
            ),
        };
        case_end(&mut res, case.key, "error", Some(line.clone()));
        out.fatal(&line);
        return finish(&mut res, RunStatus::Failed, Some(line), 1, a.min_efficiency);
    }
    out.finish();
    let ended = if status == 0 { RunStatus::Complete } else { RunStatus::Failed };
    finish(&mut res, ended, None, status, a.min_efficiency)
}
