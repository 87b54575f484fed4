//! Finding and opening libnccl at run time.
//!
//! cudarc's own NCCL loading panics when the library is absent and only
//! asks the dynamic loader for names that omit `libnccl.so.2`, the one name
//! that pip's `nvidia-nccl-cu12` wheel (and many runtime packages) ship.
//! Here we look in the places NCCL is actually installed, say in one line
//! what was searched when it is nowhere, and resolve the handful of
//! functions the transport calls ourselves. Only cudarc's NCCL *types* are
//! used; none of its NCCL functions is ever called, so its loader never
//! runs.
//!
//! The search is the one NCCL and NVRTC share ([`super::lib_search`]),
//! with NCCL's names (`libnccl.so.2` before `libnccl.so`), its override
//! `COMMBENCH_NCCL`, its home `$NCCL_HOME/lib` and pip's `nvidia/nccl/lib`.
//!
//! # Calling NCCL
//!
//! The `unsafe` methods of [`NcclLib`] share one contract, NCCL's own: `comm`
//! is a live communicator made by [`NcclLib::comm_init_rank`] of the same
//! library and not yet destroyed or aborted; `stream` is a CUDA stream on
//! the communicator's device (or null, the default stream); every buffer is
//! device memory (or memory NCCL accepts) holding at least the number of
//! elements of `datatype` the call reads or writes, and stays allocated and
//! untouched by others until the stream has run the operation.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nccl::sys::{cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclResult_t, ncclUniqueId};

/// A reduction as NCCL's calls take it: one of `ncclRedOp_t`'s, or one
/// that `ncclRedOpCreatePreMulSum` made, numbered past them, which no
/// value of a Rust enum may hold. The C type is an `int`-sized enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct RedOp(pub c_int);

impl From<ncclRedOp_t> for RedOp {
    fn from(op: ncclRedOp_t) -> RedOp {
        RedOp(op as c_int)
    }
}

/// `ncclScalarHostImmediate`: the scalar is read from host memory when the
/// operation is made.
const SCALAR_HOST_IMMEDIATE: c_int = 1;
use libloading::Library as Lib;
use thiserror::Error;

#[cfg(test)]
use super::lib_search::Candidate;
use super::lib_search::{self, Library, Missing};
pub(crate) use super::lib_search::{named_not_regular, one_line};
#[cfg(test)]
use super::lib_search::{on_path, python_minor, python_packages, PYTHON_LIMIT};
pub use super::lib_search::{Found, SearchEnv};
#[cfg(test)]
use std::ffi::{OsStr, OsString};

/// The file names NCCL is looked for under, in the order tried.
pub(crate) const LIBRARY_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// The variable naming the NCCL library to use instead of searching.
pub(crate) const OVERRIDE_VAR: &str = "COMMBENCH_NCCL";

/// Where pip puts NCCL below a Python package directory.
const NCCL_IN_PYTHON: &str = "nvidia/nccl/lib";

/// NCCL for the shared search.
pub const NCCL_LIBRARY: Library = Library {
    names: &LIBRARY_NAMES,
    override_var: OVERRIDE_VAR,
    home_var: Some(("NCCL_HOME", "lib")),
    python_subdir: NCCL_IN_PYTHON,
    probe_symbol: "ncclGetVersion",
};

impl SearchEnv {
    /// The snapshot of this process's environment for NCCL.
    pub(crate) fn for_nccl() -> Self {
        SearchEnv::from_process(&NCCL_LIBRARY)
    }
}

/// The places NCCL is looked for when `COMMBENCH_NCCL` is not set, in
/// order (the shared search's, with NCCL's names and places).
#[cfg(test)]
pub(crate) fn candidates(env: &SearchEnv) -> Vec<Candidate> {
    lib_search::candidates(&NCCL_LIBRARY, env)
}

/// Why no NCCL library could be opened.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NcclMissing {
    /// No candidate file exists and the loader knows no NCCL.
    #[error(
        "NCCL is not available: no libnccl.so.2 or libnccl.so on the loader path, in $NCCL_HOME, $CUDA_HOME, \
         $CUDA_PATH, /usr/local/cuda or a Python environment's nvidia/nccl/lib (python3's on PATH included); \
         install NCCL (pip install nvidia-nccl-cu12, or your site's module) or set COMMBENCH_NCCL to the library"
    )]
    NotFound,
    /// A candidate file exists but would not open, and none after it did.
    #[error(
        "NCCL is not available: {} does not load ({reason}); install a working NCCL or set COMMBENCH_NCCL to \
         the library",
        path.display()
    )]
    Unloadable {
        /// The first candidate that existed.
        path: PathBuf,
        /// The dynamic loader's words, on one line.
        reason: String,
    },
    /// `COMMBENCH_NCCL` names something that does not open.
    #[error("NCCL is not available: COMMBENCH_NCCL={} does not load ({reason})", path.display())]
    Override {
        /// The variable's value.
        path: PathBuf,
        /// The dynamic loader's words, on one line.
        reason: String,
    },
}

/// Why NCCL cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NcclError {
    /// No library could be opened.
    #[error(transparent)]
    Missing(#[from] NcclMissing),
    /// The library lacks a function the transport needs.
    #[error("NCCL at {} lacks {symbol} (NCCL 2.7 or newer is needed)", path.display())]
    Lacks {
        /// The library.
        path: PathBuf,
        /// The function.
        symbol: &'static str,
    },
    /// The library opened but `ncclGetVersion` failed.
    #[error("NCCL at {} does not work: {error}", path.display())]
    Unusable {
        /// The library.
        path: PathBuf,
        /// What the call said.
        error: NcclCallError,
    },
}

/// A failed NCCL call: which, NCCL's result code and its own words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NcclCallError {
    /// The NCCL function, e.g. `ncclCommInitRank`.
    pub function: &'static str,
    /// The `ncclResult_t` value it returned (see [`NcclCallError::result`]).
    pub code: i32,
    /// `ncclGetErrorString` for the code, on one line.
    pub text: String,
    /// `ncclGetLastError`, on one line, where the library has it (NCCL 2.13
    /// on) and it says anything. NCCL keeps one last error for the process,
    /// so it may come from an earlier call.
    pub last: Option<String>,
}

impl NcclCallError {
    /// A call to a function this library lacks (ncclInvalidUsage).
    pub(crate) fn missing(function: &'static str) -> NcclCallError {
        NcclCallError { function, code: 5, text: "the loaded NCCL has no such function".into(), last: None }
    }

    /// The code as cudarc's `ncclResult_t`, if it is one NCCL 2.30 defines.
    pub fn result(&self) -> Option<ncclResult_t> {
        use ncclResult_t::*;
        Some(match self.code {
            0 => ncclSuccess,
            1 => ncclUnhandledCudaError,
            2 => ncclSystemError,
            3 => ncclInternalError,
            4 => ncclInvalidArgument,
            5 => ncclInvalidUsage,
            6 => ncclRemoteError,
            7 => ncclInProgress,
            8 => ncclTimeout,
            _ => return None,
        })
    }
}

impl fmt::Display for NcclCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed with NCCL error {}: {}", self.function, self.code, self.text)?;
        match &self.last {
            Some(last) => write!(f, "; last error: {last}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for NcclCallError {}

impl From<Missing> for NcclMissing {
    fn from(m: Missing) -> NcclMissing {
        match m {
            Missing::NotFound => NcclMissing::NotFound,
            Missing::Unloadable { path, reason } => NcclMissing::Unloadable { path, reason },
            Missing::Override { path, reason } => NcclMissing::Override { path, reason },
        }
    }
}

/// Finds and opens NCCL from this process's environment.
pub fn find() -> Result<Found, NcclMissing> {
    find_in(&SearchEnv::for_nccl())
}

/// Finds and opens NCCL as [`find`] does, from the snapshot `env`: the
/// `COMMBENCH_NCCL` file alone when set, else the first of
/// [`candidates`] that opens (the shared search, [`lib_search::find_in`]).
pub fn find_in(env: &SearchEnv) -> Result<Found, NcclMissing> {
    lib_search::find_in(&NCCL_LIBRARY, env).map_err(NcclMissing::from)
}

/// The decoded `ncclGetVersion` code: `major*10000 + minor*100 + patch` from
/// NCCL 2.9 on, `major*1000 + minor*100 + patch` before.
pub(crate) fn decode_version(code: i32) -> (u32, u32, u32) {
    let c = u32::try_from(code).unwrap_or(0);
    if c >= 10000 {
        (c / 10000, c / 100 % 100, c % 100)
    } else {
        (c / 1000, c / 100 % 10, c % 100)
    }
}

static NCCL: OnceLock<Result<NcclLib, NcclError>> = OnceLock::new();

/// NCCL, found and opened on first use; the outcome, failure included, is
/// kept for the life of the process.
pub fn load() -> Result<&'static NcclLib, NcclError> {
    NCCL.get_or_init(|| find().map_err(NcclError::from).and_then(NcclLib::open)).as_ref().map_err(Clone::clone)
}

// The C signatures, as NCCL's nccl.h declares them. Results are taken as
// plain ints, not as cudarc's ncclResult_t enum, so that a code a newer
// NCCL adds cannot become an invalid enum value.
type Code = c_int;
type GetVersionFn = unsafe extern "C" fn(*mut c_int) -> Code;
type GetUniqueIdFn = unsafe extern "C" fn(*mut ncclUniqueId) -> Code;
type CommInitRankFn = unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> Code;
type CommInitRankConfigFn = unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int, *mut Config) -> Code;

/// `ncclConfig_t`'s leading fields as NCCL 2.27 lays them out (later
/// versions append fields; NCCL reads a config by its own `size` and
/// `version`, so this older, shorter form stays valid). Every field is
/// NCCL's "undefined" (its default) but the ones set.
#[repr(C)]
pub(crate) struct Config {
    size: usize,
    magic: u32,
    version: u32,
    blocking: c_int,
    cga_cluster_size: c_int,
    min_ctas: c_int,
    max_ctas: c_int,
    net_name: *const c_char,
    split_share: c_int,
    traffic_class: c_int,
    comm_name: *const c_char,
    collnet_enable: c_int,
    cta_policy: c_int,
}

/// Where [`Config`]'s fields sit, by nccl.h's names, and the magic it
/// carries: for a test against nccl.h itself.
pub fn config_layout() -> ([(&'static str, usize); 7], u32) {
    use std::mem::offset_of;
    let fields = [
        ("blocking", offset_of!(Config, blocking)),
        ("maxCTAs", offset_of!(Config, max_ctas)),
        ("netName", offset_of!(Config, net_name)),
        ("trafficClass", offset_of!(Config, traffic_class)),
        ("commName", offset_of!(Config, comm_name)),
        ("collnetEnable", offset_of!(Config, collnet_enable)),
        ("CTAPolicy", offset_of!(Config, cta_policy)),
    ];
    (fields, Config::with_cta_policy(0).magic)
}

impl Config {
    /// nccl.h's `NCCL_CONFIG_INITIALIZER` for this layout, with the CTA
    /// policy `cta_policy` (nccl-tests' `-x`).
    pub(crate) fn with_cta_policy(cta_policy: c_int) -> Config {
        const UNDEF: c_int = c_int::MIN;
        Config {
            size: std::mem::size_of::<Config>(),
            // NCCL_API_MAGIC.
            magic: 0xcafe_beef,
            // The layout's version: 2.27.0.
            version: 22700,
            blocking: UNDEF,
            cga_cluster_size: UNDEF,
            min_ctas: UNDEF,
            max_ctas: UNDEF,
            net_name: std::ptr::null(),
            split_share: UNDEF,
            traffic_class: UNDEF,
            comm_name: std::ptr::null(),
            collnet_enable: UNDEF,
            cta_policy,
        }
    }
}
type CommFn = unsafe extern "C" fn(ncclComm_t) -> Code;
type CommGetAsyncErrorFn = unsafe extern "C" fn(ncclComm_t, *mut Code) -> Code;
type GetErrorStringFn = unsafe extern "C" fn(Code) -> *const c_char;
type GetLastErrorFn = unsafe extern "C" fn(ncclComm_t) -> *const c_char;
type ReduceAllFn =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, RedOp, ncclComm_t, cudaStream_t) -> Code;
type AllGatherFn =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, ncclComm_t, cudaStream_t) -> Code;
type BroadcastFn =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, ncclDataType_t, c_int, ncclComm_t, cudaStream_t) -> Code;
type ReduceFn = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    RedOp,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> Code;
type RedOpCreatePreMulSumFn = unsafe extern "C" fn(*mut RedOp, *mut c_void, ncclDataType_t, c_int, ncclComm_t) -> Code;
type RedOpDestroyFn = unsafe extern "C" fn(RedOp, ncclComm_t) -> Code;
type SendFn = unsafe extern "C" fn(*const c_void, usize, ncclDataType_t, c_int, ncclComm_t, cudaStream_t) -> Code;
type RecvFn = unsafe extern "C" fn(*mut c_void, usize, ncclDataType_t, c_int, ncclComm_t, cudaStream_t) -> Code;
type GroupFn = unsafe extern "C" fn() -> Code;
type MemAllocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> Code;
type MemFreeFn = unsafe extern "C" fn(*mut c_void) -> Code;
type RegisterFn = unsafe extern "C" fn(ncclComm_t, *mut c_void, usize, *mut *mut c_void) -> Code;
type DeregisterFn = unsafe extern "C" fn(ncclComm_t, *mut c_void) -> Code;
type WindowRegisterFn = unsafe extern "C" fn(ncclComm_t, *mut c_void, usize, *mut *mut c_void, c_int) -> Code;

/// nccl.h's `NCCL_WIN_COLL_SYMMETRIC`: a window every rank registers
/// alike, for NCCL's symmetric-memory collectives.
const WIN_COLL_SYMMETRIC: c_int = 0x01;

/// An opened NCCL with the functions the transport calls.
pub struct NcclLib {
    path: PathBuf,
    version_code: i32,
    fns: Functions,
    /// Keeps every function in `fns` loaded; closed only with them.
    _library: Lib,
}

/// The functions looked up in an opened library.
struct Functions {
    get_unique_id: GetUniqueIdFn,
    comm_init_rank: CommInitRankFn,
    /// From NCCL 2.14 on.
    comm_init_rank_config: Option<CommInitRankConfigFn>,
    comm_destroy: CommFn,
    comm_abort: CommFn,
    comm_get_async_error: CommGetAsyncErrorFn,
    get_error_string: GetErrorStringFn,
    get_last_error: Option<GetLastErrorFn>,
    all_reduce: ReduceAllFn,
    all_gather: AllGatherFn,
    reduce_scatter: ReduceAllFn,
    broadcast: BroadcastFn,
    reduce: ReduceFn,
    send: SendFn,
    recv: RecvFn,
    group_start: GroupFn,
    group_end: GroupFn,
    /// From NCCL 2.11 on.
    pre_mul_sum: Option<(RedOpCreatePreMulSumFn, RedOpDestroyFn)>,
    /// From NCCL 2.28 on: ncclAlltoAll, ncclGather, ncclScatter.
    all_to_all: Option<AllGatherFn>,
    gather: Option<BroadcastFn>,
    scatter: Option<BroadcastFn>,
    /// From NCCL 2.19 on: ncclMemAlloc and ncclMemFree.
    mem: Option<(MemAllocFn, MemFreeFn)>,
    /// From NCCL 2.19 on: ncclCommRegister and ncclCommDeregister.
    register: Option<(RegisterFn, DeregisterFn)>,
    /// From NCCL 2.27 on: ncclCommWindowRegister and its deregistration.
    window: Option<(WindowRegisterFn, DeregisterFn)>,
}

impl fmt::Debug for NcclLib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NcclLib").field("path", &self.path).field("version", &self.version()).finish_non_exhaustive()
    }
}

/// Looks `name` up in `library` as a `T`.
///
/// # Safety
///
/// `T` must be a function pointer type with the C signature NCCL gives
/// `name`.
unsafe fn symbol<T: Copy>(library: &Lib, path: &Path, name: &'static str) -> Result<T, NcclError> {
    // SAFETY: the caller vouches for `T`; the pointer is copied out and
    // kept only beside `library`, which outlives it (see `NcclLib`).
    match unsafe { library.get::<T>(name.as_bytes()) } {
        Ok(s) => Ok(*s),
        Err(_) => Err(NcclError::Lacks { path: path.to_path_buf(), symbol: name }),
    }
}

/// Text NCCL returned, on one line; None for NULL or nothing but spaces.
///
/// # Safety
///
/// `p` is NULL or a NUL-terminated string that stays valid for the call.
unsafe fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller vouches for `p`.
    let text = one_line(&unsafe { CStr::from_ptr(p) }.to_string_lossy());
    (!text.is_empty()).then_some(text)
}

impl NcclLib {
    /// Looks up every function in `found` and reads its version. A missing
    /// required function gives [`NcclError::Lacks`].
    pub fn open(found: Found) -> Result<NcclLib, NcclError> {
        let (path, library) = found.into_parts();
        let (lib, p) = (&library, path.as_path());
        // SAFETY: each type named below is nccl.h's signature for the name
        // beside it, and the pointers are kept only beside `library`.
        let (get_version, fns) = unsafe {
            let get_version: GetVersionFn = symbol(lib, p, "ncclGetVersion")?;
            let fns = Functions {
                get_unique_id: symbol(lib, p, "ncclGetUniqueId")?,
                comm_init_rank: symbol(lib, p, "ncclCommInitRank")?,
                comm_init_rank_config: symbol(lib, p, "ncclCommInitRankConfig").ok(),
                comm_destroy: symbol(lib, p, "ncclCommDestroy")?,
                comm_abort: symbol(lib, p, "ncclCommAbort")?,
                comm_get_async_error: symbol(lib, p, "ncclCommGetAsyncError")?,
                get_error_string: symbol(lib, p, "ncclGetErrorString")?,
                get_last_error: symbol(lib, p, "ncclGetLastError").ok(),
                all_reduce: symbol(lib, p, "ncclAllReduce")?,
                all_gather: symbol(lib, p, "ncclAllGather")?,
                reduce_scatter: symbol(lib, p, "ncclReduceScatter")?,
                broadcast: symbol(lib, p, "ncclBroadcast")?,
                reduce: symbol(lib, p, "ncclReduce")?,
                send: symbol(lib, p, "ncclSend")?,
                recv: symbol(lib, p, "ncclRecv")?,
                group_start: symbol(lib, p, "ncclGroupStart")?,
                group_end: symbol(lib, p, "ncclGroupEnd")?,
                pre_mul_sum: symbol(lib, p, "ncclRedOpCreatePreMulSum")
                    .ok()
                    .zip(symbol(lib, p, "ncclRedOpDestroy").ok()),
                all_to_all: symbol(lib, p, "ncclAlltoAll").ok(),
                gather: symbol(lib, p, "ncclGather").ok(),
                scatter: symbol(lib, p, "ncclScatter").ok(),
                mem: symbol(lib, p, "ncclMemAlloc").ok().zip(symbol(lib, p, "ncclMemFree").ok()),
                register: symbol(lib, p, "ncclCommRegister").ok().zip(symbol(lib, p, "ncclCommDeregister").ok()),
                window: symbol(lib, p, "ncclCommWindowRegister")
                    .ok()
                    .zip(symbol(lib, p, "ncclCommWindowDeregister").ok()),
            };
            (get_version, fns)
        };
        let mut nccl = NcclLib { path, version_code: 0, fns, _library: library };
        let mut code: c_int = 0;
        // SAFETY: ncclGetVersion writes one int through the pointer.
        let rc = unsafe { get_version(&mut code) };
        match nccl.check("ncclGetVersion", rc) {
            Ok(()) => {
                nccl.version_code = code;
                Ok(nccl)
            }
            Err(error) => Err(NcclError::Unusable { path: nccl.path.clone(), error }),
        }
    }

    /// The library file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `ncclGetVersion`'s code, e.g. 22105.
    pub fn version_code(&self) -> i32 {
        self.version_code
    }

    /// (major, minor, patch), e.g. (2, 21, 5).
    pub fn version(&self) -> (u32, u32, u32) {
        decode_version(self.version_code)
    }

    /// Whether the library has `ncclGetLastError` (NCCL 2.13 on).
    pub fn has_last_error(&self) -> bool {
        self.fns.get_last_error.is_some()
    }

    /// `ncclGetErrorString`: NCCL's words for a result code, on one line.
    pub fn error_string(&self, code: i32) -> String {
        // SAFETY: ncclGetErrorString takes any code and returns a static
        // string (NULL, from a broken library, is handled by `c_text`).
        unsafe { c_text((self.fns.get_error_string)(code)) }.unwrap_or_else(|| format!("NCCL error {code}"))
    }

    /// `ncclGetLastError`: the last error NCCL recorded in this process, on
    /// one line; None where the library lacks the call or it says nothing.
    pub(crate) fn last_error(&self) -> Option<String> {
        let f = self.fns.get_last_error?;
        // SAFETY: NCCL reads no communicator here (the last error is kept
        // per process), so NULL is passed; the text is static or lives in
        // NCCL's own buffer until its next error, and is copied at once.
        unsafe { c_text(f(std::ptr::null_mut())) }
    }

    /// Ok for ncclSuccess, else the error with NCCL's words.
    fn check(&self, function: &'static str, code: Code) -> Result<(), NcclCallError> {
        if code == 0 {
            return Ok(());
        }
        Err(NcclCallError { function, code, text: self.error_string(code), last: self.last_error() })
    }

    /// `ncclGetUniqueId`: a new id for [`NcclLib::comm_init_rank`], made on
    /// one rank and sent to the others.
    pub(crate) fn get_unique_id(&self) -> Result<ncclUniqueId, NcclCallError> {
        let mut id = ncclUniqueId { internal: [0; 128] };
        // SAFETY: NCCL writes one ncclUniqueId through the pointer.
        let rc = unsafe { (self.fns.get_unique_id)(&mut id) };
        self.check("ncclGetUniqueId", rc).map(|()| id)
    }

    /// `ncclCommInitRank`: joins communicator `id` as `rank` of `nranks` on
    /// the calling thread's current CUDA device; blocks until every rank
    /// has joined.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL": the current CUDA device is the one
    /// this rank's buffers and streams will be on.
    pub(crate) unsafe fn comm_init_rank(
        &self,
        nranks: i32,
        id: ncclUniqueId,
        rank: i32,
    ) -> Result<ncclComm_t, NcclCallError> {
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: NCCL writes the new communicator through the pointer; the
        // id is passed by value as nccl.h declares.
        let rc = unsafe { (self.fns.comm_init_rank)(&mut comm, nranks, id, rank) };
        self.check("ncclCommInitRank", rc).map(|()| comm)
    }

    /// `ncclCommInitRankConfig` with `config`; None where the library
    /// lacks it (before 2.14).
    ///
    /// # Safety
    ///
    /// As [`NcclLib::comm_init_rank`].
    pub(crate) unsafe fn comm_init_rank_config(
        &self,
        nranks: i32,
        id: ncclUniqueId,
        rank: i32,
        mut config: Config,
    ) -> Option<Result<ncclComm_t, NcclCallError>> {
        let f = self.fns.comm_init_rank_config?;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: as comm_init_rank's, and the config is a whole
        // NCCL_CONFIG_INITIALIZER of its declared size, alive for the call.
        let rc = unsafe { f(&mut comm, nranks, id, rank, &mut config) };
        Some(self.check("ncclCommInitRankConfig", rc).map(|()| comm))
    }

    /// Whether the library allocates buffers itself (`ncclMemAlloc`, NCCL
    /// 2.19 on), as nccl-tests allocates every one there.
    pub(crate) fn allocates(&self) -> bool {
        self.version_code >= 21900 && self.fns.mem.is_some()
    }

    /// `ncclMemAlloc` of `bytes` on the current device; None where the
    /// library does not allocate ([`NcclLib::allocates`]).
    pub(crate) fn mem_alloc(&self, bytes: usize) -> Option<Result<*mut c_void, NcclCallError>> {
        let (alloc, _) = self.fns.mem.filter(|_| self.allocates())?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: ncclMemAlloc writes one pointer through `p`.
        let rc = unsafe { alloc(&mut p, bytes) };
        Some(self.check("ncclMemAlloc", rc).map(|()| p))
    }

    /// `ncclMemFree` of what [`NcclLib::mem_alloc`] gave.
    ///
    /// # Safety
    ///
    /// `p` came from this library's ncclMemAlloc and is not used after.
    pub(crate) unsafe fn mem_free(&self, p: *mut c_void) -> Result<(), NcclCallError> {
        let Some((_, free)) = self.fns.mem else { return Err(NcclCallError::missing("ncclMemFree")) };
        // SAFETY: the caller vouches for `p`.
        let rc = unsafe { free(p) };
        self.check("ncclMemFree", rc)
    }

    /// NCCL's names for registering and deregistering (a symmetric window
    /// with `window`, else a local registration).
    pub(crate) fn registration_calls(window: bool) -> (&'static str, &'static str) {
        if window {
            ("ncclCommWindowRegister", "ncclCommWindowDeregister")
        } else {
            ("ncclCommRegister", "ncclCommDeregister")
        }
    }

    /// Registers `bytes` at `p` with `comm` (nccl-tests' `-R`): a local
    /// registration (`ncclCommRegister`, NCCL 2.19 on), or with `window`
    /// a symmetric window (`ncclCommWindowRegister`, 2.27 on; collective:
    /// every rank registers its buffers in the same order). The handle.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `p` holds `bytes` on `comm`'s
    /// device, and the handle is deregistered before `p` is freed and
    /// `comm` destroyed ([`NcclLib::deregister`]).
    pub(crate) unsafe fn register(
        &self,
        comm: ncclComm_t,
        p: *mut c_void,
        bytes: usize,
        window: bool,
    ) -> Result<*mut c_void, NcclCallError> {
        let (name, _) = Self::registration_calls(window);
        let mut handle: *mut c_void = std::ptr::null_mut();
        let rc = match (window, self.fns.window, self.fns.register) {
            // SAFETY (both): the caller vouches for the arguments.
            (true, Some((f, _)), _) if self.version_code >= 22700 => unsafe {
                f(comm, p, bytes, &mut handle, WIN_COLL_SYMMETRIC)
            },
            (false, _, Some((f, _))) if self.version_code >= 21900 => unsafe { f(comm, p, bytes, &mut handle) },
            _ => return Err(NcclCallError::missing(name)),
        };
        self.check(name, rc).map(|()| handle)
    }

    /// Undoes [`NcclLib::register`].
    ///
    /// # Safety
    ///
    /// `handle` came from `register(comm, .., window)` and is not used
    /// after; `comm` is alive.
    pub(crate) unsafe fn deregister(
        &self,
        comm: ncclComm_t,
        handle: *mut c_void,
        window: bool,
    ) -> Result<(), NcclCallError> {
        let (_, name) = Self::registration_calls(window);
        let f = match (window, self.fns.window, self.fns.register) {
            (true, Some((_, f)), _) | (false, _, Some((_, f))) => f,
            _ => return Err(NcclCallError::missing(name)),
        };
        // SAFETY: the caller vouches for both.
        let rc = unsafe { f(comm, handle) };
        self.check(name, rc)
    }

    /// `ncclCommDestroy`: frees `comm` once its work has finished.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `comm` is not used afterwards.
    pub(crate) unsafe fn comm_destroy(&self, comm: ncclComm_t) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for `comm`.
        let rc = unsafe { (self.fns.comm_destroy)(comm) };
        self.check("ncclCommDestroy", rc)
    }

    /// `ncclCommAbort`: stops `comm`'s pending work and frees it.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `comm` is not used afterwards.
    pub(crate) unsafe fn comm_abort(&self, comm: ncclComm_t) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for `comm`.
        let rc = unsafe { (self.fns.comm_abort)(comm) };
        self.check("ncclCommAbort", rc)
    }

    /// `ncclCommGetAsyncError`: Err when the query fails or when `comm`
    /// holds an asynchronous error (the error's `function` then says
    /// which; `code` 7, ncclInProgress, means work is still going on).
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    pub(crate) unsafe fn comm_get_async_error(&self, comm: ncclComm_t) -> Result<(), NcclCallError> {
        let mut state: Code = 0;
        // SAFETY: the caller vouches for `comm`; NCCL writes one result code
        // through the pointer.
        let rc = unsafe { (self.fns.comm_get_async_error)(comm, &mut state) };
        self.check("ncclCommGetAsyncError", rc)?;
        self.check("ncclCommGetAsyncError (the communicator's asynchronous error)", state)
    }

    /// `ncclAllReduce` of `count` elements.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    #[allow(clippy::too_many_arguments)] // NCCL's own argument list
    pub(crate) unsafe fn all_reduce(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        op: RedOp,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.all_reduce)(send, recv, count, datatype, op, comm, stream) };
        self.check("ncclAllReduce", rc)
    }

    /// `ncclAllGather` of `send_count` elements from each rank.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `recv` holds `send_count` times the
    /// number of ranks.
    pub(crate) unsafe fn all_gather(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        send_count: usize,
        datatype: ncclDataType_t,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.all_gather)(send, recv, send_count, datatype, comm, stream) };
        self.check("ncclAllGather", rc)
    }

    /// `ncclReduceScatter`, `recv_count` elements to each rank.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `send` holds `recv_count` times the
    /// number of ranks.
    #[allow(clippy::too_many_arguments)] // NCCL's own argument list
    pub unsafe fn reduce_scatter(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        recv_count: usize,
        datatype: ncclDataType_t,
        op: RedOp,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.reduce_scatter)(send, recv, recv_count, datatype, op, comm, stream) };
        self.check("ncclReduceScatter", rc)
    }

    /// Whether the library has NCCL 2.28's own all-to-all, gather and
    /// scatter (a version from 2.28 on, and the three functions); nccl-tests
    /// calls them there, and grouped sends and receives before.
    pub(crate) fn has_rooted_and_all_to_all(&self) -> bool {
        let f = &self.fns;
        self.version_code >= 22800 && f.all_to_all.is_some() && f.gather.is_some() && f.scatter.is_some()
    }

    /// `ncclAlltoAll` of `count` elements to and from every rank; None
    /// where [`NcclLib::has_rooted_and_all_to_all`] is not so.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    pub(crate) unsafe fn all_to_all(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Option<Result<(), NcclCallError>> {
        let f = self.fns.all_to_all.filter(|_| self.has_rooted_and_all_to_all())?;
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { f(send, recv, count, datatype, comm, stream) };
        Some(self.check("ncclAlltoAll", rc))
    }

    /// `ncclGather` (`scatter` false) or `ncclScatter` of `count` elements
    /// per rank at `root`; None where [`NcclLib::has_rooted_and_all_to_all`]
    /// is not so.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    #[allow(clippy::too_many_arguments)] // NCCL's own argument list
    pub(crate) unsafe fn rooted(
        &self,
        scatter: bool,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        root: c_int,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Option<Result<(), NcclCallError>> {
        let (f, name) = if scatter { (self.fns.scatter, "ncclScatter") } else { (self.fns.gather, "ncclGather") };
        let f = f.filter(|_| self.has_rooted_and_all_to_all())?;
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { f(send, recv, count, datatype, root, comm, stream) };
        Some(self.check(name, rc))
    }

    /// `ncclBroadcast` of `count` elements from `root`'s `send` into every
    /// rank's `recv`.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    #[allow(clippy::too_many_arguments)] // NCCL's own argument list
    pub unsafe fn broadcast(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        root: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.broadcast)(send, recv, count, datatype, root, comm, stream) };
        self.check("ncclBroadcast", rc)
    }

    /// `ncclReduce` of `count` elements into `root`'s `recv`.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    #[allow(clippy::too_many_arguments)] // NCCL's own argument list
    pub unsafe fn reduce(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        op: RedOp,
        root: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.reduce)(send, recv, count, datatype, op, root, comm, stream) };
        self.check("ncclReduce", rc)
    }

    /// `ncclSend` of `count` elements to `peer`.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    pub unsafe fn send(
        &self,
        send: *const c_void,
        count: usize,
        datatype: ncclDataType_t,
        peer: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.send)(send, count, datatype, peer, comm, stream) };
        self.check("ncclSend", rc)
    }

    /// `ncclRecv` of `count` elements from `peer`.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    pub(crate) unsafe fn recv(
        &self,
        recv: *mut c_void,
        count: usize,
        datatype: ncclDataType_t,
        peer: i32,
        comm: ncclComm_t,
        stream: cudaStream_t,
    ) -> Result<(), NcclCallError> {
        // SAFETY: the caller vouches for the arguments.
        let rc = unsafe { (self.fns.recv)(recv, count, datatype, peer, comm, stream) };
        self.check("ncclRecv", rc)
    }

    /// `ncclGroupStart`: the calls up to the matching
    /// [`NcclLib::group_end`] are issued together.
    pub fn group_start(&self) -> Result<(), NcclCallError> {
        // SAFETY: takes no arguments; it only opens a group in NCCL's
        // per-thread state.
        let rc = unsafe { (self.fns.group_start)() };
        self.check("ncclGroupStart", rc)
    }

    /// `ncclGroupEnd`: issues the calls made since
    /// [`NcclLib::group_start`]. Their buffers are covered by the contracts of
    /// the `unsafe` calls that queued them.
    pub fn group_end(&self) -> Result<(), NcclCallError> {
        // SAFETY: takes no arguments; what it launches was queued by
        // `unsafe` calls whose callers vouched for the buffers.
        let rc = unsafe { (self.fns.group_end)() };
        self.check("ncclGroupEnd", rc)
    }

    /// Whether the library makes pre-multiplied sums (NCCL 2.11 on).
    pub fn has_pre_mul_sum(&self) -> bool {
        self.fns.pre_mul_sum.is_some()
    }

    /// `ncclRedOpCreatePreMulSum`: a sum of the ranks' inputs each first
    /// multiplied by the scalar its rank gives, `scalar` being one element
    /// of `datatype` (its first bytes) read now, from host memory.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL"; `scalar` holds at least one element
    /// of `datatype`.
    pub(crate) unsafe fn red_op_create_pre_mul_sum(
        &self,
        scalar: &mut [u8; 8],
        datatype: ncclDataType_t,
        comm: ncclComm_t,
    ) -> Result<RedOp, NcclCallError> {
        let Some((create, _)) = self.fns.pre_mul_sum else {
            return Err(NcclCallError::missing("ncclRedOpCreatePreMulSum"));
        };
        let mut op = RedOp(0);
        // SAFETY: NCCL writes one operation through `op` and reads one
        // element of `datatype` from `scalar`; the caller vouches for comm.
        let rc = unsafe { create(&mut op, scalar.as_mut_ptr() as *mut c_void, datatype, SCALAR_HOST_IMMEDIATE, comm) };
        self.check("ncclRedOpCreatePreMulSum", rc).map(|()| op)
    }

    /// `ncclRedOpDestroy` of an operation [`NcclLib::red_op_create_pre_mul_sum`]
    /// made on `comm`, once every call that uses it has been issued.
    ///
    /// # Safety
    ///
    /// See the module's "Calling NCCL".
    pub(crate) unsafe fn red_op_destroy(&self, op: RedOp, comm: ncclComm_t) -> Result<(), NcclCallError> {
        let Some((_, destroy)) = self.fns.pre_mul_sum else {
            return Err(NcclCallError::missing("ncclRedOpDestroy"));
        };
        // SAFETY: an operation made on `comm`, per the caller.
        let rc = unsafe { destroy(op, comm) };
        self.check("ncclRedOpDestroy", rc)
    }
}

#[cfg(test)]
mod tests;
