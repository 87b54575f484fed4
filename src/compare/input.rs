//! Turns paths given on the command line into tables: a commbench CSV, a
//! GPU copy tool's CSV, an OSU text output, or a directory of results (a results folder or a suite
//! run folder), with the JSON run record beside each file when there is one.

use std::path::{Path, PathBuf};

use super::csv_input::{self, CsvInputError};
use super::gpu_csv;
use super::model::{Memory, MemoryInfo, Note, Parsed, RunInfo, Table};
use super::osu_text;

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Csv { path: String, source: CsvInputError },
    #[error("{path}: no OSU benchmark output or commbench results found")]
    Empty { path: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> InputError + '_ {
    move |source| InputError::Io { path: path.display().to_string(), source }
}

/// The run record beside a results file (`X.json` for `X.csv` or `X.txt`):
/// None when there is none; an error, saying why, when there is a file of
/// that name that is not a record (unreadable, not a regular file, not a
/// JSON object): the caller notes it rather than pass over it in silence.
pub(crate) fn run_info(path: &Path) -> Result<Option<RunInfo>, String> {
    let json = path.with_extension("json");
    let text = match crate::input_file::read_to_string(&json) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("not JSON ({e})"))?;
    if !v.is_object() {
        return Err("not a JSON object".into());
    }
    // An MPI run's `hosts`; a run on one host without MPI (gpu-bw, the
    // GPU drop-ins: report::record::LocalRun) names its one `host`.
    let hosts = match v.get("hosts").and_then(|h| h.as_array()) {
        Some(a) => a.iter().filter_map(|h| h.as_str().map(String::from)).collect(),
        None => {
            v.get("host").and_then(|h| h.as_str()).filter(|h| !h.is_empty()).map(String::from).into_iter().collect()
        }
    };
    let mpi_library = v
        .pointer("/mpi/library_version")
        .and_then(|l| l.as_str())
        .map(|l| l.lines().next().unwrap_or("").split(',').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty());
    let world_size = v.pointer("/mpi/world_size").and_then(serde_json::Value::as_u64).filter(|&n| n > 0);
    let options = v.get("options").and_then(|o| o.as_object()).cloned();
    // What ran, not what was asked for: the benchmark record's
    // `buffers.memory` (host for a `D D` run without a device), or the
    // memory half of a pairs record's `transport` (`mpi-host`).
    let word = |p: &str| v.pointer(p).and_then(|m| m.as_str());
    let memory = word("/buffers/memory")
        .or_else(|| word("/transport").and_then(|t| t.rsplit('-').next()))
        .and_then(Memory::from_word);
    let status = word("/status").map(String::from);
    let busy = crate::procs::load::busy_line_of_record(&v);
    Ok(Some(RunInfo { hosts, mpi_library, world_size, memory, options, status, busy }))
}

/// A device-buffer marker in a file name (`osu_bw-DD.txt`,
/// `lat_cuda_D_D.txt`): a word `DD`, `DH`, `HD`, `MD` ... or two one-letter
/// words `D D`. Host-only markers (`HH`) say nothing a title does not.
fn name_marker(path: &Path) -> Option<Memory> {
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let words: Vec<&str> = stem.split(['-', '_', '.', ' ']).filter(|w| !w.is_empty()).collect();
    let pair = |a: &str, b: &str| -> Option<Memory> {
        let is = |c: &str| matches!(c, "D" | "H" | "M");
        if !(is(a) && is(b)) || (a == "H" && b == "H") {
            return None;
        }
        Some(if a == "D" || b == "D" { Memory::Device } else { Memory::Managed })
    };
    let joined = words.iter().find_map(|w| (w.len() == 2).then(|| pair(&w[..1], &w[1..])).flatten());
    joined.or_else(|| words.windows(2).find_map(|w| pair(w[0], w[1])))
}

/// Settles where each table's buffers were: the run record (what ran) over
/// anything else; a file name marker over a plain `OSU MPI` title.
fn settle_memory(t: &mut Table, path: &Path, info: Option<&RunInfo>) {
    if let Some(m) = info.and_then(|i| i.memory) {
        t.memory = Some(MemoryInfo { memory: m, from: "run record".into(), weak: false });
        return;
    }
    let weak = t.memory.as_ref().is_none_or(|m| m.weak);
    if let (true, Some(m)) = (weak, name_marker(path)) {
        t.memory = Some(MemoryInfo { memory: m, from: "file name".into(), weak: false });
    }
}

/// A short name for a run: the file name without its extension, or the
/// folder name for a file of a suite folder (`osu_bw.csv`).
fn label(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = path.parent().and_then(Path::file_name).map(|s| s.to_string_lossy().into_owned());
    match parent {
        Some(p) if stem.starts_with("osu_") => format!("{p}/{stem}"),
        _ => stem,
    }
}

/// This program as a record it ends names it: `commbench compare`.
fn reader() -> String {
    let mut args = std::env::args();
    let prog = args.next().map(|a| Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()));
    match (prog.flatten(), args.next()) {
        (Some(p), Some(sub)) if p == "commbench" => format!("commbench {sub}"),
        (Some(p), _) => p,
        _ => "commbench".into(),
    }
}

/// The run record beside `path` (`X.json`), ended `killed` when it still
/// says `running` while its ranks are all gone from this host (see
/// [`crate::report::record_end::settle_if_gone`]): the note saying so.
/// Every reader does this first, whatever the file beside it holds (only
/// a header, a pairs CSV, nothing readable), so that a job killed outright
/// is ended by the next reader even when that reader refuses its results.
pub(crate) fn settle_beside(path: &Path) -> Option<Note> {
    let record = path.with_extension("json");
    let s = crate::report::record_end::settle_if_gone(&record, &reader(), None)?;
    let message = match s.unwritten {
        None => s.line,
        Some(e) => format!("{}, but the record could not be rewritten: {e}", s.line),
    };
    Some(Note { path: record.display().to_string(), line: None, message })
}

/// Reads one file: CSV by its `.csv` name (commbench's own, or a GPU copy
/// tool's by its header), anything else as OSU text. A run record beside
/// it that still says `running` while its ranks are all gone from this
/// host is ended `killed` first ([`settle_beside`]); the note saying so is
/// among the notes, or said at once when the file is refused.
pub(crate) fn load_file(path: &Path) -> Result<Parsed, InputError> {
    let (settled, loaded) = load_file_settled(path);
    match loaded {
        Ok(mut parsed) => {
            parsed.notes.splice(0..0, settled);
            Ok(parsed)
        }
        Err(e) => {
            if let Some(n) = settled {
                crate::say!("{}: note: {}", reader(), crate::diag::printable(&n.to_string()));
            }
            Err(e)
        }
    }
}

/// [`load_file`], the note of a record it ended kept apart.
fn load_file_settled(path: &Path) -> (Option<Note>, Result<Parsed, InputError>) {
    let settled = settle_beside(path);
    let mut loaded = read_file(path);
    // Ended, even where the record could not be rewritten.
    if let (Some(_), Ok(parsed)) = (&settled, &mut loaded) {
        for info in parsed.tables.iter_mut().filter_map(|t| t.run.as_mut()) {
            if info.status.as_deref() == Some("running") {
                info.status = Some("killed".into());
            }
        }
    }
    (settled, loaded)
}

fn read_file(path: &Path) -> Result<Parsed, InputError> {
    let bytes = crate::input_file::read(path).map_err(io_err(path))?;
    let text = String::from_utf8_lossy(crate::input_file::without_bom(&bytes));
    let shown = path.display().to_string();
    let label = label(path);
    let mut parsed = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) {
        let parsed = match gpu_csv::shape(&text) {
            Some(_) => gpu_csv::parse(&text, &shown, &label),
            None => csv_input::parse(&text, &shown, &label),
        };
        parsed.map_err(|source| InputError::Csv { path: shown.clone(), source })?
    } else {
        osu_text::parse(&text, &shown, &label)
    };
    if parsed.tables.is_empty() {
        return Err(InputError::Empty { path: shown });
    }
    let record = path.with_extension("json");
    let info = match run_info(path) {
        Ok(info) => info,
        Err(why) => {
            let message = format!("not a run record ({why}): how the run ended, its hosts and MPI are not known");
            parsed.notes.push(Note { path: record.display().to_string(), line: None, message });
            None
        }
    };
    for t in &mut parsed.tables {
        settle_memory(t, path, info.as_ref());
        if t.np.is_none() {
            t.np = info.as_ref().and_then(|i| i.world_size);
        }
        t.run = info.clone();
    }
    Ok(parsed)
}

/// The results files of a directory: every `.csv`, and every `.txt` with
/// no `.csv` of the same name (a suite folder keeps both), sorted by name.
pub(crate) fn results_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let has = |p: &Path, ext: &str| p.extension().is_some_and(|e| e == ext);
    let keep = |p: &PathBuf| has(p, "csv") || (has(p, "txt") && !p.with_extension("csv").exists());
    Ok(files.iter().filter(|p| keep(p)).cloned().collect())
}

/// Reads a file or every results file of a directory. Files in a
/// directory that hold no results are noted and passed over.
pub fn load(path: &Path) -> Result<Parsed, InputError> {
    if !path.is_dir() {
        return load_file(path);
    }
    let mut all = Parsed::default();
    let mut settled = Vec::new();
    for f in results_files(path)? {
        let (ended, loaded) = load_file_settled(&f);
        settled.extend(ended);
        match loaded {
            Ok(p) => {
                all.tables.extend(p.tables);
                all.notes.extend(p.notes);
                all.cut.extend(p.cut);
            }
            Err(e) => {
                all.notes.push(Note { path: f.display().to_string(), line: None, message: format!("skipped: {e}") })
            }
        }
    }
    if all.tables.is_empty() {
        for n in &settled {
            crate::say!("{}: note: {}", reader(), crate::diag::printable(&n.to_string()));
        }
        return Err(InputError::Empty { path: path.display().to_string() });
    }
    all.notes.splice(0..0, settled);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the fields by name, so records of other tools with only some
    /// of them still help; this keeps the names the same as the header
    /// commbench writes.
    #[test]
    fn run_info_reads_what_the_run_header_writes() {
        let d = tempfile::tempdir().unwrap();
        let mut h = crate::report::record::samples::header();
        h.hosts = vec!["n1".into(), "n2".into()];
        h.mpi.library_version = "Open MPI v4.1.4, package: Debian OpenMPI\nmore".into();
        crate::report::record::write_json(&h, &d.path().join("r.json")).unwrap();
        let info = run_info(&d.path().join("r.csv")).unwrap().unwrap();
        assert_eq!(info.hosts, ["n1", "n2"]);
        assert_eq!(info.mpi_library.as_deref(), Some("Open MPI v4.1.4"));
        assert_eq!(info.world_size, Some(h.mpi.world_size as u64).filter(|&n| n > 0));
        assert_eq!(info.memory, None);
    }

    /// A record of a run on one host without MPI (gpu-bw, nvbandwidth:
    /// `report::record::LocalRun`) names one `host`: that is its hosts.
    /// Its status is read as it is; one still `running` is no complete
    /// run.
    #[test]
    fn run_info_reads_a_local_runs_host_and_status() {
        use crate::gpu_bw::nvbandwidth::record::{NvbRecord, Settings};
        let d = tempfile::tempdir().unwrap();
        let settings = Settings {
            buffer_mib: 64,
            loops: 16,
            samples: 3,
            statistic: "median",
            verify: true,
            numa_affinity: true,
            cases: Vec::new(),
        };
        let mut r = NvbRecord::running(settings, "gpunode7".into(), vec!["nvbandwidth".into()]);
        let csv = d.path().join("n.csv");
        crate::report::record::write_json(&r, &csv.with_extension("json")).unwrap();
        let info = run_info(&csv).unwrap().unwrap();
        assert_eq!((info.hosts.as_slice(), info.status.as_deref()), (&["gpunode7".to_string()][..], Some("running")));
        assert!(!info.completed());
        r.end(crate::report::record::RunStatus::Complete, None, 0);
        crate::report::record::write_json(&r, &csv.with_extension("json")).unwrap();
        let info = run_info(&csv).unwrap().unwrap();
        assert_eq!((info.hosts.as_slice(), info.status.as_deref()), (&["gpunode7".to_string()][..], Some("complete")));
        assert!(info.completed());
        // `hosts` where a record has it, even beside a `host`.
        std::fs::write(csv.with_extension("json"), r#"{"hosts": ["a", "b"], "host": "c"}"#).unwrap();
        assert_eq!(run_info(&csv).unwrap().unwrap().hosts, ["a", "b"]);
    }

    /// A GPU copy tool's CSV is read by its header: the tables of
    /// gpu_csv, each with the record beside it.
    #[test]
    fn a_gpu_copy_csv_is_read_by_its_header() {
        let d = tempfile::tempdir().unwrap();
        let csv = d.path().join("g.csv");
        std::fs::write(
            &csv,
            "tool,test,from,to,bytes,value,unit
bandwidthTest,H2D-Pinned,host,gpu0,1024,2.5,GB/s
",
        )
        .unwrap();
        std::fs::write(csv.with_extension("json"), r#"{"status": "complete", "host": "gpunode7"}"#).unwrap();
        let p = load_file(&csv).unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let t = &p.tables[0];
        assert_eq!((t.benchmark.as_str(), t.datatype.as_deref()), ("bandwidthTest H2D-Pinned", Some("host -> gpu0")));
        assert_eq!(t.memory.as_ref().map(|m| m.memory), Some(Memory::Device));
        assert_eq!(t.run.as_ref().map(|r| r.hosts.clone()), Some(vec!["gpunode7".to_string()]));
    }

    /// No record is nothing to say; a file at the record's name that is no
    /// record (garbage, a device, an array) is said, never passed over.
    #[test]
    fn a_record_that_is_not_one_is_noted() {
        let d = tempfile::tempdir().unwrap();
        let csv = d.path().join("r.txt");
        std::fs::write(&csv, "# OSU MPI Latency Test v7.4\n# Size Latency (us)\n1 2.0\n").unwrap();
        assert_eq!(run_info(&csv), Ok(None));
        assert!(load_file(&csv).unwrap().notes.is_empty());
        let json = csv.with_extension("json");
        for (garbage, why) in [("\u{1}\u{2}garbage", "not JSON"), ("[1, 2]", "not a JSON object")] {
            std::fs::write(&json, garbage).unwrap();
            assert!(run_info(&csv).unwrap_err().starts_with(why), "{garbage}");
            let notes = load_file(&csv).unwrap().notes;
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(notes[0].to_string().contains("r.json: not a run record ("), "{}", notes[0]);
        }
        std::fs::remove_file(&json).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &json).unwrap();
        assert!(run_info(&csv).unwrap_err().contains("character device"));
    }

    /// A byte order mark before an OSU text or a CSV is left out.
    #[test]
    fn a_byte_order_mark_reads_as_without() {
        let d = tempfile::tempdir().unwrap();
        let txt = d.path().join("bom.txt");
        std::fs::write(&txt, "\u{feff}# OSU MPI Latency Test v7.4\n# Size Latency (us)\n1 2.0\n").unwrap();
        assert_eq!(load_file(&txt).unwrap().tables[0].points[0].latency_us, Some(2.0));
        let csv = d.path().join("bom.csv");
        std::fs::write(&csv, "\u{feff}benchmark,size_bytes,avg_lat_us\nosu_latency,1,2\n").unwrap();
        assert_eq!(load_file(&csv).unwrap().tables[0].benchmark, "osu_latency");
    }

    #[test]
    fn file_name_markers() {
        let m = |n: &str| name_marker(Path::new(n));
        assert_eq!(m("osu_bw_7.2_eessi716-ompi415-cuda-DD.txt"), Some(Memory::Device));
        assert_eq!(m("lat D H.txt"), Some(Memory::Device));
        assert_eq!(m("lat_M_M.txt"), Some(Memory::Managed));
        for none in ["osu_bw-HH.txt", "osu_bw.txt", "run-ADD.txt", "osu_latency_5.8_x.txt"] {
            assert_eq!(m(none), None, "{none}");
        }
    }

    /// What ran decides: a record saying host memory beats the `D D`
    /// words and a device title; a file name marker beats a plain title
    /// but not a buffer line.
    #[test]
    fn the_run_record_says_what_ran() {
        let d = tempfile::tempdir().unwrap();
        let cuda = "# OSU MPI-CUDA Latency Test v7.4\n# Size Latency (us)\n1 2.0\n";
        let plain = "# OSU MPI Latency Test v7.4\n# Size Latency (us)\n1 2.0\n";
        let host_line = "# OSU MPI Latency Test v7.4\n# Send Buffer on HOST (H) and Receive Buffer on HOST (H)\n# Size Latency (us)\n1 2.0\n";
        let write = |name: &str, text: &str| {
            let p = d.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let memory = |p: &Path| load_file(p).unwrap().tables[0].memory.clone().unwrap();
        let p = write("ran-DD.txt", cuda);
        assert_eq!(memory(&p).memory, Memory::Device);
        std::fs::write(p.with_extension("json"), r#"{"buffers": {"memory": "host", "requested": "D D"}}"#).unwrap();
        assert_eq!((memory(&p).memory, memory(&p).from.as_str()), (Memory::Host, "run record"));
        let p = write("plain-DD.txt", plain);
        assert_eq!((memory(&p).memory, memory(&p).from.as_str()), (Memory::Device, "file name"));
        let p = write("line-DD.txt", host_line);
        assert_eq!(memory(&p).memory, Memory::Host);
        let p = write("pairs.txt", plain);
        std::fs::write(p.with_extension("json"), r#"{"transport": "mpi-cuda"}"#).unwrap();
        assert_eq!(memory(&p).memory, Memory::Device);
    }
}
