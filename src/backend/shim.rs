//! MPI's predefined handles that the rsmpi ffi does not export, handed over
//! by the C shim (mpi_shim.c, compiled by build.rs), and the translation
//! of our element types and operators into them.

use std::ffi::c_void;

use mpi::ffi;

use super::ReduceOp;
use crate::datatype::{Datatype, Reduction};

extern "C" {
    fn commbench_mpi_char() -> ffi::MPI_Datatype;
    fn commbench_mpi_int() -> ffi::MPI_Datatype;
    fn commbench_mpi_float() -> ffi::MPI_Datatype;
    fn commbench_mpi_double() -> ffi::MPI_Datatype;
    fn commbench_mpi_uint8() -> ffi::MPI_Datatype;
    fn commbench_mpi_uint32() -> ffi::MPI_Datatype;
    fn commbench_mpi_int64() -> ffi::MPI_Datatype;
    fn commbench_mpi_uint64() -> ffi::MPI_Datatype;
    fn commbench_mpi_unsigned_long_long() -> ffi::MPI_Datatype;
    fn commbench_mpi_sum() -> ffi::MPI_Op;
    fn commbench_mpi_prod() -> ffi::MPI_Op;
    fn commbench_mpi_min() -> ffi::MPI_Op;
    fn commbench_mpi_max() -> ffi::MPI_Op;
    fn commbench_mpi_in_place() -> *mut c_void;
}

/// The MPI handles of our element types, looked up once.
#[derive(Clone, Copy)]
pub(super) struct Handles {
    /// In the order of [`Datatype::EVERY`].
    types: [ffi::MPI_Datatype; 8],
    pub double: ffi::MPI_Datatype,
    pub u64: ffi::MPI_Datatype,
    pub int: ffi::MPI_Datatype,
    pub sum: ffi::MPI_Op,
    /// MPI_PROD, MPI_MAX and MPI_MIN: with `sum`, the reducing
    /// collectives' [`Reduction`]s.
    reductions: [ffi::MPI_Op; 3],
    pub in_place: *mut c_void,
}

impl Handles {
    /// Reads the predefined handles (MPI must be initialised).
    pub fn get() -> Handles {
        // SAFETY: each call returns a predefined constant of the library.
        unsafe {
            Handles {
                types: [
                    commbench_mpi_char(),
                    commbench_mpi_int(),
                    commbench_mpi_float(),
                    commbench_mpi_uint8(),
                    commbench_mpi_uint32(),
                    commbench_mpi_int64(),
                    commbench_mpi_uint64(),
                    commbench_mpi_double(),
                ],
                double: commbench_mpi_double(),
                u64: commbench_mpi_unsigned_long_long(),
                int: commbench_mpi_int(),
                sum: commbench_mpi_sum(),
                reductions: [commbench_mpi_prod(), commbench_mpi_max(), commbench_mpi_min()],
                in_place: commbench_mpi_in_place(),
            }
        }
    }

    /// MPI's handle for `dt`. The narrow floats have none; only the
    /// nccl-tests front end offers them, and it runs over NCCL alone.
    #[inline(always)]
    pub(crate) fn dt(&self, dt: Datatype) -> ffi::MPI_Datatype {
        match self.types.get(dt as usize) {
            Some(&t) => t,
            None => unreachable!("MPI has no {} elements: only NCCL moves them", dt.mpi_name()),
        }
    }

    /// MPI's operation for reduction `op`; None for NCCL's average and
    /// pre-multiplied sum, which MPI has not.
    #[inline(always)]
    pub(crate) fn reduction(&self, op: Reduction) -> Option<ffi::MPI_Op> {
        match op {
            Reduction::Sum => Some(self.sum),
            Reduction::Prod => Some(self.reductions[0]),
            Reduction::Max => Some(self.reductions[1]),
            Reduction::Min => Some(self.reductions[2]),
            Reduction::Avg | Reduction::MulSum => None,
        }
    }

    pub fn op(op: ReduceOp) -> ffi::MPI_Op {
        // SAFETY: predefined handles.
        unsafe {
            match op {
                ReduceOp::Sum => commbench_mpi_sum(),
                ReduceOp::Min => commbench_mpi_min(),
                ReduceOp::Max => commbench_mpi_max(),
            }
        }
    }
}

/// MPI-4's persistent collectives, from the shim: each has its MPI_IX
/// twin's arguments (MPI_INFO_NULL is added in C). Built against an MPI-3
/// header they only fail, and [`persistent_collectives`] is false.
#[allow(clippy::too_many_arguments)]
pub(super) mod init {
    use std::ffi::{c_int, c_void};

    use mpi::ffi::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};

    extern "C" {
        pub(crate) fn commbench_mpi_persistent_collectives() -> c_int;
        pub(crate) fn commbench_barrier_init(c: MPI_Comm, r: *mut MPI_Request) -> c_int;
        pub(crate) fn commbench_allreduce_init(
            s: *const c_void,
            d: *mut c_void,
            n: c_int,
            t: MPI_Datatype,
            op: MPI_Op,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_bcast_init(
            b: *mut c_void,
            n: c_int,
            t: MPI_Datatype,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_reduce_init(
            s: *const c_void,
            d: *mut c_void,
            n: c_int,
            t: MPI_Datatype,
            op: MPI_Op,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_allgather_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: c_int,
            dt: MPI_Datatype,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_alltoall_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: c_int,
            dt: MPI_Datatype,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_gather_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: c_int,
            dt: MPI_Datatype,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_scatter_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: c_int,
            dt: MPI_Datatype,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_reduce_scatter_init(
            s: *const c_void,
            d: *mut c_void,
            n: *const c_int,
            t: MPI_Datatype,
            op: MPI_Op,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_reduce_scatter_block_init(
            s: *const c_void,
            d: *mut c_void,
            n: c_int,
            t: MPI_Datatype,
            op: MPI_Op,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_allgatherv_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: *const c_int,
            dd: *const c_int,
            dt: MPI_Datatype,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_gatherv_init(
            s: *const c_void,
            sn: c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: *const c_int,
            dd: *const c_int,
            dt: MPI_Datatype,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_scatterv_init(
            s: *const c_void,
            sn: *const c_int,
            sd: *const c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: c_int,
            dt: MPI_Datatype,
            root: c_int,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_alltoallv_init(
            s: *const c_void,
            sn: *const c_int,
            sd: *const c_int,
            st: MPI_Datatype,
            d: *mut c_void,
            dn: *const c_int,
            dd: *const c_int,
            dt: MPI_Datatype,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
        pub(crate) fn commbench_alltoallw_init(
            s: *const c_void,
            sn: *const c_int,
            sd: *const c_int,
            st: *const MPI_Datatype,
            d: *mut c_void,
            dn: *const c_int,
            dd: *const c_int,
            dt: *const MPI_Datatype,
            c: MPI_Comm,
            r: *mut MPI_Request,
        ) -> c_int;
    }
}

/// Whether the MPI header the shim was built against has MPI-4's
/// persistent collectives (`MPI_VERSION >= 4`).
pub(super) fn persistent_collectives() -> bool {
    // SAFETY: returns a constant.
    unsafe { init::commbench_mpi_persistent_collectives() != 0 }
}
