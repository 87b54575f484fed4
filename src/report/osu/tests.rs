//! Layout checks against OSU 7.4 output captured from the C binaries
//! (values fed in, so every byte must match).

use super::*;
use crate::bench::collective::allreduce::SPEC as ALLREDUCE;
use crate::bench::collective::barrier::SPEC as BARRIER;
use crate::bench::pt2pt::bw::SPEC as BW;
use crate::bench::pt2pt::latency::SPEC as LATENCY;
use crate::bench::pt2pt::mbw_mr::SPEC as MBW_MR;
use crate::bench::pt2pt::multi_lat::SPEC as MULTI_LAT;
use crate::datatype::Datatype;
use crate::stats::RankSpread;

fn layout() -> TableLayout {
    TableLayout {
        validation: false,
        tails: vec![],
        print_rate: true,
        vary_window: false,
        window: 64,
        pairs: 1,
        full: false,
        accel: None,
        backend: crate::options::Backend::Mpi,
        np: 2,
        one_sided: None,
        workers: None,
    }
}

fn lat(size: usize, v: f64) -> Row {
    Row { size, avg_lat_us: Some(v), ..Row::default() }
}

fn render(spec: &'static BenchSpec, layout: TableLayout, blocks: &[(Datatype, Vec<Row>)]) -> String {
    let mut t = OsuTable::new(Vec::new(), spec, layout);
    t.preamble().unwrap();
    for (dt, rows) in blocks {
        t.begin_datatype(*dt).unwrap();
        // A size's rows are one point (-V: one per window).
        for point in rows.chunk_by(|a, b| a.size == b.size) {
            t.point(point).unwrap();
        }
        t.end_datatype().unwrap();
    }
    String::from_utf8(t.into_inner()).unwrap()
}

#[test]
fn latency_plain() {
    let out = render(&LATENCY, layout(), &[(Datatype::Char, vec![lat(1, 0.27), lat(2, 0.16), lat(4194304, 12209.6)])]);
    assert_eq!(
        out,
        "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n\
         1                       0.27\n2                       0.16\n4194304             12209.60\n"
    );
}

#[test]
fn latency_validation_and_default_tails() {
    let mut l = layout();
    l.validation = true;
    l.tails = vec![50, 90, 99];
    let row = Row { validation: Some(true), tails: vec![(50, 0.38), (90, 0.46), (99, 0.57)], ..lat(1, 0.39) };
    let out = render(&LATENCY, l, &[(Datatype::Char, vec![row])]);
    let want = "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n\
# Size       Avg Latency(us)        Validation  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)\n\
1                       0.39              Pass              0.38              0.46              0.57\n";
    assert_eq!(out, want);
}

#[test]
fn single_digit_and_hundred_percentiles() {
    let mut l = layout();
    l.tails = vec![5, 95];
    let out = render(&LATENCY, l.clone(), &[(Datatype::Char, vec![])]);
    assert!(out.ends_with("# Size       Avg Latency(us)   P5 Tail Lat(us)  P95 Tail Lat(us)\n"), "{out}");
    l.tails = vec![1, 10, 100];
    let out = render(&LATENCY, l, &[(Datatype::Char, vec![])]);
    assert!(
        out.ends_with("# Size       Avg Latency(us)   P1 Tail Lat(us)  P10 Tail Lat(us)  P100 Tail Lat(us)\n"),
        "{out}"
    );
}

#[test]
fn bandwidth_tails_and_validation() {
    let mut l = layout();
    l.validation = true;
    l.tails = vec![50, 90, 99];
    let row = Row {
        size: 1,
        bw_mbps: Some(2.45),
        validation: Some(true),
        tails: vec![(50, 5.98), (90, 6.72), (99, 7.05)],
        ..Row::default()
    };
    let out = render(&BW, l, &[(Datatype::Char, vec![row])]);
    let want = "\n# OSU MPI Bandwidth Test v7.4\n# Datatype: MPI_CHAR.\n\
# Size      Bandwidth (MB/s)        Validation P50 Tail BW(MB/s) P90 Tail BW(MB/s) P99 Tail BW(MB/s)\n\
1                       2.45              Pass              5.98              6.72              7.05\n";
    assert_eq!(out, want);
}

#[test]
fn datatype_blocks() {
    let out = render(
        &LATENCY,
        layout(),
        &[(Datatype::Char, vec![lat(1, 1.29)]), (Datatype::Int, vec![lat(4, 0.41)]), (Datatype::Float, vec![])],
    );
    assert_eq!(
        out,
        "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n1                       1.29\n\
         # Datatype: MPI_INT.\n# Size       Avg Latency(us)\n4                       0.41\n\
         # Datatype: MPI_FLOAT.\n# Size       Avg Latency(us)\n"
    );
}

#[test]
fn multi_lat_title() {
    let out = render(&MULTI_LAT, layout(), &[]);
    assert_eq!(out, "\n# OSU MPI Multi Latency Test v7.4\n");
}

fn mbw(size: usize, bw: f64, rate: f64) -> Row {
    Row { size, bw_mbps: Some(bw), msg_rate: Some(rate), ..Row::default() }
}

#[test]
fn mbw_mr_layouts() {
    let out = render(&MBW_MR, layout(), &[(Datatype::Char, vec![mbw(1, 9.48, 9482745.85)])]);
    assert_eq!(
        out,
        "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# [ pairs: 1 ] [ window size: 64 ]\n\
         # Datatype: MPI_CHAR.\n# Size                  MB/s        Messages/s\n1                       9.48        9482745.85\n"
    );
    let mut l = layout();
    l.print_rate = false;
    l.window = 16;
    l.pairs = 2;
    let out = render(&MBW_MR, l, &[(Datatype::Char, vec![mbw(2, 17.42, 0.0)])]);
    assert_eq!(
        out,
        "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# [ pairs: 2 ] [ window size: 16 ]\n\
         # Datatype: MPI_CHAR.\n# Size                  MB/s\n2                      17.42\n"
    );
    let mut l = layout();
    l.tails = vec![50, 90, 99];
    let out = render(&MBW_MR, l, &[(Datatype::Char, vec![])]);
    assert!(out.ends_with(
        "# Size                  MB/s        Messages/s P50 Tail BW(MB/s) P90 Tail BW(MB/s) P99 Tail BW(MB/s)\n"
    ));
}

#[test]
fn mbw_mr_varied_window() {
    let mut l = layout();
    l.vary_window = true;
    let bws = [0.70, 1.81, 2.43, 4.11, 5.57, 3.63, 8.57, 8.07];
    let rates = [702049.99, 1808645.32, 2432646.11, 4109307.58, 5573941.82, 3632689.67, 8569898.23, 8074385.27];
    let rows: Vec<Row> = bws.iter().zip(rates).map(|(&b, r)| mbw(1, b, r)).collect();
    let out = render(&MBW_MR, l, &[(Datatype::Char, rows)]);
    let want = "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4\n# [ pairs: 1 ] [ window size: varied ]\n\n\
# Uni-directional Bandwidth (MB/sec)\n# Datatype: MPI_CHAR.\n\
#                 1           2           4           8          16          32          64         128\n\
1              0.70        1.81        2.43        4.11        5.57        3.63        8.57        8.07\n\n\
# Message Rate Profile\n\
#                 1           2           4           8          16          32          64         128\n\
1         702049.99  1808645.32  2432646.11  4109307.58  5573941.82  3632689.67  8569898.23  8074385.27\n";
    assert_eq!(out, want);
}

fn coll(size: usize, avg: f64, min: f64, max: f64, iterations: usize) -> Row {
    Row {
        size,
        avg_lat_us: Some(avg),
        spread: Some(RankSpread { fastest: (0, min), slowest: (1, max), first: min }),
        iterations,
        ..Row::default()
    }
}

#[test]
fn collective_full_validation_tails() {
    let mut l = layout();
    l.full = true;
    l.validation = true;
    l.tails = vec![50, 90, 99];
    let row = Row {
        validation: Some(false),
        tails: vec![(50, 0.64), (90, 0.80), (99, 0.96)],
        ..coll(16, 0.66, 0.63, 0.68, 100)
    };
    let out = render(&ALLREDUCE, l, &[(Datatype::Char, vec![row])]);
    let want = "\n# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_CHAR.\n\
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations        Validation  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)\n\
16                      0.66              0.63              0.68         100              Fail              0.64              0.80              0.96\n";
    assert_eq!(out, want);
}

#[test]
fn barrier_layouts() {
    let out = render(&BARRIER, layout(), &[(Datatype::Char, vec![coll(0, 0.65, 0.6, 0.7, 100)])]);
    assert_eq!(out, "\n# OSU MPI Barrier Latency Test v7.4\n# Avg Latency(us)\n             0.65\n");
    let mut l = layout();
    l.full = true;
    l.tails = vec![50, 90, 99];
    let row = Row { tails: vec![(50, 0.49), (90, 0.61), (99, 4.73)], ..coll(0, 0.66, 0.65, 0.66, 100) };
    let out = render(&BARRIER, l, &[(Datatype::Char, vec![row])]);
    let want = concat!(
        "\n# OSU MPI Barrier Latency Test v7.4\n",
        "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)\n",
        "             0.66              0.65              0.66         100              0.49              0.61              4.73\n"
    );
    assert_eq!(out, want);
}

/// OSU's NCCL point-to-point binaries (print_header): no title, the buffer
/// line, `Latency (us)` with a space, no `# Datatype:` line, size 0 shown.
#[test]
fn nccl_point_to_point() {
    let mut l = layout();
    l.backend = crate::options::Backend::Nccl;
    let out = render(&LATENCY, l.clone(), &[(Datatype::Char, vec![lat(0, 11.5), lat(1, 12.25)])]);
    assert_eq!(
        out,
        "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n# Size          Latency (us)\n\
         0                      11.50\n1                      12.25\n"
    );
    let bw = Row { size: 4, bw_mbps: Some(0.5), ..Row::default() };
    let out = render(&BW, l, &[(Datatype::Char, vec![bw])]);
    assert_eq!(
        out,
        "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n# Size      Bandwidth (MB/s)\n\
         4                       0.50\n"
    );
}

#[test]
fn titles_name_the_accelerator_and_nccl_where_osu_does() {
    use crate::bench::pt2pt::bibw::SPEC as BIBW;
    let cuda = Some(Accel::Cuda);
    assert_eq!(title_line(&BIBW, cuda, Backend::Mpi), "# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.4");
    assert_eq!(title_line(&ALLREDUCE, cuda, Backend::Mpi), "# OSU MPI-CUDA Allreduce Latency Test v7.4");
    assert_eq!(title_line(&MBW_MR, cuda, Backend::Mpi), "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4");
    assert_eq!(title_line(&MULTI_LAT, cuda, Backend::Mpi), "# OSU MPI Multi Latency Test v7.4");
    assert_eq!(title_line(&BIBW, None, Backend::Mpi), BIBW.title_line());
    assert_eq!(title_line(&ALLREDUCE, None, Backend::Nccl), "# OSU NCCL-CUDA Allreduce Latency Test v7.4");
}
