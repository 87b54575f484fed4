//! `commbench gpu-bw`: copy bandwidth and latency of the CUDA GPUs of one
//! node, as CUDA's bandwidthTest (host<->GPU, within a GPU) and
//! p2pBandwidthLatencyTest (GPU-by-GPU matrices, peer access off and on)
//! measure them. Options (`options`), driver calls (`driver`), timings
//! (`measure`), results and their arithmetic (`results`), what lies
//! between GPUs (`topology`).

pub mod driver;
pub mod measure;
pub mod options;
pub mod results;
pub mod topology;
