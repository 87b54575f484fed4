use super::chart::{render, ChartError, PALETTE};
use super::*;
use crate::compare::model::{RunInfo, SizeRow};

fn bw_table(label: &str, pts: &[(u64, f64)]) -> Table {
    Table {
        benchmark: "osu_bw".into(),
        datatype: Some("MPI_CHAR".into()),
        sized: true,
        points: pts.iter().map(|&(size, v)| SizeRow { size, bw_mbps: Some(v), ..SizeRow::default() }).collect(),
        path: format!("{label}.csv"),
        run_label: label.into(),
        run: Some(RunInfo {
            hosts: vec!["nodeA".into(), "nodeB".into()],
            mpi_library: Some("Open MPI v4.1.4".into()),
            ..RunInfo::default()
        }),
        ..Table::default()
    }
}

fn lat_table(label: &str, pts: &[(u64, f64)]) -> Table {
    Table {
        benchmark: "osu_latency".into(),
        sized: true,
        points: pts.iter().map(|&(size, v)| SizeRow { size, latency_us: Some(v), ..SizeRow::default() }).collect(),
        path: format!("{label}.txt"),
        osu_version: Some("5.6.2".into()),
        run_label: label.into(),
        ..Table::default()
    }
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Polylines drawn in `colour` at stroke width 2 (the series lines), by
/// their number of points.
fn series_lines(doc: &roxmltree::Document, colour: &str) -> Vec<usize> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .filter(|n| n.attribute("stroke").is_some_and(|s| s.eq_ignore_ascii_case(colour)))
        .filter(|n| n.attribute("stroke-width") == Some("2"))
        .map(|n| n.attribute("points").unwrap_or("").split_whitespace().count())
        .collect()
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn bandwidth_chart_has_one_line_per_run_and_the_reference() {
    let runs = [
        bw_table("run1", &[(1, 10.0), (1024, 2000.0), (4 << 20, 12000.0)]),
        bw_table("run2", &[(1, 11.0), (1024, 2100.0), (4 << 20, 11000.0)]),
    ];
    let reference = [bw_table("hdr", &[(1, 3.9), (1024, 3103.96), (4 << 20, 24636.01)])];
    let (r, f): (Vec<&Table>, Vec<&Table>) = (runs.iter().collect(), reference.iter().collect());
    let mut notes = Vec::new();
    let spec = chart_spec("osu_bw", &r, &f, &mut notes).unwrap();
    assert_eq!(spec.metric, Quantity::Bandwidth);
    assert_eq!(spec.lines.len(), 3);
    assert!(spec.lines[2].reference);
    assert!(spec.subtitle.contains("hosts: nodeA, nodeB") && spec.subtitle.contains("MPI: Open MPI v4.1.4"));
    let svg = render(&spec).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert_eq!(doc.root_element().attribute("width"), Some("1100"));
    assert_eq!(series_lines(&doc, &hex(PALETTE[0])), [3]);
    assert_eq!(series_lines(&doc, &hex(PALETTE[1])), [3]);
    // The reference is dashed: several short black segments of width 2.
    assert!(series_lines(&doc, "#000000").len() > 3);
    let t = texts(&doc);
    for want in
        ["osu_bw: bandwidth against message size (MPI_CHAR)", "run1", "run2", "reference (hdr)", "1", "1K", "4M"]
    {
        assert!(t.iter().any(|s| s == want), "no text '{want}' in {t:?}");
    }
    assert!(t.iter().any(|s| s.starts_with("bandwidth (MB/s")));
}

#[test]
fn latency_chart_is_log_and_leaves_out_size_zero() {
    let runs = [lat_table("osu5", &[(0, 1.07), (1, 1.07), (8192, 3.44), (4 << 20, 175.5)])];
    let r: Vec<&Table> = runs.iter().collect();
    let mut notes = Vec::new();
    let spec = chart_spec("osu_latency", &r, &[], &mut notes).unwrap();
    assert_eq!(spec.lines[0].points.len(), 3);
    assert!(notes[0].message.contains("size 0"));
    assert_eq!(spec.title, "osu_latency: latency against message size");
    let svg = render(&spec).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(series_lines(&doc, &hex(PALETTE[0])), [3]);
    let t = texts(&doc);
    assert!(t.iter().any(|s| s == "latency (us, log scale)"), "{t:?}");
    assert!(t.iter().any(|s| s == "16K") && t.iter().any(|s| s == "4M"));
}

/// A run with per-iteration spreads gets a shaded p10–p90 band in its
/// colour, behind its line: a latency band scales with the iteration time,
/// a bandwidth band with its inverse. The reference and a run without
/// spreads get none.
#[test]
fn runs_with_spreads_get_a_p10_p90_band() {
    let mut lat = lat_table("noisy", &[(1, 2.0), (1024, 4.0), (4096, 8.0)]);
    for p in &mut lat.points {
        p.time_band = Some((0.5, 1.5));
    }
    let plain = lat_table("plain", &[(1, 1.0), (1024, 2.0), (4096, 3.0)]);
    let r = [&lat, &plain];
    let spec = chart_spec("osu_latency", &r, &[], &mut Vec::new()).unwrap();
    assert_eq!(spec.lines[0].band, [(1, 1.0, 3.0), (1024, 2.0, 6.0), (4096, 4.0, 12.0)]);
    assert!(spec.lines[1].band.is_empty());
    assert!(spec.subtitle.contains("shaded: p10 to p90 per size"), "{}", spec.subtitle);
    let svg = render(&spec).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let bands: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.has_tag_name("polygon")).collect();
    assert_eq!(bands.len(), 1, "{svg}");
    assert!(bands[0].attribute("fill").is_some_and(|f| f.eq_ignore_ascii_case(&hex(PALETTE[0]))), "{svg}");
    assert_eq!(bands[0].attribute("opacity").or(bands[0].attribute("fill-opacity")), Some("0.18"));
    // Six corners: three p90s out, three p10s back.
    assert_eq!(bands[0].attribute("points").unwrap().split_whitespace().count(), 6);

    let mut bw = bw_table("run", &[(1, 10.0), (1024, 1000.0)]);
    for p in &mut bw.points {
        p.time_band = Some((0.8, 2.0));
    }
    let spec = chart_spec("osu_bw", &[&bw], &[], &mut Vec::new()).unwrap();
    assert_eq!(spec.lines[0].band, [(1, 5.0, 12.5), (1024, 500.0, 1250.0)]);
}

#[test]
fn barrier_chart_has_a_point_per_run() {
    let mut b = lat_table("b1", &[(0, 0.4)]);
    b.benchmark = "osu_barrier".into();
    b.sized = false;
    let mut reference = b.clone();
    reference.points[0].latency_us = Some(2.28);
    let r = [&b];
    let spec = chart_spec("osu_barrier", &r, &[&reference], &mut Vec::new()).unwrap();
    let svg = render(&spec).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let t = texts(&doc);
    assert!(t.iter().any(|s| s == "0.40") && t.iter().any(|s| s == "2.28"), "{t:?}");
}

#[test]
fn nothing_to_draw_is_none() {
    let t = Table {
        benchmark: "x".into(),
        sized: true,
        points: vec![SizeRow { size: 1, ..SizeRow::default() }],
        ..Table::default()
    };
    assert!(chart_spec("x", &[&t], &[], &mut Vec::new()).is_none());
}

const HEADER: &str = "benchmark,backend,datatype,size_bytes,bw_MBps,avg_lat_us";

#[test]
fn plot_run_dir_writes_one_svg_per_benchmark_of_a_suite_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lat_txt =
        "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n1   0.50\n2   0.60\n";
    std::fs::write(d.join("osu_latency.txt"), lat_txt).unwrap();
    let lat_csv = format!("{HEADER}\nosu_latency,mpi,MPI_CHAR,1,,0.5\nosu_latency,mpi,MPI_CHAR,2,,0.6\n");
    std::fs::write(d.join("osu_latency.csv"), lat_csv).unwrap();
    let record = r#"{"benchmark":"osu_latency","hosts":["n1","n2"],"mpi":{"library_version":"MPICH Version:\t4.0\nMPICH Release date: x"}}"#;
    std::fs::write(d.join("osu_latency.json"), record).unwrap();
    std::fs::write(
        d.join("osu_bw.txt"),
        "# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n1   5.0\n4   20.0\n",
    )
    .unwrap();
    std::fs::write(d.join("summary.md"), "# suite\n").unwrap();
    let files = plot_run_dir(d).unwrap();
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["osu_bw.svg", "osu_latency.svg"]);
    let svg = std::fs::read_to_string(d.join("osu_latency.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // The CSV and the text of the same run are one run, not two.
    assert_eq!(series_lines(&doc, &hex(PALETTE[0])), [2]);
    assert!(series_lines(&doc, &hex(PALETTE[1])).is_empty());
    assert!(
        texts(&doc).iter().any(|t| t.contains("hosts: n1, n2") && t.contains("MPI: MPICH Version:")),
        "{:?}",
        texts(&doc)
    );
}

#[test]
fn plot_run_dir_of_an_empty_folder_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(plot_run_dir(dir.path()), Err(PlotError::Input(InputError::Empty { .. }))));
    assert!(matches!(plot_run_dir(&dir.path().join("nope")), Err(PlotError::Input(InputError::Io { .. }))));
}

#[test]
fn values_that_are_not_positive_are_left_out() {
    let mut b = lat_table("b1", &[(0, 0.0)]);
    b.sized = false;
    assert!(chart_spec("osu_barrier", &[&b], &[], &mut Vec::new()).is_none());
    let t = lat_table("l", &[(1, -1.0), (2, 0.0), (4, 2.0)]);
    let spec = chart_spec("osu_latency", &[&t], &[], &mut Vec::new()).unwrap();
    assert_eq!(spec.lines[0].points, [(4, 2.0)]);
    assert!(roxmltree::Document::parse(&render(&spec).unwrap()).is_ok());
}

#[test]
fn a_chart_without_points_says_why() {
    let t = lat_table("l", &[(4, 2.0)]);
    let mut spec = chart_spec("osu_latency", &[&t], &[], &mut Vec::new()).unwrap();
    spec.lines[0].points.clear();
    assert_eq!(render(&spec), Err(ChartError::NoSizes));
    let e = PlotError::Draw { benchmark: "osu_latency".into(), source: ChartError::NoSizes };
    assert_eq!(e.to_string(), "osu_latency: cannot draw the chart: no positive message sizes to draw");
    spec.lines[0].points.push((4, -1.0));
    assert_eq!(render(&spec).unwrap_err().to_string(), "no positive values to draw");
}

#[test]
fn a_benchmark_with_nothing_to_draw_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("osu_barrier.txt"), "# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n  0.00\n")
        .unwrap();
    std::fs::write(d.join("osu_bw.txt"), "# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n1   5.0\n")
        .unwrap();
    let files = plot_run_dir(d).unwrap();
    assert_eq!(files, [d.join("osu_bw.svg")]);
}

/// A benchmark name read from a CSV never reaches outside `--out`: `../`
/// and absolute names become one plain name inside it (a note says so),
/// and two names that reduce to one get two charts.
#[test]
fn benchmark_names_from_input_stay_inside_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a/b");
    std::fs::create_dir_all(&out).unwrap();
    let victim = dir.path().join("victim.svg");
    std::fs::write(&victim, "keep").unwrap();
    let named = |bench: &str| Table { benchmark: bench.into(), ..bw_table(bench, &[(1, 5.0), (2, 6.0)]) };
    let runs = [named("../../x"), named(&victim.with_extension("").display().to_string()), named("__.._x")];
    let mut notes = Vec::new();
    let files = write_charts(&runs, &[], &out, &mut notes).unwrap();
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert!(files.iter().all(|f| f.parent() == Some(out.as_path())), "{files:?}");
    assert_eq!(names[0], "___.._x.svg");
    assert!(names[1].ends_with("_victim.svg") && !names[1].starts_with('.'), "{names:?}");
    assert_eq!(names[2], "__.._x.svg");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "nothing written beside --out");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].message.starts_with("the benchmark name is not a plain file name: its chart is ___.._x.svg"));
    // Reduced to the same name: the second gets `_2`.
    let mut notes = Vec::new();
    let files = write_charts(&[named("a/b"), named("a_b")], &[], &out, &mut notes).unwrap();
    assert_eq!(files, [out.join("a_b.svg"), out.join("a_b_2.svg")]);
}

/// A subnormal among valid values once looped forever on the log axis:
/// values no measurement gives are left out with a note, and the chart of
/// the rest is drawn at once, down to the extremes that are plausible.
#[test]
fn implausible_values_are_left_out_with_a_note() {
    let t = lat_table("l", &[(1, 2.0), (2, 1e-310), (4, 3.0), (8, 1e308), (16, f64::MIN_POSITIVE)]);
    let mut notes = Vec::new();
    let spec = chart_spec("osu_latency", &[&t], &[], &mut notes).unwrap();
    assert_eq!(spec.lines[0].points, [(1, 2.0), (4, 3.0)]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        notes[0].message,
        "latency 1e-310 at size 2 is not a plausible latency (below 1e-9 us) (and 2 more): left out of the chart of 'l'"
    );
    let start = std::time::Instant::now();
    let extremes = lat_table("e", &[(1, 1e-9), (2, 1e12)]);
    let spec = chart_spec("osu_latency", &[&extremes], &[], &mut Vec::new()).unwrap();
    assert!(roxmltree::Document::parse(&render(&spec).unwrap()).is_ok());
    let wide = bw_table("w", &[(1, 1e-9), (2, 1e12)]);
    assert!(render(&chart_spec("osu_bw", &[&wide], &[], &mut Vec::new()).unwrap()).is_ok());
    assert!(start.elapsed() < crate::procs::under_load(std::time::Duration::from_secs(5)));
}
