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
//! `-t` with one of their names says so in one line on stderr.

pub mod args;
pub mod cases;
pub mod json;
pub mod output;
pub(crate) mod run;
pub(crate) mod sm;

use super::driver::{self, Device};
use super::measure::concurrent::Failure;
use cases::Case;
use output::Out;

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

    let ids: Vec<String> = if !a.prefixes.is_empty() {
        let found = cases::with_prefixes(&a.prefixes);
        if found.is_empty() {
            out.fatal(&format!("{NAME}: no test case name starts with {}", a.prefixes.join(" or ")));
            return 1;
        }
        found.iter().map(|c| c.key.to_string()).collect()
    } else if a.testcases.is_empty() {
        cases::CASES.iter().map(|c| c.key.to_string()).collect()
    } else {
        a.testcases.clone()
    };
    let wanted: Vec<&Case> = ids.iter().filter_map(|id| cases::find(id).ok()).collect();
    // Kernels are compiled and loaded on every GPU before any case runs
    // (as the tool preloads its own), and only where a case needs them.
    let kit = if wanted.iter().any(|c| c.needs_kernels()) { Some(sm::SmKit::load(&devs)) } else { None };
    let (kit, no_kernels) = match kit {
        Some(Ok(k)) => (Some(k), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let Ok(bytes) = usize::try_from(a.buffer_mib.wrapping_mul(1 << 20)) else {
        out.fatal(&format!("{NAME}: a buffer of {} MiB cannot be addressed", a.buffer_mib));
        return 1;
    };
    let bench = run::Bench::new(
        &devs,
        bytes,
        a.loops,
        a.samples,
        !a.skip_verification,
        a.use_mean,
        !a.disable_affinity,
        kit.as_ref(),
    );
    let peers = (0..count).any(|i| (0..count).any(|j| i != j && devs[i].can_access_peer(&devs[j]) == Some(true)));
    let mut status = 0;
    for id in &ids {
        let case = match cases::find(id) {
            Ok(c) => c,
            Err(msg) => {
                out.status(id, "ERROR", &msg);
                continue;
            }
        };
        if case.needs_peers() && !peers {
            out.status(case.key, "Waived", "");
            continue;
        }
        out.status(case.key, "Running", "");
        if let (true, Some(why)) = (case.needs_kernels(), &no_kernels) {
            crate::diag::say(&format!("{NAME}: {}: {why}", case.key));
            out.failed(case.key, why);
            status = 1;
            continue;
        }
        let result = bench.run(case);
        for l in bench.lines.borrow_mut().drain(..) {
            out.verbose(&l);
        }
        match result {
            Ok(mats) => mats.iter().for_each(|m| out.matrix(m)),
            Err(Failure::Cuda(e)) => {
                out.fatal(&format!("{NAME}: {}: {e}", case.key));
                return 1;
            }
            Err(Failure::Corrupt(c)) => {
                out.fatal(&format!(
                    "{NAME}: {}: data check failed in sample {}: after {}, {} of {} words of {} differ from the source",
                    case.key, c.sample, c.copy, c.wrong_words, c.words, c.buffer
                ));
                return 1;
            }
        }
    }
    out.finish();
    status
}
