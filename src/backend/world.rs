//! The MPI world: initialisation and finalisation (through rsmpi), and the
//! control plane every run uses whatever its transport: rank and size,
//! barriers, the small gathers, reductions and broadcasts between sizes,
//! node ranks, abort, and the library's own description.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use mpi::environment::Threading;
use mpi::ffi;

use super::shim::Handles;
use super::{Control, ReduceOp};

/// The tag of [`World::release_from_root`]'s messages; no benchmark or
/// control-plane message uses it.
const RELEASE_TAG: c_int = 32_001;

/// [`World::fail`] from any thread of a process whose MPI is initialised:
/// a lane of a team (src/backend/team.rs) that meets a failure ends the
/// job as the main thread would, `MPI_Abort` on `MPI_COMM_WORLD`.
#[cold]
pub(crate) fn fail_job(line: &str, code: i32) -> ! {
    let line = format!("{}: {line}", crate::fatal::program());
    crate::diag::say(&line);
    crate::fatal::end_record(&line, code);
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: MPI is initialised (the world exists); reads a predefined
    // handle.
    unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code) };
    std::process::exit(code)
}

/// `MPI_Wtime`, from any thread (a clock read; no communication).
#[inline(always)]
pub(crate) fn wtime() -> f64 {
    // SAFETY: plain library call.
    unsafe { ffi::RSMPI_Wtime() }
}

/// Seconds between ticks of [`wtime`].
pub(crate) fn wtick() -> f64 {
    // SAFETY: plain library call.
    unsafe { ffi::RSMPI_Wtick() }
}

/// An initialised MPI world. Dropping it finalises MPI.
/// Bytes rank 0 has received through [`World`]'s gathers so far (values,
/// and the lengths of byte gathers), and how many gathers there were: what
/// the job collects about its ranks grows with np, and this says by how
/// much (the run record's `startup`).
static GATHERED_BYTES: AtomicU64 = AtomicU64::new(0);
static GATHERS: AtomicU64 = AtomicU64::new(0);

/// (bytes, gathers) rank 0 has received so far; zeros on other ranks.
pub fn gathered() -> (u64, u64) {
    (GATHERED_BYTES.load(Ordering::Relaxed), GATHERS.load(Ordering::Relaxed))
}

fn count_gather(rank: usize, bytes: usize) {
    if rank == 0 {
        GATHERED_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
        GATHERS.fetch_add(1, Ordering::Relaxed);
    }
}

/// The thread support a benchmark asks of `MPI_Init_thread`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ThreadLevel {
    /// `MPI_THREAD_SINGLE`, what `MPI_Init` gives (every benchmark but
    /// osu_latency_mt).
    Single,
    /// `MPI_THREAD_MULTIPLE`: MPI called from several threads at once.
    Multiple,
}

pub struct World {
    universe: Option<mpi::environment::Universe>,
    comm: ffi::MPI_Comm,
    rank: usize,
    size: usize,
    h: Handles,
    /// The thread support the library gave.
    threads: ThreadLevel,
}

impl World {
    /// Initialises MPI (`MPI_Init_thread` with MPI_THREAD_SINGLE, like
    /// `MPI_Init`). Returns None if MPI was already initialised.
    /// `foreign_launcher`: the launcher's variables are those of a
    /// launcher Open MPI cannot work with (hydra's, MVAPICH's).
    pub fn init(foreign_launcher: bool) -> Option<World> {
        Self::init_with(ThreadLevel::Single, foreign_launcher)
    }

    /// Initialises MPI asking `MPI_Init_thread` for `level` (the library
    /// may give less: [`World::threads`]); `foreign_launcher` as for
    /// [`World::init`].
    pub(crate) fn init_with(level: ThreadLevel, foreign_launcher: bool) -> Option<World> {
        let asked = match level {
            ThreadLevel::Single => Threading::Single,
            ThreadLevel::Multiple => Threading::Multiple,
        };
        if foreign_launcher {
            own_session_dir_for_open_mpi();
        }
        let (universe, given) = mpi::initialize_with_threading(asked)?;
        let given = if given == Threading::Multiple { ThreadLevel::Multiple } else { ThreadLevel::Single };
        // SAFETY: MPI is initialised; these read predefined handles.
        unsafe {
            let comm = ffi::RSMPI_COMM_WORLD;
            let mut rank = 0;
            let mut size = 0;
            ffi::MPI_Comm_rank(comm, &mut rank);
            ffi::MPI_Comm_size(comm, &mut size);
            let (rank, size) = (rank as usize, size as usize);
            Some(World { universe: Some(universe), comm, rank, size, h: Handles::get(), threads: given })
        }
    }

    /// The thread support MPI gave (`MPI_Init_thread`'s `provided`).
    pub fn threads(&self) -> ThreadLevel {
        self.threads
    }

    /// The communicator every rank of the job is in.
    pub(super) fn comm(&self) -> ffi::MPI_Comm {
        self.comm
    }

    pub(super) fn handles(&self) -> Handles {
        self.h
    }

    /// `MPI_Wtime`.
    #[inline(always)]
    pub(crate) fn wtime(&self) -> f64 {
        wtime()
    }

    /// Seconds between ticks of `MPI_Wtime`.
    pub(crate) fn wtick(&self) -> f64 {
        wtick()
    }

    /// The MPI library's own version string (`MPI_Get_library_version`).
    pub fn library_version(&self) -> String {
        mpi::environment::library_version()
            .map(|s| s.trim_end_matches(['\0', '\n', ' ']).to_string())
            .unwrap_or_else(|_| "unknown".into())
    }

    /// MPI standard version (`MPI_Get_version`), e.g. "3.1".
    pub(crate) fn standard_version(&self) -> String {
        let (a, b) = mpi::environment::version();
        format!("{a}.{b}")
    }

    /// `MPI_Get_processor_name`.
    pub(crate) fn processor_name(&self) -> String {
        mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into())
    }

    /// `MPI_Abort` on the world: ends every rank with `code`.
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: valid communicator.
        unsafe { ffi::MPI_Abort(self.comm, code) };
        std::process::exit(code)
    }

    /// Ends the job from this rank after a failure the others cannot be
    /// told of through MPI (they may be waiting inside NCCL or CUDA): the
    /// line, after the program's name, on stderr; the run record ended
    /// with it by whichever rank this is ([`crate::fatal`]); stdout
    /// flushed; then `MPI_Abort`.
    #[cold]
    pub fn fail(&self, line: &str, code: i32) -> ! {
        fail_job(line, code)
    }

    /// Finalises MPI now.
    pub(crate) fn finalize(mut self) {
        self.universe.take();
    }

    /// Ends this process's part of MPI without finalising: for a rank that
    /// leaves while others may never reach `MPI_Finalize` (it would wait
    /// for them).
    pub(crate) fn abandon(self) {
        std::mem::forget(self);
        remove_own_session_dir();
    }

    /// Rank 0 tells every other rank that it has written all it will write:
    /// a zero-byte message to each, with a tag nothing else uses, so it
    /// matches nothing a benchmark left behind. Point-to-point and bounded
    /// by `bound`, so ranks that took different paths (one failed where
    /// the others went on) wait at most that long instead of hanging in a
    /// collective. Returns whether this rank's part completed in time.
    pub(crate) fn release_from_root(&self, bound: std::time::Duration) -> bool {
        if self.size < 2 {
            return true;
        }
        let root = self.rank == 0;
        // SAFETY: reads a predefined handle.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        let mut reqs = vec![null; if root { self.size - 1 } else { 1 }];
        // SAFETY: zero-count messages touch no buffer; the requests live in
        // `reqs` until completed or abandoned with the process.
        unsafe {
            if root {
                for (i, req) in reqs.iter_mut().enumerate() {
                    let to = (i + 1) as c_int;
                    ffi::MPI_Isend(std::ptr::null(), 0, ffi::RSMPI_UINT8_T, to, RELEASE_TAG, self.comm, req);
                }
            } else {
                ffi::MPI_Irecv(std::ptr::null_mut(), 0, ffi::RSMPI_UINT8_T, 0, RELEASE_TAG, self.comm, &mut reqs[0]);
            }
        }
        let start = std::time::Instant::now();
        loop {
            let mut done: c_int = 0;
            // SAFETY: `reqs` holds valid (or completed, null) requests.
            unsafe { ffi::MPI_Testall(reqs.len() as c_int, reqs.as_mut_ptr(), &mut done, ffi::RSMPI_STATUSES_IGNORE) };
            if done != 0 {
                return true;
            }
            if start.elapsed() >= bound {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// `MPI_Gather` of `k` doubles per rank to rank 0.
    fn gather_doubles(&self, xs: &[f64]) -> Vec<f64> {
        let k = xs.len();
        let root = self.rank == 0;
        let mut all = vec![0.0f64; if root { self.size * k } else { 1 }];
        // SAFETY: rank 0 receives k doubles per rank; every rank sends k.
        unsafe {
            ffi::MPI_Gather(
                xs.as_ptr() as *const c_void,
                k as c_int,
                self.h.double,
                all.as_mut_ptr() as *mut c_void,
                k as c_int,
                self.h.double,
                0,
                self.comm,
            )
        };
        count_gather(self.rank, all.len() * std::mem::size_of::<f64>());
        if root {
            all
        } else {
            Vec::new()
        }
    }

    /// `MPI_Reduce` of doubles to rank 0.
    fn reduce_doubles(&self, xs: &[f64], op: ReduceOp) -> Vec<f64> {
        let mut out = vec![0.0f64; xs.len()];
        // SAFETY: equal-length buffers.
        unsafe {
            ffi::MPI_Reduce(
                xs.as_ptr() as *const c_void,
                out.as_mut_ptr() as *mut c_void,
                xs.len() as c_int,
                self.h.double,
                Handles::op(op),
                0,
                self.comm,
            )
        };
        out
    }
}

impl Control for World {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    #[inline(always)]
    fn barrier(&self) {
        // SAFETY: valid communicator.
        unsafe { ffi::MPI_Barrier(self.comm) };
    }

    fn gather_f64(&self, x: f64) -> Vec<f64> {
        self.gather_doubles(&[x])
    }

    fn gather_f64_slice(&self, xs: &[f64]) -> Vec<f64> {
        self.gather_doubles(xs)
    }

    fn reduce_f64(&self, x: f64, op: ReduceOp) -> f64 {
        self.reduce_doubles(&[x], op)[0]
    }

    fn reduce_f64_slice(&self, xs: &[f64], op: ReduceOp) -> Vec<f64> {
        self.reduce_doubles(xs, op)
    }

    fn allreduce_sum_u64(&self, x: u64) -> u64 {
        let mut out = 0u64;
        // SAFETY: one value in, one out.
        unsafe {
            ffi::MPI_Allreduce(
                &x as *const u64 as *const c_void,
                &mut out as *mut u64 as *mut c_void,
                1,
                self.h.u64,
                self.h.sum,
                self.comm,
            )
        };
        out
    }

    fn bcast_u64(&self, x: u64) -> u64 {
        let mut v = x;
        // SAFETY: one value.
        unsafe { ffi::MPI_Bcast(&mut v as *mut u64 as *mut c_void, 1, self.h.u64, 0, self.comm) };
        v
    }

    fn bcast_bytes(&self, mine: &[u8]) -> Vec<u8> {
        let len = self.bcast_u64(mine.len() as u64) as usize;
        let mut all = if self.rank == 0 { mine.to_vec() } else { vec![0u8; len] };
        if len == 0 {
            return all;
        }
        let byte = self.h.dt(crate::datatype::Datatype::Char);
        // SAFETY: `all` holds `len` bytes on every rank; len fits an int
        // (callers send short texts).
        unsafe { ffi::MPI_Bcast(all.as_mut_ptr() as *mut c_void, len as c_int, byte, 0, self.comm) };
        all
    }

    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let n = self.size;
        let root = self.rank == 0;
        let len = mine.len() as c_int;
        let mut lens = vec![0 as c_int; if root { n } else { 1 }];
        // SAFETY: rank 0 receives n ints; others pass a dummy receive buffer.
        unsafe {
            ffi::MPI_Gather(
                &len as *const c_int as *const c_void,
                1,
                self.h.int,
                lens.as_mut_ptr() as *mut c_void,
                1,
                self.h.int,
                0,
                self.comm,
            )
        };
        let (displs, total) = if root {
            let mut d = Vec::with_capacity(n);
            let mut acc: c_int = 0;
            for &l in &lens {
                d.push(acc);
                acc += l;
            }
            (d, acc as usize)
        } else {
            (vec![0], 0)
        };
        let mut all = vec![0u8; total.max(1)];
        let byte = self.h.dt(crate::datatype::Datatype::Char);
        // An empty slice's pointer is dangling (address 1), which Open MPI
        // reads as MPI_IN_PLACE and refuses on a non-root rank.
        let none = [0u8; 1];
        let send = if mine.is_empty() { none.as_ptr() } else { mine.as_ptr() };
        // SAFETY: counts and displacements describe `all` on rank 0.
        unsafe {
            ffi::MPI_Gatherv(
                send as *const c_void,
                len,
                byte,
                all.as_mut_ptr() as *mut c_void,
                lens.as_ptr(),
                displs.as_ptr(),
                byte,
                0,
                self.comm,
            )
        };
        if !root {
            return Vec::new();
        }
        count_gather(0, total + n * std::mem::size_of::<c_int>());
        (0..n)
            .map(|r| {
                let s = displs[r] as usize;
                all[s..s + lens[r] as usize].to_vec()
            })
            .collect()
    }

    /// `MPI_Comm_split_type` with MPI_COMM_TYPE_SHARED.
    fn host_name(&self) -> String {
        self.processor_name()
    }

    fn node_ranks(&self) -> (usize, usize) {
        // SAFETY: collective over the world; the new communicator is freed.
        unsafe {
            let mut node = ffi::RSMPI_COMM_NULL;
            ffi::MPI_Comm_split_type(
                self.comm,
                ffi::RSMPI_COMM_TYPE_SHARED,
                self.rank as c_int,
                ffi::RSMPI_INFO_NULL,
                &mut node,
            );
            let (mut size, mut rank) = (1, 0);
            ffi::MPI_Comm_size(node, &mut size);
            ffi::MPI_Comm_rank(node, &mut rank);
            ffi::MPI_Comm_free(&mut node);
            (size as usize, rank as usize)
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.universe.take();
        remove_own_session_dir();
    }
}

/// The session directory this process gave Open MPI of its own, if it did
/// ([`own_session_dir_for_open_mpi`]).
static OWN_SESSION_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// An Open MPI build started by another MPI's launcher (MPICH's or
/// MVAPICH's mpiexec) comes up as one singleton per process, and every
/// singleton of the launch makes the same `$TMPDIR/ompi.<host>.<uid>`
/// session directory at the same moment: the loser of that race fails in
/// `orte_init` with forty lines of its own, before commbench can say in
/// one line what is wrong (the launcher does not match). So before
/// `MPI_Init` under such a launcher (the caller knows), when the library
/// (`MPI_Get_library_version`, which MPI allows before init) is Open MPI,
/// each process gets a session directory base of its own under TMPDIR,
/// unless the user chose one. Launchers Open MPI can work with (its own,
/// srun, PMIx) are left alone.
fn own_session_dir_for_open_mpi() {
    let library = mpi::environment::library_version().unwrap_or_default();
    if !library.starts_with("Open MPI") {
        return;
    }
    const BASES: [&str; 2] = ["OMPI_MCA_orte_tmpdir_base", "OMPI_MCA_prte_tmpdir_base"];
    if BASES.iter().any(|k| std::env::var_os(k).is_some()) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("commbench-ompi-{}", std::process::id()));
    if std::fs::create_dir(&dir).is_err() {
        return;
    }
    for key in BASES {
        // Before MPI starts; no thread of this process reads these.
        std::env::set_var(key, &dir);
    }
    let _ = OWN_SESSION_DIR.set(dir);
}

/// Removes the directory [`own_session_dir_for_open_mpi`] made,
/// once MPI is done with it.
fn remove_own_session_dir() {
    if let Some(dir) = OWN_SESSION_DIR.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}
