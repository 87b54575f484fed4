//! A `commbench pairs` measurements CSV as a history run. It has one row
//! per direction and round and no benchmark column, so compare's CSV
//! reader does not take it; here it becomes one table, benchmark
//! [`PAIRS_BENCHMARK`], whose one size carries the median bandwidth over
//! every direction measured (and the median latency where measured). A
//! file cut short is said as compare's reader says it.

use crate::compare::judge::median;
use crate::compare::model::{Note, Parsed, SizeRow, Table};

pub(crate) const PAIRS_BENCHMARK: &str = "commbench_pairs";

/// Whether a CSV's header is a pairs measurements file's.
pub(crate) fn is_pairs(text: &str) -> bool {
    let header = text.lines().next().unwrap_or("");
    let cells: Vec<&str> = header.split(',').map(str::trim).collect();
    cells.contains(&"src_rank") && cells.contains(&"bw_MBps") && !cells.contains(&"benchmark")
}

pub fn parse(text: &str, path: &str, label: &str) -> Result<Parsed, String> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = rdr.headers().map_err(|e| e.to_string())?.clone();
    let col = |n: &str| header.iter().position(|h| h == n);
    let (Some(size_at), Some(bw_at)) = (col("size_bytes"), col("bw_MBps")) else {
        return Err("a pairs CSV without size_bytes or bw_MBps".into());
    };
    let lat_at = col("latency_us");
    let mut out = Parsed::default();
    out.cut.extend(Note::unfinished_csv(path, text));
    let (mut sizes, mut bws, mut lats) = (Vec::new(), Vec::new(), Vec::new());
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let Ok(rec) = rec else { continue };
        if let Some(short) = Note::short_row(path, line, rec.len(), header.len()) {
            out.cut.push(short);
            continue;
        }
        let num = |at: usize| rec.get(at).and_then(|v| v.parse::<f64>().ok()).filter(|v| v.is_finite() && *v > 0.0);
        if let Some(s) = rec.get(size_at).and_then(|v| v.parse::<u64>().ok()) {
            if !sizes.contains(&s) {
                sizes.push(s);
            }
        }
        bws.extend(num(bw_at));
        lats.extend(lat_at.and_then(num));
    }
    let [size] = sizes[..] else {
        return Err(format!("a pairs CSV with {} message sizes (one expected)", sizes.len()));
    };
    let Some(bw) = median(&mut bws) else { return Err("a pairs CSV with no bandwidth measured".into()) };
    let point = SizeRow { size, bw_mbps: Some(bw), latency_us: median(&mut lats), ..SizeRow::default() };
    out.tables.push(Table {
        benchmark: PAIRS_BENCHMARK.into(),
        sized: true,
        points: vec![point],
        path: path.into(),
        run_label: label.into(),
        ..Table::default()
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "round,src_rank,dst_rank,src_host,dst_host,size_bytes,window,iterations,bw_MBps,latency_us,path,path_class,peak_MBps,efficiency_pct\n";

    #[test]
    fn the_median_over_directions_at_the_one_size() {
        let text = format!(
            "{HEAD}1,0,1,a,b,1024,64,100,300,,p,c,,\n1,1,0,b,a,1024,64,100,100,2.5,p,c,,\n2,0,2,a,c,1024,64,100,200,1.5,p,c,,\n"
        );
        assert!(is_pairs(&text));
        let p = parse(&text, "x.csv", "x").unwrap();
        assert!(p.cut.is_empty());
        let t = &p.tables[0];
        assert_eq!((t.benchmark.as_str(), t.points[0].size), (PAIRS_BENCHMARK, 1024));
        assert_eq!((t.points[0].bw_mbps, t.points[0].latency_us), (Some(200.0), Some(2.0)));
        // Cut short: said, as compare's reader says it.
        let cut = parse(&text[..text.len() - 1], "x.csv", "x").unwrap();
        assert!(cut.cut[0].message.starts_with("the last line has no newline"), "{:?}", cut.cut);
        assert!(!is_pairs("benchmark,size_bytes,bw_MBps,src_rank\n"));
    }
}
