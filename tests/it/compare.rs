//! `commbench compare` and `commbench plot` as a user runs them: the seed's
//! HDR InfiniBand osu_bw (OSU 5.6.2) as the reference against a real osu_bw
//! run on this machine, a run against its own output, and inputs or options
//! that cannot be used.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

fn commbench(args: &[&str]) -> Run {
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(args);
    let r = run_cmd(c, Duration::from_secs(60));
    r.assert_no_panic();
    r
}

fn data(name: &str) -> String {
    repo_root().join("tests/data/compare").join(name).display().to_string()
}

/// One osu_bw run on this machine (all default sizes, fewer iterations),
/// shared by the tests: its CSV, and its stdout saved as a text file.
fn measured() -> &'static (PathBuf, PathBuf) {
    static RUN: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RUN.get_or_init(|| {
        let _g = mpi_lock();
        let o = run_with_results(Mpi::OpenMpi, 2, "osu_bw", &["-i", "100", "-x", "10"]);
        let txt = o.csv_path.with_extension("txt");
        std::fs::write(&txt, &o.run.stdout).unwrap();
        // Shared by every test of this binary: kept for the process's life.
        let _ = o._dir.keep();
        (o.csv_path, txt)
    })
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn hdr_reference_against_shared_memory_reports_failures() {
    let (csv, _) = measured();
    let r = commbench(&["compare", &data("seed_osu_bw.txt"), path_str(csv), "--tolerance", "10%"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("osu_bw MPI_CHAR: bandwidth in MB/s (higher is better)"), "{}", r.stdout);
    let rows: Vec<&str> =
        r.stdout.lines().filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<u64>().is_ok())).collect();
    assert_eq!(rows.len(), 23, "every reference size has a verdict:\n{}", r.stdout);
    // Shared memory on this VM does not reach an HDR link's 24.6 GB/s at 4 MiB.
    let last = rows.last().unwrap();
    assert!(
        last.trim_start().starts_with("4194304") && last.contains("FAIL") && last.contains("lower than the reference"),
        "{last}"
    );
    let summary = r.stdout.lines().last().unwrap();
    assert!(summary.starts_with("FAIL: 23 reference sizes in 1 table"), "{summary}");
    // No notes; only, on a busy machine, the line that says the measured
    // run's host was busy (its record's load: procs::load).
    let busy = format!("commbench compare: run {}: the host was busy: ", csv.display());
    assert!(r.stderr.lines().all(|l| l.starts_with(&busy)), "no notes expected: {}", r.stderr);

    // The same, allowing every failure, passes.
    let r = commbench(&["compare", &data("seed_osu_bw.txt"), path_str(csv), "--allowed-failures", "23"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
}

#[test]
fn a_run_against_its_own_stdout_passes_in_every_format() {
    let (csv, txt) = measured();
    let r = commbench(&["compare", path_str(txt), path_str(csv), "--tolerance", "5%"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.lines().last().unwrap().starts_with("PASS: 23 reference sizes"), "{}", r.stdout);
    assert!(r.stdout.contains("(OSU 7.4)"));

    let r = commbench(&["compare", path_str(csv), path_str(csv), path_str(txt), "--format", "md"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(r.stdout.starts_with("### osu_bw MPI_CHAR"));
    assert!(r.stdout.contains("median of 2 runs"), "{}", r.stdout);
    // Our CSV knows each size's share of its path's peak: shown beside.
    assert!(r.stdout.contains("| Size | Reference | Measured | Of peak | Runs range | Ratio | Tolerance | Verdict |"));

    // Judged by that share: OSU's text has none, so it is said and the
    // CSV against itself passes.
    let r = commbench(&["compare", path_str(csv), path_str(csv), "--by-efficiency"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("osu_bw MPI_CHAR: efficiency in % of peak (higher is better)"), "{}", r.stdout);
    let r = commbench(&["compare", path_str(txt), path_str(csv), "--by-efficiency"]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("not compared: --by-efficiency needs an efficiency on both sides"), "{}", r.stderr);

    let r = commbench(&["compare", path_str(csv), path_str(txt), "--format", "json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON report");
    assert_eq!(v["summary"]["points"], 23);
    assert_eq!(v["summary"]["ok"], true);
    assert_eq!(v["blocks"][0]["benchmark"], "osu_bw");
}

#[test]
fn a_floor_fails_what_the_tolerance_lets_pass() {
    let (csv, txt) = measured();
    let r = commbench(&["compare", path_str(txt), path_str(csv), "--min-bw", "4M:1000000000"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    let fails: Vec<&str> = r.stdout.lines().filter(|l| l.contains("FAIL ")).collect();
    assert_eq!(fails.len(), 1, "{}", r.stdout);
    assert!(fails[0].contains("below the floor 1000000000 MB/s"));
}

#[test]
fn plot_of_a_results_directory() {
    let (csv, _) = measured();
    let dir = csv.parent().unwrap();
    let r = commbench(&["plot", path_str(dir), "--reference", &data("seed_osu_bw.txt"), "-q"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let svg_path = dir.join("osu_bw.svg");
    assert_eq!(r.stdout.trim(), svg_path.display().to_string());
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
    let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).map(str::trim).collect();
    assert!(texts.iter().any(|t| t.starts_with("osu_bw: bandwidth against message size")), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("reference (seed_osu_bw, OSU 5.6.2)")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("MPI: Open MPI")), "{texts:?}");
}

#[test]
fn unreadable_input_and_bad_options_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, [0u8, 159, 146, 150, 255, 10, 1, 2]).unwrap();
    let not_ours = dir.path().join("other.csv");
    std::fs::write(&not_ours, "a,b\n1,2\n").unwrap();
    let seed = data("seed_osu_bw.txt");
    let seed_lat = data("seed_osu_latency.txt");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["compare", "/nonexistent/ref.txt", &seed], "No such file"),
        (vec!["compare", &seed, path_str(&junk)], "no OSU benchmark output"),
        (vec!["compare", &seed, path_str(&not_ours)], "not a commbench results CSV"),
        (vec!["compare", &seed, &seed, "--tolerance", "ten"], "--tolerance"),
        (vec!["compare", &seed, &seed, "--tolerance", "9-3:5%"], "ends before it starts"),
        (vec!["compare", &seed, &seed, "--min-bw", "fast"], "--min-bw"),
        (vec!["compare", &seed], "required"),
        (vec!["compare", &seed, &seed_lat], "nothing in common"),
        (vec!["plot", path_str(&junk)], "no OSU benchmark output"),
        (vec!["plot", path_str(dir.path()), "--bogus"], "--bogus"),
    ];
    for (args, want) in cases {
        let r = commbench(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {}\n{}", r.stdout, r.stderr);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.contains(": note: ")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(lines[0].contains(want), "{args:?}: {}", lines[0]);
    }
    let r = commbench(&["compare", "--help"]);
    assert_eq!(r.code, Some(0));
    assert!(r.stdout.contains("--tolerance") && r.stdout.contains("Exit status"));
}

/// OSU 7.4 output with optional columns (-f, -c, -z, -T all) from a real
/// run reads back and matches the run's own CSV at every size and datatype.
#[test]
fn osu_7_4_outputs_with_optional_columns_match_their_csv() {
    let cases: [(&str, &[&str], usize); 2] = [
        ("osu_allreduce", &["-f", "-z", "-T", "all", "-m", "4:1024", "-i", "50", "-x", "5"], 3),
        ("osu_latency", &["-c", "-z", "-m", "1:1024", "-i", "50", "-x", "5"], 1),
    ];
    for (bench, args, tables) in cases {
        let o = {
            let _g = mpi_lock();
            run_with_results(Mpi::OpenMpi, 2, bench, args)
        };
        let txt = o.csv_path.with_extension("txt");
        std::fs::write(&txt, &o.run.stdout).unwrap();
        // Printed values have two decimals: allow for that rounding on
        // sub-microsecond latencies.
        let r =
            commbench(&["compare", path_str(&txt), path_str(&o.csv_path), "--tolerance", "25%", "--format", "json"]);
        assert_eq!(r.code, Some(0), "{bench}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.is_empty(), "{bench}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["blocks"].as_array().unwrap().len(), tables, "{bench}");
        assert_eq!(v["summary"]["points"], o.csv.len(), "{bench}: every CSV row has its printed row");
        assert_eq!(v["summary"]["missing"], 0);
    }
}

/// A device-buffer reference (a published `osu_bw -d cuda D D`) against a
/// run on host memory, either way round, is refused with one line naming
/// the option that allows it; with the option it is judged, and the
/// mismatch is a warning on stderr and in the report.
#[test]
fn device_reference_against_a_host_run_is_refused_unless_allowed() {
    let (csv, _) = measured();
    let dd = data("published/osu_bw_7.2_eessi716-ompi415-cuda-DD.txt");
    for args in [vec!["compare", &dd, path_str(csv)], vec!["compare", path_str(csv), &dd]] {
        let r = commbench(&args);
        assert_eq!(r.code, Some(2), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
        let lines: Vec<&str> = r.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", r.stderr);
        assert!(lines[0].contains("device memory") && lines[0].contains("host memory"), "{}", lines[0]);
        assert!(lines[0].contains("--allow-memory-mismatch"), "{}", lines[0]);
    }
    let r = commbench(&["compare", &dd, path_str(csv), "--allow-memory-mismatch", "--allowed-failures", "99"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains(": warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{}", r.stderr);
    assert!(warnings[0].contains("is on device memory"), "{}", warnings[0]);
    assert!(r.stdout.lines().any(|l| l.starts_with("warning: osu_bw MPI_CHAR: the reference")), "{}", r.stdout);
    let r = commbench(&["compare", &dd, path_str(csv), "--allow-memory-mismatch", "--format", "json", "-q"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON report");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{}", r.stdout);
}

/// Process counts that differ where both sides say (the CSV's np column)
/// warn once, on stderr and in the report; the comparison still runs.
#[test]
fn differing_process_counts_warn() {
    let (csv, _) = measured();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let np = header.split(',').position(|c| c == "np").unwrap();
    let mut out = format!("{header}\n");
    for l in lines {
        let mut cells: Vec<&str> = l.split(',').collect();
        cells[np] = "4";
        out += &(cells.join(",") + "\n");
    }
    let other = dir.path().join("np4.csv");
    std::fs::write(&other, out).unwrap();
    let r = commbench(&["compare", path_str(&other), path_str(csv), "--tolerance", "1000%"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let want = "osu_bw MPI_CHAR: process counts differ: the reference has 4, the runs 2";
    assert_eq!(r.stderr.trim(), format!("commbench compare: warning: {want}"));
    assert!(r.stdout.contains(&format!("warning: {want}\n")), "{}", r.stdout);
    assert!(r.stdout.lines().last().unwrap().starts_with("PASS"));
}

/// Two constructed runs whose CSVs carry spreads (`ci95_rel_pct`): a
/// difference inside both spreads is within noise, one beyond them fails
/// against the tolerance, a size without a spread on one side is judged
/// by the tolerance alone; the table says which rule decided.
/// A commbench CSV of osu_latency in `dir`: (size, latency, ci95_rel_pct)
/// rows.
fn latency_csv(dir: &Path, name: &str, rows: &[(u64, f64, &str)]) -> PathBuf {
    let mut text = "benchmark,backend,datatype,size_bytes,np,iterations,avg_lat_us,ci95_rel_pct\n".to_string();
    for (size, lat, ci) in rows {
        text += &format!("osu_latency,mpi,MPI_CHAR,{size},2,1000,{lat},{ci}\n");
    }
    write_file(dir, name, &text)
}

#[test]
fn spreads_in_both_csvs_judge_noise() {
    let dir = tempfile::tempdir().unwrap();
    let csv = |name: &str, rows: &[(u64, f64, &str)]| latency_csv(dir.path(), name, rows);
    let reference = csv("ref.csv", &[(1, 1.0, "10"), (2, 1.0, "0.5"), (4, 1.0, "")]);
    let run = csv("run.csv", &[(1, 1.15, "10"), (2, 1.2, "0.5"), (4, 1.05, "0.5")]);
    let r = commbench(&["compare", path_str(&reference), path_str(&run), "--tolerance", "10%"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let row = |size: &str| r.stdout.lines().find(|l| l.trim_start().starts_with(&format!("{size} "))).unwrap();
    assert!(row("1").contains(" noise  within noise"), "{}", r.stdout);
    assert!(row("2").contains(" tolerance  FAIL  20.0% higher"), "{}", r.stdout);
    assert!(row("4").contains("-  tolerance  pass"), "{}", r.stdout);
    assert!(r.stdout.contains("1 within noise), 1 fail"), "{}", r.stdout);

    // The size inside the noise alone passes.
    let run = csv("run1.csv", &[(1, 1.15, "10")]);
    let r = commbench(&["compare", path_str(&reference), path_str(&run), "--format", "json"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["blocks"][0]["rows"][0]["rule"], "noise");
    assert_eq!(v["summary"]["within_noise"], 1);
    assert!(v["summary_line"].as_str().unwrap().starts_with("PASS"));

    // The same run without spreads on the reference: the tolerance fails it.
    let bare = csv("bare.csv", &[(1, 1.0, "")]);
    let r = commbench(&["compare", path_str(&bare), path_str(&run)]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("Rule") && r.stdout.contains("FAIL  15.0% higher"), "{}", r.stdout);
}

/// What a hostile or unlucky input once got past compare: latencies of
/// 1e308 and 1e160 us passed against 3 us, a claimed interval of 1e300
/// made a 50x slowdown "within noise", an OSU text cut inside its last row
/// was judged as whole, a run record that is garbage or /dev/zero was
/// passed over in silence, and a byte order mark hid a valid OSU text.
#[test]
fn hostile_inputs_never_pass_and_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| write_file(dir.path(), name, text);
    let csv = |name: &str, rows: &[(u64, f64, &str)]| latency_csv(dir.path(), name, rows);
    let reference = csv("ref.csv", &[(1, 3.0, "2"), (2, 3.0, "2")]);
    let huge = csv("huge.csv", &[(1, 1e308, "2"), (2, 1e160, "2")]);
    let r = commbench(&["compare", path_str(&reference), path_str(&huge)]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAIL  measured 1e308 is not a plausible latency (above 1e12 us)"), "{}", r.stdout);
    assert!(r.stdout.contains("FAIL  measured 1e160 is not a plausible latency"), "{}", r.stdout);

    let wide = csv("wide.csv", &[(1, 150.0, "1e300"), (2, 150.0, "99")]);
    let r = commbench(&["compare", path_str(&reference), path_str(&wide)]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAIL: 2 reference sizes in 1 table: 0 pass"), "{}", r.stdout);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(lines[0].ends_with("wide.csv:2: ci95_rel_pct '1e300' is wider than any samples give (above 1271%): the row is judged without its spread"), "{}", lines[0]);

    let text = "# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n1                       3.00\n2                       3.";
    let whole = file("whole.txt", &format!("{text}00\n"));
    let cut = file("cut.txt", text);
    let r = commbench(&["compare", path_str(&whole), path_str(&cut)]);
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr.trim_end(),
        format!(
            "commbench compare: {}:4: the last line has no newline: the file was cut off in the middle of a row; a \
             truncated results file is not judged",
            cut.display()
        )
    );

    let bom = file("bom.txt", &format!("\u{feff}{}", std::fs::read_to_string(&whole).unwrap()));
    let r = commbench(&["compare", path_str(&whole), path_str(&bom)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("PASS: 2 reference sizes"), "{}", r.stdout);

    for (name, record) in [("garbage", Some("\u{0}\u{1}garbage")), ("zero", None)] {
        let run = file(&format!("{name}.txt"), &std::fs::read_to_string(&whole).unwrap());
        let json = run.with_extension("json");
        match record {
            Some(text) => std::fs::write(&json, text).unwrap(),
            None => std::os::unix::fs::symlink("/dev/zero", &json).unwrap(),
        }
        let r = commbench(&["compare", path_str(&whole), path_str(&run)]);
        assert_eq!(r.code, Some(0), "{name}: {}\n{}", r.stdout, r.stderr);
        let note = format!("commbench compare: note: {}: not a run record (", json.display());
        assert!(r.stderr.starts_with(&note), "{name}: {}", r.stderr);
    }
}

/// plot never writes outside `--out` (a benchmark name read from a CSV
/// naming `../../x` or an absolute path), and a subnormal value among
/// valid ones (once an endless loop) is left out with a note.
#[test]
fn plot_stays_in_out_and_ends_on_absurd_values() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o/p");
    let victim = dir.path().join("victim.svg");
    std::fs::write(&victim, "keep").unwrap();
    let mut text = "benchmark,size_bytes,avg_lat_us\n".to_string();
    for bench in ["../../x", victim.with_extension("").to_str().unwrap(), "osu_latency"] {
        text += &format!("{bench},1,2.0\n{bench},2,1e-310\n{bench},4,3.0\n");
    }
    let input = dir.path().join("in.csv");
    std::fs::write(&input, text).unwrap();
    let r = commbench(&["plot", path_str(&input), "--out", path_str(&out)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.elapsed < common::under_load(Duration::from_secs(10)), "{:?}", r.elapsed);
    let written: Vec<PathBuf> = r.stdout.lines().map(PathBuf::from).collect();
    assert_eq!(written.len(), 3, "{}", r.stdout);
    assert!(written.iter().all(|p| p.parent() == Some(out.as_path())), "{written:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    let mut beside: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    beside.sort();
    assert_eq!(beside, ["in.csv", "o", "victim.svg"]);
    assert!(r.stderr.contains("note: ../../x: the benchmark name is not a plain file name: its chart is ___.._x.svg"));
    assert_eq!(r.stderr.matches("1e-310 at size 2 is not a plausible latency").count(), 3, "{}", r.stderr);
}

/// `commbench ab` over two real commands (osu_latency against itself, a
/// few sizes): alternating rounds, a table per series with both medians,
/// the ratio and the A/A band of the control, exit 0 with a target the
/// same binary meets within noise; bad options are one line and status 2;
/// a command that fails stops it with status 2 and says which.
#[test]
fn ab_compares_two_commands_round_by_round() {
    let _g = mpi_lock();
    let osu_latency = bin(Mpi::OpenMpi, "osu_latency");
    let cmd = |extra: &str| {
        format!(
            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 {} -m 1:4 -i 200 -x 20 {extra}",
            osu_latency.display()
        )
    };
    let raw = tempfile::tempdir().unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(["ab", "--rounds", "5", "--control", "--label-a", "left", "--label-b", "right", "--max-worse", "1000%"])
        .arg("--a")
        .arg(cmd("--no-results"))
        .arg("--b")
        .arg(cmd("--csv {csv}"))
        .arg("--raw-dir")
        .arg(raw.path());
    let r = run_cmd(c, Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout
            .contains("osu_latency MPI_CHAR latency (us, lower is better): left (A) against right (B), medians of 5"),
        "{}",
        r.stdout
    );
    let rows: Vec<&str> = r.stdout.lines().filter(|l| l.trim_start().starts_with(['1', '2', '4'])).collect();
    assert_eq!(rows.len(), 3, "{}", r.stdout);
    assert!(rows.iter().all(|l| l.trim_end().ends_with('%')), "an A/A band on every row: {rows:?}");
    let wall = r.stdout.lines().find(|l| l.starts_with("wall time per run (median): A ")).unwrap_or_default();
    assert!(wall.contains("; A/A ") && wall.ends_with('%'), "the control's wall band: {}", r.stdout);
    // Each run's wall time, for scripts that add comparisons together.
    let per = r.stdout.lines().find_map(|l| l.strip_prefix("wall time per round (s): ")).unwrap_or_default();
    let sides: Vec<(&str, usize)> = per
        .split("; ")
        .map(|s| s.split_once(' ').unwrap_or_default())
        .map(|(name, vals)| (name, vals.split(' ').filter(|v| v.parse::<f64>().is_ok_and(|x| x > 0.0)).count()))
        .collect();
    assert_eq!(sides, [("A", 5), ("B", 5), ("A/A", 5)], "{}", r.stdout);
    assert!(r.stdout.trim_end().ends_with("RESULT: ALL TARGETS MET"), "{}", r.stdout);
    // Every run kept: A, its control and B (B with its CSV), each round.
    for round in 1..=5 {
        for f in [format!("a-{round}.txt"), format!("a2-{round}.txt"), format!("b-{round}.csv")] {
            assert!(raw.path().join(&f).is_file(), "{f}");
        }
    }
    let mut bad = Command::new(env!("CARGO_BIN_EXE_commbench"));
    bad.args(["ab", "--a", "true", "--b", "true", "--rounds", "2"]);
    let r = run_cmd(bad, Duration::from_secs(10));
    assert_eq!(r.code, Some(2));
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("commbench ab: invalid value '2' for '--rounds <N>'"), "{}", r.stderr);
    let mut both = Command::new(env!("CARGO_BIN_EXE_commbench"));
    both.args(["ab", "--a", "true", "--b", "true", "--max-worse", "5%", "--max-diff", "1%"]);
    let r = run_cmd(both, Duration::from_secs(10));
    assert_eq!((r.code, r.stderr.lines().count()), (Some(2), 1), "{}", r.stderr);
    let mut failing = Command::new(env!("CARGO_BIN_EXE_commbench"));
    failing.args(["ab", "--a", "echo broken >&2; exit 3", "--b", "true", "--rounds", "5"]);
    let r = run_cmd(failing, Duration::from_secs(10));
    assert_eq!(r.code, Some(2));
    let last = r.stderr.lines().last().unwrap_or("");
    assert_eq!(last, "commbench ab: 'echo broken >&2; exit 3' failed (exit status: 3): broken", "{}", r.stderr);
}

/// `ab --band-of` gives scripts that time their own rounds the band a size
/// is judged by: one number, the same for the same values, at least the
/// two medians' distance; bad lists are one line and status 2.
#[test]
fn ab_band_of_prints_the_band_scripts_judge_by() {
    let band = |a: &str, c: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_commbench"));
        cmd.args(["ab", "--band-of", a, c]);
        run_cmd(cmd, Duration::from_secs(10))
    };
    let r = band("10.0,10.4,9.8,10.1,10.2", "10.3 9.9 10.6 10.0 10.2");
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{r:?}");
    let b: f64 = r.stdout.trim().parse().unwrap_or_else(|_| panic!("one number: {:?}", r.stdout));
    // Medians 10.1 and 10.2: the single distance is 0.99%; resampling
    // medians of five from these ten values moves them further.
    assert!((0.99..10.0).contains(&b), "{b}");
    assert_eq!(band("10.0,10.4,9.8,10.1,10.2", "10.3 9.9 10.6 10.0 10.2").stdout, r.stdout);
    // Identical medians still get the spread of the values as their band.
    let same: f64 = band("1,2,3", "3,2,1").stdout.trim().parse().unwrap();
    assert!(same > 0.0, "{same}");
    for (a, c, want) in [
        ("1,2", "1,2,3", "commbench ab: --band-of: 2 value(s) in '1,2'; each list needs at least 3"),
        ("1,x,3", "1,2,3", "commbench ab: --band-of: 'x' is not a positive number"),
        ("1,2,3", "1,-2,3", "commbench ab: --band-of: '-2' is not a positive number"),
    ] {
        let r = band(a, c);
        assert_eq!((r.code, r.stdout.as_str(), r.stderr.trim_end()), (Some(2), "", want), "{a} {c}");
    }
    // The scripts' way in (scripts/support/aa_band.py) reads the same band.
    let mut py = Command::new("python3");
    py.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/support")).args([
        "-c",
        "import sys; from aa_band import aa_band; \
         print(aa_band(sys.argv[1], [10.0, 10.4, 9.8, 10.1, 10.2], [10.3, 9.9, 10.6, 10.0, 10.2]), \
         aa_band(sys.argv[1], [1, 2, 3], []))",
        env!("CARGO_BIN_EXE_commbench"),
    ]);
    let r = run_cmd(py, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout.trim(), format!("{} None", b / 100.0), "{r:?}");
    let mut both = Command::new(env!("CARGO_BIN_EXE_commbench"));
    both.args(["ab", "--band-of", "1,2,3", "1,2,3", "--a", "true"]);
    let r = run_cmd(both, Duration::from_secs(10));
    assert_eq!((r.code, r.stderr.lines().count()), (Some(2), 1), "{}", r.stderr);
}

/// compare is linear in rows. It once looked through every point for each
/// size and every table for each benchmark: 32,000 sizes took 28 s and
/// 100,000 did not end within 300 s. Here 100,000 sizes of one benchmark,
/// then 100,000 benchmarks of one size, each against a run one row worse.
/// About 10 s in all on an idle machine (a debug build reads 400,000 CSV
/// rows); the limit only catches the old behaviour, minutes long.
#[test]
fn a_hundred_thousand_rows_are_judged_in_linear_time() {
    const N: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let header = "benchmark,backend,datatype,size_bytes,np,iterations,avg_lat_us\n";
    /// A shape's name, the start of its row `i`, and its tables.
    type Shape = (&'static str, fn(u64) -> String, &'static str);
    let shapes: [Shape; 2] = [
        ("sizes", |i| format!("osu_latency,mpi,MPI_CHAR,{},2,1000,", i + 1), "1 table"),
        ("benchmarks", |i| format!("osu_b{i},mpi,MPI_CHAR,1,2,1000,"), "100000 tables"),
    ];
    for (shape, row, tables) in shapes {
        let (mut reference, mut run) = (header.to_string(), header.to_string());
        for i in 0..N {
            reference += &format!("{}1.5\n", row(i));
            run += &format!("{}{}\n", row(i), if i == N / 2 { "3.0" } else { "1.5" });
        }
        let reference = write_file(dir.path(), &format!("{shape}-ref.csv"), &reference);
        let run = write_file(dir.path(), &format!("{shape}-run.csv"), &run);
        let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
        c.args(["compare", path_str(&reference), path_str(&run), "-q"]);
        let r = run_cmd(c, Duration::from_secs(60));
        assert!(!r.timed_out, "{shape}: still running after {:?}", r.elapsed);
        assert_eq!(r.code, Some(1), "{shape}: {}", r.stderr);
        let fails: Vec<&str> = r.stdout.lines().filter(|l| l.contains("FAIL  100.0% higher")).collect();
        assert_eq!(fails.len(), 1, "{shape}");
        assert_eq!(
            r.stdout.lines().last().unwrap(),
            format!(
                "FAIL: {N} reference sizes in {tables}: {} pass (0 better than the reference beyond tolerance), 1 \
                 fail; 1 failures counted, 0 allowed",
                N - 1
            ),
            "{shape}"
        );
    }
}

/// A reference size whose value is NaN, infinite, 0 or negative cannot be
/// judged: its row says so (`skipped`), and with --require-all it fails,
/// size by size. Such sizes were once left out without a word, and
/// --require-all passed.
#[test]
fn a_reference_that_cannot_be_judged_fails_with_require_all() {
    let dir = tempfile::tempdir().unwrap();
    let refs = [(1, "NaN"), (2, "inf"), (4, "3.0"), (8, "-inf"), (16, "0")];
    let mut reference = "benchmark,backend,datatype,size_bytes,np,iterations,avg_lat_us\n".to_string();
    for (size, v) in refs {
        reference += &format!("osu_latency,mpi,MPI_CHAR,{size},2,1000,{v}\n");
    }
    let reference = write_file(dir.path(), "ref.csv", &reference);
    let run = latency_csv(dir.path(), "run.csv", &refs.map(|(size, _)| (size, 3.0, "")));
    let verdict = |r: &Run, size: &str| -> String {
        let row = r.stdout.lines().find(|l| l.split_whitespace().next() == Some(size));
        row.unwrap_or_else(|| panic!("no row for size {size}:\n{}", r.stdout)).split("10%  ").nth(1).unwrap().into()
    };
    let r = commbench(&["compare", path_str(&reference), path_str(&run)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(verdict(&r, "1"), "skipped  reference NaN is not a positive number: not judged");
    assert_eq!(verdict(&r, "2"), "skipped  reference inf is not a positive number: not judged");
    assert_eq!(verdict(&r, "4"), "pass");
    assert_eq!(verdict(&r, "8"), "skipped  reference -inf is not a positive number: not judged");
    assert_eq!(verdict(&r, "16"), "skipped  reference 0 is not a positive number: not judged");
    assert!(
        r.stdout.ends_with("4 skipped (no usable reference value); 0 failures counted, 0 allowed\n"),
        "{}",
        r.stdout
    );

    let r = commbench(&["compare", path_str(&reference), path_str(&run), "--require-all"]);
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let fails = "is not a positive number: not judged; --require-all fails a size whose reference cannot be judged";
    assert_eq!(verdict(&r, "1"), format!("FAIL  reference NaN {fails}"));
    assert_eq!(verdict(&r, "2"), format!("FAIL  reference inf {fails}"));
    assert_eq!(verdict(&r, "8"), format!("FAIL  reference -inf {fails}"));
    assert_eq!(verdict(&r, "16"), format!("FAIL  reference 0 {fails}"));
    assert_eq!(
        r.stdout.lines().last().unwrap(),
        "FAIL: 5 reference sizes in 1 table: 1 pass (0 better than the reference beyond tolerance), 4 fail; 4 \
         failures counted, 0 allowed"
    );
}

/// `commbench ab --raw-dir D` never writes over a file, or through a link,
/// at a name one of its runs' files takes (`a-1.txt`, `b-5.json` ...): one
/// line and status 2 before any run starts, the link's target untouched.
/// It once truncated and wrote through both.
#[test]
fn ab_raw_dir_refuses_names_already_taken() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    let victim = write_file(dir.path(), "victim.txt", "keep");
    let marker = dir.path().join("ran");
    let table = r"printf '# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n1                       2.00\n'";
    let cmd = format!("touch {}; {table}", marker.display());
    let ab = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
        c.args(["ab", "--rounds", "5", "--a", &cmd, "--b", &cmd, "--raw-dir", path_str(&raw)]).args(extra);
        let r = run_cmd(c, Duration::from_secs(30));
        r.assert_no_panic();
        r
    };
    let refused = |r: &Run, name: &str| {
        assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stderr,
            format!(
                "commbench ab: {}: already exists: ab writes its runs' files only under names that are free, never \
                 over a file or through a link (use an empty or new --raw-dir)\n",
                raw.join(name).display()
            )
        );
        assert!(!marker.exists(), "no run started");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    };
    std::os::unix::fs::symlink(&victim, raw.join("a-1.txt")).unwrap();
    refused(&ab(&[]), "a-1.txt");
    std::fs::remove_file(raw.join("a-1.txt")).unwrap();
    std::fs::write(raw.join("b-5.json"), "old").unwrap();
    refused(&ab(&[]), "b-5.json");
    std::fs::remove_file(raw.join("b-5.json")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), raw.join("a2-2.err")).unwrap();
    refused(&ab(&["--control"]), "a2-2.err");
    std::fs::remove_file(raw.join("a2-2.err")).unwrap();

    let r = ab(&["--control"]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read_dir(&raw).unwrap().count(), 5 * 3 * 2, "a .txt and an .err per run");

    // A link planted once the runs have started (here by A, which runs
    // before B in round 1) is refused when B's file is made.
    let fresh = dir.path().join("fresh");
    let planting = format!("ln -s {} {}/b-1.txt; {table}", victim.display(), fresh.display());
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(["ab", "--rounds", "5", "--a", &planting, "--b", &cmd, "--raw-dir", path_str(&fresh)]);
    let r = run_cmd(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr.lines().last().unwrap(),
        format!(
            "commbench ab: {}: already exists: ab writes its runs' files only under names that are free, never over \
             a file or through a link (use an empty or new --raw-dir)",
            fresh.join("b-1.txt").display()
        )
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// Characters a terminal acts on (or that hide or reorder text) left raw
/// in `text`, newlines apart.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars().filter(|c| *c != '\n' && commbench::diag::acts_on_terminal(*c)).collect()
}

/// Names read from files reach no terminal raw: a benchmark name holding
/// an escape sequence (clear the screen), a right-to-left override, a C1
/// control and a newline followed by a forged summary line, and a
/// datatype cell holding an escape, are printed escaped (`\u{1b}`) by compare in
/// every format, by plot on stderr and in its SVG (which stays valid
/// XML), and by ab; JSON keeps the names whole as JSON escapes.
#[test]
fn names_from_files_reach_no_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let clear = "osu_\u{1b}[2Jlat\u{202e}cnE";
    let forged = "osu_x\nPASS: 1 reference sizes in 1 table";
    let csv = |name: &str, rows: &[(&str, &str)]| {
        let mut text = "benchmark,backend,datatype,size_bytes,np,iterations,avg_lat_us\n".to_string();
        for (bench, datatype) in rows {
            text += &format!("\"{bench}\",mpi,{datatype},8,2,1000,1.5\n");
        }
        write_file(dir.path(), name, &text)
    };
    let reference = csv("ref.csv", &[(clear, "MPI_CHAR"), (forged, "MPI_CHAR")]);
    let run = csv(
        "run.csv",
        &[(clear, "MPI_CHAR"), (forged, "MPI_CHAR"), ("osu_\u{9b}31m", "MPI_CHAR"), ("osu_y", "MPI_\u{1b}[5mX")],
    );
    for format in ["text", "md", "json"] {
        let r = commbench(&["compare", path_str(&reference), path_str(&run), "--format", format]);
        assert_eq!(r.code, Some(0), "{format}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(raw_controls(&r.stdout), [], "{format}: {}", r.stdout);
        assert_eq!(raw_controls(&r.stderr), [], "{format}: {}", r.stderr);
        assert!(r.stderr.contains("osu_\\u{9b}31m MPI_CHAR: measured but not in the reference"), "{}", r.stderr);
        assert!(r.stderr.contains("unknown variant `MPI_\\u{1b}[5mX`"), "{}", r.stderr);
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(v["blocks"][0]["benchmark"], clear);
            assert_eq!(v["blocks"][1]["benchmark"], forged);
        } else {
            assert!(r.stdout.contains("osu_\\u{1b}[2Jlat\\u{202e}cnE MPI_CHAR: latency"), "{}", r.stdout);
            assert!(r.stdout.contains("osu_x\\u{a}PASS: 1 reference sizes in 1 table MPI_CHAR"), "{}", r.stdout);
            assert!(!r.stdout.lines().any(|l| l.starts_with("PASS: 1 ")), "{}", r.stdout);
        }
    }

    let out = dir.path().join("charts");
    let r = commbench(&["plot", path_str(&run), "--out", path_str(&out)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(raw_controls(&r.stderr), [], "{}", r.stderr);
    assert!(
        r.stderr.contains("note: osu_\\u{1b}[2Jlat\\u{202e}cnE: the benchmark name is not a plain"),
        "{}",
        r.stderr
    );
    for svg in files_with_ext(&out, "svg") {
        let text = std::fs::read_to_string(&svg).unwrap();
        assert_eq!(raw_controls(&text), [], "{}", svg.display());
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    }

    // ab: a datatype line and a failing command's message, both read from
    // what the commands wrote.
    let table = r"printf '# OSU MPI Latency Test v7.4\n# Datatype: MPI_\033[31mCHAR\n# Size          Latency (us)\n1                       2.00\n'";
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(["ab", "--rounds", "5", "--a", table, "--b", table]);
    let r = run_cmd(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(raw_controls(&r.stdout), [], "{}", r.stdout);
    assert!(r.stdout.contains("osu_latency MPI_\\u{1b}[31mCHAR latency"), "{}", r.stdout);
    let mut c = Command::new(env!("CARGO_BIN_EXE_commbench"));
    c.args(["ab", "--rounds", "5", "--a", r"printf '\033]0;owned\007 broken\n' >&2; exit 3", "--b", "true"]);
    let r = run_cmd(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(raw_controls(&r.stderr), [], "{}", r.stderr);
    assert!(r.stderr.trim_end().ends_with(": \\u{1b}]0;owned\\u{7} broken"), "{}", r.stderr);
}

/// The measured run's CSV and record copied into `dir` as `name`, every
/// rank's `load` as given (the record's other fields as the run wrote
/// them): a run whose record says what competed with it, without making
/// real load in a test.
fn with_load(dir: &Path, name: &str, load: &serde_json::Value) -> PathBuf {
    let (csv, _) = measured();
    let to = dir.join(format!("{name}.csv"));
    std::fs::copy(csv, &to).unwrap();
    let mut rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(csv.with_extension("json")).unwrap()).unwrap();
    for r in rec["ranks"].as_array_mut().unwrap() {
        r["load"] = load.clone();
    }
    std::fs::write(to.with_extension("json"), rec.to_string()).unwrap();
    to
}

/// A failing verdict on a run whose record says load 8.2 on 2 cores
/// prints the line that says the host was busy; a quiet run's failure,
/// and a busy run that passes, print none.
#[test]
fn a_failing_verdict_says_the_host_was_busy() {
    let d = tempfile::tempdir().unwrap();
    let quiet = serde_json::json!({
        "before": {"at_s": 0.0, "load1": 0.9, "online_cpus": 2},
        "after": {"at_s": 3.0, "load1": 1.4, "online_cpus": 2},
        "max_load1": 1.4
    });
    let busy = serde_json::json!({
        "before": {"at_s": 0.0, "load1": 6.0, "online_cpus": 2},
        "after": {"at_s": 3.0, "load1": 8.2, "online_cpus": 2},
        "max_load1": 8.2
    });
    let reference = with_load(d.path(), "ref", &quiet);
    let busy_run = with_load(d.path(), "loaded", &busy);
    let quiet_run = with_load(d.path(), "quiet", &quiet);
    // No bandwidth reaches a petabyte a second: every size fails.
    let floor = ["--min-bw", "1000000000"];
    let r = commbench(&[&["compare", path_str(&reference), path_str(&busy_run)][..], &floor].concat());
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let line =
        format!("commbench compare: run {}: the host was busy: load 8.2 on 2 cores during the run", busy_run.display());
    assert!(r.stderr.lines().any(|l| l == line), "{}", r.stderr);
    assert!(!r.stdout.contains("busy"), "the report itself is unchanged: {}", r.stdout);
    // A busy reference is named as the reference.
    let r = commbench(&[&["compare", path_str(&busy_run), path_str(&quiet_run)][..], &floor].concat());
    assert!(r.stderr.contains(&format!("commbench compare: reference {}: the host was busy", busy_run.display())));
    // Quiet: the same failure, no such line.
    let r = commbench(&[&["compare", path_str(&reference), path_str(&quiet_run)][..], &floor].concat());
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("busy"), "{}", r.stderr);
    // Busy, but nothing failed: nothing to explain.
    let r = commbench(&["compare", path_str(&reference), path_str(&busy_run)]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("busy"), "{}", r.stderr);
}
