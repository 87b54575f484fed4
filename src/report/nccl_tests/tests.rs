//! Checks against nccl-tests v2.19.6: the expected lines were produced by
//! running its printf format strings (with the values below) through a
//! C-compatible printf, and the seed row comes from a published run.

use super::*;

/// The documented column widths of a result row, left to right.
const ROW_WIDTHS: [usize; 13] = [12, 12, 8, 6, 6, 7, 6, 6, 6, 7, 6, 6, 6];

/// A row built straight from the documented widths: each token
/// right-aligned in its column, columns two spaces apart; `N/A` is printed
/// five wide in nccl-tests' source, one less than its column.
fn by_widths(tokens: &[&str]) -> String {
    assert_eq!(tokens.len(), ROW_WIDTHS.len());
    let cols: Vec<String> = tokens
        .iter()
        .zip(ROW_WIDTHS)
        .map(|(&t, w)| if t == "N/A" { format!("{t:>5}") } else { format!("{t:>w$}") })
        .collect();
    cols.join("  ")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn bus_factors_for_one_two_and_eight_ranks() {
    use Collective::*;
    let cases = [
        (AllReduce, [0.0, 1.0, 1.75]),
        (AllGather, [0.0, 0.5, 0.875]),
        (ReduceScatter, [0.0, 0.5, 0.875]),
        (AllToAll, [0.0, 0.5, 0.875]),
        (Broadcast, [1.0, 1.0, 1.0]),
        (Reduce, [1.0, 1.0, 1.0]),
        (SendRecv, [1.0, 1.0, 1.0]),
        (Gather, [0.0, 0.5, 0.875]),
        (Scatter, [0.0, 0.5, 0.875]),
        (HyperCube, [1.0, 1.0, 1.0]),
        (AllToAllV, [0.0, 0.5, 0.875]),
    ];
    for (coll, want) in cases {
        for (n, w) in [1, 2, 8].into_iter().zip(want) {
            assert!(close(coll.bus_factor(n), w), "{coll:?} n={n}: {} != {w}", coll.bus_factor(n));
        }
        assert_eq!(coll.bus_factor(0), 0.0, "{coll:?} with no ranks");
    }
}

#[test]
fn algbw_is_decimal_gigabytes_per_second() {
    // 1 MiB in 100 us.
    let algbw = algbw_gbs(1 << 20, 100e-6);
    assert!(close(algbw, 10.48576), "{algbw}");
    assert!(close(Collective::AllReduce.busbw(algbw, 2), 10.48576));
    assert!(close(Collective::AllReduce.busbw(algbw, 4), 10.48576 * 1.5));
    assert!(close(algbw_gbs(2_000_000_000, 2.0), 1.0));
    // No time at all is not a panic.
    assert!(algbw_gbs(8, 0.0).is_infinite());
}

#[test]
fn data_bytes_count_every_rank_share_where_nccl_tests_does() {
    assert_eq!(Collective::AllReduce.data_bytes(1000, 4, 8), 4000);
    assert_eq!(Collective::Broadcast.data_bytes(1000, 4, 8), 4000);
    assert_eq!(Collective::SendRecv.data_bytes(1000, 4, 8), 4000);
    assert_eq!(Collective::AllGather.data_bytes(1000, 4, 8), 32000);
    assert_eq!(Collective::ReduceScatter.data_bytes(1000, 4, 8), 32000);
    assert_eq!(Collective::AllToAll.data_bytes(1000, 4, 8), 32000);
    assert_eq!(Collective::AllToAll.data_bytes(usize::MAX, 4, 8), usize::MAX);
}

#[test]
fn count_column_is_one_call_s_count() {
    for coll in Collective::ALL {
        for ranks in [1, 2, 3, 8] {
            let bytes = coll.data_bytes(1000, 4, ranks);
            assert_eq!(coll.count_column(bytes, 4, ranks), 1000, "{coll:?} at {ranks}");
        }
    }
    // A reduce-scatter of 10 elements on 4 ranks: 2 each (the first two
    // ranks hold one more).
    assert_eq!(Collective::ReduceScatter.count_column(40, 4, 4), 2);
    assert_eq!(Collective::AllReduce.count_column(40, 4, 4), 10);
    assert_eq!(Collective::Gather.count_column(7, 0, 0), 7, "no division by zero");
}

#[test]
fn cell_from_a_measurement() {
    let c = Cell::measured(Collective::AllGather, 8_000_000, 4, 1e-3, Some(0));
    assert!(close(c.time_us, 1000.0));
    assert!(close(c.algbw, 8.0));
    assert!(close(c.busbw, 6.0));
    assert_eq!(c.wrong, Some(0));
}

#[test]
fn labels_columns_follow_nccl_tests() {
    use Collective::*;
    let programs: Vec<&str> = Collective::ALL.iter().map(|c| c.program()).collect();
    assert_eq!(
        programs,
        [
            "all_reduce_perf",
            "all_gather_perf",
            "broadcast_perf",
            "reduce_scatter_perf",
            "reduce_perf",
            "alltoall_perf",
            "sendrecv_perf",
            "gather_perf",
            "scatter_perf",
            "hypercube_perf",
            "alltoallv_perf"
        ]
    );
    // nccl-tests' hypercube names no operation: an empty column.
    assert_eq!(HyperCube.redop_column("sum"), "");
    assert_eq!(HyperCube.root_column(3), -1);
    for c in [AllGather, AllToAll, AllToAllV, Broadcast, Gather, Scatter] {
        assert_eq!(c.redop_column("sum"), "none", "{c:?}");
    }
    for c in [AllReduce, ReduceScatter, Reduce, SendRecv] {
        assert_eq!(c.redop_column("max"), "max", "{c:?}");
    }
    for c in [AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv] {
        assert_eq!(c.root_column(3), -1, "{c:?}");
    }
    assert_eq!(Broadcast.root_column(3), 3);
    assert_eq!(Reduce.root_column(0), 0);
    assert_eq!(Reduce.root_column(usize::MAX), i64::MAX);
}

#[test]
fn fit_at_the_boundaries() {
    // (value, width 6, width 7): what nccl-tests' column fitting prints
    // (short entries are right-aligned before comparing).
    let cases: [(f64, &str, &str); 20] = [
        (0.0, "  0.00", "   0.00"),
        (9.99, "  9.99", "   9.99"),
        // 9.995 is stored a little below, 0.005 a little above.
        (9.995, "  9.99", "   9.99"),
        (0.005, "  0.01", "   0.01"),
        (0.125, "  0.12", "   0.12"),
        (99.99, " 99.99", "  99.99"),
        (999.99, "999.99", " 999.99"),
        (999.995, "1000.0", "1000.00"),
        (3837.4, "3837.4", "3837.40"),
        (9999.94, "9999.9", "9999.94"),
        // Rounding to one decimal makes seven characters: none left.
        (9999.99, " 10000", "9999.99"),
        (99999.9, "100000", "99999.9"),
        (999999.4, "999999", " 999999"),
        (999999.5, " 1e+06", "1000000"),
        (999999.99, " 1e+06", "1000000"),
        (9999999.4, " 1e+07", "9999999"),
        (1e7, " 1e+07", "1.0e+07"),
        (12345678.0, " 1e+07", "1.2e+07"),
        (1e-7, "  0.00", "   0.00"),
        (1e99, "1e+99", "1.0e+99"),
    ];
    for (v, w6, w7) in cases {
        assert_eq!(fit(v, 6), format!("{w6:>6}"), "{v} at 6");
        assert_eq!(fit(v, 7), format!("{w7:>7}"), "{v} at 7");
    }
}

#[test]
fn fit_without_a_number_to_print() {
    assert_eq!(fit(f64::NAN, 6), "   nan");
    assert_eq!(fit(f64::INFINITY, 7), "    inf");
    assert_eq!(fit(f64::NEG_INFINITY, 6), "  -inf");
    // Too wide even as an exponent: longer than the column, never cut.
    assert_eq!(fit(1e100, 7), "1.0e+100");
    assert_eq!(fit(-1e7, 6), "-1e+07");
}

#[test]
fn general_form_like_printf_g() {
    let cases: [(f64, &str); 13] = [
        (0.0, "0"),
        (1.0, "1"),
        (999999.0, "999999"),
        (1e6, "1e+06"),
        (1234567.0, "1.23457e+06"),
        (9999995.0, "1e+07"),
        (864.9, "864.9"),
        (12345.678, "12345.7"),
        (123456.5, "123456"),
        (0.0001, "0.0001"),
        (1e-5, "1e-05"),
        (2.5e-7, "2.5e-07"),
        (1e16, "1e+16"),
    ];
    for (v, want) in cases {
        assert_eq!(c_general(v), want, "{v}");
    }
    assert_eq!(c_general(f64::NAN), "nan");
}

#[test]
fn header_lines() {
    assert_eq!(
        header(false, false, false),
        [
            "#",
            "#                                                              out-of-place                       \
             in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   \
             busbw  #wrong ",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  \
             (GB/s)         ",
        ]
    );
}

/// `-S 1`: nccl-tests' `%*s` after the last column's trailing space, 19
/// wide, holds the column's name and its strftime format; each row ends
/// with the local time in 21 characters.
#[test]
fn timestamps_add_a_column_after_the_in_place_cell() {
    let plain = header(false, false, false);
    let stamped = header(true, false, false);
    assert_eq!(stamped[..2], plain[..2]);
    assert_eq!(stamped[2], format!("{}          timestamp", plain[2]));
    assert_eq!(stamped[3], format!("{}  %Y-%m-%d %H:%M:%S", plain[3]));
    assert_eq!(timestamp_cell("2026-12-05 21:58:07"), "  2026-12-05 21:58:07");
    // -C 1 renames both time columns, each still ending where its values
    // end.
    let cpu = header(false, true, false);
    assert_eq!(cpu[2], plain[2].replace("     time", "  cputime"));
    assert_eq!((cpu[0].as_str(), &cpu[1], &cpu[3]), (plain[0].as_str(), &plain[1], &plain[3]));
}

/// `-I 1`: the group line names both placements "(+ per-iteration)" and
/// each placement has four more columns, 7 wide (nccl-tests' format
/// strings, read from its util.cu); rows carry them after each cell.
#[test]
fn per_iteration_columns_follow_each_cell() {
    let h = header(false, false, true);
    assert_eq!(
        h[1..],
        [
            format!("#{:65}out-of-place (+ per-iteration){:32}in-place (+ per-iteration)", "", ""),
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    \
             i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% "
                .to_string(),
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     \
             (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%) "
                .to_string(),
        ]
    );
    let stats = crate::stats::iterations::IterationStats::of(&[10e-6, 30e-6, 20e-6]);
    assert_eq!(iteration_columns(&stats), "    10.00    30.00    30.00    40.82");
    let labels = RowLabels { size: 8, count: 2, type_name: "float", redop: "sum", root: -1 };
    let cell = Cell { time_us: 20.0, algbw: 0.0, busbw: 0.0, wrong: Some(0) };
    let cols = iteration_columns(&stats);
    let line = row_around(&labels, [("", &cell, &cols), ("", &cell, &cols)]);
    let plain = row(&labels, &cell, &cell);
    let split = plain.len() - cell_columns(&cell).len();
    assert_eq!(line, format!("{}{cols}{}{cols}", &plain[..split], &plain[split..]));
    // Every column still ends under its name.
    let ends = |s: &str| -> Vec<usize> {
        let b = s.as_bytes();
        (0..b.len()).filter(|&i| b[i] != b' ' && b.get(i + 1).is_none_or(|&c| c == b' ')).map(|i| i + 1).collect()
    };
    assert_eq!(ends(h[2].trim_end())[1..], ends(&line));
    // The preamble's line, with and without a skip.
    let settings = Settings { per_iteration: Some(0), ..alltoall_settings() };
    let line = "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows ";
    assert_eq!(preamble("x", &settings)[2], line);
    let skipping = preamble("x", &Settings { per_iteration: Some(3), ..settings });
    assert_eq!(
        skipping[2],
        "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows; summary skips first 3 iterations "
    );
}

/// `-M 1`'s line, with nccl-tests' units and decimals (its util.cu's
/// rule: 1024-based, 2 decimals below 10, 1 below 100, none above).
#[test]
fn memory_report_line() {
    let cases = [
        (0, "0.00 B"),
        (1023, "1023 B"),
        (1024, "1.00 KB"),
        (15 << 20, "15.0 MB"),
        (600 << 20, "600 MB"),
        (3 << 30, "3.00 GB"),
        (-(2 << 20), "-2.00 MB"),
    ];
    for (bytes, want) in cases {
        assert_eq!(memory_amount(bytes), want, "{bytes}");
    }
    let usage = crate::report::MemoryUsage { init: 512 << 20, buffers: 2 << 30, collective: 0 };
    assert_eq!(
        memory_line(&usage),
        "# GPU memory usage     : Initialization 512 MB | User-Allocated 2.00 GB | Collective 0.00 B | Total  2.50 GB"
    );
}

#[test]
fn header_names_end_where_row_columns_end() {
    let names = &header(false, false, false)[2];
    let row = by_widths(&["1"; 13]);
    // Every column of the row ends under the last letter of its name.
    let ends = |s: &str| -> Vec<usize> {
        let b = s.as_bytes();
        (0..b.len()).filter(|&i| b[i] != b' ' && b.get(i + 1).is_none_or(|&c| c == b' ')).map(|i| i + 1).collect()
    };
    // (The first end in the names line is the `#`.)
    assert_eq!(ends(names.trim_end())[1..], ends(&row));
}

/// The alltoall row of the seed run (8 single-rank processes, so busbw 0).
fn seed_row() -> String {
    let labels = RowLabels { size: 33554432, count: 8388608, type_name: "float", redop: "none", root: -1 };
    let oop = Cell { time_us: 38.80, algbw: 864.90, busbw: 0.0, wrong: Some(0) };
    let ip = Cell { time_us: 8.74, algbw: 3837.40, busbw: 0.0, wrong: None };
    row(&labels, &oop, &ip)
}

#[test]
fn seed_row_tokens_and_layout() {
    let line = seed_row();
    // The published run:
    // 33554432 8388608 float none -1 38.80 864.90 0.00 0 8.74 3837.40 0.00 N/A
    // It predates v2.19.6, which fits bandwidths into six characters; the
    // old `%6.2f` let 3837.40 run over. Every other token is the same.
    let tokens: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        tokens,
        ["33554432", "8388608", "float", "none", "-1", "38.80", "864.90", "0.00", "0", "8.74", "3837.4", "0.00", "N/A"]
    );
    assert_eq!(line, by_widths(&tokens));
    assert_eq!(
        line,
        "    33554432       8388608     float    none      -1    38.80  864.90    0.00       0     8.74  3837.4    \
         0.00    N/A"
    );
}

#[test]
fn seed_footer() {
    let mut t = Totals::default();
    t.add(&Cell { time_us: 38.80, algbw: 864.90, busbw: 0.0, wrong: Some(0) });
    t.add(&Cell { time_us: 8.74, algbw: 3837.40, busbw: 0.0, wrong: None });
    assert_eq!(
        footer(&t, "alltoall_perf", None),
        [
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 0 ",
            "#",
            "# Collective test concluded: alltoall_perf",
            "#",
            "",
        ]
    );
}

#[test]
fn two_rank_allreduce_row() {
    let coll = Collective::AllReduce;
    let bytes = coll.data_bytes(262144, 4, 2);
    assert_eq!(bytes, 1 << 20);
    let oop = Cell::measured(coll, bytes, 2, 100e-6, Some(0));
    let ip = Cell::measured(coll, bytes, 2, 100e-6, Some(1234567));
    let labels = RowLabels {
        size: bytes,
        count: 262144,
        type_name: "float",
        redop: coll.redop_column("sum"),
        root: coll.root_column(0),
    };
    let line = row(&labels, &oop, &ip);
    assert_eq!(
        line,
        "     1048576        262144     float     sum      -1   100.00   10.49   10.49       0   100.00   10.49   \
         10.49  1.23457e+06"
    );
}

#[test]
fn footer_average_covers_every_cell_and_failures_show() {
    let mut t = Totals::default();
    for (busbw, wrong) in [(10.48576, Some(0)), (20.0, Some(3)), (3.5, None), (0.25, Some(1))] {
        t.add(&Cell { time_us: 1.0, algbw: busbw, busbw, wrong });
    }
    assert_eq!(t.cells, 4);
    assert_eq!(t.out_of_bounds, 2);
    let lines = footer(&t, "all_reduce_perf", Some(true));
    assert_eq!(lines[0], "# Out of bounds values : 2 FAILED");
    assert_eq!(lines[1], "# Avg bus bandwidth    : 8.55894 FAILED");
    assert_eq!(footer(&t, "all_reduce_perf", Some(false))[1], "# Avg bus bandwidth    : 8.55894 OK");
    // No cells: nothing to average.
    assert_eq!(footer(&Totals::default(), "x", None)[1], "# Avg bus bandwidth    : nan ");
}

/// The preamble's settings of an alltoall_perf run of 32 MiB in 1 MiB
/// steps, 5 warm-up and 20 timed iterations.
fn alltoall_settings() -> Settings {
    Settings {
        threads: 1,
        gpus: 1,
        min_bytes: 33554432,
        max_bytes: 33554432,
        step: Step::Bytes(1048576),
        warmup_iters: 5,
        iters: 20,
        agg_iters: 1,
        validation: 1,
        graph: 0,
        parallel_init: false,
        unalign: 0,
        blocking: Blocking::None,
        per_iteration: None,
    }
}

#[test]
fn preamble_and_devices() {
    let settings = alltoall_settings();
    assert_eq!(
        preamble("alltoall_perf", &settings),
        [
            "# Collective test starting: alltoall_perf",
            "# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 1048576(bytes) warmup iters: 5 iters: 20 \
             agg iters: 1 validation: 1 graph: 0 unalign: 0",
            "#",
        ]
    );
    let factor = Settings { step: Step::Factor(2), ..settings };
    assert!(preamble("x", &factor)[1].contains(" step: 2(factor) "));
    // -z 1..3: one more line before the `#`, as nccl-tests' format strings.
    for (blocking, line) in [
        (Blocking::WaitAndBarrier, "# Blocking Enabled: wait and barrier after each inner iteration (-m) "),
        (Blocking::Wait, "# Blocking Enabled: wait after each inner iteration (-m), no barrier "),
        (
            Blocking::WaitEachGroupBarrierUntimed,
            "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier ",
        ),
    ] {
        let lines = preamble("x", &Settings { blocking, ..settings });
        assert_eq!(&lines[2..], [line, "#"], "{blocking:?}");
    }
    // -p 1: its line after the blocking one.
    let lines = preamble("x", &Settings { parallel_init: true, blocking: Blocking::Wait, ..settings });
    assert_eq!(
        &lines[2..],
        [
            "# Blocking Enabled: wait after each inner iteration (-m), no barrier ",
            "# Parallel Init Enabled: threads call into NcclInitRank concurrently ",
            "#"
        ]
    );

    let h100 = Device {
        rank: 0,
        group: 0,
        pid: 384590,
        host: "h100-8way".into(),
        device: 0,
        pci_domain: 0,
        pci_bus: 0x1b,
        pci_device: 0,
        name: "NVIDIA H100 80GB HBM3".into(),
    };
    let wide = Device {
        rank: 12,
        group: 3,
        pid: 1234567,
        host: "a-much-longer-hostname".into(),
        device: 7,
        pci_domain: 1,
        pci_bus: 0x4e,
        pci_device: 0,
        name: "NVIDIA H200".into(),
    };
    assert_eq!(
        devices(&[h100, wide]),
        [
            "# Using devices",
            "#  Rank  0 Group  0 Pid 384590 on  h100-8way device  0 [0000:1b:00] NVIDIA H100 80GB HBM3",
            "#  Rank 12 Group  3 Pid 1234567 on a-much-longer-hostname device  7 [0001:4e:00] NVIDIA H200",
        ]
    );
}

#[test]
fn unchecked_rows_shift_after_each_na() {
    // With `-c 0` both cells say N/A; each one is a character short, so the
    // in-place group starts one character early and the line ends two early.
    let labels = RowLabels { size: 8, count: 2, type_name: "float", redop: "sum", root: -1 };
    let oop = Cell { time_us: 12.34, algbw: 0.0006, busbw: 0.0012, wrong: None };
    let ip = Cell { time_us: 12000.5, ..oop };
    let line = row(&labels, &oop, &ip);
    assert_eq!(
        line,
        "           8             2     float     sum      -1    12.34    0.00    0.00    N/A  12000.5    0.00    \
         0.00    N/A"
    );
    assert_eq!(line.len(), 116);
}

/// nccl-tests' memory rule, worked by hand from its formula: a reserve of
/// 1 GiB per 16 GiB (4 at most) and 1 GiB more, the rest over three
/// buffers with the check and two without.
#[test]
fn the_largest_size_the_gpu_memory_allows() {
    const GIB: u64 = 1 << 30;
    assert_eq!(gpu_max_bytes(16 * GIB, true), Some(14 * GIB / 3));
    assert_eq!(gpu_max_bytes(16 * GIB, true), Some(5_010_795_178));
    assert_eq!(gpu_max_bytes(16 * GIB, false), Some(7 * GIB));
    assert_eq!(gpu_max_bytes(32 * GIB, true), Some(29 * GIB / 3));
    // From 64 GiB the reserve stays at 4 GiB.
    assert_eq!(gpu_max_bytes(80 * GIB, true), Some(25 * GIB));
    assert_eq!(gpu_max_bytes(141 * GIB, false), Some(68 * GIB));
    // One byte over 16 GiB reserves 2.
    assert_eq!(gpu_max_bytes(16 * GIB + 1, false), Some(6_979_321_856));
    // Nothing left: 0; less than nothing: nccl-tests' arithmetic wraps.
    assert_eq!(gpu_max_bytes(2 * GIB, true), Some(0));
    assert_eq!(gpu_max_bytes(GIB, true), None);
    assert_eq!(
        lowered_max_lines(5_010_795_178),
        ["#".to_string(), "# Reducing maxBytes to 5010795178 due to memory limitation".to_string()]
    );
}

/// The least GPU memory a sweep needs is where nccl-tests stops lowering
/// it: enough there, too little one byte below.
#[test]
fn the_gpu_memory_a_largest_size_needs() {
    const GIB: u64 = 1 << 30;
    for check in [true, false] {
        for max in [0, 1, 8, 1 << 20, 4 * GIB, 5 * GIB, 8 * GIB, 16 * GIB, 5_010_795_178, 40 * GIB] {
            let need = gpu_bytes_needed(max, check);
            assert!(gpu_max_bytes(need, check).is_some_and(|m| m >= max), "{max} {check}: {need}");
            assert!(gpu_max_bytes(need - 1, check).is_none_or(|m| m < max), "{max} {check}: {need}");
        }
    }
    // 16 GiB with the check: 48 GiB of buffers, 1 GiB, and the 4 GiB reserve.
    assert_eq!(gpu_bytes_needed(16 * GIB, true), 53 * GIB);
    // 8 GiB: 24 + 1 + 2 GiB.
    assert_eq!(gpu_bytes_needed(8 * GIB, true), 27 * GIB);
}
