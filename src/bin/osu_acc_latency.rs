//! osu_acc_latency, OSU 7.4 compatible.
use commbench::bench::{engine::runner, rma::acc_latency::AccLatency};

fn main() {
    runner::main_rma::<AccLatency>()
}
