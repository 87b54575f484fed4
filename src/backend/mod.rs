//! Transports the benchmarks run over. MPI (rsmpi plus raw calls for the
//! timed operations) is the one built today; NCCL and UCX plug in here.

pub mod mpi;
