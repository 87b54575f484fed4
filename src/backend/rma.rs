//! One-sided communication (MPI RMA), the seam the one-sided benchmarks
//! (osu_put_latency, osu_get_bw ...) time: how a window is created (`-w`),
//! which synchronisation closes an access epoch (`-s`), and the calls
//! themselves. A separate trait from [`Transport`] because only MPI has
//! windows here: UCX and NCCL do not implement it, and the options refuse
//! them for these benchmarks before any job starts. MPI's implementation
//! is at the end of this file (host memory only: `-d` is refused too).
//! The accumulating calls (osu_acc_latency, osu_fop_latency,
//! osu_get_acc_latency) always add (MPI_SUM), as OSU's do.

use std::ffi::{c_int, c_void};

use mpi::ffi;

use super::mpi_host::MpiHost;
use super::{check_len, Control, Transport};
use crate::buffer::{AlignedBuf, AllocError};
use crate::datatype::Datatype;

/// How a window's memory comes about (`-w`), with OSU's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WinKind {
    /// `MPI_Win_create` over memory the benchmark allocated.
    Create,
    /// `MPI_Win_allocate`: MPI allocates the window's memory.
    Allocate,
    /// `MPI_Win_create_dynamic`, the benchmark's memory attached, the
    /// peer's address exchanged.
    Dynamic,
}

/// How each access epoch is opened and closed (`-s`), with OSU's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// A shared lock and unlock around every iteration.
    Lock,
    /// Post/start/complete/wait: both ranks take part (active target).
    Pscw,
    /// `MPI_Win_fence`: both ranks take part (active target).
    Fence,
    /// One lock for the whole size; `MPI_Win_flush` ends each iteration.
    Flush,
    /// As `Flush` with `MPI_Win_flush_local` (origin buffer reusable).
    FlushLocal,
    /// `MPI_Win_lock_all` and `unlock_all` around every iteration.
    LockAll,
}

impl WinKind {
    pub const ALL: [WinKind; 3] = [WinKind::Create, WinKind::Allocate, WinKind::Dynamic];

    /// `-w`'s word, as OSU takes it (case does not matter).
    pub fn parse(word: &str) -> Option<WinKind> {
        WinKind::ALL.into_iter().find(|k| k.word().eq_ignore_ascii_case(word))
    }

    pub fn word(self) -> &'static str {
        match self {
            WinKind::Create => "create",
            WinKind::Allocate => "allocate",
            WinKind::Dynamic => "dynamic",
        }
    }

    /// What OSU's `# Window creation:` line names.
    pub(crate) fn mpi_call(self) -> &'static str {
        match self {
            WinKind::Create => "MPI_Win_create",
            WinKind::Allocate => "MPI_Win_allocate",
            WinKind::Dynamic => "MPI_Win_create_dynamic",
        }
    }
}

impl SyncMode {
    pub const ALL: [SyncMode; 6] =
        [SyncMode::Lock, SyncMode::Pscw, SyncMode::Fence, SyncMode::Flush, SyncMode::FlushLocal, SyncMode::LockAll];

    /// `-s`'s word, as OSU takes it (case does not matter).
    pub fn parse(word: &str) -> Option<SyncMode> {
        SyncMode::ALL.into_iter().find(|s| s.word().eq_ignore_ascii_case(word))
    }

    pub fn word(self) -> &'static str {
        match self {
            SyncMode::Lock => "lock",
            SyncMode::Pscw => "pscw",
            SyncMode::Fence => "fence",
            SyncMode::Flush => "flush",
            SyncMode::FlushLocal => "flush_local",
            SyncMode::LockAll => "lock_all",
        }
    }

    /// What OSU's `# Synchronization:` line names.
    pub(crate) fn mpi_calls(self) -> &'static str {
        match self {
            SyncMode::Lock => "MPI_Win_lock/unlock",
            SyncMode::Pscw => "MPI_Win_post/start/complete/wait",
            SyncMode::Fence => "MPI_Win_fence",
            SyncMode::Flush => "MPI_Win_flush",
            SyncMode::FlushLocal => "MPI_Win_flush_local",
            SyncMode::LockAll => "MPI_Win_lock_all/unlock_all",
        }
    }

    /// Whether the target rank takes part in every epoch (active target);
    /// otherwise only the origin calls anything (passive target).
    pub fn active(self) -> bool {
        matches!(self, SyncMode::Pscw | SyncMode::Fence)
    }
}

/// One-sided operations over windows, beside a transport's buffers.
/// Creating and dropping a window are collective: every rank does both in
/// the same order. Offsets and lengths are in bytes and checked against
/// the buffers and the window.
pub(crate) trait OneSided: Transport {
    /// A window of this transport; dropping it frees it (collective).
    type Win;

    /// A window of `bytes` on every rank, made as `kind` says, whose
    /// post/start group is `peer` alone.
    fn win_new(&self, kind: WinKind, bytes: usize, peer: usize) -> Result<Self::Win, AllocError>;

    /// This rank's own window memory, for fills and checks.
    fn win_read<R>(&self, win: &Self::Win, read: impl FnOnce(&[u8]) -> R) -> R;
    fn win_write(&self, win: &mut Self::Win, write: impl FnOnce(&mut [u8]));

    /// `bytes` from `origin[at..]` into `target`'s window at `at`.
    fn put(&self, win: &Self::Win, origin: &Self::Buf, at: usize, bytes: usize, target: usize);
    /// `bytes` from `target`'s window at `at` into `origin[at..]`.
    fn get(&self, win: &Self::Win, origin: &mut Self::Buf, at: usize, bytes: usize, target: usize);

    /// `count` elements of `dt` from `origin[at..]` added to `target`'s
    /// window at `at` (MPI_Accumulate, MPI_SUM).
    fn accumulate(&self, win: &Self::Win, origin: &Self::Buf, at: usize, count: usize, dt: Datatype, target: usize);
    /// As [`OneSided::accumulate`], the target's previous contents coming
    /// back into `result[at..]` (MPI_Get_accumulate, MPI_SUM).
    #[allow(clippy::too_many_arguments)]
    fn get_accumulate(
        &self,
        win: &Self::Win,
        origin: &Self::Buf,
        result: &mut Self::Buf,
        at: usize,
        count: usize,
        dt: Datatype,
        target: usize,
    );
    /// One element of `dt` at the start of `target`'s window: `origin[0..]`
    /// added to it, its previous value into `result` (MPI_Fetch_and_op,
    /// MPI_SUM).
    fn fetch_and_op(&self, win: &Self::Win, origin: &Self::Buf, result: &mut Self::Buf, dt: Datatype, target: usize);
    /// One element of `dt` at the start of `target`'s window replaced by
    /// `origin`'s where it equals `compare`'s; its previous value into
    /// `result` (MPI_Compare_and_swap).
    fn compare_and_swap(
        &self,
        win: &Self::Win,
        origin: &Self::Buf,
        compare: &Self::Buf,
        result: &mut Self::Buf,
        dt: Datatype,
        target: usize,
    );

    fn lock_shared(&self, win: &Self::Win, target: usize);
    /// An exclusive lock on `target`'s window (the atomics' `-s lock`).
    fn lock_exclusive(&self, win: &Self::Win, target: usize);
    fn unlock(&self, win: &Self::Win, target: usize);
    fn lock_all(&self, win: &Self::Win);
    fn unlock_all(&self, win: &Self::Win);
    fn flush(&self, win: &Self::Win, target: usize);
    fn flush_local(&self, win: &Self::Win, target: usize);
    fn fence(&self, win: &Self::Win);
    /// Opens an access epoch to the peer group.
    fn win_start(&self, win: &Self::Win);
    fn win_complete(&self, win: &Self::Win);
    /// Opens an exposure epoch to the peer group.
    fn win_post(&self, win: &Self::Win);
    fn win_wait(&self, win: &Self::Win);
}

/// An MPI window on the world's communicator.
pub(crate) struct MpiWin {
    win: ffi::MPI_Win,
    /// The window's memory when this rank allocated it (create, dynamic).
    own: Option<AlignedBuf>,
    /// The memory MPI_Win_allocate gave (null otherwise).
    allocated: *mut u8,
    bytes: usize,
    /// Where the peer's window starts for a put or get: 0, or its address
    /// for a dynamic window.
    remote: ffi::MPI_Aint,
    dynamic: bool,
    peer_group: ffi::MPI_Group,
    /// The communicator the window spans, for the barrier before detach.
    comm: ffi::MPI_Comm,
}

impl MpiWin {
    fn local(&self) -> *mut u8 {
        match &self.own {
            Some(_) if self.bytes == 0 => std::ptr::null_mut(),
            Some(b) => b.as_ptr() as *mut u8,
            None => self.allocated,
        }
    }
}

impl Drop for MpiWin {
    fn drop(&mut self) {
        // SAFETY: the window and group were made by win_new and are freed
        // once; a dynamic window's memory is detached before it goes.
        unsafe {
            if self.dynamic {
                if let Some(b) = &self.own {
                    // Detaching is local, not collective like the free: a
                    // passive target would pull its memory out from under
                    // origins still putting into it (MPI_ERR_RMA_RANGE), so
                    // every rank first agrees it is done with the window.
                    ffi::MPI_Barrier(self.comm);
                    ffi::MPI_Win_detach(self.win, b.as_ptr() as *const c_void);
                }
            }
            ffi::MPI_Win_free(&mut self.win);
            ffi::MPI_Group_free(&mut self.peer_group);
        }
    }
}

impl OneSided for MpiHost<'_> {
    type Win = MpiWin;

    fn win_new(&self, kind: WinKind, bytes: usize, peer: usize) -> Result<MpiWin, AllocError> {
        let comm = self.comm();
        let own = match kind {
            WinKind::Allocate => None,
            // OSU's page-aligned posix_memalign; at least a page so that a
            // zero-byte window still has an address to attach.
            WinKind::Create | WinKind::Dynamic => {
                let mut b = AlignedBuf::zeroed(bytes.max(1))?;
                b.as_mut_slice()[..bytes].fill(b'a');
                Some(b)
            }
        };
        let size = bytes as ffi::MPI_Aint;
        // SAFETY: plain MPI calls on the world's communicator; the memory
        // handed to MPI lives in the returned MpiWin until it is freed.
        unsafe {
            let info = ffi::RSMPI_INFO_NULL;
            let mut win = ffi::RSMPI_WIN_NULL;
            let mut allocated: *mut u8 = std::ptr::null_mut();
            let mut remote: ffi::MPI_Aint = 0;
            match kind {
                WinKind::Create => {
                    let base = own.as_ref().map_or(std::ptr::null_mut(), |b| b.as_ptr() as *mut c_void);
                    ffi::MPI_Win_create(base, size, 1, info, comm, &mut win);
                }
                WinKind::Allocate => {
                    ffi::MPI_Win_allocate(size, 1, info, comm, &mut allocated as *mut *mut u8 as *mut c_void, &mut win);
                    if bytes > 0 {
                        std::slice::from_raw_parts_mut(allocated, bytes).fill(b'a');
                    }
                }
                WinKind::Dynamic => {
                    ffi::MPI_Win_create_dynamic(info, comm, &mut win);
                    let base = own.as_ref().map_or(std::ptr::null_mut(), |b| b.as_ptr() as *mut c_void);
                    ffi::MPI_Win_attach(win, base, size);
                    let mut mine: ffi::MPI_Aint = 0;
                    ffi::MPI_Get_address(base, &mut mine);
                    // Every rank's address, everywhere (untimed).
                    let at_root: Vec<u8> = self.world().gather_bytes(&mine.to_le_bytes()).concat();
                    let all = self.world().bcast_bytes(&at_root);
                    let w = std::mem::size_of::<ffi::MPI_Aint>();
                    let theirs = all.get(peer * w..(peer + 1) * w).expect("every rank's window address");
                    remote = ffi::MPI_Aint::from_le_bytes(theirs.try_into().expect("address width"));
                }
            }
            let mut world_group = ffi::RSMPI_GROUP_NULL;
            ffi::MPI_Comm_group(comm, &mut world_group);
            let mut peer_group = ffi::RSMPI_GROUP_NULL;
            let ranks = [peer as c_int];
            ffi::MPI_Group_incl(world_group, 1, ranks.as_ptr(), &mut peer_group);
            ffi::MPI_Group_free(&mut world_group);
            Ok(MpiWin { win, own, allocated, bytes, remote, dynamic: kind == WinKind::Dynamic, peer_group, comm })
        }
    }

    fn win_read<R>(&self, win: &MpiWin, read: impl FnOnce(&[u8]) -> R) -> R {
        let p = win.local();
        if p.is_null() {
            return read(&[]);
        }
        // SAFETY: the window's local memory holds `bytes`.
        read(unsafe { std::slice::from_raw_parts(p, win.bytes) })
    }

    fn win_write(&self, win: &mut MpiWin, write: impl FnOnce(&mut [u8])) {
        let p = win.local();
        if p.is_null() {
            return write(&mut []);
        }
        // SAFETY: as above, and no epoch is open while fills run.
        write(unsafe { std::slice::from_raw_parts_mut(p, win.bytes) })
    }

    #[inline(always)]
    fn put(&self, win: &MpiWin, origin: &Self::Buf, at: usize, bytes: usize, target: usize) {
        check_len(origin.len(), at + bytes);
        check_len(win.bytes, at + bytes);
        // SAFETY: origin holds at + bytes (checked) and so does every window.
        unsafe {
            ffi::MPI_Put(
                origin.as_ptr().add(at) as *const c_void,
                bytes as c_int,
                self.mpi_type(Datatype::Char),
                target as c_int,
                win.remote + at as ffi::MPI_Aint,
                bytes as c_int,
                self.mpi_type(Datatype::Char),
                win.win,
            )
        };
    }

    #[inline(always)]
    fn get(&self, win: &MpiWin, origin: &mut Self::Buf, at: usize, bytes: usize, target: usize) {
        check_len(origin.len(), at + bytes);
        check_len(win.bytes, at + bytes);
        // SAFETY: as for put.
        unsafe {
            ffi::MPI_Get(
                origin.as_mut_ptr().add(at) as *mut c_void,
                bytes as c_int,
                self.mpi_type(Datatype::Char),
                target as c_int,
                win.remote + at as ffi::MPI_Aint,
                bytes as c_int,
                self.mpi_type(Datatype::Char),
                win.win,
            )
        };
    }

    #[inline(always)]
    fn accumulate(&self, win: &MpiWin, origin: &Self::Buf, at: usize, count: usize, dt: Datatype, target: usize) {
        let bytes = count * dt.size();
        check_len(origin.len(), at + bytes);
        check_len(win.bytes, at + bytes);
        let ty = self.mpi_type(dt);
        // SAFETY: origin and every window hold at + bytes (checked).
        unsafe {
            ffi::MPI_Accumulate(
                origin.as_ptr().add(at) as *const c_void,
                count as c_int,
                ty,
                target as c_int,
                win.remote + at as ffi::MPI_Aint,
                count as c_int,
                ty,
                self.sum_op(),
                win.win,
            )
        };
    }

    #[inline(always)]
    fn get_accumulate(
        &self,
        win: &MpiWin,
        origin: &Self::Buf,
        result: &mut Self::Buf,
        at: usize,
        count: usize,
        dt: Datatype,
        target: usize,
    ) {
        let bytes = count * dt.size();
        check_len(origin.len(), at + bytes);
        check_len(result.len(), at + bytes);
        check_len(win.bytes, at + bytes);
        let ty = self.mpi_type(dt);
        // SAFETY: origin, result and every window hold at + bytes (checked).
        unsafe {
            ffi::MPI_Get_accumulate(
                origin.as_ptr().add(at) as *const c_void,
                count as c_int,
                ty,
                result.as_mut_ptr().add(at) as *mut c_void,
                count as c_int,
                ty,
                target as c_int,
                win.remote + at as ffi::MPI_Aint,
                count as c_int,
                ty,
                self.sum_op(),
                win.win,
            )
        };
    }

    #[inline(always)]
    fn fetch_and_op(&self, win: &MpiWin, origin: &Self::Buf, result: &mut Self::Buf, dt: Datatype, target: usize) {
        check_len(origin.len(), dt.size());
        check_len(result.len(), dt.size());
        check_len(win.bytes, dt.size());
        // SAFETY: each buffer and every window hold one element (checked).
        unsafe {
            ffi::MPI_Fetch_and_op(
                origin.as_ptr() as *const c_void,
                result.as_mut_ptr() as *mut c_void,
                self.mpi_type(dt),
                target as c_int,
                win.remote,
                self.sum_op(),
                win.win,
            )
        };
    }

    #[inline(always)]
    fn compare_and_swap(
        &self,
        win: &MpiWin,
        origin: &Self::Buf,
        compare: &Self::Buf,
        result: &mut Self::Buf,
        dt: Datatype,
        target: usize,
    ) {
        check_len(origin.len(), dt.size());
        check_len(compare.len(), dt.size());
        check_len(result.len(), dt.size());
        check_len(win.bytes, dt.size());
        // SAFETY: as for fetch_and_op.
        unsafe {
            ffi::MPI_Compare_and_swap(
                origin.as_ptr() as *const c_void,
                compare.as_ptr() as *const c_void,
                result.as_mut_ptr() as *mut c_void,
                self.mpi_type(dt),
                target as c_int,
                win.remote,
                win.win,
            )
        };
    }

    #[inline(always)]
    fn lock_exclusive(&self, win: &MpiWin, target: usize) {
        // SAFETY: a valid window; MPI_LOCK_EXCLUSIVE as MPI_LOCK_SHARED below.
        unsafe { ffi::MPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as c_int, target as c_int, 0, win.win) };
    }

    #[inline(always)]
    fn lock_shared(&self, win: &MpiWin, target: usize) {
        // SAFETY: a valid window. MPI_LOCK_SHARED is a plain integer in
        // mpi.h (an enum in Open MPI, a macro in MPICH), so bindgen has it.
        unsafe { ffi::MPI_Win_lock(ffi::MPI_LOCK_SHARED as c_int, target as c_int, 0, win.win) };
    }

    #[inline(always)]
    fn unlock(&self, win: &MpiWin, target: usize) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_unlock(target as c_int, win.win) };
    }

    #[inline(always)]
    fn lock_all(&self, win: &MpiWin) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_lock_all(0, win.win) };
    }

    #[inline(always)]
    fn unlock_all(&self, win: &MpiWin) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_unlock_all(win.win) };
    }

    #[inline(always)]
    fn flush(&self, win: &MpiWin, target: usize) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_flush(target as c_int, win.win) };
    }

    #[inline(always)]
    fn flush_local(&self, win: &MpiWin, target: usize) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_flush_local(target as c_int, win.win) };
    }

    #[inline(always)]
    fn fence(&self, win: &MpiWin) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_fence(0, win.win) };
    }

    #[inline(always)]
    fn win_start(&self, win: &MpiWin) {
        // SAFETY: a valid window and group.
        unsafe { ffi::MPI_Win_start(win.peer_group, 0, win.win) };
    }

    #[inline(always)]
    fn win_complete(&self, win: &MpiWin) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_complete(win.win) };
    }

    #[inline(always)]
    fn win_post(&self, win: &MpiWin) {
        // SAFETY: a valid window and group.
        unsafe { ffi::MPI_Win_post(win.peer_group, 0, win.win) };
    }

    #[inline(always)]
    fn win_wait(&self, win: &MpiWin) {
        // SAFETY: a valid window.
        unsafe { ffi::MPI_Win_wait(win.win) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_osu_takes_them() {
        assert_eq!(WinKind::parse("create"), Some(WinKind::Create));
        assert_eq!(WinKind::parse("Allocate"), Some(WinKind::Allocate));
        assert_eq!(WinKind::parse("DYNAMIC"), Some(WinKind::Dynamic));
        assert_eq!(WinKind::parse("shared"), None);
        assert_eq!(SyncMode::parse("FENCE"), Some(SyncMode::Fence));
        assert_eq!(SyncMode::parse("flush_local"), Some(SyncMode::FlushLocal));
        assert_eq!(SyncMode::parse("lock_all"), Some(SyncMode::LockAll));
        assert_eq!(SyncMode::parse("flush-local"), None);
        assert_eq!(SyncMode::parse(""), None);
        for s in SyncMode::ALL {
            assert_eq!(SyncMode::parse(s.word()), Some(s));
        }
        assert!(SyncMode::Pscw.active() && SyncMode::Fence.active() && !SyncMode::Flush.active());
        assert_eq!(SyncMode::LockAll.mpi_calls(), "MPI_Win_lock_all/unlock_all");
        assert_eq!(WinKind::Dynamic.mpi_call(), "MPI_Win_create_dynamic");
    }
}
