//! The run directory a launching command leaves its files in: where run
//! directories go, and a new one, never reused, named by time, kind, tag
//! and job.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::report::safe_file;

/// The results place that cannot take a new run directory.
#[derive(Debug, Error)]
#[error("cannot create the run directory in '{path}': {source} (choose another place with --results-dir)")]
pub struct RunDirError {
    pub path: PathBuf,
    pub source: io::Error,
}

/// Creates `<dir>/<stamp>_<kind>[_tag][_jobID]` (with `_2`, `_3` ... when
/// taken; `kind` is `suite` or `locate`); never reuses a directory. The
/// job id comes from the environment: the name is one plain file name
/// whatever it holds.
pub fn create(
    results: &Path,
    stamp: &str,
    kind: &str,
    tag: Option<&str>,
    job: Option<&str>,
) -> Result<PathBuf, RunDirError> {
    std::fs::create_dir_all(results).map_err(|source| RunDirError { path: results.into(), source })?;
    let tag = tag.map(|t| format!("_{t}")).unwrap_or_default();
    let job = job.map(|j| format!("_job{j}")).unwrap_or_default();
    let base = safe_file::name_part(&format!("{stamp}_{kind}{tag}{job}"));
    for n in 1.. {
        let name = if n == 1 { base.clone() } else { format!("{base}_{n}") };
        let dir = results.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(RunDirError { path: results.into(), source }),
        }
    }
    unreachable!("the name loop only ends by returning")
}

/// Where run directories go: `given`, else $COMMBENCH_RESULTS_DIR, else
/// `results` (the suite's and locate's `--results-dir`).
pub(crate) fn results_root(given: Option<&Path>) -> PathBuf {
    given
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("COMMBENCH_RESULTS_DIR").filter(|v| !v.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("results"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dirs_are_never_reused() {
        let d = tempfile::tempdir().unwrap();
        let a = create(d.path(), "20261130T100000Z", "suite", None, Some("42")).unwrap();
        let b = create(d.path(), "20261130T100000Z", "suite", None, Some("42")).unwrap();
        let c = create(d.path(), "20261130T100000Z", "suite", Some("1ppn"), None).unwrap();
        assert_eq!(a.file_name().unwrap(), "20261130T100000Z_suite_job42");
        assert_eq!(b.file_name().unwrap(), "20261130T100000Z_suite_job42_2");
        assert_eq!(c.file_name().unwrap(), "20261130T100000Z_suite_1ppn");
        let hostile = create(d.path(), "S", "suite", None, Some("../../x")).unwrap();
        assert_eq!((hostile.parent(), hostile.file_name().unwrap()), (Some(d.path()), "S_suite_job.._.._x".as_ref()));
    }
}
