//! MPI's blocking send and receive from the threads of one rank
//! (osu_latency_mt, under MPI_THREAD_MULTIPLE).

use super::*;

/// MPI's blocking send and receive for the threads of one rank
/// (osu_latency_mt).
pub(crate) struct MpiLane<'w> {
    world: &'w World,
    comm: ffi::MPI_Comm,
    h: Handles,
}

// SAFETY: the lane only passes the communicator and datatype handles to
// MPI_Send, MPI_Recv and MPI_Wtime, which MPI_THREAD_MULTIPLE (asserted
// when the lane is made) lets any thread call at any time; nothing in it
// is written after it is made.
unsafe impl Sync for MpiLane<'_> {}

impl<'w> Threaded for Mpi<'w, HostMemory> {
    type Lane<'a>
        = MpiLane<'a>
    where
        Self: 'a;

    fn lane(&self) -> MpiLane<'_> {
        // The runner refuses a job whose library gave less (OSU's words).
        assert!(
            self.world.threads() == crate::backend::world::ThreadLevel::Multiple,
            "threads need MPI_THREAD_MULTIPLE"
        );
        MpiLane { world: self.world, comm: self.comm, h: self.h }
    }
}

impl Lane<crate::buffer::AlignedBuf> for MpiLane<'_> {
    fn send(&self, buf: &crate::buffer::AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: the buffer holds count elements (checked above).
        unsafe {
            ffi::MPI_Send(
                buf.as_ptr() as *const c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
            )
        };
    }

    fn recv(&self, buf: &mut crate::buffer::AlignedBuf, env: Envelope) {
        check_len(buf.len(), env.bytes());
        // SAFETY: as for send.
        unsafe {
            ffi::MPI_Recv(
                buf.as_mut_ptr() as *mut c_void,
                env.count as c_int,
                self.h.dt(env.datatype),
                env.peer as c_int,
                env.tag,
                self.comm,
                ffi::RSMPI_STATUS_IGNORE,
            )
        };
    }

    fn now(&self) -> f64 {
        self.world.wtime()
    }
}
