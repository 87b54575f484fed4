//! The neighbourhood collectives (osu_neighbor_* and osu_ineighbor_*)
//! under real launchers: stdout against OSU 7.4's own (digits masked) on
//! the default ring of 3 and 4 ranks, with validation (-c) passing at
//! every datatype, and a graph file's topology running and validating.

use crate::common;

use common::golden::{self, check_goldens, GoldenEnv, GoldenRun};
use common::*;

/// (golden file, benchmark, np, arguments); OSU's default topology
/// (cart:1:1) needs three ranks or more.
const GOLDEN: &[golden::Case] = &[
    ("neighbor_allgather_np3_m64", "osu_neighbor_allgather", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("neighbor_allgatherv_np3_m64", "osu_neighbor_allgatherv", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("neighbor_alltoall_np3_m64", "osu_neighbor_alltoall", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("neighbor_alltoallv_np3_m64", "osu_neighbor_alltoallv", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("neighbor_alltoallw_np3_m64", "osu_neighbor_alltoallw", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("ineighbor_allgather_np3_m64", "osu_ineighbor_allgather", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("ineighbor_allgatherv_np3_m64", "osu_ineighbor_allgatherv", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("ineighbor_alltoall_np3_m64", "osu_ineighbor_alltoall", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("ineighbor_alltoallv_np3_m64", "osu_ineighbor_alltoallv", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    ("ineighbor_alltoallw_np3_m64", "osu_ineighbor_alltoallw", 3, &["-m", "64", "-i", "10", "-x", "2"]),
    (
        "neighbor_allgather_np4_f_c_T_all",
        "osu_neighbor_allgather",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-T", "all"],
    ),
    (
        "neighbor_allgatherv_np4_f_c_T_all",
        "osu_neighbor_allgatherv",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-T", "all"],
    ),
    (
        "neighbor_alltoall_np4_f_c_T_all",
        "osu_neighbor_alltoall",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-T", "all"],
    ),
    (
        "neighbor_alltoallv_np4_f_c_T_all",
        "osu_neighbor_alltoallv",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-T", "all"],
    ),
    (
        "neighbor_alltoallw_np4_f_c_T_all",
        "osu_neighbor_alltoallw",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-T", "all"],
    ),
    (
        "ineighbor_allgather_np4_f_c_t2",
        "osu_ineighbor_allgather",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-t", "2"],
    ),
    (
        "ineighbor_allgatherv_np4_f_c_t2",
        "osu_ineighbor_allgatherv",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-t", "2"],
    ),
    (
        "ineighbor_alltoall_np4_f_c_t2",
        "osu_ineighbor_alltoall",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-t", "2"],
    ),
    (
        "ineighbor_alltoallv_np4_f_c_t2",
        "osu_ineighbor_alltoallv",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-t", "2"],
    ),
    (
        "ineighbor_alltoallw_np4_f_c_t2",
        "osu_ineighbor_alltoallw",
        4,
        &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-t", "2"],
    ),
];

fn golden_layouts(mpi: Mpi) {
    let _g = mpi_lock();
    let mut runs = GoldenRun::table(GOLDEN);
    if mpi == Mpi::Mpich {
        // MPICH's waiting ranks spin: on a small machine its oversubscribed
        // jobs take seconds each, so it runs the 3-rank half, shortened.
        runs.retain(|g| g.np == 3);
        runs = runs.into_iter().map(|g| g.with(&["-i", "2", "-x", "0"])).collect();
    }
    // Nothing beside OSU's stdout under Open MPI: the drop-in check of
    // merged streams (tests/it/dropin.rs) counts on it.
    check_goldens(mpi, &runs, &GoldenEnv { quiet_stderr: mpi == Mpi::OpenMpi, ..GoldenEnv::default() });
}

#[test]
fn open_mpi_neighborhood_layout_matches_osu() {
    golden_layouts(Mpi::OpenMpi);
}

#[test]
fn mpich_neighborhood_layout_matches_osu() {
    require_mpich!();
    golden_layouts(Mpi::Mpich);
}

/// A one-way graph with a self edge (rank 3 has no neighbour): every
/// program moves and checks its blocks along it.
#[test]
fn a_graph_file_topology_runs_and_validates() {
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("edges");
    std::fs::write(&file, "# from,to\n0,1\n1,2\n2,0\n0,2\n1,1\n").unwrap();
    let topo = format!("graph:{}", file.display());
    let names: Vec<String> = ["allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"]
        .iter()
        .flat_map(|c| [format!("osu_neighbor_{c}"), format!("osu_ineighbor_{c}")])
        .collect();
    each_at_once(&names, short_jobs_at_once(Mpi::OpenMpi), |name| {
        let args = ["-m", "8", "-i", "3", "-x", "1", "-c", "-N", topo.as_str(), "--no-results"];
        let run = launch(Mpi::OpenMpi, 4, name, &args, &Launch::default());
        assert_eq!(run.code, Some(0), "{name}: {run:?}");
        run.assert_no_panic();
        assert!(!run.stdout.contains("Dimensions size"), "{name}: {}", run.stdout);
        assert!(run.stdout.contains("Time took to create topology graph:"), "{name}: {}", run.stdout);
        let rows: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).collect();
        assert_eq!(rows.len(), 4, "{name}: {}", run.stdout);
        assert!(rows.iter().all(|r| r.ends_with("Pass")), "{name}: {}", run.stdout);
    });
}

/// A graph file of a million distinct edges (every pair of 1000 ranks) is
/// read at once: on 2 ranks the job is refused in one line within seconds
/// because it names rank 999 (the duplicate check had compared each edge
/// with every earlier one: no answer in 180 s). One edge more than the
/// limit `-h` states is refused, naming the line. Two 2-rank refusals,
/// each rank reading a 7.8 MB file (about a second of CPU in a debug
/// build): several seconds on a loaded machine.
#[test]
fn a_million_edge_graph_file_is_answered_within_seconds() {
    let _g = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("# every pair of 1000 ranks\n");
    for a in 0..1000 {
        for b in 0..1000 {
            text.push_str(&format!("{a},{b}\n"));
        }
    }
    let file = write_file(dir.path(), "million", &text);
    let topo = format!("graph:{}", file.display());
    let want =
        format!("Number of processes is less than graph nodes [-N {topo}] (it names rank 999; run at least 1000");
    refused("osu_neighbor_alltoallv", &["-N", &topo], &[], |l| l.starts_with(&want));
    let over = write_file(dir.path(), "over", &(text + "1000,0\n"));
    let topo = format!("graph:{}", over.display());
    let want = format!("Max allowed number of edges is 1000000 [-N {topo}] (line 1000002 is one edge too many)");
    refused("osu_neighbor_alltoallv", &["-N", &topo], &[], |l| l == want);
    let run = launch(Mpi::OpenMpi, 1, "osu_neighbor_alltoallv", &["-h"], &Launch::default());
    assert!(run.stdout.contains("(a graph file lists at most 1000000 edges)"), "{}", run.stdout);
}
