//! GPUs, loaded at run time so that every binary starts on a node with no
//! driver, no GPU and no NCCL: the CUDA driver through cudarc ([`cuda`])
//! and NCCL found and opened by us ([`nccl_lib`]). `commbench gpu-bw`, the
//! copy-bandwidth tool over the driver, is a module of its own
//! ([`crate::gpu_bw`]). Asking for a GPU where there is none is one line
//! and exit status 1.

pub mod bus_id;
pub mod cuda;
pub mod nccl_lib;
pub mod nvml;
