//! Nothing lost, nothing overwritten: result files never go through a
//! link planted at their name, a refused run leaves no file, a full disk
//! is an error where the user chose the place (a warning in the default
//! place) and never leaves half a row, and compare judges no bad data.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

const QUICK: &[&str] = &["-m", "1:16", "-i", "20", "-x", "2"];

fn latency(cwd: &Path, extra: &[&str]) -> Run {
    let mut args = QUICK.to_vec();
    args.extend(extra);
    launch(Mpi::OpenMpi, 2, "osu_latency", &args, &Launch { cwd: Some(cwd.into()), ..Launch::default() })
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// `--csv X` where X is a link: refused, its target untouched, nothing
/// left.
#[test]
fn a_link_at_the_csv_name_is_refused() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    symlink(&target, d.path().join("out.csv")).unwrap();
    let run = latency(d.path(), &["--csv", "out.csv"]);
    run.assert_no_panic();
    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("'out.csv' already exists"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert_eq!(names_in(d.path()), ["out.csv", "precious"]);
}

/// A dangling link at the record's name (X.json) refuses the run before
/// anything is written: no empty X.csv is left, the link's target is not
/// created.
#[test]
fn a_dangling_link_at_the_record_name_leaves_nothing() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    symlink(d.path().join("created-through-link"), d.path().join("out.json")).unwrap();
    let run = latency(d.path(), &["--csv", "out.csv"]);
    run.assert_no_panic();
    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("out.json' already exists"), "{run:?}");
    assert_eq!(names_in(d.path()), ["out.json"]);
}

/// `--csv X` refused because X.json exists, or because X cannot be
/// created: no X is left behind.
#[test]
fn a_refused_csv_leaves_no_file() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("out.json"), "{}").unwrap();
    let run = latency(d.path(), &["--csv", "out.csv"]);
    assert_ne!(run.code, Some(0), "{run:?}");
    assert_eq!(names_in(d.path()), ["out.json"]);
    std::fs::write(d.path().join("plain"), "x").unwrap();
    let run = latency(d.path(), &["--csv", "plain/out.csv"]);
    run.assert_no_panic();
    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("cannot write results to 'plain'"), "{run:?}");
    assert_eq!(names_in(d.path()), ["out.json", "plain"]);
}

/// The record used to be written through `X.json.tmp`, a name anyone
/// could plant a link at; the link's target stays untouched now.
#[test]
fn a_link_at_the_old_temporary_name_is_left_alone() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    symlink(&target, d.path().join("out.json.tmp")).unwrap();
    let run = latency(d.path(), &["--csv", "out.csv"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    assert_eq!(names_in(d.path()), ["out.csv", "out.json", "out.json.tmp", "precious"]);
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(rec["status"], "complete", "{rec}");
}

/// Every line of `csv` is a whole row: it ends with a newline and each
/// row has the header's number of cells.
fn assert_whole_rows(csv: &Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    assert!(text.ends_with('\n'), "{} ends mid-row: {text:?}", csv.display());
    let mut lines = text.lines();
    let cells = lines.next().unwrap().split(',').count();
    for l in lines {
        assert_eq!(l.split(',').count(), cells, "{l}");
    }
}

/// osu_latency up to 4 MiB in `cwd` on a 64 KiB tmpfs at `cwd/t` with
/// room for the record and one page of CSV, not for every row. The
/// record's pages are measured (see [`record_pages`]): its size moves
/// with the environment a test runs in, and a fixed 12 KiB once left no
/// page for the CSV at all.
fn on_full_tmpfs(cwd: &Path, results_dir: Option<&str>) -> Run {
    let pages = record_pages(cwd, results_dir, "1:4194304");
    on_tmpfs_with_free(cwd, results_dir, pages + 1, "1:4194304")
}

/// The pages the run record of the same run takes while it runs (with its
/// 2 KiB of room for its end), from that run's ended record on an ordinary
/// disk in `cwd/m` (a name as long as the tmpfs's `t`), less what only its
/// end holds.
fn record_pages(cwd: &Path, results_dir: Option<&str>, sizes: &str) -> usize {
    let m = cwd.join("m");
    std::fs::create_dir(&m).unwrap();
    let mut c = launcher(Mpi::OpenMpi, 2);
    c.arg(bin(Mpi::OpenMpi, "osu_latency")).args(["-m", sizes, "-i", "2", "-x", "0"]).current_dir(&m);
    if let Some(r) = results_dir {
        c.args(["--results-dir", r]);
    }
    let run = run_cmd(c, Duration::from_secs(60));
    assert_eq!(run.code, Some(0), "{run:?}");
    let json = files_with_ext(&m.join(results_dir.unwrap_or("results")), "json");
    // The record as it was while running: the ranks' load facts gathered
    // at the end (the last sample, the highest load, one sample per size)
    // were not in it yet.
    let mut rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    for rank in rec["ranks"].as_array_mut().into_iter().flatten() {
        if let Some(load) = rank.get_mut("load").and_then(|l| l.as_object_mut()) {
            for end_only in ["after", "max_load1", "max_runnable", "sizes"] {
                load.remove(end_only);
            }
        }
    }
    let bytes = serde_json::to_string_pretty(&rec).unwrap().len() + 1;
    (bytes + 2048).div_ceil(4096)
}

/// osu_latency over `sizes` on a 64 KiB tmpfs at `cwd/t` with `free`
/// pages left; what was left there ends up in `cwd/left`.
fn on_tmpfs_with_free(cwd: &Path, results_dir: Option<&str>, free: usize, sizes: &str) -> Run {
    let launcher = launcher(Mpi::OpenMpi, 2);
    let mut words: Vec<String> = std::iter::once(launcher.get_program())
        .chain(launcher.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    words.push(bin(Mpi::OpenMpi, "osu_latency").display().to_string());
    words.extend(["-m", sizes, "-i", "2", "-x", "0"].map(String::from));
    if let Some(r) = results_dir {
        words.extend(["--results-dir".to_string(), r.to_string()]);
    }
    on_tmpfs(cwd, free, &words, &[])
}

/// `words` (a command line of plain words) run in a 64 KiB tmpfs at
/// `cwd/t` with `free` pages left, with `env` added; what was left there
/// ends up in `cwd/left`.
fn on_tmpfs(cwd: &Path, free: usize, words: &[String], env: &[(String, String)]) -> Run {
    let t = cwd.join("t");
    std::fs::create_dir(&t).unwrap();
    let mut line = format!(
        "mount -t tmpfs -o size=64k tmpfs {t} && dd if=/dev/zero of={t}/fill bs=4k count={} 2>/dev/null && cd {t} && ",
        16 - free,
        t = t.display()
    );
    line.push_str(&words.join(" "));
    // What was left, for the test to read after the namespace is gone.
    line.push_str(&format!("; rc=$?; cp -r {t}/. {}/left/; exit $rc", cwd.display(), t = t.display()));
    std::fs::create_dir(cwd.join("left")).unwrap();
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", &line]);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.envs(env.iter().map(|(k, v)| (k, v)));
    run_cmd(c, Duration::from_secs(120))
}

/// What a run on a nearly full disk left in `dir` (its results place): no
/// empty file, whole rows in every CSV, no CSV without its record, and a
/// record that has ended (never `running`), `complete`-like exactly when
/// the run exited 0. The record's status, or "none" when nothing was left.
fn check_left(dir: &Path, run: &Run, what: &str, stem: &str) -> String {
    run.assert_no_panic();
    let names = if dir.exists() { names_in(dir) } else { Vec::new() };
    for n in &names {
        let len = std::fs::metadata(dir.join(n)).unwrap().len();
        assert!(len > 0, "{what}: an empty file is left: {n} (all: {names:?})\n{}", run.stderr);
    }
    for csv in files_with_ext(dir, "csv") {
        assert_whole_rows(&csv);
    }
    let csv = names.iter().find(|n| n.ends_with(&format!("{stem}.csv")));
    let json = names.iter().find(|n| n.ends_with(&format!("{stem}.json")));
    let Some(json) = json else {
        assert!(csv.is_none(), "{what}: a CSV without its record: {names:?}");
        assert!(names.is_empty(), "{what}: files without a record: {names:?}");
        assert_ne!(run.code, Some(0), "{what}: {run:?}");
        return "none".into();
    };
    assert!(csv.is_some(), "{what}: a record without its CSV: {names:?}");
    let text = std::fs::read_to_string(dir.join(json)).unwrap();
    let rec: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {json} is not JSON ({e}): {text:?}"));
    let status = rec["status"].as_str().unwrap().to_string();
    assert_ne!(status, "running", "{what}: {rec}\n{}", run.stderr);
    let ok = matches!(status.as_str(), "complete" | "passed");
    assert_eq!(run.code == Some(0), ok, "{what}: {status}: {run:?}");
    assert_eq!(rec["exit_code"].as_i64(), run.code.map(i64::from), "{what}: {rec}");
    status
}

/// `commbench pairs` on a disk with 0 to 6 pages free once left an empty
/// `_pairs.csv` and `_pairs.json` (0 pages) or an empty record beside a
/// CSV holding its header (1 or 2): the header or the record that does not
/// fit now takes both away, as the OSU binaries do. Every free count
/// leaves whole files or none; with 10 pages the run completes. Eight
/// short jobs, about 1.5 s each here.
#[test]
fn pairs_on_a_nearly_full_disk_leaves_no_empty_file() {
    let _g = mpi_lock();
    let launcher = launcher(Mpi::OpenMpi, 2);
    let mut words: Vec<String> = std::iter::once(launcher.get_program())
        .chain(launcher.get_args())
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    words.push(bin(Mpi::OpenMpi, "commbench").display().to_string());
    let args = ["pairs", "--size", "64KB", "-W", "2", "-i", "2", "-x", "1", "--results-dir", "r"];
    words.extend(args.map(String::from));
    let mut statuses = Vec::new();
    for free in (0..=6).chain([10]) {
        let d = tempfile::tempdir().unwrap();
        let run = on_tmpfs(d.path(), free, &words, &[]);
        let status = check_left(&d.path().join("left/r"), &run, &format!("{free} pages"), "_pairs");
        if status == "none" {
            let line = run.stderr.lines().find(|l| l.starts_with("commbench pairs: ")).expect("a line");
            assert!(line.contains("No space left on device"), "{free} pages: {line}");
        }
        statuses.push(status);
    }
    assert_eq!(statuses.first().map(String::as_str), Some("none"), "{statuses:?}");
    assert_eq!(statuses.last().map(String::as_str), Some("complete"), "{statuses:?}");
}

/// `commbench gpu-bw` (on the GPU stand-in) on a disk with 0 to 6 pages
/// free once left an empty `_gpu-bw.csv` and `_gpu-bw.json` (0 pages), an
/// empty record (1), or a record still `running` (2: it was written
/// without room for its end). Now nothing or whole files, the record
/// ended. Seven short runs, well under a second each.
#[test]
fn gpu_bw_on_a_nearly_full_disk_leaves_no_empty_file() {
    let gpu = common::standin::stand_in("dgx1");
    let mut words = vec![env!("CARGO_BIN_EXE_commbench").to_string()];
    let args = ["gpu-bw", "--tests", "h2d", "--gpus", "0", "--size", "1M", "--reps", "2", "--results-dir", "r"];
    words.extend(args.map(String::from));
    let mut statuses = Vec::new();
    for free in 0..=6 {
        let d = tempfile::tempdir().unwrap();
        let run = on_tmpfs(d.path(), free, &words, &gpu.env());
        statuses.push(check_left(&d.path().join("left/r"), &run, &format!("{free} pages"), "_gpu-bw"));
    }
    assert_eq!(statuses.first().map(String::as_str), Some("none"), "{statuses:?}");
    assert_eq!(statuses.last().map(String::as_str), Some("complete"), "{statuses:?}");
}

fn only_csv(dir: &Path) -> std::path::PathBuf {
    let csvs = files_with_ext(dir, "csv");
    assert_eq!(csvs.len(), 1, "{csvs:?}");
    csvs[0].clone()
}

/// A full disk where the user chose the place: the run ends non-zero with
/// one line naming the CSV and the missing rows, and no half row is left.
#[test]
fn a_full_disk_in_a_chosen_place_is_an_error() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let run = on_full_tmpfs(d.path(), Some("r"));
    run.assert_no_panic();
    assert_ne!(run.code, Some(0), "{run:?}");
    let line = run.stderr.lines().find(|l| l.starts_with("osu_latency: ")).expect("a line");
    assert!(line.contains("cannot write the CSV r/") && line.contains("are missing"), "{line}");
    assert!(line.contains("No space left on device"), "{line}");
    assert_whole_rows(&only_csv(&d.path().join("left/r")));
}

/// The same in the default place: warnings that name the missing rows,
/// the whole OSU table, exit 0, whole rows only.
#[test]
fn a_full_disk_in_the_default_place_is_a_warning() {
    let _g = mpi_lock();
    let d = tempfile::tempdir().unwrap();
    let run = on_full_tmpfs(d.path(), None);
    run.assert_no_panic();
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(osu_rows(&run.stdout).len(), 23, "{}", run.stdout);
    let warning = run.stderr.lines().find(|l| l.contains("warning: the CSV")).expect("a warning");
    assert!(
        warning.contains("is incomplete: the rows from MPI_CHAR size") && warning.contains("are missing"),
        "{warning}"
    );
    assert!(warning.ends_with("the OSU table goes on"), "{warning}");
    assert_whole_rows(&only_csv(&d.path().join("left/results")));
}

/// A disk with two to four pages free once left the record `running`
/// (its end needs a new copy, and there was no room for one) and, with
/// two, an empty CSV as well. The record keeps room for its end, which is
/// written in place when there is no room for a copy; a CSV that never got
/// its header goes. Three short runs (under a second each here).
#[test]
fn a_nearly_full_disk_leaves_no_running_record() {
    let _g = mpi_lock();
    let mut statuses = Vec::new();
    for free in 2..=4 {
        let d = tempfile::tempdir().unwrap();
        let run = on_tmpfs_with_free(d.path(), Some("r"), free, "1:64");
        run.assert_no_panic();
        let left = d.path().join("left/r");
        let (csvs, jsons) = (files_with_ext(&left, "csv"), files_with_ext(&left, "json"));
        for csv in &csvs {
            assert_whole_rows(csv);
        }
        let Some(json) = jsons.first() else {
            assert!(csvs.is_empty(), "{free} pages: a CSV without its record: {csvs:?}");
            assert_ne!(run.code, Some(0), "{free} pages: {run:?}");
            statuses.push("none".to_string());
            continue;
        };
        let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
        let status = rec["status"].as_str().unwrap().to_string();
        assert!(status == "complete" || status == "error", "{free} pages: {rec}");
        assert_eq!(run.code == Some(0), status == "complete", "{free} pages: {run:?}");
        if status == "error" {
            assert!(csvs.is_empty(), "{free} pages: the CSV that got no header is left: {csvs:?}");
            assert!(rec["results"]["incomplete"].as_str().unwrap().starts_with("no CSV: "), "{rec}");
        } else {
            assert_eq!(rec["results"]["rows"], 7, "{rec}");
        }
        statuses.push(status);
    }
    assert!(statuses.iter().any(|s| s == "complete"), "{statuses:?}");
}

fn compare(args: &[&Path]) -> Run {
    let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
    c.arg("compare").args(args);
    run_cmd(c, Duration::from_secs(20))
}

/// A commbench CSV of osu_bw with these (size, bw_MBps) rows.
fn bw_csv(rows: &[(u64, &str)]) -> String {
    // The writer's own column list: the file is ours in every way but its values.
    let cols = commbench::report::csv::COLUMNS;
    assert_eq!(cols.iter().position(|c| *c == "bw_MBps"), Some(13));
    let mut text = cols.join(",") + "\n";
    for (size, bw) in rows {
        let cells = format!("osu_bw,mpi,MPI_CHAR,{size},{size},64,2,1,100,10,,,,{bw}");
        text += &(cells + &",".repeat(cols.len() - 14) + "\n");
    }
    text
}

const REFERENCE: &[(u64, &str)] = &[(1, "2"), (2, "4"), (4, "8")];

/// Compare fails a truncated CSV (exit 2, one line naming it), a NaN or
/// non-positive value (exit 1), says "nothing to judge" for a run sharing
/// no size (exit 3), and fails a run whose record says it did not
/// complete (exit 1).
#[test]
fn compare_never_passes_bad_data() {
    let d = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| write_file(d.path(), name, text);
    let reference = file("ref.csv", &bw_csv(REFERENCE));
    let good = file("good.csv", &bw_csv(REFERENCE));
    let run = compare(&[&reference, &good]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("PASS: 3 reference sizes"), "{run:?}");

    let whole = bw_csv(REFERENCE);
    let cut = file("cut.csv", whole.trim_end_matches('\n'));
    let run = compare(&[&reference, &cut]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("cut.csv:4: the last line has no newline"), "{run:?}");
    let short = file("short.csv", &(whole.clone() + "osu_bw,mpi,MPI_CHAR,8,8,64\n"));
    let run = compare(&[&reference, &short]);
    assert_eq!(run.code, Some(2), "{run:?}");
    let header_cells = commbench::report::csv::COLUMNS.len();
    assert!(run.stderr.contains(&format!("short.csv:5: 6 cells where the header has {header_cells}")), "{run:?}");

    for (name, bad) in [("nan", "NaN"), ("zero", "0"), ("neg", "-3"), ("inf", "inf")] {
        let p = file(&format!("{name}.csv"), &bw_csv(&[(1, "2"), (2, bad), (4, "8")]));
        let run = compare(&[&reference, &p]);
        assert_eq!(run.code, Some(1), "{name}: {run:?}");
        assert!(run.stdout.contains("FAIL: 3 reference sizes"), "{name}: {run:?}");
        assert!(run.stdout.contains("is not a positive number"), "{name}: {run:?}");
    }

    let other = file("other.csv", &bw_csv(&[(1024, "2"), (2048, "4")]));
    let run = compare(&[&reference, &other]);
    assert_eq!(run.code, Some(3), "{run:?}");
    assert!(run.stdout.contains("NOTHING TO JUDGE: 3 reference sizes"), "{run:?}");
    assert!(run.stderr.contains("nothing to judge"), "{run:?}");

    for status in ["running", "error", "timeout", "interrupted"] {
        let p = file(&format!("{status}.csv"), &bw_csv(REFERENCE));
        std::fs::write(p.with_extension("json"), format!("{{\"status\": \"{status}\"}}")).unwrap();
        let run = compare(&[&reference, &p]);
        assert_eq!(run.code, Some(1), "{status}: {run:?}");
        assert!(run.stderr.contains(&format!("the run record says '{status}'")), "{status}: {run:?}");
        assert!(run.stdout.contains("FAIL:"), "{status}: {run:?}");
    }
}

/// COMMBENCH_HISTORY naming a FIFO, a device or a directory got SQLite's
/// bare "disk I/O error" (or "unable to open database file"); it is now
/// one line saying what is there, status 2.
#[test]
fn a_history_that_is_not_a_file_is_refused_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("history.sqlite");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a NUL-terminated path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let cases = [(fifo.as_path(), "a FIFO"), (Path::new("/dev/null"), "a character device"), (d.path(), "a directory")];
    for (path, what) in cases {
        let mut c = Command::new(bin(Mpi::OpenMpi, "commbench"));
        c.args(["history", "show"]).env("COMMBENCH_HISTORY", path).current_dir(d.path());
        let run = run_cmd(c, Duration::from_secs(20));
        assert_eq!(run.code, Some(2), "{what}: {run:?}");
        let want = format!(
            "commbench history: {}: {what}, not a regular file: the history is a SQLite database file\n",
            path.display()
        );
        assert_eq!(run.stderr, want, "{what}");
    }
}
