//! osu_get_acc_latency, OSU 7.4 compatible.
use commbench::{bench::rma::get_acc_latency::GetAccLatency, runner};

fn main() {
    runner::main_rma::<GetAccLatency>()
}
