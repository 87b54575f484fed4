//! `history add`: reads results the way `commbench compare` does (its
//! readers, its refusals) and stores each measured table as one run.
//! A run is known by a key built from its record's start time, its hosts,
//! its benchmark and datatype and a hash of the CSV's bytes, so adding the
//! same results twice stores them once.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, TransactionBehavior};

use super::key::{self, SeriesKey};
use crate::compare::model::{Quantity, Table};
use crate::compare::{gpu_csv, input};

/// The metrics a history keeps, by their name in the `points` table.
pub(crate) const METRICS: [(Quantity, &str); 3] =
    [(Quantity::Latency, "latency"), (Quantity::Bandwidth, "bandwidth"), (Quantity::MessageRate, "message_rate")];

/// The `points` name of a latency benchmark's median iteration time (us),
/// kept beside its mean (`latency`) where the CSV has it: `history check`
/// asks it whether a mean that left its band moved the typical iteration.
pub(crate) const MEDIAN_METRIC: &str = "latency_median";

pub(crate) fn metric_name(m: Quantity) -> &'static str {
    METRICS.iter().find(|(x, _)| *x == m).map_or("efficiency", |(_, n)| n)
}

pub(crate) fn metric_from_name(n: &str) -> Option<Quantity> {
    METRICS.iter().find(|(_, x)| *x == n).map(|(m, _)| *m)
}

/// One run ready to store: a table of one results file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Incoming {
    pub key: SeriesKey,
    pub run_key: String,
    /// RFC 3339, as `Utc::rfc3339` writes it, so that text order is time
    /// order.
    pub started_utc: String,
    /// The results file's name without its extension (a suite's folder
    /// and name for a file of a suite folder).
    pub label: String,
    pub hosts: String,
    pub status: String,
    pub source: String,
    /// (size, metric, value, ci95_rel_pct).
    pub points: Vec<(u64, Quantity, f64, Option<f64>)>,
    /// (size, median iteration time in us, its ci95_rel_pct): see
    /// [`MEDIAN_METRIC`].
    pub medians: Vec<(u64, f64, Option<f64>)>,
    /// The table as compare's reader gave it (what `history check` judges).
    pub table: Table,
    /// What competed with the run (crate::procs::load), from its record:
    /// the line saying its host was busy, the highest 1-minute load a rank
    /// saw and that host's online CPUs.
    pub busy: Option<String>,
    pub max_load1: Option<f64>,
    pub online_cpus: Option<usize>,
}

/// Why a results file is not taken: unreadable or cut short (`cut`), or
/// its record says the run did not complete (`incomplete`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub line: String,
    pub incomplete: bool,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.line)
    }
}

fn bad(line: String) -> Refusal {
    Refusal { line, incomplete: false }
}

/// FNV-1a, 64 bits, from `seed`: a content fingerprint (not a defence
/// against anyone crafting collisions).
fn fnv(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// 128 bits of fingerprint of `parts`, as hex.
pub(crate) fn fingerprint(parts: &[&[u8]]) -> String {
    let mut joined = Vec::new();
    for p in parts {
        joined.extend_from_slice(&(p.len() as u64).to_le_bytes());
        joined.extend_from_slice(p);
    }
    format!("{:016x}{:016x}", fnv(0xcbf2_9ce4_8422_2325, &joined), fnv(0x6c62_272e_07bb_0142, &joined))
}

/// Where stored times end, in seconds since 1970 (in the year 5138).
const STORED_END: f64 = 1e11;

/// A time as the history stores it (`2026-12-03T10:02:42.311Z`), from any
/// RFC 3339 UTC text `report::time` reads.
pub(crate) fn normal_time(text: &str) -> Option<String> {
    let secs = crate::report::time::unix_seconds(text)?;
    if !(0.0..STORED_END).contains(&secs) {
        return None;
    }
    // Whole milliseconds, as written: no float error in the last digit.
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis((secs * 1000.0).round() as u64);
    Some(crate::report::time::Utc::from_system(t).rfc3339())
}

/// A date given on the command line (`2026-12-01` or a full UTC time),
/// as the history stores times: any day the calendar has, from year 0000
/// to 9999. Stored times lie from 1970 to [`normal_time`]'s end, so a
/// date outside is taken as that end: it selects the same runs.
pub(crate) fn parse_date(s: &str) -> Result<String, String> {
    let bad = || {
        let s = crate::diag::printable(s);
        format!("'{s}' is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)")
    };
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if !(digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-') && digits(8..10)) {
        return Err(bad());
    }
    let full = if s.len() == 10 { format!("{s}T00:00:00Z") } else { s.to_string() };
    let secs = crate::report::time::unix_seconds(&full).ok_or_else(bad)?;
    let ms = (secs.clamp(0.0, STORED_END) * 1000.0).round() as u64;
    Ok(crate::report::time::Utc::from_system(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)).rfc3339())
}

/// The stamp that starts a results file's or suite folder's name
/// (`20261203T100242Z_osu_bw`), as a time.
fn stamp_time(name: &str) -> Option<String> {
    let s = name.get(..16)?;
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..8) && b[8] == b'T' && digits(9..15) && b[15] == b'Z') {
        return None;
    }
    normal_time(&format!("{}-{}-{}T{}:{}:{}Z", &s[0..4], &s[4..6], &s[6..8], &s[9..11], &s[11..13], &s[13..15]))
}

/// When a run started: its record's `start_utc`, else the stamp in its
/// file's or folder's name, else the file's modification time.
fn started(path: &Path, record: Option<&serde_json::Value>) -> String {
    if let Some(t) = record.and_then(|r| r.get("start_utc")).and_then(|t| t.as_str()).and_then(normal_time) {
        return t;
    }
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    if let Some(t) = [name(Some(path)), name(path.parent())].into_iter().flatten().find_map(|n| stamp_time(&n)) {
        return t;
    }
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
    crate::report::time::Utc::from_system(mtime).rfc3339()
}

/// The CSV's `backend` cell of its first row, where it has one.
fn csv_backend(text: &str) -> Option<String> {
    let mut r = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let at = r.headers().ok()?.iter().position(|h| h == "backend")?;
    let row = r.records().next()?.ok()?;
    row.get(at).map(str::to_string).filter(|b| !b.is_empty())
}

/// Whether the CSV at `path` has a header some reader takes as results:
/// commbench's own, a pairs measurements file's, a GPU copy tool's.
fn results_header(path: &Path) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else { return true };
    let text = String::from_utf8_lossy(crate::input_file::without_bom(&bytes));
    let first = text.lines().next().unwrap_or("");
    first.split(',').any(|c| c.trim() == "benchmark")
        || super::pairs_csv::is_pairs(first)
        || gpu_csv::shape(first).is_some()
}

/// The results CSV among `csvs` that `csv` was written beside as one of
/// its matrices or summaries (`X_uni_p2p_on_GBps.csv` of `X.csv`, as
/// gpu-bw and pairs write them): a CSV with no run record of its own and
/// no results header whose name is another's, with a record, and more
/// after a `_`.
fn companion_of<'a>(csv: &Path, csvs: &'a [PathBuf]) -> Option<&'a PathBuf> {
    if csv.with_extension("json").exists() || results_header(csv) {
        return None;
    }
    let name = csv.file_stem()?.to_string_lossy().into_owned();
    csvs.iter().find(|r| {
        let stem = r.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        *r != csv
            && !stem.is_empty()
            && name.strip_prefix(&stem).is_some_and(|rest| rest.starts_with('_'))
            && r.with_extension("json").is_file()
    })
}

/// The files an input names: a CSV itself, the CSV beside a run record
/// (`X.json` for `X.csv`), every CSV of a directory but the matrices and
/// summaries written beside a run's results ([`companion_of`]). OSU text
/// outputs are not kept (no record says where or when they ran): a
/// directory's are passed over with a note, one named alone is refused.
pub fn files(path: &Path, notes: &mut Vec<String>) -> Result<Vec<PathBuf>, String> {
    let ext = |p: &Path, e: &str| p.extension().is_some_and(|x| x.eq_ignore_ascii_case(e));
    if path.is_dir() {
        let all = input::results_files(path).map_err(|e| e.to_string())?;
        let (csvs, other): (Vec<PathBuf>, Vec<PathBuf>) = all.into_iter().partition(|p| ext(p, "csv"));
        for o in other {
            notes.push(format!("{}: passed over: the history keeps commbench CSVs, not OSU text", o.display()));
        }
        let (companions, csvs): (Vec<PathBuf>, Vec<PathBuf>) =
            csvs.iter().cloned().partition(|p| companion_of(p, &csvs).is_some());
        for c in companions {
            let of = companion_of(&c, &csvs).map(|o| o.display().to_string()).unwrap_or_default();
            notes.push(format!("{}: passed over: a matrix or summary of {of}, not a results file", c.display()));
        }
        if csvs.is_empty() {
            return Err(format!("{}: no commbench results (CSV) found", path.display()));
        }
        return Ok(csvs);
    }
    if ext(path, "json") {
        return Ok(vec![path.with_extension("csv")]);
    }
    if ext(path, "csv") {
        return Ok(vec![path.to_path_buf()]);
    }
    Err(format!("{}: the history keeps commbench CSVs and their run records, not other files", path.display()))
}

/// Reads one CSV (and its record) into runs, refusing what `commbench
/// compare` would not judge: a file cut short, a run whose record says it
/// did not complete. The error is the whole line after the program name.
pub fn read(csv: &Path, system: Option<&str>, notes: &mut Vec<String>) -> Result<Vec<Incoming>, Refusal> {
    let shown = csv.display().to_string();
    // A record its killed job left `running` is ended first, whatever the
    // CSV holds and whether or not it is then refused.
    notes.extend(input::settle_beside(csv).map(|n| n.to_string()));
    let parsed = load(csv).map_err(bad)?;
    notes.extend(parsed.notes.iter().map(ToString::to_string));
    if let Some(cut) = parsed.cut.first() {
        return Err(bad(format!("{cut}; a truncated results file is not kept")));
    }
    let info = parsed.tables.first().and_then(|t| t.run.clone());
    if let Some(i) = info.as_ref().filter(|i| !i.completed()) {
        let status = i.status.as_deref().unwrap_or("");
        let line = format!("{shown}: the run record says '{status}': the run did not complete");
        return Err(Refusal { line, incomplete: true });
    }
    let bytes = crate::input_file::read(csv).map_err(|e| bad(format!("{shown}: {e}")))?;
    let text = String::from_utf8_lossy(crate::input_file::without_bom(&bytes));
    let record: Option<serde_json::Value> = crate::input_file::read_to_string(&csv.with_extension("json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(serde_json::Value::is_object);
    let start = started(csv, record.as_ref());
    let record_start = record.as_ref().and_then(|r| r.get("start_utc")).and_then(|t| t.as_str()).unwrap_or("");
    let hosts = info.as_ref().map(|i| i.hosts.clone()).unwrap_or_default();
    let options = info.as_ref().and_then(|i| i.options.as_ref());
    let backend = options
        .and_then(|o| o.get("backend"))
        .and_then(|b| b.as_str())
        .map(String::from)
        .or_else(|| csv_backend(&text))
        .or_else(|| gpu_csv::shape(&text).map(|_| gpu_csv::BACKEND.to_string()))
        .unwrap_or_else(|| "unknown".into());
    let placement = options
        .and_then(|o| o.get("placement"))
        .and_then(|p| p.get("policy"))
        .and_then(|p| p.as_str())
        .unwrap_or("none")
        .to_string();
    let mpi_library = info.as_ref().and_then(|i| i.mpi_library.clone()).unwrap_or_else(|| "unknown".into());
    let content = fingerprint(&[&bytes]);
    let mut sorted_hosts = hosts.clone();
    sorted_hosts.sort();
    sorted_hosts.dedup();
    let busy = info.as_ref().and_then(|i| i.busy.clone());
    let (max_load1, online_cpus) =
        record.as_ref().and_then(crate::procs::load::highest_load_of_record).unwrap_or_default();
    let mut out = Vec::new();
    for t in &parsed.tables {
        let key = SeriesKey {
            system: key::system(system, &hosts),
            benchmark: t.benchmark.clone(),
            backend: backend.clone(),
            memory: memory_word(t),
            datatype: t.datatype_key().to_string(),
            np: t.np.unwrap_or(0),
            placement: placement.clone(),
            mpi_library: mpi_library.clone(),
            options: key::options_text(options),
        };
        let run_key = fingerprint(&[
            record_start.as_bytes(),
            sorted_hosts.join(",").as_bytes(),
            t.benchmark.as_bytes(),
            t.datatype_key().as_bytes(),
            content.as_bytes(),
        ]);
        out.push(Incoming {
            points: points(t),
            medians: medians(t),
            key,
            run_key,
            started_utc: start.clone(),
            label: t.run_label.clone(),
            hosts: sorted_hosts.join(","),
            status: info.as_ref().and_then(|i| i.status.clone()).unwrap_or_else(|| "complete".into()),
            source: shown.clone(),
            table: t.clone(),
            busy: busy.clone(),
            max_load1,
            online_cpus,
        });
    }
    Ok(out)
}

/// The options of a record that keeps them other than as `options`: a
/// pairs or gpu-bw record's `config` (scheme, window, backend ...; sizes,
/// tests), an nvbandwidth record's `settings` (statistic, NUMA affinity
/// ...).
fn record_options(csv: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    let record = crate::input_file::read_to_string(&csv.with_extension("json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&record).ok()?;
    ["config", "settings"].iter().find_map(|k| v.get(k).and_then(|c| c.as_object()).cloned())
}

/// Reads a results CSV with compare's reader (commbench's own, a GPU
/// copy tool's), or a pairs measurements CSV with [`super::pairs_csv`]
/// and its record as compare reads records.
fn load(csv: &Path) -> Result<crate::compare::model::Parsed, String> {
    let shown = csv.display().to_string();
    let bytes = crate::input_file::read(csv).map_err(|e| format!("{shown}: {e}"))?;
    let text = String::from_utf8_lossy(crate::input_file::without_bom(&bytes));
    if !super::pairs_csv::is_pairs(&text) {
        let mut parsed = input::load_file(csv).map_err(|e| e.to_string())?;
        if gpu_csv::shape(&text).is_some() {
            let options = record_options(csv);
            for i in parsed.tables.iter_mut().filter_map(|t| t.run.as_mut()).filter(|i| i.options.is_none()) {
                i.options.clone_from(&options);
            }
        }
        return Ok(parsed);
    }
    let label = csv.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut parsed = super::pairs_csv::parse(&text, &shown, &label).map_err(|e| format!("{shown}: {e}"))?;
    let mut info = input::run_info(csv).map_err(|e| format!("{shown}: its run record: {e}"))?;
    if let Some(i) = info.as_mut().filter(|i| i.options.is_none()) {
        i.options = record_options(csv);
    }
    for t in &mut parsed.tables {
        t.np = info.as_ref().and_then(|i| i.world_size);
        t.memory = info.as_ref().and_then(|i| i.memory).map(|memory| crate::compare::model::MemoryInfo {
            memory,
            from: "run record".into(),
            weak: false,
        });
        t.run = info.clone();
    }
    Ok(parsed)
}

fn memory_word(t: &Table) -> String {
    use crate::compare::model::Memory;
    match t.memory.as_ref().map(|m| m.memory) {
        Some(Memory::Host) => "host",
        Some(Memory::Device) => "device",
        Some(Memory::Managed) => "managed",
        None => "unknown",
    }
    .into()
}

/// Every plausible value of the kept metrics, with its spread.
fn points(t: &Table) -> Vec<(u64, Quantity, f64, Option<f64>)> {
    let mut out = Vec::new();
    for p in &t.points {
        for (m, _) in METRICS {
            if let Some(v) = p.value(m).filter(|v| m.implausible(*v).is_none()) {
                let ci = p.ci95_rel_pct.filter(|c| c.is_finite() && *c >= 0.0);
                out.push((p.size, m, v, ci));
            }
        }
    }
    out
}

/// The median iteration times of the sizes whose mean latency is kept.
fn medians(t: &Table) -> Vec<(u64, f64, Option<f64>)> {
    let latency =
        |p: &crate::compare::model::SizeRow| p.latency_us.is_some_and(|v| Quantity::Latency.implausible(v).is_none());
    t.points
        .iter()
        .filter(|p| latency(p))
        .filter_map(|p| {
            let m = p.median_us.filter(|v| Quantity::Latency.implausible(*v).is_none())?;
            Some((p.size, m, p.median_ci95_rel_pct.filter(|c| c.is_finite() && *c >= 0.0)))
        })
        .collect()
}

/// Stores `runs` in one immediate transaction; returns how many were new
/// (the others were already there).
pub fn store(c: &mut Connection, runs: &[Incoming]) -> rusqlite::Result<usize> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = crate::report::time::Utc::now().rfc3339();
    let mut added = 0;
    for r in runs {
        let k = &r.key;
        let n = tx.execute(
            "INSERT INTO runs (run_key, started_utc, label, system, hosts, benchmark, backend, memory, datatype, np, \
             placement, mpi_library, options, status, source, added_utc, series_key, busy, max_load1, \
             online_cpus) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20) \
             ON CONFLICT (run_key) DO NOTHING",
            params![
                r.run_key,
                r.started_utc,
                r.label,
                k.system,
                r.hosts,
                k.benchmark,
                k.backend,
                k.memory,
                k.datatype,
                k.np as i64,
                k.placement,
                k.mpi_library,
                k.options,
                r.status,
                r.source,
                now,
                k.text(),
                r.busy,
                r.max_load1,
                r.online_cpus.map(|n| n as i64)
            ],
        )?;
        if n == 0 {
            continue;
        }
        added += 1;
        let id = tx.last_insert_rowid();
        let mut st = tx.prepare_cached(
            "INSERT OR REPLACE INTO points (run_id, size_bytes, metric, value, ci95_rel_pct) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (size, m, v, ci) in &r.points {
            st.execute(params![id, *size as i64, metric_name(*m), v, ci])?;
        }
        for (size, v, ci) in &r.medians {
            st.execute(params![id, *size as i64, MEDIAN_METRIC, v, ci])?;
        }
    }
    tx.commit()?;
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_times() {
        assert_eq!(stamp_time("20261203T100242Z_osu_bw.csv").as_deref(), Some("2026-12-03T10:02:42.000Z"));
        assert_eq!(stamp_time("osu_bw.csv"), None);
        assert_eq!(stamp_time("20261203X100242Z_osu_bw.csv"), None);
        assert_eq!(normal_time("2026-12-03T10:02:42.311Z").as_deref(), Some("2026-12-03T10:02:42.311Z"));
        assert_eq!(parse_date("2026-12-01").as_deref(), Ok("2026-12-01T00:00:00.000Z"));
        assert!(parse_date("yesterday").unwrap_err().contains("'yesterday' is not a date"));
        assert_eq!(parse_date("2024-02-29").as_deref(), Ok("2024-02-29T00:00:00.000Z"));
        assert_eq!(parse_date("1969-07-20").as_deref(), Ok("1970-01-01T00:00:00.000Z"));
        assert_eq!(parse_date("9999-12-31").as_deref(), Ok("5138-11-16T09:46:40.000Z"));
        for bad in ["2026-02-30", "2025-02-29", "2026-04-31", "2026-1-1", "99999-01-01", "2026-01-01T25:00:00Z"] {
            assert!(parse_date(bad).unwrap_err().contains(&format!("'{bad}' is not a date")), "{bad}");
        }
    }

    #[test]
    fn fingerprints_tell_parts_apart() {
        assert_eq!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"ab", b"c"]));
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[b""]).len(), 32);
    }

    /// A matrix or summary CSV written beside a run's results (no record
    /// of its own, no results header, named after the results) is passed
    /// over with a note; a results CSV without a record is not.
    #[test]
    fn matrices_beside_results_are_passed_over() {
        let d = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| std::fs::write(d.path().join(name), text).unwrap();
        w("20261201T100000Z_gpu-bw.csv", "test,src_gpu,dst_gpu,value,unit\nh2d,host,0,25,GB/s\n");
        w("20261201T100000Z_gpu-bw.json", "{}");
        w("20261201T100000Z_gpu-bw_uni_p2p_on_GBps.csv", "src\\dst (GB/s),0,1\n0,,200.00\n1,,\n");
        w("20261201T100000Z_gpu-bw_extra.csv", "benchmark,size_bytes,avg_lat_us\nosu_latency,1,2\n");
        w("osu_latency.csv", "benchmark,size_bytes,avg_lat_us\nosu_latency,1,2\n");
        w("osu_latency_mt.csv", "x,y\n1,2\n");
        let mut notes = Vec::new();
        let got = files(d.path(), &mut notes).unwrap();
        let names: Vec<String> = got.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        let want = [
            "20261201T100000Z_gpu-bw.csv",
            "20261201T100000Z_gpu-bw_extra.csv",
            "osu_latency.csv",
            "osu_latency_mt.csv",
        ];
        assert_eq!(names, want);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("_gpu-bw_uni_p2p_on_GBps.csv: passed over: a matrix or summary of "), "{notes:?}");
        assert!(notes[0].ends_with("20261201T100000Z_gpu-bw.csv, not a results file"), "{notes:?}");
    }
}
