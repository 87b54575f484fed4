//! OSU's own binaries in a suite, for A/B runs against commbench from the
//! same job: their stdout (kept as `<bench>.txt`) read with the OSU text
//! reader of `commbench compare` and written as `<bench>.csv` in
//! commbench's CSV schema, so that one `commbench compare` judges the two
//! run directories alike. What the text does not say (iterations when
//! there is no Iterations column, warm-up, window, pairs) is what the same
//! options give in commbench's option grammar, which is OSU's.

use std::path::Path;

use crate::compare::model::{SizeRow, Table};
use crate::compare::osu_text;
use crate::datatype::Datatype;
use crate::report::csv::{CsvRow, COLUMNS};
use crate::spec::BenchSpec;

/// What the benchmark's own arguments say about the rows it printed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Known {
    pub np: usize,
    pub pairs: Option<usize>,
    /// Window of a windowed benchmark.
    pub window: Option<usize>,
    /// Options as commbench reads them (None: not in its grammar).
    opts: Option<crate::cli::Options>,
}

/// What `args` (the OSU options the binary got) and the rank count say.
pub fn known(spec: &'static BenchSpec, args: &[String], np: usize) -> Known {
    let opts = match crate::cli::parse(spec, args) {
        Ok(crate::cli::Parsed::Run(o)) => Some(*o),
        _ => None,
    };
    // As commbench's CSV: pairs for the point-to-point benchmarks only.
    let pairs = opts.as_ref().filter(|_| spec.is_point_to_point()).and_then(|o| spec.pairs_for(np, o.pairs).ok());
    let window = opts.as_ref().filter(|_| spec.windowed).map(|o| o.window);
    Known { np, pairs, window, opts }
}

/// The CSV row of one point of an OSU table.
fn row(spec: &BenchSpec, t: &Table, p: &SizeRow, k: &Known, finished_utc: &str) -> CsvRow {
    let datatype = t.datatype.as_deref().and_then(|d| Datatype::ALL.into_iter().find(|x| x.mpi_name() == d));
    let size = p.size as usize;
    let (iterations, warmup) = match &k.opts {
        Some(o) => crate::bench::counts(spec, o, size),
        None => (0, 0),
    };
    CsvRow {
        benchmark: t.benchmark.clone(),
        backend: "mpi".into(),
        datatype,
        size_bytes: size,
        elements: datatype.map(|d| size / d.size()),
        window: t.window.as_deref().and_then(|w| w.parse().ok()).or(k.window),
        np: k.np,
        pairs: t.pairs.map(|p| p as usize).or(k.pairs).filter(|_| spec.is_point_to_point()),
        iterations: p.iterations.map(|i| i as usize).unwrap_or(iterations),
        warmup,
        avg_lat_us: p.latency_us,
        min_lat_us: p.min_lat_us,
        max_lat_us: p.max_lat_us,
        bw_mbps: p.bw_mbps,
        msg_rate_per_s: p.msg_rate,
        algbw_gbps: None,
        busbw_gbps: None,
        fastest_rank: None,
        slowest_rank: None,
        validation: p.validation,
        iter_min_us: None,
        iter_mean_us: None,
        iter_p50_us: None,
        iter_p90_us: None,
        iter_p99_us: None,
        iter_max_us: None,
        iter_stddev_us: None,
        osu_tails: p.tails.iter().filter_map(|(label, v)| Some((label.strip_prefix('P')?.parse().ok()?, *v))).collect(),
        finished_utc: finished_utc.to_string(),
        placement: None,
        wrong_elements: None,
        // OSU's own binaries print no per-iteration times: no spread.
        ci95_rel_pct: None,
        ci95_low_us: None,
        ci95_high_us: None,
        median_ci95_low_us: None,
        median_ci95_high_us: None,
        p10_us: None,
        p90_us: None,
        iterations_run: None,
        noise: None,
        iterations_ceiling: None,
        stop_reason: None,
        drift_holds: None,
        // A non-blocking collective's overall time is its latency column.
        overall_us: p.latency_us.filter(|_| p.overlap_pct.is_some()),
        compute_us: p.compute_us,
        pure_comm_us: p.pure_comm_us,
        overlap_pct: p.overlap_pct,
        // OSU's binaries know no path; the suite's own runs do.
        path: None,
        peak_mbps: None,
        efficiency_pct: None,
        iter_p999_us: None,
        reduction: String::new(),
        root: None,
    }
}

/// The rows of `spec`'s tables in an OSU output.
pub fn rows(text: &str, spec: &BenchSpec, k: &Known, finished_utc: &str) -> Vec<CsvRow> {
    let parsed = osu_text::parse(text, spec.name, spec.name);
    parsed
        .tables
        .iter()
        .filter(|t| t.benchmark == spec.name)
        .flat_map(|t| t.points.iter().map(move |p| row(spec, t, p, k, finished_utc)))
        .collect()
}

/// Writes `<bench>.csv` from the OSU output in `txt`; the number of rows.
/// The header goes out even when the output holds no table (a failed run).
pub(crate) fn write_csv(
    txt: &Path,
    csv_path: &Path,
    spec: &BenchSpec,
    k: &Known,
    finished_utc: &str,
) -> Result<usize, String> {
    let text = std::fs::read(txt).map_err(|e| format!("{}: {e}", txt.display()))?;
    let rows = rows(&String::from_utf8_lossy(&text), spec, k, finished_utc);
    let fail = |e: std::io::Error| format!("{}: {e}", csv_path.display());
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.write_record(COLUMNS).map_err(|e| fail(std::io::Error::other(e)))?;
    for r in &rows {
        w.serialize(r).map_err(|e| fail(std::io::Error::other(e)))?;
    }
    let bytes = w.into_inner().map_err(|e| fail(e.into_error()))?;
    // A new file, never one planted at the name; a failed write leaves none.
    crate::report::safe_file::write_new(csv_path, &bytes).map_err(fail)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    /// An OSU-style bandwidth output becomes rows of our schema, with the
    /// counts its options give, and reads back with the suite's reader.
    #[test]
    fn bandwidth_text_to_csv() {
        let spec = &crate::bench::pt2pt::bw::SPEC;
        let text = "# OSU MPI Bandwidth Test v7.4\n# Datatype: MPI_CHAR.\n# Size      Bandwidth (MB/s)\n\
                    1                       1.50\n16384                 900.25\n";
        let k = known(spec, &v(&["-m", "1:16384", "-W", "32"]), 2);
        assert_eq!((k.pairs, k.window), (Some(1), Some(32)));
        let d = tempfile::tempdir().unwrap();
        let (txt, csv) = (d.path().join("osu_bw.txt"), d.path().join("osu_bw.csv"));
        std::fs::write(&txt, text).unwrap();
        assert_eq!(write_csv(&txt, &csv, spec, &k, "2026-11-30T10:00:00Z").unwrap(), 2);
        let back = crate::suite::summary::read_csv(&csv).unwrap();
        assert_eq!(back.len(), 2);
        let (a, b) = (&back[0], &back[1]);
        assert_eq!((a.benchmark.as_str(), a.backend.as_str(), a.datatype), ("osu_bw", "mpi", Some(Datatype::Char)));
        assert_eq!((a.size_bytes, a.window, a.np, a.bw_mbps), (1, Some(32), 2, Some(1.5)));
        let d = spec.defaults;
        assert_eq!((a.iterations, a.warmup), (d.small_iterations, d.small_warmup));
        assert_eq!((b.iterations, b.warmup, b.bw_mbps), (d.large_iterations, d.large_warmup, Some(900.25)));
        assert_eq!(a.avg_lat_us, None);
        let head = std::fs::read_to_string(&csv).unwrap();
        assert!(head.starts_with(&COLUMNS.join(",")), "{head}");
    }

    /// A collective with -f: min, max and the printed iterations; a table
    /// of another benchmark in the same text is not this one's.
    #[test]
    fn collective_full_columns() {
        let spec = &crate::bench::collective::allreduce::SPEC;
        let text = "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_INT.\n\
                    # Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n\
                    4                       2.50              2.00              3.00          100\n\
                    # OSU MPI Latency Test v7.4\n# Size          Latency (us)\n0                       0.30\n";
        let k = known(spec, &v(&["-f", "-i", "100"]), 4);
        let r = rows(text, spec, &k, "");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].avg_lat_us, r[0].min_lat_us, r[0].max_lat_us), (Some(2.5), Some(2.0), Some(3.0)));
        assert_eq!((r[0].iterations, r[0].np, r[0].elements, r[0].window, r[0].pairs), (100, 4, Some(1), None, None));
        // Options outside commbench's grammar: no counts, the rows still.
        let k = known(spec, &v(&["--not-ours"]), 4);
        assert_eq!(rows(text, spec, &k, "")[0].iterations, 100);
        assert!(rows("no table here\n", spec, &k, "").is_empty());
    }

    /// A non-blocking collective: its overall time, compute, pure
    /// communication and overlap go to the CSV's overlap columns.
    #[test]
    fn nonblocking_overlap_columns() {
        let spec = &crate::bench::nonblocking::iallreduce::SPEC;
        let text = "# OSU MPI Non-blocking Allreduce Latency Test v7.4\n\
                    # Overall = Coll. Init + Compute + MPI_Test + MPI_Wait\n\n# Datatype: MPI_CHAR.\n\
                    # Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)\n\
                    4                       5.00              3.00              2.50             80.00\n";
        let r = rows(text, spec, &known(spec, &[], 2), "");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].avg_lat_us, r[0].overall_us, r[0].compute_us), (Some(5.0), Some(5.0), Some(3.0)));
        assert_eq!((r[0].pure_comm_us, r[0].overlap_pct), (Some(2.5), Some(80.0)));
        // A blocking table has no overlap: none of the four.
        let text = "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)\n4 2.50\n";
        let r = rows(
            text,
            &crate::bench::collective::allreduce::SPEC,
            &known(&crate::bench::collective::allreduce::SPEC, &[], 2),
            "",
        );
        assert_eq!((r[0].overall_us, r[0].compute_us, r[0].overlap_pct), (None, None, None));
    }
}
