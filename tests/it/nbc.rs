//! Non-blocking collectives (osu_iallreduce, osu_ibarrier, osu_ibcast,
//! osu_iallgather, osu_ialltoall, osu_ireduce, osu_igather, osu_iscatter,
//! osu_ireduce_scatter, osu_ireduce_scatter_block, osu_iallgatherv,
//! osu_igatherv, osu_iscatterv, osu_ialltoallv, osu_ialltoallw) under real
//! launchers: stdout against OSU 7.4's own output (digits masked), at the
//! golden file's np and others; validation passing with -c at np 2 to 4;
//! and the overlap columns' arithmetic as printed (compute, pure
//! communication, overlap %).

use crate::common;

use common::golden::{self, check_goldens, GoldenEnv, GoldenRun};
use common::*;

/// Open MPI's AVX reduction component saturates MPI_CHAR sums from 16
/// elements on (open-mpi/ompi#8045); this turns it off.
const NO_AVX: (&str, &str) = ("OMPI_MCA_op", "^avx");

/// (golden file, benchmark, np, arguments)
const GOLDEN: &[golden::Case] = &[
    ("iallreduce_m64", "osu_iallreduce", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("iallreduce_f_c_z_t4", "osu_iallreduce", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iallreduce_T_all", "osu_iallreduce", 2, &["-m", "8", "-T", "all", "-i", "10", "-x", "1"]),
    ("iallreduce_np4_f_c_l", "osu_iallreduce", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ibarrier", "osu_ibarrier", 2, &["-i", "20", "-x", "2"]),
    ("ibcast_m64", "osu_ibcast", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("ibcast_f_c_z_t4", "osu_ibcast", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iallgather_m64", "osu_iallgather", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("iallgather_f_c_z_t4", "osu_iallgather", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iallgather_np3_f_c_l", "osu_iallgather", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ialltoall_m64", "osu_ialltoall", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("ialltoall_f_c_z_t4", "osu_ialltoall", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("ialltoall_np4_f_c_l", "osu_ialltoall", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ibarrier_f_z_t10", "osu_ibarrier", 2, &["-i", "20", "-x", "2", "-f", "-z", "-t", "10"]),
    ("ireduce_m64", "osu_ireduce", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("ireduce_f_c_z_t4", "osu_ireduce", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("igather_m64", "osu_igather", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("igather_f_c_z_t4", "osu_igather", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iscatter_m64", "osu_iscatter", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("iscatter_f_c_z_t4", "osu_iscatter", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("ireduce_scatter_m64", "osu_ireduce_scatter", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    (
        "ireduce_scatter_f_c_z_t4",
        "osu_ireduce_scatter",
        2,
        &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"],
    ),
    ("ireduce_scatter_block_m64", "osu_ireduce_scatter_block", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    (
        "ireduce_scatter_block_f_c_z_t4",
        "osu_ireduce_scatter_block",
        2,
        &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"],
    ),
    ("iallgatherv_m64", "osu_iallgatherv", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("iallgatherv_f_c_z_t4", "osu_iallgatherv", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("igatherv_m64", "osu_igatherv", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("igatherv_f_c_z_t4", "osu_igatherv", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iscatterv_m64", "osu_iscatterv", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("iscatterv_f_c_z_t4", "osu_iscatterv", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("ialltoallv_m64", "osu_ialltoallv", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("ialltoallv_f_c_z_t4", "osu_ialltoallv", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("ialltoallw_m64", "osu_ialltoallw", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("ialltoallw_f_c_z_t4", "osu_ialltoallw", 2, &["-m", "16", "-i", "20", "-x", "2", "-f", "-c", "-z", "-t", "4"]),
    ("iallgatherv_np3_f_c_l", "osu_iallgatherv", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("igatherv_np3_f_c_l", "osu_igatherv", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ialltoallw_np3_f_c_l", "osu_ialltoallw", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ireduce_scatter_np3_f_c_l", "osu_ireduce_scatter", 3, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("iscatterv_np4_f_c_l", "osu_iscatterv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    ("ialltoallv_np4_f_c_l", "osu_ialltoallv", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"]),
    (
        "ireduce_scatter_block_np4_f_c_l",
        "osu_ireduce_scatter_block",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-l"],
    ),
    ("ireduce_np3_k_rotate_c", "osu_ireduce", 3, &["-m", "16", "-i", "10", "-x", "1", "-c", "-k", "rotate"]),
    ("igather_np4_k_rotate_f_c", "osu_igather", 4, &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-k", "rotate"]),
    ("iscatter_np3_k1_c_l", "osu_iscatter", 3, &["-m", "16", "-i", "10", "-x", "1", "-c", "-l", "-k", "fixed:1"]),
];

fn launch_opts(cwd: &std::path::Path) -> Launch {
    Launch {
        cwd: Some(cwd.to_path_buf()),
        env: vec![(NO_AVX.0.to_string(), NO_AVX.1.to_string())],
        ..Launch::default()
    }
}

fn golden_layouts(mpi: Mpi, np: Option<usize>) {
    let _g = mpi_lock();
    let runs: Vec<GoldenRun> = GoldenRun::table(GOLDEN)
        .into_iter()
        .map(|g| {
            let g = if let Some(np) = np { g.at_np(np) } else { g };
            // keep oversubscribed runs short
            if g.np > 2 {
                g.with(&["-i", "5", "-x", "1"])
            } else {
                g
            }
        })
        .collect();
    let env = vec![(NO_AVX.0.to_string(), NO_AVX.1.to_string())];
    check_goldens(mpi, &runs, &GoldenEnv { env, quiet_stderr: false });
}

#[test]
fn open_mpi_nbc_layout_matches_osu() {
    golden_layouts(Mpi::OpenMpi, None);
}

#[test]
fn open_mpi_nbc_layout_np3() {
    golden_layouts(Mpi::OpenMpi, Some(3));
}

#[test]
fn mpich_nbc_layout_matches_osu() {
    require_mpich!();
    golden_layouts(Mpi::Mpich, Some(2));
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// With -f, each row's columns obey OSU's formula: overlap =
/// max(0, 100 - 100 (overall - compute) / pure), the pure time lies
/// between its min and max, and the overall time is at least the start,
/// compute, tests and wait together (to the printed precision).
#[test]
fn overlap_columns_follow_osu_formula() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    for (bench, np, extra) in [
        ("osu_iallreduce", 2, &["-m", "1K", "-T", "all", "-c"][..]),
        ("osu_iallreduce", 3, &["-m", "64", "-t", "3", "-c", "-l"]),
        ("osu_ibarrier", 4, &["-t", "2"]),
        ("osu_ibcast", 3, &["-m", "256", "-c", "-t", "2"]),
        ("osu_iallgather", 4, &["-m", "64", "-c", "-T", "all"]),
        ("osu_ialltoall", 3, &["-m", "64", "-c", "-l", "-t", "1"]),
        ("osu_ireduce", 3, &["-m", "64", "-c", "-k", "rotate", "-t", "2"]),
        ("osu_igather", 3, &["-m", "64", "-c", "-l"]),
        ("osu_iscatter", 4, &["-m", "64", "-c", "-T", "all"]),
        ("osu_ireduce_scatter", 3, &["-m", "64", "-c", "-l"]),
        ("osu_ireduce_scatter_block", 4, &["-m", "64", "-c", "-T", "all"]),
        ("osu_iallgatherv", 3, &["-m", "64", "-c", "-l", "-t", "2"]),
        ("osu_igatherv", 4, &["-m", "64", "-c", "-k", "rotate"]),
        ("osu_iscatterv", 3, &["-m", "64", "-c", "-l"]),
        ("osu_ialltoallv", 3, &["-m", "64", "-c", "-T", "all"]),
        ("osu_ialltoallw", 4, &["-m", "64", "-c", "-l", "-t", "1"]),
    ] {
        let mut args = vec!["-i", "30", "-x", "3", "-f"];
        args.extend(extra);
        let run = launch(Mpi::OpenMpi, np, bench, &args, &launch_opts(cwd.path()));
        assert_eq!(run.code, Some(0), "{bench} np={np}: {run:?}");
        let rows = osu_rows(&run.stdout);
        assert!(!rows.is_empty(), "{bench}: {}", run.stdout);
        for row in rows {
            let c: Vec<f64> = row.iter().filter(|w| w.contains('.')).map(|w| num(w)).collect();
            let [overall, compute, init, test, wait, pure, min, max, overlap] = c[..9] else {
                panic!("{bench}: row {row:?}");
            };
            let want = (100.0 - (overall - compute) / pure * 100.0).max(0.0);
            // the printed values are rounded to 0.01
            let slack = 100.0 * 0.02 / pure + 0.01 * (1.0 + (overall - compute).abs() / pure) * 100.0 / pure;
            assert!((overlap - want).abs() <= slack.max(0.02), "{bench}: overlap {overlap} vs {want} in {row:?}");
            assert!(min <= pure + 0.01 && pure <= max + 0.01, "{bench}: {row:?}");
            assert!(overall + 0.05 >= init + compute + test + wait, "{bench}: parts exceed overall in {row:?}");
            if row.iter().any(|w| w == "Pass" || w == "Fail") {
                assert!(row.iter().any(|w| w == "Pass"), "{bench}: {row:?}");
            }
        }
    }
}

/// The CSV's overlap columns hold what stdout's -f table shows (to its two
/// decimals), the non-blocking rows' `avg_lat_us` is the overall time, and
/// a blocking collective leaves the overlap columns empty.
#[test]
fn csv_overlap_columns_match_stdout() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let csv = cwd.path().join("igatherv.csv");
    let args = ["-m", "64", "-i", "20", "-x", "2", "-f", "-c", "--csv", &csv.display().to_string()];
    let run = launch(Mpi::OpenMpi, 3, "osu_igatherv", &args, &launch_opts(cwd.path()));
    assert_eq!(run.code, Some(0), "{run:?}");
    let printed = osu_rows(&run.stdout);
    let rows = read_csv(&csv);
    assert_eq!(rows.len(), printed.len(), "{}", run.stdout);
    for (row, p) in rows.iter().zip(&printed) {
        assert_eq!(row["size_bytes"], p[0]);
        assert_eq!(row["validation"], "Pass", "{row:?}");
        // Size Overall Compute Init Test Wait Pure Min Max Overlap Validation
        for (col, at) in [("overall_us", 1), ("compute_us", 2), ("pure_comm_us", 6), ("overlap_pct", 9)] {
            let v = num(&row[col]);
            assert_eq!(format!("{v:.2}"), p[at], "{col} of {row:?} vs {p:?}");
        }
        assert_eq!(num(&row["avg_lat_us"]), num(&row["overall_us"]), "{row:?}");
    }
    let blocking = cwd.path().join("gatherv.csv");
    let args = ["-m", "8", "-i", "5", "-x", "1", "--csv", &blocking.display().to_string()];
    let run = launch(Mpi::OpenMpi, 2, "osu_gatherv", &args, &launch_opts(cwd.path()));
    assert_eq!(run.code, Some(0), "{run:?}");
    for row in read_csv(&blocking) {
        for col in ["overall_us", "compute_us", "pure_comm_us", "overlap_pct"] {
            assert_eq!(row[col], "", "{col} of {row:?}");
        }
    }
}
