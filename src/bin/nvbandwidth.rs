//! NVIDIA's nvbandwidth, as commbench's drop-in of the same name
//! (commbench::gpu_bw::nvbandwidth).

fn main() {
    let argv = commbench::job::argv();
    std::process::exit(commbench::gpu_bw::nvbandwidth::main(&argv));
}
