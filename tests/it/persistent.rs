//! The persistent programs: osu_latency_persistent, osu_bw_persistent and
//! osu_bibw_persistent (MPI-1's MPI_Send_init / MPI_Recv_init, under both
//! MPIs) and the fourteen osu_*_persistent collectives (MPI-4's
//! MPI_X_init: MPICH 4 runs them, Open MPI 4.1 refuses them in one line,
//! as OSU's configure leaves them out there). Layouts against OSU 7.4's
//! own binaries built under MPICH; every collective's validation, CSV and
//! record are tests/it/collectives.rs's (under MPICH).

use crate::common;

use common::golden::{self, check_goldens, GoldenEnv, GoldenRun};
use common::*;

/// (golden file, benchmark, np, arguments) of the point-to-point ones.
const POINT_TO_POINT: &[golden::Case] = &[
    ("latency_persistent_c_z", "osu_latency_persistent", 2, &["-m", "16", "-i", "100", "-x", "2", "-c", "-z"]),
    ("latency_persistent_full", "osu_latency_persistent", 2, &["-i", "20", "-x", "2"]),
    ("bw_persistent_c_z", "osu_bw_persistent", 2, &["-m", "16", "-i", "100", "-x", "1", "-c", "-z"]),
    ("bw_persistent_m64", "osu_bw_persistent", 2, &["-m", "64", "-i", "20", "-x", "2"]),
    ("bibw_persistent_c", "osu_bibw_persistent", 2, &["-m", "16", "-i", "10", "-x", "1", "-c"]),
    ("bibw_persistent_T_all", "osu_bibw_persistent", 2, &["-m", "16", "-i", "10", "-x", "1", "-T", "all"]),
];

const F_C_Z: &[&str] = &["-m", "16", "-i", "10", "-x", "1", "-f", "-c", "-z"];
/// OSU 7.4's osu_allreduce_persistent binds its warm-up buffers and checks
/// the others, so its `-c` always says Fail: its golden file is without
/// `-c` (ours passes it: collectives.rs).
const F_Z: &[&str] = &["-m", "16", "-i", "10", "-x", "1", "-f", "-z"];

/// MPICH 4.0.2's default schedules for persistent allgather (recursive
/// doubling), gather and scatter (binomial) deliver right only on the
/// first MPI_Start: later starts leave other ranks' blocks (gather: the
/// root's own too) unwritten, in OSU's binaries as in ours. Its transport
/// algorithms are right, so runs that check results choose them.
pub const MPICH_PERSISTENT_FIX: &[(&str, &str)] = &[
    ("MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM", "tsp_ring"),
    ("MPIR_CVAR_IGATHER_INTRA_ALGORITHM", "tsp_tree"),
    ("MPIR_CVAR_ISCATTER_INTRA_ALGORITHM", "tsp_tree"),
];

/// The collectives' layouts (MPICH only).
const COLLECTIVES: &[golden::Case] = &[
    ("allgather_persistent_f_c_z", "osu_allgather_persistent", 2, F_C_Z),
    ("allgatherv_persistent_f_c_z", "osu_allgatherv_persistent", 2, F_C_Z),
    ("allreduce_persistent_f_z", "osu_allreduce_persistent", 2, F_Z),
    ("allreduce_persistent_T_all", "osu_allreduce_persistent", 2, &["-m", "8", "-i", "10", "-x", "1", "-T", "all"]),
    ("alltoall_persistent_f_c_z", "osu_alltoall_persistent", 2, F_C_Z),
    ("alltoallv_persistent_f_c_z", "osu_alltoallv_persistent", 2, F_C_Z),
    ("alltoallw_persistent_f_c_z", "osu_alltoallw_persistent", 2, F_C_Z),
    ("barrier_persistent_f", "osu_barrier_persistent", 2, &["-i", "100", "-x", "10", "-f"]),
    ("bcast_persistent_f_c_z", "osu_bcast_persistent", 2, F_C_Z),
    ("gather_persistent_f_c_z", "osu_gather_persistent", 2, F_C_Z),
    ("gatherv_persistent_f_c_z", "osu_gatherv_persistent", 2, F_C_Z),
    ("reduce_persistent_f_c_z", "osu_reduce_persistent", 2, F_C_Z),
    ("reduce_scatter_persistent_f_c_z", "osu_reduce_scatter_persistent", 2, F_C_Z),
    ("scatter_persistent_f_c_z", "osu_scatter_persistent", 2, F_C_Z),
    ("scatterv_persistent_f_c_z", "osu_scatterv_persistent", 2, F_C_Z),
];

/// The persistent collectives of the registry.
fn persistent_collectives() -> Vec<&'static str> {
    use commbench::backend::Capability;
    let all = commbench::bench::registry::BENCHMARKS.iter();
    all.filter(|e| e.needs == Some(Capability::PersistentCollectives)).map(|e| e.name()).collect()
}

#[test]
fn every_persistent_collective_has_a_golden_case() {
    let covered: Vec<&str> = COLLECTIVES.iter().map(|c| c.1).collect();
    let all = persistent_collectives();
    assert_eq!(all.len(), 14, "{all:?}");
    for name in all {
        assert!(covered.contains(&name), "{name} has no layout case");
    }
}

#[test]
fn open_mpi_point_to_point_layout_matches_osu() {
    let _g = mpi_lock();
    check_goldens(Mpi::OpenMpi, &GoldenRun::table(POINT_TO_POINT), &GoldenEnv::default());
}

#[test]
fn mpich_persistent_layout_matches_osu() {
    require_mpich!();
    let _g = mpi_lock();
    let runs: Vec<GoldenRun> =
        GoldenRun::table(POINT_TO_POINT).into_iter().chain(GoldenRun::table(COLLECTIVES)).collect();
    let env = MPICH_PERSISTENT_FIX.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    check_goldens(Mpi::Mpich, &runs, &GoldenEnv { env, quiet_stderr: true });
    // -b multiple binds each size's own buffers
    let multiple = ["-m", "4096", "-i", "10", "-x", "1", "-c", "-b", "multiple"];
    let runs: Vec<GoldenRun> = ["latency", "bw", "bibw"]
        .iter()
        .map(|p| GoldenRun::new("", &format!("osu_{p}_persistent"), 2, &multiple))
        .collect();
    let cwd = tempfile::tempdir().unwrap();
    each_at_once(&runs, 1, |g| {
        let args: Vec<&str> = g.args.iter().map(String::as_str).collect();
        let run = launch(Mpi::Mpich, 2, &g.bench, &args, &Launch { cwd: Some(cwd.path().into()), ..Launch::default() });
        assert_eq!(run.code, Some(0), "{}: {run:?}", g.bench);
        let rows = osu_rows(&run.stdout);
        assert_eq!(rows.len(), 13, "{}: {}", g.bench, run.stdout);
        assert!(rows.iter().all(|r| r.last().is_some_and(|v| v == "Pass")), "{}: {}", g.bench, run.stdout);
    });
}

/// Open MPI 4.1 is MPI 3.1: no MPI_X_init. Each persistent collective
/// says so in one line and every rank exits 1, before any row.
#[test]
fn open_mpi_refuses_the_persistent_collectives_in_one_line() {
    let _g = mpi_lock();
    let mut r = Refusals::new();
    for name in persistent_collectives() {
        let prefix = format!("{name}: this MPI library has no persistent collectives (MPI_*_init are MPI-4; Open MPI");
        r.refused(name, &["-m", "16"], &[], move |l| l.starts_with(&prefix) && l.ends_with("is MPI 3.1)"));
    }
    r.check();
}

/// MPICH 4.0.2's broken persistent allgather, gather and scatter (above)
/// are caught by `-c`: Fail on the first size, OSU's last line, a line per
/// rank naming the element, exit 1.
#[test]
fn mpich_s_broken_persistent_schedules_fail_validation() {
    require_mpich!();
    let _g = mpi_lock();
    let cases = ["osu_allgather_persistent", "osu_gather_persistent", "osu_scatter_persistent"];
    let cwd = tempfile::tempdir().unwrap();
    each_at_once(&cases, 1, |bench| {
        let o = Launch { cwd: Some(cwd.path().into()), ..Launch::default() };
        let run = launch(Mpi::Mpich, 2, bench, &["-m", "4", "-i", "5", "-x", "1", "-c"], &o);
        assert_eq!(run.code, Some(1), "{bench}: {run:?}");
        assert!(run.stdout.contains("Fail") && run.stdout.contains("DATA VALIDATION ERROR"), "{bench}: {run:?}");
        let lines = run.our_stderr_lines();
        assert!(!lines.is_empty() && lines.iter().all(|l| l.contains("validation failed on rank")), "{bench}: {run:?}");
    });
}
