//! MPI's persistent requests: collectives bound once and started as often
//! as needed (MPI-4), and bound point-to-point sends and receives.

use super::*;

/// Frees the persistent requests a run left bound, before MPI ends.
impl<'w, M: Memory> Drop for Mpi<'w, M> {
    fn drop(&mut self) {
        self.free_bound(Bound::Timed);
        self.free_bound(Bound::Warm);
    }
}

impl<'w, M: Memory> PersistentCollectives for Mpi<'w, M> {
    fn persistent_refusal(&self) -> Option<String> {
        (!crate::backend::shim::persistent_collectives()).then(|| {
            let library = self.world.library_version();
            let name = library.split([',', '\n']).next().unwrap_or("unknown");
            format!(
                "this MPI library has no persistent collectives (MPI_*_init are MPI-4; {name} is MPI {})",
                self.world.standard_version()
            )
        })
    }

    unsafe fn bind(&self, slot: Bound, start: impl FnOnce()) {
        self.free_bound(slot);
        self.mode.set(Form::Init);
        start();
        self.mode.set(Form::Now);
        // SAFETY: reads a constant of the MPI library.
        let null = unsafe { ffi::RSMPI_REQUEST_NULL };
        self.bound[slot as usize].set(self.pending.replace(null));
    }

    #[inline(always)]
    fn start_bound(&self, slot: Bound) {
        // SAFETY: the slot holds a request bound by `bind` (MPI reports
        // an error on a null one).
        unsafe { ffi::MPI_Start(self.bound[slot as usize].as_ptr()) };
    }

    #[inline(always)]
    fn wait_bound(&self, slot: Bound) {
        // SAFETY: as in start_bound; a persistent request stays allocated.
        unsafe { ffi::MPI_Wait(self.bound[slot as usize].as_ptr(), ffi::RSMPI_STATUS_IGNORE) };
    }

    fn free_bound(&self, slot: Bound) {
        let req = &self.bound[slot as usize];
        // SAFETY: a request this transport bound, inactive (every start is
        // waited for); MPI_Request_free sets the slot back to null.
        unsafe {
            if req.get() != ffi::RSMPI_REQUEST_NULL {
                ffi::MPI_Request_free(req.as_ptr());
            }
        }
    }
}

impl<'w, M: Memory> PersistentPointToPoint for Mpi<'w, M> {
    unsafe fn bind_send(&self, buf: &M::Buf, env: Envelope, reqs: &mut Requests, slot: usize) {
        check_len(buf.len(), env.bytes());
        let req = &mut reqs.reqs[slot];
        // SAFETY: the buffer holds count elements; the caller keeps it.
        unsafe {
            ffi::MPI_Send_init(
                buf.as_ptr() as *const c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                req,
            )
        };
    }

    unsafe fn bind_recv(&self, buf: &mut M::Buf, env: Envelope, reqs: &mut Requests, slot: usize) {
        check_len(buf.len(), env.bytes());
        let req = &mut reqs.reqs[slot];
        // SAFETY: as in bind_send.
        unsafe {
            ffi::MPI_Recv_init(
                buf.as_mut_ptr() as *mut c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                req,
            )
        };
    }

    #[inline(always)]
    fn startall(&self, reqs: &mut Requests, offset: usize, n: usize) {
        assert!(offset + n <= reqs.reqs.len());
        // SAFETY: in-bounds requests, bound by bind_send / bind_recv.
        unsafe { ffi::MPI_Startall(n as c_int, reqs.reqs.as_mut_ptr().add(offset)) };
    }

    fn free_requests(&self, reqs: &mut Requests, offset: usize, n: usize) {
        for req in &mut reqs.reqs[offset..offset + n] {
            // SAFETY: an inactive request of this transport; freeing sets
            // it back to null.
            unsafe {
                if *req != ffi::RSMPI_REQUEST_NULL {
                    ffi::MPI_Request_free(req);
                }
            }
        }
    }
}
