//! MPI's predefined handles that the rsmpi ffi does not export, handed over
//! by the C shim (mpi_shim.c, compiled by build.rs), and the translation
//! of our element types and operators into them.

use std::ffi::c_void;

use mpi::ffi;

use super::ReduceOp;
use crate::datatype::Datatype;

extern "C" {
    fn commbench_mpi_char() -> ffi::MPI_Datatype;
    fn commbench_mpi_int() -> ffi::MPI_Datatype;
    fn commbench_mpi_float() -> ffi::MPI_Datatype;
    fn commbench_mpi_double() -> ffi::MPI_Datatype;
    fn commbench_mpi_unsigned_long_long() -> ffi::MPI_Datatype;
    fn commbench_mpi_sum() -> ffi::MPI_Op;
    fn commbench_mpi_min() -> ffi::MPI_Op;
    fn commbench_mpi_max() -> ffi::MPI_Op;
    fn commbench_mpi_in_place() -> *mut c_void;
}

/// The MPI handles of our element types, looked up once.
#[derive(Clone, Copy)]
pub(super) struct Handles {
    types: [ffi::MPI_Datatype; 3],
    pub double: ffi::MPI_Datatype,
    pub u64: ffi::MPI_Datatype,
    pub int: ffi::MPI_Datatype,
    pub sum: ffi::MPI_Op,
    pub in_place: *mut c_void,
}

impl Handles {
    /// Reads the predefined handles (MPI must be initialised).
    pub fn get() -> Handles {
        // SAFETY: each call returns a predefined constant of the library.
        unsafe {
            Handles {
                types: [commbench_mpi_char(), commbench_mpi_int(), commbench_mpi_float()],
                double: commbench_mpi_double(),
                u64: commbench_mpi_unsigned_long_long(),
                int: commbench_mpi_int(),
                sum: commbench_mpi_sum(),
                in_place: commbench_mpi_in_place(),
            }
        }
    }

    #[inline(always)]
    pub fn dt(&self, dt: Datatype) -> ffi::MPI_Datatype {
        self.types[dt as usize]
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
