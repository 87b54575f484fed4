//! GPU measurements that need no MPI: `bw` (the `commbench gpu-bw`
//! command: CUDA copy bandwidth and latency matrices).

pub mod bw;
