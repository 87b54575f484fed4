//! The history file: one SQLite database, its schema and the steps that
//! bring an older file up to date. Every writer takes the write lock at
//! the start of its transaction (`BEGIN IMMEDIATE`) and waits for another
//! writer's lock (`busy_timeout`) instead of failing, and the file is in
//! WAL mode, so two `commbench history add` at once (two suites ending
//! together) neither corrupt it nor lose a run.
//!
//! Schema version 3 (see docs/history.md):
//! - `meta(key, value)`: `schema_version`, `created_utc`.
//! - `runs`: one row per measured table (benchmark and datatype of one
//!   results file) with everything its series key is built of.
//! - `points(run_id, size_bytes, metric, value, ci95_rel_pct)`.
//!
//! Version 1 had no `runs.series_key` column and no index on it; the
//! step to 2 adds both and fills the column from the other columns.
//! Version 2 had no `runs.busy`, `runs.max_load1` and `runs.online_cpus`
//! (what competed with the run: crate::procs::load); the step to 3 adds
//! them empty (NULL: not known) for the runs already stored.
//!
//! The file is opened as carefully as every other results file
//! (`report::safe_file`): never through a symbolic link (a link at its
//! name, or at the names SQLite keeps beside it, `-wal`, `-shm` and
//! `-journal`, is refused), never as anything but a regular file (a
//! device, a FIFO), and by a command that only reads ([`Mode::Read`])
//! never created.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

/// The schema this code writes.
pub(crate) const SCHEMA_VERSION: i64 = 3;

/// How long a writer waits for another's lock before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Version 1, as the first release created it: kept here because the
/// steps below start from it (and the tests build such a file by hand).
const CREATE_V1: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    run_key TEXT NOT NULL UNIQUE,
    started_utc TEXT NOT NULL,
    label TEXT NOT NULL,
    system TEXT NOT NULL,
    hosts TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    backend TEXT NOT NULL,
    memory TEXT NOT NULL,
    datatype TEXT NOT NULL,
    np INTEGER NOT NULL,
    placement TEXT NOT NULL,
    mpi_library TEXT NOT NULL,
    options TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    added_utc TEXT NOT NULL
);
CREATE TABLE points (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    size_bytes INTEGER NOT NULL,
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    ci95_rel_pct REAL,
    PRIMARY KEY (run_id, metric, size_bytes)
);
";

/// One step: from version `n` to `n + 1`, run inside the transaction that
/// also records the new version.
type Step = fn(&Connection) -> rusqlite::Result<()>;

/// `STEPS[i]` brings a file from version `i` to `i + 1`; version 0 is a
/// new, empty file.
const STEPS: &[Step] = &[create_v1, v1_to_v2, v2_to_v3];

fn create_v1(c: &Connection) -> rusqlite::Result<()> {
    c.execute_batch(CREATE_V1)?;
    c.execute("INSERT INTO meta (key, value) VALUES ('created_utc', ?1)", [crate::report::time::Utc::now().rfc3339()])?;
    Ok(())
}

/// Version 2: the series key as one column with an index, so that a
/// check finds a key's runs without reading every run.
fn v1_to_v2(c: &Connection) -> rusqlite::Result<()> {
    c.execute_batch("ALTER TABLE runs ADD COLUMN series_key TEXT NOT NULL DEFAULT ''")?;
    let rows: Vec<(i64, super::key::SeriesKey)> = {
        let mut st = c.prepare(
            "SELECT id, system, benchmark, backend, memory, datatype, np, placement, mpi_library, options FROM runs",
        )?;
        let mapped = st.query_map([], |r| Ok((r.get(0)?, super::key::SeriesKey::from_row(r, 1)?)))?;
        mapped.collect::<rusqlite::Result<_>>()?
    };
    for (id, key) in rows {
        c.execute("UPDATE runs SET series_key = ?1 WHERE id = ?2", params![key.text(), id])?;
    }
    c.execute_batch("CREATE INDEX runs_by_series ON runs (series_key, started_utc)")
}

/// Version 3: what competed with each run on its host, from its run
/// record: the line saying its host was busy (NULL for a quiet run), the
/// highest 1-minute load any rank saw and that host's online CPUs. Runs
/// stored before keep NULL: not known.
fn v2_to_v3(c: &Connection) -> rusqlite::Result<()> {
    c.execute_batch(
        "ALTER TABLE runs ADD COLUMN busy TEXT;
         ALTER TABLE runs ADD COLUMN max_load1 REAL;
         ALTER TABLE runs ADD COLUMN online_cpus INTEGER;",
    )
}

/// Why the history file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{path}: {}", one_line(source))]
    Sqlite { path: String, source: rusqlite::Error },
    #[error(
        "{path}: schema version {found} is newer than this commbench knows ({SCHEMA_VERSION}): use a newer commbench"
    )]
    Newer { path: String, found: i64 },
    #[error("{path}: schema version '{found}' is not a version")]
    BadVersion { path: String, found: String },
    #[error("{path}: {says}, but it holds tables ({tables}): not a history this commbench can use")]
    NotHistory { path: String, says: &'static str, tables: String },
    #[error("{path}: cannot create its directory: {source}")]
    Dir { path: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: not a file name")]
    NoName { path: String },
    #[error("{path}: a symbolic link: the history file is never opened through one (give the file itself)")]
    Link { path: String },
    #[error("{path}: {what}, not a regular file: the history is a SQLite database file")]
    NotRegular { path: String, what: &'static str },
    #[error("{path}: {what}: SQLite's files beside the history must be its own regular files (remove it)")]
    Beside { path: String, what: &'static str },
    #[error("{path}: no such file: nothing is stored there yet (`commbench history add` creates it)")]
    Missing { path: String },
    #[error("{path}: holds no history yet (`commbench history add` stores runs in it)")]
    Empty { path: String },
}

/// A SQLite error as one line: its message without the SQL it was about
/// (which spans lines), white space runs as one space, and anything a
/// terminal would act on escaped.
pub(crate) fn one_line(e: &rusqlite::Error) -> String {
    let text = match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        e => e.to_string(),
    };
    crate::diag::printable(&text.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned()
}

/// What the command opening the file does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `add` (and `suite --history`, `pairs --history`): the file and its
    /// directory are created when missing.
    Write,
    /// show, check, export, plot: the file must exist and hold a history;
    /// nothing is created, and no statement writes (an older schema is
    /// still brought up to date, as any opening does).
    Read,
}

/// The schema version a file says (0 for a new, empty file).
fn version(c: &Connection) -> Result<Result<i64, String>, rusqlite::Error> {
    let has_meta: bool =
        c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", [], |r| {
            r.get::<_, i64>(0).map(|n| n > 0)
        })?;
    if !has_meta {
        return Ok(Ok(0));
    }
    let v: Option<String> =
        c.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).optional()?;
    Ok(match v {
        None => Ok(0),
        Some(v) => v.trim().parse::<i64>().map_err(|_| v),
    })
}

/// The names SQLite may keep beside a database file.
const BESIDE: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The file to give SQLite for `path`: its directory with every link in it
/// resolved (as any path is followed to its directory), and its own name,
/// which must not be a link or anything but a regular file, nor may any
/// of the names SQLite keeps beside it. Opened with SQLITE_OPEN_NOFOLLOW,
/// a link planted after this look is refused by SQLite itself (and SQLite
/// opens its files beside the database with O_NOFOLLOW). With
/// [`Mode::Write`] the directory is created when missing; with
/// [`Mode::Read`] a missing file is an error.
fn checked_path(path: &Path, mode: Mode) -> Result<PathBuf, DbError> {
    let shown = || crate::diag::printable(&path.display().to_string()).into_owned();
    let name = match path.file_name() {
        Some(n) if !path.as_os_str().as_encoded_bytes().ends_with(b"/") => n.to_os_string(),
        _ => return Err(DbError::NoName { path: shown() }),
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if mode == Mode::Write {
        std::fs::create_dir_all(dir).map_err(|source| DbError::Dir { path: shown(), source })?;
    }
    let dir = match std::fs::canonicalize(dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(DbError::Missing { path: shown() }),
        Err(source) => return Err(DbError::Io { path: shown(), source }),
    };
    let full = dir.join(&name);
    match std::fs::symlink_metadata(&full) {
        Ok(m) if m.file_type().is_symlink() => return Err(DbError::Link { path: shown() }),
        Ok(m) if !m.is_file() => {
            return Err(DbError::NotRegular { path: shown(), what: crate::input_file::kind(&m.file_type()) })
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && mode == Mode::Write => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(DbError::Missing { path: shown() }),
        Err(source) => return Err(DbError::Io { path: shown(), source }),
    }
    for suffix in BESIDE {
        let mut other = name.clone();
        other.push(suffix);
        let beside = |what| {
            let mut p = path.as_os_str().to_os_string();
            p.push(suffix);
            DbError::Beside { path: crate::diag::printable(&Path::new(&p).display().to_string()).into_owned(), what }
        };
        match std::fs::symlink_metadata(dir.join(&other)) {
            Ok(m) if m.file_type().is_symlink() => return Err(beside("a symbolic link")),
            Ok(m) if !m.is_file() => return Err(beside(crate::input_file::kind(&m.file_type()))),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(DbError::Io { path: shown(), source }),
        }
    }
    Ok(full)
}

/// How SQLite opens the file: never through a link, never as a URI,
/// created only for writing.
fn open_flags(mode: Mode) -> OpenFlags {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    match mode {
        Mode::Write => flags | OpenFlags::SQLITE_OPEN_CREATE,
        Mode::Read => flags,
    }
}

/// Opens the history file for `mode` (see [`Mode`]; a link, a device or a
/// missing file for reading is refused first) and brings it to
/// [`SCHEMA_VERSION`]; a file from a newer version, or one with tables
/// but no version, is refused.
pub fn open(path: &Path, mode: Mode) -> Result<Connection, DbError> {
    let shown = crate::diag::printable(&path.display().to_string()).into_owned();
    let full = checked_path(path, mode)?;
    let sql = |source| DbError::Sqlite { path: shown.clone(), source };
    // Not SQLITE_OPEN_URI: a name is a file name, never a URI with
    // parameters. Reading opens it read-write all the same, without
    // CREATE: a read-only connection leaves SQLite's -wal and -shm files
    // behind, while the last read-write one to close removes them.
    let mut c = Connection::open_with_flags(&full, open_flags(mode)).map_err(sql)?;
    c.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    c.execute_batch("PRAGMA foreign_keys = ON").map_err(sql)?;
    // Switching a file to WAL (which lets readers go on while one writer
    // writes) needs it to itself, and SQLite answers "database is locked"
    // at once, without its busy handler, when another process is opening
    // the same new file: two `history add`s on a fresh file failed so. So
    // the switch and the migration are tried again until BUSY_TIMEOUT.
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match prepare(&mut c, mode) {
            Ok(()) => break,
            Err(MigrateError::Sqlite(e)) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(match e {
                    MigrateError::Sqlite(source) => DbError::Sqlite { path: shown.clone(), source },
                    MigrateError::Newer(found) => DbError::Newer { path: shown.clone(), found },
                    MigrateError::BadVersion(found) => DbError::BadVersion { path: shown.clone(), found },
                    MigrateError::NotHistory(says, tables) => DbError::NotHistory { path: shown.clone(), says, tables },
                    MigrateError::Empty => DbError::Empty { path: shown.clone() },
                })
            }
        }
    }
    if mode == Mode::Read {
        c.execute_batch("PRAGMA query_only = ON").map_err(sql)?;
    }
    Ok(c)
}

/// An empty history that lives in memory only, for a reading command that
/// can go on without a file (`check` before any run was added: nothing to
/// judge against, said as "no baseline" rather than as an error).
pub(crate) fn empty_in_memory() -> Result<Connection, DbError> {
    let sql = |source| DbError::Sqlite { path: ":memory:".into(), source };
    let mut c = Connection::open_in_memory().map_err(sql)?;
    migrate(&mut c, Mode::Write).map_err(|e| match e {
        MigrateError::Sqlite(source) => sql(source),
        _ => unreachable!("a new in-memory database has no version and no tables"),
    })?;
    c.execute_batch("PRAGMA query_only = ON").map_err(sql)?;
    Ok(c)
}

/// WAL on (for writing), and the schema current.
fn prepare(c: &mut Connection, mode: Mode) -> Result<(), MigrateError> {
    if mode == Mode::Write {
        let journal: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !journal.eq_ignore_ascii_case("wal") {
            c.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
        }
    }
    migrate(c, mode)
}

/// SQLite's "database is busy / locked" answers.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// The names of a file's own tables, sorted.
fn table_names(c: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = c.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )?;
    let names = st.query_map([], |r| r.get(0))?;
    names.collect()
}

/// Whether the file's `meta` holds a `schema_version` row.
fn has_version_row(c: &Connection) -> rusqlite::Result<bool> {
    let has_meta: i64 =
        c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", [], |r| r.get(0))?;
    if has_meta == 0 {
        return Ok(false);
    }
    c.query_row("SELECT count(*) FROM meta WHERE key = 'schema_version'", [], |r| r.get::<_, i64>(0).map(|n| n > 0))
}

/// The version an opened (so current) file says.
pub fn schema_version(c: &Connection) -> i64 {
    version(c).ok().and_then(Result::ok).unwrap_or(0)
}

enum MigrateError {
    Sqlite(rusqlite::Error),
    Newer(i64),
    BadVersion(String),
    /// Version 0 (or none said) with tables: what it says, and the first
    /// tables' names.
    NotHistory(&'static str, String),
    /// No tables at all, opened for reading.
    Empty,
}

impl From<rusqlite::Error> for MigrateError {
    fn from(e: rusqlite::Error) -> Self {
        MigrateError::Sqlite(e)
    }
}

/// Runs the steps from the file's version to the current one in one
/// immediate transaction: two processes opening an old (or new) file at
/// once take turns, and the second finds it current.
fn migrate(c: &mut Connection, mode: Mode) -> Result<(), MigrateError> {
    // A quick look first: a current file needs no write lock.
    if let Ok(Ok(v)) = version(c) {
        if v == SCHEMA_VERSION {
            return Ok(());
        }
    }
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let from = version(&tx)?.map_err(MigrateError::BadVersion)?;
    if from > SCHEMA_VERSION {
        return Err(MigrateError::Newer(from));
    }
    if from < 0 {
        return Err(MigrateError::BadVersion(from.to_string()));
    }
    if from == 0 {
        // Version 0 is a new, empty file: one with tables is another
        // program's database, or a history that lost its version.
        let tables = table_names(&tx)?;
        if !tables.is_empty() {
            let says = if has_version_row(&tx)? { "schema version 0" } else { "no schema version" };
            let mut list = tables.iter().take(5).map(|t| crate::diag::printable(t).into_owned()).collect::<Vec<_>>();
            if tables.len() > 5 {
                list.push(format!("and {} more", tables.len() - 5));
            }
            return Err(MigrateError::NotHistory(says, list.join(", ")));
        }
        if mode == Mode::Read {
            return Err(MigrateError::Empty);
        }
    }
    for step in &STEPS[from as usize..] {
        step(&tx)?;
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [SCHEMA_VERSION.to_string()],
    )?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_reach_the_current_version() {
        assert_eq!(STEPS.len() as i64, SCHEMA_VERSION);
    }

    /// A file as version 1 wrote it, with a run and its points, opened by
    /// this code: the run and points are all there, the new column holds
    /// the key built from the old columns, the index exists, and the file
    /// says version 2.
    #[test]
    fn a_version_1_file_is_brought_up_to_date_with_its_data() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("h.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            // Written out here, not taken from CREATE_V1: what a release
            // of version 1 left on disk.
            c.execute_batch(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 CREATE TABLE runs (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL UNIQUE,
                   started_utc TEXT NOT NULL, label TEXT NOT NULL, system TEXT NOT NULL, hosts TEXT NOT NULL,
                   benchmark TEXT NOT NULL, backend TEXT NOT NULL, memory TEXT NOT NULL,
                   datatype TEXT NOT NULL, np INTEGER NOT NULL, placement TEXT NOT NULL,
                   mpi_library TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL,
                   source TEXT NOT NULL, added_utc TEXT NOT NULL);
                 CREATE TABLE points (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                   size_bytes INTEGER NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL,
                   ci95_rel_pct REAL, PRIMARY KEY (run_id, metric, size_bytes));
                 INSERT INTO meta VALUES ('schema_version', '1'), ('created_utc', '2026-01-01T00:00:00Z');
                 INSERT INTO runs VALUES (7, 'k7', '2026-01-02T03:04:05Z', 'old', 'n1,n2', 'n1,n2',
                   'osu_bw', 'mpi', 'host', 'MPI_CHAR', 2, 'none', 'Open MPI v4.1.4', '{\"window\":64}',
                   'complete', 'r/old.csv', '2026-01-02T03:05:00Z');
                 INSERT INTO points VALUES (7, 4194304, 'bandwidth', 12000.5, 1.5), (7, 8, 'bandwidth', 3.25, NULL);",
            )
            .unwrap();
        }
        let c = open(&path, Mode::Write).unwrap();
        assert_eq!(version(&c).unwrap(), Ok(SCHEMA_VERSION));
        // Version 3's columns, empty for a run stored before them.
        let busy: (Option<String>, Option<f64>, Option<i64>) = c
            .query_row("SELECT busy, max_load1, online_cpus FROM runs WHERE id = 7", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(busy, (None, None, None));
        let (key, started): (String, String) = c
            .query_row("SELECT series_key, started_utc FROM runs WHERE id = 7", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(key, "n1,n2|osu_bw|mpi|host|MPI_CHAR|np=2|none|Open MPI v4.1.4|{\"window\":64}");
        assert_eq!(started, "2026-01-02T03:04:05Z");
        let points: Vec<(i64, f64, Option<f64>)> = c
            .prepare("SELECT size_bytes, value, ci95_rel_pct FROM points WHERE run_id = 7 ORDER BY size_bytes")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(points, [(8, 3.25, None), (4194304, 12000.5, Some(1.5))]);
        let index: i64 = c
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_by_series'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(index, 1);
        let created: String =
            c.query_row("SELECT value FROM meta WHERE key = 'created_utc'", [], |r| r.get(0)).unwrap();
        assert_eq!(created, "2026-01-01T00:00:00Z", "the step keeps what version 1 wrote");
        // Opening it again changes nothing.
        drop(c);
        let c = open(&path, Mode::Write).unwrap();
        assert_eq!(version(&c).unwrap(), Ok(SCHEMA_VERSION));
    }

    /// The second defence, for a link planted after [`checked_path`]
    /// looked: SQLite itself refuses to open a link with these flags (here
    /// given one directly), and its target stays empty.
    #[test]
    fn sqlite_refuses_a_link_with_the_flags_used() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "").unwrap();
        let link = dir.join("h.sqlite");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        for mode in [Mode::Write, Mode::Read] {
            let opened = Connection::open_with_flags(&link, open_flags(mode))
                .and_then(|c| c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1)"));
            assert!(opened.is_err(), "{mode:?}");
        }
        assert_eq!(std::fs::metadata(&victim).unwrap().len(), 0);
        assert_eq!(
            open(&link, Mode::Write).unwrap_err().to_string(),
            format!(
                "{}: a symbolic link: the history file is never opened through one (give the file itself)",
                link.display()
            )
        );
    }

    #[test]
    fn a_new_file_is_current_and_a_newer_one_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("sub/h.sqlite");
        let c = open(&path, Mode::Write).unwrap();
        assert_eq!(version(&c).unwrap(), Ok(SCHEMA_VERSION));
        c.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'", []).unwrap();
        drop(c);
        let e = open(&path, Mode::Write).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: schema version 4 is newer than this commbench knows (3): use a newer commbench",
                path.display()
            )
        );
    }
}
