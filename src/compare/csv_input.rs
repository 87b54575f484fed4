//! Reader of commbench's own results CSV (schema in `report::csv::COLUMNS`):
//! rows grouped into one table per (benchmark, datatype) in file order.

use super::model::{Note, Parsed, Point, Table};

/// Why a CSV could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum CsvInputError {
    #[error("not a commbench results CSV: no '{0}' column in the header")]
    MissingColumn(&'static str),
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
}

fn cell(rec: &csv::StringRecord, idx: Option<usize>) -> Option<&str> {
    idx.and_then(|i| rec.get(i)).map(str::trim).filter(|s| !s.is_empty())
}

/// Reads the CSV in `text`; rows that do not fit become notes.
pub fn parse(text: &str, path: &str, label: &str) -> Result<Parsed, CsvInputError> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let header = rdr.headers()?.clone();
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let bench_i = col("benchmark").ok_or(CsvInputError::MissingColumn("benchmark"))?;
    let size_i = col("size_bytes").ok_or(CsvInputError::MissingColumn("size_bytes"))?;
    let (dt_i, win_i, pairs_i) = (col("datatype"), col("window"), col("pairs"));
    let (lat_i, min_i, max_i) = (col("avg_lat_us"), col("min_lat_us"), col("max_lat_us"));
    let (bw_i, rate_i, it_i) = (col("bw_MBps"), col("msg_rate_per_s"), col("iterations"));
    let (val_i, tails_i) = (col("validation"), col("osu_tails"));

    let mut out = Parsed::default();
    let mut windows: Vec<Vec<String>> = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                out.notes.push(Note { path: path.into(), line: Some(line), message: format!("unreadable row: {e}") });
                continue;
            }
        };
        let note = |m: String| Note { path: path.into(), line: Some(line), message: m };
        let Some(bench) = cell(&rec, Some(bench_i)) else {
            out.notes.push(note("row with no benchmark".into()));
            continue;
        };
        let Some(size) = cell(&rec, Some(size_i)).and_then(|s| s.parse::<u64>().ok()) else {
            out.notes.push(note("row with no whole-number size_bytes".into()));
            continue;
        };
        let num = |idx: Option<usize>| cell(&rec, idx).and_then(|s| s.parse::<f64>().ok()).filter(|v| v.is_finite());
        let tails = cell(&rec, tails_i)
            .map(|t| {
                t.split(';')
                    .filter_map(|kv| kv.split_once('='))
                    .filter_map(|(k, v)| Some((k.to_string(), v.parse::<f64>().ok()?)))
                    .collect()
            })
            .unwrap_or_default();
        let point = Point {
            size,
            latency_us: num(lat_i),
            bw_mbps: num(bw_i),
            msg_rate: num(rate_i),
            min_lat_us: num(min_i),
            max_lat_us: num(max_i),
            iterations: cell(&rec, it_i).and_then(|s| s.parse().ok()),
            validation: cell(&rec, val_i).map(|v| v == "Pass"),
            tails,
        };
        let datatype = cell(&rec, dt_i).map(String::from);
        let window = cell(&rec, win_i).map(String::from);
        let found = out.tables.iter().position(|t| t.benchmark == bench && t.datatype == datatype);
        let idx = match found {
            Some(idx) => idx,
            None => {
                out.tables.push(Table {
                    benchmark: bench.to_string(),
                    datatype,
                    osu_version: None,
                    sized: bench != "osu_barrier",
                    pairs: cell(&rec, pairs_i).and_then(|s| s.parse().ok()),
                    window: window.clone(),
                    points: Vec::new(),
                    path: path.to_string(),
                    line: Some(line),
                    run_label: label.to_string(),
                    run: None,
                });
                windows.push(Vec::new());
                out.tables.len() - 1
            }
        };
        if let Some(w) = window {
            if !windows[idx].contains(&w) {
                windows[idx].push(w);
            }
        }
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
    fn window_varied_rows_are_reported() {
        let mut text = COLUMNS.join(",") + "\n";
        for w in ["1", "2"] {
            text += &(row(&[("benchmark", "osu_mbw_mr"), ("size_bytes", "8"), ("bw_MBps", "1"), ("window", w)]) + "\n");
        }
        let p = parse(&text, "m.csv", "m").unwrap();
        assert!(p.tables.is_empty());
        assert!(p.notes[0].message.contains("-V"));
    }

    #[test]
    fn other_csv_is_refused() {
        assert!(matches!(parse("a,b\n1,2\n", "x.csv", "x"), Err(CsvInputError::MissingColumn("benchmark"))));
    }
}
