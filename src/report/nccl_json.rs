//! nccl-tests' `-J FILE.json`: its JSON document (format version 3), the
//! same values as its table, written as the table is (the head and the
//! configuration with the preamble, a result per size, the verdicts and
//! the end with the footer), so that a run cut short leaves what it had,
//! as nccl-tests' does. Its conventions are kept: no spaces, doubles as C's
//! `%lf` (a NaN as the string `"nan"`), booleans as the strings `"true"`
//! and `"false"`, the root as its six-wide table cell, and `/` escaped.
//! Where nccl-tests would write a control character raw (invalid JSON),
//! this writes it escaped.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::nccl_tests::{Cell, Device, RowLabels, Settings, Step, Totals};
use crate::stats::iterations::PerIteration;

/// The document's format version (nccl-tests 2.19.6's).
pub const VERSION: u32 = 3;

/// Whether nccl-tests writes JSON to `path`: its extension (after the last
/// `.` with no `/` after it, and something after it) is `json` in any
/// case. Any other name is taken and ignored, as nccl-tests ignores it.
pub fn is_json_path(path: &str) -> bool {
    let (dot, slash) = (path.rfind('.'), path.rfind('/'));
    match dot {
        Some(d) if slash.is_none_or(|s| d > s) && d + 1 < path.len() => path[d + 1..].eq_ignore_ascii_case("json"),
        _ => false,
    }
}

/// A JSON string as nccl-tests writes one (quote, backslash, slash, tab
/// and newline escaped; other control characters as `\u00XX`).
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' | '/' => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A double as C's `%lf`; NaN as the string `"nan"`.
fn double(v: f64) -> String {
    if v.is_nan() {
        "\"nan\"".to_string()
    } else {
        format!("{v:.6}")
    }
}

/// A boolean as nccl-tests writes one: a string.
fn boolean(b: bool) -> &'static str {
    if b {
        "\"true\""
    } else {
        "\"false\""
    }
}

/// The document being written.
pub struct NcclJson<W: Write> {
    out: W,
    /// Results written so far (a comma before each after the first).
    results: usize,
}

/// Opens `path` as nccl-tests does: created, never over an existing file
/// (nor through a link planted there); where the name is taken, `path.0`,
/// `path.1`, ... in turn. Ok(None) with the line to print where it cannot
/// be created for another reason (nccl-tests skips the JSON then); the
/// line to print and the document otherwise.
pub fn open(path: &Path) -> (String, Option<NcclJson<BufWriter<File>>>) {
    let mut candidate: PathBuf = path.to_path_buf();
    for n in 0u64.. {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(f) => {
                let line = format!("# Writing JSON output to {}", candidate.display());
                return (line, Some(NcclJson { out: BufWriter::new(f), results: 0 }));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                candidate = PathBuf::from(format!("{}.{n}", path.display()));
            }
            Err(_) => break,
        }
    }
    (format!("# skipping json output; {} not accessible", candidate.display()), None)
}

impl<W: Write> NcclJson<W> {
    /// The head (version, start time, command line, environment, NCCL's
    /// version code), the configuration with every rank's device, and the
    /// opening of the results list.
    pub fn head(
        &mut self,
        start: &str,
        args: &[String],
        env: &[String],
        nccl_version: i32,
        s: &Settings,
        devices: &[Device],
    ) -> io::Result<()> {
        let list = |items: &[String]| items.iter().map(|a| string(a)).collect::<Vec<_>>().join(",");
        let step = match s.step {
            Step::Factor(f) => format!("\"step_factor\":{f}"),
            Step::Bytes(b) => format!("\"step_bytes\":{b}"),
        };
        let devices: Vec<String> = devices
            .iter()
            .map(|d| {
                format!(
                    "{{\"rank\":{},\"group\":{},\"pid\":{},\"hostname\":{},\"device\":{},\"device_hex\":{},\
                     \"device_info\":{}}}",
                    d.rank,
                    d.group,
                    d.pid,
                    string(&d.host),
                    d.device,
                    string(&format!("{:04x}:{:02x}:{:02x}", d.pci_domain, d.pci_bus, d.pci_device)),
                    string(&d.name)
                )
            })
            .collect();
        write!(
            self.out,
            "{{\"version\":{VERSION},\"start_time\":{},\"args\":[{}],\"env\":[{}],\"nccl_version\":{nccl_version},\
             \"config\":{{\"nthreads\":{},\"ngpus\":{},\"minimum_bytes\":{},\"maximum_bytes\":{},{step},\
             \"warmup_iters\":{},\"iterations\":{},\"aggregated_iterations\":{},\"validation\":{},\"graph\":{},\
             \"blocking_collectives\":{},\"per_iter_timing\":{},\"per_iter_skip\":{},\"parallel_init\":{},\
             \"devices\":[{}]}},\"results\":[",
            string(start),
            list(args),
            list(env),
            s.threads,
            s.gpus,
            s.min_bytes,
            s.max_bytes,
            s.warmup_iters,
            s.iters,
            s.agg_iters,
            s.validation,
            s.graph,
            boolean(!s.blocking.is_none()),
            boolean(s.per_iteration.is_some()),
            s.per_iteration.unwrap_or(0),
            boolean(s.parallel_init),
            devices.join(",")
        )?;
        self.out.flush()
    }

    /// One size's result: its labels, both cells (each followed by its
    /// iterations' times where `-I` took them), the iterations.
    pub fn result(
        &mut self,
        labels: &RowLabels,
        out_of_place: &Cell,
        in_place: &Cell,
        per_iteration: [Option<&PerIteration>; 2],
        iters: usize,
    ) -> io::Result<()> {
        let list = |xs: &[f64]| xs.iter().map(|x| double(x * 1e6)).collect::<Vec<_>>().join(",");
        let iterations = |key: &str, p: Option<&PerIteration>| {
            let Some(p) = p else { return String::new() };
            let st = p.stats();
            let processes = if p.per_process.is_empty() {
                String::new()
            } else {
                let rows: Vec<String> = p.per_process.iter().map(|r| format!("[{}]", list(r))).collect();
                format!(",\"per_process_max_times_us\":[{}]", rows.join(","))
            };
            format!(
                ",\"{key}\":{{\"skipped_iterations\":{},\"min_us\":{},\"max_us\":{},\"avg_us\":{},\"p50_us\":{},\
                 \"p95_us\":{},\"p99_us\":{},\"stdev_us\":{},\"cv_pct\":{},\"times_us\":[{}]{processes}}}",
                p.skipped,
                double(st.min * 1e6),
                double(st.max * 1e6),
                double(st.avg * 1e6),
                double(st.p50 * 1e6),
                double(st.p95 * 1e6),
                double(st.p99 * 1e6),
                double(st.stdev * 1e6),
                double(st.cv_pct()),
                list(&p.times)
            )
        };
        let cell = |c: &Cell| {
            let wrong = c.wrong.map_or("null".to_string(), |n| double(n as f64));
            format!(
                "{{\"time\":{},\"alg_bw\":{},\"bus_bw\":{},\"nwrong\":{wrong}}}",
                double(c.time_us),
                double(c.algbw),
                double(c.busbw)
            )
        };
        let comma = if self.results > 0 { "," } else { "" };
        self.results += 1;
        write!(
            self.out,
            "{comma}{{\"size\":{},\"count\":{},\"type\":{},\"redop\":{},\"root\":{},\"out_of_place\":{}{},\
             \"in_place\":{}{},\"actual_iterations\":{iters},\"experiment_name\":\"\"}}",
            labels.size,
            labels.count,
            string(labels.type_name),
            string(labels.redop),
            string(&format!("{:>6}", labels.root)),
            cell(out_of_place),
            iterations("out_of_place_per_iter", per_iteration[0]),
            cell(in_place),
            iterations("in_place_per_iter", per_iteration[1])
        )?;
        self.out.flush()
    }

    /// The end: the results list closed, the out-of-bounds count and the
    /// average bus bandwidth with their verdicts (`below`: against
    /// `NCCL_TESTS_MIN_BW`, None where unset), NCCL's last error (empty
    /// where none), the end time.
    pub fn finish(&mut self, totals: &Totals, below: Option<bool>, error: &str, end: &str) -> io::Result<()> {
        let okay = match below {
            None => "\"unchecked\"",
            Some(b) => boolean(!b),
        };
        write!(
            self.out,
            "],\"out_of_bounds\":{{\"count\":{},\"okay\":{}}},\"average_bus_bandwidth\":{{\"bandwidth\":{},\
             \"okay\":{okay}}},\"errors\":[{}],\"end_time\":{}}}",
            totals.out_of_bounds,
            boolean(totals.out_of_bounds == 0),
            double(totals.avg_busbw()),
            string(error),
            string(end)
        )?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_json_extension_writes() {
        for (p, want) in [
            ("out.json", true),
            ("dir/out.JSON", true),
            ("a.b/out.json", true),
            ("out.json.txt", false),
            ("out", false),
            ("out.", false),
            ("dir.json/out", false),
            (".json", true),
        ] {
            assert_eq!(is_json_path(p), want, "{p}");
        }
    }

    #[test]
    fn strings_doubles_and_booleans_as_nccl_tests_writes_them() {
        assert_eq!(string("a/b\"c\\d\te\nf\u{1}"), "\"a\\/b\\\"c\\\\d\\te\\nf\\u0001\"");
        assert_eq!(double(1.5), "1.500000");
        assert_eq!(double(f64::NAN), "\"nan\"");
        assert_eq!(double(0.0), "0.000000");
        assert_eq!(boolean(true), "\"true\"");
    }

    #[test]
    fn an_existing_name_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, "mine").unwrap();
        std::os::unix::fs::symlink(dir.path().join("victim"), dir.path().join("r.json.0")).unwrap();
        let (line, json) = open(&path);
        assert!(json.is_some());
        assert_eq!(line, format!("# Writing JSON output to {}.1", path.display()));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
        assert!(!dir.path().join("victim").exists());
        let (line, json) = open(&dir.path().join("missing/r.json"));
        assert!(json.is_none());
        assert!(line.starts_with("# skipping json output; ") && line.ends_with("missing/r.json not accessible"));
    }
}
