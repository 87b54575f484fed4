//! CUDA's p2pBandwidthLatencyTest, as commbench's drop-in of the same
//! name (commbench::gpu_bw::p2p_test).
#![allow(non_snake_case)]

fn main() {
    let argv = commbench::job::argv();
    std::process::exit(commbench::gpu_bw::p2p_test::main(&argv[1..]));
}
