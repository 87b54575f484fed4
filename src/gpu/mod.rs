//! GPU support: NCCL, opened at run time so that every binary still starts
//! on a machine without CUDA or NCCL.

pub mod nccl_lib;
