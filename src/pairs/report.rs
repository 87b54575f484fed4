//! The text people read on stdout: a header in OSU's `#` comment style, one
//! row per pair (both directions, latency, verdict), the bandwidth spread,
//! one line per path with its peak and the share of it reached, a per-host
//! summary, the failing pairs worst first, and a last line that starts
//! with PASS or FAIL.

use std::fmt::Write;

use super::blame::{Blame, EndpointSummary};
use super::criteria::Criteria;
use super::criteria::{Check, Evaluation, Failure, Measured};
use super::options::Config;
use super::paths::{self, PairPeaks, PathGroup};
use super::results::{Directed, LatencySample, PairRow};
use crate::peak::verdict;
use crate::topo::cpuset::format_list;

/// The last line's first words when no criterion was given: nothing was
/// judged, so it says neither PASS nor FAIL (the exit status is still 0).
pub(crate) const NO_CRITERIA: &str = "measured, no criteria";

/// MB/s as printed (OSU's unit: 10^6 bytes per second).
pub fn mbps(bytes_per_s: f64) -> f64 {
    bytes_per_s / 1e6
}

/// Everything the report shows.
pub struct ReportInput<'a> {
    pub config: &'a Config,
    pub np: usize,
    pub rounds: usize,
    pub transport: &'a str,
    pub hosts: &'a [String],
    pub rows: &'a [PairRow],
    pub eval: &'a Evaluation,
    pub blame: &'a Blame,
    /// Each direction's path.
    pub peaks: &'a PairPeaks,
    /// The measured directions by path (paths::group).
    pub paths: &'a [PathGroup],
}

/// The lines before any measurement; `idle` are ranks no round uses.
pub fn header(cfg: &Config, np: usize, rounds: usize, transport: &str, idle: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# commbench pairs {}: bidirectional bandwidth per pair, every pair of a round at once",
        crate::VERSION
    );
    let _ = writeln!(s, "# Scheme: {} ({np} processes, {rounds} round(s)), transport {transport}", cfg.scheme);
    if !idle.is_empty() {
        let _ = writeln!(s, "# Not measured: rank(s) {} (no partner in this scheme)", format_list(idle));
    }
    if let Some(seed) = cfg.seed {
        let _ = writeln!(s, "# Random seed: {seed}");
    }
    let _ = writeln!(
        s,
        "# Message size: {} bytes ({}), window {}, {} iterations after {} warm-up; MB/s = 10^6 bytes/s",
        cfg.size_bytes,
        crate::bytes::exact_label(cfg.size_bytes as u64),
        cfg.window,
        cfg.iterations,
        cfg.warmup
    );
    if let Some(l) = cfg.latency {
        let _ = writeln!(
            s,
            "# Latency: {} byte ping-pong, {} round trips after {} warm-up, half the round trip",
            l.size_bytes, l.iterations, l.warmup
        );
    }
    let _ = writeln!(s, "# Criteria: {}", cfg.criteria.describe(None));
    s
}

/// One line per finished round, printed as the round ends so a long run's
/// log (a `slurm-%j.out`) shows progress: `#`-commented like the header so
/// nothing that reads the pair table mistakes it for a row, and worded so
/// it does not start like the table's `# Round` header. `directed` and
/// `latency` are that round's; `below_min_bw` counts directions under
/// `--min-bw` (the share-of-median floor is only known at the end).
pub(crate) fn round_line(
    index: usize,
    rounds: usize,
    secs: f64,
    directed: &[Directed],
    latency: &[LatencySample],
    criteria: &Criteria,
) -> String {
    let mut s = format!("# Measured round {index}/{rounds} in {secs:.2} s: ");
    let mut bws: Vec<&Directed> = directed.iter().collect();
    bws.sort_by(|x, y| x.bytes_per_s.total_cmp(&y.bytes_per_s));
    match (bws.first(), bws.last()) {
        (Some(lo), Some(hi)) => {
            let values: Vec<f64> = bws.iter().map(|d| d.bytes_per_s).collect();
            let med = super::criteria::median(&values).unwrap_or(0.0);
            let _ = write!(
                s,
                "{} direction{}, min {:.2} MB/s ({} -> {}), median {:.2} MB/s, max {:.2} MB/s ({} -> {})",
                bws.len(),
                if bws.len() == 1 { "" } else { "s" },
                mbps(lo.bytes_per_s),
                lo.src,
                lo.dst,
                mbps(med),
                mbps(hi.bytes_per_s),
                hi.src,
                hi.dst
            );
        }
        _ => s.push_str("no direction measured"),
    }
    if let Some(worst) = latency.iter().max_by(|x, y| x.secs.total_cmp(&y.secs)) {
        let _ = write!(s, "; latency max {:.2} us ({} <-> {})", worst.secs * 1e6, worst.a, worst.b);
    }
    if let Some(floor) = criteria.min_bw {
        let below = directed.iter().filter(|d| d.bytes_per_s < floor).count();
        let _ = write!(s, "; {below} below min-bw");
    }
    if let Some(ceiling) = criteria.max_lat {
        let above = latency.iter().filter(|l| l.secs > ceiling).count();
        let _ = write!(s, "; {above} above max-lat");
    }
    s.push('\n');
    s
}

/// The verdict word of a pair row: without criteria a measured pair is
/// "measured", not passed (a direction not measured still fails).
fn row_verdict(r: &ReportInput, k: usize) -> &'static str {
    if !r.eval.failures[k].is_empty() {
        "FAIL"
    } else if r.config.criteria.any() {
        "PASS"
    } else {
        "measured"
    }
}

fn host_width(hosts: &[String]) -> usize {
    hosts.iter().map(String::len).max().unwrap_or(0).max(6)
}

fn opt(v: Option<f64>, scale: f64) -> String {
    v.map(|x| format!("{:.2}", x * scale)).unwrap_or_else(|| "-".into())
}

/// The pair table.
pub fn table(r: &ReportInput) -> String {
    let hw = host_width(r.hosts);
    let host = |x: usize| r.hosts.get(x).map(String::as_str).unwrap_or("?");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<7}{:>7}{:>7}  {:<hw$}  {:<hw$}{:>16}{:>16}{:>14}  Verdict",
        "# Round", "i", "j", "Host i", "Host j", "i->j (MB/s)", "j->i (MB/s)", "Latency (us)"
    );
    for (k, row) in r.rows.iter().enumerate() {
        let verdict = row_verdict(r, k);
        let _ = writeln!(
            s,
            "{:>7}{:>7}{:>7}  {:<hw$}  {:<hw$}{:>16}{:>16}{:>14}  {verdict}",
            row.round,
            row.a,
            row.b,
            host(row.a),
            host(row.b),
            opt(row.ab, 1e-6),
            opt(row.ba, 1e-6),
            opt(row.latency, 1e6),
        );
    }
    s
}

/// One broken limit of `row`: `0 -> 1 9.10 MB/s < min-bw 10.00 MB/s`,
/// `0 -> 1 shared memory on vm: 20% of 45.50 GB/s copy (9.10 of 45.50
/// GB/s expected) < min-efficiency 80%`.
fn describe_failure(r: &ReportInput, row: &PairRow, f: &Failure) -> String {
    let (what, ends) = match f.measured {
        Measured::Forward => (format!("{} -> {}", row.a, row.b), (row.a, row.b)),
        Measured::Backward => (format!("{} -> {}", row.b, row.a), (row.b, row.a)),
        Measured::Latency => ("latency".into(), (row.a, row.b)),
    };
    match f.check {
        Check::MinEfficiency => {
            let path = r.peaks.path(ends.0, ends.1);
            let pct = path.efficiency(mbps(f.value)).unwrap_or(0.0);
            let min = r.config.criteria.min_efficiency.unwrap_or(0.0) * 100.0;
            format!(
                "{what} {} < min-efficiency {}%",
                verdict::share(&path, mbps(f.value), pct),
                super::criteria::trim(min)
            )
        }
        Check::UnknownPeak => {
            format!("{what} cannot judge min-efficiency: {}", verdict::unknown(&r.peaks.path(ends.0, ends.1)))
        }
        Check::Missing => format!("{what} not measured"),
        Check::MinBw => format!("{what} {:.2} MB/s < min-bw {:.2} MB/s", mbps(f.value), mbps(f.limit)),
        Check::FractionOfMedian => {
            format!("{what} {:.2} MB/s < {:.2} MB/s (share of the median)", mbps(f.value), mbps(f.limit))
        }
        Check::MaxLat => format!("{what} {:.2} us > max-lat {:.2} us", f.value * 1e6, f.limit * 1e6),
    }
}

fn host_line(h: &EndpointSummary, hw: usize) -> String {
    let verdict = if h.bad {
        "BAD HOST (every pair slow)"
    } else if h.failing_directions > 0 && h.failing_directions == h.directions {
        "every direction fails"
    } else if h.failing_directions > 0 {
        "some directions fail"
    } else {
        "ok"
    };
    format!(
        "# {:<hw$}  {:<12}{:>10}{:>9}{:>19}{:>18}  {verdict}",
        h.name,
        format_list(&h.ranks),
        h.directions,
        h.failing_directions,
        opt(h.median_out, 1e-6),
        opt(h.median_in, 1e-6),
    )
}

/// Spread, hosts, failing pairs and the final verdict line.
pub fn summary(r: &ReportInput) -> String {
    let mut s = String::new();
    let dirs: Vec<(usize, usize, f64)> = r
        .rows
        .iter()
        .flat_map(|row| [(row.a, row.b, row.ab), (row.b, row.a, row.ba)])
        .filter_map(|(i, j, v)| v.map(|v| (i, j, v)))
        .collect();
    let min = dirs.iter().min_by(|x, y| x.2.total_cmp(&y.2));
    let max = dirs.iter().max_by(|x, y| x.2.total_cmp(&y.2));
    if let (Some(med), Some(lo), Some(hi)) = (r.eval.median_bw, min, max) {
        let _ = writeln!(
            s,
            "# Bandwidth over {} directions: median {:.2} MB/s, min {:.2} MB/s ({} -> {}), max {:.2} MB/s ({} -> {})",
            dirs.len(),
            mbps(med),
            mbps(lo.2),
            lo.0,
            lo.1,
            mbps(hi.2),
            hi.0,
            hi.1
        );
    }
    for line in paths::lines(r.paths) {
        let _ = writeln!(s, "{line}");
    }
    let lats: Vec<&PairRow> = r.rows.iter().filter(|row| row.latency.is_some()).collect();
    if let Some(worst) = lats.iter().max_by(|x, y| x.latency.unwrap_or(0.0).total_cmp(&y.latency.unwrap_or(0.0))) {
        let values: Vec<f64> = lats.iter().filter_map(|row| row.latency).collect();
        let _ = writeln!(
            s,
            "# Latency over {} pairs: median {:.2} us, max {:.2} us ({} <-> {})",
            values.len(),
            super::criteria::median(&values).unwrap_or(0.0) * 1e6,
            worst.latency.unwrap_or(0.0) * 1e6,
            worst.a,
            worst.b
        );
    }
    let hw = host_width(&r.blame.hosts.iter().map(|h| h.name.clone()).collect::<Vec<_>>());
    let _ = writeln!(
        s,
        "# {:<hw$}  {:<12}{:>10}{:>9}{:>19}{:>18}  Verdict",
        "Host", "Ranks", "Directions", "Failing", "Median out (MB/s)", "Median in (MB/s)"
    );
    for h in &r.blame.hosts {
        let _ = writeln!(s, "{}", host_line(h, hw));
    }
    let bad_ranks: Vec<usize> = r.blame.ranks.iter().filter(|x| x.bad).flat_map(|x| x.ranks.clone()).collect();
    if !bad_ranks.is_empty() {
        let _ = writeln!(s, "# Ranks whose every pair fails: {}", format_list(&bad_ranks));
    }
    let criteria = r.config.criteria.describe(r.eval.median_bw);
    let total = r.rows.len();
    if r.eval.passed() {
        if r.config.criteria.any() {
            let _ = writeln!(s, "PASS: all {total} pairs meet the criteria ({criteria})");
        } else {
            let _ = writeln!(s, "{NO_CRITERIA}: {total} pairs measured; give --min-bw, --max-lat, --min-fraction-of-median or --min-efficiency to judge them");
        }
        return s;
    }
    let _ = writeln!(s, "# Failing pairs, worst first:");
    let host = |x: usize| r.hosts.get(x).map(String::as_str).unwrap_or("?");
    for &k in &r.eval.failing {
        let row = &r.rows[k];
        let what: Vec<String> = r.eval.failures[k].iter().map(|f| describe_failure(r, row, f)).collect();
        let cause = r.blame.causes.get(k).cloned().flatten().map(|c| c.describe()).unwrap_or_default();
        let _ = writeln!(
            s,
            "FAIL {} <-> {} ({} <-> {}, round {}): {} [{cause}]",
            row.a,
            row.b,
            host(row.a),
            host(row.b),
            row.round,
            what.join("; ")
        );
    }
    let _ = writeln!(s, "FAIL: {} of {total} pairs fail the criteria ({criteria})", r.eval.failing.len());
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::blame::blame;
    use crate::pairs::criteria::{evaluate, Criteria};
    use crate::pairs::options::{parse, Parsed};
    use crate::peak::copy_rate::CopyRate;
    use crate::peak::RankEnd;

    fn config(args: &[&str]) -> Config {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v) {
            Ok(Parsed::Run(c)) => *c,
            other => panic!("{other:?}"),
        }
    }

    fn rows() -> Vec<PairRow> {
        vec![
            PairRow { round: 0, a: 0, b: 1, ab: Some(5e9), ba: Some(4e9), latency: Some(1e-6) },
            PairRow { round: 0, a: 2, b: 3, ab: Some(5e9), ba: Some(0.5e9), latency: Some(3e-6) },
        ]
    }

    /// Two ranks on nodeA copying at 25 GB/s, two on nodeB at 10 GB/s.
    fn ends() -> Vec<RankEnd> {
        let end = |host: &str, mbps: f64| RankEnd {
            host: host.into(),
            package: Some(0),
            copy: Some(CopyRate { mbps, bytes: 1 << 20, copies: 5, method: "memcpy of 1 MiB".into() }),
            ..RankEnd::default()
        };
        vec![end("nodeA", 25_000.0), end("nodeA", 25_000.0), end("nodeB", 10_000.0), end("nodeB", 10_000.0)]
    }

    fn render(args: &[&str]) -> String {
        render_with(args, ends())
    }

    fn render_with(args: &[&str], ends: Vec<RankEnd>) -> String {
        let cfg = config(args);
        let rows = rows();
        let hosts: Vec<String> = vec!["nodeA".into(), "nodeA".into(), "nodeB".into(), "nodeB".into()];
        let peaks = PairPeaks::new(ends);
        let eval = evaluate(&rows, &cfg.criteria, true, &|s, d| peaks.peak_bps(s, d));
        let b = blame(&rows, &eval, &hosts);
        let dirs = rows.iter().flat_map(|r| [(r.a, r.b, r.ab.unwrap()), (r.b, r.a, r.ba.unwrap())]);
        let groups = paths::group(&peaks, dirs);
        let input = ReportInput {
            config: &cfg,
            np: 4,
            rounds: 1,
            transport: "mpi-host",
            hosts: &hosts,
            rows: &rows,
            eval: &eval,
            blame: &b,
            peaks: &peaks,
            paths: &groups,
        };
        format!("{}{}{}", header(&cfg, 4, 1, "mpi-host", &[]), table(&input), summary(&input))
    }

    #[test]
    fn passing_report() {
        let text = render(&["--scheme", "half", "--min-bw", "100MB/s", "--latency"]);
        assert!(text.contains("# Scheme: half (4 processes, 1 round(s)), transport mpi-host"), "{text}");
        assert!(text.contains("# Criteria: min-bw 100 MB/s per direction"), "{text}");
        let row = text.lines().find(|l| l.trim_start().starts_with("0      2      3")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["0", "2", "3", "nodeB", "nodeB", "5000.00", "500.00", "3.00", "PASS"]
        );
        assert!(
            text.contains("# Bandwidth over 4 directions: median 4500.00 MB/s, min 500.00 MB/s (3 -> 2)"),
            "{text}"
        );
        assert!(text.contains("# Latency over 2 pairs: median 2.00 us, max 3.00 us (2 <-> 3)"), "{text}");
        assert_eq!(text.lines().last().unwrap(), "PASS: all 2 pairs meet the criteria (min-bw 100 MB/s per direction)");
    }

    #[test]
    fn failing_report_lists_worst_first() {
        let text = render(&["--min-bw", "4.5GB/s"]);
        let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
        assert_eq!(fails.len(), 2, "{text}");
        assert!(
            fails[0].starts_with("FAIL 2 <-> 3 (nodeB <-> nodeB, round 0): 3 -> 2 500.00 MB/s < min-bw 4500.00 MB/s"),
            "{text}"
        );
        assert!(fails[1].starts_with("FAIL 0 <-> 1"), "{text}");
        assert_eq!(
            text.lines().last().unwrap(),
            "FAIL: 2 of 2 pairs fail the criteria (min-bw 4.5 GB/s per direction)"
        );
        assert!(text.contains("# nodeA "), "{text}");
    }

    #[test]
    fn round_lines() {
        let d = |src, dst, bw| Directed { round: 2, src, dst, bytes_per_s: bw };
        let dirs = [d(0, 1, 5e9), d(1, 0, 4e9), d(2, 3, 0.5e9), d(3, 2, 6e9)];
        let lat = [LatencySample { round: 2, a: 0, b: 1, secs: 2e-6 }];
        let crit = config(&["--min-bw", "1GB/s", "--max-lat", "1us"]).criteria;
        let line = round_line(2, 7, 0.5, &dirs, &lat, &crit);
        assert_eq!(
            line,
            "# Measured round 2/7 in 0.50 s: 4 directions, min 500.00 MB/s (2 -> 3), median 4500.00 MB/s, \
             max 6000.00 MB/s (3 -> 2); latency max 2.00 us (0 <-> 1); 1 below min-bw; 1 above max-lat\n"
        );
        assert_eq!(line.lines().count(), 1);
        let none = round_line(1, 1, 0.0, &[], &[], &Criteria::default());
        assert_eq!(none, "# Measured round 1/1 in 0.00 s: no direction measured\n");
    }

    #[test]
    fn idle_ranks_are_named() {
        let h = header(&config(&["--scheme", "half"]), 5, 1, "mpi-host", &[4]);
        assert!(h.contains("# Not measured: rank(s) 4 (no partner in this scheme)\n"), "{h}");
    }

    #[test]
    fn no_criteria_is_report_only() {
        let text = render(&[]);
        assert_eq!(
            text.lines().last().unwrap(),
            "measured, no criteria: 2 pairs measured; give --min-bw, --max-lat, --min-fraction-of-median or \
             --min-efficiency to judge them"
        );
        assert!(!text.contains("PASS"), "{text}");
        let row = text.lines().find(|l| l.trim_start().starts_with("0      0      1")).unwrap();
        assert!(row.ends_with("  measured"), "{row}");
        assert!(Criteria::default().describe(None).contains("report only"));
    }

    #[test]
    fn each_path_is_summed_up() {
        let text = render(&[]);
        let paths: Vec<&str> = text.lines().filter(|l| l.starts_with("# Path ")).collect();
        assert_eq!(
            paths,
            [
                "# Path shared memory on nodeA (same socket): peak 25.00 GB/s copy; 2 directions, median 18% of it \
                 (min 16%)",
                "# Path shared memory on nodeB (same socket): peak 10.00 GB/s copy; 2 directions, median 28% of it \
                 (min 5.0%)",
            ]
        );
        // Right after the bandwidth spread.
        let spread = text.lines().position(|l| l.starts_with("# Bandwidth over ")).unwrap();
        assert!(text.lines().nth(spread + 1).unwrap().starts_with("# Path shared memory on nodeA "), "{text}");
    }

    #[test]
    fn below_min_efficiency_names_the_path() {
        let text = render(&["--min-efficiency", "30%"]);
        assert!(text.contains("# Criteria: min 30% of each path's peak\n"), "{text}");
        let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
        assert_eq!(
            fails,
            [
                "FAIL 2 <-> 3 (nodeB <-> nodeB, round 0): 3 -> 2 shared memory on nodeB: 5.0% of 10.00 GB/s copy (0.50 \
                 of 10.00 GB/s expected) < min-efficiency 30% [link]",
                "FAIL 0 <-> 1 (nodeA <-> nodeA, round 0): 0 -> 1 shared memory on nodeA: 20% of 25.00 GB/s copy (5.00 \
                 of 25.00 GB/s expected) < min-efficiency 30%; 1 -> 0 shared memory on nodeA: 16% of 25.00 GB/s copy \
                 (4.00 of 25.00 GB/s expected) < min-efficiency 30% [link]",
            ],
            "{text}"
        );
        assert_eq!(text.lines().last().unwrap(), "FAIL: 2 of 2 pairs fail the criteria (min 30% of each path's peak)");
        let pass = render(&["--min-efficiency", "4"]);
        assert_eq!(pass.lines().last().unwrap(), "PASS: all 2 pairs meet the criteria (min 4% of each path's peak)");
    }

    #[test]
    fn an_unknown_peak_is_not_passed() {
        let mut ends = ends();
        ends[3].copy = None;
        ends[3].copy_unknown = Some("could not copy 1048576 bytes".into());
        let text = render_with(&["--min-efficiency", "4"], ends);
        let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
        assert_eq!(
            fails,
            ["FAIL 2 <-> 3 (nodeB <-> nodeB, round 0): 2 -> 3 cannot judge min-efficiency: the peak of shared \
                 memory on nodeB is unknown (could not copy 1048576 bytes); 3 -> 2 cannot judge min-efficiency: the \
                 peak of shared memory on nodeB is unknown (could not copy 1048576 bytes) [link]"],
            "{text}"
        );
        assert!(
            text.contains("# Path shared memory on nodeB (same socket): peak unknown (could not copy 1048576 bytes); 2 directions\n"),
            "{text}"
        );
    }
}
