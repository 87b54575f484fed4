//! Naming and creating result files: `<UTC stamp>_<benchmark>[_job<id>]`
//! plus `.csv` and `.json`, in the results directory (the job id comes from
//! the environment, so the name is reduced to a plain file name: see
//! [`safe_file::name_part`]); a name that exists is never reused, and an
//! explicit `--csv FILE` that exists is refused.

use std::fs::{self, File};
use std::io;
use std::path::PathBuf;

use thiserror::Error;

use super::safe_file::{self, create_new, RowFile};
use crate::options::ResultsDest;

#[derive(Debug, Error)]
pub enum ResultsError {
    #[error(
        "cannot write results to '{path}': {source} (choose another place with --results-dir DIR, or --no-results)"
    )]
    Create { path: PathBuf, source: io::Error },
    #[error("'{0}' already exists; commbench never overwrites results (choose a new --csv name)")]
    Exists(PathBuf),
    #[error(
        "--csv '{0}': the run record goes beside the CSV with the extension .json, which would be this same file \
         (give the CSV a name ending in .csv)"
    )]
    RecordIsCsv(PathBuf),
}

/// The two files of one run, created empty and owned by this run.
#[derive(Debug)]
pub struct ResultFiles {
    pub csv_path: PathBuf,
    pub record_path: PathBuf,
    pub csv: File,
}

/// Creates the CSV and run-record files for a run.
pub fn create(
    dest: &ResultsDest,
    benchmark: &str,
    stamp: &str,
    job_id: Option<&str>,
) -> Result<Option<ResultFiles>, ResultsError> {
    match dest {
        ResultsDest::Off => Ok(None),
        ResultsDest::Csv(path) => {
            let record_path = path.with_extension("json");
            if record_path == *path {
                return Err(ResultsError::RecordIsCsv(path.clone()));
            }
            for p in [path, &record_path] {
                if p.exists() {
                    return Err(ResultsError::Exists(p.clone()));
                }
            }
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                fs::create_dir_all(parent).map_err(|source| ResultsError::Create { path: parent.into(), source })?;
            }
            let csv = create_new(path).map_err(|source| match source.kind() {
                io::ErrorKind::AlreadyExists => ResultsError::Exists(path.clone()),
                _ => ResultsError::Create { path: path.clone(), source },
            })?;
            if let Err(source) = create_new(&record_path) {
                // A refused run leaves nothing behind.
                drop(csv);
                let _ = fs::remove_file(path);
                return Err(match source.kind() {
                    io::ErrorKind::AlreadyExists => ResultsError::Exists(record_path),
                    _ => ResultsError::Create { path: record_path, source },
                });
            }
            Ok(Some(ResultFiles { csv_path: path.clone(), record_path, csv }))
        }
        ResultsDest::Dir(dir) => {
            fs::create_dir_all(dir).map_err(|source| ResultsError::Create { path: dir.clone(), source })?;
            let job = job_id.map(|j| format!("_job{j}")).unwrap_or_default();
            let base = safe_file::name_part(&format!("{stamp}_{benchmark}{job}"));
            for n in 1.. {
                let stem = if n == 1 { base.clone() } else { format!("{base}_{n}") };
                let csv_path = dir.join(format!("{stem}.csv"));
                let record_path = dir.join(format!("{stem}.json"));
                if record_path.exists() {
                    continue;
                }
                match create_new(&csv_path) {
                    Ok(csv) => match create_new(&record_path) {
                        Ok(_) => return Ok(Some(ResultFiles { csv_path, record_path, csv })),
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                            let _ = fs::remove_file(&csv_path);
                            continue;
                        }
                        Err(source) => {
                            drop(csv);
                            let _ = fs::remove_file(&csv_path);
                            return Err(ResultsError::Create { path: record_path, source });
                        }
                    },
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(source) => return Err(ResultsError::Create { path: csv_path, source }),
                }
            }
            unreachable!("the name loop only ends by returning")
        }
    }
}

/// The files of a run whose CSV is written in whole rows, its header
/// already in it.
#[derive(Debug)]
pub(crate) struct RowResults {
    pub csv_path: PathBuf,
    pub record_path: PathBuf,
    pub rows: RowFile,
}

impl RowResults {
    /// Takes both files away again: for a run whose record could not be
    /// written (a full disk), so that no empty record and no CSV without
    /// its record is left to be read.
    pub(crate) fn discard(self) {
        drop(self.rows);
        let _ = fs::remove_file(&self.record_path);
        let _ = fs::remove_file(&self.csv_path);
    }
}

/// [`create`], then `header` as the CSV's first row. A header that cannot
/// be written (a full disk) takes both files away again, as the OSU
/// binaries do: a run that could not start its results leaves no file.
pub(crate) fn create_with_header(
    dest: &ResultsDest,
    benchmark: &str,
    stamp: &str,
    job_id: Option<&str>,
    header: &[u8],
) -> Result<Option<RowResults>, ResultsError> {
    let Some(f) = create(dest, benchmark, stamp, job_id)? else { return Ok(None) };
    let written = RowFile::new(f.csv).and_then(|mut rows| rows.append(header).map(|_| rows));
    match written {
        Ok(rows) => Ok(Some(RowResults { csv_path: f.csv_path, record_path: f.record_path, rows })),
        Err(source) => {
            let _ = fs::remove_file(&f.record_path);
            let _ = fs::remove_file(&f.csv_path);
            Err(ResultsError::Create { path: f.csv_path, source })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_in_dir() {
        let d = tempfile::tempdir().unwrap();
        let dest = ResultsDest::Dir(d.path().join("r"));
        let a = create(&dest, "osu_bw", "20261130T000000Z", Some("77")).unwrap().unwrap();
        let b = create(&dest, "osu_bw", "20261130T000000Z", Some("77")).unwrap().unwrap();
        assert_eq!(a.csv_path.file_name().unwrap(), "20261130T000000Z_osu_bw_job77.csv");
        assert_eq!(b.csv_path.file_name().unwrap(), "20261130T000000Z_osu_bw_job77_2.csv");
        assert_eq!(b.record_path.file_name().unwrap(), "20261130T000000Z_osu_bw_job77_2.json");
    }

    /// A job id from the environment cannot name a file outside the
    /// results directory.
    #[test]
    fn a_hostile_job_id_stays_inside() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("r");
        let f = create(&ResultsDest::Dir(r.clone()), "osu_bw", "S", Some("../../../x")).unwrap().unwrap();
        assert_eq!(f.csv_path.parent(), Some(r.as_path()));
        assert_eq!(f.csv_path.file_name().unwrap(), "S_osu_bw_job.._.._.._x.csv");
    }

    #[test]
    fn explicit_csv_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/out.csv");
        let f = create(&ResultsDest::Csv(p.clone()), "osu_bw", "x", None).unwrap().unwrap();
        assert_eq!(f.record_path, d.path().join("sub/out.json"));
        match create(&ResultsDest::Csv(p), "osu_bw", "x", None) {
            Err(ResultsError::Exists(_)) => {}
            other => panic!("{other:?}"),
        }
    }

    /// `--csv x.json` would put the CSV and its record in one file: refused
    /// in words that say so (it once said the file already existed), and
    /// nothing is created.
    #[test]
    fn a_csv_named_like_its_record_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("jj.json");
        let e = create(&ResultsDest::Csv(p.clone()), "osu_bw", "x", None).unwrap_err();
        assert!(matches!(e, ResultsError::RecordIsCsv(_)), "{e:?}");
        assert!(e.to_string().contains("the run record goes beside the CSV with the extension .json"), "{e}");
        assert!(!p.exists());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn unwritable_dir_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let err = create(&ResultsDest::Dir(file.join("sub")), "osu_bw", "x", None).unwrap_err();
        assert!(err.to_string().starts_with("cannot write results to"), "{err}");
    }

    #[test]
    fn off_creates_nothing() {
        assert!(create(&ResultsDest::Off, "osu_bw", "x", None).unwrap().is_none());
    }
}
