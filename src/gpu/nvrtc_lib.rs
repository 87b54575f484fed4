//! NVRTC, CUDA's run-time compiler, found and opened at run time as NCCL
//! is (the shared search of [`super::lib_search`]: `COMMBENCH_NVRTC` alone
//! when set, else the loader, `$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`,
//! `/usr/local/cuda/lib64` and pip's `nvidia/cuda_nvrtc/lib` in the Python
//! environments), for the SM copy and latency kernels of `kernels.cu`.
//! cudarc's NVRTC module is not used: its loader panics when the library
//! is absent, where a GPU tool must say so in one line.
//!
//! [`compile`] turns CUDA C into PTX (for a virtual `compute_XY`
//! architecture) or CUBIN (for a real `sm_XY`); every failure is one line,
//! a compile error its log's first error line.

use std::ffi::{c_char, c_int, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libloading::Library as Lib;

use super::lib_search::{self, Found, Library, Missing, SearchEnv};

/// The variable naming the NVRTC library to use instead of searching.
pub const OVERRIDE_VAR: &str = "COMMBENCH_NVRTC";

/// NVRTC for the shared search: CUDA 12's soname first (pip's
/// `nvidia-cuda-nvrtc-cu12` ships only that one), then CUDA 13's, then
/// the toolkit's development link.
pub const NVRTC_LIBRARY: Library = Library {
    names: &["libnvrtc.so.12", "libnvrtc.so.13", "libnvrtc.so"],
    override_var: OVERRIDE_VAR,
    home_var: None,
    python_subdir: "nvidia/cuda_nvrtc/lib",
    probe_symbol: "nvrtcVersion",
};

/// Why NVRTC could not be used or a program not compiled: one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NvrtcError {
    /// No library could be opened (the line says where it looked).
    Missing(String),
    /// The library lacks a function this module needs.
    Lacks { path: PathBuf, symbol: &'static str },
    /// A call failed: which, its result code and NVRTC's words.
    Call { function: &'static str, code: i32, text: String },
    /// The source did not compile: the log's first error line, and the
    /// whole log.
    Compile { name: String, first_error: String, log: String },
}

impl NvrtcError {
    /// The compiler's whole log, for a compile error.
    pub fn log(&self) -> Option<&str> {
        match self {
            NvrtcError::Compile { log, .. } => Some(log),
            _ => None,
        }
    }
}

impl fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NvrtcError::Missing(line) => f.write_str(line),
            NvrtcError::Lacks { path, symbol } => {
                write!(f, "NVRTC at {} lacks {symbol} (CUDA 11.2 or newer is needed)", path.display())
            }
            NvrtcError::Call { function, code, text } => write!(f, "{function} failed with NVRTC error {code}: {text}"),
            NvrtcError::Compile { name, first_error, .. } => write!(f, "NVRTC could not compile {name}: {first_error}"),
        }
    }
}

impl std::error::Error for NvrtcError {}

/// The one line for a library that was not found or did not open.
fn missing_line(m: Missing) -> String {
    match m {
        Missing::NotFound => format!(
            "NVRTC is not available: searched for {} on the loader path, in $CUDA_HOME/lib64, $CUDA_PATH/lib64, \
             /usr/local/cuda/lib64 and Python environments' {} (python3's on PATH included); install \
             nvidia-cuda-nvrtc-cu12 or the CUDA toolkit, or set {OVERRIDE_VAR} to the library",
            NVRTC_LIBRARY.names.join(", "),
            NVRTC_LIBRARY.python_subdir
        ),
        Missing::Unloadable { path, reason } => format!(
            "NVRTC is not available: {} does not load ({reason}); install a working NVRTC or set {OVERRIDE_VAR} \
             to the library",
            path.display()
        ),
        Missing::Override { path, reason } => {
            format!("NVRTC is not available: {OVERRIDE_VAR}={} does not load ({reason})", path.display())
        }
    }
}

type Code = c_int;
type Program = *mut std::ffi::c_void;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> Code;
type ErrorStringFn = unsafe extern "C" fn(Code) -> *const c_char;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> Code;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> Code;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> Code;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> Code;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> Code;
type NumArchsFn = unsafe extern "C" fn(*mut c_int) -> Code;
type ArchsFn = unsafe extern "C" fn(*mut c_int) -> Code;

struct Functions {
    error_string: ErrorStringFn,
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    ptx_size: SizeFn,
    ptx: GetFn,
    cubin_size: SizeFn,
    cubin: GetFn,
    destroy: DestroyFn,
    /// From CUDA 11.2 on.
    archs: Option<(NumArchsFn, ArchsFn)>,
}

/// An opened NVRTC with the functions [`Nvrtc::compile`] calls.
pub struct Nvrtc {
    path: PathBuf,
    version: (i32, i32),
    fns: Functions,
    /// Keeps every function in `fns` loaded.
    _library: Lib,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc").field("path", &self.path).field("version", &self.version).finish_non_exhaustive()
    }
}

/// What NVRTC made of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompiledImage {
    /// PTX text for a virtual architecture, NUL-terminated as
    /// `cuModuleLoadData` takes it.
    Ptx(Vec<u8>),
    /// An ELF CUBIN for a real architecture.
    Cubin(Vec<u8>),
}

impl CompiledImage {
    /// The image's bytes, as `cuModuleLoadData` takes them.
    pub fn bytes(&self) -> &[u8] {
        match self {
            CompiledImage::Ptx(b) | CompiledImage::Cubin(b) => b,
        }
    }
}

/// Looks `name` up in `library` as a `T`.
///
/// # Safety
///
/// `T` must be a function pointer type with the C signature nvrtc.h gives
/// `name`.
unsafe fn symbol<T: Copy>(library: &Lib, path: &Path, name: &'static str) -> Result<T, NvrtcError> {
    let mut z = name.as_bytes().to_vec();
    z.push(0);
    // SAFETY: the caller vouches for `T`; the pointer is kept only beside
    // `library`, which outlives it (see `Nvrtc`).
    match unsafe { library.get::<T>(&z) } {
        Ok(s) => Ok(*s),
        Err(_) => Err(NvrtcError::Lacks { path: path.to_path_buf(), symbol: name }),
    }
}

/// A program, destroyed when dropped.
struct ProgramGuard<'a> {
    nvrtc: &'a Nvrtc,
    prog: Program,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `prog` came from nvrtcCreateProgram and is destroyed once.
        let _ = unsafe { (self.nvrtc.fns.destroy)(&mut self.prog) };
    }
}

/// The first line of `log` that reports an error (`error:`), else its
/// first non-empty line, else a note that NVRTC said nothing.
pub(crate) fn first_error_line(log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| log.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("NVRTC gave no log");
    lib_search::one_line(line)
}

/// Whether `options` ask for a real architecture (`sm_XY`): CUBIN, not
/// PTX.
fn wants_cubin(options: &[&str]) -> bool {
    options.iter().any(|o| {
        let value = o
            .strip_prefix("--gpu-architecture=")
            .or_else(|| o.strip_prefix("-arch="))
            .or_else(|| o.strip_prefix("-arch"))
            .unwrap_or("");
        value.starts_with("sm_")
    })
}

impl Nvrtc {
    /// Looks up every function in `found` and reads its version.
    pub fn open(found: Found) -> Result<Nvrtc, NvrtcError> {
        let (path, library) = found.into_parts();
        let (lib, p) = (&library, path.as_path());
        // SAFETY: each type is nvrtc.h's signature for the name beside
        // it, and the pointers are kept only beside `library`.
        let (version, fns) = unsafe {
            let version: VersionFn = symbol(lib, p, "nvrtcVersion")?;
            let fns = Functions {
                error_string: symbol(lib, p, "nvrtcGetErrorString")?,
                create: symbol(lib, p, "nvrtcCreateProgram")?,
                compile: symbol(lib, p, "nvrtcCompileProgram")?,
                log_size: symbol(lib, p, "nvrtcGetProgramLogSize")?,
                log: symbol(lib, p, "nvrtcGetProgramLog")?,
                ptx_size: symbol(lib, p, "nvrtcGetPTXSize")?,
                ptx: symbol(lib, p, "nvrtcGetPTX")?,
                cubin_size: symbol(lib, p, "nvrtcGetCUBINSize")?,
                cubin: symbol(lib, p, "nvrtcGetCUBIN")?,
                destroy: symbol(lib, p, "nvrtcDestroyProgram")?,
                archs: symbol(lib, p, "nvrtcGetNumSupportedArchs")
                    .ok()
                    .zip(symbol(lib, p, "nvrtcGetSupportedArchs").ok()),
            };
            (version, fns)
        };
        let mut nvrtc = Nvrtc { path, version: (0, 0), fns, _library: library };
        let (mut major, mut minor) = (0, 0);
        // SAFETY: nvrtcVersion writes two ints.
        let rc = unsafe { version(&mut major, &mut minor) };
        nvrtc.check("nvrtcVersion", rc)?;
        nvrtc.version = (major, minor);
        Ok(nvrtc)
    }

    /// The library file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// (major, minor), e.g. (12, 9).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    fn check(&self, function: &'static str, code: Code) -> Result<(), NvrtcError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString returns a static string or NULL.
        let p = unsafe { (self.fns.error_string)(code) };
        let text = if p.is_null() {
            "unknown error".to_string()
        } else {
            // SAFETY: a NUL-terminated static string.
            lib_search::one_line(&unsafe { CStr::from_ptr(p) }.to_string_lossy())
        };
        Err(NvrtcError::Call { function, code, text })
    }

    /// The architectures this NVRTC compiles for, as 70, 80, 90 ...; None
    /// where it cannot say (before CUDA 11.2).
    pub fn supported_archs(&self) -> Option<Vec<u32>> {
        let (num, get) = self.fns.archs?;
        let mut n: c_int = 0;
        // SAFETY: writes one int.
        if unsafe { num(&mut n) } != 0 || n <= 0 {
            return None;
        }
        let mut v = vec![0 as c_int; n as usize];
        // SAFETY: the array holds the count NVRTC just gave.
        if unsafe { get(v.as_mut_ptr()) } != 0 {
            return None;
        }
        Some(v.into_iter().filter_map(|a| u32::try_from(a).ok()).collect())
    }

    /// Compiles `source` (named `name` in messages) with `options`: CUBIN
    /// when they name a real architecture (`-arch=sm_90`), else PTX.
    pub fn compile(&self, source: &str, name: &str, options: &[&str]) -> Result<CompiledImage, NvrtcError> {
        let bad = |what: &str| NvrtcError::Call {
            function: "nvrtcCreateProgram",
            code: 4,
            text: format!("the {what} holds a NUL byte"),
        };
        let src = CString::new(source).map_err(|_| bad("source"))?;
        let cname = CString::new(name).map_err(|_| bad("name"))?;
        let opts: Vec<CString> =
            options.iter().map(|o| CString::new(*o)).collect::<Result<_, _>>().map_err(|_| bad("option"))?;
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: both strings are NUL-terminated and live for the call; no
        // headers are given.
        let rc = unsafe {
            (self.fns.create)(&mut prog, src.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null())
        };
        self.check("nvrtcCreateProgram", rc)?;
        let guard = ProgramGuard { nvrtc: self, prog };
        // SAFETY: the program is live; the options array holds opt_ptrs.len()
        // NUL-terminated strings that outlive the call.
        let rc = unsafe { (self.fns.compile)(guard.prog, opt_ptrs.len() as c_int, opt_ptrs.as_ptr()) };
        if rc != 0 {
            let log = self.read(&guard, self.fns.log_size, self.fns.log, "nvrtcGetProgramLog").unwrap_or_default();
            let log = String::from_utf8_lossy(log.strip_suffix(&[0]).unwrap_or(&log)).into_owned();
            if log.trim().is_empty() {
                self.check("nvrtcCompileProgram", rc)?;
            }
            return Err(NvrtcError::Compile { name: name.to_string(), first_error: first_error_line(&log), log });
        }
        if wants_cubin(options) {
            Ok(CompiledImage::Cubin(self.read(&guard, self.fns.cubin_size, self.fns.cubin, "nvrtcGetCUBIN")?))
        } else {
            Ok(CompiledImage::Ptx(self.read(&guard, self.fns.ptx_size, self.fns.ptx, "nvrtcGetPTX")?))
        }
    }

    /// One of the program's outputs (log, PTX, CUBIN) by its size and get
    /// calls.
    fn read(&self, p: &ProgramGuard, size: SizeFn, get: GetFn, function: &'static str) -> Result<Vec<u8>, NvrtcError> {
        let mut n: usize = 0;
        // SAFETY: the program is live; one size_t is written.
        self.check(function, unsafe { size(p.prog, &mut n) })?;
        let mut buf = vec![0u8; n];
        if n > 0 {
            // SAFETY: the buffer holds the size NVRTC just gave.
            self.check(function, unsafe { get(p.prog, buf.as_mut_ptr() as *mut c_char) })?;
        }
        Ok(buf)
    }
}

/// Finds and opens NVRTC from the snapshot `env`.
pub fn find_in(env: &SearchEnv) -> Result<Nvrtc, NvrtcError> {
    let found = lib_search::find_in(&NVRTC_LIBRARY, env).map_err(|m| NvrtcError::Missing(missing_line(m)))?;
    Nvrtc::open(found)
}

static NVRTC: OnceLock<Result<Nvrtc, NvrtcError>> = OnceLock::new();

/// NVRTC, found and opened on first use from this process's environment;
/// the outcome, failure included, is kept for the life of the process.
pub fn load() -> Result<&'static Nvrtc, NvrtcError> {
    NVRTC.get_or_init(|| find_in(&SearchEnv::from_process(&NVRTC_LIBRARY))).as_ref().map_err(Clone::clone)
}

/// Compiles `source` with the process's NVRTC ([`load`]): CUBIN when
/// `options` name a real architecture (`-arch=sm_90`), else PTX.
pub fn compile(source: &str, name: &str, options: &[&str]) -> Result<CompiledImage, NvrtcError> {
    load()?.compile(source, name, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_error_line_is_picked_from_a_log() {
        let log = "kernels.cu(3): warning: unused\nkernels.cu(7): error: identifier \"x\" is undefined\n\n1 error";
        assert_eq!(first_error_line(log), "kernels.cu(7): error: identifier \"x\" is undefined");
        assert_eq!(first_error_line("  \n just words \n"), "just words");
        assert_eq!(first_error_line(""), "NVRTC gave no log");
    }

    #[test]
    fn real_architectures_ask_for_cubin() {
        assert!(wants_cubin(&["-arch=sm_90"]));
        assert!(wants_cubin(&["--gpu-architecture=sm_80", "-lineinfo"]));
        assert!(!wants_cubin(&["-arch=compute_90"]));
        assert!(!wants_cubin(&[]));
    }

    #[test]
    fn every_missing_line_is_one_line_naming_the_way_out() {
        let lines = [
            missing_line(Missing::NotFound),
            missing_line(Missing::Unloadable { path: "/x/libnvrtc.so.12".into(), reason: "bad ELF".into() }),
            missing_line(Missing::Override { path: "/nope".into(), reason: "no such file".into() }),
        ];
        for l in &lines {
            assert!(!l.contains('\n') && l.starts_with("NVRTC is not available: "), "{l}");
        }
        assert!(lines[0].contains("nvidia-cuda-nvrtc-cu12") && lines[0].contains("COMMBENCH_NVRTC"), "{}", lines[0]);
        assert!(lines[2].contains("COMMBENCH_NVRTC=/nope"), "{}", lines[2]);
    }
}
