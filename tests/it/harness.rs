//! The test harness itself (tests/it/common): what every other test relies
//! on when it launches jobs.

use crate::common;

use common::*;

/// Open MPI's session directory for this user on this host, as mpirun names
/// it under TMPDIR: `ompi.<host>.<uid>` (the host name up to its first dot).
pub fn open_mpi_session_dir_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    assert_eq!(unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) }, 0);
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let host = String::from_utf8_lossy(&buf[..end]).split('.').next().unwrap_or_default().to_string();
    // SAFETY: getuid has no preconditions.
    format!("ompi.{host}.{}", unsafe { libc::getuid() })
}

/// Jobs launched at once never share Open MPI's session directory: two
/// mpiruns sharing one race to create and remove it (seen in a full test
/// run beside other builds: `A call to mkdir was unable to create the
/// desired directory`, `File exists`, orte_init failed). Here the TMPDIR
/// every launch is given holds a plain file where that directory would go,
/// so a launch that used it would fail at once; each must run in a
/// directory of its own inside it and leave nothing behind.
#[test]
fn launches_at_once_each_have_their_own_session_directory() {
    let _g = mpi_lock();
    let tmp = tempfile::tempdir().unwrap();
    let blocker = tmp.path().join(open_mpi_session_dir_name());
    std::fs::write(&blocker, "").unwrap();
    let env = vec![("TMPDIR".to_string(), tmp.path().display().to_string())];
    let jobs: Vec<usize> = (0..4).collect();
    each_at_once(&jobs, jobs.len(), |i| {
        let cwd = tempfile::tempdir().unwrap();
        let o = Launch { cwd: Some(cwd.path().to_path_buf()), env: env.clone(), ..Launch::default() };
        let run = launch(Mpi::OpenMpi, 2, "osu_latency", &["-m", "1:8", "-i", "10", "-x", "1"], &o);
        assert_eq!(run.code, Some(0), "launch {i}: {run:?}");
        assert_eq!(osu_rows(&run.stdout).len(), 4, "launch {i}: {}", run.stdout);
    });
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(left, [blocker], "what the launches left in their TMPDIR");
}
