//! CUDA's bandwidthTest, as commbench's drop-in of the same name
//! (commbench::gpu_bw::bandwidth_test).
#![allow(non_snake_case)]

fn main() {
    let argv = commbench::job::argv();
    std::process::exit(commbench::gpu_bw::bandwidth_test::main(&argv[1..]));
}
