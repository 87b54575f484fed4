//! Reader of commbench's own results CSV: each row read back as the
//! `report::csv::CsvRow` that wrote it, and rows grouped into one table per
//! (benchmark, datatype) in file order. A row's spread (the
//! [`SPREAD_COLUMN`] column) is read where the file has it, for compare's
//! noise rule.

use std::collections::hash_map::{Entry, HashMap};
use std::collections::HashSet;

use super::model::{Memory, MemoryInfo, Note, Parsed, SizeRow, Table};
use crate::report::csv::CsvRow;

/// The column compare reads a row's spread from: the half-width of the 95%
/// confidence interval of the row's reported value (avg_lat_us, bw_MBps or
/// msg_rate_per_s, whichever the benchmark reports), in percent of that
/// value (`2.5` for ±2.5%). One column serves every metric: a rate is a
/// constant over a mean time, and to first order its interval is as wide,
/// relatively, as the time's. Empty or absent: no spread.
pub(crate) const SPREAD_COLUMN: &str = "ci95_rel_pct";

/// The widest spread taken from [`SPREAD_COLUMN`], in percent: no set of
/// positive samples has a wider 95% interval of its mean. The half-width
/// is t·s/√n, and positive samples have s ≤ √n times their mean, so it is
/// at most t times the mean, largest with two samples (t = 12.71). Real
/// runs reach 1000% with `-i 2` and over 100% with a few slow outliers;
/// a wider cell (1e300) was not computed from samples.
pub(crate) const MAX_SPREAD_PCT: f64 = 1271.0;

/// A row's p10 and p90 over its mean per-iteration time (all three in the
/// same unit, whatever its scale), where it has them and they make sense.
fn time_band(row: &CsvRow) -> Option<(f64, f64)> {
    let (p10, p90, mean) = (row.p10_us?, row.p90_us?, row.iter_mean_us?);
    let ok = [p10, p90, mean].iter().all(|v| v.is_finite() && *v > 0.0) && p10 <= p90;
    ok.then(|| (p10 / mean, p90 / mean))
}

/// A row's median iteration time and the larger side of its interval in
/// percent of it, where both make sense.
fn median_iteration(row: &CsvRow) -> (Option<f64>, Option<f64>) {
    let Some(p50) = row.iter_p50_us.filter(|v| v.is_finite() && *v > 0.0) else { return (None, None) };
    let ci = match (row.median_ci95_low_us, row.median_ci95_high_us) {
        (Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() && lo <= p50 && p50 <= hi => {
            Some((p50 - lo).max(hi - p50) / p50 * 100.0)
        }
        _ => None,
    };
    (Some(p50), ci.filter(|c| *c <= MAX_SPREAD_PCT))
}

/// Why a CSV could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum CsvInputError {
    #[error("not a commbench results CSV: no '{0}' column in the header")]
    MissingColumn(&'static str),
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// What is wrong with a row, naming its column where the reader knows it
/// (a row that ends early lacks the column after its last cell).
fn row_error(e: &csv::Error, rec: &csv::StringRecord, header: &csv::StringRecord) -> String {
    let csv::ErrorKind::Deserialize { err, .. } = e.kind() else { return e.to_string() };
    let column = match err.kind() {
        csv::DeserializeErrorKind::UnexpectedEndOfRow => header.get(rec.len()),
        _ => err.field().and_then(|f| header.get(f as usize)),
    };
    match column {
        Some(c) => format!("{c}: {}", err.kind()),
        None => err.kind().to_string(),
    }
}

/// Where a commbench backend's buffers were: `mpi` is MPI on host memory
/// (the only MPI transport that writes `mpi`); a backend naming a device
/// API (`mpi-cuda`, `nccl` ...) ran on device memory; anything else is not
/// known from the CSV alone.
pub(crate) fn backend_memory(backend: &str) -> Option<MemoryInfo> {
    let b = backend.trim().to_ascii_lowercase();
    if b.is_empty() {
        return None;
    }
    let from = format!("CSV backend '{backend}'");
    if b == "mpi" || b.ends_with("-host") {
        return Some(MemoryInfo { memory: Memory::Host, from, weak: false });
    }
    let device = ["cuda", "rocm", "hip", "ze", "nccl", "rccl", "hccl", "device", "gpu"];
    if b.split(['-', '_', '+']).any(|w| device.contains(&w)) {
        return Some(MemoryInfo { memory: Memory::Device, from, weak: false });
    }
    b.split(['-', '_', '+']).any(|w| w == "managed").then_some(MemoryInfo {
        memory: Memory::Managed,
        from,
        weak: false,
    })
}

/// Reads the CSV in `text`; rows that do not fit become notes.
pub fn parse(text: &str, path: &str, label: &str) -> Result<Parsed, CsvInputError> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = rdr.headers()?.clone();
    for required in ["benchmark", "size_bytes"] {
        if !header.iter().any(|h| h == required) {
            return Err(CsvInputError::MissingColumn(required));
        }
    }

    let mut out = Parsed::default();
    out.cut.extend(Note::unfinished_csv(path, text));
    let spread_column = header.iter().position(|h| h == SPREAD_COLUMN);
    let mut windows: Vec<HashSet<String>> = Vec::new();
    // Each (benchmark, datatype)'s table, found without a look through
    // every table so far.
    let mut table_of: HashMap<(String, Option<String>), usize> = HashMap::new();
    let mut in_place_noted = false;
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let note = |m: String| Note { path: path.into(), line: Some(line), message: m };
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                out.notes.push(note(format!("unreadable row: {e}")));
                continue;
            }
        };
        out.cut.extend(Note::short_row(path, line, rec.len(), header.len()));
        let row = match rec.deserialize::<CsvRow>(Some(&header)) {
            Ok(r) => r,
            Err(e) => {
                out.notes.push(note(format!("unreadable row: {}", row_error(&e, &rec, &header))));
                continue;
            }
        };
        if row.benchmark.is_empty() {
            out.notes.push(note("row with no benchmark".into()));
            continue;
        }
        if row.placement == Some(true) {
            // nccl-tests' second pass: the out-of-place rows are the series
            // (the one OSU's table shows); one note says the rest is left.
            if !in_place_noted {
                out.notes.push(note("in-place rows (--format nccl-tests' second pass) are not read".into()));
                in_place_noted = true;
            }
            continue;
        }
        let spread = spread_column.and_then(|i| rec.get(i)).filter(|c| !c.is_empty());
        let ci95_rel_pct = match spread.map(|c| (c, c.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0))) {
            None => None,
            Some((_, Some(v))) if v <= MAX_SPREAD_PCT => Some(v),
            Some((c, Some(_))) => {
                let why = format!(
                    "is wider than any samples give (above {MAX_SPREAD_PCT}%): the row is judged without its spread"
                );
                out.notes.push(note(format!("{SPREAD_COLUMN} '{c}' {why}")));
                None
            }
            Some((c, None)) => {
                let why = "is not a percentage of 0 or more: the row is judged without its spread";
                out.notes.push(note(format!("{SPREAD_COLUMN} '{c}' {why}")));
                None
            }
        };
        let (median_us, median_ci95_rel_pct) = median_iteration(&row);
        // Values as written, NaN and infinities included: compare fails
        // them, the plots draw only positive finite values.
        let point = SizeRow {
            size: row.size_bytes as u64,
            latency_us: row.avg_lat_us,
            bw_mbps: row.bw_mbps,
            msg_rate: row.msg_rate_per_s,
            min_lat_us: row.min_lat_us,
            max_lat_us: row.max_lat_us,
            // 0: the file does not say (an older CSV or a row cut short).
            iterations: Some(row.iterations as u64).filter(|&n| n > 0),
            validation: row.validation,
            tails: row.osu_tails.iter().map(|(p, v)| (format!("P{p}"), *v)).collect(),
            ci95_rel_pct,
            time_band: time_band(&row),
            compute_us: row.compute_us,
            pure_comm_us: row.pure_comm_us,
            overlap_pct: row.overlap_pct,
            efficiency_pct: row.efficiency_pct,
            median_us,
            median_ci95_rel_pct,
        };
        // A run that swept operations or roots (nccl-tests' `-o all`,
        // `-r -1`) has a table for each, named after the type.
        let mut datatype = row.datatype.map(|d| d.mpi_name().to_string());
        if !row.reduction.is_empty() || row.root.is_some() {
            let mut label = datatype.unwrap_or_default();
            if !row.reduction.is_empty() {
                label = format!("{label} {}", row.reduction).trim_start().to_string();
            }
            if let Some(root) = row.root {
                label = format!("{label} root {root}").trim_start().to_string();
            }
            datatype = Some(label);
        }
        let window = row.window.map(|w| w.to_string());
        let bench = row.benchmark;
        let idx = match table_of.entry((bench.clone(), datatype.clone())) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                out.tables.push(Table {
                    // osu_barrier has no message size; a benchmark this
                    // build does not know is taken to have one.
                    sized: crate::bench::registry::lookup(&bench).is_none_or(|e| e.spec.typed()),
                    benchmark: bench,
                    datatype,
                    osu_version: None,
                    pairs: row.pairs.map(|p| p as u64),
                    window: window.clone(),
                    np: Some(row.np as u64).filter(|&n| n > 0),
                    memory: backend_memory(&row.backend),
                    points: Vec::new(),
                    path: path.to_string(),
                    line: Some(line),
                    run_label: label.to_string(),
                    run: None,
                    band_for_one_run: false,
                });
                windows.push(HashSet::new());
                *e.insert(out.tables.len() - 1)
            }
        };
        windows[idx].extend(window);
        out.tables[idx].points.push(point);
    }
    // osu_mbw_mr -V measures every size at several windows: not one series.
    let mut kept = Vec::new();
    for (t, w) in out.tables.drain(..).zip(windows) {
        if w.len() > 1 {
            let message = format!("{} rows at {} window sizes (-V) are not read", t.benchmark, w.len());
            out.notes.push(Note { path: path.into(), line: t.line, message });
        } else {
            kept.push(t);
        }
    }
    out.tables = kept;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::csv::COLUMNS;

    fn row(pairs: &[(&str, &str)]) -> String {
        COLUMNS
            .iter()
            .map(|c| pairs.iter().find(|(k, _)| k == c).map(|(_, v)| v.to_string()).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn reads_rows_into_tables_per_datatype() {
        let mut text = COLUMNS.join(",") + "\n";
        for (dt, size, bw) in [("MPI_CHAR", "1", "2.5"), ("MPI_CHAR", "2", "5"), ("MPI_INT", "4", "9.5")] {
            let r =
                [("benchmark", "osu_bw"), ("datatype", dt), ("size_bytes", size), ("bw_MBps", bw), ("window", "64")];
            text += &(row(&r) + "\n");
        }
        text += &(row(&[("benchmark", "osu_bw"), ("size_bytes", "x")]) + "\n");
        let p = parse(&text, "r.csv", "r").unwrap();
        assert_eq!(p.tables.len(), 2);
        assert_eq!(p.tables[0].datatype.as_deref(), Some("MPI_CHAR"));
        assert_eq!(p.tables[0].points.len(), 2);
        assert_eq!(p.tables[0].points[1].bw_mbps, Some(5.0));
        assert_eq!(p.tables[1].points[0].size, 4);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert_eq!(p.notes[0].line, Some(5));
        assert!(p.notes[0].message.starts_with("unreadable row: size_bytes: "), "{}", p.notes[0].message);
    }

    #[test]
    fn barrier_and_tails() {
        let mut text = COLUMNS.join(",") + "\n";
        let r =
            [("benchmark", "osu_barrier"), ("size_bytes", "0"), ("avg_lat_us", "0.4"), ("osu_tails", "P50=0.3;P99=2")];
        text += &(row(&r) + "\n");
        let p = parse(&text, "b.csv", "b").unwrap();
        assert!(!p.tables[0].sized);
        assert_eq!(p.tables[0].points[0].tails, vec![("P50".to_string(), 0.3), ("P99".to_string(), 2.0)]);
    }

    #[test]
    fn in_place_rows_are_left_with_a_note() {
        let mut text = COLUMNS.join(",") + "\n";
        for p in ["out-of-place", "in-place", "out-of-place", "in-place"] {
            text +=
                &(row(&[("benchmark", "osu_allreduce"), ("size_bytes", "8"), ("avg_lat_us", "1"), ("placement", p)])
                    + "\n");
        }
        let parsed = parse(&text, "a.csv", "a").unwrap();
        assert_eq!(parsed.tables.len(), 1);
        assert_eq!(parsed.tables[0].points.len(), 2);
        assert_eq!(parsed.notes.len(), 1, "{:?}", parsed.notes);
        assert!(parsed.notes[0].message.contains("in-place rows"));
    }

    /// nccl-tests' `-o all` / `-r -1`: a table per operation and root,
    /// each named after its type.
    #[test]
    fn each_operation_and_root_is_its_own_table() {
        let mut text = COLUMNS.join(",") + "\n";
        for (op, root) in [("sum", "0"), ("sum", "1"), ("prod", "0"), ("prod", "0"), ("", "2")] {
            let cells = [
                ("benchmark", "osu_reduce"),
                ("datatype", "MPI_INT"),
                ("size_bytes", "8"),
                ("avg_lat_us", "1"),
                ("reduction", op),
                ("root", root),
            ];
            text += &(row(&cells) + "\n");
        }
        let p = parse(&text, "r.csv", "r").unwrap();
        let names: Vec<&str> = p.tables.iter().filter_map(|t| t.datatype.as_deref()).collect();
        assert_eq!(names, ["MPI_INT sum root 0", "MPI_INT sum root 1", "MPI_INT prod root 0", "MPI_INT root 2"]);
        assert_eq!(p.tables[2].points.len(), 2);
    }

    #[test]
    fn window_varied_rows_are_reported() {
        let mut text = COLUMNS.join(",") + "\n";
        for w in ["1", "2"] {
            text += &(row(&[("benchmark", "osu_mbw_mr"), ("size_bytes", "8"), ("bw_MBps", "1"), ("window", w)]) + "\n");
        }
        let p = parse(&text, "m.csv", "m").unwrap();
        assert!(p.tables.is_empty());
        assert!(p.notes[0].message.contains("-V"));
    }

    /// What the benchmark binaries write reads back point for point.
    #[test]
    fn reads_what_the_writer_wrote() {
        use crate::datatype::Datatype;
        use crate::report::{csv::CsvSink, Row, RunContext, Sink};
        let ctx = RunContext { benchmark: "osu_latency", backend: "mpi", np: 2, pairs: Some(1), path: None };
        let mut sink = CsvSink::new(Vec::new(), ctx).unwrap();
        let row = |size, lat| Row {
            datatype: Some(Datatype::Int),
            size,
            iterations: 100,
            avg_lat_us: Some(lat),
            validation: Some(true),
            tails: vec![(99, 1.5)],
            ..Row::default()
        };
        sink.row(&row(4, 0.1 + 0.2)).unwrap();
        sink.row(&row(8, 1e-7)).unwrap();
        let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
        let p = parse(&text, "l.csv", "l").unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let t = &p.tables[0];
        assert_eq!((t.datatype.as_deref(), t.pairs, t.window.as_deref()), (Some("MPI_INT"), Some(1), None));
        let pt = &t.points[0];
        assert_eq!((pt.size, pt.latency_us, pt.iterations, pt.validation), (4, Some(0.1 + 0.2), Some(100), Some(true)));
        assert_eq!(pt.tails, vec![("P99".to_string(), 1.5)]);
        assert_eq!(t.points[1].latency_us, Some(1e-7));
    }

    /// An older CSV (fewer columns, spaces around cells) and a file cut
    /// short inside its last row.
    #[test]
    fn older_and_truncated_files() {
        let text = "benchmark, backend, datatype, size_bytes, bw_MBps, avg_lat_us\n\
                    osu_latency, mpi, MPI_CHAR, 1, , 0.5\n\
                    osu_latency,mpi,MPI_CHAR,2,,0.6\n";
        let p = parse(text, "old.csv", "old").unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let pts: Vec<(u64, Option<f64>, Option<u64>)> =
            p.tables[0].points.iter().map(|p| (p.size, p.latency_us, p.iterations)).collect();
        assert_eq!(pts, vec![(1, Some(0.5), None), (2, Some(0.6), None)]);

        let mut text = COLUMNS.join(",") + "\n";
        text += &(row(&[("benchmark", "osu_bw"), ("size_bytes", "8"), ("bw_MBps", "5")]) + "\n");
        text += "osu_bw,mpi,,16,,64,2,1,100,10,,,,7.5";
        let p = parse(&text, "cut.csv", "cut").unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.tables[0].points[1].bw_mbps, Some(7.5));
        assert_eq!(p.tables[0].points[1].iterations, Some(100));

        // Cut before its size: not a result, and the note says why.
        let p = parse(&(COLUMNS.join(",") + "\nosu_bw,mpi,MPI_CHAR"), "cut.csv", "cut").unwrap();
        assert!(p.tables.is_empty());
        assert_eq!(p.notes[0].line, Some(2));
        assert!(p.notes[0].message.starts_with("unreadable row: size_bytes: "), "{}", p.notes[0].message);
        let p = parse(&(COLUMNS.join(",") + "\nosu_bw,mpi,MPI_CH"), "cut.csv", "cut").unwrap();
        assert!(p.notes[0].message.contains("unknown variant `MPI_CH`"), "{}", p.notes[0].message);
    }

    /// The spread column where the file has it; a cell that is not a
    /// percentage is a note and no spread.
    #[test]
    fn spread_column_is_read_when_present() {
        // The writer's own columns hold it.
        assert!(COLUMNS.contains(&SPREAD_COLUMN));
        let mut text = COLUMNS.join(",") + "\n";
        for (size, spread) in [("1", "2.5"), ("2", ""), ("4", "-1"), ("8", "0"), ("16", "1e300"), ("32", "1271")] {
            text += &(row(&[
                ("benchmark", "osu_latency"),
                ("size_bytes", size),
                ("avg_lat_us", "1.5"),
                (SPREAD_COLUMN, spread),
            ]) + "\n");
        }
        let p = parse(&text, "s.csv", "s").unwrap();
        let spreads: Vec<Option<f64>> = p.tables[0].points.iter().map(|p| p.ci95_rel_pct).collect();
        assert_eq!(spreads, [Some(2.5), None, None, Some(0.0), None, Some(1271.0)]);
        assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
        assert_eq!(p.notes[0].line, Some(4));
        assert!(p.notes[0].message.starts_with("ci95_rel_pct '-1' is not a percentage"), "{}", p.notes[0].message);
        assert_eq!(p.notes[1].line, Some(6));
        assert!(
            p.notes[1].message.starts_with("ci95_rel_pct '1e300' is wider than any samples give"),
            "{}",
            p.notes[1].message
        );
        // Without the column (an older CSV), no spread.
        let text = "benchmark,size_bytes,avg_lat_us\nosu_latency,1,1\n".to_string();
        assert_eq!(parse(&text, "n.csv", "n").unwrap().tables[0].points[0].ci95_rel_pct, None);
    }

    /// p10 and p90 over the mean iteration time: the band the plots draw;
    /// missing or nonsensical cells give none.
    #[test]
    fn time_band_is_read_when_present() {
        let mut text = COLUMNS.join(",") + "\n";
        for (size, p10, p90, mean) in
            [("1", "0.5", "2", "1"), ("2", "", "2", "1"), ("4", "3", "2", "1"), ("8", "1", "2", "0")]
        {
            text += &(row(&[
                ("benchmark", "osu_latency"),
                ("size_bytes", size),
                ("avg_lat_us", "1"),
                ("p10_us", p10),
                ("p90_us", p90),
                ("iter_mean_us", mean),
            ]) + "\n");
        }
        let p = parse(&text, "b.csv", "b").unwrap();
        let bands: Vec<Option<(f64, f64)>> = p.tables[0].points.iter().map(|p| p.time_band).collect();
        assert_eq!(bands, [Some((0.5, 2.0)), None, None, None]);
    }

    #[test]
    fn other_csv_is_refused() {
        assert!(matches!(parse("a,b\n1,2\n", "x.csv", "x"), Err(CsvInputError::MissingColumn("benchmark"))));
    }
}
