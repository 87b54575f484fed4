//! stdout layout against OSU 7.4's own output (tests/golden, captured from
//! the C binaries): with measured values masked, every line must match
//! byte for byte, under Open MPI and under MPICH.

use crate::common;

use common::golden::{self, check_goldens, GoldenEnv, GoldenRun};
use common::*;

/// (golden file, benchmark, np, arguments)
const GOLDEN: &[golden::Case] = &[
    ("latency_m64", "osu_latency", 2, &["-m", "64", "-i", "100", "-x", "10"]),
    ("latency_full", "osu_latency", 2, &["-i", "20", "-x", "2"]),
    ("latency_c_z", "osu_latency", 2, &["-m", "16", "-i", "100", "-x", "2", "-c", "-z"]),
    ("latency_z5_95", "osu_latency", 2, &["-m", "16", "-i", "100", "-x", "2", "-z5,95"]),
    ("latency_T_all", "osu_latency", 2, &["-m", "16", "-i", "20", "-x", "2", "-T", "all"]),
    ("bw_m64", "osu_bw", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("bw_c_z", "osu_bw", 2, &["-m", "16", "-i", "100", "-x", "1", "-c", "-z"]),
    ("bibw_m64", "osu_bibw", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("bibw_c", "osu_bibw", 2, &["-m", "16", "-i", "10", "-x", "1", "-c"]),
    ("mbw_mr_np2", "osu_mbw_mr", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("mbw_mr_np4", "osu_mbw_mr", 4, &["-m", "16", "-i", "10", "-x", "1"]),
    ("mbw_mr_R0", "osu_mbw_mr", 2, &["-m", "16", "-i", "10", "-x", "1", "-R", "0"]),
    ("mbw_mr_c", "osu_mbw_mr", 2, &["-m", "16", "-i", "10", "-x", "1", "-c"]),
    ("mbw_mr_z", "osu_mbw_mr", 2, &["-m", "16", "-i", "10", "-x", "1", "-z"]),
    ("mbw_mr_W16", "osu_mbw_mr", 2, &["-m", "16", "-i", "10", "-x", "1", "-W", "16"]),
    // OSU's -V output without its message-rate table (-R 0): the rates there
    // reach eight digits on fast machines and widen their 10-character
    // cells, as OSU's would; that table's layout is checked byte for byte
    // in the unit tests instead.
    ("mbw_mr_V_R0", "osu_mbw_mr", 2, &["-m", "16", "-i", "10", "-x", "1", "-V", "-R", "0"]),
    ("multi_lat_m64", "osu_multi_lat", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("multi_lat_c", "osu_multi_lat", 2, &["-m", "16", "-i", "20", "-x", "2", "-c"]),
    ("latency_mt_m64", "osu_latency_mt", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    // Two sender threads: OSU prints each one's header.
    ("latency_mt_t2_2_c", "osu_latency_mt", 2, &["-m", "4", "-i", "10", "-x", "1", "-t", "2:2", "-c", "-u", "1"]),
    // Each run lasts at least 2 s: the launcher waits for the processes
    // the sender forks, which sleep that long (OSU's behaviour).
    ("latency_mp_t3", "osu_latency_mp", 2, &["-m", "16", "-i", "20", "-x", "2", "-t", "3"]),
    ("latency_mp_c_z", "osu_latency_mp", 2, &["-m", "4", "-i", "10", "-x", "1", "-c", "-z"]),
];

fn run_ok(mpi: Mpi, np: usize, bench: &str, args: &[&str], cwd: &std::path::Path) -> Run {
    let run = launch(mpi, np, bench, args, &Launch { cwd: Some(cwd.to_path_buf()), ..Launch::default() });
    assert_eq!(run.code, Some(0), "{mpi:?} {bench} {args:?}: {run:?}");
    run.assert_no_panic();
    run
}

fn all_golden(mpi: Mpi) {
    let _g = mpi_lock();
    check_goldens(mpi, &GoldenRun::table(GOLDEN), &GoldenEnv::default());
}

#[test]
fn open_mpi_layout_matches_osu() {
    all_golden(Mpi::OpenMpi);
}

#[test]
fn mpich_layout_matches_osu() {
    require_mpich!();
    all_golden(Mpi::Mpich);
}

/// OSU's osu_multi_lat prints P50/P90/P99 headers but leaves the cells
/// empty; commbench fills them (rank 0's per-iteration latencies). Every
/// other byte is OSU's.
#[test]
fn multi_lat_fills_the_tail_cells_osu_leaves_empty() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let run = run_ok(Mpi::OpenMpi, 2, "osu_multi_lat", &["-m", "16", "-i", "20", "-x", "2", "-z"], cwd.path());
    let osu = mask(&golden("multi_lat_z_osu"));
    let expected: String = osu
        .lines()
        .map(|l| {
            if l.starts_with(|c: char| c.is_ascii_digit()) {
                format!("{l}{}\n", format!("{:>18}", "#").repeat(3))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_eq!(mask(&run.stdout), expected);
}

/// Four ranks of multi_lat (two pairs) and a -p subset of mbw_mr pairs.
#[test]
fn pair_benchmarks_at_four_ranks() {
    let _g = mpi_lock();
    let cwd = tempfile::tempdir().unwrap();
    let run = run_ok(Mpi::OpenMpi, 4, "osu_multi_lat", &["-m", "64", "-i", "20", "-x", "2"], cwd.path());
    assert_eq!(mask(&run.stdout), mask(&golden("multi_lat_m64")));
    let run = run_ok(Mpi::OpenMpi, 4, "osu_mbw_mr", &["-m", "16", "-i", "10", "-x", "1", "-p", "1"], cwd.path());
    assert_eq!(
        mask(&run.stdout),
        mask(&golden("mbw_mr_c")).replace("        Validation", "").replace("              Pass", "")
    );
}
