//! Reader of the GPU copy tools' CSVs, which have no `benchmark` column
//! and so are not commbench results CSVs: `commbench gpu-bw`'s (one row
//! per timing: `test,src_gpu,dst_gpu,...,value,unit`) and the cells CSV
//! of `nvbandwidth`, `bandwidthTest` and `p2pBandwidthLatencyTest` (one
//! row per measured cell: `tool,test,engine,matrix,...,value,unit`).
//!
//! Each becomes one table per (benchmark, datatype) in file order: the
//! benchmark is the tool and its test (`gpu-bw p2p_uni`, `nvbandwidth
//! device_to_device_memcpy_read_ce`), the datatype names the cell, where
//! its data goes with what sets it apart (`host -> gpu0 pinned`, `gpu0 ->
//! gpu1 peer on`, `gpu1 -> gpu0 sm [read]`), and each point is one copy
//! size. Columns are read by name, so a file with more or fewer of the
//! optional ones reads the same. A file cut short is said as compare's
//! CSV reader says it.

use std::collections::hash_map::{Entry, HashMap};

use super::csv_input::CsvInputError;
use super::model::{Memory, MemoryInfo, Note, Parsed, SizeRow, Table};

/// The tool name of `commbench gpu-bw`'s rows, the first word of their
/// benchmark.
pub(crate) const GPU_BW_TOOL: &str = "gpu-bw";

/// The two CSVs this module reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `commbench gpu-bw`'s: `src_gpu` and `dst_gpu` are a GPU number or
    /// `host`, and the tool is always gpu-bw.
    GpuBw,
    /// The GPU copy cells CSV: each row names its tool and its ends.
    Cells,
}

/// The header cells that make a CSV one of [`Shape::GpuBw`].
const GPU_BW_NEEDS: &[&str] = &["test", "src_gpu", "dst_gpu", "value", "unit"];
/// The header cells that make a CSV one of [`Shape::Cells`].
const CELLS_NEEDS: &[&str] = &["tool", "test", "from", "to", "value", "unit"];

/// Which GPU copy CSV `text` is, by its header; None for any other CSV
/// (one with a `benchmark` column is commbench's own).
pub(crate) fn shape(text: &str) -> Option<Shape> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = rdr.headers().ok()?;
    let has = |n: &str| header.iter().any(|h| h == n);
    if has("benchmark") {
        return None;
    }
    if CELLS_NEEDS.iter().all(|n| has(n)) {
        Some(Shape::Cells)
    } else if GPU_BW_NEEDS.iter().all(|n| has(n)) {
        Some(Shape::GpuBw)
    } else {
        None
    }
}

/// The backend a history keys these runs by: every tool here copies
/// with CUDA.
pub(crate) const BACKEND: &str = "cuda";

/// One end of a gpu-bw copy as the cells CSV writes it: `host`, or
/// `gpuN` for GPU number N.
fn gpu_bw_end(cell: &str) -> String {
    if !cell.is_empty() && cell.bytes().all(|b| b.is_ascii_digit()) {
        format!("gpu{cell}")
    } else {
        cell.to_string()
    }
}

/// The datatype of a cell: where its data goes, then what else sets it
/// apart from the cells beside it, where the row says: the host memory,
/// whether peer access was on, an SM copy (a copy engine's is the
/// default), and which of a test's matrices it is in.
fn cell_name(from: &str, to: &str, host_memory: &str, peer: &str, engine: &str, matrix: &str) -> String {
    let mut name = format!("{from} -> {to}");
    if !host_memory.is_empty() {
        name.push(' ');
        name.push_str(host_memory);
    }
    if !peer.is_empty() {
        name.push_str(" peer ");
        name.push_str(peer);
    }
    if !engine.is_empty() && !engine.eq_ignore_ascii_case("ce") {
        name.push(' ');
        name.push_str(engine);
    }
    if !matrix.is_empty() {
        name.push_str(&format!(" [{matrix}]"));
    }
    name
}

/// A measured value in the unit a table keeps: (latency in us, bandwidth
/// in MB/s); Err says why the row is not read.
fn value_in(value: f64, unit: &str) -> Result<(Option<f64>, Option<f64>), String> {
    match unit {
        "GB/s" => Ok((None, Some(value * 1000.0))),
        "us" => Ok((Some(value), None)),
        "ns" => Ok((Some(value / 1000.0), None)),
        other => Err(format!("unit: '{other}' is not GB/s, us or ns")),
    }
}

/// Reads a GPU copy CSV of either [`Shape`]; rows that do not fit become
/// notes, a file cut short `cut` notes. Err only where the header cannot
/// be read or is not one of a GPU copy CSV.
pub fn parse(text: &str, path: &str, label: &str) -> Result<Parsed, CsvInputError> {
    let Some(shape) = shape(text) else {
        return Err(CsvInputError::MissingColumn("tool"));
    };
    let mut rdr = csv::ReaderBuilder::new().flexible(true).trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = rdr.headers()?.clone();
    let col = |n: &str| header.iter().position(|h| h == n);
    let names = match shape {
        Shape::GpuBw => ["", "test", "src_gpu", "dst_gpu", "", "host_memory", "peer_access", "", "bytes"],
        Shape::Cells => ["tool", "test", "from", "to", "engine", "host_memory", "peer_access", "matrix", "bytes"],
    };
    let [tool_at, test_at, from_at, to_at, engine_at, host_at, peer_at, matrix_at, bytes_at] =
        names.map(|n| if n.is_empty() { None } else { col(n) });
    let (value_at, unit_at, efficiency_at) = (col("value"), col("unit"), col("efficiency_pct"));

    let mut out = Parsed::default();
    out.cut.extend(Note::unfinished_csv(path, text));
    let memory = MemoryInfo { memory: Memory::Device, from: "GPU copy CSV".into(), weak: false };
    let mut table_of: HashMap<(String, String), usize> = HashMap::new();
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
        let cell = |at: Option<usize>| at.and_then(|a| rec.get(a)).unwrap_or("");
        let tool = match shape {
            Shape::GpuBw => GPU_BW_TOOL,
            Shape::Cells => cell(tool_at),
        };
        let test = cell(test_at);
        if tool.is_empty() || test.is_empty() {
            out.notes.push(note(format!("row with no {}", if tool.is_empty() { "tool" } else { "test" })));
            continue;
        }
        let (from, to) = match shape {
            Shape::GpuBw => (gpu_bw_end(cell(from_at)), gpu_bw_end(cell(to_at))),
            Shape::Cells => (cell(from_at).to_string(), cell(to_at).to_string()),
        };
        // A cell without a size (a latency written without one) is size 0.
        let size = match cell(bytes_at) {
            "" => 0,
            b => match b.parse::<u64>() {
                Ok(s) => s,
                Err(_) => {
                    out.notes.push(note(format!("unreadable row: bytes: '{b}' is not a whole number of bytes")));
                    continue;
                }
            },
        };
        let value = match cell(value_at).parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            _ => {
                let v = cell(value_at);
                out.notes.push(note(format!("unreadable row: value: '{v}' is not a finite number")));
                continue;
            }
        };
        let (latency_us, bw_mbps) = match value_in(value, cell(unit_at)) {
            Ok(v) => v,
            Err(why) => {
                out.notes.push(note(format!("unreadable row: {why}")));
                continue;
            }
        };
        let efficiency_pct = match cell(efficiency_at) {
            "" => None,
            e => match e.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Some(v),
                _ => {
                    let why = "is not a percentage of 0 or more: the row is read without it";
                    out.notes.push(note(format!("efficiency_pct '{e}' {why}")));
                    None
                }
            },
        };
        let benchmark = format!("{tool} {test}");
        let datatype = cell_name(&from, &to, cell(host_at), cell(peer_at), cell(engine_at), cell(matrix_at));
        let point = SizeRow { size, latency_us, bw_mbps, efficiency_pct, ..SizeRow::default() };
        let idx = match table_of.entry((benchmark.clone(), datatype.clone())) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                out.tables.push(Table {
                    benchmark,
                    datatype: Some(datatype),
                    sized: true,
                    memory: Some(memory.clone()),
                    path: path.to_string(),
                    line: Some(line),
                    run_label: label.to_string(),
                    ..Table::default()
                });
                *e.insert(out.tables.len() - 1)
            }
        };
        let t = &mut out.tables[idx];
        match t.points.iter_mut().find(|p| p.size == size) {
            Some(p) => {
                let message = format!(
                    "a second row for {} {} at {size} bytes: the last is kept",
                    t.benchmark,
                    t.datatype.as_deref().unwrap_or_default()
                );
                *p = point;
                out.notes.push(note(message));
            }
            None => t.points.push(point),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells CSV's columns, in the order its writers use.
    const CELLS: &str = "tool,test,engine,matrix,row,column,from,to,host_memory,peer_access,bytes,loops,samples,\
                         statistic,value,unit,path,peak_GBps,efficiency_pct,finished_utc\n";

    fn gpu_bw_header() -> String {
        crate::gpu_bw::output::COLUMNS.join(",") + "\n"
    }

    fn names(p: &Parsed) -> Vec<(String, String)> {
        p.tables.iter().map(|t| (t.benchmark.clone(), t.datatype.clone().unwrap_or_default())).collect()
    }

    #[test]
    fn shapes_are_told_by_the_header() {
        assert_eq!(shape(CELLS), Some(Shape::Cells));
        assert_eq!(shape(&gpu_bw_header()), Some(Shape::GpuBw));
        // In any order, with more columns or fewer optional ones.
        assert_eq!(shape("unit,value,to,from,test,tool,extra\n"), Some(Shape::Cells));
        assert_eq!(shape("test,src_gpu,dst_gpu,value,unit\n"), Some(Shape::GpuBw));
        for other in [
            "benchmark,size_bytes,avg_lat_us\n",
            "benchmark,tool,test,from,to,value,unit\n",
            "round,src_rank,dst_rank,size_bytes,bw_MBps\n",
            "src\\dst (GB/s),0,1\n",
            "",
        ] {
            assert_eq!(shape(other), None, "{other}");
        }
        assert!(matches!(parse("a,b\n1,2\n", "x.csv", "x"), Err(CsvInputError::MissingColumn(_))));
    }

    /// What gpu-bw writes reads back: a table per test and cell, its
    /// ends `host` or `gpuN`, host memory and peer access after them.
    #[test]
    fn gpu_bw_rows_read_back_as_written() {
        use crate::gpu_bw::results::{Clock, HostMemory, Kind, Measurement};
        let ms = [
            Measurement::bandwidth(
                Kind::H2d,
                None,
                Some(0),
                Some(HostMemory::Pinned),
                None,
                (32_000_000, 100, 1),
                0.128,
                Clock::GpuEvents,
            ),
            Measurement::bandwidth(
                Kind::P2pUni,
                Some(0),
                Some(1),
                None,
                Some(true),
                (160_000_000, 5, 1),
                0.004,
                Clock::GpuEvents,
            ),
            Measurement::latency(1, 0, Some(false), 16, 100, 0.000_2),
        ];
        let rows = crate::gpu_bw::output::csv_rows(&ms).unwrap();
        let text = gpu_bw_header() + std::str::from_utf8(&rows).unwrap();
        let p = parse(&text, "g.csv", "g").unwrap();
        assert!(p.notes.is_empty() && p.cut.is_empty(), "{:?} {:?}", p.notes, p.cut);
        let want = [
            ("gpu-bw h2d", "host -> gpu0 pinned"),
            ("gpu-bw p2p_uni", "gpu0 -> gpu1 peer on"),
            ("gpu-bw p2p_latency", "gpu1 -> gpu0 peer off"),
        ];
        assert_eq!(names(&p), want.map(|(b, d)| (b.to_string(), d.to_string())));
        let h2d = &p.tables[0];
        assert!(h2d.sized);
        assert_eq!(h2d.memory.as_ref().map(|m| m.memory), Some(Memory::Device));
        assert_eq!(
            (h2d.points[0].size, h2d.points[0].bw_mbps, h2d.points[0].latency_us),
            (32_000_000, Some(25_000.0), None)
        );
        assert_eq!(p.tables[1].points[0].bw_mbps, Some(200_000.0));
        let lat = &p.tables[2].points[0];
        assert_eq!((lat.size, lat.bw_mbps), (16, None));
        assert!((lat.latency_us.unwrap() - 2.0).abs() < 1e-9, "{lat:?}");
        assert_eq!((h2d.line, p.tables[2].line), (Some(2), Some(4)));
    }

    /// The cells CSV: engine `sm` and a matrix key are part of the cell's
    /// name, `ce` is not; GB/s, us and ns read into MB/s and us; the
    /// efficiency comes along.
    #[test]
    fn cells_qualifiers_and_units() {
        let rows = [
            "nvbandwidth,device_to_device_memcpy_read_ce,ce,,1,0,gpu0,gpu1,,,1048576,16,3,median,250.5,GB/s,NVLink x2,300,83.5,2026-12-01T10:00:00Z",
            "nvbandwidth,device_to_device_bidirectional_memcpy_read_sm,sm,read,0,1,gpu1,gpu0,,,1048576,16,3,median,120,GB/s,,,,2026-12-01T10:00:01Z",
            "nvbandwidth,host_device_latency_sm,sm,,0,0,gpu0,host,,,2097152,,,,800,ns,PCIe,,,2026-12-01T10:00:02Z",
            "bandwidthTest,H2D-Pinned,ce,,,,host,gpu0,pinned,,33554432,,,,25.1,GB/s,PCIe,,,2026-12-01T10:00:03Z",
            "bandwidthTest,H2D-Pinned,ce,,,,host,gpu0,pinned,,1024,,,,2.5,GB/s,PCIe,,,2026-12-01T10:00:04Z",
            "p2pBandwidthLatencyTest,unidirectional_p2p_enabled_writes,ce,,0,1,gpu0,gpu1,,on,10485760,,,,90,GB/s,NVLink x2,,,2026-12-01T10:00:05Z",
            "p2pBandwidthLatencyTest,p2p_latency,ce,,0,1,gpu0,gpu1,,off,1,,,,12.5,us,through the CPU,,,2026-12-01T10:00:06Z",
        ];
        let text = format!("{CELLS}{}\n", rows.join("\n"));
        let p = parse(&text, "c.csv", "c").unwrap();
        assert!(p.notes.is_empty() && p.cut.is_empty(), "{:?} {:?}", p.notes, p.cut);
        let want = [
            ("nvbandwidth device_to_device_memcpy_read_ce", "gpu0 -> gpu1"),
            ("nvbandwidth device_to_device_bidirectional_memcpy_read_sm", "gpu1 -> gpu0 sm [read]"),
            ("nvbandwidth host_device_latency_sm", "gpu0 -> host sm"),
            ("bandwidthTest H2D-Pinned", "host -> gpu0 pinned"),
            ("p2pBandwidthLatencyTest unidirectional_p2p_enabled_writes", "gpu0 -> gpu1 peer on"),
            ("p2pBandwidthLatencyTest p2p_latency", "gpu0 -> gpu1 peer off"),
        ];
        assert_eq!(names(&p), want.map(|(b, d)| (b.to_string(), d.to_string())));
        let first = &p.tables[0].points[0];
        assert_eq!((first.size, first.bw_mbps, first.efficiency_pct), (1_048_576, Some(250_500.0), Some(83.5)));
        assert_eq!(p.tables[1].points[0].efficiency_pct, None);
        assert_eq!(p.tables[2].points[0].latency_us, Some(0.8));
        // Two sizes of one series are two points of one table.
        let sizes: Vec<u64> = p.tables[3].points.iter().map(|p| p.size).collect();
        assert_eq!(sizes, [33_554_432, 1024]);
        assert_eq!(p.tables[5].points[0].latency_us, Some(12.5));
        assert!(p.tables.iter().all(|t| t.sized && t.run_label == "c" && t.path == "c.csv"));
    }

    /// Columns are read by name: another order, an unknown column, and
    /// no optional ones (engine, matrix, host memory, efficiency) read
    /// the same.
    #[test]
    fn columns_are_read_by_name() {
        let text = "unit,value,bytes,to,from,test,tool,colour\nGB/s,5,64,gpu1,gpu0,t,nvbandwidth,blue\n";
        let p = parse(text, "n.csv", "n").unwrap();
        assert!(p.notes.is_empty() && p.cut.is_empty(), "{:?} {:?}", p.notes, p.cut);
        assert_eq!(names(&p), [("nvbandwidth t".to_string(), "gpu0 -> gpu1".to_string())]);
        assert_eq!((p.tables[0].points[0].size, p.tables[0].points[0].bw_mbps), (64, Some(5000.0)));
        // No bytes at all: size 0.
        let p = parse("tool,test,from,to,value,unit\nx,y,gpu0,gpu0,3,us\n", "n.csv", "n").unwrap();
        assert_eq!((p.tables[0].points[0].size, p.tables[0].points[0].latency_us), (0, Some(3.0)));
    }

    /// A second row for the same cell and size replaces the first, and a
    /// note says so.
    #[test]
    fn a_repeated_cell_keeps_the_last_row() {
        let text = format!(
            "{CELLS}nvbandwidth,t,ce,,0,1,gpu0,gpu1,,,64,,,,1,GB/s,,,,\n\
             nvbandwidth,t,ce,,0,1,gpu0,gpu1,,,128,,,,3,GB/s,,,,\n\
             nvbandwidth,t,ce,,0,1,gpu0,gpu1,,,64,,,,2,GB/s,,,,\n"
        );
        let p = parse(&text, "d.csv", "d").unwrap();
        assert_eq!(p.tables.len(), 1);
        let pts: Vec<(u64, Option<f64>)> = p.tables[0].points.iter().map(|p| (p.size, p.bw_mbps)).collect();
        assert_eq!(pts, [(64, Some(2000.0)), (128, Some(3000.0))]);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert_eq!(p.notes[0].line, Some(4));
        assert_eq!(p.notes[0].message, "a second row for nvbandwidth t gpu0 -> gpu1 at 64 bytes: the last is kept");
    }

    /// Values that are no measurement are a note each and the row is not
    /// read; the rest of the file is.
    #[test]
    fn unreadable_rows_are_notes() {
        let rows = [
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,nan,GB/s,,,,",
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,inf,GB/s,,,,",
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,N/A,GB/s,,,,",
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,5,MB/s,,,,",
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,big,,,,5,GB/s,,,,",
            ",t,ce,,,,gpu0,gpu1,,,64,,,,5,GB/s,,,,",
            "nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,5,GB/s,,,-3,",
        ];
        let text = format!("{CELLS}{}\n", rows.join("\n"));
        let p = parse(&text, "u.csv", "u").unwrap();
        assert!(p.cut.is_empty(), "{:?}", p.cut);
        let messages: Vec<(Option<usize>, &str)> = p.notes.iter().map(|n| (n.line, n.message.as_str())).collect();
        assert_eq!(
            messages,
            [
                (Some(2), "unreadable row: value: 'nan' is not a finite number"),
                (Some(3), "unreadable row: value: 'inf' is not a finite number"),
                (Some(4), "unreadable row: value: 'N/A' is not a finite number"),
                (Some(5), "unreadable row: unit: 'MB/s' is not GB/s, us or ns"),
                (Some(6), "unreadable row: bytes: 'big' is not a whole number of bytes"),
                (Some(7), "row with no tool"),
                (Some(8), "efficiency_pct '-3' is not a percentage of 0 or more: the row is read without it"),
            ]
        );
        assert_eq!(p.tables.len(), 1);
        assert_eq!((p.tables[0].points[0].bw_mbps, p.tables[0].points[0].efficiency_pct), (Some(5000.0), None));
    }

    /// A file cut short says so as compare's CSV reader does: a last
    /// line without a newline, a row with fewer cells than the header.
    #[test]
    fn a_file_cut_short_is_said_as_compare_says_it() {
        let full = format!("{CELLS}nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,5,GB/s,,,,2026-12-01T10:00:00Z\n");
        assert!(parse(&full, "f.csv", "f").unwrap().cut.is_empty());
        let p = parse(full.trim_end(), "f.csv", "f").unwrap();
        assert_eq!(p.cut.len(), 1, "{:?}", p.cut);
        assert_eq!(p.cut[0].line, Some(2));
        assert_eq!(p.cut[0].message, "the last line has no newline: the file was cut off in the middle of a row");
        let short = format!("{CELLS}nvbandwidth,t,ce,,,,gpu0,gpu1,,,64,,,,5,GB/s\n");
        let p = parse(&short, "f.csv", "f").unwrap();
        assert_eq!(p.cut.len(), 1, "{:?}", p.cut);
        assert_eq!(p.cut[0].message, "16 cells where the header has 20: the row is cut short or damaged");
        let gpu_bw = gpu_bw_header() + "h2d,host,0,pinned,,32000000,100,3200000000,0.128000000,gpu_events,25.00,GB/s";
        let p = parse(&gpu_bw, "g.csv", "g").unwrap();
        assert_eq!(p.cut[0].message, "the last line has no newline: the file was cut off in the middle of a row");
        // As commbench's own reader says it.
        let own = super::super::csv_input::parse("benchmark,size_bytes,avg_lat_us\nosu_latency,1,2", "o.csv", "o");
        assert_eq!(own.unwrap().cut[0].message, p.cut[0].message);
    }
}
