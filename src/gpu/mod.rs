//! GPUs, loaded at run time so that every binary starts on a node with no
//! driver, no GPU and no NCCL: the CUDA driver through cudarc ([`cuda`]),
//! NCCL found and opened by us ([`nccl_lib`]), and `commbench gpu-bw`,
//! the copy-bandwidth matrices ([`bw`]). Asking for a GPU where there is
//! none is one line and exit status 1.

pub mod bw;
pub mod cuda;
pub mod nccl_lib;
