//! `commbench ab`: an A/B measurement of two commands that print OSU tables
//! (commbench's binaries, OSU's own, two builds of either). It runs them in
//! alternating order for a number of rounds (A first in odd rounds, B first
//! in even ones, so drift hits both alike), reads every run's table with
//! compare's readers (its CSV where the command writes one to `{csv}`, at
//! full precision; its stdout otherwise), and reports per size the median
//! of each side, their ratio, each side's spread over the rounds and, with
//! `--control`, the A/A band (A run twice a round) that noise alone gives.
//! `--max-worse PCT` turns it into a verdict ([`judge`] says how). The
//! scripts/bench-*.sh benchmarks are wrappers around it.

pub mod judge;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

use crate::diag::printable;
use judge::{Collected, Mark, Samples, SeriesKey, SizeLine, Target};

/// `commbench ab`'s options.
#[derive(Parser, Debug)]
#[command(
    name = "commbench ab",
    about = "Run two commands that print OSU tables in alternating order for some rounds and compare their \
             medians size by size (an A/B benchmark, with an optional A/A control)"
)]
pub(crate) struct Args {
    /// Command A, run with `sh -c`. A `{csv}` in it becomes a fresh CSV path for each run, read at full
    /// precision (commbench's `--csv {csv}`); without one, its stdout is read as an OSU table
    #[arg(long = "a", value_name = "CMD", required_unless_present = "band_of")]
    pub a: Option<String>,
    /// Command B, as A
    #[arg(long = "b", value_name = "CMD", required_unless_present = "band_of")]
    pub b: Option<String>,
    /// A's name in the report
    #[arg(long, value_name = "NAME", default_value = "A")]
    pub label_a: String,
    /// B's name in the report
    #[arg(long, value_name = "NAME", default_value = "B")]
    pub label_b: String,
    /// Rounds, each running both (5 or more; medians of fewer are noise on a shared machine)
    #[arg(long, value_name = "N", default_value_t = 9, value_parser = clap::value_parser!(u32).range(5..=10000))]
    pub rounds: u32,
    /// Also run A a second time each round: the A/A band at each size shows what noise alone moves
    #[arg(long)]
    pub control: bool,
    /// Verdict: A may be at most PCT worse than B at each size (higher latency, lower bandwidth or rate);
    /// a size beyond it and beyond the A/A band fails the comparison (exit 1)
    #[arg(long, value_name = "PCT", value_parser = parse_pct, conflicts_with = "max_diff")]
    pub max_worse: Option<f64>,
    /// Verdict, two-sided: A within PCT of B either way at each size (0% with --control: every difference
    /// within what A moves against itself)
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub max_diff: Option<f64>,
    /// Keep every run's stdout, stderr and CSV here (<a|b|a2>-<round>.txt/.err/.csv, and .json for a CSV's
    /// record); any of these names already taken (a file, a link) is refused before a run starts. Default: a
    /// temporary directory removed at the end
    #[arg(long, value_name = "DIR")]
    pub raw_dir: Option<PathBuf>,
    /// Seconds one run may take before the comparison stops (exit 2)
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=2592000))]
    pub timeout: u64,
    /// Run nothing: print the A/A band, in percent, of values A gave once a round and of the control's (two
    /// lists, comma- or space-separated, at least 3 values each), as the comparisons judge a size: the larger of
    /// the two medians' distance and the 95th percentile of 2000 resampled distances. For scripts that time
    /// their own rounds (scripts/bench-suite.sh)
    #[arg(long, num_args = 2, value_names = ["A", "CONTROL"], conflicts_with_all = ["a", "b", "control", "max_worse", "max_diff", "raw_dir"])]
    pub band_of: Option<Vec<String>>,
}

impl Args {
    /// What each size is held to, if anything.
    fn target(&self) -> Option<Target> {
        self.max_worse.map(Target::Worse).or(self.max_diff.map(Target::Diff))
    }
}

/// `5%` or `5`: a percentage from 0 to 1000.
fn parse_pct(v: &str) -> Result<f64, String> {
    let n = v.trim().trim_end_matches('%').trim();
    match n.parse::<f64>() {
        Ok(p) if p.is_finite() && (0.0..=1000.0).contains(&p) => Ok(p),
        _ => Err(format!("'{v}' is not a percentage from 0 to 1000 (e.g. 5%)")),
    }
}

/// One of the commands, in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    A,
    B,
    /// The control: A again.
    A2,
}

impl Side {
    fn tag(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
            Side::A2 => "a2",
        }
    }
}

/// The order of round `r` (from 1): A first in odd rounds, B first in even
/// ones; the control runs on the far side of B from A.
fn order(r: u32, control: bool) -> Vec<Side> {
    match (r % 2 == 1, control) {
        (true, false) => vec![Side::A, Side::B],
        (false, false) => vec![Side::B, Side::A],
        (true, true) => vec![Side::A, Side::B, Side::A2],
        (false, true) => vec![Side::A2, Side::B, Side::A],
    }
}

/// Runs `commbench ab` with the arguments after its name.
pub fn main(args: &[String]) -> i32 {
    let a: Args = match crate::compare::args::parse("ab", args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let result = match &a.band_of {
        Some(lists) => band_of(lists),
        None => run(&a),
    };
    match result {
        Ok(code) => code,
        Err(line) => {
            // The line may quote a command's own message: printed escaped.
            crate::diag::say_printable(&format!("commbench ab: {line}"));
            2
        }
    }
}

/// The least values each list of `--band-of` takes: a median of fewer is
/// no estimate of anything.
const BAND_OF_MIN: usize = 3;

/// `--band-of A CONTROL`: prints the band and returns 0, or says why not.
fn band_of(lists: &[String]) -> Result<i32, String> {
    let parse = |list: &str| -> Result<Vec<f64>, String> {
        let vals = list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|v| !v.is_empty())
            .map(|v| match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                _ => Err(format!("--band-of: '{v}' is not a positive number")),
            })
            .collect::<Result<Vec<f64>, String>>()?;
        if vals.len() < BAND_OF_MIN {
            return Err(format!(
                "--band-of: {} value(s) in '{list}'; each list needs at least {BAND_OF_MIN}",
                vals.len()
            ));
        }
        Ok(vals)
    };
    let (a, a2) = (parse(&lists[0])?, parse(&lists[1])?);
    let band = judge::aa_band_pct(&a, &a2).ok_or("--band-of: no band from these values")?;
    println!("{band:.2}");
    Ok(0)
}

fn run(a: &Args) -> Result<i32, String> {
    let (cmd_a, cmd_b) = (a.a.as_deref().unwrap_or_default(), a.b.as_deref().unwrap_or_default());
    let mut _temp = None;
    let dir = match &a.raw_dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
            if let Some(taken) = run_files(a, d).find(|p| p.symlink_metadata().is_ok()) {
                return Err(already_exists(&taken));
            }
            d.clone()
        }
        None => {
            // A fresh directory of this process's own under the system's
            // temporary directory, removed with the runs' files at the end.
            let tmp = std::env::temp_dir();
            let t = crate::report::safe_file::PrivateDir::new_in(&tmp, "commbench-ab")
                .map_err(|e| format!("cannot make a directory in {}: {e}", tmp.display()))?;
            let d = t.path().to_path_buf();
            _temp = Some(t);
            d
        }
    };
    let mut collected = Collected::new();
    let mut printed = true;
    // Each run's wall time, A's, B's and the control's (seconds).
    let mut walls = (Vec::new(), Vec::new(), Vec::new());
    for r in 1..=a.rounds {
        eprintln!("commbench ab: round {r}/{}", a.rounds);
        for side in order(r, a.control) {
            let cmd = if side == Side::B { cmd_b } else { cmd_a };
            let base = dir.join(format!("{}-{r}", side.tag()));
            let csv = cmd.contains("{csv}").then(|| base.with_extension("csv"));
            let wall = run_one(cmd, &base, csv.as_deref(), Duration::from_secs(a.timeout))?;
            match side {
                Side::A => walls.0.push(wall),
                Side::B => walls.1.push(wall),
                Side::A2 => walls.2.push(wall),
            }
            let read = csv.clone().unwrap_or_else(|| base.with_extension("txt"));
            printed &= csv.is_none();
            collect(&read, side, &mut collected)?;
        }
    }
    let (code, result) = report(a, &collected, printed);
    println!("{}", wall_line(&walls.0, &walls.1, &walls.2));
    println!("{}", walls_line(&walls.0, &walls.1, &walls.2));
    println!("\n{}", printable(&result));
    Ok(code)
}

/// The wall-time line: each side's median over the rounds and their
/// ratio, and with the control its median and the A/A band of the ratio
/// (what the ratio moves by noise alone, judged as a size's band is:
/// [`judge::aa_band_pct`]): `wall time per run (median): A 1.20 s, B 0.60
/// s, A/B 2.000; A/A 1.26 s, band ±5.0%`.
fn wall_line(a: &[f64], b: &[f64], a2: &[f64]) -> String {
    let (wa, wb) = (judge::median(a), judge::median(b));
    let mut line = format!("wall time per run (median): A {wa:.2} s, B {wb:.2} s, A/B {:.3}", wa / wb);
    if let Some(band) = judge::aa_band_pct(a, a2) {
        line += &format!("; A/A {:.2} s, band ±{band:.1}%", judge::median(a2));
    }
    line
}

/// Every run's wall time in round order, for scripts that add several
/// comparisons' rounds together: `wall time per round (s): A 1.100 1.200;
/// B 0.600 0.500; A/A 1.260 1.200`.
fn walls_line(a: &[f64], b: &[f64], a2: &[f64]) -> String {
    let list = |xs: &[f64]| xs.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(" ");
    let mut line = format!("wall time per round (s): A {}; B {}", list(a), list(b));
    if !a2.is_empty() {
        line += &format!("; A/A {}", list(a2));
    }
    line
}

/// The extensions of the files one run may leave under its name: its
/// stdout and stderr, its CSV and the run record commbench writes beside a
/// CSV (compare's reader also reads a record beside a `.txt`).
const RUN_FILES: [&str; 4] = ["txt", "err", "csv", "json"];

/// Every file name the runs of `a` may take in `dir`, in the order they run.
fn run_files<'a>(a: &'a Args, dir: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    (1..=a.rounds).flat_map(move |r| {
        order(r, a.control).into_iter().flat_map(move |side| {
            let base = dir.join(format!("{}-{r}", side.tag()));
            RUN_FILES.into_iter().map(move |ext| base.with_extension(ext))
        })
    })
}

/// The line that refuses a name already taken in `--raw-dir`.
fn already_exists(p: &Path) -> String {
    format!(
        "{}: already exists: ab writes its runs' files only under names that are free, never over a file or \
         through a link (use an empty or new --raw-dir)",
        crate::diag::printable(&p.display().to_string())
    )
}

/// Runs `cmd` with `sh -c` (`{csv}` replaced by `csv`), its stdout and
/// stderr into `base`.txt and .err, within `limit`; its wall time in
/// seconds, or why it failed.
fn run_one(cmd: &str, base: &Path, csv: Option<&Path>, limit: Duration) -> Result<f64, String> {
    let text = match csv {
        Some(p) => cmd.replace("{csv}", &p.display().to_string()),
        None => cmd.to_string(),
    };
    // New files only: a name taken since the check at the start (a link
    // planted there, another run) is refused, never written through.
    let file = |ext: &str| {
        let p = base.with_extension(ext);
        crate::report::safe_file::create_new(&p).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => already_exists(&p),
            _ => format!("cannot write {}: {e}", p.display()),
        })
    };
    let mut c = Command::new("sh");
    c.args(["-c", &text]).stdin(Stdio::null()).stdout(file("txt")?).stderr(file("err")?).process_group(0);
    let mut child = c.spawn().map_err(|e| format!("cannot start sh: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| format!("waiting for '{text}': {e}"))? {
            break st;
        }
        if start.elapsed() > limit {
            // SAFETY: signals the process group this function created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!("'{text}' ran past {} s (--timeout)", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !status.success() {
        let err = std::fs::read_to_string(base.with_extension("err")).unwrap_or_default();
        // The program's own line comes first; launchers add banners after it.
        let first = err.lines().find(|l| !l.trim().is_empty() && !l.starts_with("---")).unwrap_or("no message");
        return Err(format!("'{text}' failed ({status}): {first}"));
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Adds every value of one run's output to `into`.
fn collect(path: &Path, side: Side, into: &mut Collected) -> Result<(), String> {
    let parsed = crate::compare::input::load_file(path).map_err(|e| e.to_string())?;
    if let Some(cut) = parsed.cut.first() {
        return Err(format!("{cut}: a cut-short output is not compared"));
    }
    for t in &parsed.tables {
        for m in t.metrics() {
            let key = SeriesKey { benchmark: t.benchmark.clone(), datatype: t.datatype_key().to_string(), metric: m };
            let series = into.entry(key).or_default();
            for p in &t.points {
                if let Some(v) = p.value(m) {
                    let s: &mut Samples = series.entry(p.size).or_default();
                    match side {
                        Side::A => s.a.push(v),
                        Side::B => s.b.push(v),
                        Side::A2 => s.a2.push(v),
                    }
                }
            }
        }
    }
    Ok(())
}

/// A full-precision value with four significant digits (at least none
/// after the point): 0.4092, 12.35, 190.1, 13025418.
fn significant(v: f64) -> String {
    let digits = if v.is_finite() && v != 0.0 { v.abs().log10().floor() as i32 } else { 0 };
    format!("{v:.*}", (3 - digits).clamp(0, 12) as usize)
}

/// Prints the report; returns the exit status and the last line.
fn report(a: &Args, collected: &Collected, printed: bool) -> (i32, String) {
    let rounds = a.rounds as usize;
    let (mut missed, mut incomplete, mut means) = (Vec::new(), Vec::new(), Vec::new());
    for (key, sizes) in collected {
        let m = key.metric;
        let better = if m.higher_is_better() { "higher" } else { "lower" };
        // Names read from the commands' output, printed escaped.
        let title = format!(
            "{} {} {} ({}, {better} is better): {} (A) against {} (B), medians of {rounds} alternating rounds",
            key.benchmark,
            key.datatype,
            m.name(),
            m.unit(),
            a.label_a,
            a.label_b
        );
        println!("\n{}", printable(&title));
        println!(
            "{:>10} {:>14} {:>14} {:>8}    {:>7} {:>7} {:>9}",
            "size", "A", "B", "A/B", "IQR A", "IQR B", "A/A band"
        );
        let distances: Vec<f64> = sizes.values().filter_map(|s| judge::aa_distance_pct(&s.a, &s.a2)).collect();
        let band_floor = if distances.is_empty() { 0.0 } else { judge::median(&distances) };
        let mut lines: Vec<SizeLine> = Vec::new();
        for (size, s) in sizes {
            let complete = s.a.len() == rounds && s.b.len() == rounds && (!a.control || s.a2.len() == rounds);
            if !complete {
                incomplete.push(format!("{} {} size {size}", key.benchmark, m.name()));
                continue;
            }
            let l = judge::judge(*size, s, m, a.target(), printed, band_floor);
            let band = l.aa_band_pct.map_or_else(|| "-".to_string(), |b| format!("{b:.1}%"));
            let (va, vb) = if printed {
                (format!("{:.2}", l.a), format!("{:.2}", l.b))
            } else {
                (significant(l.a), significant(l.b))
            };
            println!(
                "{:>10} {va:>14} {vb:>14} {:>8.3} {:<2} {:>6.0}% {:>6.0}% {band:>9}",
                l.size,
                l.ratio,
                l.mark.symbol(),
                l.iqr_a_pct,
                l.iqr_b_pct
            );
            if l.mark == Mark::Missed {
                missed.push(format!("{}@{}", key.benchmark, l.size));
            }
            lines.push(l);
        }
        let ratios: Vec<f64> = lines.iter().map(|l| l.ratio).collect();
        if let Some(g) = judge::geometric_mean(&ratios) {
            println!("geometric mean of A/B over {} size(s): {g:.3}", ratios.len());
            means.push(format!("{} {} {g:.3}", key.benchmark, m.name()));
        }
    }
    if let Some(t) = a.target() {
        let what = match t {
            Target::Worse(p) => format!("A at most {p}% worse than B"),
            Target::Diff(p) => format!("A within {p}% of B either way"),
        };
        println!(
            "\nverdict: {what} at each size; * beyond it and beyond the A/A band; ~ beyond it, within the band \
             (noise); = within one printed step (0.01)"
        );
    }
    if !means.is_empty() {
        println!("geometric means of A/B: {}", printable(&means.join(", ")));
    }
    for i in &incomplete {
        println!("error: {}: not measured in every round by every run", printable(i));
    }
    if collected.is_empty() || !incomplete.is_empty() {
        return (2, "RESULT: INCOMPLETE".into());
    }
    match (a.target(), missed.is_empty()) {
        (None, _) => (0, "RESULT: COMPARED".into()),
        (Some(_), true) => (0, "RESULT: ALL TARGETS MET".into()),
        (Some(_), false) => (1, format!("RESULT: TARGETS MISSED at {} size(s): {}", missed.len(), missed.join(" "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_and_the_control_sits_across_b() {
        assert_eq!(order(1, false), [Side::A, Side::B]);
        assert_eq!(order(2, false), [Side::B, Side::A]);
        assert_eq!(order(1, true), [Side::A, Side::B, Side::A2]);
        assert_eq!(order(2, true), [Side::A2, Side::B, Side::A]);
    }

    #[test]
    fn the_wall_line_gives_the_control_band() {
        // Medians 1.2, 0.6 and 1.26: the control lies 5% from A, and medians
        // of three drawn from these six values lie further apart than that.
        let (a, b, a2) = ([1.1, 1.2, 1.3], [0.6, 0.5, 0.7], [1.26, 1.2, 1.4]);
        let band = judge::aa_band_pct(&a, &a2).unwrap();
        assert!(band > 5.0, "{band}");
        assert_eq!(
            wall_line(&a, &b, &a2),
            format!("wall time per run (median): A 1.20 s, B 0.60 s, A/B 2.000; A/A 1.26 s, band ±{band:.1}%")
        );
        assert_eq!(wall_line(&a, &b, &[]), "wall time per run (median): A 1.20 s, B 0.60 s, A/B 2.000");
        assert_eq!(
            walls_line(&a, &b, &a2),
            "wall time per round (s): A 1.100 1.200 1.300; B 0.600 0.500 0.700; A/A 1.260 1.200 1.400"
        );
        assert_eq!(walls_line(&a, &b, &[]), "wall time per round (s): A 1.100 1.200 1.300; B 0.600 0.500 0.700");
    }

    #[test]
    fn four_significant_digits() {
        assert_eq!(significant(0.409165), "0.4092");
        assert_eq!(significant(12.3456), "12.35");
        assert_eq!(significant(190.114), "190.1");
        assert_eq!(significant(13025417.88), "13025418");
        assert_eq!(significant(0.0), "0.000");
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_pct("5%"), Ok(5.0));
        assert_eq!(parse_pct(" 2.5 "), Ok(2.5));
        assert!(parse_pct("-1%").is_err() && parse_pct("lots").is_err() && parse_pct("NaN").is_err());
    }
}
