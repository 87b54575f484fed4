//! GPUs, loaded at run time so that every binary starts on a node with no
//! driver, no GPU and no NCCL: the CUDA driver through cudarc ([`cuda`])
//! and NCCL found and opened by us ([`nccl_lib`]), as NVRTC is
//! ([`nvrtc_lib`], which compiles the SM copy kernels of `kernels.cu`), both
//! by one search ([`lib_search`]). `commbench gpu-bw`, the
//! copy-bandwidth tool over the driver, is a module of its own
//! ([`crate::gpu_bw`]). Asking for a GPU where there is none is one line
//! and exit status 1.

pub mod bus_id;
pub mod cuda;
pub mod lib_search;
pub mod nccl_lib;
pub mod nvml;
pub mod nvrtc_lib;
