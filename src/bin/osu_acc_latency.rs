//! osu_acc_latency, OSU 7.4 compatible.
use commbench::{bench::rma::acc_latency::AccLatency, runner};

fn main() {
    runner::main_rma::<AccLatency>()
}
