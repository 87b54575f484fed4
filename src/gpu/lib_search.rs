//! Finding and opening a GPU library at run time: one search, shared by
//! NCCL ([`crate::gpu::nccl_lib`]) and NVRTC ([`crate::gpu::nvrtc_lib`]),
//! parameterised by a [`Library`]: its file names, the variable naming it
//! directly, an optional home variable, and where pip's wheel puts it below
//! a Python package directory.
//!
//! The search order ([`candidates`], after the override variable) is:
//!
//! 1. the override variable (`COMMBENCH_NCCL`, `COMMBENCH_NVRTC`), a file:
//!    when set, nothing else is tried;
//! 2. the dynamic loader's own search (`LD_LIBRARY_PATH`, RUNPATH, the
//!    ld.so cache, the default directories) by name;
//! 3. the library's home (`$NCCL_HOME/lib`; NVRTC has none),
//!    `$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`;
//! 4. Python environments, where pip puts the library below the package
//!    directory (`nvidia/nccl/lib`, `nvidia/cuda_nvrtc/lib`):
//!    `$VIRTUAL_ENV` and `$CONDA_PREFIX` (`lib/python3*/site-packages`),
//!    each entry of `$PYTHONPATH`, `~/.local/lib/python3*/site-packages`,
//!    `/usr/local/lib/python3*/dist-packages` and
//!    `/usr/lib/python3/dist-packages`;
//! 5. when none of those has it: the package directories of the `python3`
//!    on `PATH` (its virtual environment's, even when that is not
//!    activated, and its user directory), asked of `python3` itself once,
//!    for at most [`PYTHON_LIMIT`].
//!
//! In every directory the file names are tried in the library's order; the
//! first file that opens wins. The list is built from a [`SearchEnv`], a
//! snapshot of the variables involved, so it can be checked without
//! touching the process environment.

use std::ffi::{CStr, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use libloading::Library as Lib;

/// What is searched for: one library's names and places.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Library {
    /// The file names, in the order tried (`libnccl.so.2`, `libnccl.so`).
    pub names: &'static [&'static str],
    /// The variable naming the file to use instead of searching.
    pub override_var: &'static str,
    /// A variable naming the library's own installation, and the
    /// directory below it that holds the file (`NCCL_HOME`, `lib`).
    pub home_var: Option<(&'static str, &'static str)>,
    /// Where pip puts the library below a Python package directory
    /// (`nvidia/nccl/lib`).
    pub python_subdir: &'static str,
    /// A function the library exports, whose address tells which file the
    /// dynamic loader chose.
    pub probe_symbol: &'static str,
}

/// How long `python3` may take to name its package directories.
pub(crate) const PYTHON_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The most of `python3`'s answer that is read.
const PYTHON_ANSWER_CAP: u64 = 64 << 10;

/// The first executable file `name` in the directories of `path` (a
/// `$PATH` value).
pub(crate) fn on_path(path: &OsStr, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// The package directories `python` names (its `site.getsitepackages()`
/// and user directory), asked once with `-E` so that `PYTHON*` variables
/// do not change the answer; Err (with why) when it fails, says nothing
/// usable or takes longer than `limit` (it is then killed).
pub(crate) fn python_packages(python: &Path, limit: std::time::Duration) -> Result<Vec<PathBuf>, String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let program = "import site\nfor d in site.getsitepackages() + [site.getusersitepackages()]: print(d)";
    let mut child = Command::new(python)
        .args(["-E", "-c", program])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{} does not start: {e}", python.display()))?;
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} did not answer within {} s", python.display(), limit.as_secs_f64()));
            }
            Err(e) => return Err(format!("{}: {e}", python.display())),
        }
    };
    if !status.success() {
        return Err(format!("{} failed ({status})", python.display()));
    }
    let mut text = Vec::new();
    if let Some(out) = child.stdout.take() {
        let _ = out.take(PYTHON_ANSWER_CAP).read_to_end(&mut text);
    }
    Ok(text
        .split(|&b| b == b'\n')
        .map(|l| PathBuf::from(OsStr::from_bytes(l.strip_suffix(b"\r").unwrap_or(l))))
        .filter(|p| p.is_absolute())
        .collect())
}

/// The variables the search reads, as a snapshot:
/// [`SearchEnv::from_process`] takes them from the environment; tests fill
/// one in by hand. Absent and empty variables are both `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchEnv {
    /// The override variable (`$COMMBENCH_NCCL`): the library file to use,
    /// and nothing else.
    pub override_file: Option<PathBuf>,
    /// The library's home variable (`$NCCL_HOME`), where it has one.
    pub library_home: Option<PathBuf>,
    /// `$CUDA_HOME` (its `lib64`).
    pub cuda_home: Option<PathBuf>,
    /// `$CUDA_PATH` (its `lib64`).
    pub cuda_path: Option<PathBuf>,
    /// `$VIRTUAL_ENV`, an active Python virtual environment.
    pub virtual_env: Option<PathBuf>,
    /// `$CONDA_PREFIX`, an active conda environment.
    pub conda_prefix: Option<PathBuf>,
    /// `$PYTHONPATH`, colon-separated.
    pub pythonpath: Option<OsString>,
    /// `$HOME`, for `~/.local`.
    pub home: Option<PathBuf>,
    /// The `python3` found on `$PATH`, asked for its package directories
    /// when nothing else has the library; None asks nothing.
    pub python: Option<PathBuf>,
    /// The directory the fixed system paths (`/usr/local/cuda/lib64`,
    /// `/usr/local/lib/python3*`, `/usr/lib/python3`) are taken below: `/`
    /// for the real search, a scratch tree in tests.
    pub root: PathBuf,
}

impl Default for SearchEnv {
    /// No variables set, system paths below `/`.
    fn default() -> Self {
        SearchEnv {
            override_file: None,
            library_home: None,
            cuda_home: None,
            cuda_path: None,
            virtual_env: None,
            conda_prefix: None,
            pythonpath: None,
            home: None,
            python: None,
            root: PathBuf::from("/"),
        }
    }
}

impl SearchEnv {
    /// The snapshot of this process's environment for `lib`.
    pub fn from_process(lib: &Library) -> Self {
        Self::from_vars(lib, |name| std::env::var_os(name))
    }

    /// The snapshot `var` gives (a variable's value by name) for `lib`,
    /// with the system paths below `/`.
    pub fn from_vars(lib: &Library, var: impl Fn(&str) -> Option<OsString>) -> Self {
        let value = |name: &str| var(name).filter(|v| !v.is_empty());
        let path = |name: &str| value(name).map(PathBuf::from);
        SearchEnv {
            override_file: path(lib.override_var),
            library_home: lib.home_var.and_then(|(v, _)| path(v)),
            cuda_home: path("CUDA_HOME"),
            cuda_path: path("CUDA_PATH"),
            virtual_env: path("VIRTUAL_ENV"),
            conda_prefix: path("CONDA_PREFIX"),
            pythonpath: value("PYTHONPATH"),
            home: path("HOME"),
            python: value("PATH").and_then(|p| on_path(&p, "python3")),
            root: PathBuf::from("/"),
        }
    }

    fn system(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }
}

/// One place the library may be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Candidate {
    /// A bare name, for the dynamic loader's own search.
    LoaderPath(&'static str),
    /// A file by its path.
    File(PathBuf),
}

/// The places `lib` is looked for when its override is not set, in order,
/// each once. The Python `python3*` directories are those that exist under
/// `env`'s paths and hold the library's pip directory, newest Python
/// first; every other directory is listed whether it exists or not.
pub(crate) fn candidates(lib: &Library, env: &SearchEnv) -> Vec<Candidate> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let (Some(home), Some((_, below))) = (&env.library_home, lib.home_var) {
        dirs.push(home.join(below));
    }
    dirs.extend(env.cuda_home.as_ref().map(|p| p.join("lib64")));
    dirs.extend(env.cuda_path.as_ref().map(|p| p.join("lib64")));
    dirs.push(env.system("usr/local/cuda/lib64"));
    for prefix in [&env.virtual_env, &env.conda_prefix].into_iter().flatten() {
        dirs.extend(python_dirs(lib, &prefix.join("lib"), "site-packages"));
    }
    if let Some(pythonpath) = &env.pythonpath {
        for entry in std::env::split_paths(pythonpath).filter(|e| !e.as_os_str().is_empty()) {
            dirs.push(entry.join(lib.python_subdir));
        }
    }
    if let Some(home) = &env.home {
        dirs.extend(python_dirs(lib, &home.join(".local/lib"), "site-packages"));
    }
    dirs.extend(python_dirs(lib, &env.system("usr/local/lib"), "dist-packages"));
    dirs.push(env.system("usr/lib/python3/dist-packages").join(lib.python_subdir));

    let mut out: Vec<Candidate> = lib.names.iter().copied().map(Candidate::LoaderPath).collect();
    for dir in dirs {
        for name in lib.names {
            let c = Candidate::File(dir.join(name));
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// `lib/python3*/<packages>/<python_subdir>` below `lib_dir`, those that
/// exist, newest Python first.
fn python_dirs(lib: &Library, lib_dir: &Path, packages: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib_dir) else {
        return Vec::new();
    };
    let mut found: Vec<(Option<u32>, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let rest = name.to_str()?.strip_prefix("python3")?;
            let dir = e.path().join(packages).join(lib.python_subdir);
            dir.is_dir().then(|| (python_minor(rest), dir))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.into_iter().map(|(_, d)| d).collect()
}

/// 11 for the `.11` of `python3.11` (and of `python3.11t`); None for
/// anything else.
pub(crate) fn python_minor(rest: &str) -> Option<u32> {
    let digits = rest.strip_prefix('.')?;
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// An opened library, before its functions are looked up.
#[derive(Debug)]
pub struct Found {
    pub(crate) path: PathBuf,
    pub(crate) library: Lib,
}

impl Found {
    /// The file that was opened (for a library found by the loader, the
    /// file it chose where that can be told, else the name asked for).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path and the open library.
    pub(crate) fn into_parts(self) -> (PathBuf, Lib) {
        (self.path, self.library)
    }
}

/// Why no file of the library could be opened; each library says it in
/// its own words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Missing {
    /// No candidate file exists and the loader knows none of the names.
    NotFound,
    /// A candidate file exists but would not open, and none after it did.
    Unloadable {
        /// The first candidate that existed.
        path: PathBuf,
        /// The dynamic loader's words, on one line.
        reason: String,
    },
    /// The override variable names something that does not open.
    Override {
        /// The variable's value.
        path: PathBuf,
        /// The dynamic loader's words, on one line.
        reason: String,
    },
}

/// `text` with every run of whitespace, newlines included, as one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Opens `path` (a file, or a bare name for the loader), giving the
/// loader's complaint on one line when it cannot.
fn open(path: &OsStr) -> Result<Lib, String> {
    // SAFETY: opening a library runs its initialisers. We open only files
    // named as the library searched for, or the one the user named in its
    // override variable; those initialisers only set up their own state.
    unsafe { Lib::new(path) }.map_err(|e| one_line(&e.to_string()))
}

/// The file the loader opened `library` from, told by where `symbol`
/// lives.
fn loaded_from(library: &Lib, symbol: &str) -> Option<PathBuf> {
    let mut name = symbol.as_bytes().to_vec();
    name.push(0);
    // SAFETY: the symbol is read as a plain address and never called here.
    let symbol = unsafe { library.get::<*const std::ffi::c_void>(&name) }.ok()?;
    let address: *const std::ffi::c_void = *symbol;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(address, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr succeeded, so it filled `info` in.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is the NUL-terminated name of a loaded object,
    // which stays loaded while `library` is open.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(OsStr::from_bytes(name.to_bytes())))
}

/// Why the library file `path` is not opened at all: it is there and is
/// not a regular file (a FIFO, on which the loader's open would block for
/// ever; a device; a directory). A name without a `/` is the loader's to
/// search, and is not looked at here.
pub(crate) fn named_not_regular(path: &Path) -> Option<std::io::Error> {
    if !path.as_os_str().as_bytes().contains(&b'/') {
        return None;
    }
    crate::input_file::not_regular(path)
}

/// Finds and opens `lib` from the snapshot `env`: the override file alone
/// when set, else the first of [`candidates`] that opens, else (it starts
/// a process) the package directories of the `python3` on `PATH`. Files
/// that do not exist are skipped without asking the loader.
pub fn find_in(lib: &Library, env: &SearchEnv) -> Result<Found, Missing> {
    if let Some(path) = &env.override_file {
        // The loader would block on a FIFO for ever, or read a device.
        if let Some(e) = named_not_regular(path) {
            return Err(Missing::Override { path: path.clone(), reason: e.to_string() });
        }
        return match open(path.as_os_str()) {
            Ok(library) => Ok(Found { path: path.clone(), library }),
            Err(reason) => Err(Missing::Override { path: path.clone(), reason }),
        };
    }
    let mut first_failure: Option<(PathBuf, String)> = None;
    let tried = candidates(lib, env);
    if let Some(found) = try_candidates(lib, &tried, &mut first_failure) {
        return Ok(found);
    }
    // Last, and only now (it starts a process): the python3 on PATH.
    if let Some(python) = &env.python {
        let more: Vec<Candidate> = python_packages(python, PYTHON_LIMIT)
            .unwrap_or_default()
            .into_iter()
            .flat_map(|d| lib.names.iter().map(move |n| Candidate::File(d.join(lib.python_subdir).join(n))))
            .filter(|c| !tried.contains(c))
            .collect();
        if let Some(found) = try_candidates(lib, &more, &mut first_failure) {
            return Ok(found);
        }
    }
    Err(match first_failure {
        Some((path, reason)) => Missing::Unloadable { path, reason },
        None => Missing::NotFound,
    })
}

/// The first of `list` that opens; a file that exists but does not load
/// is noted in `first_failure` (the first such) and passed over.
fn try_candidates(lib: &Library, list: &[Candidate], first_failure: &mut Option<(PathBuf, String)>) -> Option<Found> {
    for candidate in list {
        match candidate {
            Candidate::LoaderPath(name) => {
                if let Ok(library) = open(OsStr::new(name)) {
                    let path = loaded_from(&library, lib.probe_symbol).unwrap_or_else(|| PathBuf::from(name));
                    return Some(Found { path, library });
                }
            }
            Candidate::File(path) => {
                if !path.exists() {
                    continue;
                }
                if let Some(e) = named_not_regular(path) {
                    first_failure.get_or_insert((path.clone(), e.to_string()));
                    continue;
                }
                match open(path.as_os_str()) {
                    Ok(library) => return Some(Found { path: path.clone(), library }),
                    Err(reason) => {
                        first_failure.get_or_insert((path.clone(), reason));
                    }
                }
            }
        }
    }
    None
}
