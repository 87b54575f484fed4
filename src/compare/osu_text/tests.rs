use super::*;

fn data(rel: &str) -> String {
    let p = format!("{}/tests/data/compare/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn golden(name: &str) -> String {
    let p = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn one(text: &str) -> Table {
    let p = parse(text, "t", "t");
    assert_eq!(p.tables.len(), 1, "{:?}", p.notes);
    p.tables.into_iter().next().unwrap()
}

#[test]
fn titles() {
    assert_eq!(parse_title("# OSU MPI Latency Test v5.6.2"), Some(("osu_latency".into(), "5.6.2".into())));
    assert_eq!(parse_title("# OSU MPI-CUDA Bandwidth Test v7.5"), Some(("osu_bw".into(), "7.5".into())));
    assert_eq!(parse_title(" OSU MPI Latency Test v7.2"), Some(("osu_latency".into(), "7.2".into())));
    assert_eq!(parse_title("\\# OSU MPI Multi Latency Test v7.1"), Some(("osu_multi_lat".into(), "7.1".into())));
    let mbw = "# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2";
    assert_eq!(parse_title(mbw).unwrap().0, "osu_mbw_mr");
    assert_eq!(parse_title("# OSU MPI Reduce_scatter Latency Test v5.7.1").unwrap().0, "osu_reduce_scatter");
    assert_eq!(parse_title("# OSU MPI Gatherv Latency Test v7.4").unwrap().0, "osu_gatherv");
    // One-sided titles name the call, not the API.
    assert_eq!(parse_title("# OSU MPI_Put Latency Test v7.4").unwrap().0, "osu_put_latency");
    assert_eq!(parse_title("# OSU MPI_Get latency Test v7.4").unwrap().0, "osu_get_latency");
    assert_eq!(parse_title("# OSU MPI_Put Bi-directional Bandwidth Test v7.4").unwrap().0, "osu_put_bibw");
    assert_eq!(parse_title("# OSU MPI_Get Bandwidth Test v7.4").unwrap().0, "osu_get_bw");
    for not in ["OSU 5.6.2", "OSU Point to Point Tests", "# OSU MPI Latency Test", "osu_latency -i 10000"] {
        assert_eq!(parse_title(not), None, "{not}");
    }
}

#[test]
fn headers() {
    use Column::*;
    assert_eq!(parse_header("Size Latency (us)"), Some(vec![Size, Latency]));
    assert_eq!(parse_header("Size                  MB/s        Messages/s"), Some(vec![Size, Bandwidth, MessageRate]));
    assert_eq!(
        parse_header("Avg Latency(us) Min Latency(us) Max Latency(us) Iterations"),
        Some(vec![Latency, MinLatency, MaxLatency, Iterations])
    );
    assert_eq!(
        parse_header("Size      Bandwidth (MB/s)        Validation P50 Tail BW(MB/s) P99 Tail BW(MB/s)"),
        Some(vec![Size, Bandwidth, Validation, Tail("P50".into()), Tail("P99".into())])
    );
    assert_eq!(parse_header("Size      Bandwidth (MB/s)     Transmit Size"), Some(vec![Size, Bandwidth, TransmitSize]));
    for not in
        ["Size", "stdout.txt", "./run_osu_bandwidth.sh $PBS_NODEFILE", "Datatype: MPI_CHAR.", "Latency (us) Size"]
    {
        assert_eq!(parse_header(not), None, "{not}");
    }
}

#[test]
fn rows_that_do_not_fit_say_why() {
    use Column::*;
    let cols = [Size, Bandwidth, MessageRate];
    assert_eq!(parse_row("8 1.5 2.5", &cols).unwrap().msg_rate, Some(2.5));
    assert!(parse_row("4194304 24561.79 5855.99OSU Collectives", &cols).unwrap_err().contains("4 cells"));
    assert!(parse_row("4194304 24561.79 5855.99OSU", &cols).unwrap_err().contains("not a number"));
    assert!(parse_row("1.5 2 3", &cols).unwrap_err().contains("whole number"));
    assert!(parse_row("1 nan 3", &cols).is_err());
    assert!(parse_row("1 2.0 Maybe", &[Size, Latency, Validation]).unwrap_err().contains("Pass or Fail"));
}

#[test]
fn seed_latency_bw_bibw() {
    for (file, bench, n, first, last) in [
        ("seed_osu_latency.txt", "osu_latency", 24, (0, 1.07), (4194304, 175.50)),
        ("seed_osu_bw.txt", "osu_bw", 23, (1, 3.90), (4194304, 24636.01)),
        ("seed_osu_bibw.txt", "osu_bibw", 23, (1, 5.82), (4194304, 48942.90)),
    ] {
        let p = parse(&data(file), file, "seed");
        assert!(p.notes.is_empty(), "{file}: {:?}", p.notes);
        let t = &p.tables[0];
        assert_eq!((p.tables.len(), t.benchmark.as_str(), t.osu_version.as_deref()), (1, bench, Some("5.6.2")));
        assert_eq!((t.datatype.as_deref(), t.datatype_key()), (None, "MPI_CHAR"));
        assert_eq!(t.points.len(), n, "{file}");
        let v = |p: &SizeRow| p.latency_us.or(p.bw_mbps).unwrap();
        assert_eq!((t.points[0].size, v(&t.points[0])), first);
        assert_eq!((t.points[n - 1].size, v(&t.points[n - 1])), last);
        assert_eq!(t.line, Some(3), "{file}: header line");
    }
}

#[test]
fn seed_mbw_mr_reports_the_glued_last_row() {
    let p = parse(&data("seed_osu_mbw_mr.txt"), "mbw", "seed");
    let t = &p.tables[0];
    assert_eq!((t.benchmark.as_str(), t.pairs, t.window.as_deref()), ("osu_mbw_mr", Some(64), Some("512")));
    assert_eq!(t.points.len(), 22);
    assert_eq!((t.points[0].bw_mbps, t.points[0].msg_rate), (Some(194.22), Some(194215337.24)));
    assert_eq!(t.points[21].size, 2097152);
    assert_eq!(p.notes.len(), 1);
    assert_eq!(p.notes[0].line, Some(27));
    assert!(p.notes[0].message.contains("5855.99OSU Collectives"), "{}", p.notes[0].message);
}

#[test]
fn seed_collectives() {
    let b = one(&data("seed_osu_barrier.txt"));
    assert_eq!((b.benchmark.as_str(), b.sized, b.points.len()), ("osu_barrier", false, 1));
    let p = &b.points[0];
    assert_eq!(
        (p.size, p.latency_us, p.min_lat_us, p.max_lat_us, p.iterations),
        (0, Some(2.28), Some(2.28), Some(2.28), Some(1000000))
    );
    let a = one(&data("seed_osu_allreduce.txt"));
    assert_eq!((a.benchmark.as_str(), a.points.len(), a.points[0].size), ("osu_allreduce", 19, 4));
    assert_eq!(
        (a.points[18].latency_us, a.points[18].max_lat_us, a.points[18].iterations),
        (Some(49.0), Some(49.01), Some(100000))
    );
    let g = one(&data("seed_osu_allgather.txt"));
    assert_eq!((g.benchmark.as_str(), g.points.len(), g.points[20].latency_us), ("osu_allgather", 21, Some(385.29)));
}

#[test]
fn whole_seed_document_gives_seven_outputs_and_reports_what_it_passed_over() {
    let p = parse(&data("seed_004_whole.txt"), "seed", "seed");
    let names: Vec<&str> = p.tables.iter().map(|t| t.benchmark.as_str()).collect();
    assert_eq!(
        names,
        ["osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr", "osu_barrier", "osu_allreduce", "osu_allgather"]
    );
    let counts: Vec<usize> = p.tables.iter().map(|t| t.points.len()).collect();
    assert_eq!(counts, [24, 23, 23, 22, 1, 19, 21]);
    // Prose lines that begin with a number while a table is open are
    // reported, never read as sizes.
    let said = |s: &str| p.notes.iter().any(|n| n.message.contains(s));
    assert!(said("5855.99OSU Collectives"));
    assert!(said("10000 iteration were used per test"));
    assert!(said("1 PPN"));
    assert!(p.notes.iter().all(|n| n.message.starts_with("not a data row")), "{:#?}", p.notes);
}

#[test]
fn published_outputs_of_many_versions() {
    // (file, benchmark, version, datatype, rows, first size)
    type Case<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, usize, u64);
    let cases: &[Case] = &[
        ("osu_latency_3.1.1_dockeribmpi-mvapich2.txt", "osu_latency", "3.1.1", None, 24, 0),
        ("osu_alltoall_4.2_ompiwww-ompi175rc1.txt", "osu_alltoall", "4.2", None, 21, 1),
        ("osu_latency_4.4.1_ompiwww-ompi185-cuda-DD.txt", "osu_latency", "4.4.1", None, 24, 0),
        ("osu_latency_5.0_libfabriccray859-srun-ofi.txt", "osu_latency", "5.0", None, 24, 0),
        ("osu_alltoall_5.3.2_mpich2530-f-banners.txt", "osu_alltoall", "5.3.2", None, 7, 2),
        ("osu_allreduce_5.6.2_mpich7448-aurora-ze-DD.txt", "osu_allreduce", "5.6.2", None, 1, 2048),
        ("osu_allgather_5.6.3_wukan-mpich332.txt", "osu_allgather", "5.6.3", None, 21, 1),
        ("osu_mbw_mr_5.7_abci-ompi405-cuda-DD.txt", "osu_mbw_mr", "5.7", None, 23, 1),
        ("osu_barrier_5.7.1_pkb-intelmpi.txt", "osu_barrier", "5.7.1", None, 1, 0),
        ("osu_allreduce_5.8_perfstudy-eks-flux.txt", "osu_allreduce", "5.8", None, 19, 4),
        ("osu_allreduce_5.8_perfstudy-hpcx-cuda-DD.txt", "osu_allreduce", "5.8", None, 19, 4),
        ("osu_barrier_5.8_usernetesazure-flux-ompi.txt", "osu_barrier", "5.8", None, 1, 0),
        ("osu_bw_5.9_ucx9237-ompi5-rocm-DD.txt", "osu_bw", "5.9", None, 23, 1),
        ("osu_bw_6.2_cscsdocs-mpich41.txt", "osu_bw", "6.2", None, 23, 1),
        ("osu_bcast_7.0_bacc-hpcx.txt", "osu_bcast", "7.0", None, 21, 1),
        ("osu_mbw_mr_7.1_shsdocs-craympich.txt", "osu_mbw_mr", "7.1", Some("MPI_CHAR"), 23, 1),
        ("osu_multi_lat_7.1_shsdocs-craympich.txt", "osu_multi_lat", "7.1", Some("MPI_CHAR"), 23, 1),
        ("osu_bw_7.2_eessi716-ompi415-cuda-DD.txt", "osu_bw", "7.2", Some("MPI_CHAR"), 26, 1),
        ("osu_latency_7.2_aksib-hpcx219-flux.txt", "osu_latency", "7.2", Some("MPI_CHAR"), 23, 1),
        ("osu_allreduce_7.4_extmpi-craympich-gh200-cuda-float-f.txt", "osu_allreduce", "7.4", Some("MPI_FLOAT"), 24, 8),
        ("osu_alltoall_7.5_cscsdocs-ompi508-validation.txt", "osu_alltoall", "7.5", Some("MPI_CHAR"), 21, 1),
        ("osu_alltoallv_7.5_mpich7601-aurora-f-z.txt", "osu_alltoallv", "7.5", Some("MPI_CHAR"), 1, 4096),
    ];
    for (file, bench, version, dt, rows, first) in cases {
        let p = parse(&data(&format!("published/{file}")), file, "x");
        assert!(p.notes.is_empty(), "{file}: {:?}", p.notes);
        assert_eq!(p.tables.len(), 1, "{file}");
        let t = &p.tables[0];
        assert_eq!(
            (t.benchmark.as_str(), t.osu_version.as_deref(), t.datatype.as_deref(), t.points.len(), t.points[0].size),
            (*bench, Some(*version), *dt, *rows, *first),
            "{file}"
        );
    }
    // Every stored output reads without a note.
    let dir = format!("{}/tests/data/compare/published", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "txt") {
            let p = parse(&std::fs::read_to_string(&path).unwrap(), "f", "x");
            assert!(p.tables.len() == 1 && p.notes.is_empty(), "{}: {:?}", path.display(), p.notes);
            n += 1;
        }
    }
    assert_eq!(n, 34);
}

#[test]
fn published_validation_and_tail_columns() {
    let t = one(&data("published/osu_bw_7.5_cscsdocs-ompi508-cuda-DD-validation.txt"));
    assert!(t.points.iter().all(|p| p.validation == Some(true)));
    let t = one(&data("published/osu_alltoallv_7.5_mpich7601-aurora-f-z.txt"));
    let tails: Vec<&str> = t.points[0].tails.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(tails, ["P50", "P90", "P99"]);
    assert_eq!(t.points[0].tails[2].1, 634.30);
    assert_eq!(t.points[0].iterations, Some(1000));
}

#[test]
fn osu_7_4_optional_columns() {
    // -T all: one table per datatype.
    let p = parse(&golden("latency_T_all.txt"), "g", "g");
    let dts: Vec<&str> = p.tables.iter().map(|t| t.datatype_key()).collect();
    assert_eq!(dts, ["MPI_CHAR", "MPI_INT", "MPI_FLOAT"]);
    assert_eq!(p.tables[1].points[0].size, 4);
    let p = parse(&golden("allreduce_T_all_f.txt"), "g", "g");
    assert_eq!(p.tables.len(), 3);
    assert_eq!(p.tables[2].points[1].iterations, Some(100));
    // -c and -z
    let t = one(&golden("bw_c_z.txt"));
    assert!(t.points.iter().all(|p| p.validation == Some(true) && p.tails.len() == 3 && p.bw_mbps.is_some()));
    let t = one(&golden("bcast_f_c_z.txt"));
    let p0 = &t.points[0];
    assert!(
        p0.min_lat_us.is_some() && p0.iterations == Some(100) && p0.validation == Some(true) && p0.tails.len() == 3
    );
    let t = one(&golden("latency_z5_95.txt"));
    assert_eq!(t.points[0].tails.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(), ["P5", "P95"]);
    let t = one(&golden("mbw_mr_z.txt"));
    assert!(t.points[0].msg_rate.is_some() && t.points[0].tails.len() == 3);
    let t = one(&golden("barrier_f_z.txt"));
    assert!(!t.sized && t.points[0].tails.len() == 3);
    let t = one(&golden("mbw_mr_c.txt"));
    assert_eq!((t.pairs, t.window.as_deref()), (Some(1), Some("64")));
}

#[test]
fn window_varied_matrix_is_reported_not_read() {
    let p = parse(&golden("mbw_mr_V_R0.txt"), "g", "g");
    assert!(p.tables.is_empty());
    assert!(p.notes.iter().any(|n| n.message.contains("-V")), "{:?}", p.notes);
    assert!(p.notes.iter().all(|n| !n.message.starts_with("not a data row")));
}

#[test]
fn banners_debug_lines_and_concatenated_outputs() {
    let text = "\
--------------------------------------------------------------------------
WARNING: There was an error initializing an OpenFabrics device.
  Local host:   node01
--------------------------------------------------------------------------
[1732960000.123456] [node01:1234 :0]     ucp_context.c:1177 UCX  WARN  network device 'mlx5_0:1' is not available
[0] MPI startup(): Intel(R) MPI Library, Version 2019 Update 6
# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       1.50
[node01:01234] mca_base_component_repository_open: unable to open mca_btl_openib
2                       1.60
DEBUG: progress thread woke up
4                       1.70

# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       1.40
2                       1.55
4                       1.75
[node01:01234] 1 more process has sent help message help-mpi-btl-openib.txt
# OSU MPI Bandwidth Test v7.4
# Datatype: MPI_CHAR.
# Size      Bandwidth (MB/s)
1                       2.00
2                       4.00
real    0m1.2s
";
    let p = parse(text, "mixed.txt", "mixed");
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    let summary: Vec<(&str, usize)> = p.tables.iter().map(|t| (t.benchmark.as_str(), t.points.len())).collect();
    assert_eq!(summary, [("osu_latency", 3), ("osu_latency", 3), ("osu_bw", 2)]);
    assert_eq!(p.tables[0].points[2].latency_us, Some(1.70));
    assert_eq!(p.tables[1].line, Some(18));
}

#[test]
fn title_without_table_and_header_without_title_are_reported() {
    let p = parse("# OSU MPI Latency Test v7.4\nmpirun: killed\n# OSU MPI Bandwidth Test v7.4\n", "f", "f");
    assert!(p.tables.is_empty());
    assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
    assert!(p.notes[0].message.contains("osu_latency title with no table"));
    let p = parse("# Size      Bandwidth (MB/s)\n1 2.0\n", "f", "f");
    assert!(p.tables.is_empty() && p.notes[0].message.contains("no OSU title"));
    let p = parse("# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n", "f", "f");
    assert!(p.notes[0].message.contains("no data rows"));
}

/// Device runs say so in a buffer line, or only in the title's API word
/// (collectives, and 7.5 pt2pt); 5.7 mbw_mr has a plain title and a
/// device buffer line. Everything else ran on host memory.
#[test]
fn memory_of_every_published_output() {
    let dir = format!("{}/tests/data/compare/published", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".txt") {
            continue;
        }
        let p = parse(&data(&format!("published/{name}")), &name, &name);
        let device = name.contains("-DD") || name.contains("cuda") || name.contains("-ze-");
        let want = if device { Memory::Device } else { Memory::Host };
        for t in &p.tables {
            assert_eq!(t.memory.as_ref().map(|m| m.memory), Some(want), "{name}");
            seen += 1;
        }
    }
    assert!(seen >= 30, "{seen}");
    let t = one("# OSU MPI-CUDA Bandwidth Test v7.4\n# Send Buffer on HOST (H) and Receive Buffer on HOST (H)\n# Size Bandwidth (MB/s)\n1 2.0\n");
    assert_eq!(t.memory.unwrap().memory, Memory::Host, "the buffer line wins over the title");
    let t = one("# OSU MPI Latency Test v7.4\n# Send Buffer on MANAGED (M) and Receive Buffer on DEVICE (D)\n# Size Latency (us)\n1 2.0\n");
    assert_eq!(t.memory.unwrap().memory, Memory::Device);
    assert!(one("# OSU MPI Latency Test v7.4\n# Size Latency (us)\n1 2.0\n").memory.unwrap().weak);
}

/// osu_init's line is one unsized point; OSU's congestion tables (titled
/// as osu_bw, MB/s under latency labels) read as bandwidth.
#[test]
fn start_up_and_congestion_outputs() {
    let t = one(&golden("init.txt"));
    assert_eq!((t.benchmark.as_str(), t.sized, t.np), ("osu_init", false, Some(2)));
    let p = &t.points[0];
    assert_eq!((p.latency_us, p.min_lat_us, p.max_lat_us), (Some(243_000.0), Some(242_000.0), Some(244_000.0)));
    let hello = parse(&golden("hello_np2.txt"), "t", "t");
    assert!(hello.tables.is_empty());
    let p = parse(&golden("bw_fan_out_z.txt"), "t", "t");
    let t = &p.tables[0];
    assert_eq!(t.benchmark, "osu_bw_fan");
    assert!(t.points.iter().all(|pt| pt.bw_mbps.is_some() && pt.latency_us.is_none() && pt.tails.len() == 3));
    assert!(p.notes.iter().any(|n| n.message.contains("congestion")));
}

/// The non-blocking collectives' tables: the overall time is the latency
/// compared; the other overlap columns are read past.
#[test]
fn nonblocking_overlap_tables() {
    let t = one(&golden("iallreduce_f_c_z_t4.txt"));
    assert_eq!(t.benchmark, "osu_iallreduce");
    assert_eq!(t.points.len(), 5);
    assert_eq!((t.points[0].size, t.points[0].latency_us), (1, Some(4.53)));
    assert_eq!(t.points[0].tails.len(), 3);
    let t = one(&golden("ibarrier.txt"));
    assert_eq!((t.benchmark.as_str(), t.sized), ("osu_ibarrier", false));
    assert_eq!(t.points.len(), 1);
    assert_eq!(t.points[0].latency_us, Some(4.29));
}

/// An output cut off inside its last row (no newline after it) is cut
/// short, as a CSV is: the row may have lost digits. A whole output
/// without a last newline after its table, or a last line that is no
/// data row, is not.
#[test]
fn a_last_row_without_its_newline_is_cut() {
    let whole = "# OSU MPI Latency Test v7.4\n# Size          Latency (us)\n1                       1.50\n4194304               1234.56\n";
    assert!(parse(whole, "w.txt", "w").cut.is_empty());
    let cut = parse(&whole[..whole.len() - 4], "c.txt", "c");
    assert_eq!(cut.cut.len(), 1, "{:?}", cut.cut);
    assert_eq!(cut.cut[0].line, Some(4));
    assert!(cut.cut[0].message.contains("cut off in the middle of a row"), "{}", cut.cut[0].message);
    // Cut before the value: the row does not fit, and is still cut.
    assert_eq!(parse(&whole[..whole.len() - 12], "c.txt", "c").cut.len(), 1);
    // A trailer line without a newline is no row of the table.
    assert!(parse(&format!("{whole}References"), "t.txt", "t").cut.is_empty());
    assert!(parse("# OSU MPI Latency Test v7.4\n# Size  Latency (us)", "h.txt", "h").cut.is_empty());
}
